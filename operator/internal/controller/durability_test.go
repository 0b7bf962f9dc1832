package controller

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	testingclock "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	wfv1 "github.com/argoproj/argo-workflows/v4/pkg/apis/workflow/v1alpha1"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/dumpset"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/specs"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/status"
)

// A succeeded workflow deleted while its snapshot is being taken (Argo's TTL, argo
// delete --completed) is not run again: the status recorded its outcome, and the
// build goes on to Ready with the load figures it recorded.
func TestDeletedWorkflowOfARecordedSuccessIsNotRerun(t *testing.T) {
	startController(t)
	ns := newNamespace(t)
	g := NewWithT(t)
	bl := newBulkLoad(ns, "wf-gone")
	bl.Spec.Serving = nil
	g.Expect(k8s.Create(ctx, bl)).To(Succeed())
	key := client.ObjectKeyFromObject(bl)
	bl, wf := waitForWorkflow(t, key)
	g.Expect(wf.Spec.TTLStrategy).NotTo(BeNil(), "the workflow's TTL is set, not left to the workflow-controller's defaults")
	rev := bl.Status.SourceRevision
	argoControllerStandIn{t: t}.succeed(client.ObjectKeyFromObject(wf), sampleReport)
	snapKey := client.ObjectKey{Namespace: ns, Name: specs.SnapshotName(bl, rev)}
	eventually(t, func(g Gomega) {
		g.Expect(k8s.Get(ctx, snapKey, &snapv1.VolumeSnapshot{})).To(Succeed())
		bl = getBulkLoad(g, key)
		g.Expect(bl.Status.Workflow.Phase).To(Equal(string(wfv1.WorkflowSucceeded)))
	})

	g.Expect(k8s.Delete(ctx, wf)).To(Succeed())
	eventually(t, func(g Gomega) { g.Expect(workflowsOf(g, bl)).To(BeEmpty()) })
	// Several passes over the BulkLoad without its workflow start none.
	for i := 0; i < 3; i++ {
		before := reconcileCount(g)
		poke(t, key)
		eventually(t, func(g Gomega) { g.Expect(reconcileCount(g)).To(BeNumerically(">", before)) })
	}
	g.Expect(workflowsOf(g, bl)).To(BeEmpty(), "a recorded success is not built again")

	csiSnapshotterStandIn{t: t}.ready(snapKey, "12Gi")
	eventually(t, func(g Gomega) {
		bl = getBulkLoad(g, key)
		g.Expect(bl.Status.Phase).To(Equal(rdfv1.PhaseReady))
		g.Expect(bl.Status.LastBuiltRevision).To(Equal(rev))
		g.Expect(bl.Status.Load).NotTo(BeNil(), "the figures recorded when the workflow succeeded")
		g.Expect(bl.Status.Load.Triples).To(Equal(int64(1000)))
	})
	g.Expect(k8s.Get(ctx, snapKey, &snapv1.VolumeSnapshot{})).To(Succeed())
	g.Expect(workflowsOf(g, bl)).To(BeEmpty())
}

// An error on the snapshot is the snapshot controller's to retry: the build waits, and
// goes on when the snapshot becomes ready.
func TestTransientSnapshotErrorIsWaitedOut(t *testing.T) {
	startController(t)
	ns := newNamespace(t)
	g := NewWithT(t)
	bl := newBulkLoad(ns, "snap-transient")
	bl.Spec.Serving = nil
	g.Expect(k8s.Create(ctx, bl)).To(Succeed())
	key := client.ObjectKeyFromObject(bl)
	bl, snapKey := buildUntilSnapshot(t, key)
	csiSnapshotterStandIn{t: t}.fail(snapKey, "rpc error: code = Unavailable desc = driver busy")

	eventually(t, func(g Gomega) {
		bl = getBulkLoad(g, key)
		c := meta.FindStatusCondition(bl.Status.Conditions, rdfv1.ConditionReconciling)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Message).To(ContainSubstring("driver busy"))
		g.Expect(eventReasons(g, bl)).To(HaveKey("SnapshotError"))
	})
	g.Expect(bl.Status.Phase).To(Equal(rdfv1.PhaseSnapshotting), "an error the snapshot controller retries is not final")
	g.Expect(bl.Status.LastFailedRevision).To(BeEmpty())

	csiSnapshotterStandIn{t: t}.ready(snapKey, "12Gi")
	eventually(t, func(g Gomega) {
		bl = getBulkLoad(g, key)
		g.Expect(bl.Status.Phase).To(Equal(rdfv1.PhaseReady))
	})
}

