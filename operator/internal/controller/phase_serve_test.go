package controller

import (
	"testing"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/specs"
)

func readyReason(g Gomega, key client.ObjectKey) (metav1.ConditionStatus, string) {
	bl := getBulkLoad(g, key)
	c := meta.FindStatusCondition(bl.Status.Conditions, rdfv1.ConditionReady)
	g.Expect(c).NotTo(BeNil())
	return c.Status, c.Reason
}

func servedClaim(g Gomega, ns string) string {
	d := &appsv1.Deployment{}
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "fuseki"}, d)).To(Succeed())
	return specs.ServedClaim(&d.Spec.Template, "databases")
}

// handedOff builds a BulkLoad named name that serves the Deployment "fuseki" and waits
// until the operator has pointed the Deployment at the restored claim (no rollout yet).
func handedOff(t *testing.T, name string) (key, depKey client.ObjectKey) {
	t.Helper()
	startController(t)
	ns := newNamespace(t)
	g := NewWithT(t)
	g.Expect(k8s.Create(ctx, newServingDeployment(ns))).To(Succeed())
	bl := newBulkLoad(ns, name)
	g.Expect(k8s.Create(ctx, bl)).To(Succeed())
	key = client.ObjectKeyFromObject(bl)
	bl = completeBuild(t, key)
	claim := specs.ServingClaimName(bl, bl.Status.LastBuiltRevision)
	eventually(t, func(g Gomega) { g.Expect(servedClaim(g, ns)).To(Equal(claim)) })
	return key, client.ObjectKey{Namespace: ns, Name: "fuseki"}
}

func TestHandoffIsReadyOnlyAfterTheRollout(t *testing.T) {
	// Handed off, but the Deployment controller has not rolled it out: not Ready.
	key, depKey := handedOff(t, "rollout")
	g := NewWithT(t)
	// The status is patched just after the Deployment.
	eventually(t, func(g Gomega) {
		_, reason := readyReason(g, key)
		g.Expect(reason).To(Equal("RollingOut"))
	})
	NewWithT(t).Consistently(func(g Gomega) {
		st, reason := readyReason(g, key)
		g.Expect(st).To(Equal(metav1.ConditionFalse))
		g.Expect(reason).To(Equal("RollingOut"))
		g.Expect(getBulkLoad(g, key).Status.Phase).To(Equal(rdfv1.PhaseHandingOff))
	}).WithTimeout(time.Second).WithPolling(pollInterval).Should(Succeed())

	// The operator holds the volume by server-side apply, under its own manager.
	d := &appsv1.Deployment{}
	g.Expect(k8s.Get(ctx, depKey, d)).To(Succeed())
	g.Expect(specs.OwnsHandoff(d.ManagedFields, "databases")).To(BeTrue(), "managed fields: %v", d.ManagedFields)

	rollout := rolloutControllerStandIn{t: t}
	// The new pod runs but is not available yet; the old one is still there.
	rollout.set(depKey, rdfv1.WorkloadDeployment, func(int64, int32) (int32, int32, int32) { return 1, 2, 1 })
	eventually(t, func(g Gomega) {
		st, _ := readyReason(g, key)
		g.Expect(st).To(Equal(metav1.ConditionFalse))
		c := meta.FindStatusCondition(getBulkLoad(g, key).Status.Conditions, rdfv1.ConditionReconciling)
		g.Expect(c.Message).To(ContainSubstring("1 old pods"))
	})
	rollout.set(depKey, rdfv1.WorkloadDeployment, func(int64, int32) (int32, int32, int32) { return 1, 1, 0 })
	NewWithT(t).Consistently(func(g Gomega) {
		st, _ := readyReason(g, key)
		g.Expect(st).To(Equal(metav1.ConditionFalse))
	}).WithTimeout(time.Second).WithPolling(pollInterval).Should(Succeed())

	// Rolled out: Ready, without any other event than the Deployment's status (watched).
	rollout.complete(depKey, rdfv1.WorkloadDeployment)
	eventually(t, func(g Gomega) {
		st, _ := readyReason(g, key)
		g.Expect(st).To(Equal(metav1.ConditionTrue))
		g.Expect(getBulkLoad(g, key).Status.Phase).To(Equal(rdfv1.PhaseReady))
	})
}

