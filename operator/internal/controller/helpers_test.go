package controller

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	wfv1 "github.com/argoproj/argo-workflows/v4/pkg/apis/workflow/v1alpha1"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/specs"
)

var ctx = context.Background()

// eventually polls until the assertions in f pass.
func eventually(t *testing.T, f func(g Gomega)) {
	t.Helper()
	NewWithT(t).Eventually(f).WithTimeout(eventuallyTimeout).WithPolling(pollInterval).Should(Succeed())
}

// newBulkLoad is a complete manual-trigger BulkLoad serving Deployment "fuseki".
func newBulkLoad(ns, name string) *rdfv1.BulkLoad {
	return &rdfv1.BulkLoad{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: rdfv1.BulkLoadSpec{
			Source: rdfv1.SourceSpec{
				Endpoint:             "http://minio.storage:9000",
				Bucket:               "rdf-dumps",
				Prefix:               "wikidata/2026-11-20/",
				Include:              []string{"*.nt.gz"},
				Completion:           &rdfv1.CompletionSpec{Marker: "wikidata/2026-11-20/_SUCCESS"},
				CredentialsSecretRef: &rdfv1.CredentialsSecretReference{Name: "dump-credentials"},
			},
			Database: rdfv1.DatabaseSpec{
				StorageClassName: testStorageClass,
				Size:             resource.MustParse("10Gi"),
				ScratchSize:      ptr.To(resource.MustParse("20Gi")),
			},
			Loader: rdfv1.LoaderSpec{
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi")},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("10Gi")},
				},
				MemoryBudget: ptr.To(resource.MustParse("6Gi")),
				OnError:      rdfv1.OnErrorSkip,
				MaxRejects:   ptr.To(int64(100)),
			},
			Snapshot: rdfv1.SnapshotSpec{VolumeSnapshotClassName: testSnapshotClass, Keep: 2},
			Serving:  &rdfv1.ServingSpec{Name: "fuseki", VolumeName: "databases"},
			// Short waits: the tests check that backoff is honoured, not how long it is.
			Retry: rdfv1.RetrySpec{Limit: 3, BuildAttempts: 3, Backoff: metav1.Duration{Duration: time.Second}},
		},
	}
}

// newServingDeployment is the query workload, mounting an emptyDir until the first handoff.
func newServingDeployment(ns string) *appsv1.Deployment {
	labels := map[string]string{"app": "fuseki"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "fuseki"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					Containers: []corev1.Container{{
						Name: "fuseki", Image: "registry.example/fuseki:5.6.0",
						VolumeMounts: []corev1.VolumeMount{{Name: "databases", MountPath: "/fuseki/databases"}},
					}},
					Volumes: []corev1.Volume{{Name: "databases", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
				},
			},
		},
	}
}

func getBulkLoad(g Gomega, key client.ObjectKey) *rdfv1.BulkLoad {
	bl := &rdfv1.BulkLoad{}
	g.Expect(k8s.Get(ctx, key, bl)).To(Succeed())
	return bl
}

func workflowsOf(g Gomega, bl *rdfv1.BulkLoad) []wfv1.Workflow {
	list := &wfv1.WorkflowList{}
	g.Expect(k8s.List(ctx, list, client.InNamespace(bl.Namespace), client.MatchingLabels(specs.SelectorLabels(bl)))).To(Succeed())
	return list.Items
}

// liveWorkflowsOf are the workflows not being deleted.
func liveWorkflowsOf(g Gomega, bl *rdfv1.BulkLoad) []wfv1.Workflow {
	var live []wfv1.Workflow
	for _, wf := range workflowsOf(g, bl) {
		if wf.DeletionTimestamp.IsZero() {
			live = append(live, wf)
		}
	}
	return live
}

