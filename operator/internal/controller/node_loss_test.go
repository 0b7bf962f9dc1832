package controller

import (
	"testing"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	wfv1 "github.com/argoproj/argo-workflows/v4/pkg/apis/workflow/v1alpha1"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/specs"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/status"
)

// node is a Node whose Ready condition has had the given status since the given time.
func setNode(t *testing.T, name string, ready corev1.ConditionStatus, since time.Time) {
	t.Helper()
	node := &corev1.Node{}
	err := k8s.Get(ctx, client.ObjectKey{Name: name}, node)
	if apierrors.IsNotFound(err) {
		node = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if err := k8s.Create(ctx, node); err != nil {
			t.Fatal(err)
		}
	} else if err != nil {
		t.Fatal(err)
	}
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready, Reason: "KubeletStopped",
		LastHeartbeatTime: metav1.NewTime(since), LastTransitionTime: metav1.NewTime(since)}}
	if err := k8s.Status().Update(ctx, node); err != nil {
		t.Fatal(err)
	}
}

// nodeLocalVolume creates a PV bound (by node affinity) to node and binds the claim
// to it, as the scheduler and a node-local CSI driver (TopoLVM) do.
func nodeLocalVolume(t *testing.T, claim client.ObjectKey, node string) {
	t.Helper()
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv-" + claim.Namespace + "-" + claim.Name},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
			StorageClassName:              "local-nvme",
			PersistentVolumeSource:        corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "topolvm.io", VolumeHandle: "vh-" + claim.Name}},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "topology.topolvm.io/node", Operator: corev1.NodeSelectorOpIn, Values: []string{node}}},
			}}}},
		},
	}
	if err := k8s.Create(ctx, pv); err != nil {
		t.Fatal(err)
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pvc := &corev1.PersistentVolumeClaim{}
		if err := k8s.Get(ctx, claim, pvc); err != nil {
			return err
		}
		if pvc.Annotations == nil {
			pvc.Annotations = map[string]string{}
		}
		pvc.Annotations[specs.AnnotationSelectedNode] = node
		pvc.Spec.VolumeName = pv.Name
		return k8s.Update(ctx, pvc)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// loadingOnNode starts a build (serving nothing, a minute's node-loss grace) whose volumes are
// bound to node and whose load step Argo reports running, its pod on podNode ("": Argo's
// status does not name a node yet).
func loadingOnNode(t *testing.T, ns, name, node, podNode string) (client.ObjectKey, *rdfv1.BulkLoad, *wfv1.Workflow) {
	t.Helper()
	g := NewWithT(t)
	setNode(t, node, corev1.ConditionTrue, time.Now())
	bl := newBulkLoad(ns, name)
	bl.Spec.Serving = nil
	bl.Spec.Build.NodeLossGracePeriod = &metav1.Duration{Duration: time.Minute}
	g.Expect(k8s.Create(ctx, bl)).To(Succeed())
	key := client.ObjectKeyFromObject(bl)
	bl, wf := waitForWorkflow(t, key)
	rev := bl.Status.SourceRevision
	nodeLocalVolume(t, client.ObjectKey{Namespace: ns, Name: specs.DataClaimName(bl, rev)}, node)
	nodeLocalVolume(t, client.ObjectKey{Namespace: ns, Name: specs.ScratchClaimName(bl, rev)}, node)
	argo := argoControllerStandIn{t: t}
	argo.setSteps(client.ObjectKeyFromObject(wf), wfv1.WorkflowRunning, "", stepsUpTo(specs.StepLoad), []podTry{{phase: wfv1.NodeRunning, node: podNode}}, "")
	return key, bl, wf
}

// A build whose node stays NotReady past build.nodeLossGracePeriod ends its attempt
// (NodeLost, an event) and the next attempt runs on new volumes: the node-local ones
// bound to the lost node cannot be resumed from.
func TestBuildOnALostNodeStartsAnotherAttempt(t *testing.T) {
	startController(t)
	ns := newNamespace(t)
	g := NewWithT(t)
	node := "node-a-" + ns
	key, bl, wf := loadingOnNode(t, ns, "node-loss", node, node)
	rev := bl.Status.SourceRevision
	data, scratch := buildClaims(g, bl, rev)

	// NotReady for less than the grace: the build goes on.
	setNode(t, node, corev1.ConditionUnknown, time.Now())
	poke(t, key)
	g.Consistently(func(g Gomega) {
		g.Expect(getBulkLoad(g, key).Status.Attempt).To(Equal(int32(1)))
		notDeleted(g, data)
	}).WithTimeout(2 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())

	setNode(t, node, corev1.ConditionUnknown, time.Now().Add(-2*time.Minute))
	poke(t, key)
	eventually(t, func(g Gomega) {
		bl = getBulkLoad(g, key)
		g.Expect(bl.Status.LastFailure).NotTo(BeNil())
		g.Expect(bl.Status.LastFailure.Reason).To(Equal(status.ReasonNodeLost))
		g.Expect(bl.Status.LastFailure.Node).To(Equal(node))
		g.Expect(bl.Status.LastFailure.Step).To(Equal(specs.StepLoad))
		g.Expect(eventReasons(g, bl)).To(HaveKey(status.ReasonNodeLost))
		deletedOrDeleting(g, data)
		deletedOrDeleting(g, scratch)
		deletedOrDeleting(g, wf)
	})
	g.Expect(eventReasons(g, bl)[status.ReasonNodeLost]).To(ContainSubstring("replaced"))

	// The claims go once the lost node's pods are removed (here: at once).
	eventually(t, func(g Gomega) {
		releaseDeletedClaims(t, ns)
		bl = getBulkLoad(g, key)
		g.Expect(bl.Status.Attempt).To(Equal(int32(2)))
		g.Expect(bl.Status.Workflow).NotTo(BeNil())
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: bl.Status.Workflow.Name}, &wfv1.Workflow{})).To(Succeed())
		d2, s2 := buildClaims(g, bl, rev)
		g.Expect(d2.UID).NotTo(Equal(data.UID))
		g.Expect(s2.UID).NotTo(Equal(scratch.UID))
	})
	g.Expect(bl.Status.SourceRevision).To(Equal(rev))
}