// A new serving pod the scheduler cannot place (here: a user's nodeSelector against
// the node a node-local restore lives on) is named in the status with the scheduler's
// reason, not only counted as an old pod still running.
func TestHandoffSaysWhyAServingPodCannotBeScheduled(t *testing.T) {
	key, depKey := handedOff(t, "unschedulable")
	ns := key.Namespace
	g := NewWithT(t)
	rolloutControllerStandIn{t: t}.set(depKey, rdfv1.WorkloadDeployment, func(int64, int32) (int32, int32, int32) { return 1, 2, 1 })

	// What the Deployment controller and the scheduler leave: the old pod runs, the new
	// one mounts the restored claim and cannot be placed.
	d := &appsv1.Deployment{}
	g.Expect(k8s.Get(ctx, depKey, d)).To(Succeed())
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "fuseki-new", Labels: d.Spec.Template.Labels}, Spec: d.Spec.Template.Spec}
	other := pod.DeepCopy()
	other.Name = "fuseki-old"
	other.Spec.Volumes = newServingDeployment(ns).Spec.Template.Spec.Volumes
	g.Expect(k8s.Create(ctx, other)).To(Succeed())
	other.Status = corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
		Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable, Message: "not this pod's volume",
	}}}
	g.Expect(k8s.Status().Update(ctx, other)).To(Succeed())
	g.Expect(k8s.Create(ctx, pod)).To(Succeed())
	eventually(t, func(g Gomega) {
		c := meta.FindStatusCondition(getBulkLoad(g, key).Status.Conditions, rdfv1.ConditionReconciling)
		g.Expect(c.Message).To(ContainSubstring("1 old pods"))
	})
	const why = "0/2 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) had volume node affinity conflict."
	pod.Status = corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
		Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable, Message: why,
	}}}
	g.Expect(k8s.Status().Update(ctx, pod)).To(Succeed())
	// Pods are not watched: the rollout's recheck finds it.
	eventually(t, func(g Gomega) {
		c := meta.FindStatusCondition(getBulkLoad(g, key).Status.Conditions, rdfv1.ConditionReconciling)
		g.Expect(c.Reason).To(Equal("RollingOut"))
		g.Expect(c.Message).To(ContainSubstring("pod fuseki-new cannot be scheduled: " + why))
		g.Expect(c.Message).NotTo(ContainSubstring("fuseki-old"))
	})
}

