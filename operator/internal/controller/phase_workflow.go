package controller

import (
	"context"
	"fmt"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v4/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
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
	params := specs.BuildParams{Revision: st.SourceRevision, Attempt: st.Attempt, Images: s.images, StepMetricsLinger: r.StepMetricsLinger}
	if s.wanted.Source && s.wanted.ID == st.SourceRevision {
		params.ExpectRevision = st.SourceRevision
	}
	want := specs.Workflow(bl, params)
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
		for _, pvc := range []*corev1.PersistentVolumeClaim{specs.DataClaim(bl, st.SourceRevision), specs.ScratchClaim(bl, st.SourceRevision)} {
			if _, err := r.createIfMissing(ctx, pvc); err != nil {
				return fmt.Errorf("cannot create volume %s: %w", pvc.Name, err)
			}
		}
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
	switch {
	case !obs.Done:
		msg := fmt.Sprintf("attempt %d of revision %s: workflow %s", st.Attempt, st.SourceRevision, s.workflow.Name)
		if obs.Step != "" {
			msg += ", step " + obs.Step
		}
		reason := status.ReasonBuilding
		if p := obs.Pending; p != nil {
			if waited := s.now.Sub(p.Since); waited < stepPendingReportAfter {
				s.requeue(stepPendingReportAfter - waited)
			} else {
				reason = status.ReasonStepPodPending
				msg += fmt.Sprintf(": the %s pod %s has been Pending since %s: %s", p.Step, p.Pod,
					p.Since.UTC().Format(time.RFC3339), orDefault(p.Message, "Argo reports no reason yet"))
				if c := meta.FindStatusCondition(s.before.Conditions, rdfv1.ConditionReconciling); c == nil || c.Message != msg {
					ctrl.LoggerFrom(ctx).Info("build step pod pending", "workflow", s.workflow.Name, "pod", p.Pod, "since", p.Since, "message", p.Message)
					r.event(s, corev1.EventTypeWarning, status.ReasonStepPodPending, "%s", msg)
				}
			}
		}
		ctrl.LoggerFrom(ctx).V(1).Info("build workflow running", "workflow", s.workflow.Name, "step", obs.Step, "attempt", st.Attempt)
		s.progress(obs.Phase, reason, "%s", msg)
		return nil
	case !obs.Succeeded:
		return r.buildFailed(ctx, s, obs)
	}
	ctrl.LoggerFrom(ctx).V(1).Info("build workflow succeeded", "revision", st.SourceRevision, "attempt", st.Attempt)
	return nil // the snapshot phase takes it from here
}

func (r *BulkLoadReconciler) buildFailed(ctx context.Context, s *scope, obs *workflowObservation) error {
	bl, st := s.bl, &s.bl.Status
	log := ctrl.LoggerFrom(ctx)
	f := obs.Failure
	st.LastFailure = f
	if f.Retryable && st.Attempt < bl.Spec.Retry.EffectiveBuildAttempts() {
		retryAt := obs.FinishedAt.Add(bl.Spec.Retry.BackoffFor(st.Attempt))
		if obs.FinishedAt.IsZero() {
			retryAt = s.now.Add(bl.Spec.Retry.BackoffFor(st.Attempt))
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
	st.LastFailedRevision = st.SourceRevision
	st.SourceRevision = ""
	st.RetryAfter = nil
	s.stall(f.Reason, "%s", msg)
	if st.QueuedRevision != "" {
		s.requeue(0)
	}
	return nil
}
