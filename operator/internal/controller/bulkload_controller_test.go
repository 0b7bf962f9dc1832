package controller

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v4/pkg/apis/workflow/v1alpha1"
	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/dumpset"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/specs"
)

func conditionStatus(bl *rdfv1.BulkLoad, typ string) metav1.ConditionStatus {
	if c := meta.FindStatusCondition(bl.Status.Conditions, typ); c != nil {
		return c.Status
	}
	return ""
}

func templateNamed(wf *wfv1.Workflow, name string) *wfv1.Template {
	for i := range wf.Spec.Templates {
		if wf.Spec.Templates[i].Name == name {
			return &wf.Spec.Templates[i]
		}
	}
	return nil
}

func TestCreateStartsBuildWorkflow(t *testing.T) {
	startController(t)
	ns := newNamespace(t)
	bl := newBulkLoad(ns, "wikidata")
	g := NewWithT(t)
	g.Expect(k8s.Create(ctx, bl)).To(Succeed())
	key := client.ObjectKeyFromObject(bl)

	bl, wf := waitForWorkflow(t, key)
	g.Expect(bl.Finalizers).To(ContainElement(Finalizer))

	// fetch → load → validate, one step per group, so they run in this order.
	entry := templateNamed(wf, wf.Spec.Entrypoint)
	g.Expect(entry).NotTo(BeNil())
	var order []string
	for _, group := range entry.Steps {
		g.Expect(group.Steps).To(HaveLen(1))
		order = append(order, group.Steps[0].Template)
	}
	g.Expect(order).To(Equal([]string{"fetch", "load", "validate"}))

	// Volumes: the revision's data and scratch PVCs, created from the spec.
	rev := bl.Status.SourceRevision
	claims := map[string]string{}
	for _, v := range wf.Spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			claims[v.Name] = v.PersistentVolumeClaim.ClaimName
		}
	}
	g.Expect(claims).To(Equal(map[string]string{"data": specs.DataClaimName(bl, rev), "scratch": specs.ScratchClaimName(bl, rev)}))
	for name, size := range map[string]string{specs.DataClaimName(bl, rev): "10Gi", specs.ScratchClaimName(bl, rev): "20Gi"} {
		pvc := &corev1.PersistentVolumeClaim{}
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pvc)).To(Succeed())
		g.Expect(*pvc.Spec.StorageClassName).To(Equal("local-nvme"))
		g.Expect(pvc.Spec.Resources.Requests.Storage().Cmp(resource.MustParse(size))).To(Equal(0), name)
		g.Expect(metav1.IsControlledBy(pvc, bl)).To(BeTrue())
	}
	g.Expect(metav1.IsControlledBy(wf, bl)).To(BeTrue())

	// Load: the spec's resources, budget, threads and bad-input policy; retries on 6 and 75 only.
	load := templateNamed(wf, "load")
	g.Expect(load.Container.Image).To(Equal(testLoaderImage))
	g.Expect(load.Container.Resources).To(Equal(bl.Spec.Loader.Resources))
	g.Expect(load.Container.Command).To(Equal([]string{"rdf-bulkload"}), "the loader runs without a shell")
	g.Expect(strings.Join(load.Container.Args, " ")).To(Equal("load --loc /data/db --tmpdir /scratch/tmp --memory 6GiB --threads 4 --on-error skip --jena 5 --max-rejects 100 --rejects /data/rejects.jsonl --report /data/report.json --summary /data/summary.json --source-report /scratch/fetch-report.json --metrics-addr 0.0.0.0:9184 /data/input"))
	g.Expect(load.RetryStrategy.Expression).To(ContainSubstring("[6, 75, 137]"))
	g.Expect(load.RetryStrategy.Limit.IntValue()).To(Equal(3))
	g.Expect(load.Outputs.Parameters).To(HaveLen(1))
	g.Expect(load.Outputs.Parameters[0].Name).To(Equal(specs.SummaryParameter))
	g.Expect(load.Outputs.Parameters[0].ValueFrom.Path).To(Equal("/data/summary.json"), "the summary, not the whole report (etcd caps the Workflow)")

	// Fetch: the operator's image; credentials only as Secret references.
	fetch := templateNamed(wf, "fetch")
	g.Expect(fetch.Container.Image).To(Equal(testFetchImage))
	g.Expect(containsArgs(fetch.Container.Args, "--marker", "wikidata/2026-11-20/_SUCCESS")).To(BeTrue(), "%v", fetch.Container.Args)
	g.Expect(fetch.Container.Env).To(HaveLen(2))
	for _, e := range fetch.Container.Env {
		g.Expect(e.Value).To(BeEmpty())
		g.Expect(e.ValueFrom.SecretKeyRef.Name).To(Equal("dump-credentials"))
	}
	g.Expect(templateNamed(wf, "validate").Container.Command).To(Equal([]string{"rdf-bulkload-validate"}))

	// Every container non-root with a read-only root filesystem.
	g.Expect(*wf.Spec.SecurityContext.RunAsNonRoot).To(BeTrue())
	for _, name := range []string{"fetch", "load", "validate"} {
		sc := templateNamed(wf, name).Container.SecurityContext
		g.Expect(*sc.RunAsNonRoot).To(BeTrue(), name)
		g.Expect(*sc.ReadOnlyRootFilesystem).To(BeTrue(), name)
		g.Expect(*sc.AllowPrivilegeEscalation).To(BeFalse(), name)
	}

	eventually(t, func(g Gomega) {
		bl := getBulkLoad(g, key)
		g.Expect(bl.Status.Phase).To(Equal(rdfv1.PhasePending))
		g.Expect(conditionStatus(bl, rdfv1.ConditionReconciling)).To(Equal(metav1.ConditionTrue))
		g.Expect(conditionStatus(bl, rdfv1.ConditionReady)).To(Equal(metav1.ConditionFalse))
		g.Expect(conditionStatus(bl, rdfv1.ConditionStalled)).To(Equal(metav1.ConditionFalse))
		g.Expect(bl.Status.ObservedGeneration).To(Equal(bl.Generation))
		g.Expect(eventReasons(g, bl)).To(HaveKey("BuildStarted"))
		g.Expect(eventReasons(g, bl)).To(HaveKey("WorkflowCreated"))
	})
}

