//go:build e2e

package cluster

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/yaml"
)

// The lifecycle suite: what a user lives with after the first build (issue 12). One namespace,
// scenarios in order, each building on the state the previous one left:
//
//  1. GitOps: a BulkLoad in watch mode builds each new dated dump set once it is complete and
//     settled, and hands it off while a SPARQL client polls Fuseki through its Service.
//  2. Rollback to the previous snapshot, as the README says.
//  3. Faults during builds: MinIO, the loader pod, the loader process and the operator pod go
//     away mid-build; the build completes, resumed, with the same answers.
//  4. Final failures leave the serving workload untouched and no volumes behind.
//  5. Deletion and a BulkLoad recreated under the same name.
//  6. Security: the credentials appear nowhere; the operator never hit a missing permission.
//  7. Upgrade and drift: helm upgrade during a build and after a handoff; the drift again with
//     the operator away (the surged pod on the emptyDir never Ready).
const (
	weekly        = "weekly" // the GitOps BulkLoad
	weeklyPrefix  = "weekly/"
	faults        = "faults" // the BulkLoad whose builds are interrupted
	faultsPrefix  = "faults/2026-11-20/"
	revisionQuery = `SELECT ?v WHERE { <urn:e2e:revision> <urn:e2e:value> ?v }`
	lateQuery     = `SELECT ?v WHERE { <urn:e2e:late> <urn:e2e:value> ?v }`
	pollerName    = "sparql-poll"
	faultsFuseki  = "faults-fuseki"  // the faults BulkLoad's serving workload, a copy of the chart's Fuseki
	watchInterval = 30 * time.Second // the CRD's minimum
	settlePeriod  = 10 * time.Second
)