// waitForWorkflow waits for the build workflow of the BulkLoad's current revision and attempt.
func waitForWorkflow(t *testing.T, key client.ObjectKey) (*rdfv1.BulkLoad, *wfv1.Workflow) {
	t.Helper()
	var bl *rdfv1.BulkLoad
	wf := &wfv1.Workflow{}
	eventually(t, func(g Gomega) {
		bl = getBulkLoad(g, key)
		g.Expect(bl.Status.SourceRevision).NotTo(BeEmpty())
		g.Expect(bl.Status.Workflow).NotTo(BeNil())
		g.Expect(bl.Status.Workflow.Name).To(Equal(specs.WorkflowName(bl, bl.Status.SourceRevision, bl.Status.Attempt)))
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: key.Namespace, Name: bl.Status.Workflow.Name}, wf)).To(Succeed())
	})
	return bl, wf
}

// deletedOrDeleting: without kube-controller-manager, a PVC's pvc-protection
// finalizer is never removed, so a deleted PVC stays with a deletion timestamp.
func deletedOrDeleting(g Gomega, obj client.Object) {
	err := k8s.Get(ctx, client.ObjectKeyFromObject(obj), obj)
	if apierrors.IsNotFound(err) {
		return
	}
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(obj.GetDeletionTimestamp()).NotTo(BeNil(), "%s should be deleted", obj.GetName())
}

func eventReasons(g Gomega, bl *rdfv1.BulkLoad) map[string]string {
	list := &eventsv1.EventList{}
	g.Expect(k8s.List(ctx, list, client.InNamespace(bl.Namespace))).To(Succeed())
	out := map[string]string{}
	for _, e := range list.Items {
		if e.Regarding.Name == bl.Name && e.Regarding.Kind == "BulkLoad" {
			out[e.Reason] = e.Type + ": " + e.Note
		}
	}
	return out
}

// argoControllerStandIn writes Workflow status the way Argo's workflow-controller
// does, because neither it nor a kubelet runs in envtest: a Steps node for the
// entrypoint, a Retry node per step (the templates have a retryStrategy) and one
// Pod node per try whose outputs carry the container's exit code.
type argoControllerStandIn struct {
	t *testing.T
	// c is the API server's client; nil means the suite's (k8s).
	c client.Client
}

func (a argoControllerStandIn) client() client.Client {
	if a.c == nil {
		return k8s
	}
	return a.c
}

type podTry struct {
	phase    wfv1.NodePhase
	exitCode int
	// message replaces the default node message; noExitCode leaves the outputs out
	// (a pod that never ran); startedAt, when set, replaces now.
	message    string
	noExitCode bool
	startedAt  time.Time
	// node is the node the pod was scheduled to (Argo's hostNodeName).
	node string
}

func (a argoControllerStandIn) update(key client.ObjectKey, mutate func(wf *wfv1.Workflow)) {
	a.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		wf := &wfv1.Workflow{}
		if err := a.client().Get(ctx, key, wf); err != nil {
			return err
		}
		mutate(wf)
		// The Workflow CRD has no status subresource: Argo updates the whole object.
		return a.client().Update(ctx, wf)
	})
	if err != nil {
		a.t.Fatalf("argo stand-in: %v", err)
	}
}

