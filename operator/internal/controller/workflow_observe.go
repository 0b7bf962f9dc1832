package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v4/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v4/workflow/packer"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/specs"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/status"
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
	// Summary is the loader's summary of its build report, from the load step's output
	// parameter.
	Summary string
	// Pending is the step pod that has been waiting longest to start, while the
	// workflow runs (nil when none waits).
	Pending *pendingPod
	// NotStarted is true while no workflow-controller has written the workflow's phase.
	NotStarted bool
	// Message is Argo's status.message of a workflow that has not finished, e.g. why
	// it is held back (namespaceParallelism, parallelism).
	Message string
	// Placed are the step pods scheduled to a node that have not finished, while the
	// workflow runs (their nodes are watched for loss).
	Placed []placedPod
}

// placedPod is a step pod that runs (or waits to start) on a node.
type placedPod struct {
	Step string
	Pod  string
	Node string
}

// pendingPod is a step pod Argo reports as Pending, with Argo's account of why: the
// pod's Unschedulable PodScheduled message, a container's waiting reason (image
// pull), or why the pod could not be created yet.
type pendingPod struct {
	Step    string
	Pod     string
	Since   time.Time
	Message string
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
// nodes whose outputs carry the container's exit code. Argo moves the nodes of a
// workflow above 1 MiB to status.compressedNodes (read here) or, with node status
// offloading, to its database (not readable here: see nodesUnavailable).
func observeWorkflow(ctx context.Context, wf *wfv1.Workflow) workflowObservation {
	obs := workflowObservation{Phase: rdfv1.PhasePending}
	if len(wf.Status.Nodes) == 0 && wf.Status.CompressedNodes != "" {
		wf = wf.DeepCopy()
		if err := packer.DecompressWorkflow(ctx, wf); err != nil {
			return nodesUnavailable(wf, "its status.compressedNodes cannot be read: "+err.Error())
		}
	}
	if wf.Status.IsOffloadNodeStatus() && len(wf.Status.Nodes) == 0 {
		return nodesUnavailable(wf, "its node status is offloaded to Argo's database (nodeStatusOffLoad), which the operator does not read")
	}
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
	case wfv1.WorkflowPending, wfv1.WorkflowRunning, wfv1.WorkflowUnknown:
		obs.NotStarted = wf.Status.Phase == wfv1.WorkflowUnknown
		obs.Message = wf.Status.Message
		obs.Pending = longestPending(wf, pods)
		obs.Placed = placedPods(wf, pods)
	case wfv1.WorkflowSucceeded:
		obs.Done, obs.Succeeded = true, true
		obs.FinishedAt = wf.Status.FinishedAt.Time
		obs.Summary = outputParameter(pods[specs.StepLoad], specs.SummaryParameter)
		if obs.Summary == "" {
			// a workflow an earlier operator wrote: its load step's output is the whole report
			obs.Summary = outputParameter(pods[specs.StepLoad], specs.LegacyReportParameter)
		}
	case wfv1.WorkflowFailed, wfv1.WorkflowError:
		obs.Done = true
		obs.FinishedAt = wf.Status.FinishedAt.Time
		obs.Failure = failureOf(wf, pods)
		obs.Step = obs.Failure.Step
	}
	return obs
}

// nodesUnavailable observes a workflow whose nodes cannot be read: only its phase
// and message count. A failure is then taken as retryable (the exit code is unknown;
// spec.retry.buildAttempts bounds the attempts) and the load figures are missing.
func nodesUnavailable(wf *wfv1.Workflow, why string) workflowObservation {
	obs := workflowObservation{Phase: rdfv1.PhasePending}
	why = fmt.Sprintf("workflow %s: %s; see `argo get %s -n %s`", wf.Name, why, wf.Name, wf.Namespace)
	switch wf.Status.Phase {
	case wfv1.WorkflowPending, wfv1.WorkflowRunning:
		obs.Message = wf.Status.Message
	case wfv1.WorkflowSucceeded:
		obs.Done, obs.Succeeded = true, true
		obs.FinishedAt = wf.Status.FinishedAt.Time
	case wfv1.WorkflowFailed, wfv1.WorkflowError:
		obs.Done = true
		obs.FinishedAt = wf.Status.FinishedAt.Time
		msg := why
		if wf.Status.Message != "" {
			msg += ": " + wf.Status.Message
		}
		obs.Failure = &rdfv1.BuildFailure{Step: "workflow", Reason: status.ReasonNodesUnavailable, Message: truncate(msg), Retryable: true}
		obs.Step = obs.Failure.Step
	}
	return obs
}