func TestSucceededBuildIsSnapshottedAndHandedOff(t *testing.T) {
	startController(t)
	ns := newNamespace(t)
	g := NewWithT(t)
	g.Expect(k8s.Create(ctx, newServingDeployment(ns))).To(Succeed())
	rolloutControllerStandIn{t: t}.completeEvery(ns)
	bl := newBulkLoad(ns, "uniprot")
	g.Expect(k8s.Create(ctx, bl)).To(Succeed())
	key := client.ObjectKeyFromObject(bl)
	argo := argoControllerStandIn{t: t}

	bl, wf := waitForWorkflow(t, key)
	rev := bl.Status.SourceRevision
	wfKey := client.ObjectKeyFromObject(wf)
	for step, phase := range map[string]rdfv1.Phase{"fetch": rdfv1.PhaseFetching, "load": rdfv1.PhaseLoading, "validate": rdfv1.PhaseValidating} {
		argo.running(wfKey, step)
		eventually(t, func(g Gomega) { g.Expect(getBulkLoad(g, key).Status.Phase).To(Equal(phase)) })
	}
	argo.succeed(wfKey, sampleReport)

	// The database volume is snapshotted; the phase waits for readyToUse.
	snap := &snapv1.VolumeSnapshot{}
	snapKey := client.ObjectKey{Namespace: ns, Name: specs.SnapshotName(bl, rev)}
	eventually(t, func(g Gomega) {
		g.Expect(k8s.Get(ctx, snapKey, snap)).To(Succeed())
		g.Expect(getBulkLoad(g, key).Status.Phase).To(Equal(rdfv1.PhaseSnapshotting))
	})
	g.Expect(*snap.Spec.Source.PersistentVolumeClaimName).To(Equal(specs.DataClaimName(bl, rev)))
	g.Expect(*snap.Spec.VolumeSnapshotClassName).To(Equal("nvme-snapshots"))
	g.Expect(snap.OwnerReferences).To(BeEmpty(), "snapshots are retained by policy, not garbage-collected with the BulkLoad")

	csiSnapshotterStandIn{t: t}.ready(snapKey, "12Gi")
	eventually(t, func(g Gomega) {
		bl = getBulkLoad(g, key)
		g.Expect(bl.Status.Phase).To(Equal(rdfv1.PhaseReady))
	})
	g.Expect(conditionStatus(bl, rdfv1.ConditionReady)).To(Equal(metav1.ConditionTrue))
	g.Expect(conditionStatus(bl, rdfv1.ConditionReconciling)).To(Equal(metav1.ConditionFalse))
	g.Expect(conditionStatus(bl, rdfv1.ConditionStalled)).To(Equal(metav1.ConditionFalse))
	g.Expect(bl.Status.LastBuiltRevision).To(Equal(rev))
	g.Expect(bl.Status.SourceRevision).To(BeEmpty())
	g.Expect(bl.Status.CurrentSnapshot).To(Equal(snapKey.Name))
	g.Expect(bl.Status.Snapshots).To(HaveLen(1))
	g.Expect(bl.Status.Load).NotTo(BeNil())
	g.Expect(*bl.Status.Load).To(Equal(rdfv1.LoadFigures{
		Triples: 1000, Quads: 24, Rejects: 3, Duration: metav1.Duration{Duration: 2e9},
		TriplesPerSecond: 512, DatabaseBytes: 123456, Report: "/data/report.json",
	}), "the figures of the load step's summary, and where the full report is")

	// Handoff: a PVC restored from the snapshot, at the snapshot's restore size, mounted by the Deployment.
	serving := &corev1.PersistentVolumeClaim{}
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: bl.Status.ServingClaim}, serving)).To(Succeed())
	g.Expect(serving.Spec.DataSource.Kind).To(Equal("VolumeSnapshot"))
	g.Expect(serving.Spec.DataSource.Name).To(Equal(snapKey.Name))
	g.Expect(serving.Spec.Resources.Requests.Storage().Cmp(resource.MustParse("12Gi"))).To(Equal(0))
	dep := &appsv1.Deployment{}
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "fuseki"}, dep)).To(Succeed())
	vol := dep.Spec.Template.Spec.Volumes[0]
	g.Expect(vol.EmptyDir).To(BeNil())
	g.Expect(vol.PersistentVolumeClaim.ClaimName).To(Equal(serving.Name))

	// The build volumes are gone once the snapshot holds the database.
	eventually(t, func(g Gomega) {
		deletedOrDeleting(g, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: specs.DataClaimName(bl, rev)}})
		deletedOrDeleting(g, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: specs.ScratchClaimName(bl, rev)}})
		g.Expect(eventReasons(g, bl)).To(HaveKey("HandedOff"))
		g.Expect(eventReasons(g, bl)).To(HaveKey("BuildSucceeded"))
	})

	eventually(t, func(g Gomega) {
		g.Expect(testutil.ToFloat64(buildsTotal.WithLabelValues(ns, bl.Name, "succeeded"))).To(Equal(1.0))
		g.Expect(testutil.ToFloat64(triplesLoadedTotal.WithLabelValues(ns, bl.Name))).To(Equal(1024.0))
		g.Expect(testutil.ToFloat64(phaseInfo.WithLabelValues(ns, bl.Name, "Ready"))).To(Equal(1.0))
		g.Expect(testutil.ToFloat64(phaseInfo.WithLabelValues(ns, bl.Name, "Loading"))).To(Equal(0.0))
	})
}