// setSteps writes the node tree for the steps reached so far: every step before
// the last succeeded once; the last one has the given tries.
func (a argoControllerStandIn) setSteps(key client.ObjectKey, wfPhase wfv1.WorkflowPhase, message string, steps []string, lastTries []podTry, report string) {
	a.update(key, func(wf *wfv1.Workflow) {
		now := metav1.Now()
		nodes := wfv1.Nodes{}
		root := wfv1.NodeStatus{ID: wf.Name, Name: wf.Name, DisplayName: wf.Name, Type: wfv1.NodeTypeSteps, TemplateName: "build", Phase: wfv1.NodeRunning, StartedAt: now}
		for i, step := range steps {
			tries := []podTry{{phase: wfv1.NodeSucceeded, exitCode: 0}}
			if i == len(steps)-1 {
				tries = lastTries
			}
			retryID := fmt.Sprintf("%s-%d", wf.Name, 1000+i)
			retryNode := wfv1.NodeStatus{
				ID: retryID, Name: fmt.Sprintf("%s[%d].%s", wf.Name, i, step), DisplayName: step,
				Type: wfv1.NodeTypeRetry, TemplateName: step, StartedAt: now, Phase: tries[len(tries)-1].phase,
			}
			for k, try := range tries {
				podID := fmt.Sprintf("%s-%d", wf.Name, 2000+10*i+k)
				pod := wfv1.NodeStatus{
					ID: podID, Name: fmt.Sprintf("%s[%d].%s(%d)", wf.Name, i, step, k), DisplayName: fmt.Sprintf("%s(%d)", step, k),
					Type: wfv1.NodeTypePod, TemplateName: step, Phase: try.phase, StartedAt: now, Message: try.message,
				}
				if !try.startedAt.IsZero() {
					pod.StartedAt = metav1.NewTime(try.startedAt)
				}
				pod.HostNodeName = try.node
				if try.phase != wfv1.NodeRunning && try.phase != wfv1.NodePending {
					pod.FinishedAt = metav1.NewTime(now.Add(time.Duration(k) * time.Millisecond))
					if !try.noExitCode {
						pod.Outputs = &wfv1.Outputs{ExitCode: ptr.To(fmt.Sprint(try.exitCode))}
					}
					if try.phase == wfv1.NodeFailed && try.message == "" {
						pod.Message = fmt.Sprintf("Error (exit code %d)", try.exitCode)
					}
					if step == specs.StepLoad && try.phase == wfv1.NodeSucceeded && report != "" && pod.Outputs != nil {
						pod.Outputs.Parameters = []wfv1.Parameter{{Name: specs.SummaryParameter, Value: wfv1.AnyStringPtr(report)}}
					}
				}
				nodes[podID] = pod
				retryNode.Children = append(retryNode.Children, podID)
			}
			if retryNode.Phase == wfv1.NodeSucceeded {
				// Argo copies the successful try's outputs to the Retry node.
				retryNode.Outputs = nodes[retryNode.Children[len(retryNode.Children)-1]].Outputs
			}
			if retryNode.Phase == wfv1.NodeFailed {
				retryNode.Message = "No more retries left"
			}
			nodes[retryID] = retryNode
			root.Children = append(root.Children, retryID)
		}
		wf.Status.Phase = wfPhase
		wf.Status.Message = message
		wf.Status.StartedAt = now
		if wfPhase == wfv1.WorkflowSucceeded || wfPhase == wfv1.WorkflowFailed || wfPhase == wfv1.WorkflowError {
			root.Phase = wfv1.NodePhase(wfPhase)
			wf.Status.FinishedAt = now
		}
		nodes[root.ID] = root
		wf.Status.Nodes = nodes
	})
}

// pending: the workflow waits for the given step's pod, Pending since the given time
// with Argo's account of why (for an unschedulable pod: "Unschedulable: " and the
// pod's PodScheduled message).
func (a argoControllerStandIn) pending(key client.ObjectKey, step string, since time.Time, message string) {
	a.setSteps(key, wfv1.WorkflowRunning, "", stepsUpTo(step), []podTry{{phase: wfv1.NodePending, startedAt: since, message: message}}, "")
}

// rejected: the API server refused the step's pod on every try (Argo marks the pod
// node Error with the refusal and, by the retry expression, does not retry it).
func (a argoControllerStandIn) rejected(key client.ObjectKey, step, message string) {
	a.setSteps(key, wfv1.WorkflowFailed, "child failed", stepsUpTo(step), []podTry{{phase: wfv1.NodeError, message: message, noExitCode: true}}, "")
}

// running: the workflow runs the given step (earlier steps succeeded).
func (a argoControllerStandIn) running(key client.ObjectKey, step string) {
	a.setSteps(key, wfv1.WorkflowRunning, "", stepsUpTo(step), []podTry{{phase: wfv1.NodeRunning}}, "")
}

// succeed: every step passed; the load step's report.json is its output parameter.
func (a argoControllerStandIn) succeed(key client.ObjectKey, report string) {
	a.setSteps(key, wfv1.WorkflowSucceeded, "", stepsUpTo(specs.StepValidate), []podTry{{phase: wfv1.NodeSucceeded}}, report)
}

