package sourcewatch_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v4/pkg/apis/workflow/v1alpha1"
	"github.com/minio/minio-go/v7"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/controller"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/dumpset"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/miniotest"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/source"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/sourcewatch"
)

// fakeClock stands in for the wall clock of the watcher, so the settle period passes
// without waiting.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time                  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// countingResolver counts the listings, so the test knows a re-list happened.
type countingResolver struct {
	inner dumpset.Resolver
	calls atomic.Int64
	// clock is the controller's (the settle clock runs on it).
	clock *fakeClock
}

func newClock() *fakeClock { return &fakeClock{t: time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC)} }

func (c *countingResolver) Resolve(ctx context.Context, bl *rdfv1.BulkLoad, a dumpset.Access, prev dumpset.Settle, now time.Time) (dumpset.Revision, error) {
	defer c.calls.Add(1)
	return c.inner.Resolve(ctx, bl, a, prev, now)
}

// startController runs the controller until the test ends or stop is called. It sees only
// the test's namespace: the resolver counts this test's listings, not those of BulkLoads
// an earlier test left behind.
func startController(t *testing.T, resolver *countingResolver, ns string) (stop func()) {
	t.Helper()
	mgr, err := ctrl.NewManager(restConfig, ctrl.Options{
		Scheme:     scheme,
		Cache:      cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := &controller.BulkLoadReconciler{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("rdf-bulkload-operator"),
		DefaultFetchImage: "registry.example/fetch:test", DefaultLoaderImage: "registry.example/loader:test",
		Resolver: resolver, Clock: resolver.clock,
	}
	if err := r.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("manager: %v", err)
		}
	}()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}

var nsCount atomic.Int64

func newNamespace(t *testing.T) string {
	t.Helper()
	ns := fmt.Sprintf("watch-%d", nsCount.Add(1))
	if err := k8s.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	return ns
}

// eventually polls check until it returns nil (a wait for the controller, not a timing test).
func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var err error
	for time.Now().Before(deadline) {
		if err = check(); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s: %v", what, err)
}

// The watched BulkLoads' trigger: relist advances the clock by one interval, so a settle
// period spans several listings.
const (
	watchInterval = time.Minute
	watchSettle   = 10 * time.Minute
)

func watchedBulkLoad(ns, name string, srv *miniotest.Server) *rdfv1.BulkLoad {
	return &rdfv1.BulkLoad{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: rdfv1.BulkLoadSpec{
			Source: rdfv1.SourceSpec{
				Endpoint: srv.Endpoint(), Bucket: "dumps",
				// Dated directories: the newest one with its _SUCCESS marker is the dump set.
				Prefix: "wikidata/*/", Include: []string{"*.nt.gz"},
				Completion:           &rdfv1.CompletionSpec{Marker: "wikidata/*/_SUCCESS"},
				CredentialsSecretRef: &rdfv1.CredentialsSecretReference{Name: "dump-credentials"},
			},
			Database: rdfv1.DatabaseSpec{StorageClassName: "local-nvme", Size: resource.MustParse("10Gi")},
			Loader: rdfv1.LoaderSpec{Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("2Gi")},
			}},
			Snapshot: rdfv1.SnapshotSpec{VolumeSnapshotClassName: "nvme-snapshots", Keep: 2},
			Trigger: rdfv1.TriggerSpec{Mode: rdfv1.TriggerWatch, Interval: metav1.Duration{Duration: watchInterval},
				SettlePeriod: metav1.Duration{Duration: watchSettle}},
		},
	}
}

func credentialsSecret(ns, id, secret string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "dump-credentials"},
		StringData: map[string]string{"AWS_ACCESS_KEY_ID": id, "AWS_SECRET_ACCESS_KEY": secret}}
}

func get(t *testing.T, key client.ObjectKey) *rdfv1.BulkLoad {
	t.Helper()
	bl := &rdfv1.BulkLoad{}
	if err := k8s.Get(context.Background(), key, bl); err != nil {
		t.Fatal(err)
	}
	return bl
}

