package controller

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v4/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v4/util/file"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/specs"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/status"
)

func podNode(id, template string, phase wfv1.NodePhase, finished time.Time, exitCode string) wfv1.NodeStatus {
	n := wfv1.NodeStatus{ID: id, Name: id, Type: wfv1.NodeTypePod, TemplateName: template, Phase: phase}
	if !finished.IsZero() {
		n.FinishedAt = metav1.NewTime(finished)
	}
	if exitCode != "" {
		n.Outputs = &wfv1.Outputs{ExitCode: ptr.To(exitCode)}
	}
	return n
}

func workflowWith(phase wfv1.WorkflowPhase, nodes ...wfv1.NodeStatus) *wfv1.Workflow {
	wf := &wfv1.Workflow{Status: wfv1.WorkflowStatus{Phase: phase, Nodes: wfv1.Nodes{}}}
	// Steps and Retry nodes carry the template names too; only Pod nodes count.
	wf.Status.Nodes["root"] = wfv1.NodeStatus{ID: "root", Type: wfv1.NodeTypeSteps, TemplateName: "build", Phase: wfv1.NodeRunning}
	wf.Status.Nodes["retry-validate"] = wfv1.NodeStatus{ID: "retry-validate", Type: wfv1.NodeTypeRetry, TemplateName: "validate", Phase: wfv1.NodePending}
	for _, n := range nodes {
		wf.Status.Nodes[n.ID] = n
	}
	return wf
}

func TestObserveWorkflowPhases(t *testing.T) {
	t0 := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	for name, tc := range map[string]struct {
		wf    *wfv1.Workflow
		phase rdfv1.Phase
		step  string
	}{
		"not started": {workflowWith(""), rdfv1.PhasePending, ""},
		"fetching":    {workflowWith(wfv1.WorkflowRunning, podNode("f", "fetch", wfv1.NodeRunning, time.Time{}, "")), rdfv1.PhaseFetching, "fetch"},
		"loading": {workflowWith(wfv1.WorkflowRunning,
			podNode("f", "fetch", wfv1.NodeSucceeded, t0, "0"), podNode("l", "load", wfv1.NodeRunning, time.Time{}, "")), rdfv1.PhaseLoading, "load"},
		"validating": {workflowWith(wfv1.WorkflowRunning,
			podNode("f", "fetch", wfv1.NodeSucceeded, t0, "0"), podNode("l", "load", wfv1.NodeSucceeded, t0, "0"),
			podNode("v", "validate", wfv1.NodePending, time.Time{}, "")), rdfv1.PhaseValidating, "validate"},
	} {
		obs := observeWorkflow(ctx, tc.wf)
		if obs.Done || obs.Phase != tc.phase || obs.Step != tc.step {
			t.Errorf("%s: %+v", name, obs)
		}
	}
}

func TestObserveWorkflowFailureUsesTheLastFailedTry(t *testing.T) {
	t0 := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	wf := workflowWith(wfv1.WorkflowFailed,
		podNode("f", "fetch", wfv1.NodeSucceeded, t0, "0"),
		podNode("l0", "load", wfv1.NodeFailed, t0.Add(time.Minute), "75"),
		podNode("l1", "load", wfv1.NodeFailed, t0.Add(3*time.Minute), "3"),
	)
	wf.Status.FinishedAt = metav1.NewTime(t0.Add(4 * time.Minute))
	obs := observeWorkflow(ctx, wf)
	if !obs.Done || obs.Succeeded || !obs.FinishedAt.Equal(t0.Add(4*time.Minute)) {
		t.Fatalf("%+v", obs)
	}
	f := obs.Failure
	if f.Step != "load" || *f.ExitCode != 3 || f.Reason != "BadInput" || f.Retryable {
		t.Errorf("%+v", f)
	}
}

func TestObserveWorkflowFailureWithoutExitCode(t *testing.T) {
	wf := workflowWith(wfv1.WorkflowError, podNode("l", "load", wfv1.NodeError, time.Now(), ""))
	wf.Status.Nodes["l"] = func(n wfv1.NodeStatus) wfv1.NodeStatus { n.Message = "pod deleted"; return n }(wf.Status.Nodes["l"])
	f := observeWorkflow(ctx, wf).Failure
	if f.Reason != "PodError" || !f.Retryable || f.ExitCode != nil || f.Message != "pod deleted" {
		t.Errorf("an evicted or lost pod is worth another attempt: %+v", f)
	}

	wf = workflowWith(wfv1.WorkflowError)
	wf.Status.Message = "invalid spec: templates.load.container.image is required"
	f = observeWorkflow(ctx, wf).Failure
	if f.Reason != "WorkflowError" || f.Retryable || f.Message != wf.Status.Message {
		t.Errorf("a workflow Argo rejects fails the same way again: %+v", f)
	}
}

