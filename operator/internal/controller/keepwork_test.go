package controller

import (
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v4/pkg/apis/workflow/v1alpha1"
	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/dumpset"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/specs"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/status"
)

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

// A snapshot that is not ready within snapshot.readyTimeout fails the build, but the
// database volume it was taken of stays; a change to spec.snapshot takes the snapshot
// again from it, without building again.
func TestSnapshotTimeoutKeepsTheDatabaseAndRetriesOnSnapshotChange(t *testing.T) {
	startController(t)
	ns := newNamespace(t)
	g := NewWithT(t)
	bl := newBulkLoad(ns, "snap-timeout")
	bl.Spec.Serving = nil
	bl.Spec.Snapshot.ReadyTimeout = metav1.Duration{Duration: 3 * time.Second}
	g.Expect(k8s.Create(ctx, bl)).To(Succeed())
	key := client.ObjectKeyFromObject(bl)
	bl, snapKey := buildUntilSnapshot(t, key)
	rev := bl.Status.SourceRevision
	csiSnapshotterStandIn{t: t}.fail(snapKey, "driver does not support snapshots of this volume")

	bl, stalled := stalledWith(t, key, status.ReasonSnapshotTimeout)
	g.Expect(stalled.Message).To(ContainSubstring("snapshot.readyTimeout"))
	g.Expect(stalled.Message).To(ContainSubstring("driver does not support snapshots"))
	g.Expect(stalled.Message).To(ContainSubstring("snapshot.volumeSnapshotClassName or snapshot.readyTimeout"))
	g.Expect(bl.Status.LastBuiltRevision).To(BeEmpty())
	g.Expect(bl.Status.KeptVolumes).NotTo(BeNil())
	g.Expect(bl.Status.KeptVolumes.Revision).To(Equal(rev))
	data, _ := buildClaims(g, bl, rev)
	dataUID := data.UID
	// Kept across later passes, not just the one that failed.
	poke(t, key)
	g.Consistently(func(g Gomega) { notDeleted(g, data) }).WithTimeout(2 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())

	createClusterScoped(t, snapshotClass("other-snapshots", testCSIDriver, false))
	updateSpec(t, key, func(bl *rdfv1.BulkLoad) {
		bl.Spec.Snapshot.VolumeSnapshotClassName = "other-snapshots"
		bl.Spec.Snapshot.ReadyTimeout = metav1.Duration{Duration: time.Hour}
	})
	eventually(t, func(g Gomega) {
		vs := &snapv1.VolumeSnapshot{}
		g.Expect(k8s.Get(ctx, snapKey, vs)).To(Succeed())
		g.Expect(vs.Spec.VolumeSnapshotClassName).To(Equal(ptr.To("other-snapshots")))
		g.Expect(vs.Status).To(BeNil(), "a new snapshot, not the failed one")
	})
	csiSnapshotterStandIn{t: t}.ready(snapKey, "12Gi")
	eventually(t, func(g Gomega) {
		bl = getBulkLoad(g, key)
		g.Expect(bl.Status.LastBuiltRevision).To(Equal(rev))
		g.Expect(bl.Status.Phase).To(Equal(rdfv1.PhaseReady))
	})
	g.Expect(workflowsOf(g, bl)).To(HaveLen(1), "the workflow is not run again")
	g.Expect(bl.Status.Attempt).To(Equal(int32(1)))
	g.Expect(eventReasons(g, bl)).To(HaveKey("RetryAfterSpecChange"))
	data, _ = buildClaims(g, bl, rev)
	g.Expect(data.UID).To(Equal(dataUID))
}

// loadFailsOnAFullScratchDisk starts a build on the StorageClass className, binds its
// scratch volume and fails its load step with exit 5 (disk full).
func loadFailsOnAFullScratchDisk(t *testing.T, ns, name, className string) (client.ObjectKey, *rdfv1.BulkLoad, *wfv1.Workflow) {
	t.Helper()
	bl := newBulkLoad(ns, name)
	bl.Spec.Serving = nil
	bl.Spec.Database.StorageClassName = className
	if err := k8s.Create(ctx, bl); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(bl)
	bl, wf := waitForWorkflow(t, key)
	bindClaim(t, client.ObjectKey{Namespace: ns, Name: specs.ScratchClaimName(bl, bl.Status.SourceRevision)}, "pv-scratch-"+ns)
	argoControllerStandIn{t: t}.fail(client.ObjectKeyFromObject(wf), specs.StepLoad, 5)
	return key, bl, wf
}

