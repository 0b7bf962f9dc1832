package controller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/dumpset"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/specs"
)

// resolveRevision finds the revision the spec (manual) or the source (watch) asks
// for and decides whether it starts a build now, is queued behind the running
// build, or is already built (or failed) and needs nothing.
func (r *BulkLoadReconciler) resolveRevision(ctx context.Context, s *scope) error {
	bl, st := s.bl, &s.bl.Status
	if bl.Spec.Trigger.Mode == rdfv1.TriggerWatch {
		r.pollSource(ctx, s)
		s.wanted = s.wanted.WithRebuild(bl.Spec.Trigger.Rebuild)
	} else {
		s.wanted = dumpset.Manual(bl)
		st.Source = nil
	}
	want := s.wanted.ID
	log := ctrl.LoggerFrom(ctx).WithValues("trigger", bl.Spec.Trigger.Mode)

	if st.SourceRevision != "" {
		// One build at a time: a different revision waits for the running build.
		switch {
		case want == "":
		case want == st.SourceRevision:
			st.QueuedRevision = ""
		case want != st.QueuedRevision:
			st.QueuedRevision = want
			log.Info("revision queued behind the running build", "revision", want, "building", st.SourceRevision)
			r.event(s, corev1.EventTypeNormal, "RevisionQueued", "revision %s queued behind the build of %s", want, st.SourceRevision)
		}
		return nil
	}
	switch want {
	case "":
		log.V(1).Info("no revision to build", "why", orDefault(s.sourceProblem, "no complete dump set"))
		if s.sourceStalled {
			s.stall(st.Source.Reason, "%s", s.sourceProblem)
		}
		return nil
	case st.LastBuiltRevision:
		st.QueuedRevision = ""
		log.V(1).Info("revision already built", "revision", want, "snapshot", st.CurrentSnapshot)
		return nil
	case st.LastFailedRevision:
		st.QueuedRevision = ""
		if fixedBySpec(bl, st.LastFailure) {
			r.restartAfterFix(ctx, s)
			return nil
		}
		log.V(1).Info("revision failed before; not built again until the revision changes or a spec change fixes what failed", "revision", want)
		return nil
	}
	// Workflow names are (revision, attempt): a revision built before (a rebuild after its
	// node-local snapshot was lost) goes on counting, so that its old workflow is not taken
	// for the new attempt.
	attempt, before := int32(1), int32(0)
	if st.Workflow != nil && st.Attempt > 0 && st.Workflow.Name == specs.WorkflowName(bl, want, st.Attempt) {
		attempt, before = st.Attempt+1, st.Attempt
	}
	if kv := st.KeptVolumes; kv != nil {
		// Another revision's checkpoint is of no use to this build: they go (prune).
		log.Info("a build of another revision starts: the kept volumes of the failed one are deleted", "kept", kv.Revision, "claims", kv.Claims)
		st.KeptVolumes = nil
	}
	st.SourceRevision = want
	st.QueuedRevision = ""
	st.Attempt = attempt
	st.AttemptsBeforeFix = before
	st.RetryAfter = nil
	st.LastFailure = nil
	st.Workflow = nil
	st.BuildStartTime = &metav1.Time{Time: s.now}
	log.Info("starting a build", "revision", want, "attempt", attempt)
	r.event(s, corev1.EventTypeNormal, "BuildStarted", "building revision %s", want)
	return nil
}

// restartAfterFix starts a new attempt of the failed revision after a spec change to
// what the failure depended on (fixedBySpec): on the kept volumes when there are any,
// so that the load resumes from its checkpoint; after a snapshot failure only the
// snapshot is taken again (the workflow's success stands).
func (r *BulkLoadReconciler) restartAfterFix(ctx context.Context, s *scope) {
	bl, st := s.bl, &s.bl.Status
	f := st.LastFailure
	rev := st.LastFailedRevision
	resumes := st.KeptVolumes != nil && st.KeptVolumes.Revision == rev
	st.SourceRevision = rev
	st.LastFailedRevision = ""
	st.RetryAfter = nil
	st.LastFailure = nil
	st.KeptVolumes = nil // the build's own now
	st.BuildStartTime = &metav1.Time{Time: s.now}
	what := "the snapshot is taken again"
	if scopeOf(f) != scopeSnapshot {
		st.AttemptsBeforeFix = st.Attempt
		st.Attempt++
		what = fmt.Sprintf("attempt %d starts", st.Attempt)
		if resumes {
			what += " on the kept volumes and resumes from the loader's checkpoint"
		}
	}
	ctrl.LoggerFrom(ctx).Info("the spec changed what the failed build depended on: retrying", "revision", rev,
		"failedStep", f.Step, "reason", f.Reason, "attempt", st.Attempt, "resumes", resumes, "generation", bl.Generation)
	r.event(s, corev1.EventTypeNormal, "RetryAfterSpecChange", "the spec changed what step %s (%s) depended on: %s (revision %s)", f.Step, f.Reason, what, rev)
}