// writeDump writes dir/name, a gzipped N-Triples dump: n generated triples of a few shapes
// (IRIs, plain, language-tagged and typed literals, blank nodes) and the triple
// <urn:e2e:revision> <urn:e2e:value> "revision" by which a client tells databases apart.
func writeDump(t *testing.T, dir, name, revision string, n int) string {
	t.Helper()
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw, _ := gzip.NewWriterLevel(f, gzip.BestSpeed)
	w := bufio.NewWriterSize(zw, 1<<20)
	fmt.Fprintf(w, "<urn:e2e:revision> <urn:e2e:value> %q .\n", revision)
	for i := 0; i < n; i++ {
		s := fmt.Sprintf("<urn:e2e:s/%d>", i/4)
		switch i % 4 {
		case 0:
			fmt.Fprintf(w, "%s <urn:e2e:p/link> <urn:e2e:s/%d> .\n", s, (i*7919)%(n/4+1))
		case 1:
			fmt.Fprintf(w, "%s <urn:e2e:p/label> \"item %d of %s\"@en .\n", s, i, revision)
		case 2:
			fmt.Fprintf(w, "%s <urn:e2e:p/n> \"%d\"^^<http://www.w3.org/2001/XMLSchema#integer> .\n", s, i%1000)
		default:
			fmt.Fprintf(w, "%s <urn:e2e:p/b> _:b%d .\n_:b%d <urn:e2e:p/v> \"%d.5\"^^<http://www.w3.org/2001/XMLSchema#decimal> .\n", s, i, i, i%97)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// record is the suite's memory of what happened in the namespace while it ran, from watches:
// every workflow ever created (Argo may garbage-collect finished ones), and every change of
// each BulkLoad's phase and Ready condition.
type record struct {
	mu        sync.Mutex
	workflows map[string]map[string]string // name -> annotations (the revision) + "bulkload" label
	states    []blState
}

type blState struct {
	at          time.Time
	name        string
	phase       string
	ready       string // the Ready condition's status
	reason      string // the Ready condition's reason
	reconciling string // the Reconciling condition's status
}

func (s *suite) watchRecord(ctx context.Context, rec *record) {
	go s.watchEach(ctx, workflowGVR, func(ev watch.EventType, u *unstructured.Unstructured) {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		if _, seen := rec.workflows[u.GetName()]; ev != watch.Added || seen {
			return
		}
		a := map[string]string{"bulkload": u.GetLabels()["rdf.bulkload.io/bulkload"]}
		for k, v := range u.GetAnnotations() {
			a[k] = v
		}
		rec.workflows[u.GetName()] = a
		s.t.Logf("workflow %s created (BulkLoad %s)", u.GetName(), a["bulkload"])
	})
	go s.watchEach(ctx, bulkLoadGVR, func(_ watch.EventType, u *unstructured.Unstructured) {
		st := blState{at: time.Now(), name: u.GetName()}
		st.phase, _, _ = unstructured.NestedString(u.Object, "status", "phase")
		st.ready, st.reason = condition(u, "Ready")
		st.reconciling, _ = condition(u, "Reconciling")
		rec.mu.Lock()
		defer rec.mu.Unlock()
		last := -1
		for i := range rec.states {
			if rec.states[i].name == st.name {
				last = i
			}
		}
		if last < 0 || rec.states[last] != (blState{rec.states[last].at, st.name, st.phase, st.ready, st.reason, st.reconciling}) {
			rec.states = append(rec.states, st)
			s.t.Logf("BulkLoad %s: phase %s, Ready=%s (%s), Reconciling=%s", st.name, st.phase, st.ready, st.reason, st.reconciling)
		}
	})
}

// checkServingWhileBuilding: from since on, while a newer dump set was built (every phase
// before its handoff), the BulkLoad said Ready=True and Reconciling=False, which kstatus reads
// as Current: GitOps tools do not wait out the build of a weekly dump. The one exception is a
// real drift: the helm upgrade of the operator during the build also puts the chart's emptyDir
// back into Fuseki's template, and for that moment the BulkLoad must say so (HandoffDrifted,
// then RollingOut) whatever the build does.
func (rec *record) checkServingWhileBuilding(t *testing.T, name string, since time.Time) {
	t.Helper()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	served, drifted := 0, 0
	for _, st := range rec.states {
		if st.name != name || st.at.Before(since) || st.phase == "HandingOff" || st.phase == "Ready" {
			continue
		}
		switch {
		case st.ready == "True" && st.reconciling == "False":
			served++
		case st.ready == "False" && (st.reason == "HandoffDrifted" || st.reason == "RollingOut"):
			drifted++
		default:
			t.Errorf("at %s, phase %s, the BulkLoad said Ready=%s (%s), Reconciling=%s while it served the previous dump set: want Ready=True, Reconciling=False",
				st.at.Format("15:04:05.000"), st.phase, st.ready, st.reason, st.reconciling)
		}
	}
	if served == 0 {
		t.Errorf("no build phase of %s with Ready=True was recorded since %s", name, since.Format("15:04:05"))
	}
	t.Logf("while %s built the next dump set: %d states serving (Ready=True, Reconciling=False), %d drifted by the helm upgrade", name, served, drifted)
}

// workflowsFor lists the workflows ever created for a BulkLoad and source revision.
func (rec *record) workflowsFor(bulkLoad, revision string) []string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var names []string
	for name, a := range rec.workflows {
		if a["bulkload"] == bulkLoad && (revision == "" || a["rdf.bulkload.io/source-revision"] == revision) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

func condition(u *unstructured.Unstructured, typ string) (string, string) {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ {
			return fmt.Sprint(m["status"]), fmt.Sprint(m["reason"])
		}
	}
	return "", ""
}

func (s *suite) getBulkLoad(ctx context.Context, name string) *unstructured.Unstructured {
	u, err := s.dyn.Resource(bulkLoadGVR).Namespace(s.ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		s.t.Fatalf("get BulkLoad %s: %v", name, err)
	}
	return u
}

func statusString(u *unstructured.Unstructured, field ...string) string {
	v, _, _ := unstructured.NestedString(u.Object, append([]string{"status"}, field...)...)
	return v
}

// waitBulkLoad polls the BulkLoad until done says so; a Failed phase ends the wait with the
// status printed unless failedOK.
func (s *suite) waitBulkLoad(ctx context.Context, name, what string, timeout time.Duration, done func(u *unstructured.Unstructured) bool) *unstructured.Unstructured {
	s.t.Helper()
	var last *unstructured.Unstructured
	err := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		u, err := s.dyn.Resource(bulkLoadGVR).Namespace(s.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = u
		return done(u), nil
	})
	if err != nil {
		var st any
		if last != nil {
			st = last.Object["status"]
		}
		b, _ := json.MarshalIndent(st, "", "  ")
		s.t.Fatalf("BulkLoad %s: %s: %v\nstatus: %s", name, what, err, b)
	}
	return last
}

// listedAfter waits for the watcher's first listing of the source that began after t (the
// operator and this test share the machine's clock; lastListTime has whole seconds, so a
// listing in t's own second does not count) and returns the BulkLoad as that listing left it.
func (s *suite) listedAfter(ctx context.Context, name string, t time.Time) *unstructured.Unstructured {
	s.t.Helper()
	after := t.Truncate(time.Second)
	return s.waitBulkLoad(ctx, name, "a listing of the source after "+t.Format(time.RFC3339), watchInterval+30*time.Second, func(u *unstructured.Unstructured) bool {
		at, err := time.Parse(time.RFC3339, statusString(u, "source", "lastListTime"))
		return err == nil && at.After(after)
	})
}

// readyWith waits until the BulkLoad is Ready with a lastBuiltRevision other than not.
func (s *suite) readyWith(ctx context.Context, name, not string, timeout time.Duration) *unstructured.Unstructured {
	return s.waitBulkLoad(ctx, name, "Ready with a new revision", timeout, func(u *unstructured.Unstructured) bool {
		// a Failed status of an earlier generation is the one a patch just answered
		observed, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
		if statusString(u, "phase") == "Failed" && observed == u.GetGeneration() {
			b, _ := json.MarshalIndent(u.Object["status"], "", "  ")
			s.t.Fatalf("BulkLoad %s failed:\n%s", name, b)
		}
		ready, _ := condition(u, "Ready")
		return statusString(u, "phase") == "Ready" && ready == "True" && statusString(u, "lastBuiltRevision") != not
	})
}

func (s *suite) createBulkLoad(ctx context.Context, bl *unstructured.Unstructured) {
	if _, err := s.dyn.Resource(bulkLoadGVR).Namespace(s.ns).Create(ctx, bl, metav1.CreateOptions{}); err != nil {
		s.t.Fatalf("create BulkLoad %s: %v", bl.GetName(), err)
	}
}

// patchBulkLoad merge-patches the BulkLoad's spec as `kubectl patch --type merge` does.
func (s *suite) patchBulkLoad(ctx context.Context, name string, spec map[string]any) {
	body, _ := json.Marshal(map[string]any{"spec": spec})
	if _, err := s.dyn.Resource(bulkLoadGVR).Namespace(s.ns).Patch(ctx, name, "application/merge-patch+json", body, metav1.PatchOptions{}); err != nil {
		s.t.Fatalf("patch BulkLoad %s: %v", name, err)
	}
}

// --- the SPARQL client polling Fuseki through its Service -----------------------------------

type sample struct {
	UnixMilli int64  `json:"t"`
	Millis    int64  `json:"ms"`
	Status    int    `json:"status"`
	Value     string `json:"value"`
	Error     string `json:"error"`
}

func (p sample) at() time.Time { return time.UnixMilli(p.UnixMilli) }
func (p sample) ok() bool      { return p.Status == 200 && p.Error == "" }

func (s *suite) startPoller(ctx context.Context) {
	image := os.Getenv("E2E_SPARQL_POLL_IMAGE")
	if image == "" {
		s.t.Fatalf("E2E_SPARQL_POLL_IMAGE is not set: build it with hack/build-e2e-images.sh and load it into the cluster")
	}
	no, yes, uid := false, true, int64(65532)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: pollerName, Labels: map[string]string{"app.kubernetes.io/name": pollerName}},
		Spec: corev1.PodSpec{
			NodeSelector:                 infraNodeSelector(), // beside the Fuseki it polls
			AutomountServiceAccountToken: &no,
			SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: &yes, RunAsUser: &uid,
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			Containers: []corev1.Container{{
				Name: "poll", Image: image, ImagePullPolicy: corev1.PullPolicy(env("E2E_IMAGE_PULL_POLICY", "IfNotPresent")),
				Args: []string{"--endpoint", fmt.Sprintf("http://%s.%s.svc:3030/ds/sparql", fusekiName, s.ns),
					"--query", revisionQuery, "--interval", "100ms", "--timeout", "5s"},
				SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: &no, ReadOnlyRootFilesystem: &yes,
					Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
			}},
		},
	}
	if _, err := s.kube.CoreV1().Pods(s.ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		s.t.Fatalf("poller pod: %v", err)
	}
	if err := wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		p, err := s.kube.CoreV1().Pods(s.ns).Get(ctx, pollerName, metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning, nil
	}); err != nil {
		s.t.Fatalf("poller pod not running: %v", err)
	}
}

