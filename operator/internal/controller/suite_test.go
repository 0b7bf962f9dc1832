package controller

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"

	wfv1 "github.com/argoproj/argo-workflows/v4/pkg/apis/workflow/v1alpha1"
	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
)

// One envtest control plane (real kube-apiserver + etcd) for the whole package;
// each test gets its own namespace and its own controller.
var (
	testEnv    *envtest.Environment
	restConfig *rest.Config
	k8s        client.Client
	scheme     = runtime.NewScheme()
)

const (
	testFetchImage  = "registry.example/rdf-bulkload-operator:test"
	testLoaderImage = "registry.example/rdf-bulkload-loader:test"
)

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(rdfv1.AddToScheme(scheme))
	utilruntime.Must(wfv1.AddToScheme(scheme))
	utilruntime.Must(snapv1.AddToScheme(scheme))
}

func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	// Every line also goes to capturedLogs (logging_test.go), whatever zap prints.
	ctrl.SetLogger(logr.New(&captureSink{next: zap.New(zap.WriteTo(os.Stderr), zap.Level(zapLevel())).GetSink(), into: capturedLogs}))
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	crds := os.Getenv("OPERATOR_TEST_CRDS")
	if assets == "" || crds == "" {
		fmt.Fprintln(os.Stderr, "KUBEBUILDER_ASSETS and OPERATOR_TEST_CRDS must be set; run `make test-operator` (it installs both)")
		return 1
	}
	killStaleControlPlane(assets)

	testEnv = &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "..", "config", "crd", "bases"), crds},
		ErrorIfCRDPathMissing: true,
		BinaryAssetsDirectory: assets,
	}
	// Stop the control plane on Ctrl-C too, so no apiserver/etcd outlives the test.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	var stopOnce sync.Once
	stop := func() { stopOnce.Do(func() { _ = testEnv.Stop() }) }
	go func() { <-sigs; stop(); os.Exit(130) }()
	defer stop()

	var err error
	restConfig, err = testEnv.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "cannot start envtest:", err)
		return 1
	}
	recordControlPlane(assets)
	k8s, err = client.New(restConfig, client.Options{Scheme: scheme})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := createStorageFixtures(k8s); err != nil {
		fmt.Fprintln(os.Stderr, "cannot create the storage fixtures:", err)
		return 1
	}
	return m.Run()
}

// The storage newBulkLoad builds on, shaped like TopoLVM: a node-local CSI driver whose
// class binds for the first consumer, and its snapshot class. No CSI driver runs in
// envtest; the preflight (checkSnapshotSupport) reads only these objects.
const (
	testStorageClass  = "local-nvme"
	testCSIDriver     = "topolvm.io"
	testSnapshotClass = "nvme-snapshots"
)

// createStorageFixtures creates the StorageClass, CSIDriver and VolumeSnapshotClass of
// newBulkLoad's spec, as a cluster with a snapshot-capable CSI driver has them.
func createStorageFixtures(c client.Client) error {
	for _, obj := range []client.Object{
		storageClass(testStorageClass, testCSIDriver, storagev1.VolumeBindingWaitForFirstConsumer),
		&storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: testCSIDriver}},
		snapshotClass(testSnapshotClass, testCSIDriver, false),
	} {
		if err := c.Create(context.Background(), obj); err != nil {
			return err
		}
	}
	return nil
}

func storageClass(name, provisioner string, mode storagev1.VolumeBindingMode) *storagev1.StorageClass {
	return &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: provisioner, VolumeBindingMode: &mode}
}

func snapshotClass(name, driver string, isDefault bool) *snapv1.VolumeSnapshotClass {
	vsc := &snapv1.VolumeSnapshotClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Driver: driver, DeletionPolicy: snapv1.VolumeSnapshotContentDelete}
	if isDefault {
		vsc.Annotations = map[string]string{annotationDefaultSnapshotClass: "true"}
	}
	return vsc
}

func zapLevel() zapcore.Level {
	if os.Getenv("TEST_VERBOSE_CONTROLLER") != "" {
		return zapcore.DebugLevel
	}
	return zapcore.ErrorLevel // keeps test output readable
}

// pidFile lists the control-plane processes this suite started, so a run after a
// killed one can stop them.
func pidFile() string {
	dir := os.Getenv("RDF_BULKLOAD_CACHE")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".cache", "rdf-bulkload")
	}
	_ = os.MkdirAll(filepath.Join(dir, "run"), 0o755)
	return filepath.Join(dir, "run", "operator-envtest.pids")
}

