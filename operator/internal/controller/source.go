package controller

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/source"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/status"
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
	Settle SettleState
}

// SettleState is the settle clock of a watched source: the fingerprint of its listing
// and since when that has been unchanged.
type SettleState struct {
	Fingerprint string
	Since       time.Time
}

// SourceAccess is what a resolver needs to list the source: the credentials and CA
// from the Secret/ConfigMap the spec names. It never appears in logs or status.
type SourceAccess struct {
	AccessKeyID     string
	SecretAccessKey string
	CABundle        []byte
}

// String keeps the secret out of any formatted output.
func (a SourceAccess) String() string {
	if a.AccessKeyID == "" {
		return "anonymous"
	}
	return "access key " + a.AccessKeyID
}

// GoString keeps the secret out of %#v too.
func (a SourceAccess) GoString() string { return "controller.SourceAccess{" + a.String() + "}" }

// SourceResolver resolves the dump set a BulkLoad in watch mode should be built
// from: it lists the source once, checks the completion marker or manifest and the
// settle period (given what the previous poll left, prev, and the time, now), and
// returns the revision (or an empty ID while incomplete or settling). It must return
// when ctx ends.
type SourceResolver interface {
	Resolve(ctx context.Context, bl *rdfv1.BulkLoad, access SourceAccess, prev SettleState, now time.Time) (Revision, error)
}