func TestRetryableFailureStartsAnotherAttemptAfterBackoff(t *testing.T) {
	startController(t)
	ns := newNamespace(t)
	g := NewWithT(t)
	bl := newBulkLoad(ns, "dbpedia")
	g.Expect(k8s.Create(ctx, bl)).To(Succeed())
	key := client.ObjectKeyFromObject(bl)

	bl, wf1 := waitForWorkflow(t, key)
	// Argo retried the load three times on transient I/O (exit 75), then gave up.
	argoControllerStandIn{t: t}.fail(client.ObjectKeyFromObject(wf1), "load", 75, 75, 75, 75)
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(wf1), wf1)).To(Succeed())
	failedAt := wf1.Status.FinishedAt.Time

	var wf2 *wfv1.Workflow
	eventually(t, func(g Gomega) {
		bl, wf2 = getBulkLoad(g, key), nil
		g.Expect(bl.Status.Attempt).To(Equal(int32(2)))
		g.Expect(bl.Status.Workflow.Name).To(Equal(specs.WorkflowName(bl, bl.Status.SourceRevision, 2)))
		wf2 = &wfv1.Workflow{}
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: bl.Status.Workflow.Name}, wf2)).To(Succeed())
	})
	g.Expect(bl.Status.LastFailure).NotTo(BeNil())
	g.Expect(*bl.Status.LastFailure).To(Equal(rdfv1.BuildFailure{
		Step: "load", ExitCode: ptr.To(int32(75)), Reason: "TransientIO", Message: "Error (exit code 75)", Retryable: true,
		SpecDigest: specDigest(bl, scopeWorkflow),
	}))
	// The next attempt started only after the backoff (1s) from the failure.
	g.Expect(wf2.CreationTimestamp.Time.Before(failedAt.Add(bl.Spec.Retry.BackoffFor(1)))).To(BeFalse(),
		"attempt 2 created at %s, failure at %s", wf2.CreationTimestamp, failedAt)
	g.Expect(wf2.Labels[specs.LabelAttempt]).To(Equal("2"))
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(wf1), &wfv1.Workflow{})).To(Succeed(), "the failed attempt stays for its logs")
	// Same revision, same volumes: the loader resumes from its checkpoints.
	g.Expect(wf2.Spec.Volumes).To(Equal(wf1.Spec.Volumes))
	scratch := &corev1.PersistentVolumeClaim{}
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: specs.ScratchClaimName(bl, bl.Status.SourceRevision)}, scratch)).To(Succeed())
	g.Expect(scratch.DeletionTimestamp).To(BeNil())
	g.Expect(conditionStatus(bl, rdfv1.ConditionStalled)).To(Equal(metav1.ConditionFalse))
	g.Expect(conditionStatus(bl, rdfv1.ConditionReconciling)).To(Equal(metav1.ConditionTrue))
	eventually(t, func(g Gomega) {
		g.Expect(eventReasons(g, bl)).To(HaveKeyWithValue("RetryScheduled", ContainSubstring("exit code 75 (TransientIO)")))
	})
}

