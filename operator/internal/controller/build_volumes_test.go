package controller

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	wfv1 "github.com/argoproj/argo-workflows/v4/pkg/apis/workflow/v1alpha1"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/specs"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/status"
)

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
