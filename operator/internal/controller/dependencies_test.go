package controller

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/specs"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/status"
)

// startBareControlPlane starts a second envtest control plane with only the BulkLoad
// CRD: a cluster where Argo Workflows and the snapshot CRDs are not installed yet.
func startBareControlPlane(t *testing.T) (*rest.Config, client.Client) {
	t.Helper()
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		BinaryAssetsDirectory: os.Getenv("KUBEBUILDER_ASSETS"),
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("cannot start a second envtest control plane: %v", err)
	}
	recordControlPlane(os.Getenv("KUBEBUILDER_ASSETS"))
	t.Cleanup(func() { _ = env.Stop() })
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return cfg, c
}

// Without Argo's and the snapshot CRDs the manager starts and stays up (past the
// cache sync timeout that used to end it), and a BulkLoad says what is missing and how
// to install it. Installing the CRDs later lets the same manager build, through the
// Workflow and VolumeSnapshot watches it then starts.
func TestManagerStartsWithoutArgoAndSnapshotCRDs(t *testing.T) {
	cfg, c := startBareControlPlane(t)
	const syncTimeout = 3 * time.Second
	mgr := startControllerWithOptions(t, cfg, func(o *ctrl.Options) { o.Controller.CacheSyncTimeout = syncTimeout },
		func(r *BulkLoadReconciler) { r.DependencyRecheck = 300 * time.Millisecond })
	g := NewWithT(t)
	ns := "without-argo"
	g.Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	bl := newBulkLoad(ns, "early")
	bl.Spec.Serving = nil
	g.Expect(c.Create(ctx, bl)).To(Succeed())
	key := client.ObjectKeyFromObject(bl)
	get := func(g Gomega) *rdfv1.BulkLoad {
		got := &rdfv1.BulkLoad{}
		g.Expect(c.Get(ctx, key, got)).To(Succeed())
		return got
	}

	eventually(t, func(g Gomega) {
		bl = get(g)
		stalled := meta.FindStatusCondition(bl.Status.Conditions, rdfv1.ConditionStalled)
		g.Expect(stalled).NotTo(BeNil())
		g.Expect(stalled.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(stalled.Reason).To(Equal("DependencyMissing"))
		g.Expect(stalled.Message).To(ContainSubstring("Workflow (argoproj.io/v1alpha1)"))
		g.Expect(stalled.Message).To(ContainSubstring("install Argo Workflows"))
		g.Expect(stalled.Message).To(ContainSubstring("VolumeSnapshot (snapshot.storage.k8s.io/v1)"))
		g.Expect(conditionStatus(bl, rdfv1.ConditionReady)).To(Equal(metav1.ConditionFalse))
		g.Expect(bl.Status.Phase).To(Equal(rdfv1.PhasePending))
		g.Expect(bl.Status.SourceRevision).To(BeEmpty(), "no build starts without Argo")
		events := &eventsv1.EventList{}
		g.Expect(c.List(ctx, events, client.InNamespace(ns))).To(Succeed())
		var reasons []string
		for _, e := range events.Items {
			reasons = append(reasons, e.Reason)
		}
		g.Expect(reasons).To(ContainElement("DependencyMissing"))
	})
	time.Sleep(syncTimeout + time.Second)
	select {
	case <-mgr.done:
		t.Fatal("the manager exited without the Argo and snapshot CRDs")
	default:
	}

	// Argo and the snapshot CRDs arrive; the running manager picks them up.
	_, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{Paths: []string{os.Getenv("OPERATOR_TEST_CRDS")}, ErrorIfPathMissing: true})
	g.Expect(err).NotTo(HaveOccurred())
	// With them, the classes of a driver that snapshots (checkSnapshotSupport).
	g.Expect(createStorageFixtures(c)).To(Succeed())
	var wfKey client.ObjectKey
	eventually(t, func(g Gomega) {
		bl = get(g)
		g.Expect(bl.Status.Workflow).NotTo(BeNil())
		g.Expect(conditionStatus(bl, rdfv1.ConditionStalled)).To(Equal(metav1.ConditionFalse))
		g.Expect(conditionStatus(bl, rdfv1.ConditionReconciling)).To(Equal(metav1.ConditionTrue))
		wfKey = client.ObjectKey{Namespace: ns, Name: bl.Status.Workflow.Name}
	})
	// From here on only the new watches wake the controller (nothing is requeued):
	// the workflow's success leads to a snapshot, the snapshot's readiness to Ready.
	argoControllerStandIn{t: t, c: c}.succeed(wfKey, sampleReport)
	snapKey := client.ObjectKey{Namespace: ns, Name: specs.SnapshotName(bl, bl.Status.SourceRevision)}
	eventually(t, func(g Gomega) { g.Expect(c.Get(ctx, snapKey, &snapv1.VolumeSnapshot{})).To(Succeed()) })
	csiSnapshotterStandIn{t: t, c: c}.ready(snapKey, "10Gi")
	eventually(t, func(g Gomega) {
		bl = get(g)
		g.Expect(bl.Status.Phase).To(Equal(rdfv1.PhaseReady))
		g.Expect(bl.Status.CurrentSnapshot).To(Equal(snapKey.Name))
	})
}