// samples returns what the poller saw in [from, to].
func (s *suite) samples(ctx context.Context, from, to time.Time) []sample {
	raw, err := s.kube.CoreV1().Pods(s.ns).GetLogs(pollerName, &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil {
		s.t.Fatalf("poller log: %v", err)
	}
	var out []sample
	for _, line := range strings.Split(string(raw), "\n") {
		var p sample
		if json.Unmarshal([]byte(line), &p) != nil {
			continue
		}
		if !p.at().Before(from) && !p.at().After(to) {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		s.t.Fatalf("the poller recorded nothing between %s and %s", from.Format(time.TimeOnly), to.Format(time.TimeOnly))
	}
	// printed as they answer; in the order they were sent
	slices.SortStableFunc(out, func(a, b sample) int { return int(a.UnixMilli - b.UnixMilli) })
	return out
}

// handoff summarises a window of samples in which the answer changes from old to new.
type handoff struct {
	requests, failed int
	maxGap           time.Duration // longest time without an answer (first failed request to the next answered one, by send time)
	overlap          time.Duration // first new answer to last old answer (both pods serving)
	others           []string      // answers that are neither old nor new
	firstNew         time.Time
	lastErr          string
}

func analyseHandoff(samples []sample, oldAnswer, newAnswer string) handoff {
	var h handoff
	var failingSince time.Time
	var lastOld time.Time
	for _, p := range samples {
		h.requests++
		if !p.ok() {
			h.failed++
			h.lastErr = p.Error
			if failingSince.IsZero() {
				failingSince = p.at()
			}
			continue
		}
		if !failingSince.IsZero() {
			h.maxGap = max(h.maxGap, p.at().Sub(failingSince))
			failingSince = time.Time{}
		}
		switch p.Value {
		case oldAnswer:
			lastOld = p.at()
		case newAnswer:
			if h.firstNew.IsZero() {
				h.firstNew = p.at()
			}
		default:
			h.others = append(h.others, fmt.Sprintf("%q at %s", p.Value, p.at().Format("15:04:05.000")))
		}
	}
	if !failingSince.IsZero() && len(samples) > 0 {
		h.maxGap = max(h.maxGap, samples[len(samples)-1].at().Sub(failingSince))
	}
	if !h.firstNew.IsZero() && lastOld.After(h.firstNew) {
		h.overlap = lastOld.Sub(h.firstNew)
	}
	return h
}

// maxHandoffGap bounds the time a client sees no answer while the serving pods are swapped.
func maxHandoffGap() time.Duration {
	d, err := time.ParseDuration(env("E2E_MAX_HANDOFF_GAP", "5s"))
	if err != nil {
		panic(err)
	}
	return d
}

func (s *suite) checkHandoff(ctx context.Context, from time.Time, oldAnswer, newAnswer string) handoff {
	s.t.Helper()
	// Ready follows the Deployment's rollout; the Service routes to the new pod a moment later
	// (endpoints, kube-proxy): wait until the poller has the new answer, a few seconds more.
	_ = wait.PollUntilContextTimeout(ctx, time.Second, time.Minute, true, func(ctx context.Context) (bool, error) {
		return slices.ContainsFunc(s.samples(ctx, from, time.Now()), func(p sample) bool { return p.ok() && p.Value == newAnswer }), nil
	})
	time.Sleep(3 * time.Second)
	h := analyseHandoff(s.samples(ctx, from, time.Now()), oldAnswer, newAnswer)
	s.t.Logf("handoff %q -> %q under traffic: %d requests, %d failed, longest gap %v, both answered for %v (last error: %s)",
		oldAnswer, newAnswer, h.requests, h.failed, h.maxGap, h.overlap, h.lastErr)
	if h.firstNew.IsZero() {
		s.t.Errorf("the poller never saw the new database %q", newAnswer)
	}
	if len(h.others) > 0 {
		s.t.Errorf("the poller saw answers of neither database: %v", h.others[:min(len(h.others), 10)])
	}
	if h.maxGap > maxHandoffGap() {
		s.t.Errorf("no answer for %v during the handoff (bound %v, E2E_MAX_HANDOFF_GAP)", h.maxGap, maxHandoffGap())
	}
	return h
}

// checkSteady: in the window, every answer was want, and no longer than the handoff bound
// went without one.
func (s *suite) checkSteady(ctx context.Context, from time.Time, want, while string) {
	s.t.Helper()
	h := analyseHandoff(s.samples(ctx, from, time.Now()), want, want)
	if len(h.others) > 0 {
		s.t.Errorf("while %s, Fuseki answered from another database: %v", while, h.others[:min(len(h.others), 10)])
	}
	if h.maxGap > maxHandoffGap() {
		s.t.Errorf("while %s, no answer for %v (bound %v; last error: %s)", while, h.maxGap, maxHandoffGap(), h.lastErr)
	}
	s.t.Logf("while %s: %d requests, %d failed, longest gap %v, every answer %q", while, h.requests, h.failed, h.maxGap, want)
}

// --- objects in the namespace ---------------------------------------------------------------------

func (s *suite) snapshotNames(ctx context.Context, bulkLoad string) []string {
	l, err := s.dyn.Resource(snapshotGVR).Namespace(s.ns).List(ctx, metav1.ListOptions{LabelSelector: "rdf.bulkload.io/bulkload=" + bulkLoad})
	if err != nil {
		s.t.Fatal(err)
	}
	var names []string
	for _, u := range l.Items {
		names = append(names, u.GetName())
	}
	slices.Sort(names)
	return names
}

// pvcNames lists the PVCs of a BulkLoad's (by its label; "" for all but MinIO's).
func (s *suite) pvcNames(ctx context.Context, bulkLoad string) []string {
	sel := ""
	if bulkLoad != "" {
		sel = "rdf.bulkload.io/bulkload=" + bulkLoad
	}
	l, err := s.kube.CoreV1().PersistentVolumeClaims(s.ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		s.t.Fatal(err)
	}
	var names []string
	for _, p := range l.Items {
		if p.DeletionTimestamp == nil && p.Name != "minio-data" {
			names = append(names, p.Name)
		}
	}
	slices.Sort(names)
	return names
}

// servingClaim is the PVC a Fuseki Deployment's pod template mounts as its databases volume
// ("" for the chart's emptyDir).
func (s *suite) servingClaim(ctx context.Context, deployment string) string {
	d, err := s.kube.AppsV1().Deployments(s.ns).Get(ctx, deployment, metav1.GetOptions{})
	if err != nil {
		s.t.Fatal(err)
	}
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.Name == "databases" && v.PersistentVolumeClaim != nil {
			return v.PersistentVolumeClaim.ClaimName
		}
	}
	return ""
}

// fusekiAnswer asks a Fuseki Deployment (a ready pod, through a port-forward) for the first
// binding of q.
func (s *suite) fusekiAnswer(ctx context.Context, deployment, q string) string {
	addr, stop, err := s.portForward(s.runningPod(ctx, fusekiSelector(deployment)), 3030)
	if err != nil {
		s.t.Fatal(err)
	}
	defer stop()
	return s.firstValue(addr, q)
}

// stepPod waits for the workflow pod of step whose Argo node name starts with prefix (a
// BulkLoad's name and "-", or a workflow's name) and whose main container runs, and
// returns it; a pod in skip is not returned again.
func (s *suite) stepPod(ctx context.Context, prefix, step string, skip ...string) *corev1.Pod {
	var found *corev1.Pod
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := s.kube.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{LabelSelector: workflowPodLabel})
		if err != nil {
			return false, nil
		}
		for i := range pods.Items {
			p := &pods.Items[i]
			node := p.Annotations["workflows.argoproj.io/node-name"]
			if !strings.HasPrefix(node, prefix) || stepOf(node) != step || slices.Contains(skip, p.Name) || !mainStarted(p) {
				continue
			}
			found = p
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		s.t.Fatalf("no running %s pod of %s: %v", step, prefix, err)
	}
	return found
}