// workflowNotStarted judges a workflow without a status phase (NotStarted): until timeout
// has passed since its creation, the time left (when to look again); then why it is
// likely not started and what to check. Argo's controller sets a phase within seconds
// of a workflow's creation, even of one it holds back (Pending, with a message), so a
// workflow without one long after is watched by no controller that would run it.
func workflowNotStarted(wf *wfv1.Workflow, now time.Time, timeout time.Duration, instanceID string) (left time.Duration, why string) {
	created := wf.CreationTimestamp.Time
	if created.IsZero() {
		// not read back from the API server (its create found it created): just created
		return timeout, ""
	}
	if waited := now.Sub(created); waited < timeout {
		return timeout - waited, ""
	}
	instance := "the operator sets no instance ID (--argo-instance-id), and a controller configured with an instanceID runs only workflows labelled with it"
	if instanceID != "" {
		instance = fmt.Sprintf("the operator labels its workflows for the controller of instanceID %q (--argo-instance-id), and no other runs them", instanceID)
	}
	return 0, fmt.Sprintf("no Argo workflow-controller has started it since its creation at %s (--workflow-start-timeout %s): "+
		"no controller manages namespace %s (a namespaced install manages only its --managed-namespace), "+
		"or the controller's instanceID does not match (%s), or the controller is down; "+
		"check `kubectl -n argo get pods` (the namespace Argo is installed in), the instanceID in the workflow-controller-configmap "+
		"and the controller's --managed-namespace argument", created.UTC().Format(time.RFC3339), timeout, wf.Namespace, instance)
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
		reason := "WorkflowError"
		if deadlineExceeded(wf.Status.Message) {
			reason = status.ReasonDeadlineExceeded
		}
		return &rdfv1.BuildFailure{Step: "workflow", Reason: reason, Message: truncate(wf.Status.Message), Retryable: false}
	}
	f := &rdfv1.BuildFailure{Step: last.TemplateName, Message: truncate(stepMessage(last.Message))}
	switch {
	case deadlineExceeded(last.Message) || deadlineExceeded(wf.Status.Message):
		// The build's deadline (spec.build.deadline): another attempt would get as long
		// and most likely end the same way.
		f.Reason, f.Retryable = status.ReasonDeadlineExceeded, false
		if f.Message == "" {
			f.Message = truncate(wf.Status.Message)
		}
		return f
	case specs.IsPodRejected(last.Message):
		// The API server refused the step's pod (Pod Security admission, LimitRange, a
		// webhook): it refuses the same pod again until the namespace or spec changes.
		f.Reason, f.Retryable = status.ReasonPodRejected, false
		return f
	}
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
	f.Reason, f.Retryable = reasonPodError, true
	if f.Message == "" {
		f.Message = fmt.Sprintf("step %s failed without an exit code", f.Step)
	}
	return f
}

// Failure reasons the controller derives from Argo's messages rather than exit codes.
const (
	// reasonPodError: a step's pod failed without an exit code (evicted, image pull).
	reasonPodError = "PodError"
)

// deadlineExceeded recognises Argo's messages for a workflow past its
// activeDeadlineSeconds: "Step exceeded its deadline" on the pods it stops, "retry
// exceeded workflow deadline" on a retry it does not start.
func deadlineExceeded(message string) bool {
	return strings.Contains(message, "exceeded its deadline") || strings.Contains(message, "exceeded workflow deadline")
}