// A full scratch disk (exit 5) keeps both build volumes; a larger scratchSize keeps
// the revision, expands the scratch volume in place (its class allows it) and starts
// a new attempt on the same volumes.
func TestFullScratchDiskIsKeptAndGrownInPlace(t *testing.T) {
	startController(t)
	ns := newNamespace(t)
	g := NewWithT(t)
	createExpandableClass(t, "expandable-"+ns, true)
	key, bl, wf := loadFailsOnAFullScratchDisk(t, ns, "disk-full", "expandable-"+ns)
	rev := bl.Status.SourceRevision

	bl, stalled := stalledWith(t, key, "ResourceExhausted")
	g.Expect(stalled.Message).To(ContainSubstring("are kept until"))
	g.Expect(bl.Status.KeptVolumes).NotTo(BeNil())
	g.Expect(bl.Status.KeptVolumes.Until.Time).To(BeTemporally("~", time.Now().Add(rdfv1.DefaultKeepFailedVolumesFor), time.Minute))
	data, scratch := buildClaims(g, bl, rev)
	notDeleted(g, data)
	notDeleted(g, scratch)

	updateSpec(t, key, func(bl *rdfv1.BulkLoad) { bl.Spec.Database.ScratchSize = ptr.To(resource.MustParse("40Gi")) })
	bl, wf2 := waitForWorkflow(t, key)
	g.Expect(bl.Status.SourceRevision).To(Equal(rev), "scratchSize is not part of the revision")
	g.Expect(bl.Status.Attempt).To(Equal(int32(2)))
	g.Expect(wf2.Name).NotTo(Equal(wf.Name))
	data2, scratch2 := buildClaims(g, bl, rev)
	g.Expect(data2.UID).To(Equal(data.UID))
	g.Expect(scratch2.UID).To(Equal(scratch.UID))
	g.Expect(scratch2.Spec.Resources.Requests[corev1.ResourceStorage]).To(Equal(resource.MustParse("40Gi")))
	g.Expect(bl.Status.KeptVolumes).To(BeNil())
	eventually(t, func(g Gomega) { g.Expect(eventReasons(g, bl)).To(HaveKey("ScratchExpanded")) })
}

// Where the scratch volume's class cannot expand, the operator does not throw the
// checkpoint away: it says so and what to do.
func TestScratchThatCannotGrowSaysSo(t *testing.T) {
	startController(t)
	ns := newNamespace(t)
	g := NewWithT(t)
	createExpandableClass(t, "fixed-"+ns, false)
	key, bl, _ := loadFailsOnAFullScratchDisk(t, ns, "disk-fixed", "fixed-"+ns)
	rev := bl.Status.SourceRevision
	stalledWith(t, key, "ResourceExhausted")
	_, scratch := buildClaims(g, bl, rev)

	updateSpec(t, key, func(bl *rdfv1.BulkLoad) { bl.Spec.Database.ScratchSize = ptr.To(resource.MustParse("40Gi")) })
	bl, stalled := stalledWith(t, key, status.ReasonScratchNotExpandable)
	g.Expect(stalled.Message).To(ContainSubstring("does not allow volume expansion"))
	g.Expect(stalled.Message).To(ContainSubstring("trigger.rebuild"))
	_, scratch2 := buildClaims(g, bl, rev)
	g.Expect(scratch2.UID).To(Equal(scratch.UID))
	g.Expect(scratch2.DeletionTimestamp).To(BeNil())
	g.Expect(scratch2.Spec.Resources.Requests[corev1.ResourceStorage]).To(Equal(resource.MustParse("20Gi")))
	g.Expect(liveWorkflowsOf(g, bl)).To(HaveLen(1))
}