// stepOf is the step of an Argo node name: "faults-abc.load(1)" -> "load".
func stepOf(node string) string {
	step := node[strings.LastIndex(node, ".")+1:]
	if i := strings.Index(step, "("); i >= 0 {
		step = step[:i]
	}
	return step
}

// waitLogLine follows the main container's log of pod until a line contains needle.
func (s *suite) waitLogLine(ctx context.Context, pod, needle string) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	rc, err := s.kube.CoreV1().Pods(s.ns).GetLogs(pod, &corev1.PodLogOptions{Container: "main", Follow: true}).Stream(ctx)
	if err != nil {
		s.t.Fatalf("log of %s: %v", pod, err)
	}
	defer rc.Close()
	sc := bufio.NewScanner(rc)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if strings.Contains(sc.Text(), needle) {
			return
		}
	}
	s.t.Fatalf("the log of %s ended without %s", pod, needle)
}

// podLog is the whole log of a container (all of its restarts' current one).
func (s *suite) podLog(ctx context.Context, pod, container string) string {
	raw, err := s.kube.CoreV1().Pods(s.ns).GetLogs(pod, &corev1.PodLogOptions{Container: container}).DoRaw(ctx)
	if err != nil {
		return ""
	}
	return string(raw)
}

// killLoader SIGKILLs the loader process of pod from the node, as the OOM killer would. Only on
// a node of this machine (E2E_NODE_LOCAL=1, set by e2e-cluster-local): the process is found by
// its pod's cgroup.
func (s *suite) killLoader(pod *corev1.Pod) bool {
	if os.Getenv("E2E_NODE_LOCAL") != "1" {
		return false
	}
	uid := string(pod.UID)
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		args := strings.Split(string(cmd), "\x00")
		if len(args) < 2 || filepath.Base(args[0]) != "rdf-bulkload" || args[1] != "load" {
			continue
		}
		cg, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
		if !strings.Contains(string(cg), uid) && !strings.Contains(string(cg), strings.ReplaceAll(uid, "-", "_")) {
			continue
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			s.t.Fatalf("kill -9 %d: %v", pid, err)
		}
		s.t.Logf("SIGKILLed the loader (pid %d on the node) of pod %s", pid, pod.Name)
		return true
	}
	s.t.Fatalf("no loader process of pod %s on this node", pod.Name)
	return false
}