// A BulkLoad deleted with snapshot.onDelete Retain and recreated under the same name
// touches nothing the first one retained: its snapshot and the volume the serving
// workload mounts. Building the very same revision would take over the retained
// snapshot's name: that build fails, saying so.
func TestRecreatedBulkLoadLeavesTheRetainedChildrenAlone(t *testing.T) {
	startController(t)
	ns := newNamespace(t)
	g := NewWithT(t)
	g.Expect(k8s.Create(ctx, newServingDeployment(ns))).To(Succeed())
	bl := newBulkLoad(ns, "reborn")
	g.Expect(k8s.Create(ctx, bl)).To(Succeed())
	key := client.ObjectKeyFromObject(bl)
	bl = completeBuild(t, key)
	eventually(t, func(g Gomega) {
		bl = getBulkLoad(g, key)
		g.Expect(bl.Status.ServingClaim).NotTo(BeEmpty())
	})
	oldUID, claim, snapName := bl.UID, bl.Status.ServingClaim, bl.Status.CurrentSnapshot
	g.Expect(k8s.Delete(ctx, bl)).To(Succeed())
	eventually(t, func(g Gomega) {
		g.Expect(client.IgnoreNotFound(k8s.Get(ctx, key, &rdfv1.BulkLoad{}))).To(Succeed())
		g.Expect(k8s.Get(ctx, key, &rdfv1.BulkLoad{})).NotTo(Succeed())
	})

	// The same spec: the same revision, whose snapshot name is taken.
	again := newBulkLoad(ns, "reborn")
	g.Expect(k8s.Create(ctx, again)).To(Succeed())
	eventually(t, func(g Gomega) {
		again = getBulkLoad(g, key)
		g.Expect(again.UID).NotTo(Equal(oldUID))
		c := meta.FindStatusCondition(again.Status.Conditions, rdfv1.ConditionStalled)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(status.ReasonSnapshotNameTaken))
		g.Expect(c.Message).To(ContainSubstring(snapName))
	})
	g.Expect(workflowsOf(g, again)).To(BeEmpty())

	// Another revision builds; its passes (prune included) leave the old children be.
	eventually(t, func(g Gomega) {
		again = getBulkLoad(g, key)
		again.Spec.Trigger.Rebuild = "second life"
		g.Expect(k8s.Update(ctx, again)).To(Succeed())
	})
	again, _ = waitForWorkflow(t, key)
	for i := 0; i < 2; i++ {
		before := reconcileCount(g)
		poke(t, key)
		eventually(t, func(g Gomega) { g.Expect(reconcileCount(g)).To(BeNumerically(">", before)) })
	}
	vs := &snapv1.VolumeSnapshot{}
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: snapName}, vs)).To(Succeed())
	g.Expect(vs.DeletionTimestamp).To(BeNil(), "the old BulkLoad's retained snapshot")
	pvc := &corev1.PersistentVolumeClaim{}
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: claim}, pvc)).To(Succeed())
	g.Expect(pvc.DeletionTimestamp).To(BeNil(), "the volume the serving workload mounts")
}

// countingSource stands in for the source watcher, counting listings; block makes a
// listing wait for its context to end (a hung endpoint).
type countingSource struct {
	calls atomic.Int64
	block bool
	rev   dumpset.Revision
}

