package controller

import (
	"testing"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/status"
)

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