// ManualRevision is the revision of a manual-trigger BulkLoad: a digest of every
// spec field that changes what is built (source, database, loader, fetch, validate),
// and trigger.rebuild's token. Changes to retention, serving or retry settings do not
// rebuild, nor do database.scratchSize and loader.skipPlanCheck (see sizingCleared).
func ManualRevision(bl *rdfv1.BulkLoad) Revision {
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

// withRebuild adds trigger.rebuild to a watched source's revision, so that changing
// it builds the same dump set again (under new volume and snapshot names), as in
// manual mode.
func withRebuild(rev Revision, rebuild string) Revision {
	if rev.ID == "" || !rev.Source {
		return rev
	}
	rev.Listing = rev.ID
	rev.ID += rebuildSuffix(rebuild)
	return rev
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

// withoutRebuild is a revision ID without its trigger.rebuild token: what was built
// (the spec's build inputs, or the listing), not how often.
func withoutRebuild(id string) string {
	before, _, _ := strings.Cut(id, rebuildMark)
	return before
}

// DefaultSourceListTimeout bounds one listing of a watched source (listing, manifest,
// HEADs): the controller has one worker, which the listing holds meanwhile.
const DefaultSourceListTimeout = 30 * time.Second

// errSecretKeyMissing: a Secret the spec names lacks the key it should have.
var errSecretKeyMissing = errors.New("key missing")

// sourceErrorReason sorts a failed listing (status.source.reason): a source that refuses
// access or is misconfigured needs someone to fix the credentials or the spec, and the
// BulkLoad says so as Stalled; anything else may pass by itself.
func sourceErrorReason(err error) string {
	var oe *source.ObserveError
	switch {
	case apierrors.IsNotFound(err) || errors.Is(err, errSecretKeyMissing):
		return status.ReasonSourceMisconfigured
	case errors.As(err, &oe) && oe.Class == source.Auth:
		return status.ReasonSourceAccessDenied
	case errors.As(err, &oe) && oe.Class == source.Config:
		return status.ReasonSourceMisconfigured
	}
	return status.ReasonSourceUnavailable
}

// stallsOnSource says whether a listing's reason needs a fix by someone.
func stallsOnSource(reason string) bool {
	return reason == status.ReasonSourceAccessDenied || reason == status.ReasonSourceMisconfigured
}

// pollSource finds the revision a watch-mode BulkLoad asks for. It lists the source at
// most once per trigger.interval (and at once after a spec change); in between, it
// reuses the verdict status.source recorded. The settle clock is kept there too, so an
// operator restart neither lists early nor restarts the settle period.
func (r *BulkLoadReconciler) pollSource(ctx context.Context, s *scope) {
	bl, st := s.bl, &s.bl.Status
	interval := bl.Spec.Trigger.EffectiveInterval()
	prev := st.Source
	if mem := r.polls.get(bl.UID); mem != nil && (prev == nil || prev.LastListTime == nil || mem.LastListTime.After(prev.LastListTime.Time)) {
		// A listing this process made whose status the cache does not show yet.
		prev = mem
		st.Source = mem.DeepCopy()
	}
	if prev != nil && prev.LastListTime != nil && prev.ObservedGeneration == bl.Generation {
		if due := prev.LastListTime.Add(interval); s.now.Before(due) {
			s.wanted = Revision{ID: prev.Revision, Reason: prev.Reason, Message: prev.Message, Source: true}
			if prev.Revision == "" {
				s.sourceProblem, s.sourceStalled = prev.Message, stallsOnSource(prev.Reason)
			}
			s.requeue(due.Sub(s.now))
			return
		}
	}
	s.requeue(interval)
	var settle SettleState
	if prev != nil {
		settle.Fingerprint = prev.Fingerprint
		if prev.UnchangedSince != nil {
			settle.Since = prev.UnchangedSince.Time
		}
	}
	rev, err := r.listSource(ctx, bl, settle, s.now)
	next := &rdfv1.SourceObservation{LastListTime: &metav1.Time{Time: s.now}, ObservedGeneration: bl.Generation}
	if err != nil {
		// The settle clock stays as it was: a failed listing says nothing of the source.
		next.Fingerprint = settle.Fingerprint
		if !settle.Since.IsZero() {
			next.UnchangedSince = &metav1.Time{Time: settle.Since}
		}
		next.Reason, next.Message = sourceErrorReason(err), truncate(err.Error())
		s.sourceProblem, s.sourceStalled = next.Message, stallsOnSource(next.Reason)
		ctrl.LoggerFrom(ctx).Info("trigger skipped: the source cannot be listed", "reason", next.Reason, "error", next.Message)
		st.Source = next
		r.polls.set(bl.UID, next)
		return
	}
	next.Fingerprint, next.Revision, next.Reason, next.Message = rev.Settle.Fingerprint, rev.ID, rev.Reason, truncate(rev.Message)
	if !rev.Settle.Since.IsZero() {
		next.UnchangedSince = &metav1.Time{Time: rev.Settle.Since}
	}
	st.Source = next
	r.polls.set(bl.UID, next)
	s.wanted = rev
	log := ctrl.LoggerFrom(ctx)
	if prev == nil || prev.Revision != rev.ID || prev.Reason != rev.Reason {
		log = log.V(0) // a new verdict
	} else {
		log = log.V(1) // the same as the last listing's
	}
	if rev.ID == "" {
		s.sourceProblem = next.Message
		log.Info("trigger skipped: no complete, settled dump set", "reason", rev.Reason, "why", next.Message)
	} else {
		log.Info("trigger fired: the source has a complete, settled dump set", "revision", rev.ID)
	}
}

// listSource lists the source once, within the listing timeout.
func (r *BulkLoadReconciler) listSource(ctx context.Context, bl *rdfv1.BulkLoad, settle SettleState, now time.Time) (Revision, error) {
	access, err := r.sourceAccess(ctx, bl)
	if err != nil {
		return Revision{}, err
	}
	timeout := r.SourceListTimeout
	if timeout <= 0 {
		timeout = DefaultSourceListTimeout
	}
	lctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	rev, err := r.Resolver.Resolve(lctx, bl, access, settle, now)
	if err != nil {
		if lctx.Err() == context.DeadlineExceeded {
			return Revision{}, fmt.Errorf("cannot list the source within %s (the listing, the manifest and the objects it names): %w", timeout, err)
		}
		return Revision{}, fmt.Errorf("cannot list the source: %w", err)
	}
	return rev, nil
}

// sourcePolls remembers each BulkLoad's last listing in this process, for the passes
// that run on a cached BulkLoad older than the status that recorded it: they reuse
// it instead of listing again. status.source is the record that outlives the process.
type sourcePolls struct {
	mu   sync.Mutex
	last map[types.UID]*rdfv1.SourceObservation
}

func (p *sourcePolls) get(uid types.UID) *rdfv1.SourceObservation {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last[uid].DeepCopy()
}

func (p *sourcePolls) set(uid types.UID, obs *rdfv1.SourceObservation) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.last == nil {
		p.last = map[types.UID]*rdfv1.SourceObservation{}
	}
	p.last[uid] = obs.DeepCopy()
}

func (p *sourcePolls) forget(uid types.UID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.last, uid)
}
