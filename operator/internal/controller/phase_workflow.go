package controller

import (
	"context"
	"fmt"
	"strings"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v4/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/specs"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/status"
)

// stepPendingReportAfter is how long a step's pod may stay Pending (being scheduled,
// pulling its image) before the BulkLoad's conditions say why.
const stepPendingReportAfter = 5 * time.Minute

// DefaultWorkflowStartTimeout is how long a build Workflow may have no status from an Argo
// workflow-controller before the BulkLoad reports it not started (WorkflowStartTimeout).
const DefaultWorkflowStartTimeout = 2 * time.Minute

// ensureWorkflow makes sure the running build has its volumes and the Workflow of
// its current attempt. The Workflow's name is derived from (revision, attempt), both
// kept in the status, so a restarted controller finds it instead of creating another.
func (r *BulkLoadReconciler) ensureWorkflow(ctx context.Context, s *scope) error {
	bl, st := s.bl, &s.bl.Status
	if st.SourceRevision == "" {
		return nil
	}
	if st.Attempt < 1 {
		st.Attempt = 1
	}
	params := specs.BuildParams{Revision: st.SourceRevision, Attempt: st.Attempt, Images: s.images, StepMetricsLinger: r.StepMetricsLinger,
		ArgoInstanceID: r.ArgoInstanceID, ArtifactRepository: r.ArgoArtifactRepository}
	if s.wanted.Source && s.wanted.ID == st.SourceRevision {
		params.ExpectRevision = s.wanted.Listing
	}
	want := specs.Workflow(bl, params)
	if recordedFinished(st.Workflow, want.Name) && st.LastFailure != nil && st.LastFailure.Reason == status.ReasonNodeLost {
		// The operator ended this attempt (its node is lost): what its workflow still
		// says while it is being deleted does not count.
		s.obs = recordedObservation(st)
		s.recorded = true
		return nil
	}
	wf := &wfv1.Workflow{}
	err := r.Get(ctx, client.ObjectKeyFromObject(want), wf)
	switch {
	case apierrors.IsNotFound(err) && recordedFinished(st.Workflow, want.Name):
		// Deleted after it finished (its TTL, argo delete): its outcome is in the
		// status, and running it again would redo (or spoil) a finished build.
		s.obs = recordedObservation(st)
		s.recorded = true
		ctrl.LoggerFrom(ctx).V(1).Info("workflow gone after it finished: its recorded outcome stands", "workflow", want.Name)
		return nil
	case apierrors.IsNotFound(err):
		if vs, err := r.foreignSnapshot(ctx, bl, st.SourceRevision); err != nil {
			return fmt.Errorf("cannot read snapshot %s: %w", specs.SnapshotName(bl, st.SourceRevision), err)
		} else if vs != nil {
			return r.buildFailed(ctx, s, snapshotNameTaken(bl, vs, st.SourceRevision))
		}
		// The volumes come with the workflow (and stay across attempts); creating them
		// only here keeps a pass on stale data from recreating pruned volumes.
		if ready, err := r.ensureBuildVolumes(ctx, s); err != nil || !ready {
			return err
		}
		want.Annotations[AnnotationSpecDigest] = specDigest(bl, scopeWorkflow)
		if err := r.Create(ctx, want); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("cannot create workflow %s: %w", want.Name, err)
		} else if err == nil {
			ctrl.LoggerFrom(ctx).Info("created the build workflow", "workflow", want.Name, "revision", st.SourceRevision, "attempt", st.Attempt)
			r.eventNow(s, corev1.EventTypeNormal, "WorkflowCreated", "attempt %d of revision %s: workflow %s", st.Attempt, st.SourceRevision, want.Name)
		}
		wf = want
	case err != nil:
		return fmt.Errorf("cannot read workflow %s: %w", want.Name, err)
	}
	s.workflow = wf
	recordWorkflow(st, wf)
	return nil
}