func TestFinalFailureStallsWithReason(t *testing.T) {
	startController(t)
	cases := []struct {
		name          string
		step          string
		exitCodes     []int
		buildAttempts int32
		reason        string
	}{
		{name: "bad-input", step: "load", exitCodes: []int{3}, buildAttempts: 3, reason: "BadInput"},
		{name: "incomplete-source", step: "fetch", exitCodes: []int{3}, buildAttempts: 3, reason: "SourceIncomplete"},
		{name: "retries-exhausted", step: "load", exitCodes: []int{75, 75}, buildAttempts: 1, reason: "TransientIO"},
	}
	ns := newNamespace(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			bl := newBulkLoad(ns, tc.name)
			bl.Spec.Retry.BuildAttempts = tc.buildAttempts
			g.Expect(k8s.Create(ctx, bl)).To(Succeed())
			key := client.ObjectKeyFromObject(bl)
			bl, wf := waitForWorkflow(t, key)
			rev := bl.Status.SourceRevision
			argoControllerStandIn{t: t}.fail(client.ObjectKeyFromObject(wf), tc.step, tc.exitCodes...)

			eventually(t, func(g Gomega) {
				bl = getBulkLoad(g, key)
				g.Expect(bl.Status.Phase).To(Equal(rdfv1.PhaseFailed))
			})
			stalled := meta.FindStatusCondition(bl.Status.Conditions, rdfv1.ConditionStalled)
			g.Expect(stalled.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(stalled.Reason).To(Equal(tc.reason))
			g.Expect(stalled.Message).To(ContainSubstring("step " + tc.step + " failed with exit code"))
			g.Expect(conditionStatus(bl, rdfv1.ConditionReady)).To(Equal(metav1.ConditionFalse))
			g.Expect(conditionStatus(bl, rdfv1.ConditionReconciling)).To(Equal(metav1.ConditionFalse))
			g.Expect(bl.Status.LastFailedRevision).To(Equal(rev))
			g.Expect(bl.Status.SourceRevision).To(BeEmpty())
			// Decided in the reconcile that patched the status: no further attempt.
			g.Expect(workflowsOf(g, bl)).To(HaveLen(1))
			eventually(t, func(g Gomega) {
				g.Expect(eventReasons(g, bl)).To(HaveKeyWithValue("BuildFailed", HavePrefix("Warning")))
				g.Expect(testutil.ToFloat64(buildsTotal.WithLabelValues(ns, bl.Name, "failed"))).To(Equal(1.0))
			})

			// Another reconcile (an annotation change) does not retry the failed revision.
			before := reconcileCount(g)
			poke(t, key)
			eventually(t, func(g Gomega) { g.Expect(reconcileCount(g)).To(BeNumerically(">", before)) })
			g.Expect(workflowsOf(g, bl)).To(HaveLen(1))
			g.Expect(getBulkLoad(g, key).Status.Phase).To(Equal(rdfv1.PhaseFailed))
			g.Expect(testutil.ToFloat64(buildsTotal.WithLabelValues(ns, bl.Name, "failed"))).To(Equal(1.0), "a failure is counted once")
		})
	}
}

