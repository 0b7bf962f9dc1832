// Package dumpset names what a BulkLoad builds: the revision of a dump set (the identity
// a build is started for), the settle clock of a watched source, and the access a
// resolver needs to list a source. The controller decides with these; sourcewatch
// resolves them from S3. It imports neither.
package dumpset

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
)

// Revision is the identity of a complete dump set. Equal IDs mean the same inputs;
// a build is started for each ID that differs from the last one built.
type Revision struct {
	// ID is empty while no complete (and settled) dump set exists.
	ID string
	// Reason and Message explain an empty ID (e.g. Incomplete, Settling), for conditions.
	Reason  string
	Message string
	// Source says whether ID is a digest of the source listing (the fetch step can
	// then refuse a dump set that changed since) rather than of the spec.
	Source bool
	// Listing is the source listing's revision the fetch step checks (ID without the
	// trigger.rebuild token; set when Source).
	Listing string
	// Settle is what the next poll needs of this one (kept in status.source).
	Settle Settle
}

// Settle is the settle clock of a watched source: the fingerprint of its listing and
// since when that has been unchanged.
type Settle struct {
	Fingerprint string
	Since       time.Time
}

// Access is what a resolver needs to list the source: the credentials and CA from the
// Secret/ConfigMap the spec names. It never appears in logs or status.
type Access struct {
	AccessKeyID     string
	SecretAccessKey string
	CABundle        []byte
}

// String keeps the secret out of any formatted output.
func (a Access) String() string {
	if a.AccessKeyID == "" {
		return "anonymous"
	}
	return "access key " + a.AccessKeyID
}

// GoString keeps the secret out of %#v too.
func (a Access) GoString() string { return "dumpset.Access{" + a.String() + "}" }

// Resolver resolves the dump set a BulkLoad in watch mode should be built from: it lists
// the source once, checks the completion marker or manifest and the settle period (given
// what the previous poll left, prev, and the time, now), and returns the revision (or an
// empty ID while incomplete or settling). It must return when ctx ends.
type Resolver interface {
	Resolve(ctx context.Context, bl *rdfv1.BulkLoad, access Access, prev Settle, now time.Time) (Revision, error)
}

// Manual is the revision of a manual-trigger BulkLoad: a digest of every spec field
// that changes what is built (source, database, loader, fetch, validate), and
// trigger.rebuild's token. Changes to retention, serving or retry settings do not
// rebuild, nor do database.scratchSize and loader.skipPlanCheck (see sizingCleared).
func Manual(bl *rdfv1.BulkLoad) Revision {
	spec := sizingCleared(&bl.Spec)
	buildInputs := struct {
		Source   rdfv1.SourceSpec   `json:"source"`
		Database rdfv1.DatabaseSpec `json:"database"`
		Loader   rdfv1.LoaderSpec   `json:"loader"`
		Fetch    rdfv1.FetchSpec    `json:"fetch"`
		Validate rdfv1.ValidateSpec `json:"validate"`
	}{spec.Source, spec.Database, spec.Loader, spec.Fetch, spec.Validate}
	// Marshalling plain structs cannot fail.
	data, _ := json.Marshal(buildInputs)
	sum := sha256.Sum256(data)
	return Revision{ID: "spec:sha256:" + hex.EncodeToString(sum[:]) + rebuildSuffix(spec.Trigger.Rebuild)}
}

// sizingCleared is the spec without database.scratchSize and loader.skipPlanCheck, which
// decide whether an attempt fits but leave the database unchanged: a larger scratch
// expands the kept scratch volume, and the load resumes on it.
func sizingCleared(spec *rdfv1.BulkLoadSpec) *rdfv1.BulkLoadSpec {
	c := spec.DeepCopy()
	c.Database.ScratchSize = nil
	c.Loader.SkipPlanCheck = false
	return c
}

// WithRebuild adds trigger.rebuild to a watched source's revision, so that changing it
// builds the same dump set again (under new volume and snapshot names), as in manual
// mode.
func (r Revision) WithRebuild(rebuild string) Revision {
	if r.ID == "" || !r.Source {
		return r
	}
	r.Listing = r.ID
	r.ID += rebuildSuffix(rebuild)
	return r
}

// rebuildSuffix is what trigger.rebuild adds to a revision ID ("" when it is empty).
func rebuildSuffix(rebuild string) string {
	if rebuild == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(rebuild))
	return rebuildMark + hex.EncodeToString(sum[:8])
}

const rebuildMark = "+rebuild:"

// WithoutRebuild is a revision ID without its trigger.rebuild token: what was built (the
// spec's build inputs, or the listing), not how often.
func WithoutRebuild(id string) string {
	before, _, _ := strings.Cut(id, rebuildMark)
	return before
}