func TestHandoffDriftIsPutBackWithinOneReconcile(t *testing.T) {
	startController(t)
	ns := newNamespace(t)
	g := NewWithT(t)
	g.Expect(k8s.Create(ctx, newServingDeployment(ns))).To(Succeed())
	bl := newBulkLoad(ns, "drift")
	g.Expect(k8s.Create(ctx, bl)).To(Succeed())
	key := client.ObjectKeyFromObject(bl)
	bl = completeBuild(t, key)
	claim := specs.ServingClaimName(bl, bl.Status.LastBuiltRevision)
	depKey := client.ObjectKey{Namespace: ns, Name: "fuseki"}
	rollout := rolloutControllerStandIn{t: t}
	eventually(t, func(g Gomega) { g.Expect(servedClaim(g, ns)).To(Equal(claim)) })
	rollout.complete(depKey, rdfv1.WorkloadDeployment)
	eventually(t, func(g Gomega) {
		st, _ := readyReason(g, key)
		g.Expect(st).To(Equal(metav1.ConditionTrue))
	})

	for _, revert := range []struct {
		name    string
		manager string
	}{
		// helm upgrade: its three-way merge puts the chart's emptyDir back (a strategic
		// merge patch whose retainKeys drops the claim), as manager "helm".
		{"helm upgrade", "helm"},
		// a GitOps self-heal or kubectl edit replacing the volume list.
		{"self-heal", "argocd-controller"},
	} {
		t.Run(revert.name, func(t *testing.T) {
			g := NewWithT(t)
			d := &appsv1.Deployment{}
			g.Expect(k8s.Get(ctx, depKey, d)).To(Succeed())
			// Read before the revert: the operator may correct it before the next line runs.
			before := testutil.ToFloat64(handoffDriftCorrectionsTotal.WithLabelValues(ns, bl.Name))
			var patch client.Patch
			if revert.manager == "helm" {
				patch = client.RawPatch("application/strategic-merge-patch+json",
					[]byte(`{"spec":{"template":{"spec":{"volumes":[{"$retainKeys":["emptyDir","name"],"name":"databases","emptyDir":{}}]}}}}`))
			} else {
				base := d.DeepCopy()
				d.Spec.Template.Spec.Volumes = newServingDeployment(ns).Spec.Template.Spec.Volumes
				patch = client.MergeFrom(base)
			}
			g.Expect(k8s.Patch(ctx, d, patch, client.FieldOwner(revert.manager))).To(Succeed())
			g.Expect(d.Spec.Template.Spec.Volumes[0].EmptyDir).NotTo(BeNil(), "the revert took effect")
			reverted := d.Generation

			// The workload is watched: the operator puts the claim back at once, and the
			// status is not Ready until the rollout onto it is complete again.
			eventually(t, func(g Gomega) {
				g.Expect(servedClaim(g, ns)).To(Equal(claim))
				st, reason := readyReason(g, key)
				g.Expect(st).To(Equal(metav1.ConditionFalse))
				g.Expect(reason).To(BeElementOf("HandoffDrifted", "RollingOut"))
			})
			g.Expect(k8s.Get(ctx, depKey, d)).To(Succeed())
			g.Expect(d.Generation).To(Equal(reverted+1), "one correction, no flapping")
			g.Expect(d.Spec.Template.Spec.Volumes[0].EmptyDir).To(BeNil())
			g.Expect(specs.OwnsHandoff(d.ManagedFields, "databases")).To(BeTrue())
			eventually(t, func(g Gomega) {
				g.Expect(eventReasons(g, bl)).To(HaveKeyWithValue("HandoffDriftCorrected", ContainSubstring(revert.manager)))
				g.Expect(testutil.ToFloat64(handoffDriftCorrectionsTotal.WithLabelValues(ns, bl.Name))).To(Equal(before + 1))
			})
			rollout.complete(depKey, rdfv1.WorkloadDeployment)
			eventually(t, func(g Gomega) {
				st, _ := readyReason(g, key)
				g.Expect(st).To(Equal(metav1.ConditionTrue))
			})
		})
	}

	// A tool applying server-side (Argo CD with ServerSideApply, Flux) that has not been
	// told to ignore the volume cannot even revert it: the volume would have two sources.
	emptyDir := appsv1ac.Deployment("fuseki", ns).WithSpec(appsv1ac.DeploymentSpec().WithTemplate(corev1ac.PodTemplateSpec().
		WithSpec(corev1ac.PodSpec().WithVolumes(corev1ac.Volume().WithName("databases").WithEmptyDir(corev1ac.EmptyDirVolumeSource())))))
	err := k8s.Apply(ctx, emptyDir, client.FieldOwner("gitops"), client.ForceOwnership)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
	g.Expect(servedClaim(g, ns)).To(Equal(claim))
}