func TestSpecChangeBuildsAgainAndPrunesBeyondKeep(t *testing.T) {
	startController(t)
	ns := newNamespace(t)
	g := NewWithT(t)
	g.Expect(k8s.Create(ctx, newServingDeployment(ns))).To(Succeed())
	rolloutControllerStandIn{t: t}.completeEvery(ns)
	bl := newBulkLoad(ns, "registry")
	g.Expect(k8s.Create(ctx, bl)).To(Succeed())
	key := client.ObjectKeyFromObject(bl)

	var revs []string
	for i, threads := range []int32{0, 8, 16} {
		if i > 0 {
			eventually(t, func(g Gomega) {
				bl := getBulkLoad(g, key)
				bl.Spec.Loader.Threads = threads
				g.Expect(k8s.Update(ctx, bl)).To(Succeed())
			})
		}
		bl = completeBuild(t, key)
		revs = append(revs, bl.Status.LastBuiltRevision)
	}
	g.Expect(revs[0]).NotTo(Equal(revs[1]))
	g.Expect(revs[1]).NotTo(Equal(revs[2]))

	// keep=2: the newest two snapshots (and their restored volumes) stay, the first goes.
	eventually(t, func(g Gomega) {
		bl = getBulkLoad(g, key)
		g.Expect(bl.Status.Snapshots).To(HaveLen(2))
		g.Expect(bl.Status.Snapshots[0].Revision).To(Equal(revs[2]))
		g.Expect(bl.Status.Snapshots[1].Revision).To(Equal(revs[1]))
		list := &snapv1.VolumeSnapshotList{}
		g.Expect(k8s.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		var names []string
		for _, vs := range list.Items {
			names = append(names, vs.Name)
		}
		g.Expect(names).To(ConsistOf(specs.SnapshotName(bl, revs[1]), specs.SnapshotName(bl, revs[2])))
		// A restored volume is the database's size: only the one the workload mounts
		// stays; the previous database stays in its snapshot, for rollback.
		deletedOrDeleting(g, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: specs.ServingClaimName(bl, revs[0])}})
		deletedOrDeleting(g, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: specs.ServingClaimName(bl, revs[1])}})
		// Only the last build's workflow is kept, for its logs.
		g.Expect(liveWorkflowsOf(g, bl)).To(HaveLen(1))
	})
	mounted := &corev1.PersistentVolumeClaim{}
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: specs.ServingClaimName(bl, revs[2])}, mounted)).To(Succeed())
	g.Expect(mounted.DeletionTimestamp).To(BeNil(), "the mounted database stays")

	// Retention settings are not build inputs: changing keep does not rebuild.
	eventually(t, func(g Gomega) {
		bl := getBulkLoad(g, key)
		bl.Spec.Snapshot.Keep = 3
		g.Expect(k8s.Update(ctx, bl)).To(Succeed())
	})
	eventually(t, func(g Gomega) {
		bl = getBulkLoad(g, key)
		g.Expect(bl.Status.ObservedGeneration).To(Equal(bl.Generation))
	})
	g.Expect(bl.Status.SourceRevision).To(BeEmpty())
	g.Expect(bl.Status.Phase).To(Equal(rdfv1.PhaseReady))
}

func TestNewRevisionDuringBuildIsQueued(t *testing.T) {
	startController(t)
	ns := newNamespace(t)
	g := NewWithT(t)
	bl := newBulkLoad(ns, "pubchem")
	bl.Spec.Serving = nil
	g.Expect(k8s.Create(ctx, bl)).To(Succeed())
	key := client.ObjectKeyFromObject(bl)

	bl, wf := waitForWorkflow(t, key)
	first := bl.Status.SourceRevision
	argoControllerStandIn{t: t}.running(client.ObjectKeyFromObject(wf), "load")
	eventually(t, func(g Gomega) {
		bl := getBulkLoad(g, key)
		bl.Spec.Loader.Threads = 12
		g.Expect(k8s.Update(ctx, bl)).To(Succeed())
	})
	eventually(t, func(g Gomega) {
		bl = getBulkLoad(g, key)
		g.Expect(bl.Status.ObservedGeneration).To(Equal(bl.Generation))
		g.Expect(bl.Status.QueuedRevision).NotTo(BeEmpty())
	})
	queued := bl.Status.QueuedRevision
	g.Expect(queued).NotTo(Equal(first))
	g.Expect(bl.Status.SourceRevision).To(Equal(first), "the running build goes on")
	g.Expect(bl.Status.Phase).To(Equal(rdfv1.PhaseLoading))
	g.Expect(workflowsOf(g, bl)).To(HaveLen(1), "no second build in parallel")

	completeBuild(t, key)
	bl, wf2 := waitForWorkflow(t, key)
	g.Expect(bl.Status.SourceRevision).To(Equal(queued))
	g.Expect(bl.Status.QueuedRevision).To(BeEmpty())
	g.Expect(bl.Status.LastBuiltRevision).To(Equal(first))
	g.Expect(wf2.Labels[specs.LabelRevision]).To(Equal(specs.ShortRevision(queued)))
	g.Expect(strings.Join(templateNamed(wf2, "load").Container.Args, " ")).To(ContainSubstring("--threads 12"))
}