func (c *countingSource) Resolve(ctx context.Context, _ *rdfv1.BulkLoad, _ dumpset.Access, _ dumpset.Settle, _ time.Time) (dumpset.Revision, error) {
	c.calls.Add(1)
	if c.block {
		<-ctx.Done()
		return dumpset.Revision{}, ctx.Err()
	}
	return c.rev, nil
}

func watchedBulkLoad(ns, name string) *rdfv1.BulkLoad {
	bl := newBulkLoad(ns, name)
	bl.Spec.Serving = nil
	bl.Spec.Source.CredentialsSecretRef = nil
	bl.Spec.Trigger = rdfv1.TriggerSpec{Mode: rdfv1.TriggerWatch, Interval: metav1.Duration{Duration: time.Hour}}
	return bl
}

// Reconciles (any event, any requeue) list the source at most once per trigger.interval.
func TestWatchListsTheSourceOncePerInterval(t *testing.T) {
	src := &countingSource{rev: dumpset.Revision{Reason: "SourceIncomplete", Message: "waiting for _SUCCESS", Settle: dumpset.Settle{Fingerprint: "sha256:f1"}}}
	clk := testingclock.NewFakePassiveClock(time.Now())
	startController(t, func(r *BulkLoadReconciler) { r.Resolver = src; r.Clock = clk })
	ns := newNamespace(t)
	g := NewWithT(t)
	bl := watchedBulkLoad(ns, "paced")
	g.Expect(k8s.Create(ctx, bl)).To(Succeed())
	key := client.ObjectKeyFromObject(bl)
	eventually(t, func(g Gomega) {
		bl = getBulkLoad(g, key)
		g.Expect(bl.Status.Source).NotTo(BeNil())
		g.Expect(bl.Status.Source.Fingerprint).To(Equal("sha256:f1"))
	})
	listed := src.calls.Load()
	for i := 0; i < 5; i++ {
		before := reconcileCount(g)
		annotate(t, key, i)
		eventually(t, func(g Gomega) { g.Expect(reconcileCount(g)).To(BeNumerically(">", before)) })
	}
	g.Expect(src.calls.Load()).To(Equal(listed), "reconciles within the interval do not list")
	c := meta.FindStatusCondition(getBulkLoad(g, key).Status.Conditions, rdfv1.ConditionReconciling)
	g.Expect(c.Message).To(ContainSubstring("waiting for _SUCCESS"), "the last listing's verdict stands")

	clk.SetTime(clk.Now().Add(time.Hour))
	annotate(t, key, 5)
	eventually(t, func(g Gomega) { g.Expect(src.calls.Load()).To(Equal(listed + 1)) })
}

// A listing that hangs is cut off after the listing timeout: the worker is free again
// and the BulkLoad says why.
func TestWatchListingIsBoundedInTime(t *testing.T) {
	src := &countingSource{block: true}
	startController(t, func(r *BulkLoadReconciler) { r.Resolver = src; r.SourceListTimeout = time.Second })
	ns := newNamespace(t)
	g := NewWithT(t)
	bl := watchedBulkLoad(ns, "hung")
	g.Expect(k8s.Create(ctx, bl)).To(Succeed())
	key := client.ObjectKeyFromObject(bl)
	eventually(t, func(g Gomega) {
		bl = getBulkLoad(g, key)
		g.Expect(bl.Status.Source).NotTo(BeNil())
		g.Expect(bl.Status.Source.Reason).To(Equal(status.ReasonSourceUnavailable))
		g.Expect(bl.Status.Source.Message).To(ContainSubstring("within 1s"))
	})
	// The single worker serves other BulkLoads meanwhile.
	other := newBulkLoad(ns, "manual-next-door")
	other.Spec.Serving = nil
	g.Expect(k8s.Create(ctx, other)).To(Succeed())
	waitForWorkflow(t, client.ObjectKeyFromObject(other))
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