func TestServingWorkloadWithMoreThanOneReplicaIsRefused(t *testing.T) {
	startController(t)
	ns := newNamespace(t)
	g := NewWithT(t)
	dep := newServingDeployment(ns)
	dep.Spec.Replicas = ptr.To(int32(2))
	g.Expect(k8s.Create(ctx, dep)).To(Succeed())
	rolloutControllerStandIn{t: t}.completeEvery(ns)
	bl := newBulkLoad(ns, "replicas")
	g.Expect(k8s.Create(ctx, bl)).To(Succeed())
	key := client.ObjectKeyFromObject(bl)
	completeBuild(t, key)

	eventually(t, func(g Gomega) {
		bl := getBulkLoad(g, key)
		c := meta.FindStatusCondition(bl.Status.Conditions, rdfv1.ConditionStalled)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(c.Reason).To(Equal("ServingReplicasUnsupported"))
		g.Expect(c.Message).To(ContainSubstring("2 replicas"))
	})
	g.Expect(servedClaim(g, ns)).To(BeEmpty(), "two processes must not open one TDB2 database: nothing is handed off")

	// Scaled to one (the workload is watched): handed off and Ready.
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dep), dep)).To(Succeed())
	dep.Spec.Replicas = ptr.To(int32(1))
	g.Expect(k8s.Update(ctx, dep)).To(Succeed())
	eventually(t, func(g Gomega) {
		g.Expect(servedClaim(g, ns)).NotTo(BeEmpty())
		g.Expect(getBulkLoad(g, key).Status.Phase).To(Equal(rdfv1.PhaseReady))
	})
}

func TestRestoredVolumeIsCreatedOnTheSnapshotsNode(t *testing.T) {
	startController(t)
	ns := newNamespace(t)
	g := NewWithT(t)
	g.Expect(k8s.Create(ctx, newServingDeployment(ns))).To(Succeed())
	rolloutControllerStandIn{t: t}.completeEvery(ns)
	bl := newBulkLoad(ns, "topology")
	g.Expect(k8s.Create(ctx, bl)).To(Succeed())
	key := client.ObjectKeyFromObject(bl)
	bl, _ = waitForWorkflow(t, key)
	rev := bl.Status.SourceRevision

	// What the scheduler and a node-local CSI driver (here shaped like TopoLVM) leave
	// on the database volume: the selected node, and a PV bound to that node.
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv-" + ns},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: bl.Spec.Database.Size},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
			StorageClassName:              "local-nvme",
			PersistentVolumeSource:        corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "topolvm.io", VolumeHandle: "vh-" + ns}},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "topology.topolvm.io/node", Operator: corev1.NodeSelectorOpIn, Values: []string{"nvme-node-7"}}},
			}}}},
		},
	}
	g.Expect(k8s.Create(ctx, pv)).To(Succeed())
	setNode(t, "nvme-node-7", corev1.ConditionTrue, time.Now()) // a Ready node: not lost
	data := &corev1.PersistentVolumeClaim{}
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: specs.DataClaimName(bl, rev)}, data)).To(Succeed())
	data.Annotations[specs.AnnotationSelectedNode] = "nvme-node-7"
	data.Spec.VolumeName = pv.Name
	g.Expect(k8s.Update(ctx, data)).To(Succeed())

	bl = completeBuild(t, key)
	vs := &snapv1.VolumeSnapshot{}
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: bl.Status.CurrentSnapshot}, vs)).To(Succeed())
	g.Expect(vs.Annotations).To(HaveKeyWithValue(specs.AnnotationSourceNode, "nvme-node-7"))
	restoredKey := client.ObjectKey{Namespace: ns, Name: specs.ServingClaimName(bl, rev)}
	eventually(t, func(g Gomega) {
		restored := &corev1.PersistentVolumeClaim{}
		g.Expect(k8s.Get(ctx, restoredKey, restored)).To(Succeed())
		// The external-provisioner creates it there at once; the scheduler then places
		// the serving pod with its volume.
		g.Expect(restored.Annotations).To(HaveKeyWithValue(specs.AnnotationSelectedNode, "nvme-node-7"))
	})
	expectHandoffWaitsForBinding(t, key, restoredKey, "nvme-node-7")
}