// fail: the step's tries (Argo's retryStrategy) exited with these codes, the last
// try ended the workflow.
func (a argoControllerStandIn) fail(key client.ObjectKey, step string, exitCodes ...int) {
	tries := make([]podTry, len(exitCodes))
	for i, c := range exitCodes {
		tries[i] = podTry{phase: wfv1.NodeFailed, exitCode: c}
	}
	a.setSteps(key, wfv1.WorkflowFailed, "child failed", stepsUpTo(step), tries, "")
}

func stepsUpTo(step string) []string {
	all := []string{specs.StepFetch, specs.StepLoad, specs.StepValidate}
	for i, s := range all {
		if s == step {
			return all[:i+1]
		}
	}
	panic("unknown step " + step)
}

// csiSnapshotterStandIn sets VolumeSnapshot status as the external-snapshotter
// controller does once the CSI driver has cut the snapshot (neither runs in envtest).
type csiSnapshotterStandIn struct {
	t *testing.T
	// c is the API server's client; nil means the suite's (k8s).
	c client.Client
}

func (c csiSnapshotterStandIn) client() client.Client {
	if c.c == nil {
		return k8s
	}
	return c.c
}

func (c csiSnapshotterStandIn) ready(key client.ObjectKey, restoreSize string) {
	c.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		vs := &snapv1.VolumeSnapshot{}
		if err := c.client().Get(ctx, key, vs); err != nil {
			return err
		}
		vs.Status = &snapv1.VolumeSnapshotStatus{
			BoundVolumeSnapshotContentName: ptr.To("snapcontent-" + string(vs.UID)),
			CreationTime:                   ptr.To(metav1.Now()),
			ReadyToUse:                     ptr.To(true),
			RestoreSize:                    ptr.To(resource.MustParse(restoreSize)),
		}
		return c.client().Status().Update(ctx, vs)
	})
	if err != nil {
		c.t.Fatalf("csi snapshotter stand-in: %v", err)
	}
}

// fail records a snapshot error, as the snapshotter does when the driver refuses.
func (c csiSnapshotterStandIn) fail(key client.ObjectKey, message string) {
	c.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		vs := &snapv1.VolumeSnapshot{}
		if err := k8s.Get(ctx, key, vs); err != nil {
			return err
		}
		vs.Status = &snapv1.VolumeSnapshotStatus{
			ReadyToUse: ptr.To(false),
			Error:      &snapv1.VolumeSnapshotError{Time: ptr.To(metav1.Now()), Message: ptr.To(message)},
		}
		return k8s.Status().Update(ctx, vs)
	})
	if err != nil {
		c.t.Fatalf("csi snapshotter stand-in: %v", err)
	}
}

const sampleReport = `{"tool": "rdf-bulkload", "version": "0.1.0", "triples": 1000, "quads": 24, "rejects": 3, "duration_seconds": 2.0, "database_bytes": 123456, "already_complete": false, "report": "/data/report.json"}`

// completeBuild drives the BulkLoad's current build to the end as Argo and the CSI
// snapshotter would, and waits until it is Ready with the build's revision.
// buildUntilSnapshot lets the BulkLoad's build workflow succeed and waits for the
// VolumeSnapshot the controller then creates; returns the BulkLoad as it was when its
// workflow appeared, and the snapshot's key.
func buildUntilSnapshot(t *testing.T, key client.ObjectKey) (*rdfv1.BulkLoad, client.ObjectKey) {
	t.Helper()
	bl, wf := waitForWorkflow(t, key)
	argoControllerStandIn{t: t}.succeed(client.ObjectKeyFromObject(wf), sampleReport)
	snapKey := client.ObjectKey{Namespace: key.Namespace, Name: specs.SnapshotName(bl, bl.Status.SourceRevision)}
	eventually(t, func(g Gomega) {
		g.Expect(k8s.Get(ctx, snapKey, &snapv1.VolumeSnapshot{})).To(Succeed())
	})
	return bl, snapKey
}