// A BulkLoad deleted while Argo is missing loses its finalizer: there can be no
// workflows or snapshots to clean up.
func TestDeleteWithoutArgoAndSnapshotCRDs(t *testing.T) {
	cfg, c := startBareControlPlane(t)
	startControllerWithOptions(t, cfg, nil, func(r *BulkLoadReconciler) { r.DependencyRecheck = 300 * time.Millisecond })
	g := NewWithT(t)
	ns := "delete-without-argo"
	g.Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	bl := newBulkLoad(ns, "gone")
	bl.Spec.Snapshot.OnDelete = rdfv1.SnapshotDelete
	g.Expect(c.Create(ctx, bl)).To(Succeed())
	key := client.ObjectKeyFromObject(bl)
	eventually(t, func(g Gomega) {
		got := &rdfv1.BulkLoad{}
		g.Expect(c.Get(ctx, key, got)).To(Succeed())
		g.Expect(got.Finalizers).To(ContainElement(Finalizer))
	})
	g.Expect(c.Delete(ctx, bl)).To(Succeed())
	eventually(t, func(g Gomega) {
		g.Expect(c.Get(ctx, key, &rdfv1.BulkLoad{})).NotTo(Succeed(), "the finalizer is removed")
	})
}

// An operator upgraded without its CRD (a release with crds.install=false, CRDs from elsewhere) builds
// nothing, rather than have the API server drop what it writes: Stalled, reason CRDOutdated,
// naming the missing fields and the command that upgrades the CRD, an event; it looks again
// and goes on once the CRD has them.
func TestAnOutdatedCRDStopsTheBuildsAndSaysHowToUpgradeIt(t *testing.T) {
	read := readCRD(k8s)
	var upgraded atomic.Bool
	staleCRD := func(ctx context.Context) (*apiextensionsv1.CustomResourceDefinition, error) {
		crd, err := read(ctx)
		if err != nil || upgraded.Load() {
			return crd, err
		}
		st := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"]
		wf := st.Properties["workflow"]
		delete(wf.Properties, "phase")
		st.Properties["workflow"] = wf
		crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"] = st
		return crd, nil
	}
	startController(t, func(r *BulkLoadReconciler) {
		r.crd.read = staleCRD
		r.DependencyRecheck = 300 * time.Millisecond
	})
	ns := newNamespace(t)
	g := NewWithT(t)
	bl := newBulkLoad(ns, "after-an-upgrade")
	bl.Spec.Serving = nil
	g.Expect(k8s.Create(ctx, bl)).To(Succeed())
	key := client.ObjectKeyFromObject(bl)
	eventually(t, func(g Gomega) {
		bl = getBulkLoad(g, key)
		stalled := meta.FindStatusCondition(bl.Status.Conditions, rdfv1.ConditionStalled)
		g.Expect(stalled).NotTo(BeNil())
		g.Expect(stalled.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(stalled.Reason).To(Equal(status.ReasonCRDOutdated))
		g.Expect(stalled.Message).To(ContainSubstring("lacks status.workflow.phase"))
		g.Expect(stalled.Message).To(ContainSubstring("--show-only templates/crds.yaml | kubectl apply --server-side --force-conflicts -f -"))
		g.Expect(eventReasons(g, bl)).To(HaveKeyWithValue(status.ReasonCRDOutdated, HavePrefix("Warning")))
	})
	g.Expect(bl.Status.SourceRevision).To(BeEmpty(), "no build against an outdated CRD")
	g.Expect(workflowsOf(g, bl)).To(BeEmpty())
	claims := &corev1.PersistentVolumeClaimList{}
	g.Expect(k8s.List(ctx, claims, client.InNamespace(ns))).To(Succeed())
	g.Expect(claims.Items).To(BeEmpty())

	upgraded.Store(true)
	waitForWorkflow(t, key)
	g.Expect(conditionStatus(getBulkLoad(g, key), rdfv1.ConditionStalled)).To(Equal(metav1.ConditionFalse))
}