// recordControlPlane stores the PIDs of our children that run the asset binaries.
func recordControlPlane(assets string) {
	var pids []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		if parentPID(stat) != os.Getpid() {
			continue
		}
		if exe, err := os.Readlink("/proc/" + e.Name() + "/exe"); err == nil && strings.HasPrefix(exe, assets) {
			pids = append(pids, strconv.Itoa(pid)+" "+startTime(stat))
		}
	}
	_ = os.WriteFile(pidFile(), []byte(strings.Join(pids, "\n")), 0o644)
}

// startTime is field 22 of /proc/PID/stat, the process's start in clock ticks since boot:
// with the PID it names one process, where a PID alone may since have been reused (e.g. by
// the local test cluster's kube-apiserver, which runs the same binary as an orphan).
func startTime(stat []byte) string {
	fields := statFields(stat)
	if len(fields) < 20 {
		return ""
	}
	return fields[19]
}

// statFields are the fields of /proc/PID/stat after the parenthesised command (which may hold
// spaces): field 3 onwards.
func statFields(stat []byte) []string {
	return strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
}

// parentPID is field 4 of /proc/PID/stat (after the parenthesised command); 0 if unreadable.
func parentPID(stat []byte) int {
	fields := statFields(stat)
	if len(fields) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(fields[1])
	return ppid
}

// killStaleControlPlane stops processes a previous, killed run of this suite left.
func killStaleControlPlane(assets string) {
	data, err := os.ReadFile(pidFile())
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(data), "\n") {
		var pid int
		var started string
		if _, err := fmt.Sscan(line, &pid, &started); err != nil {
			continue
		}
		// Only the very process recorded (PID and start time), an orphan still running an
		// asset binary, is a killed run's: the PID may have been reused, and a suite running
		// at the same time (another checkout) owns its own.
		stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err == nil && strings.HasPrefix(exe, assets) &&
			parentPID(stat) == 1 && startTime(stat) == started {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	_ = os.Remove(pidFile())
}

// controllerUnderTest is a running manager with the BulkLoad controller.
type controllerUnderTest struct {
	reconciler *BulkLoadReconciler
	cancel     context.CancelFunc
	done       chan struct{}
}

func (c *controllerUnderTest) stop() {
	c.cancel()
	<-c.done
}

// startController starts a manager with the BulkLoad controller, as cmd/manager
// does, and stops it when the test ends.
func startController(t *testing.T, configure ...func(*BulkLoadReconciler)) *controllerUnderTest {
	t.Helper()
	return startControllerWithConfig(t, restConfig, configure...)
}

// startControllerWithConfig starts the controller with the given identity.
func startControllerWithConfig(t *testing.T, cfg *rest.Config, configure ...func(*BulkLoadReconciler)) *controllerUnderTest {
	t.Helper()
	return startControllerWithOptions(t, cfg, nil, configure...)
}

// startControllerWithOptions starts the controller with manager options as
// cmd/manager sets them (the restricted cache among them), changed by mgrOpts.
func startControllerWithOptions(t *testing.T, cfg *rest.Config, mgrOpts func(*ctrl.Options), configure ...func(*BulkLoadReconciler)) *controllerUnderTest {
	t.Helper()
	opts := ctrl.Options{
		Scheme:     scheme,
		Cache:      CacheOptions(),
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	}
	if mgrOpts != nil {
		mgrOpts(&opts)
	}
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	r := &BulkLoadReconciler{
		Client:             mgr.GetClient(),
		APIReader:          mgr.GetAPIReader(),
		Recorder:           mgr.GetEventRecorder("rdf-bulkload-operator"),
		DefaultFetchImage:  testFetchImage,
		DefaultLoaderImage: testLoaderImage,
	}
	for _, f := range configure {
		f(r)
	}
	if err := r.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &controllerUnderTest{reconciler: r, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("manager: %v", err)
		}
	}()
	t.Cleanup(func() {
		select {
		case <-c.done:
		default:
			c.stop()
		}
	})
	return c
}

var nsCounter int

// newNamespace creates a namespace for one test (envtest runs no namespace
// controller, so they are left behind; the control plane is thrown away anyway).
func newNamespace(t *testing.T) string {
	t.Helper()
	nsCounter++
	name := fmt.Sprintf("t%d-%s", nsCounter, strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name())))
	if len(name) > 60 {
		name = name[:60]
	}
	name = strings.TrimRight(name, "-")
	if err := k8s.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	return name
}

const (
	eventuallyTimeout = 30 * time.Second
	pollInterval      = 100 * time.Millisecond
)