func completeBuild(t *testing.T, key client.ObjectKey) *rdfv1.BulkLoad {
	t.Helper()
	bl, snapKey := buildUntilSnapshot(t, key)
	rev := bl.Status.SourceRevision
	csiSnapshotterStandIn{t: t}.ready(snapKey, "12Gi")
	eventually(t, func(g Gomega) {
		bl = getBulkLoad(g, key)
		g.Expect(bl.Status.LastBuiltRevision).To(Equal(rev))
	})
	return bl
}

func containsArgs(args []string, want ...string) bool {
	return strings.Contains(" "+strings.Join(args, " ")+" ", " "+strings.Join(want, " ")+" ")
}

// rolloutControllerStandIn writes Deployment and StatefulSet status as their
// controllers in kube-controller-manager do (neither runs in envtest).
type rolloutControllerStandIn struct{ t *testing.T }

// complete: the current template runs on every replica, no old pod is left.
func (r rolloutControllerStandIn) complete(key client.ObjectKey, kind rdfv1.WorkloadKind) {
	r.t.Helper()
	r.set(key, kind, func(gen int64, replicas int32) (updated, total, available int32) { return replicas, replicas, replicas })
}

// set writes the status for the current generation from f(generation, spec.replicas).
func (r rolloutControllerStandIn) set(key client.ObjectKey, kind rdfv1.WorkloadKind, f func(gen int64, replicas int32) (updated, total, available int32)) {
	r.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if kind == rdfv1.WorkloadStatefulSet {
			sts := &appsv1.StatefulSet{}
			if err := k8s.Get(ctx, key, sts); err != nil {
				return err
			}
			u, n, a := f(sts.Generation, ptr.Deref(sts.Spec.Replicas, 1))
			rev := fmt.Sprintf("%s-%d", sts.Name, sts.Generation)
			sts.Status = appsv1.StatefulSetStatus{ObservedGeneration: sts.Generation, Replicas: n, UpdatedReplicas: u, ReadyReplicas: a,
				AvailableReplicas: a, CurrentReplicas: u, UpdateRevision: rev, CurrentRevision: rev}
			return k8s.Status().Update(ctx, sts)
		}
		d := &appsv1.Deployment{}
		if err := k8s.Get(ctx, key, d); err != nil {
			return err
		}
		u, n, a := f(d.Generation, ptr.Deref(d.Spec.Replicas, 1))
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: n, UpdatedReplicas: u, ReadyReplicas: a, AvailableReplicas: a}
		return k8s.Status().Update(ctx, d)
	})
	if err != nil {
		r.t.Fatalf("rollout stand-in: %v", err)
	}
}

// completeEvery rolls out every Deployment and StatefulSet of the namespace as soon
// as its template changes, until the test ends.
func (r rolloutControllerStandIn) completeEvery(ns string) {
	done := make(chan struct{})
	r.t.Cleanup(func() { close(done) })
	go func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(50 * time.Millisecond):
			}
			deps := &appsv1.DeploymentList{}
			if err := k8s.List(ctx, deps, client.InNamespace(ns)); err == nil {
				for _, d := range deps.Items {
					if d.Status.ObservedGeneration < d.Generation {
						d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: ptr.Deref(d.Spec.Replicas, 1),
							UpdatedReplicas: ptr.Deref(d.Spec.Replicas, 1), ReadyReplicas: ptr.Deref(d.Spec.Replicas, 1), AvailableReplicas: ptr.Deref(d.Spec.Replicas, 1)}
						_ = k8s.Status().Update(ctx, &d)
					}
				}
			}
			stss := &appsv1.StatefulSetList{}
			if err := k8s.List(ctx, stss, client.InNamespace(ns)); err == nil {
				for _, s := range stss.Items {
					if s.Status.ObservedGeneration < s.Generation {
						n := ptr.Deref(s.Spec.Replicas, 1)
						rev := fmt.Sprintf("%s-%d", s.Name, s.Generation)
						s.Status = appsv1.StatefulSetStatus{ObservedGeneration: s.Generation, Replicas: n, UpdatedReplicas: n, ReadyReplicas: n,
							AvailableReplicas: n, CurrentReplicas: n, UpdateRevision: rev, CurrentRevision: rev}
						_ = k8s.Status().Update(ctx, &s)
					}
				}
			}
		}
	}()
}