// expectHandoffWaitsForBinding: the serving workload keeps what it mounts while the
// restored claim is unbound, and the BulkLoad says why; once bound (as the
// external-provisioner and the PV controller leave it), the claim is handed off.
func expectHandoffWaitsForBinding(t *testing.T, key, restoredKey client.ObjectKey, why string) {
	t.Helper()
	eventually(t, func(g Gomega) {
		c := meta.FindStatusCondition(getBulkLoad(g, key).Status.Conditions, rdfv1.ConditionReconciling)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal("ServingPending"))
		g.Expect(c.Message).To(ContainSubstring("waiting for the volume " + restoredKey.Name))
		g.Expect(c.Message).To(ContainSubstring("to be bound"))
		g.Expect(c.Message).To(ContainSubstring(why))
	})
	NewWithT(t).Consistently(func(g Gomega) {
		g.Expect(servedClaim(g, key.Namespace)).To(BeEmpty(), "the workload is not pointed at an unbound restored volume")
	}).WithTimeout(time.Second).WithPolling(pollInterval).Should(Succeed())

	restored := &corev1.PersistentVolumeClaim{}
	NewWithT(t).Expect(k8s.Get(ctx, restoredKey, restored)).To(Succeed())
	restored.Status.Phase = corev1.ClaimBound
	NewWithT(t).Expect(k8s.Status().Update(ctx, restored)).To(Succeed())
	eventually(t, func(g Gomega) {
		g.Expect(servedClaim(g, key.Namespace)).To(Equal(restoredKey.Name))
		g.Expect(getBulkLoad(g, key).Status.Phase).To(Equal(rdfv1.PhaseReady))
	})
}

// A class that binds at once (Immediate; a network volume restorable on any node) is
// provisioned without a consumer: the workload is pointed at the restored claim only
// once it is bound, not while it may still fail to provision.
func TestRestoredVolumeOfAnImmediateClassIsHandedOffOnceBound(t *testing.T) {
	startController(t)
	ns := newNamespace(t)
	g := NewWithT(t)
	id := shortID(ns)
	className, driver := id+"-network", id+".network.test"
	createClusterScoped(t,
		storageClass(className, driver, storagev1.VolumeBindingImmediate),
		&storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: driver}},
		snapshotClass(id+"-snaps", driver, true),
	)
	g.Expect(k8s.Create(ctx, newServingDeployment(ns))).To(Succeed())
	rolloutControllerStandIn{t: t}.completeEvery(ns)
	bl := newBulkLoad(ns, "immediate")
	bl.Spec.Database.StorageClassName = className
	bl.Spec.Snapshot.VolumeSnapshotClassName = ""
	g.Expect(k8s.Create(ctx, bl)).To(Succeed())
	key := client.ObjectKeyFromObject(bl)
	bl = completeBuild(t, key)
	restoredKey := client.ObjectKey{Namespace: ns, Name: specs.ServingClaimName(bl, bl.Status.LastBuiltRevision)}
	expectHandoffWaitsForBinding(t, key, restoredKey, "volumeBindingMode Immediate")
}

