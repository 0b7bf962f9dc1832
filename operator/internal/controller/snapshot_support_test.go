package controller

import (
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v4/pkg/apis/workflow/v1alpha1"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/status"
)

// createClusterScoped creates cluster-wide storage objects for one test and deletes
// them when it ends (they would outlive its namespace).
func createClusterScoped(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, obj := range objs {
		if err := k8s.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = k8s.Delete(ctx, obj) })
	}
}

// shortID is the namespace's "tN" prefix: unique per test, short enough for a CSI driver name.
func shortID(ns string) string { return strings.SplitN(ns, "-", 2)[0] }

// nothingCreated: no volume, no workflow, no build started.
func nothingCreated(g Gomega, bl *rdfv1.BulkLoad) {
	pvcs := &corev1.PersistentVolumeClaimList{}
	g.Expect(k8s.List(ctx, pvcs, client.InNamespace(bl.Namespace))).To(Succeed())
	g.Expect(pvcs.Items).To(BeEmpty(), "no volume is created for a build that cannot be snapshotted")
	wfs := &wfv1.WorkflowList{}
	g.Expect(k8s.List(ctx, wfs, client.InNamespace(bl.Namespace))).To(Succeed())
	g.Expect(wfs.Items).To(BeEmpty(), "no workflow is started for a build that cannot be snapshotted")
	g.Expect(bl.Status.SourceRevision).To(BeEmpty())
}

func expectSnapshotUnsupported(g Gomega, key client.ObjectKey, parts ...string) *rdfv1.BulkLoad {
	bl := getBulkLoad(g, key)
	stalled := meta.FindStatusCondition(bl.Status.Conditions, rdfv1.ConditionStalled)
	g.Expect(stalled).NotTo(BeNil())
	g.Expect(stalled.Status).To(Equal(metav1.ConditionTrue))
	g.Expect(stalled.Reason).To(Equal(status.ReasonSnapshotUnsupported))
	for _, p := range parts {
		g.Expect(stalled.Message).To(ContainSubstring(p))
	}
	nothingCreated(g, bl)
	return bl
}

// A StorageClass whose provisioner is no CSI driver (local-path, the default of k3s
// and kind) cannot be snapshotted: the BulkLoad says so before anything is created,
// instead of failing after the whole build when the snapshot never becomes ready.
// Once the cluster can snapshot (the driver and its class installed), it builds.
func TestClassWithoutSnapshotsStallsBeforeAnythingIsCreated(t *testing.T) {
	startController(t, func(r *BulkLoadReconciler) { r.DependencyRecheck = 300 * time.Millisecond })
	ns := newNamespace(t)
	g := NewWithT(t)
	id := shortID(ns)
	className, driver := id+"-local-path", id+".local-path.test"
	createClusterScoped(t, storageClass(className, driver, storagev1.VolumeBindingWaitForFirstConsumer))
	bl := newBulkLoad(ns, "no-snapshots")
	bl.Spec.Database.StorageClassName = className
	bl.Spec.Snapshot.VolumeSnapshotClassName = ""
	g.Expect(k8s.Create(ctx, bl)).To(Succeed())
	key := client.ObjectKeyFromObject(bl)

	eventually(t, func(g Gomega) {
		bl = expectSnapshotUnsupported(g, key, "StorageClass "+className, driver, "not a CSI driver", "spec.database.storageClassName")
		g.Expect(bl.Status.Phase).To(Equal(rdfv1.PhaseFailed))
		g.Expect(eventReasons(g, bl)).To(HaveKey(status.ReasonSnapshotUnsupported))
	})
	// It stays so: rechecks do not start a build.
	NewWithT(t).Consistently(func(g Gomega) { expectSnapshotUnsupported(g, key) }).WithTimeout(time.Second).WithPolling(pollInterval).Should(Succeed())

	// A CSIDriver of that name, but no snapshot class for it yet.
	createClusterScoped(t, &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: driver}})
	eventually(t, func(g Gomega) {
		expectSnapshotUnsupported(g, key, "no VolumeSnapshotClass of driver "+driver, "csi-snapshotter", annotationDefaultSnapshotClass)
	})
	// The driver's default snapshot class: the build starts, without a spec change.
	createClusterScoped(t, snapshotClass(id+"-snaps", driver, true))
	_, wf := waitForWorkflow(t, key)
	g.Expect(wf.Name).NotTo(BeEmpty())
	eventually(t, func(g Gomega) {
		g.Expect(conditionStatus(getBulkLoad(g, key), rdfv1.ConditionStalled)).To(Equal(metav1.ConditionFalse))
	})
}

