package controller

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	wfv1 "github.com/argoproj/argo-workflows/v4/pkg/apis/workflow/v1alpha1"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/specs"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/status"
)

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