func (s *suite) deletePod(ctx context.Context, name, why string) {
	if err := s.kube.CoreV1().Pods(s.ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		s.t.Fatalf("delete pod %s: %v", name, err)
	}
	s.t.Logf("deleted pod %s (%s)", name, why)
}

func (s *suite) operatorPod(ctx context.Context) string {
	return s.runningPod(ctx, "app.kubernetes.io/instance="+release+",app.kubernetes.io/component=controller-manager")
}

// operatorDeployment is the chart's Deployment of the operator.
const operatorDeployment = release + "-controller-manager"

// scaleOperator sets the operator's replicas (kubectl scale, not helm: the values stay) and waits
// until that many of its pods run, and no other.
func (s *suite) scaleOperator(ctx context.Context, replicas int32) {
	patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"replicas": replicas}})
	if _, err := s.kube.AppsV1().Deployments(s.ns).Patch(ctx, operatorDeployment, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		s.t.Fatalf("scale the operator to %d: %v", replicas, err)
	}
	sel := "app.kubernetes.io/instance=" + release + ",app.kubernetes.io/component=controller-manager"
	err := wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := s.kube.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil || len(pods.Items) != int(replicas) {
			return false, nil
		}
		return replicas == 0 || podReady(&pods.Items[0]), nil
	})
	if err != nil {
		s.t.Fatalf("the operator did not scale to %d: %v", replicas, err)
	}
	s.t.Logf("operator scaled to %d", replicas)
}

// driftToEmptyDir does to a Fuseki Deployment what helm's three-way merge does on upgrade: its
// databases volume becomes the chart's emptyDir again (the served-revision annotation stays).
func (s *suite) driftToEmptyDir(ctx context.Context, deployment string) {
	patch := []byte(`{"spec":{"template":{"spec":{"volumes":[{"name":"databases","emptyDir":{},"persistentVolumeClaim":null}]}}}}`)
	if _, err := s.kube.AppsV1().Deployments(s.ns).Patch(ctx, deployment, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
		s.t.Fatalf("put the emptyDir back into %s: %v", deployment, err)
	}
	if got := s.servingClaim(ctx, deployment); got != "" {
		s.t.Fatalf("%s still mounts %s", deployment, got)
	}
}

// waitHandoffRepaired waits until the operator has put claim back into the Fuseki Deployment
// after a drift, and the Deployment has rolled out onto it.
func (s *suite) waitHandoffRepaired(ctx context.Context, deployment, claim, when string) {
	if err := wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		return s.servingClaim(ctx, deployment) == claim, nil
	}); err != nil {
		s.t.Errorf("%s the Deployment %s mounts %q, want the handed-off %s again", when, deployment, s.servingClaim(ctx, deployment), claim)
	}
	s.waitDeployment(ctx, deployment, 5*time.Minute)
}