func TestObserveWorkflowSuccessReadsTheSummary(t *testing.T) {
	load := podNode("l", "load", wfv1.NodeSucceeded, time.Now(), "0")
	load.Outputs.Parameters = []wfv1.Parameter{{Name: specs.SummaryParameter, Value: wfv1.AnyStringPtr(`{"triples": 7}`)}}
	obs := observeWorkflow(ctx, workflowWith(wfv1.WorkflowSucceeded, load))
	if !obs.Done || !obs.Succeeded || obs.Summary != `{"triples": 7}` {
		t.Errorf("%+v", obs)
	}
}

// A workflow written by an operator before the summary (a build an operator upgrade found
// running) carries the whole report as the output parameter "report"; its figures are read
// from it, and a summary wins when both are there.
func TestObserveWorkflowSuccessReadsAnEarlierOperatorsReport(t *testing.T) {
	load := podNode("l", "load", wfv1.NodeSucceeded, time.Now(), "0")
	load.Outputs.Parameters = []wfv1.Parameter{{Name: "report", Value: wfv1.AnyStringPtr(`{"triples": 7, "inputs": []}`)}}
	obs := observeWorkflow(ctx, workflowWith(wfv1.WorkflowSucceeded, load))
	if !obs.Succeeded || obs.Summary != `{"triples": 7, "inputs": []}` {
		t.Errorf("the legacy report parameter: %+v", obs)
	}
	load.Outputs.Parameters = append(load.Outputs.Parameters, wfv1.Parameter{Name: specs.SummaryParameter, Value: wfv1.AnyStringPtr(`{"triples": 8}`)})
	obs = observeWorkflow(ctx, workflowWith(wfv1.WorkflowSucceeded, load))
	if obs.Summary != `{"triples": 8}` {
		t.Errorf("the summary first: %+v", obs)
	}
}

// Skipping the loader's plan check is not a build input (dumpset.Manual), but a failed
// load step's spec digest changes with it, which retries the step.
func TestSkipPlanCheckRetriesTheLoadStep(t *testing.T) {
	bl := newBulkLoad("ns", "x")
	before := specDigest(bl, scopeWorkflow)
	bl.Spec.Loader.SkipPlanCheck = true
	if specDigest(bl, scopeWorkflow) == before {
		t.Error("skipPlanCheck changes what a failed load step ran with")
	}
}

// A step pod Argo reports Pending is named with Argo's reason, the oldest first; a
// finished workflow has none.
func TestObserveWorkflowPendingPod(t *testing.T) {
	t0 := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	fetch := podNode("wikidata-0123456789-1-2000", "fetch", wfv1.NodePending, time.Time{}, "")
	fetch.Name = "wikidata-0123456789-1[0].fetch(0)"
	fetch.StartedAt = metav1.NewTime(t0)
	fetch.Message = "Unschedulable: 0/3 nodes are available: 3 node(s) had untolerated taint {example.com/rdf-build: }."
	wf := workflowWith(wfv1.WorkflowRunning, fetch)
	wf.Name = "wikidata-0123456789-1"
	obs := observeWorkflow(ctx, wf)
	p := obs.Pending
	if p == nil || p.Step != "fetch" || !p.Since.Equal(t0) || p.Message != fetch.Message {
		t.Fatalf("%+v", p)
	}
	// Argo's pod name format v2 (workflow-template-fnv32a(node name)); golden value.
	if p.Pod != "wikidata-0123456789-1-fetch-3210727974" {
		t.Errorf("pod name %q", p.Pod)
	}
	wf.Annotations = map[string]string{"workflows.argoproj.io/pod-name-format": "v1"}
	if got := observeWorkflow(ctx, wf).Pending.Pod; got != fetch.ID {
		t.Errorf("format v1 names pods by node ID: %q", got)
	}

	running := podNode("l", "load", wfv1.NodeRunning, time.Time{}, "")
	if observeWorkflow(ctx, workflowWith(wfv1.WorkflowRunning, running)).Pending != nil {
		t.Error("a running pod is not pending")
	}
	done := workflowWith(wfv1.WorkflowFailed, fetch)
	if observeWorkflow(ctx, done).Pending != nil {
		t.Error("a finished workflow has no pending pod")
	}
}