// observeWorkflow follows the workflow: the step maps to the phase; success leaves
// s.obs succeeded for the snapshot phase; failure leads to a retry (retryable exit
// codes, attempts left) or the end of the build.
func (r *BulkLoadReconciler) observeWorkflow(ctx context.Context, s *scope) error {
	st := &s.bl.Status
	switch {
	case s.workflow != nil:
		s.obs = observeWorkflow(ctx, s.workflow)
		recordOutcome(st, &s.obs)
	case !s.recorded:
		return nil
	}
	obs := &s.obs
	if !obs.Done && s.workflow != nil {
		if lost, err := r.checkBuildNodes(ctx, s); err != nil || lost {
			return err
		}
	}
	switch {
	case !obs.Done:
		msg := fmt.Sprintf("attempt %d of revision %s: workflow %s", st.Attempt, st.SourceRevision, s.workflow.Name)
		if obs.Step != "" {
			msg += ", step " + obs.Step
		}
		reason := status.ReasonBuilding
		if obs.Message != "" {
			// e.g. held back by the controller's namespaceParallelism or parallelism
			msg += "; the workflow-controller says: " + obs.Message
		}
		reportedNotStarted := s.before.Workflow != nil && s.before.Workflow.Name == s.workflow.Name && s.saidReason(status.ReasonWorkflowNotStarted)
		if obs.NotStarted {
			if left, why := workflowNotStarted(s.workflow, s.now, r.workflowStartTimeout(), r.ArgoInstanceID); why == "" {
				s.requeue(left)
			} else {
				// Not final: the watch brings the workflow back once a controller writes its status.
				reason = status.ReasonWorkflowNotStarted
				msg += ": " + why
				if !reportedNotStarted {
					ctrl.LoggerFrom(ctx).Info("build workflow not started by any Argo workflow-controller: reporting it", "workflow", s.workflow.Name,
						"created", s.workflow.CreationTimestamp.Time, "timeout", r.workflowStartTimeout(), "argoInstanceID", r.ArgoInstanceID)
					r.event(s, corev1.EventTypeWarning, status.ReasonWorkflowNotStarted, "%s", msg)
				}
			}
		} else if reportedNotStarted {
			ctrl.LoggerFrom(ctx).Info("build workflow picked up by an Argo workflow-controller after all", "workflow", s.workflow.Name, "phase", s.workflow.Status.Phase)
		}
		if p := obs.Pending; p != nil {
			if waited := s.now.Sub(p.Since); waited < stepPendingReportAfter {
				s.requeue(stepPendingReportAfter - waited)
			} else {
				reason = status.ReasonStepPodPending
				msg += fmt.Sprintf(": the %s pod %s has been Pending since %s: %s", p.Step, p.Pod,
					p.Since.UTC().Format(time.RFC3339), orDefault(p.Message, "Argo reports no reason yet"))
				if !s.saidMessage(msg) {
					ctrl.LoggerFrom(ctx).Info("build step pod pending", "workflow", s.workflow.Name, "pod", p.Pod, "since", p.Since, "message", p.Message)
					r.event(s, corev1.EventTypeWarning, status.ReasonStepPodPending, "%s", msg)
				}
			}
		}
		ctrl.LoggerFrom(ctx).V(1).Info("build workflow running", "workflow", s.workflow.Name, "step", obs.Step, "attempt", st.Attempt)
		s.progress(obs.Phase, reason, "%s", msg)
		return nil
	case !obs.Succeeded:
		if s.workflow != nil && obs.Failure != nil && obs.Failure.SpecDigest == "" {
			obs.Failure.SpecDigest = s.workflow.Annotations[AnnotationSpecDigest]
		}
		return r.buildFailed(ctx, s, obs)
	}
	ctrl.LoggerFrom(ctx).V(1).Info("build workflow succeeded", "revision", st.SourceRevision, "attempt", st.Attempt)
	return nil // the snapshot phase takes it from here
}

func (r *BulkLoadReconciler) workflowStartTimeout() time.Duration {
	if r.WorkflowStartTimeout > 0 {
		return r.WorkflowStartTimeout
	}
	return DefaultWorkflowStartTimeout
}

