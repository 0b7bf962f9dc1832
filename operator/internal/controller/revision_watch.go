package controller

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/dumpset"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/source"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/specs"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/status"
)

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
			s.wanted = dumpset.Revision{ID: prev.Revision, Reason: prev.Reason, Message: prev.Message, Source: true}
			if prev.Revision == "" {
				s.sourceProblem, s.sourceStalled = prev.Message, stallsOnSource(prev.Reason)
			}
			s.requeue(due.Sub(s.now))
			return
		}
	}
	s.requeue(interval)
	var settle dumpset.Settle
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
func (r *BulkLoadReconciler) listSource(ctx context.Context, bl *rdfv1.BulkLoad, settle dumpset.Settle, now time.Time) (dumpset.Revision, error) {
	access, err := r.sourceAccess(ctx, bl)
	if err != nil {
		return dumpset.Revision{}, err
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
			return dumpset.Revision{}, fmt.Errorf("cannot list the source within %s (the listing, the manifest and the objects it names): %w", timeout, err)
		}
		return dumpset.Revision{}, fmt.Errorf("cannot list the source: %w", err)
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

// sourceAccess reads the credentials and CA the spec names, for the resolver.
func (r *BulkLoadReconciler) sourceAccess(ctx context.Context, bl *rdfv1.BulkLoad) (dumpset.Access, error) {
	var a dumpset.Access
	src := &bl.Spec.Source
	if ref := src.CredentialsSecretRef; ref != nil {
		sec := &corev1.Secret{}
		if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: bl.Namespace, Name: ref.Name}, sec); err != nil {
			return a, fmt.Errorf("cannot read the credentials Secret %s: %w", ref.Name, err)
		}
		idKey, secretKey := orDefault(ref.AccessKeyIDKey, "AWS_ACCESS_KEY_ID"), orDefault(ref.SecretAccessKeyKey, "AWS_SECRET_ACCESS_KEY")
		a.AccessKeyID, a.SecretAccessKey = string(sec.Data[idKey]), string(sec.Data[secretKey])
		if a.AccessKeyID == "" || a.SecretAccessKey == "" {
			return a, fmt.Errorf("the credentials Secret %s lacks key %s or %s: %w", ref.Name, idKey, secretKey, errSecretKeyMissing)
		}
	}
	switch {
	case src.CASecretRef != nil:
		sec := &corev1.Secret{}
		if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: bl.Namespace, Name: src.CASecretRef.Name}, sec); err != nil {
			return a, fmt.Errorf("cannot read the CA Secret %s: %w", src.CASecretRef.Name, err)
		}
		a.CABundle = sec.Data[orDefault(src.CASecretRef.Key, specs.CAFileName)]
	case src.CAConfigMapRef != nil:
		cm := &corev1.ConfigMap{}
		if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: bl.Namespace, Name: src.CAConfigMapRef.Name}, cm); err != nil {
			return a, fmt.Errorf("cannot read the CA ConfigMap %s: %w", src.CAConfigMapRef.Name, err)
		}
		a.CABundle = []byte(cm.Data[orDefault(src.CAConfigMapRef.Key, specs.CAFileName)])
	}
	return a, nil
}