// A pod the API server refused (Pod Security admission) and a build past its deadline
// are final failures with their own reasons, not retryable pod errors.
func TestObserveWorkflowRejectedPodAndDeadline(t *testing.T) {
	t0 := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	rejected := podNode("f", "fetch", wfv1.NodeError, t0, "")
	rejected.Message = `pods "wikidata-0123456789-1-fetch-3210727974" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (containers "init", "wait" must set securityContext.allowPrivilegeEscalation=false)`
	f := observeWorkflow(ctx, workflowWith(wfv1.WorkflowFailed, rejected)).Failure
	if f.Reason != status.ReasonPodRejected || f.Retryable || f.Step != "fetch" || !strings.Contains(f.Message, "violates PodSecurity") {
		t.Errorf("%+v", f)
	}
	if msg := failureMessage(f, 1); !strings.Contains(msg, "PodRejected") || !strings.Contains(msg, `containers "init", "wait"`) {
		t.Errorf("the condition message must say why: %s", msg)
	}

	// Argo stops pods past the deadline; the loader may exit with a retryable code then.
	stopped := podNode("l", "load", wfv1.NodeFailed, t0, "6")
	stopped.Message = "Step exceeded its deadline"
	f = observeWorkflow(ctx, workflowWith(wfv1.WorkflowFailed, stopped)).Failure
	if f.Reason != status.ReasonDeadlineExceeded || f.Retryable {
		t.Errorf("%+v", f)
	}
	pending := podNode("f", "fetch", wfv1.NodeFailed, t0, "")
	pending.Message = "Step exceeded its deadline"
	f = observeWorkflow(ctx, workflowWith(wfv1.WorkflowFailed, pending)).Failure
	if f.Reason != status.ReasonDeadlineExceeded || f.Retryable || f.Step != "fetch" {
		t.Errorf("a pod never scheduled before the deadline: %+v", f)
	}
}

// Argo moves the nodes of a workflow above 1 MiB to status.compressedNodes: the
// failure is read from there; offloaded nodes (in Argo's database) are said to be so.
func TestObserveCompressedAndOffloadedNodes(t *testing.T) {
	t0 := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	wf := workflowWith(wfv1.WorkflowFailed, podNode("f", "fetch", wfv1.NodeSucceeded, t0, "0"), podNode("l", "load", wfv1.NodeFailed, t0, "3"))
	nodes, err := json.Marshal(wf.Status.Nodes)
	if err != nil {
		t.Fatal(err)
	}
	wf.Status.CompressedNodes = file.CompressEncodeString(ctx, string(nodes))
	wf.Status.Nodes = nil
	f := observeWorkflow(ctx, wf).Failure
	if f == nil || f.Step != "load" || f.ExitCode == nil || *f.ExitCode != 3 || f.Retryable {
		t.Fatalf("from compressedNodes: %+v", f)
	}
	if wf.Status.CompressedNodes == "" {
		t.Error("the observed workflow (the cache's object) is not modified")
	}

	off := workflowWith(wfv1.WorkflowFailed)
	off.Name, off.Namespace = "big", "rdf"
	off.Status.Nodes, off.Status.OffloadNodeStatusVersion = nil, "fnv:123"
	obs := observeWorkflow(ctx, off)
	if !obs.Done || obs.Failure == nil || obs.Failure.Reason != status.ReasonNodesUnavailable || !strings.Contains(obs.Failure.Message, "offloaded") {
		t.Fatalf("offloaded: %+v", obs.Failure)
	}
}