func (r *BulkLoadReconciler) buildFailed(ctx context.Context, s *scope, obs *workflowObservation) error {
	bl, st := s.bl, &s.bl.Status
	log := ctrl.LoggerFrom(ctx)
	f := obs.Failure
	if f.SpecDigest == "" {
		f.SpecDigest = specDigest(bl, scopeOf(f))
	}
	st.LastFailure = f
	if f.Retryable && st.Attempt-st.AttemptsBeforeFix < bl.Spec.Retry.EffectiveBuildAttempts() {
		backoff := bl.Spec.Retry.BackoffFor(st.Attempt - st.AttemptsBeforeFix)
		retryAt := obs.FinishedAt.Add(backoff)
		if obs.FinishedAt.IsZero() {
			retryAt = s.now.Add(backoff)
		}
		if s.now.Before(retryAt) {
			if st.RetryAfter == nil || !st.RetryAfter.Time.Equal(retryAt) {
				log.Info("retryable build failure: another attempt after the backoff", "revision", st.SourceRevision,
					"attempt", st.Attempt, "step", f.Step, "reason", f.Reason, "retryAfter", retryAt)
				st.RetryAfter = &metav1.Time{Time: retryAt}
				r.event(s, corev1.EventTypeWarning, "RetryScheduled", "%s; attempt %d starts after %s",
					failureMessage(f, st.Attempt), st.Attempt+1, retryAt.UTC().Format(time.RFC3339))
			}
			s.progress(rdfv1.PhasePending, status.ReasonRetryScheduled, "%s; attempt %d starts after %s",
				failureMessage(f, st.Attempt), st.Attempt+1, retryAt.UTC().Format(time.RFC3339))
			s.requeue(retryAt.Sub(s.now))
			s.stop = true
			return nil
		}
		// The backoff has passed: the next attempt's workflow is created on the next pass.
		log.Info("retrying the build: the backoff has passed", "revision", st.SourceRevision, "attempt", st.Attempt+1,
			"failedStep", f.Step, "reason", f.Reason)
		st.Attempt++
		st.RetryAfter = nil
		s.progress(rdfv1.PhasePending, status.ReasonBuilding, "starting attempt %d of revision %s", st.Attempt, st.SourceRevision)
		s.requeue(0)
		s.stop = true
		return nil
	}
	// Final: a bad input, a missing source, exhausted resources, a refused pod, the
	// deadline, or no attempts left.
	msg := failureMessage(f, st.Attempt)
	log.Info("build failed finally", "revision", st.SourceRevision, "attempt", st.Attempt, "step", f.Step,
		"reason", f.Reason, "retryable", f.Retryable, "message", f.Message)
	r.event(s, corev1.EventTypeWarning, "BuildFailed", "revision %s: %s", st.SourceRevision, msg)
	r.finishBuild(s, "failed")
	r.keepFailedVolumes(ctx, s, f)
	st.LastFailedRevision = st.SourceRevision
	st.SourceRevision = ""
	st.RetryAfter = nil
	s.stall(f.Reason, "%s", stalledMessage(st, s.now))
	if st.QueuedRevision != "" {
		s.requeue(0)
	}
	return nil
}

// keepFailedVolumes records the build volumes of a final failure that left resumable
// work (keepsWork) as kept for spec.retry.keepFailedVolumesFor; prune deletes them
// once that has passed.
func (r *BulkLoadReconciler) keepFailedVolumes(ctx context.Context, s *scope, f *rdfv1.BuildFailure) {
	bl, st := s.bl, &s.bl.Status
	keepFor := bl.Spec.Retry.EffectiveKeepFailedVolumesFor()
	if !keepsWork(f) || keepFor <= 0 {
		st.KeptVolumes = nil
		return
	}
	rev := st.SourceRevision
	until := s.now.Add(keepFor)
	st.KeptVolumes = &rdfv1.KeptVolumes{
		Revision: rev,
		Claims:   []string{specs.DataClaimName(bl, rev), specs.ScratchClaimName(bl, rev)},
		Until:    metav1.Time{Time: until},
	}
	ctrl.LoggerFrom(ctx).Info("keeping the failed build's volumes for the next attempt", "revision", rev, "claims", st.KeptVolumes.Claims,
		"until", until, "reason", f.Reason)
	r.event(s, corev1.EventTypeNormal, "FailedVolumesKept", "volumes %s are kept until %s (spec.retry.keepFailedVolumesFor) for an attempt that resumes on them",
		strings.Join(st.KeptVolumes.Claims, ", "), until.UTC().Format(time.RFC3339))
	s.requeue(keepFor)
}

// stalledMessage says why a failed build stalls, what is kept of it, and exactly which
// changes start another attempt.
func stalledMessage(st *rdfv1.BulkLoadStatus, now time.Time) string {
	f := st.LastFailure
	if f == nil {
		return "the build of revision " + st.LastFailedRevision + " failed; changing trigger.rebuild builds a new revision"
	}
	msg := failureMessage(f, st.Attempt)
	if kv := st.KeptVolumes; kv != nil && kv.Revision == st.LastFailedRevision && now.Before(kv.Until.Time) {
		msg += fmt.Sprintf("; volumes %s are kept until %s", strings.Join(kv.Claims, ", "), kv.Until.UTC().Format(time.RFC3339))
	}
	return msg + "; " + fixHint(f)
}
