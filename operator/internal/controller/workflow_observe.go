package controller

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v4/pkg/apis/workflow/v1alpha1"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/specs"
)

// workflowObservation is what the controller reads from a build Workflow's status.
type workflowObservation struct {
	// Done is true once the workflow has finished, successfully or not.
	Done bool
	// Succeeded is true when every step passed.
	Succeeded bool
	// Phase is the BulkLoad phase matching the most advanced step seen.
	Phase rdfv1.Phase
	// Step is the step running (or failed).
	Step string
	// Failure describes the failed step of a failed workflow.
	Failure *rdfv1.BuildFailure
	// FinishedAt is when the workflow finished (zero while running).
	FinishedAt time.Time
	// Report is the load step's report.json, from its output parameter.
	Report string
}

var stepPhases = []struct {
	step  string
	phase rdfv1.Phase
}{
	{specs.StepValidate, rdfv1.PhaseValidating},
	{specs.StepLoad, rdfv1.PhaseLoading},
	{specs.StepFetch, rdfv1.PhaseFetching},
}

// observeWorkflow interprets a Workflow status as Argo's controller writes it: a
// Steps node, one Retry node per step (type Retry, its pods as children) and Pod
// nodes whose outputs carry the container's exit code.
func observeWorkflow(wf *wfv1.Workflow) workflowObservation {
	obs := workflowObservation{Phase: rdfv1.PhasePending}
	pods := map[string][]wfv1.NodeStatus{}
	for _, n := range wf.Status.Nodes {
		if n.Type == wfv1.NodeTypePod {
			pods[n.TemplateName] = append(pods[n.TemplateName], n)
		}
	}
	for _, sp := range stepPhases {
		if len(pods[sp.step]) > 0 {
			obs.Phase, obs.Step = sp.phase, sp.step
			break
		}
	}

	switch wf.Status.Phase {
	case wfv1.WorkflowSucceeded:
		obs.Done, obs.Succeeded = true, true
		obs.FinishedAt = wf.Status.FinishedAt.Time
		obs.Report = outputParameter(pods[specs.StepLoad], specs.ReportParameter)
	case wfv1.WorkflowFailed, wfv1.WorkflowError:
		obs.Done = true
		obs.FinishedAt = wf.Status.FinishedAt.Time
		obs.Failure = failureOf(wf, pods)
		obs.Step = obs.Failure.Step
	}
	return obs
}

// failureOf finds the pod that failed last and classifies its exit code.
func failureOf(wf *wfv1.Workflow, pods map[string][]wfv1.NodeStatus) *rdfv1.BuildFailure {
	var last *wfv1.NodeStatus
	for step, nodes := range pods {
		if step != specs.StepFetch && step != specs.StepLoad && step != specs.StepValidate {
			continue
		}
		for i := range nodes {
			n := &nodes[i]
			if !n.FailedOrError() {
				continue
			}
			if last == nil || n.FinishedAt.After(last.FinishedAt.Time) ||
				(n.FinishedAt.Equal(&last.FinishedAt) && n.Name > last.Name) {
				last = n
			}
		}
	}
	if last == nil {
		// The workflow failed before any step ran (e.g. Argo rejected it): retrying
		// the same workflow would fail the same way.
		return &rdfv1.BuildFailure{Step: "workflow", Reason: "WorkflowError", Message: truncate(wf.Status.Message), Retryable: false}
	}
	f := &rdfv1.BuildFailure{Step: last.TemplateName, Message: truncate(last.Message)}
	if last.Outputs != nil && last.Outputs.ExitCode != nil {
		if code, err := strconv.ParseInt(strings.TrimSpace(*last.Outputs.ExitCode), 10, 32); err == nil {
			c := int32(code)
			f.ExitCode = &c
			class := specs.ClassifyExit(f.Step, c)
			f.Reason, f.Retryable = class.Reason, class.Retryable
			return f
		}
	}
	// No exit code: the pod itself failed (evicted, node lost, image pull). Such
	// errors are worth another attempt on the kept volumes.
	f.Reason, f.Retryable = "PodError", true
	if f.Message == "" {
		f.Message = fmt.Sprintf("step %s failed without an exit code", f.Step)
	}
	return f
}

func outputParameter(nodes []wfv1.NodeStatus, name string) string {
	for _, n := range nodes {
		if n.Phase != wfv1.NodeSucceeded || n.Outputs == nil {
			continue
		}
		for _, p := range n.Outputs.Parameters {
			if p.Name == name && p.Value != nil {
				return p.Value.String()
			}
		}
	}
	return ""
}

func truncate(s string) string {
	if len(s) > 1000 {
		return s[:1000] + "..."
	}
	return s
}