// Each way a snapshot class can be missing or wrong is named, with how to fix it.
func TestSnapshotSupportProblemsAreNamed(t *testing.T) {
	startController(t, func(r *BulkLoadReconciler) { r.DependencyRecheck = 300 * time.Millisecond })
	ns := newNamespace(t)
	id := shortID(ns)
	driver, other := id+".csi.test", id+".other.test"
	className := id + "-block"
	createClusterScoped(t,
		storageClass(className, driver, storagev1.VolumeBindingImmediate),
		storageClass(id+"-other", other, storagev1.VolumeBindingImmediate),
		&storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: driver}},
		&storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: other}},
		snapshotClass(id+"-plain", driver, false),
		snapshotClass(id+"-of-other", other, true),
		snapshotClass(id+"-twin-a", other, true),
	)
	cases := []struct {
		name  string
		set   func(bl *rdfv1.BulkLoad)
		parts []string
	}{
		{"class-missing", func(bl *rdfv1.BulkLoad) { bl.Spec.Database.StorageClassName = id + "-absent" },
			[]string{"StorageClass " + id + "-absent (spec.database.storageClassName) does not exist"}},
		{"snapclass-missing", func(bl *rdfv1.BulkLoad) { bl.Spec.Snapshot.VolumeSnapshotClassName = id + "-nosuch" },
			[]string{"VolumeSnapshotClass " + id + "-nosuch (spec.snapshot.volumeSnapshotClassName) does not exist", "driver: " + driver}},
		{"snapclass-other-driver", func(bl *rdfv1.BulkLoad) { bl.Spec.Snapshot.VolumeSnapshotClassName = id + "-of-other" },
			[]string{"VolumeSnapshotClass " + id + "-of-other", "is of driver " + other, "provisions with " + driver}},
		{"no-default", func(bl *rdfv1.BulkLoad) { bl.Spec.Snapshot.VolumeSnapshotClassName = "" },
			[]string{"no VolumeSnapshotClass of driver " + driver + " (the provisioner of StorageClass " + className + ") is marked default", id + "-plain"}},
		{"two-defaults", func(bl *rdfv1.BulkLoad) {
			bl.Spec.Database.StorageClassName = id + "-other"
			bl.Spec.Snapshot.VolumeSnapshotClassName = ""
		}, []string{id + "-of-other, " + id + "-twin-a are all marked default for driver " + other}},
		{"serving-other-driver", func(bl *rdfv1.BulkLoad) { bl.Spec.Serving.StorageClassName = id + "-other" },
			[]string{"StorageClass " + id + "-other (spec.serving.storageClassName) provisions with " + other, "driver " + driver}},
	}
	for _, tc := range cases {
		bl := newBulkLoad(ns, tc.name)
		bl.Spec.Database.StorageClassName = className
		bl.Spec.Snapshot.VolumeSnapshotClassName = id + "-plain"
		tc.set(bl)
		NewWithT(t).Expect(k8s.Create(ctx, bl)).To(Succeed())
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			eventually(t, func(g Gomega) {
				expectSnapshotUnsupported(g, client.ObjectKey{Namespace: ns, Name: tc.name}, tc.parts...)
			})
		})
	}
}

// Without spec.database.storageClassName the build volumes get the cluster's default
// class, and the preflight follows that one; with no default class, it says so.
func TestPreflightFollowsTheDefaultStorageClass(t *testing.T) {
	startController(t, func(r *BulkLoadReconciler) { r.DependencyRecheck = 300 * time.Millisecond })
	ns := newNamespace(t)
	g := NewWithT(t)
	bl := newBulkLoad(ns, "default-class")
	bl.Spec.Database.StorageClassName = ""
	bl.Spec.Snapshot.VolumeSnapshotClassName = ""
	g.Expect(k8s.Create(ctx, bl)).To(Succeed())
	key := client.ObjectKeyFromObject(bl)
	eventually(t, func(g Gomega) {
		expectSnapshotUnsupported(g, key, "no default StorageClass")
	})

	id := shortID(ns)
	driver := id + ".csi.test"
	def := storageClass(id+"-default", driver, storagev1.VolumeBindingWaitForFirstConsumer)
	def.Annotations = map[string]string{annotationDefaultStorageClass: "true"}
	createClusterScoped(t, def, &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: driver}})
	eventually(t, func(g Gomega) {
		expectSnapshotUnsupported(g, key, "there is no VolumeSnapshotClass of driver "+driver, "StorageClass "+id+"-default")
	})
	createClusterScoped(t, snapshotClass(id+"-snaps", driver, true))
	waitForWorkflow(t, key)
}