func TestRollbackPinsAKeptSnapshot(t *testing.T) {
	startController(t)
	ns := newNamespace(t)
	g := NewWithT(t)
	g.Expect(k8s.Create(ctx, newServingDeployment(ns))).To(Succeed())
	rolloutControllerStandIn{t: t}.completeEvery(ns)
	bl := newBulkLoad(ns, "rollback")
	g.Expect(k8s.Create(ctx, bl)).To(Succeed())
	key := client.ObjectKeyFromObject(bl)
	setSpec := func(f func(bl *rdfv1.BulkLoad)) {
		eventually(t, func(g Gomega) {
			bl := getBulkLoad(g, key)
			f(bl)
			g.Expect(k8s.Update(ctx, bl)).To(Succeed())
		})
	}
	waitReadyServing := func(claim string) *rdfv1.BulkLoad {
		var bl *rdfv1.BulkLoad
		eventually(t, func(g Gomega) {
			releaseDeletedClaims(t, ns)
			bl = getBulkLoad(g, key)
			g.Expect(bl.Status.Phase).To(Equal(rdfv1.PhaseReady))
			g.Expect(bl.Status.ServingClaim).To(Equal(claim))
			g.Expect(servedClaim(g, ns)).To(Equal(claim))
		})
		return bl
	}

	first := completeBuild(t, key).Status.LastBuiltRevision
	waitReadyServing(specs.ServingClaimName(bl, first))
	setSpec(func(bl *rdfv1.BulkLoad) { bl.Spec.Loader.Threads = 8 })
	second := completeBuild(t, key).Status.LastBuiltRevision
	bl = waitReadyServing(specs.ServingClaimName(bl, second))
	// The first restored volume is gone; its snapshot is kept.
	eventually(t, func(g Gomega) {
		deletedOrDeleting(g, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: specs.ServingClaimName(bl, first)}})
	})
	g.Expect(bl.Status.Snapshots).To(HaveLen(2))
	previous := bl.Status.Snapshots[1].Name
	g.Expect(previous).To(Equal(specs.SnapshotName(bl, first)))

	// Rollback as the README says: pin the previous snapshot.
	setSpec(func(bl *rdfv1.BulkLoad) { bl.Spec.Serving.SnapshotName = previous })
	bl = waitReadyServing(specs.ServingClaimName(bl, first))
	g.Expect(bl.Status.ServedSnapshot).To(Equal(previous))
	g.Expect(meta.FindStatusCondition(bl.Status.Conditions, rdfv1.ConditionReady).Message).To(ContainSubstring("pinned"))
	restored := &corev1.PersistentVolumeClaim{}
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: specs.ServingClaimName(bl, first)}, restored)).To(Succeed())
	g.Expect(restored.Spec.DataSource.Name).To(Equal(previous), "restored again from the kept snapshot")

	// A new build while pinned is recorded but not served; the pinned snapshot
	// outlives snapshot.keep.
	setSpec(func(bl *rdfv1.BulkLoad) { bl.Spec.Loader.Threads = 16 })
	third := completeBuild(t, key).Status.LastBuiltRevision
	eventually(t, func(g Gomega) {
		bl = getBulkLoad(g, key)
		g.Expect(bl.Status.CurrentSnapshot).To(Equal(specs.SnapshotName(bl, third)))
		g.Expect(bl.Status.Phase).To(Equal(rdfv1.PhaseReady))
		var names []string
		for _, rec := range bl.Status.Snapshots {
			names = append(names, rec.Name)
		}
		g.Expect(names).To(ConsistOf(specs.SnapshotName(bl, third), specs.SnapshotName(bl, second), previous))
		deletedOrDeleting(g, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: specs.ServingClaimName(bl, third)}})
	})
	g.Expect(servedClaim(g, ns)).To(Equal(specs.ServingClaimName(bl, first)))
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: previous}, &snapv1.VolumeSnapshot{})).To(Succeed())

	// Unpinned: back to the newest; the no longer pinned, oldest snapshot is pruned.
	setSpec(func(bl *rdfv1.BulkLoad) { bl.Spec.Serving.SnapshotName = "" })
	waitReadyServing(specs.ServingClaimName(bl, third))
	eventually(t, func(g Gomega) {
		deletedOrDeleting(g, &snapv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: previous}})
	})

	// A name that is not a snapshot of this BulkLoad stalls, naming the kept ones.
	setSpec(func(bl *rdfv1.BulkLoad) { bl.Spec.Serving.SnapshotName = "no-such-snapshot" })
	eventually(t, func(g Gomega) {
		c := meta.FindStatusCondition(getBulkLoad(g, key).Status.Conditions, rdfv1.ConditionStalled)
		g.Expect(c.Reason).To(Equal("ServingSnapshotNotFound"))
		g.Expect(c.Message).To(ContainSubstring(specs.SnapshotName(bl, third)))
	})
	g.Expect(servedClaim(g, ns)).To(Equal(specs.ServingClaimName(bl, third)), "the workload keeps serving")
}
