package controller

import (
	"testing"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	wfv1 "github.com/argoproj/argo-workflows/v4/pkg/apis/workflow/v1alpha1"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/specs"
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