// checkSurgeNeverReady: the pod the Deployment surges onto the drifted template starts (its
// startup probe, the dataset's first answer, passes) and stays unready for a while after.
func (s *suite) checkSurgeNeverReady(ctx context.Context, deployment string) {
	var surge *corev1.Pod
	err := wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := s.kube.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{LabelSelector: fusekiSelector(deployment)})
		if err != nil {
			return false, nil
		}
		for i := range pods.Items {
			p := &pods.Items[i]
			onEmptyDir := slices.ContainsFunc(p.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == "databases" && v.EmptyDir != nil })
			if onEmptyDir && len(p.Status.ContainerStatuses) > 0 && p.Status.ContainerStatuses[0].Started != nil && *p.Status.ContainerStatuses[0].Started {
				surge = p
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		s.t.Fatalf("no pod of %s on the emptyDir got past its startup probe: %v", deployment, err)
	}
	// Several readiness periods (5 s) after its start.
	time.Sleep(20 * time.Second)
	p, err := s.kube.CoreV1().Pods(s.ns).Get(ctx, surge.Name, metav1.GetOptions{})
	if err != nil {
		s.t.Fatal(err)
	}
	if podReady(p) {
		s.t.Errorf("pod %s serves the chart's emptyDir and is Ready: the Service sends it queries", p.Name)
	}
	s.t.Logf("pod %s on the emptyDir started and stayed unready", p.Name)
}

// helmUpgrade runs `helm upgrade --reuse-values` with extra --set arguments, as a user would.
func (s *suite) helmUpgrade(ctx context.Context, set ...string) {
	args := []string{"upgrade", release, filepath.Join(repoRoot(s.t), "charts", "rdf-bulkload"), "--namespace", s.ns,
		"--reuse-values", "--wait", "--timeout", "5m"}
	for _, kv := range set {
		args = append(args, "--set", kv)
	}
	if out, err := exec.CommandContext(ctx, s.helm, args...).CombinedOutput(); err != nil {
		s.t.Fatalf("helm upgrade: %v\n%s", err, out)
	}
	s.t.Logf("helm upgrade %v", set)
}

func yamlOf(v any) string {
	b, _ := yaml.Marshal(v)
	return string(b)
}

// gzipFile writes path.gz and returns its name.
func gzipFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	_, _ = zw.Write(data)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+".gz", b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path + ".gz"
}

// appendPlain appends text to a gzipped file as one more gzip member (what `cat a.gz b.gz` makes).
func appendPlain(t *testing.T, gzPath, text string) {
	t.Helper()
	f, err := os.OpenFile(gzPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	_, _ = zw.Write([]byte(text))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// logCapture keeps the logs of pods that may be gone when they are needed (Argo deletes
// succeeded step pods; scenarios delete the operator's).
type logCapture struct {
	mu   sync.Mutex
	logs map[string]string // "instance/container" -> log
	node map[string]string // instance -> Argo node name (step pods)
	host map[string]string // instance -> the Kubernetes node it ran on
}

// instance names one pod: Argo recreates a deleted step pod under the same name.
func instance(p *corev1.Pod) string { return p.Name + "#" + string(p.UID) }

// captureLogs follows every container of every pod matching selector from now on. A watch, not
// a poll: a retried step's pod may live for two seconds, and Argo deletes it once it succeeded.
func (s *suite) captureLogs(ctx context.Context, selector string) *logCapture {
	c := &logCapture{logs: map[string]string{}, node: map[string]string{}, host: map[string]string{}}
	seen := map[string]bool{}
	follow := func(pod, container, key string) {
		rc, err := s.kube.CoreV1().Pods(s.ns).GetLogs(pod, &corev1.PodLogOptions{Container: container, Follow: true}).Stream(ctx)
		if err != nil {
			return
		}
		defer rc.Close()
		sc := bufio.NewScanner(rc)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			c.mu.Lock()
			c.logs[key] += sc.Text() + "\n"
			c.mu.Unlock()
		}
	}
	go func() {
		for ctx.Err() == nil {
			w, err := s.kube.CoreV1().Pods(s.ns).Watch(ctx, metav1.ListOptions{LabelSelector: selector})
			if err != nil {
				time.Sleep(time.Second)
				continue
			}
			for ev := range w.ResultChan() {
				p, ok := ev.Object.(*corev1.Pod)
				if !ok {
					continue
				}
				for _, ctr := range append(p.Spec.InitContainers, p.Spec.Containers...) {
					key := instance(p) + "/" + ctr.Name
					if seen[key] || !containerStarted(p, ctr.Name) {
						continue
					}
					seen[key] = true
					c.mu.Lock()
					c.node[instance(p)] = p.Annotations["workflows.argoproj.io/node-name"]
					c.host[instance(p)] = p.Spec.NodeName
					c.mu.Unlock()
					go follow(p.Name, ctr.Name, key)
				}
			}
			w.Stop()
		}
	}()
	return c
}

func containerStarted(p *corev1.Pod, name string) bool {
	for _, cs := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
		if cs.Name == name && (cs.State.Running != nil || cs.State.Terminated != nil) {
			return true
		}
	}
	return false
}

// stepLogs are the main containers' logs of a BulkLoad's step pods (retries included), by pod
// instance.
func (c *logCapture) stepLogs(bulkLoad, step string) map[string]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]string{}
	for inst, node := range c.node {
		if strings.HasPrefix(node, bulkLoad+"-") && stepOf(node) == step {
			out[inst] = c.logs[inst+"/main"]
		}
	}
	return out
}

// hostOf is the Kubernetes node a captured pod instance ran on.
func (c *logCapture) hostOf(inst string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.host[inst]
}