func workflows(t *testing.T, ns string) []wfv1.Workflow {
	t.Helper()
	list := &wfv1.WorkflowList{}
	if err := k8s.List(context.Background(), list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// relist lets one trigger interval pass, wakes the controller (an annotation change) and
// waits until it has listed the source at least once more.
func relist(t *testing.T, key client.ObjectKey, r *countingResolver) {
	t.Helper()
	r.clock.Advance(watchInterval)
	before := r.calls.Load()
	eventually(t, "poke", func() error {
		bl := get(t, key)
		if bl.Annotations == nil {
			bl.Annotations = map[string]string{}
		}
		bl.Annotations["test.rdf.bulkload.io/poke"] = fmt.Sprint(time.Now().UnixNano())
		return k8s.Update(context.Background(), bl)
	})
	eventually(t, "a new listing", func() error {
		if r.calls.Load() <= before {
			return fmt.Errorf("no listing since the poke")
		}
		return nil
	})
}

// quiet re-lists twice: the second listing starts only after the reconcile of the first has
// written its status and children, so whatever the first listing caused is visible.
func quiet(t *testing.T, key client.ObjectKey, r *countingResolver) {
	t.Helper()
	relist(t, key, r)
	relist(t, key, r)
}

func reconcilingMessage(bl *rdfv1.BulkLoad) string {
	return condition(bl, rdfv1.ConditionReconciling)
}

// condition is a condition's "status reason: message" ("" when it is not set).
func condition(bl *rdfv1.BulkLoad, kind string) string {
	if c := meta.FindStatusCondition(bl.Status.Conditions, kind); c != nil {
		return fmt.Sprintf("%s %s: %s", c.Status, c.Reason, c.Message)
	}
	return ""
}

// expectedRevision is what the fetch step will compute for the same dump set.
func expectedRevision(t *testing.T, srv *miniotest.Server, spec source.Spec) string {
	t.Helper()
	c, err := source.NewClient(spec, source.Credentials{AccessKeyID: srv.AccessKey, SecretAccessKey: srv.SecretKey}, source.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := source.Resolve(context.Background(), c, spec)
	if err != nil || !snap.Complete {
		t.Fatalf("resolve %+v: %v %+v", spec, err, snap)
	}
	return snap.Revision
}

func hasArgs(args []string, flag, value string) bool {
	for i := 0; i+1 < len(args); i++ {
		if args[i] == flag && args[i+1] == value {
			return true
		}
	}
	return false
}

// The watch trigger end to end: a real MinIO, a real API server, the real controller.
func TestWatchTriggerWithMinIO(t *testing.T) {
	needControlPlane(t)
	srv := miniotest.Start(t)
	srv.MakeBucket("dumps")
	clock := newClock()
	resolver := &countingResolver{inner: sourcewatch.New(), clock: clock}
	ns := newNamespace(t)
	startController(t, resolver, ns)
	ctx := context.Background()
	if err := k8s.Create(ctx, credentialsSecret(ns, srv.AccessKey, srv.SecretKey)); err != nil {
		t.Fatal(err)
	}

	// 1. A dump set without its marker: no build.
	for _, k := range []string{"wikidata/20261120/a.nt.gz", "wikidata/20261120/b.nt.gz"} {
		srv.Put("dumps", k, []byte(k), minio.PutObjectOptions{})
	}
	bl := watchedBulkLoad(ns, "wikidata", srv)
	if err := k8s.Create(ctx, bl); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(bl)
	eventually(t, "waiting for the marker", func() error {
		if msg := reconcilingMessage(get(t, key)); !strings.Contains(msg, "_SUCCESS") {
			return fmt.Errorf("condition %q", msg)
		}
		return nil
	})
	quiet(t, key, resolver)
	if wfs := workflows(t, ns); len(wfs) != 0 {
		t.Fatalf("%d workflow(s) for a dump set without its marker", len(wfs))
	}

	// 2. The marker lands: the listing must first stay quiet for the settle period.
	srv.Put("dumps", "wikidata/20261120/_SUCCESS", nil, minio.PutObjectOptions{})
	quiet(t, key, resolver)
	if msg := reconcilingMessage(get(t, key)); !strings.Contains(msg, "unchanged for 10m0s") || len(workflows(t, ns)) != 0 {
		t.Fatalf("right after the marker: %q, %d workflow(s)", msg, len(workflows(t, ns)))
	}

	// 3. Settled: exactly one build, of the revision the fetch step will verify.
	clock.Advance(watchSettle)
	relist(t, key, resolver)
	rev1 := expectedRevision(t, srv, source.Spec{Endpoint: srv.Endpoint(), Bucket: "dumps", Prefix: "wikidata/20261120/",
		Include: []string{"*.nt.gz"}, Marker: "wikidata/20261120/_SUCCESS"})
	var wf wfv1.Workflow
	eventually(t, "one build", func() error {
		bl = get(t, key)
		wfs := workflows(t, ns)
		if bl.Status.SourceRevision != rev1 || len(wfs) != 1 {
			return fmt.Errorf("sourceRevision %q (want %s), %d workflows", bl.Status.SourceRevision, rev1, len(wfs))
		}
		wf = wfs[0]
		return nil
	})
	var fetchArgs []string
	for _, tpl := range wf.Spec.Templates {
		if tpl.Name == "fetch" && tpl.Container != nil {
			fetchArgs = tpl.Container.Args
		}
	}
	if !hasArgs(fetchArgs, "--expect-revision", rev1) || !hasArgs(fetchArgs, "--marker", "wikidata/*/_SUCCESS") {
		t.Fatalf("fetch step args %v do not pin revision %s", fetchArgs, rev1)
	}

	// 4. Re-listing an unchanged source builds nothing more.
	clock.Advance(time.Hour)
	quiet(t, key, resolver)
	quiet(t, key, resolver)
	if wfs := workflows(t, ns); len(wfs) != 1 || get(t, key).Status.SourceRevision != rev1 {
		t.Fatalf("after re-listing: %d workflows, revision %s", len(wfs), get(t, key).Status.SourceRevision)
	}

	// 5. A new dated set (newer directory, its own marker): a new revision, queued behind the
	// running build (one build at a time), once it has settled.
	srv.Put("dumps", "wikidata/20261127/a.nt.gz", []byte("new a"), minio.PutObjectOptions{})
	quiet(t, key, resolver)
	if q := get(t, key).Status.QueuedRevision; q != "" {
		t.Fatalf("a dated set without its marker was queued: %s", q)
	}
	srv.Put("dumps", "wikidata/20261127/_SUCCESS", nil, minio.PutObjectOptions{})
	relist(t, key, resolver)
	clock.Advance(watchSettle)
	relist(t, key, resolver)
	rev2 := expectedRevision(t, srv, source.Spec{Endpoint: srv.Endpoint(), Bucket: "dumps", Prefix: "wikidata/20261127/",
		Include: []string{"*.nt.gz"}, Marker: "wikidata/20261127/_SUCCESS"})
	eventually(t, "the new revision", func() error {
		bl = get(t, key)
		if bl.Status.QueuedRevision != rev2 || rev2 == rev1 {
			return fmt.Errorf("queuedRevision %q, want %s (first %s)", bl.Status.QueuedRevision, rev2, rev1)
		}
		return nil
	})
	if wfs := workflows(t, ns); len(wfs) != 1 {
		t.Fatalf("%d workflows while one build runs", len(wfs))
	}

	// 6. The running build's fetch step now finds the newer set and refuses (exit 3, the
	// revision it was pinned to is gone); as Argo would, a stand-in marks the step failed.
	// The queued revision is built next, in a new workflow.
	argoStandInFailFetch(t, ns, wf.Name, 3)
	eventually(t, "a build of the new revision", func() error {
		bl = get(t, key)
		if bl.Status.SourceRevision != rev2 || bl.Status.LastFailedRevision != rev1 {
			return fmt.Errorf("sourceRevision %q lastFailed %q", bl.Status.SourceRevision, bl.Status.LastFailedRevision)
		}
		var pinned []string
		for _, w := range workflows(t, ns) {
			for _, tpl := range w.Spec.Templates {
				if tpl.Name == "fetch" && tpl.Container != nil && hasArgs(tpl.Container.Args, "--expect-revision", rev2) {
					pinned = append(pinned, w.Name)
				}
			}
		}
		if len(pinned) != 1 || pinned[0] == wf.Name {
			return fmt.Errorf("workflows pinned to %s: %v (first build %s)", rev2, pinned, wf.Name)
		}
		return nil
	})
	statusJSON, _ := json.Marshal(bl.Status)
	if strings.Contains(string(statusJSON), srv.SecretKey) {
		t.Fatal("the secret key is in the status")
	}
}

// argoStandInFailFetch stands in for Argo's workflow-controller (not run here): it records
// that the fetch step's pod exited with code and the workflow failed.
func argoStandInFailFetch(t *testing.T, ns, name string, code int) {
	t.Helper()
	eventually(t, "mark the workflow failed", func() error {
		wf := &wfv1.Workflow{}
		if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, wf); err != nil {
			return err
		}
		now := metav1.Now()
		pod := wfv1.NodeStatus{ID: name + "-1", Name: name + "[0].fetch(0)", DisplayName: "fetch(0)", Type: wfv1.NodeTypePod,
			TemplateName: "fetch", Phase: wfv1.NodeFailed, StartedAt: now, FinishedAt: now,
			Message: fmt.Sprintf("Error (exit code %d)", code), Outputs: &wfv1.Outputs{ExitCode: ptr.To(fmt.Sprint(code))}}
		wf.Status.Phase, wf.Status.Message, wf.Status.StartedAt, wf.Status.FinishedAt = wfv1.WorkflowFailed, "child failed", now, now
		wf.Status.Nodes = wfv1.Nodes{pod.ID: pod}
		return k8s.Update(context.Background(), wf)
	})
}

// A listing error is a condition on the BulkLoad, never a build, and never shows the secret.
func TestWatchTriggerListingErrorIsACondition(t *testing.T) {
	needControlPlane(t)
	srv := miniotest.Start(t)
	srv.MakeBucket("dumps")
	srv.Put("dumps", "wikidata/20261120/a.nt.gz", []byte("a"), minio.PutObjectOptions{})
	srv.Put("dumps", "wikidata/20261120/_SUCCESS", nil, minio.PutObjectOptions{})
	resolver := &countingResolver{inner: sourcewatch.New(), clock: newClock()}
	ns := newNamespace(t)
	startController(t, resolver, ns)
	ctx := context.Background()
	wrong := "wrong-" + srv.SecretKey
	if err := k8s.Create(ctx, credentialsSecret(ns, srv.AccessKey, wrong)); err != nil {
		t.Fatal(err)
	}
	bl := watchedBulkLoad(ns, "denied", srv)
	bl.Spec.Trigger.SettlePeriod = metav1.Duration{}
	if err := k8s.Create(ctx, bl); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(bl)
	// Access denied needs someone to fix the credentials: Stalled (kstatus Failed), not
	// Reconciling, with the source's own words.
	eventually(t, "a condition naming the problem", func() error {
		if msg := condition(get(t, key), rdfv1.ConditionStalled); !strings.HasPrefix(msg, "True SourceAccessDenied: ") ||
			!strings.Contains(msg, "cannot list the source") || !strings.Contains(msg, "SignatureDoesNotMatch") {
			return fmt.Errorf("Stalled %q", msg)
		}
		if msg := condition(get(t, key), rdfv1.ConditionReconciling); !strings.HasPrefix(msg, "False ") {
			return fmt.Errorf("Reconciling %q", msg)
		}
		return nil
	})
	quiet(t, key, resolver)
	if wfs := workflows(t, ns); len(wfs) != 0 {
		t.Fatalf("%d workflow(s) despite the listing error", len(wfs))
	}
	statusJSON, _ := json.Marshal(get(t, key).Status)
	if strings.Contains(string(statusJSON), wrong) {
		t.Fatal("the secret is in the status")
	}
	// The Secret is fixed: the dump set builds (settle period 0).
	sec := &corev1.Secret{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "dump-credentials"}, sec); err != nil {
		t.Fatal(err)
	}
	sec.Data = map[string][]byte{"AWS_ACCESS_KEY_ID": []byte(srv.AccessKey), "AWS_SECRET_ACCESS_KEY": []byte(srv.SecretKey)}
	if err := k8s.Update(ctx, sec); err != nil {
		t.Fatal(err)
	}
	relist(t, key, resolver)
	eventually(t, "a build once the credentials are right", func() error {
		if n := len(workflows(t, ns)); n != 1 {
			return fmt.Errorf("%d workflows", n)
		}
		if msg := condition(get(t, key), rdfv1.ConditionStalled); !strings.HasPrefix(msg, "False ") {
			return fmt.Errorf("Stalled %q", msg)
		}
		return nil
	})
}

// The settle clock and the pace of the listings are in the BulkLoad's status: a
// restarted operator neither lists before the interval is over nor starts the settle
// period again, and builds the settled revision once.
func TestWatchTriggerSettleClockSurvivesARestart(t *testing.T) {
	needControlPlane(t)
	srv := miniotest.Start(t)
	srv.MakeBucket("dumps")
	srv.Put("dumps", "wikidata/20261120/a.nt.gz", []byte("a"), minio.PutObjectOptions{})
	srv.Put("dumps", "wikidata/20261120/_SUCCESS", nil, minio.PutObjectOptions{})
	clock := newClock()
	first := &countingResolver{inner: sourcewatch.New(), clock: clock}
	ns := newNamespace(t)
	stop := startController(t, first, ns)
	ctx := context.Background()
	if err := k8s.Create(ctx, credentialsSecret(ns, srv.AccessKey, srv.SecretKey)); err != nil {
		t.Fatal(err)
	}
	bl := watchedBulkLoad(ns, "restarted", srv)
	if err := k8s.Create(ctx, bl); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(bl)
	eventually(t, "settling", func() error {
		if msg := reconcilingMessage(get(t, key)); !strings.Contains(msg, "unchanged for 10m0s") {
			return fmt.Errorf("condition %q", msg)
		}
		return nil
	})
	relist(t, key, first)
	since := get(t, key).Status.Source.UnchangedSince
	if since == nil || !since.Time.Equal(clock.Now().Add(-watchInterval).Truncate(time.Second)) {
		t.Fatalf("status.source.unchangedSince %v: the first listing's time", since)
	}
	stop()

	// A new operator process: within the interval, no listing.
	second := &countingResolver{inner: sourcewatch.New(), clock: clock}
	startController(t, second, ns)
	annotate(t, key)
	time.Sleep(2 * time.Second)
	if n := second.calls.Load(); n != 0 {
		t.Fatalf("%d listing(s) within the interval after the restart", n)
	}
	// The settle period, counted from before the restart, ends: one build.
	clock.Advance(watchSettle)
	relist(t, key, second)
	eventually(t, "one build", func() error {
		if n := len(workflows(t, ns)); n != 1 {
			return fmt.Errorf("%d workflows", n)
		}
		return nil
	})
	quiet(t, key, second)
	if n := len(workflows(t, ns)); n != 1 {
		t.Fatalf("%d workflows: the revision was built twice", n)
	}
}

// annotate wakes the controller without a listing being due.
func annotate(t *testing.T, key client.ObjectKey) {
	t.Helper()
	eventually(t, "annotate", func() error {
		bl := get(t, key)
		if bl.Annotations == nil {
			bl.Annotations = map[string]string{}
		}
		bl.Annotations["test.rdf.bulkload.io/poke"] = fmt.Sprint(time.Now().UnixNano())
		return k8s.Update(context.Background(), bl)
	})
}
