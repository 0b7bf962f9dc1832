package controller

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	wfv1 "github.com/argoproj/argo-workflows/v4/pkg/apis/workflow/v1alpha1"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/specs"
)

// The workflow the controller stores carries spec.build (placement on every step pod,
// the attempt's deadline) and the podSpecPatch that makes Argo's own containers
// pass the restricted Pod Security Standard, and its fetch step binds both volumes.
func TestWorkflowCarriesPlacementDeadlineAndPodSecurityPatch(t *testing.T) {
	startController(t)
	ns := newNamespace(t)
	g := NewWithT(t)
	bl := newBulkLoad(ns, "placed")
	bl.Spec.Build = rdfv1.BuildSpec{
		NodeSelector: map[string]string{"example.com/nvme": "true"},
		Tolerations:  []corev1.Toleration{{Key: "example.com/rdf-build", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
		Deadline:     &metav1.Duration{Duration: 6 * time.Hour},
	}
	g.Expect(k8s.Create(ctx, bl)).To(Succeed())
	_, wf := waitForWorkflow(t, client.ObjectKeyFromObject(bl))
	g.Expect(wf.Spec.NodeSelector).To(Equal(bl.Spec.Build.NodeSelector))
	g.Expect(wf.Spec.Tolerations).To(Equal(bl.Spec.Build.Tolerations))
	g.Expect(*wf.Spec.ActiveDeadlineSeconds).To(Equal(int64(6 * 3600)))
	g.Expect(wf.Spec.PodSpecPatch).To(Equal(specs.ExecutorPodSpecPatch()))
	g.Expect(wf.Spec.PodSpecPatch).To(And(ContainSubstring(`"name":"init"`), ContainSubstring(`"name":"wait"`)))
	fetch := templateNamed(wf, "fetch")
	var mounted []string
	for _, m := range fetch.Container.VolumeMounts {
		mounted = append(mounted, m.Name)
	}
	g.Expect(mounted).To(ContainElements("data", "scratch"))
	g.Expect(fetch.Container.Resources.Requests).NotTo(BeEmpty(), "the fetch pod tells the scheduler what it needs")
}

// A step pod that stays Pending (here unschedulable: a taint nobody tolerates) is named
// in the BulkLoad's conditions with the scheduler's message, and in a Warning event,
// once it has waited stepPendingReportAfter; a pod pending for a short while is not.
func TestPendingStepPodIsReported(t *testing.T) {
	startController(t)
	ns := newNamespace(t)
	g := NewWithT(t)
	bl := newBulkLoad(ns, "unschedulable")
	g.Expect(k8s.Create(ctx, bl)).To(Succeed())
	key := client.ObjectKeyFromObject(bl)
	bl, wf := waitForWorkflow(t, key)
	argo := argoControllerStandIn{t: t}
	wfKey := client.ObjectKeyFromObject(wf)

	argo.pending(wfKey, "fetch", time.Now().Add(-10*time.Second), "ContainerCreating")
	eventually(t, func(g Gomega) {
		bl = getBulkLoad(g, key)
		g.Expect(bl.Status.Phase).To(Equal(rdfv1.PhaseFetching))
		c := meta.FindStatusCondition(bl.Status.Conditions, rdfv1.ConditionReconciling)
		g.Expect(c.Reason).To(Equal("Building"))
	})

	why := "Unschedulable: 0/1 nodes are available: 1 node(s) had untolerated taint {example.com/rdf-build: }. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
	since := time.Now().Add(-stepPendingReportAfter - time.Minute)
	argo.pending(wfKey, "fetch", since, why)
	eventually(t, func(g Gomega) {
		bl = getBulkLoad(g, key)
		c := meta.FindStatusCondition(bl.Status.Conditions, rdfv1.ConditionReconciling)
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(c.Reason).To(Equal("StepPodPending"))
		g.Expect(c.Message).To(ContainSubstring("the fetch pod " + wf.Name + "-fetch-"))
		g.Expect(c.Message).To(ContainSubstring(why))
		ready := meta.FindStatusCondition(bl.Status.Conditions, rdfv1.ConditionReady)
		g.Expect(ready.Message).To(ContainSubstring("untolerated taint"))
		g.Expect(bl.Status.Phase).To(Equal(rdfv1.PhaseFetching))
		g.Expect(eventReasons(g, bl)).To(HaveKeyWithValue("StepPodPending", And(HavePrefix("Warning"), ContainSubstring("untolerated taint"))))
	})

	// Scheduled at last: the condition says so.
	argo.running(wfKey, "load")
	eventually(t, func(g Gomega) {
		bl = getBulkLoad(g, key)
		g.Expect(meta.FindStatusCondition(bl.Status.Conditions, rdfv1.ConditionReconciling).Reason).To(Equal("Building"))
		g.Expect(bl.Status.Phase).To(Equal(rdfv1.PhaseLoading))
	})
}

// A pod refused by admission (here Pod Security "restricted") fails the build at once,
// with the API server's message in the Stalled condition: no further attempt would
// be admitted either.
func TestRejectedPodStallsWithTheAdmissionMessage(t *testing.T) {
	startController(t)
	ns := newNamespace(t)
	g := NewWithT(t)
	bl := newBulkLoad(ns, "rejected")
	g.Expect(k8s.Create(ctx, bl)).To(Succeed())
	key := client.ObjectKeyFromObject(bl)
	bl, wf := waitForWorkflow(t, key)
	msg := `pods "` + wf.Name + `-fetch-1" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (containers "init", "wait" must set securityContext.allowPrivilegeEscalation=false)`
	argoControllerStandIn{t: t}.rejected(client.ObjectKeyFromObject(wf), "fetch", msg)

	eventually(t, func(g Gomega) {
		bl = getBulkLoad(g, key)
		g.Expect(bl.Status.Phase).To(Equal(rdfv1.PhaseFailed))
	})
	stalled := meta.FindStatusCondition(bl.Status.Conditions, rdfv1.ConditionStalled)
	g.Expect(stalled.Status).To(Equal(metav1.ConditionTrue))
	g.Expect(stalled.Reason).To(Equal("PodRejected"))
	g.Expect(stalled.Message).To(ContainSubstring("violates PodSecurity"))
	g.Expect(bl.Status.LastFailure.Retryable).To(BeFalse())
	g.Expect(bl.Status.RetryAfter).To(BeNil())
	g.Expect(workflowsOf(g, bl)).To(HaveLen(1), "no second attempt")
}

// A build workflow no Argo workflow-controller picks up (none manages the namespace, an
// instanceID that differs, the controller down) is reported once it has had no status for
// the operator's workflow start timeout: Reconciling=True, reason WorkflowNotStarted, with
// the likely causes and how to check them, and a Warning event. It is not final: once a
// controller runs the workflow, the build goes on and the reason is gone.
func TestWorkflowNotStartedIsReportedUntilArgoRunsIt(t *testing.T) {
	startController(t, func(r *BulkLoadReconciler) { r.WorkflowStartTimeout = 2 * time.Second })
	ns := newNamespace(t)
	g := NewWithT(t)
	bl := newBulkLoad(ns, "unclaimed")
	g.Expect(k8s.Create(ctx, bl)).To(Succeed())
	key := client.ObjectKeyFromObject(bl)
	bl, wf := waitForWorkflow(t, key)
	g.Expect(wf.Labels).NotTo(HaveKey("workflows.argoproj.io/controller-instanceid"), "no instance ID configured")

	// Nothing but the timeout triggers the report: the stand-in for Argo writes nothing.
	eventually(t, func(g Gomega) {
		bl = getBulkLoad(g, key)
		c := meta.FindStatusCondition(bl.Status.Conditions, rdfv1.ConditionReconciling)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(c.Reason).To(Equal("WorkflowNotStarted"))
		g.Expect(c.Message).To(And(ContainSubstring(wf.Name), ContainSubstring("namespace "+ns), ContainSubstring("--managed-namespace"),
			ContainSubstring("sets no instance ID"), ContainSubstring("kubectl -n argo get pods"), ContainSubstring("instanceID")))
		g.Expect(meta.FindStatusCondition(bl.Status.Conditions, rdfv1.ConditionStalled).Status).To(Equal(metav1.ConditionFalse), "not final")
		g.Expect(bl.Status.Phase).To(Equal(rdfv1.PhasePending))
		g.Expect(eventReasons(g, bl)).To(HaveKeyWithValue("WorkflowNotStarted", And(HavePrefix("Warning"), ContainSubstring(wf.Name))))
	})

	// A controller picks it up at last: the build goes on, the report is gone.
	argoControllerStandIn{t: t}.running(client.ObjectKeyFromObject(wf), "fetch")
	eventually(t, func(g Gomega) {
		bl = getBulkLoad(g, key)
		g.Expect(bl.Status.Phase).To(Equal(rdfv1.PhaseFetching))
		for _, c := range bl.Status.Conditions {
			g.Expect(c.Reason).NotTo(Equal("WorkflowNotStarted"), "condition %s", c.Type)
		}
		g.Expect(meta.FindStatusCondition(bl.Status.Conditions, rdfv1.ConditionReconciling).Reason).To(Equal("Building"))
	})
	g.Expect(bl.Status.Attempt).To(Equal(int32(1)), "the same attempt goes on")
	g.Expect(workflowsOf(g, bl)).To(HaveLen(1))
}

// With the operator's Argo instance ID, every build workflow carries Argo's
// controller-instanceid label, and a workflow not started names that ID.
func TestArgoInstanceIDLabelsTheWorkflowAndNamesItWhenNotStarted(t *testing.T) {
	startController(t, func(r *BulkLoadReconciler) {
		r.ArgoInstanceID = "rdf-test"
		r.WorkflowStartTimeout = time.Second
	})
	ns := newNamespace(t)
	g := NewWithT(t)
	bl := newBulkLoad(ns, "instance")
	g.Expect(k8s.Create(ctx, bl)).To(Succeed())
	key := client.ObjectKeyFromObject(bl)
	_, wf := waitForWorkflow(t, key)
	g.Expect(wf.Labels).To(HaveKeyWithValue("workflows.argoproj.io/controller-instanceid", "rdf-test"))
	eventually(t, func(g Gomega) {
		c := meta.FindStatusCondition(getBulkLoad(g, key).Status.Conditions, rdfv1.ConditionReconciling)
		g.Expect(c.Reason).To(Equal("WorkflowNotStarted"))
		g.Expect(c.Message).To(ContainSubstring(`"rdf-test"`))
	})
}

// A workflow Argo holds back (namespaceParallelism, parallelism) is Pending with Argo's
// message, which the BulkLoad shows while it waits; it is no WorkflowNotStarted.
func TestPostponedWorkflowShowsArgosMessage(t *testing.T) {
	startController(t, func(r *BulkLoadReconciler) { r.WorkflowStartTimeout = time.Second })
	ns := newNamespace(t)
	g := NewWithT(t)
	bl := newBulkLoad(ns, "postponed")
	g.Expect(k8s.Create(ctx, bl)).To(Succeed())
	key := client.ObjectKeyFromObject(bl)
	_, wf := waitForWorkflow(t, key)
	argo := argoControllerStandIn{t: t}
	wfKey := client.ObjectKeyFromObject(wf)
	why := "Workflow processing has been postponed because too many workflows are running"
	argo.setSteps(wfKey, wfv1.WorkflowPending, why, nil, nil, "")
	eventually(t, func(g Gomega) {
		bl := getBulkLoad(g, key)
		c := meta.FindStatusCondition(bl.Status.Conditions, rdfv1.ConditionReconciling)
		g.Expect(c.Reason).To(Equal("Building"))
		g.Expect(c.Message).To(ContainSubstring(why))
		g.Expect(meta.FindStatusCondition(bl.Status.Conditions, rdfv1.ConditionReady).Message).To(ContainSubstring(why))
	})
	// It stays Pending past the start timeout: Argo has seen it, so it is not reported as not started.
	time.Sleep(2 * time.Second)
	c := meta.FindStatusCondition(getBulkLoad(g, key).Status.Conditions, rdfv1.ConditionReconciling)
	g.Expect(c.Reason).To(Equal("Building"))
	g.Expect(c.Message).To(ContainSubstring(why))

	argo.running(wfKey, "fetch")
	eventually(t, func(g Gomega) {
		bl := getBulkLoad(g, key)
		g.Expect(bl.Status.Phase).To(Equal(rdfv1.PhaseFetching))
		g.Expect(meta.FindStatusCondition(bl.Status.Conditions, rdfv1.ConditionReconciling).Message).NotTo(ContainSubstring(why))
	})
}