// otherStep is the one pod instance of a BulkLoad's step other than skip (a retry or a
// later attempt, which Argo may have deleted since), with its log.
func (c *logCapture) otherStep(t *testing.T, bulkLoad, step string, skip *corev1.Pod) (inst, log string) {
	t.Helper()
	for i, l := range c.stepLogs(bulkLoad, step) {
		if i == instance(skip) {
			continue
		}
		if inst != "" {
			t.Fatalf("more than one %s pod of %s besides %s: %s and %s", step, bulkLoad, skip.Name, inst, i)
		}
		inst, log = i, l
	}
	if inst == "" {
		t.Fatalf("no %s pod of %s ran besides %s", step, bulkLoad, skip.Name)
	}
	return inst, log
}

func (c *logCapture) all() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	for k, v := range c.logs {
		fmt.Fprintf(&b, "=== %s\n%s", k, v)
	}
	return b.String()
}

// checkFetchRecovered: with MinIO gone mid-fetch, the fetch step still completed and verified
// the dump set (its report's done event), in the first pod or a retry.
func (s *suite) checkFetchRecovered(logs *logCapture, firstPod string) {
	s.t.Helper()
	fetches := logs.stepLogs(faults, "fetch")
	done := ""
	for pod, log := range fetches {
		if strings.Contains(log, `"event":"done"`) {
			done = pod
		}
	}
	if done == "" {
		s.t.Errorf("no fetch pod completed after MinIO was deleted; logs:\n%s", tail(fmt.Sprint(fetches), 4000))
		return
	}
	s.t.Logf("fetch recovered from MinIO's deletion: %d fetch pod(s), completed in %s (first %s)", len(fetches), done, firstPod)
}

// compareWithJena asks Fuseki the 17 probes of e2e/local and compares the answers with Fuseki's
// over Jena's own load of files (e2e_local.py compare-endpoint).
func (s *suite) compareWithJena(ctx context.Context, deployment string, files ...string) {
	s.t.Helper()
	if os.Getenv("E2E_COMPARE_WITH_JENA") == "0" {
		s.t.Logf("E2E_COMPARE_WITH_JENA=0: answers not compared with Jena's own load")
		return
	}
	s.waitDeployment(ctx, deployment, 5*time.Minute)
	addr, stop, err := s.portForward(s.runningPod(ctx, fusekiSelector(deployment)), 3030)
	if err != nil {
		s.t.Fatal(err)
	}
	defer stop()
	args := append([]string{filepath.Join(repoRoot(s.t), "e2e", "local", "e2e_local.py"), "compare-endpoint", "http://" + addr + "/ds/sparql"}, files...)
	out, err := exec.CommandContext(ctx, "python3", args...).Output()
	if err != nil {
		stderr := ""
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			stderr = string(ee.Stderr)
		}
		s.t.Fatalf("SPARQL answers differ from Jena's own load (or the reference failed): %v\n%s", err, stderr)
	}
	s.t.Logf("every SPARQL probe equals Jena's own load: %s", strings.TrimSpace(string(out)))
}

// checkOnlyHandedOffAnswered: since from, every answer the poller got was want. The chart's
// Fuseki is Ready only on the database of the handed-off revision (readinessChecksRevision), so
// the pod a helm upgrade starts on the chart's emptyDir before the operator puts the database
// back never gets a query, whether the BulkLoad says Ready or not.
func (s *suite) checkOnlyHandedOffAnswered(ctx context.Context, from time.Time, want, while string) {
	s.t.Helper()
	var other, failed int
	for _, p := range s.samples(ctx, from, time.Now()) {
		switch {
		case !p.ok():
			failed++
		case p.Value != want:
			other++
			if other <= 5 {
				s.t.Errorf("at %s Fuseki answered %q, not the handed-off %q", p.at().Format("15:04:05.000"), p.Value, want)
			}
		}
	}
	s.t.Logf("%s: %d answers from another database, %d failed requests", while, other, failed)
}

// checkNoSecrets greps everything the operator and the builds produced for the credentials:
// pod specs, container logs (also of pods gone since), events, BulkLoads and workflows.
func (s *suite) checkNoSecrets(ctx context.Context, captured ...*logCapture) {
	s.t.Helper()
	var b strings.Builder
	dump := func(what string, v any) { fmt.Fprintf(&b, "=== %s\n%s\n", what, yamlOf(v)) }
	pods, err := s.kube.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		s.t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Labels["app.kubernetes.io/name"] == minioName {
			continue // the test's own S3 server, which is given the credentials
		}
		dump("pod "+p.Name, p)
		for _, c := range append(p.Spec.InitContainers, p.Spec.Containers...) {
			fmt.Fprintf(&b, "=== log %s/%s\n%s\n", p.Name, c.Name, s.podLog(ctx, p.Name, c.Name))
		}
	}
	for _, c := range captured {
		b.WriteString(c.all())
	}
	ev, _ := s.kube.CoreV1().Events(s.ns).List(ctx, metav1.ListOptions{})
	dump("events", ev)
	for _, gvr := range []schema.GroupVersionResource{bulkLoadGVR, workflowGVR, snapshotGVR} {
		l, err := s.dyn.Resource(gvr).Namespace(s.ns).List(ctx, metav1.ListOptions{})
		if err == nil {
			dump(gvr.Resource, l.Object)
			for _, u := range l.Items {
				dump(gvr.Resource+"/"+u.GetName(), u.Object)
			}
		}
	}
	text := b.String()
	for what, secret := range map[string]string{"AWS_SECRET_ACCESS_KEY": s.pass, "AWS_ACCESS_KEY_ID": s.user} {
		if i := strings.Index(text, secret); i >= 0 {
			s.t.Errorf("the value of %s appears in what the cluster shows:\n...%s...", what, text[max(0, i-300):min(len(text), i+100)])
		}
	}
	s.t.Logf("credentials found in none of %d KiB of pod specs, logs, events, BulkLoads, workflows and snapshots", len(text)>>10)
}