// A failed step's message (Argo's, with the log tail the kubelet took as termination message)
// comes down to why the step said it failed.
func TestStepMessageKeepsTheStepsOwnError(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"main: Error (exit code 3): {\"ts\":\"2026-11-25T03:40:00.123Z\",\"event\":\"plan\"}\n{\"ts\":\"2026-11-25T03:40:01.456Z\",\"event\":\"summary\",\"result\":\"failed\"}\nrdf-bulkload: error: /data/input/dump.nt.gz:2:17: Unexpected end of file\n",
			"main: Error (exit code 3): rdf-bulkload: error: /data/input/dump.nt.gz:2:17: Unexpected end of file"},
		{"main: Error (exit code 4): {\"ts\":\"x\",\"event\":\"start\"}\n{\"ts\":\"y\",\"event\":\"error\",\"exit_code\":4,\"error\":\"object weekly/a.nt.gz: not found\"}",
			"main: Error (exit code 4): object weekly/a.nt.gz: not found"},
		{"main: Error (exit code 3): {\"ts\":\"2026-11-25T03:40:00.123Z\",\"event\":\"plan\"}\nrdf-bulkload: error: out of resources: --memory 8 MiB is below the minimum of 144 MiB\n" +
			"time=2026-11-25T01:36:47.546Z level=INFO msg=\"sub-process exited\" argo=true error=\"exit status 5\"\n" +
			"time=2026-11-25T01:36:47.546Z level=INFO msg=\"file signal handler exiting due to context cancellation\" argo=true\nError: exit status 5\n",
			"main: Error (exit code 3): rdf-bulkload: error: out of resources: --memory 8 MiB is below the minimum of 144 MiB"},
		{"main: Error (exit code 3)", "main: Error (exit code 3)"},
		{"pod deleted", "pod deleted"},
	} {
		if got := stepMessage(tc.in); got != tc.want {
			t.Errorf("stepMessage(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// Not started: no workflow-controller has written a phase. Argo's message of a workflow it
// holds back (Pending) or runs is kept for the status.
func TestObserveWorkflowNotStartedAndArgosMessage(t *testing.T) {
	for name, tc := range map[string]struct {
		phase      wfv1.WorkflowPhase
		message    string
		notStarted bool
	}{
		"no phase":  {"", "", true},
		"postponed": {wfv1.WorkflowPending, "Workflow processing has been postponed because too many workflows are running", false},
		"running":   {wfv1.WorkflowRunning, "", false},
	} {
		wf := workflowWith(tc.phase)
		wf.Status.Message = tc.message
		obs := observeWorkflow(ctx, wf)
		if obs.Done || obs.NotStarted != tc.notStarted || obs.Message != tc.message {
			t.Errorf("%s: %+v", name, obs)
		}
	}
	// nodes offloaded to Argo's database: the message is still read
	offloaded := &wfv1.Workflow{Status: wfv1.WorkflowStatus{Phase: wfv1.WorkflowPending, Message: "postponed", OffloadNodeStatusVersion: "v1"}}
	if obs := observeWorkflow(ctx, offloaded); obs.Done || obs.NotStarted || obs.Message != "postponed" {
		t.Errorf("offloaded nodes: %+v", obs)
	}
	wf := workflowWith(wfv1.WorkflowFailed)
	wf.Status.Message = "child failed"
	if obs := observeWorkflow(ctx, wf); obs.NotStarted || obs.Message != "" {
		t.Errorf("a finished workflow's message is its failure's, not a wait's: %+v", obs)
	}
}

// The start timeout counts from the workflow's creation; until it has passed, what is left
// of it (the requeue), then why: the namespace, the instance ID (or that there is none), how to check.
func TestWorkflowNotStarted(t *testing.T) {
	created := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	wf := &wfv1.Workflow{ObjectMeta: metav1.ObjectMeta{Namespace: "rdf", Name: "catalog-1", CreationTimestamp: metav1.NewTime(created)}}
	if left, why := workflowNotStarted(wf, created.Add(90*time.Second), 2*time.Minute, ""); left != 30*time.Second || why != "" {
		t.Errorf("before the timeout: left %s, why %q", left, why)
	}
	left, why := workflowNotStarted(wf, created.Add(2*time.Minute), 2*time.Minute, "")
	if left != 0 || !strings.Contains(why, "namespace rdf") || !strings.Contains(why, "sets no instance ID") ||
		!strings.Contains(why, "2026-11-28T09:00:00Z") || !strings.Contains(why, "kubectl -n argo get pods") || !strings.Contains(why, "--managed-namespace") {
		t.Errorf("at the timeout: left %s, why %q", left, why)
	}
	if _, why := workflowNotStarted(wf, created.Add(time.Hour), 2*time.Minute, "rdf-builds"); !strings.Contains(why, `instanceID "rdf-builds"`) {
		t.Errorf("with an instance ID: %q", why)
	}
	// A workflow this reconcile found already created (its create lost a race) carries no
	// creation time: it has just been created, not waited forever.
	if left, why := workflowNotStarted(&wfv1.Workflow{}, created, 2*time.Minute, ""); left != 2*time.Minute || why != "" {
		t.Errorf("no creation time: left %s, why %q", left, why)
	}
}
