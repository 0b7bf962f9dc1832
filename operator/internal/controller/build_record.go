package controller

import (
	"fmt"

	wfv1 "github.com/argoproj/argo-workflows/v4/pkg/apis/workflow/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/status"
)

// recordWorkflow refers the status to the current attempt's workflow, keeping what
// it recorded of the same workflow's outcome.
func recordWorkflow(st *rdfv1.BulkLoadStatus, wf *wfv1.Workflow) {
	ref := &rdfv1.WorkflowReference{Name: wf.Name, Phase: string(wf.Status.Phase)}
	if old := st.Workflow; old != nil && old.Name == wf.Name {
		ref.FinishedAt, ref.Load = old.FinishedAt, old.Load
		if ref.Phase == "" {
			ref.Phase = old.Phase
		}
	}
	st.Workflow = ref
}

// recordOutcome keeps in the status what the rest of the build needs from a finished
// workflow (when it finished, the load figures; the failure is st.LastFailure), so
// that the build goes on, and is not run again, once the workflow is deleted.
func recordOutcome(st *rdfv1.BulkLoadStatus, obs *workflowObservation) {
	if !obs.Done || st.Workflow == nil {
		return
	}
	if st.Workflow.FinishedAt == nil && !obs.FinishedAt.IsZero() {
		st.Workflow.FinishedAt = &metav1.Time{Time: obs.FinishedAt}
	}
	if obs.Succeeded && st.Workflow.Load == nil && obs.Summary != "" {
		// An unreadable report is reported by the handoff, which reads it too.
		if figures, err := status.LoadFigures(obs.Summary); err == nil {
			st.Workflow.Load = figures
		}
	}
}

// recordedFinished says whether the status records the workflow name as finished.
func recordedFinished(ref *rdfv1.WorkflowReference, name string) bool {
	if ref == nil || ref.Name != name {
		return false
	}
	switch wfv1.WorkflowPhase(ref.Phase) {
	case wfv1.WorkflowSucceeded, wfv1.WorkflowFailed, wfv1.WorkflowError:
		return true
	}
	return false
}

// recordedObservation is what the status recorded of a finished workflow that is gone.
func recordedObservation(st *rdfv1.BulkLoadStatus) workflowObservation {
	ref := st.Workflow
	obs := workflowObservation{Done: true, Phase: rdfv1.PhaseSnapshotting}
	if ref.FinishedAt != nil {
		obs.FinishedAt = ref.FinishedAt.Time
	}
	if wfv1.WorkflowPhase(ref.Phase) == wfv1.WorkflowSucceeded {
		obs.Succeeded = true
		return obs
	}
	obs.Failure = st.LastFailure
	if obs.Failure == nil {
		obs.Failure = &rdfv1.BuildFailure{Step: "workflow", Reason: "WorkflowError",
			Message: fmt.Sprintf("workflow %s ended %s and was deleted", ref.Name, ref.Phase)}
	}
	obs.Step = obs.Failure.Step
	return obs
}

// loadFigures are the load step's figures: from the workflow's report, or as recorded
// when the workflow succeeded if it is gone.
func (s *scope) loadFigures() (*rdfv1.LoadFigures, error) {
	if s.obs.Summary == "" && s.bl.Status.Workflow != nil && s.bl.Status.Workflow.Load != nil {
		return s.bl.Status.Workflow.Load.DeepCopy(), nil
	}
	return status.LoadFigures(s.obs.Summary)
}