func TestDeleteRemovesChildrenAndHonoursRetention(t *testing.T) {
	startController(t)
	for _, policy := range []rdfv1.SnapshotDeletionPolicy{rdfv1.SnapshotRetain, rdfv1.SnapshotDelete} {
		t.Run(string(policy), func(t *testing.T) {
			ns := newNamespace(t)
			g := NewWithT(t)
			bl := newBulkLoad(ns, "to-delete")
			bl.Spec.Serving = nil
			bl.Spec.Snapshot.OnDelete = policy
			g.Expect(k8s.Create(ctx, bl)).To(Succeed())
			key := client.ObjectKeyFromObject(bl)
			bl = completeBuild(t, key)
			snapName := bl.Status.CurrentSnapshot

			// A second build is under way when the BulkLoad is deleted.
			eventually(t, func(g Gomega) {
				bl := getBulkLoad(g, key)
				bl.Spec.Trigger.Rebuild = "again"
				g.Expect(k8s.Update(ctx, bl)).To(Succeed())
			})
			bl, wf := waitForWorkflow(t, key)
			rev := bl.Status.SourceRevision
			g.Expect(k8s.Delete(ctx, bl)).To(Succeed())

			eventually(t, func(g Gomega) {
				err := k8s.Get(ctx, key, &rdfv1.BulkLoad{})
				g.Expect(client.IgnoreNotFound(err)).To(Succeed())
				g.Expect(err).To(HaveOccurred(), "the finalizer is removed once children are cleaned up")
			})
			g.Expect(workflowsOf(g, bl)).To(BeEmpty(), "workflow %s removed", wf.Name)
			deletedOrDeleting(g, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: specs.DataClaimName(bl, rev)}})
			deletedOrDeleting(g, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: specs.ScratchClaimName(bl, rev)}})
			vs := &snapv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: snapName}}
			if policy == rdfv1.SnapshotRetain {
				g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(vs), vs)).To(Succeed())
				g.Expect(vs.DeletionTimestamp).To(BeNil())
			} else {
				deletedOrDeleting(g, vs)
			}
		})
	}
}

func TestDeleteKeepsTheVolumeTheServingWorkloadMounts(t *testing.T) {
	startController(t)
	ns := newNamespace(t)
	g := NewWithT(t)
	g.Expect(k8s.Create(ctx, newServingDeployment(ns))).To(Succeed())
	rolloutControllerStandIn{t: t}.completeEvery(ns)
	bl := newBulkLoad(ns, "served")
	bl.Spec.Snapshot.OnDelete = rdfv1.SnapshotDelete
	g.Expect(k8s.Create(ctx, bl)).To(Succeed())
	key := client.ObjectKeyFromObject(bl)
	bl = completeBuild(t, key)
	eventually(t, func(g Gomega) {
		bl = getBulkLoad(g, key)
		g.Expect(bl.Status.ServingClaim).NotTo(BeEmpty())
	})
	claim, snapName := bl.Status.ServingClaim, bl.Status.CurrentSnapshot
	g.Expect(k8s.Delete(ctx, bl)).To(Succeed())
	eventually(t, func(g Gomega) {
		g.Expect(client.IgnoreNotFound(k8s.Get(ctx, key, &rdfv1.BulkLoad{}))).To(Succeed())
		g.Expect(k8s.Get(ctx, key, &rdfv1.BulkLoad{})).NotTo(Succeed())
	})
	pvc := &corev1.PersistentVolumeClaim{}
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: claim}, pvc)).To(Succeed())
	g.Expect(pvc.DeletionTimestamp).To(BeNil(), "queries go on from the mounted volume")
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: snapName}, &snapv1.VolumeSnapshot{})).To(Succeed())
}