// runReadme runs the n-th ```sh block after heading in README.md, as a user would paste it: bash
// with -e, the test's kubectl on PATH, a kubeconfig whose context is the test's namespace, and
// the block's BL=... line naming bulkLoad.
func (s *suite) runReadme(ctx context.Context, heading string, n int, bulkLoad string) {
	s.t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot(s.t), "README.md"))
	if err != nil {
		s.t.Fatal(err)
	}
	text := string(raw)
	i := strings.Index(text, "\n"+heading+"\n")
	if i < 0 {
		s.t.Fatalf("README.md has no %q", heading)
	}
	text = text[i:]
	var blocks []string
	for len(blocks) <= n {
		a := strings.Index(text, "```sh\n")
		if a < 0 {
			s.t.Fatalf("README.md: %s has %d sh blocks, want block %d", heading, len(blocks), n)
		}
		text = text[a+len("```sh\n"):]
		b := strings.Index(text, "```")
		blocks = append(blocks, text[:b])
		text = text[b+3:]
	}
	script := blocks[n]
	if n > 0 { // a later block uses the BL the first one set
		script = "BL=" + bulkLoad + "\n" + script
	}
	lines := strings.Split(script, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "BL=") {
			lines[i] = "BL=" + bulkLoad
		}
	}
	script = strings.Join(lines, "\n")
	kubectl, err := exec.LookPath(env("KUBECTL", "kubectl"))
	if err != nil {
		s.t.Fatalf("kubectl (KUBECTL): %v", err)
	}
	cfg := filepath.Join(s.t.TempDir(), "kubeconfig")
	if out, err := exec.CommandContext(ctx, kubectl, "config", "view", "--raw", "--flatten").Output(); err != nil {
		s.t.Fatalf("kubectl config view: %v", err)
	} else if err := os.WriteFile(cfg, out, 0o600); err != nil {
		s.t.Fatal(err)
	}
	if out, err := exec.CommandContext(ctx, kubectl, "--kubeconfig", cfg, "config", "set-context", "--current", "--namespace", s.ns).CombinedOutput(); err != nil {
		s.t.Fatalf("kubectl config set-context: %v\n%s", err, out)
	}
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+cfg, "PATH="+filepath.Dir(kubectl)+":"+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		s.t.Fatalf("README %s block %d failed: %v\n%s\n--- script:\n%s", heading, n, err, out, script)
	}
	s.t.Logf("README %s block %d ran as written:\n%s", heading, n, strings.TrimSpace(string(out)))
}

// fusekiSelector selects the pods of the chart's Fuseki Deployment or of a copy (cloneFuseki).
func fusekiSelector(deployment string) string {
	if deployment == fusekiName {
		return "app.kubernetes.io/component=fuseki,app.kubernetes.io/instance=" + release
	}
	return "app.kubernetes.io/name=" + deployment
}

// cloneFuseki makes a second Fuseki like the chart's (Deployment and Service), with its own
// name and labels and the chart's emptyDir, for a second BulkLoad to hand off to.
func (s *suite) cloneFuseki(ctx context.Context, name string) {
	d, err := s.kube.AppsV1().Deployments(s.ns).Get(ctx, fusekiName, metav1.GetOptions{})
	if err != nil {
		s.t.Fatal(err)
	}
	labels := map[string]string{"app.kubernetes.io/name": name}
	clone := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: *d.Spec.DeepCopy()}
	clone.Spec.Selector = &metav1.LabelSelector{MatchLabels: labels}
	clone.Spec.Template.Labels = labels
	clone.Spec.Template.Annotations = nil
	clone.Spec.Template.Spec.NodeSelector = nil // the scenario places it
	for i, v := range clone.Spec.Template.Spec.Volumes {
		if v.Name == "databases" {
			clone.Spec.Template.Spec.Volumes[i].VolumeSource = corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}
		}
	}
	if _, err := s.kube.AppsV1().Deployments(s.ns).Create(ctx, clone, metav1.CreateOptions{}); err != nil {
		s.t.Fatalf("Fuseki %s: %v", name, err)
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.ServiceSpec{Selector: labels,
		Ports: []corev1.ServicePort{{Name: "http", Port: 3030, TargetPort: intstr.FromString("http")}}}}
	if _, err := s.kube.CoreV1().Services(s.ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		s.t.Fatalf("Fuseki %s service: %v", name, err)
	}
	s.waitDeployment(ctx, name, 5*time.Minute)
}

// with is the suite for a subtest: the same cluster, namespace and credentials, reporting to t.
func (s *suite) with(t *testing.T) *suite {
	return &suite{t: t, cfg: s.cfg, kube: s.kube, dyn: s.dyn, ns: s.ns, user: s.user, pass: s.pass, helm: s.helm,
		timeout: s.timeout, stepLogs: map[string]string{}, scraped: map[string][]string{}}
}