// A node lost right after a step's pod started, before Argo's status names the pod: the
// workflow's pod on that node is removed all the same (it would keep the volumes it mounts
// from being released, and the next attempt would wait for them forever).
func TestALostNodesPodIsRemovedBeforeArgoNamesIt(t *testing.T) {
	startController(t)
	ns := newNamespace(t)
	g := NewWithT(t)
	node := "node-b-" + ns
	key, _, wf := loadingOnNode(t, ns, "node-loss-unnamed", node, "")
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: wf.Name + "-load-1", Labels: map[string]string{argoWorkflowLabel: wf.Name}},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "main", Image: "loader"}}},
	}
	g.Expect(k8s.Create(ctx, pod)).To(Succeed())

	setNode(t, node, corev1.ConditionUnknown, time.Now().Add(-2*time.Minute))
	poke(t, key)
	eventually(t, func(g Gomega) {
		err := k8s.Get(ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the pod on the lost node is still there (%v)", err)
		g.Expect(eventReasons(g, getBulkLoad(g, key))[status.ReasonNodeLost]).To(ContainSubstring(pod.Name + " is removed"))
	})
}

// A node-local served volume whose node is lost: Wait says so and waits; Rebuild
// builds the revision again (its snapshot was lost with the node) and serves the new one.
func TestServedVolumeOnALostNode(t *testing.T) {
	startController(t)
	ns := newNamespace(t)
	g := NewWithT(t)
	node := "node-b-" + ns
	setNode(t, node, corev1.ConditionTrue, time.Now())
	g.Expect(k8s.Create(ctx, newServingDeployment(ns))).To(Succeed())
	rolloutControllerStandIn{t: t}.completeEvery(ns)
	bl := newBulkLoad(ns, "served-lost")
	g.Expect(k8s.Create(ctx, bl)).To(Succeed())
	key := client.ObjectKeyFromObject(bl)
	bl, _ = waitForWorkflow(t, key)
	rev := bl.Status.SourceRevision
	nodeLocalVolume(t, client.ObjectKey{Namespace: ns, Name: specs.DataClaimName(bl, rev)}, node)
	bl = completeBuild(t, key)
	oldSnap := bl.Status.CurrentSnapshot
	served := client.ObjectKey{Namespace: ns, Name: specs.ServingClaimName(bl, rev)}
	// The restored volume is created on the snapshot's node (selected-node) and binds
	// there; the workload is pointed at it once it is Bound.
	eventually(t, func(g Gomega) {
		g.Expect(k8s.Get(ctx, served, &corev1.PersistentVolumeClaim{})).To(Succeed())
	})
	nodeLocalVolume(t, served, node)
	bindClaim(t, served, "pv-"+served.Namespace+"-"+served.Name)
	eventually(t, func(g Gomega) {
		bl := getBulkLoad(g, key)
		g.Expect(bl.Status.Phase).To(Equal(rdfv1.PhaseReady), "%v", bl.Status.Conditions)
	})
	servedPVC := &corev1.PersistentVolumeClaim{}
	g.Expect(k8s.Get(ctx, served, servedPVC)).To(Succeed())
	oldServedUID := servedPVC.UID

	setNode(t, node, corev1.ConditionFalse, time.Now().Add(-time.Hour))
	poke(t, key)
	eventually(t, func(g Gomega) {
		bl = getBulkLoad(g, key)
		c := meta.FindStatusCondition(bl.Status.Conditions, rdfv1.ConditionReconciling)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(status.ReasonServingNodeLost))
		g.Expect(c.Message).To(ContainSubstring("Wait"))
		g.Expect(c.Message).To(ContainSubstring("lost with their node"))
		g.Expect(eventReasons(g, bl)).To(HaveKey(status.ReasonServingNodeLost))
	})
	g.Expect(bl.Status.SourceRevision).To(BeEmpty(), "Wait builds nothing")

	updateSpec(t, key, func(bl *rdfv1.BulkLoad) { bl.Spec.Serving.OnNodeLoss = rdfv1.NodeLossRebuild })
	eventually(t, func(g Gomega) {
		bl = getBulkLoad(g, key)
		g.Expect(bl.Status.SourceRevision).To(Equal(rev))
		g.Expect(bl.Status.Attempt).To(Equal(int32(2)), "the old workflow of attempt 1 is not taken for the rebuild")
		g.Expect(bl.Status.Snapshots).To(BeEmpty())
		deletedOrDeleting(g, &snapv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: oldSnap}})
	})
	releaseDeletedClaims(t, ns)
	bl = completeBuild(t, key)
	eventually(t, func(g Gomega) {
		releaseDeletedClaims(t, ns)
		bl = getBulkLoad(g, key)
		g.Expect(bl.Status.Phase).To(Equal(rdfv1.PhaseReady))
		restored := &corev1.PersistentVolumeClaim{}
		g.Expect(k8s.Get(ctx, served, restored)).To(Succeed())
		g.Expect(restored.UID).NotTo(Equal(oldServedUID))
	})
}
