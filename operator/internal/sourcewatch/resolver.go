// Package sourcewatch plugs the S3 source watcher (internal/source) into the BulkLoad
// controller as its dumpset.Resolver for trigger.mode=watch: it lists the source when the
// controller polls (once per spec.trigger.interval), and returns a revision only for a
// complete dump set whose listing has been unchanged for spec.trigger.settlePeriod.
package sourcewatch

import (
	"context"
	"time"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/dumpset"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/source"
)

// Resolver implements dumpset.Resolver with a source.Watcher.
type Resolver struct {
	Watcher *source.Watcher
}

var _ dumpset.Resolver = (*Resolver)(nil)

// New returns a resolver on the wall clock.
func New() *Resolver { return &Resolver{Watcher: source.NewWatcher()} }

// SpecFor maps a BulkLoad's source to the watcher's spec (the same mapping the fetch step's
// flags follow, so both resolve the same dump set and revision).
func SpecFor(bl *rdfv1.BulkLoad, access dumpset.Access) source.Spec {
	src := &bl.Spec.Source
	s := source.Spec{
		Endpoint: src.Endpoint,
		Bucket:   src.Bucket,
		Prefix:   src.Prefix,
		Keys:     src.Keys,
		Include:  src.Include,
		Insecure: src.InsecureSkipTLSVerify,
		CAPEM:    access.CABundle,
	}
	if c := src.Completion; c != nil {
		s.Marker = c.Marker
		if c.Manifest != nil {
			s.Manifest = c.Manifest.Key
		}
	}
	return s
}

// Resolve lists the source of bl. A listing error is returned as an error (the controller
// turns it into a condition); an incomplete or settling dump set is a Revision without ID.
// The controller bounds the time it takes (ctx).
func (r *Resolver) Resolve(ctx context.Context, bl *rdfv1.BulkLoad, access dumpset.Access, prev dumpset.Settle, now time.Time) (dumpset.Revision, error) {
	spec := SpecFor(bl, access)
	if err := spec.Validate(); err != nil {
		return dumpset.Revision{}, err
	}
	settle := bl.Spec.Trigger.SettlePeriod.Duration
	if settle < 0 {
		settle = 0
	}
	creds := source.Credentials{AccessKeyID: access.AccessKeyID, SecretAccessKey: access.SecretAccessKey}
	obs, next, err := r.Watcher.Observe(ctx, spec, creds, settle, source.Settle{Fingerprint: prev.Fingerprint, Since: prev.Since}, now)
	if err != nil {
		return dumpset.Revision{}, err
	}
	return dumpset.Revision{
		ID:      obs.Revision,
		Reason:  obs.Reason,
		Message: obs.Message,
		Source:  true,
		Settle:  dumpset.Settle{Fingerprint: next.Fingerprint, Since: next.Since},
	}, nil
}