func TestControllerRestartMidBuildKeepsOneWorkflow(t *testing.T) {
	first := startController(t)
	ns := newNamespace(t)
	g := NewWithT(t)
	bl := newBulkLoad(ns, "restart")
	g.Expect(k8s.Create(ctx, bl)).To(Succeed())
	key := client.ObjectKeyFromObject(bl)
	bl, wf := waitForWorkflow(t, key)
	first.stop()

	// As if the status patch after creating the workflow had been lost in the crash.
	patch := client.MergeFrom(bl.DeepCopy())
	bl.Status.Workflow = nil
	g.Expect(k8s.Status().Patch(ctx, bl, patch)).To(Succeed())
	argoControllerStandIn{t: t}.running(client.ObjectKeyFromObject(wf), "load")

	startController(t)
	eventually(t, func(g Gomega) {
		bl = getBulkLoad(g, key)
		g.Expect(bl.Status.Phase).To(Equal(rdfv1.PhaseLoading))
		g.Expect(bl.Status.Workflow).NotTo(BeNil())
	})
	g.Expect(bl.Status.Workflow.Name).To(Equal(wf.Name))
	g.Expect(workflowsOf(g, bl)).To(HaveLen(1))
}

// sourceWatcherStandIn stands in for the S3 source watcher (internal/source),
// which is tested against MinIO on its own: it returns whatever revision the test sets,
// or fails as the test says (until the next revision).
type sourceWatcherStandIn struct {
	revision chan dumpset.Revision
	current  dumpset.Revision
	access   chan dumpset.Access
	failure  chan error
	err      error
}

func (s *sourceWatcherStandIn) Resolve(_ context.Context, _ *rdfv1.BulkLoad, access dumpset.Access, _ dumpset.Settle, _ time.Time) (dumpset.Revision, error) {
	select {
	case r := <-s.revision:
		s.current, s.err = r, nil
	case err := <-s.failure:
		s.err = err
	default:
	}
	select {
	case s.access <- access:
	default:
	}
	if s.err != nil {
		return dumpset.Revision{}, s.err
	}
	return s.current, nil
}

// startWatchedController starts the controller with a source watcher stand-in answering
// current and a fake clock (the source is listed once per trigger.interval), in a new
// namespace holding the dump-credentials Secret the BulkLoads name.
func startWatchedController(t *testing.T, current dumpset.Revision) (*sourceWatcherStandIn, *testingclock.FakePassiveClock, string) {
	t.Helper()
	watcher := &sourceWatcherStandIn{revision: make(chan dumpset.Revision, 1), access: make(chan dumpset.Access, 1), failure: make(chan error, 1), current: current}
	clk := testingclock.NewFakePassiveClock(time.Now())
	startController(t, func(r *BulkLoadReconciler) { r.Resolver = watcher; r.Clock = clk })
	ns := newNamespace(t)
	NewWithT(t).Expect(k8s.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "dump-credentials"},
		StringData: map[string]string{"AWS_ACCESS_KEY_ID": "AKIAEXAMPLE", "AWS_SECRET_ACCESS_KEY": "not-to-be-logged"},
	})).To(Succeed())
	return watcher, clk, ns
}

func TestWatchTriggerBuildsEachCompleteDumpSet(t *testing.T) {
	watcher, clk, ns := startWatchedController(t, dumpset.Revision{Reason: "Incomplete", Message: "waiting for wikidata/2026-11-20/_SUCCESS"})
	g := NewWithT(t)
	bl := newBulkLoad(ns, "watched")
	bl.Spec.Serving = nil
	bl.Spec.Trigger = rdfv1.TriggerSpec{Mode: rdfv1.TriggerWatch, Interval: metav1.Duration{Duration: 60e9}}
	g.Expect(k8s.Create(ctx, bl)).To(Succeed())
	key := client.ObjectKeyFromObject(bl)

	eventually(t, func(g Gomega) {
		bl = getBulkLoad(g, key)
		c := meta.FindStatusCondition(bl.Status.Conditions, rdfv1.ConditionReconciling)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal("WaitingForSource"))
		g.Expect(c.Message).To(ContainSubstring("_SUCCESS"))
	})
	g.Expect(workflowsOf(g, bl)).To(BeEmpty(), "no build from an incomplete dump set")
	access := <-watcher.access
	g.Expect(access.AccessKeyID).To(Equal("AKIAEXAMPLE"))
	g.Expect(access.SecretAccessKey).To(Equal("not-to-be-logged"))

	watcher.revision <- dumpset.Revision{ID: "sha256:0123abcd", Source: true}
	// The source is listed once per trigger.interval.
	clk.SetTime(clk.Now().Add(61 * time.Second))
	poke(t, key)
	bl, wf := waitForWorkflow(t, key)
	g.Expect(bl.Status.SourceRevision).To(Equal("sha256:0123abcd"))
	g.Expect(containsArgs(templateNamed(wf, "fetch").Container.Args, "--expect-revision", "sha256:0123abcd")).To(BeTrue())
	statusJSON, _ := json.Marshal(bl.Status)
	g.Expect(strings.Contains(string(statusJSON), "not-to-be-logged")).To(BeFalse())
}

