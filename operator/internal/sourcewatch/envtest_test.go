package sourcewatch_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v4/pkg/apis/workflow/v1alpha1"
	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
)

// A real kube-apiserver + etcd (envtest) for the package, with the BulkLoad, Argo Workflow
// and VolumeSnapshot CRDs; the assets come from hack/install-kube.sh and
// hack/fetch-test-crds.sh (make test-source installs both).
var (
	restConfig *rest.Config
	k8s        client.Client
	scheme     = runtime.NewScheme()
	envReady   bool
	envProblem string
)

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(rdfv1.AddToScheme(scheme))
	utilruntime.Must(wfv1.AddToScheme(scheme))
	utilruntime.Must(snapv1.AddToScheme(scheme))
}

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	assets, crds := os.Getenv("KUBEBUILDER_ASSETS"), os.Getenv("OPERATOR_TEST_CRDS")
	if assets == "" || crds == "" {
		envProblem = "KUBEBUILDER_ASSETS and OPERATOR_TEST_CRDS are not set: run `make test-source` (it installs both)"
		return m.Run() // tests needing the control plane skip (or fail under CI=true)
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "..", "config", "crd", "bases"), crds},
		ErrorIfCRDPathMissing: true,
		BinaryAssetsDirectory: assets,
	}
	defer func() { _ = env.Stop() }() // also when Start failed half-way
	var err error
	if restConfig, err = env.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "cannot start envtest:", err)
		return 1
	}
	if k8s, err = client.New(restConfig, client.Options{Scheme: scheme}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// The classes watchedBulkLoad names, of a CSI driver that snapshots: the controller's
	// preflight (checkSnapshotSupport) refuses to build on anything else.
	wffc := storagev1.VolumeBindingWaitForFirstConsumer
	for _, obj := range []client.Object{
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "local-nvme"}, Provisioner: "topolvm.io", VolumeBindingMode: &wffc},
		&storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: "topolvm.io"}},
		&snapv1.VolumeSnapshotClass{ObjectMeta: metav1.ObjectMeta{Name: "nvme-snapshots"}, Driver: "topolvm.io", DeletionPolicy: snapv1.VolumeSnapshotContentDelete},
	} {
		if err := k8s.Create(context.Background(), obj); err != nil {
			fmt.Fprintln(os.Stderr, "cannot create the storage fixtures:", err)
			return 1
		}
	}
	envReady = true
	return m.Run()
}

func needControlPlane(t *testing.T) {
	t.Helper()
	if envReady {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal(envProblem)
	}
	t.Skip(envProblem)
}

var _ = context.Background