// longestPending is the Pending step pod with the oldest start, if any.
func longestPending(wf *wfv1.Workflow, pods map[string][]wfv1.NodeStatus) *pendingPod {
	var oldest *wfv1.NodeStatus
	for _, sp := range stepPhases {
		for i := range pods[sp.step] {
			n := &pods[sp.step][i]
			if n.Phase != wfv1.NodePending {
				continue
			}
			if oldest == nil || n.StartedAt.Before(&oldest.StartedAt) {
				oldest = n
			}
		}
	}
	if oldest == nil {
		return nil
	}
	return &pendingPod{Step: oldest.TemplateName, Pod: podName(wf, oldest), Since: oldest.StartedAt.Time, Message: oldest.Message}
}

// placedPods are the step pods Argo reports Running or Pending on a node, in step order.
func placedPods(wf *wfv1.Workflow, pods map[string][]wfv1.NodeStatus) []placedPod {
	var placed []placedPod
	for _, step := range []string{specs.StepFetch, specs.StepLoad, specs.StepValidate} {
		for i := range pods[step] {
			n := &pods[step][i]
			if n.HostNodeName == "" || (n.Phase != wfv1.NodeRunning && n.Phase != wfv1.NodePending) {
				continue
			}
			placed = append(placed, placedPod{Step: step, Pod: podName(wf, n), Node: n.HostNodeName})
		}
	}
	return placed
}

// podName is the name Argo v4 gives a step's pod (workflow/util GeneratePodName):
// the node ID with pod name format v1, else workflow-template-fnv32a(node name).
func podName(wf *wfv1.Workflow, n *wfv1.NodeStatus) string {
	if wf.Annotations[argoPodNameFormat] == "v1" {
		return n.ID
	}
	prefix := wf.Name
	if n.TemplateName != "" {
		prefix += "-" + n.TemplateName
	}
	if len(prefix) > 253-10-1 {
		prefix = prefix[:253-10-1]
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(n.Name))
	return fmt.Sprintf("%s-%d", prefix, h.Sum32())
}

// argoWorkflowLabel is the label by which Argo marks the pods of a workflow with its name.
const argoWorkflowLabel = "workflows.argoproj.io/workflow"

// argoPodNameFormat is the workflow annotation in which Argo records its pod naming scheme.
const argoPodNameFormat = "workflows.argoproj.io/pod-name-format"

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

// stepMessage shortens Argo's message of a failed step, "main: Error (exit code 3): <the
// tail of the step's log>" (the steps' terminationMessagePolicy is FallbackToLogsOnError), to
// its first part and the last line the step printed, where every step says why it failed:
// "rdf-bulkload: error: /data/input/dump.nt.gz:2:17: ...", rdf-bulkload-validate's message, or
// the fetch step's JSON error event (its "error" field). The lines of Argo's executor, which
// shares the log ("time=... level=INFO msg=... argo=true", "Error: exit status 3"), are skipped.
func stepMessage(msg string) string {
	head, tail, ok := strings.Cut(msg, "\n")
	if !ok {
		return msg
	}
	lines := strings.Split(tail, "\n")
	last := ""
	for i := len(lines) - 1; i >= 0 && last == ""; i-- {
		if l := strings.TrimSpace(lines[i]); !strings.HasPrefix(l, "Error: exit status ") && !strings.Contains(l, " argo=true") {
			last = l
		}
	}
	var event struct {
		Error string `json:"error"`
	}
	if json.Unmarshal([]byte(last), &event) == nil && event.Error != "" {
		last = event.Error
	}
	// the head ends with the log's first line: keep only Argo's part of it
	if i := strings.Index(head, "): "); i >= 0 {
		head = head[:i+1]
	}
	if last == "" {
		return head
	}
	return head + ": " + last
}

func truncate(s string) string {
	if len(s) > 1000 {
		return s[:1000] + "..."
	}
	return s
}