func TestMissingLoaderImageStalls(t *testing.T) {
	startController(t, func(r *BulkLoadReconciler) { r.DefaultLoaderImage = "" })
	ns := newNamespace(t)
	g := NewWithT(t)
	bl := newBulkLoad(ns, "no-image")
	g.Expect(k8s.Create(ctx, bl)).To(Succeed())
	eventually(t, func(g Gomega) {
		bl = getBulkLoad(g, client.ObjectKeyFromObject(bl))
		c := meta.FindStatusCondition(bl.Status.Conditions, rdfv1.ConditionStalled)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(c.Reason).To(Equal("InvalidSpec"))
		g.Expect(c.Message).To(ContainSubstring("spec.loader.image"))
	})
	g.Expect(workflowsOf(g, bl)).To(BeEmpty())
}

// reconcileCount is controller-runtime's count of finished BulkLoad reconciles.
func reconcileCount(g Gomega) float64 {
	families, err := ctrlmetrics.Registry.Gather()
	g.Expect(err).NotTo(HaveOccurred())
	total := 0.0
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && l.GetValue() == ControllerName {
					total += m.GetCounter().GetValue()
				}
			}
		}
	}
	return total
}

// poke changes an annotation, which wakes the controller like any spec change.
func poke(t *testing.T, key client.ObjectKey) {
	eventually(t, func(g Gomega) {
		bl := getBulkLoad(g, key)
		if bl.Annotations == nil {
			bl.Annotations = map[string]string{}
		}
		bl.Annotations["example.org/poke"] = bl.ResourceVersion
		g.Expect(k8s.Update(ctx, bl)).To(Succeed())
	})
}

func TestHandoffToAStatefulSetThatAppearsLater(t *testing.T) {
	startController(t)
	ns := newNamespace(t)
	g := NewWithT(t)
	bl := newBulkLoad(ns, "late-serving")
	bl.Spec.Serving = &rdfv1.ServingSpec{Kind: rdfv1.WorkloadStatefulSet, Name: "fuseki", VolumeName: "databases"}
	g.Expect(k8s.Create(ctx, bl)).To(Succeed())
	key := client.ObjectKeyFromObject(bl)
	bl, snapKey := buildUntilSnapshot(t, key)
	rev := bl.Status.SourceRevision
	csiSnapshotterStandIn{t: t}.ready(snapKey, "10Gi")

	// The snapshot is ready but there is nothing to hand it to yet: the build waits, not fails.
	eventually(t, func(g Gomega) {
		bl = getBulkLoad(g, key)
		c := meta.FindStatusCondition(bl.Status.Conditions, rdfv1.ConditionReconciling)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal("ServingPending"))
	})
	g.Expect(bl.Status.LastBuiltRevision).To(Equal(rev), "the build is done; its handoff waits")
	g.Expect(bl.Status.Phase).To(Equal(rdfv1.PhaseHandingOff))
	g.Expect(conditionStatus(bl, rdfv1.ConditionStalled)).To(Equal(metav1.ConditionFalse))
	rolloutControllerStandIn{t: t}.completeEvery(ns)

	dep := newServingDeployment(ns)
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "fuseki"},
		Spec:       appsv1.StatefulSetSpec{Selector: dep.Spec.Selector, Template: dep.Spec.Template},
	}
	// The workload is watched: its creation brings the BulkLoad back, no poke needed.
	g.Expect(k8s.Create(ctx, sts)).To(Succeed())
	eventually(t, func(g Gomega) {
		bl = getBulkLoad(g, key)
		g.Expect(bl.Status.Phase).To(Equal(rdfv1.PhaseReady))
	})
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(sts), sts)).To(Succeed())
	g.Expect(sts.Spec.Template.Spec.Volumes[0].PersistentVolumeClaim).NotTo(BeNil(), "volumes %+v\nstatus %+v", sts.Spec.Template.Spec.Volumes, bl.Status)
	g.Expect(sts.Spec.Template.Spec.Volumes[0].PersistentVolumeClaim.ClaimName).To(Equal(specs.ServingClaimName(bl, rev)))
	g.Expect(sts.Spec.Template.Annotations[specs.AnnotationServedRevision]).To(Equal(specs.ShortRevision(rev)))
}