// Kept volumes go once spec.retry.keepFailedVolumesFor has passed (the controller looks
// again at that time), and with the BulkLoad.
func TestKeptVolumesExpireAndGoWithTheBulkLoad(t *testing.T) {
	startController(t)
	ns := newNamespace(t)
	g := NewWithT(t)

	short := newBulkLoad(ns, "keep-short")
	short.Spec.Serving = nil
	short.Spec.Retry.KeepFailedVolumesFor = &metav1.Duration{Duration: 3 * time.Second}
	g.Expect(k8s.Create(ctx, short)).To(Succeed())
	shortKey := client.ObjectKeyFromObject(short)
	short, wf := waitForWorkflow(t, shortKey)
	rev := short.Status.SourceRevision
	argoControllerStandIn{t: t}.fail(client.ObjectKeyFromObject(wf), specs.StepLoad, 5)
	short, _ = stalledWith(t, shortKey, "ResourceExhausted")
	g.Expect(short.Status.KeptVolumes).NotTo(BeNil())
	data, scratch := buildClaims(g, short, rev)
	notDeleted(g, data)
	eventually(t, func(g Gomega) {
		deletedOrDeleting(g, data)
		deletedOrDeleting(g, scratch)
		g.Expect(getBulkLoad(g, shortKey).Status.KeptVolumes).To(BeNil())
	})

	long := newBulkLoad(ns, "keep-long")
	long.Spec.Serving = nil
	g.Expect(k8s.Create(ctx, long)).To(Succeed())
	longKey := client.ObjectKeyFromObject(long)
	long, wf = waitForWorkflow(t, longKey)
	rev = long.Status.SourceRevision
	argoControllerStandIn{t: t}.fail(client.ObjectKeyFromObject(wf), specs.StepLoad, 5)
	long, _ = stalledWith(t, longKey, "ResourceExhausted")
	data, scratch = buildClaims(g, long, rev)
	g.Expect(k8s.Delete(ctx, long)).To(Succeed())
	eventually(t, func(g Gomega) {
		deletedOrDeleting(g, data)
		deletedOrDeleting(g, scratch)
	})
}

// A build stopped by its deadline keeps its volumes (the loader checkpointed on
// SIGTERM); a longer spec.build.deadline starts a new attempt of the same revision on them.
func TestDeadlineExceededIsRetriedAfterTheDeadlineChanges(t *testing.T) {
	startController(t)
	ns := newNamespace(t)
	g := NewWithT(t)
	bl := newBulkLoad(ns, "deadline")
	bl.Spec.Serving = nil
	g.Expect(k8s.Create(ctx, bl)).To(Succeed())
	key := client.ObjectKeyFromObject(bl)
	bl, wf := waitForWorkflow(t, key)
	rev := bl.Status.SourceRevision
	argoControllerStandIn{t: t}.setSteps(client.ObjectKeyFromObject(wf), wfv1.WorkflowFailed, "Step exceeded its deadline", stepsUpTo(specs.StepLoad),
		[]podTry{{phase: wfv1.NodeFailed, exitCode: 6, message: "Step exceeded its deadline"}}, "")
	bl, stalled := stalledWith(t, key, status.ReasonDeadlineExceeded)
	g.Expect(stalled.Message).To(ContainSubstring("spec.build"))
	data, scratch := buildClaims(g, bl, rev)
	poke(t, key)
	g.Consistently(func(g Gomega) {
		notDeleted(g, data)
		g.Expect(liveWorkflowsOf(g, bl)).To(HaveLen(1))
	}).WithTimeout(2 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())

	updateSpec(t, key, func(bl *rdfv1.BulkLoad) { bl.Spec.Build.Deadline = &metav1.Duration{Duration: 48 * time.Hour} })
	bl, wf2 := waitForWorkflow(t, key)
	g.Expect(bl.Status.SourceRevision).To(Equal(rev))
	g.Expect(bl.Status.Attempt).To(Equal(int32(2)))
	g.Expect(bl.Status.AttemptsBeforeFix).To(Equal(int32(1)))
	g.Expect(*wf2.Spec.ActiveDeadlineSeconds).To(Equal(int64(48 * 3600)))
	data2, scratch2 := buildClaims(g, bl, rev)
	g.Expect(data2.UID).To(Equal(data.UID))
	g.Expect(scratch2.UID).To(Equal(scratch.UID))
}

// Only a change to what the failure depends on retries it: retention settings do not
// retry a refused pod, the service account does; the message says which.
func TestOnlyAFixToWhatFailedRetries(t *testing.T) {
	startController(t)
	ns := newNamespace(t)
	g := NewWithT(t)
	bl := newBulkLoad(ns, "refused")
	bl.Spec.Serving = nil
	g.Expect(k8s.Create(ctx, bl)).To(Succeed())
	key := client.ObjectKeyFromObject(bl)
	bl, wf := waitForWorkflow(t, key)
	rev := bl.Status.SourceRevision
	argoControllerStandIn{t: t}.rejected(client.ObjectKeyFromObject(wf), specs.StepFetch,
		`pods "x" is forbidden: violates PodSecurity "restricted:latest": runAsNonRoot != true`)
	_, stalled := stalledWith(t, key, status.ReasonPodRejected)
	g.Expect(stalled.Message).To(ContainSubstring("serviceAccountName"))
	g.Expect(stalled.Message).To(ContainSubstring("starts a new attempt of this revision"))
	data, _ := buildClaims(g, bl, rev)
	eventually(t, func(g Gomega) { deletedOrDeleting(g, data) })

	updateSpec(t, key, func(bl *rdfv1.BulkLoad) { bl.Spec.Snapshot.Keep = 3 })
	g.Consistently(func(g Gomega) {
		bl := getBulkLoad(g, key)
		g.Expect(bl.Status.SourceRevision).To(BeEmpty())
		g.Expect(bl.Status.Phase).To(Equal(rdfv1.PhaseFailed))
	}).WithTimeout(2 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())

	releaseDeletedClaims(t, ns)
	updateSpec(t, key, func(bl *rdfv1.BulkLoad) { bl.Spec.ServiceAccountName = "rdf-bulkload-workflow" })
	bl, wf2 := waitForWorkflow(t, key)
	g.Expect(bl.Status.SourceRevision).To(Equal(rev))
	g.Expect(bl.Status.Attempt).To(Equal(int32(2)))
	g.Expect(wf2.Spec.ServiceAccountName).To(Equal("rdf-bulkload-workflow"))
	eventually(t, func(g Gomega) { g.Expect(eventReasons(g, bl)).To(HaveKey("RetryAfterSpecChange")) })
}

