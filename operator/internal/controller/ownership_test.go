package controller

import (
	"testing"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/status"
)

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