// releaseDeletedClaims removes the pvc-protection finalizer of deleted PVCs, as
// kube-controller-manager does once no pod uses them.
func releaseDeletedClaims(t *testing.T, ns string) {
	t.Helper()
	list := &corev1.PersistentVolumeClaimList{}
	if err := k8s.List(ctx, list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		pvc := &list.Items[i]
		if pvc.DeletionTimestamp.IsZero() || len(pvc.Finalizers) == 0 {
			continue
		}
		pvc.Finalizers = nil
		if err := k8s.Update(ctx, pvc); client.IgnoreNotFound(err) != nil && !apierrors.IsConflict(err) {
			t.Fatal(err)
		}
	}
}

// buildClaims reads the data and scratch volumes of a revision's build.
func buildClaims(g Gomega, bl *rdfv1.BulkLoad, rev string) (data, scratch *corev1.PersistentVolumeClaim) {
	data, scratch = &corev1.PersistentVolumeClaim{}, &corev1.PersistentVolumeClaim{}
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: bl.Namespace, Name: specs.DataClaimName(bl, rev)}, data)).To(Succeed())
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: bl.Namespace, Name: specs.ScratchClaimName(bl, rev)}, scratch)).To(Succeed())
	return data, scratch
}

// stalledWith waits for the BulkLoad to be Stalled with the reason and returns it.
func stalledWith(t *testing.T, key client.ObjectKey, reason string) (*rdfv1.BulkLoad, *metav1.Condition) {
	t.Helper()
	var bl *rdfv1.BulkLoad
	var c *metav1.Condition
	eventually(t, func(g Gomega) {
		bl = getBulkLoad(g, key)
		c = meta.FindStatusCondition(bl.Status.Conditions, rdfv1.ConditionStalled)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(c.Reason).To(Equal(reason))
	})
	return bl, c
}

// updateSpec changes the BulkLoad's spec, retrying on conflicts with the controller.
func updateSpec(t *testing.T, key client.ObjectKey, change func(*rdfv1.BulkLoad)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		bl := &rdfv1.BulkLoad{}
		if err := k8s.Get(ctx, key, bl); err != nil {
			return err
		}
		change(bl)
		return k8s.Update(ctx, bl)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// bindClaim binds a claim as the PV controller does: to the named volume, phase Bound.
func bindClaim(t *testing.T, key client.ObjectKey, volume string) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pvc := &corev1.PersistentVolumeClaim{}
		if err := k8s.Get(ctx, key, pvc); err != nil {
			return err
		}
		pvc.Spec.VolumeName = volume
		if err := k8s.Update(ctx, pvc); err != nil {
			return err
		}
		pvc.Status.Phase = corev1.ClaimBound
		pvc.Status.Capacity = pvc.Spec.Resources.Requests
		return k8s.Status().Update(ctx, pvc)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// createExpandableClass creates a StorageClass of the test CSI driver with the given
// expandability (cluster-wide: named per test).
func createExpandableClass(t *testing.T, name string, expandable bool) {
	t.Helper()
	sc := storageClass(name, testCSIDriver, storagev1.VolumeBindingWaitForFirstConsumer)
	sc.AllowVolumeExpansion = ptr.To(expandable)
	if err := k8s.Create(ctx, sc); err != nil {
		t.Fatal(err)
	}
}

func notDeleted(g Gomega, obj client.Object) {
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
	g.Expect(obj.GetDeletionTimestamp()).To(BeNil(), "%s should be kept", obj.GetName())
}

// annotate wakes the controller with a merge patch of an annotation; unlike an update of
// the whole object, it leaves the spec (and generation) as it is.
func annotate(t *testing.T, key client.ObjectKey, n int) {
	t.Helper()
	bl := &rdfv1.BulkLoad{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	patch := client.RawPatch(types.MergePatchType, []byte(fmt.Sprintf(`{"metadata":{"annotations":{"example.org/poke":"%d"}}}`, n)))
	if err := k8s.Patch(ctx, bl, patch); err != nil {
		t.Fatal(err)
	}
}