// trigger.rebuild builds the same dump set again in watch mode too.
func TestRebuildInWatchMode(t *testing.T) {
	watcher := &sourceWatcherStandIn{revision: make(chan dumpset.Revision, 1), access: make(chan dumpset.Access, 1),
		current: dumpset.Revision{ID: "sha256:feedbeef", Source: true}}
	startController(t, func(r *BulkLoadReconciler) { r.Resolver = watcher })
	ns := newNamespace(t)
	g := NewWithT(t)
	g.Expect(k8s.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "dump-credentials"},
		StringData: map[string]string{"AWS_ACCESS_KEY_ID": "AKIAEXAMPLE", "AWS_SECRET_ACCESS_KEY": "secret"},
	})).To(Succeed())
	bl := newBulkLoad(ns, "watched-rebuild")
	bl.Spec.Serving = nil
	bl.Spec.Trigger = rdfv1.TriggerSpec{Mode: rdfv1.TriggerWatch, Interval: metav1.Duration{Duration: time.Hour}}
	g.Expect(k8s.Create(ctx, bl)).To(Succeed())
	key := client.ObjectKeyFromObject(bl)
	bl, wf := waitForWorkflow(t, key)
	g.Expect(bl.Status.SourceRevision).To(Equal("sha256:feedbeef"))
	argoControllerStandIn{t: t}.fail(client.ObjectKeyFromObject(wf), specs.StepLoad, 3)
	stalledWith(t, key, "BadInput")

	updateSpec(t, key, func(bl *rdfv1.BulkLoad) { bl.Spec.Trigger.Rebuild = "once more" })
	bl, wf2 := waitForWorkflow(t, key)
	g.Expect(bl.Status.SourceRevision).To(HavePrefix("sha256:feedbeef+rebuild:"))
	g.Expect(wf2.Name).NotTo(Equal(wf.Name))
	g.Expect(containsArgs(templateNamed(wf2, "fetch").Container.Args, "--expect-revision", "sha256:feedbeef")).To(BeTrue())
}

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

// A build whose node stays NotReady past build.nodeLossGracePeriod ends its attempt
// (NodeLost, an event) and the next attempt runs on new volumes: the node-local ones
// bound to the lost node cannot be resumed from.
func TestBuildOnALostNodeStartsAnotherAttempt(t *testing.T) {
	startController(t)
	ns := newNamespace(t)
	g := NewWithT(t)
	node := "node-a-" + ns
	setNode(t, node, corev1.ConditionTrue, time.Now())
	bl := newBulkLoad(ns, "node-loss")
	bl.Spec.Serving = nil
	bl.Spec.Build.NodeLossGracePeriod = &metav1.Duration{Duration: time.Minute}
	g.Expect(k8s.Create(ctx, bl)).To(Succeed())
	key := client.ObjectKeyFromObject(bl)
	bl, wf := waitForWorkflow(t, key)
	rev := bl.Status.SourceRevision
	nodeLocalVolume(t, client.ObjectKey{Namespace: ns, Name: specs.DataClaimName(bl, rev)}, node)
	nodeLocalVolume(t, client.ObjectKey{Namespace: ns, Name: specs.ScratchClaimName(bl, rev)}, node)
	argo := argoControllerStandIn{t: t}
	argo.setSteps(client.ObjectKeyFromObject(wf), wfv1.WorkflowRunning, "", stepsUpTo(specs.StepLoad), []podTry{{phase: wfv1.NodeRunning, node: node}}, "")
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
