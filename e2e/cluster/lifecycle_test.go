//go:build e2e

package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
)

const buildTimeout = 10 * time.Minute

// TestLifecycle runs the scenarios of lifecycle_helpers_test.go's header: the GitOps BulkLoad's
// (1, 2, 4a, 5, 7) and, at the same time, the interrupted builds' (3, 4b, 5b), which serve a
// Fuseki of their own; then 6 over everything both left.
func TestLifecycle(t *testing.T) {
	s, ctx := newSuite(t)
	rec := &record{workflows: map[string]map[string]string{}}
	s.watchRecord(ctx, rec)
	operatorLogs := s.captureLogs(ctx, "app.kubernetes.io/instance="+release+",app.kubernetes.io/component=controller-manager")
	stepLogs := s.captureLogs(ctx, workflowPodLabel)
	prom := s.startPrometheus(ctx)
	dir := t.TempDir()
	t.Run("scenarios", func(t *testing.T) {
		t.Run("gitops", func(t *testing.T) { t.Parallel(); s.with(t).gitops(ctx, rec, dir) })
		t.Run("faults", func(t *testing.T) { t.Parallel(); s.with(t).faults(ctx, stepLogs, dir) })
	})

	// --- 6. Security, and what Prometheus saw ------------------------------------------------------
	s.checkNoSecrets(ctx, operatorLogs, stepLogs)
	s.checkServedNames(ctx, prom)
}

// gitops: scenarios 1, 2, 4a, 5 and 7 with the BulkLoad weekly, served by the chart's Fuseki.
func (s *suite) gitops(ctx context.Context, rec *record, dir string) {
	t := s.t
	// --- 1. GitOps: a new dated dump set is built and handed off under traffic -------------------
	bl := s.sampleBulkLoad()
	bl.SetName(weekly)
	setField(t, bl, weeklyPrefix+"*/", "spec", "source", "prefix")
	setField(t, bl, weeklyPrefix+"*/_SUCCESS", "spec", "source", "completion", "marker")
	setField(t, bl, []any{"*.nt.gz"}, "spec", "source", "include")
	setField(t, bl, "strict", "spec", "loader", "onError")
	unstructured.RemoveNestedField(bl.Object, "spec", "loader", "maxRejects")
	setField(t, bl, map[string]any{"mode": "watch", "interval": watchInterval.String(), "settlePeriod": settlePeriod.String()}, "spec", "trigger")
	onInfraNode(t, bl)
	dump := func(rev string, n int) string {
		d := filepath.Join(dir, rev)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return writeDump(t, d, "dump.nt.gz", rev, n)
	}
	const rev1, rev2, rev3, rev4 = "2026-11-01", "2026-11-08", "2026-11-15", "2026-11-22"
	s.upload(ctx, weeklyPrefix+rev1+"/", true, dump(rev1, 20000))
	s.createBulkLoad(ctx, bl)
	u := s.readyWith(ctx, weekly, "", buildTimeout)
	r1 := statusString(u, "lastBuiltRevision")
	s.waitDeployment(ctx, fusekiName, 5*time.Minute)
	if got := s.fusekiAnswer(ctx, fusekiName, revisionQuery); got != rev1 {
		t.Fatalf("after the first build Fuseki answers %q, want %q", got, rev1)
	}
	servedSince := time.Now()
	s.startPoller(ctx)

	// An upload without its marker starts nothing: the first listing that sees it still
	// resolves to the built set, unchanged (had it taken the new set, it would be settling).
	fingerprint1 := statusString(u, "source", "fingerprint")
	uploaded := time.Now()
	s.upload(ctx, weeklyPrefix+rev2+"/", false, dump(rev2, 20000))
	u = s.listedAfter(ctx, weekly, uploaded)
	if got := statusString(u, "lastBuiltRevision"); got != r1 || statusString(u, "sourceRevision") != "" || statusString(u, "phase") != "Ready" ||
		statusString(u, "source", "fingerprint") != fingerprint1 || statusString(u, "source", "reason") != "SourceSettled" {
		t.Fatalf("a dump set without its marker started something, or the listing after it changed (fingerprint was %s): %s", fingerprint1, yamlOf(u.Object["status"]))
	}
	if wfs := rec.workflowsFor(weekly, ""); len(wfs) != 1 {
		t.Fatalf("workflows of %s: %v, want only the first build's", weekly, wfs)
	}

	// The marker; then, while the set settles, one more file: the settle clock starts again and
	// the build that follows has the late file too.
	s.upload(ctx, weeklyPrefix+rev2+"/", true)
	s.waitBulkLoad(ctx, weekly, "settling the complete dump set", watchInterval+settlePeriod+30*time.Second, func(u *unstructured.Unstructured) bool {
		return strings.Contains(yamlOf(u.Object["status"]), "unchanged for")
	})
	late := filepath.Join(dir, "late")
	if err := os.MkdirAll(late, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(late, "late.nt"), []byte("<urn:e2e:late> <urn:e2e:value> \"late\" .\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gz := gzipFile(t, filepath.Join(late, "late.nt"))
	s.upload(ctx, weeklyPrefix+rev2+"/", false, gz)

	// 7a. helm upgrade to a new operator image while this build runs: it completes, once.
	s.waitBulkLoad(ctx, weekly, "loading "+rev2, buildTimeout, func(u *unstructured.Unstructured) bool {
		return statusString(u, "phase") == "Loading"
	})
	from2 := time.Now().Add(-time.Second)
	if img := os.Getenv("E2E_OPERATOR_UPGRADE_IMAGE"); img != "" {
		repo, tag := splitImage(img)
		s.helmUpgrade(ctx, "image.repository="+repo, "image.tag="+tag)
	} else {
		s.helmUpgrade(ctx, "podAnnotations.e2e-upgrade="+randHex(4))
	}
	u = s.readyWith(ctx, weekly, r1, buildTimeout)
	r2 := statusString(u, "lastBuiltRevision")
	rec.checkServingWhileBuilding(t, weekly, servedSince)
	if wfs := rec.workflowsFor(weekly, r2); len(wfs) != 1 {
		t.Errorf("revision %s was built by workflows %v, want exactly one (across the operator's upgrade)", r2, wfs)
	}
	s.waitDeployment(ctx, fusekiName, 5*time.Minute)
	h2 := s.checkHandoff(ctx, from2, rev1, rev2)
	if got := s.fusekiAnswer(ctx, fusekiName, lateQuery); got != "late" {
		t.Errorf("the build of %s lacks the file uploaded while it settled (answer %q)", rev2, got)
	}
	if snaps := s.snapshotNames(ctx, weekly); len(snaps) != 2 {
		t.Errorf("snapshots after two builds: %v, want both (the previous one is kept for rollback)", snaps)
	}

	// 7b. Drift: a helm upgrade puts the chart's emptyDir back into Fuseki's pod template; the
	// operator restores the handed-off volume, and no query is answered from anything else (the
	// pod on the emptyDir never passes the chart's revision readiness check).
	claim2 := s.servingClaim(ctx, fusekiName)
	fromDrift := time.Now()
	s.helmUpgrade(ctx) // unchanged values: helm's three-way merge still reverts the live volume
	s.waitHandoffRepaired(ctx, fusekiName, claim2, "after helm upgrade")
	s.readyWith(ctx, weekly, r1, time.Minute)
	s.checkOnlyHandedOffAnswered(ctx, fromDrift, rev2, "drift after helm upgrade")

	// 7c. The same drift while the operator is away (scaled to 0, as it is for a moment during its
	// own rollout): nothing puts the volume back, the Deployment surges a pod onto the emptyDir,
	// and that pod starts (its dataset answers) but never becomes Ready, so the old pod keeps
	// serving and no query reaches the empty database. Then the operator returns and repairs it.
	fromAway := time.Now()
	s.scaleOperator(ctx, 0)
	s.driftToEmptyDir(ctx, fusekiName)
	s.checkSurgeNeverReady(ctx, fusekiName)
	s.checkOnlyHandedOffAnswered(ctx, fromAway, rev2, "drift while the operator was away")
	s.scaleOperator(ctx, 1)
	s.waitHandoffRepaired(ctx, fusekiName, claim2, "after the operator returned")
	s.readyWith(ctx, weekly, r1, time.Minute)

	// Snapshots beyond keep are pruned; the operator pod deleted mid-build: the new leader adopts
	// the running workflow and starts no second one.
	s.upload(ctx, weeklyPrefix+rev3+"/", true, dump(rev3, 20000))
	s.waitBulkLoad(ctx, weekly, "loading "+rev3, watchInterval+settlePeriod+buildTimeout, func(u *unstructured.Unstructured) bool {
		return statusString(u, "phase") == "Loading"
	})
	from3 := time.Now().Add(-time.Second)
	s.deletePod(ctx, s.operatorPod(ctx), "the operator, mid-build")
	u = s.readyWith(ctx, weekly, r2, buildTimeout)
	r3 := statusString(u, "lastBuiltRevision")
	if wfs := rec.workflowsFor(weekly, r3); len(wfs) != 1 {
		t.Errorf("revision %s was built by workflows %v, want exactly one (the new operator adopts the running one)", r3, wfs)
	}
	s.waitDeployment(ctx, fusekiName, 5*time.Minute)
	s.checkHandoff(ctx, from3, rev2, rev3)
	snaps := s.snapshotNames(ctx, weekly)
	if len(snaps) != 2 || !slices.Contains(snaps, statusString(u, "currentSnapshot")) {
		t.Errorf("snapshots after three builds with keep 2: %v, want the current and the previous one", snaps)
	}
	s.checkBuildDurations(ctx, weekly)
	// The same revision is never built twice, also after the restart: the next listing (which
	// would start a build in the same reconcile) starts none.
	s.listedAfter(ctx, weekly, time.Now())
	time.Sleep(3 * time.Second) // the workflow recorder's watch
	if wfs := rec.workflowsFor(weekly, ""); len(wfs) != 3 {
		t.Errorf("workflows of %s after three revisions: %v, want three", weekly, wfs)
	}

	// --- 2. Rollback to the previous snapshot, as the README says ------------------------------
	fromRollback := time.Now()
	s.rollback(ctx, u, rev2)
	s.checkHandoff(ctx, fromRollback, rev3, rev2)
	fromForward := time.Now()
	s.rollForward(ctx)
	s.checkHandoff(ctx, fromForward, rev2, rev3)

	// --- 4a. A syntax error under onError: strict fails finally; Fuseki keeps serving ---------
	fromBad := time.Now()
	pvcsBefore := s.pvcNames(ctx, weekly)
	bad := dump(rev4, 1000)
	appendPlain(t, bad, "<urn:e2e:x> <urn:e2e:y> \"unterminated .\n")
	s.upload(ctx, weeklyPrefix+rev4+"/", true, bad)
	u = s.waitBulkLoad(ctx, weekly, "failing on the syntax error", watchInterval+settlePeriod+buildTimeout, func(u *unstructured.Unstructured) bool {
		return statusString(u, "phase") == "Failed"
	})
	s.checkFinalFailure(ctx, u, `dump\.nt\.gz:\d+:\d+: `, "BadInput") // file:line:column
	s.waitAlertFiring(ctx, "RDFBulkLoadBuildFailed", weekly)
	s.checkSteady(ctx, fromBad, rev3, "a build failed on a syntax error")
	if got := s.pvcNames(ctx, weekly); !slices.Equal(got, pvcsBefore) {
		t.Errorf("PVCs after the failed build %v, before it %v: the failed build left volumes behind", got, pvcsBefore)
	}

	// --- 5. Deletion and recreation under the same name -----------------------------------------
	retained := s.snapshotNames(ctx, weekly)
	servingClaim := s.servingClaim(ctx, fusekiName)
	s.deleteBulkLoad(ctx, weekly)
	if wfs, _ := s.dyn.Resource(workflowGVR).Namespace(s.ns).List(ctx, metav1.ListOptions{LabelSelector: "rdf.bulkload.io/bulkload=" + weekly}); len(wfs.Items) != 0 {
		t.Errorf("workflows left after deleting the BulkLoad: %d", len(wfs.Items))
	}
	if got := s.snapshotNames(ctx, weekly); !slices.Equal(got, retained) {
		t.Errorf("snapshots after deleting a BulkLoad with onDelete Retain: %v, want %v", got, retained)
	}
	if got := s.pvcNames(ctx, weekly); !slices.Contains(got, servingClaim) {
		t.Errorf("the serving volume %s was deleted with the BulkLoad (PVCs %v)", servingClaim, got)
	}
	s.checkSteady(ctx, fromBad, rev3, "the BulkLoad was deleted")
	// Recreated under the same name, building something else: the old one's retained
	// snapshots and the volume Fuseki mounts stay untouched.
	again := s.sampleBulkLoad()
	again.SetName(weekly)
	setField(t, again, weeklyPrefix+rev1+"/", "spec", "source", "prefix")
	setField(t, again, weeklyPrefix+rev1+"/_SUCCESS", "spec", "source", "completion", "marker")
	setField(t, again, []any{"*.nt.gz"}, "spec", "source", "include")
	unstructured.RemoveNestedField(again.Object, "spec", "serving")
	s.createBulkLoad(ctx, again)
	s.readyWith(ctx, weekly, "", buildTimeout)
	for _, snap := range retained {
		if _, err := s.dyn.Resource(snapshotGVR).Namespace(s.ns).Get(ctx, snap, metav1.GetOptions{}); err != nil {
			t.Errorf("the recreated BulkLoad touched the old one's retained snapshot %s: %v", snap, err)
		}
	}
	if s.servingClaim(ctx, fusekiName) != servingClaim || !slices.Contains(s.pvcNames(ctx, weekly), servingClaim) {
		t.Errorf("the recreated BulkLoad touched the serving volume %s", servingClaim)
	}
	s.deleteBulkLoad(ctx, weekly)
	t.Logf("handoff under traffic (first GitOps rebuild): longest gap %v, %d of %d requests failed", h2.maxGap, h2.failed, h2.requests)
}

// faults: scenarios 3, 4b and 5b with the BulkLoad faults, served by a Fuseki of its own.
func (s *suite) faults(ctx context.Context, logs *logCapture, dir string) {
	t := s.t
	// --- 3. Faults during a build ----------------------------------------------------------------
	s.cloneFuseki(ctx, faultsFuseki)
	big := writeDump(t, dir, "faults.nt.gz", "faults", faultTriples())
	s.upload(ctx, faultsPrefix, true, big)
	fb := s.sampleBulkLoad()
	fb.SetName(faults)
	setField(t, fb, faultsPrefix, "spec", "source", "prefix")
	setField(t, fb, faultsPrefix+"_SUCCESS", "spec", "source", "completion", "marker")
	setField(t, fb, "Delete", "spec", "snapshot", "onDelete")
	setField(t, fb, faultsFuseki, "spec", "serving", "name")
	// one thread at a third of a core: a load long enough to interrupt after its parse checkpoint
	// and for Prometheus to scrape it while it parses
	setField(t, fb, int64(1), "spec", "loader", "threads")
	setField(t, fb, map[string]any{"requests": map[string]any{"cpu": "300m", "memory": "1Gi"},
		"limits": map[string]any{"cpu": "300m", "memory": "2Gi"}}, "spec", "loader", "resources")
	// and a slow fetch: MinIO goes away while it runs, Prometheus scrapes it
	setField(t, fb, map[string]any{"requests": map[string]any{"cpu": "50m", "memory": "128Mi"},
		"limits": map[string]any{"cpu": "50m", "memory": "256Mi"}}, "spec", "fetch", "resources")
	fromFaults := time.Now()
	s.createBulkLoad(ctx, fb)
	// MinIO goes away while the fetch step runs: the step retries and completes, verified.
	fetch := s.stepPod(ctx, faults+"-", "fetch")
	s.deletePod(ctx, s.runningPod(ctx, "app.kubernetes.io/name="+minioName), "MinIO, during the fetch")
	// The loader pod is deleted after the parse phase's checkpoint: the retry resumes from it.
	load := s.stepPod(ctx, faults+"-", "load")
	s.waitLogLine(ctx, load.Name, `"event":"phase_done","phase":"parse"`)
	s.deletePod(ctx, load.Name, "the loader's, after its parse checkpoint")
	u := s.readyWith(ctx, faults, "", buildTimeout)
	s.checkResumed(logs, load)
	s.checkFetchRecovered(logs, fetch.Name)
	s.checkStatementsRose(ctx, faults, fromFaults)
	s.compareWithJena(ctx, faultsFuseki, big)

	// The loader process SIGKILLed inside its pod (as by the OOM killer): retried, resumed.
	if os.Getenv("E2E_NODE_LOCAL") == "1" {
		r, first := statusString(u, "lastBuiltRevision"), statusString(u, "workflow", "name")
		s.patchBulkLoad(ctx, faults, map[string]any{"trigger": map[string]any{"rebuild": "sigkill"}})
		u = s.waitBulkLoad(ctx, faults, "building again", time.Minute, func(u *unstructured.Unstructured) bool {
			wf := statusString(u, "workflow", "name")
			return wf != "" && wf != first
		})
		load = s.stepPod(ctx, statusString(u, "workflow", "name"), "load") // its nodes: <workflow>[1].load
		s.waitLogLine(ctx, load.Name, `"event":"phase_done","phase":"parse"`)
		s.killLoader(load)
		s.readyWith(ctx, faults, r, buildTimeout)
		s.checkResumed(logs, load)
		s.compareWithJena(ctx, faultsFuseki, big)
	} else {
		t.Logf("E2E_NODE_LOCAL is not 1: the loader process is not SIGKILLed (the node is not this machine)")
	}

	// --- 4b. A memory budget too small fails finally, with the numbers ---------------------------
	pvcsBefore, served := s.pvcNames(ctx, faults), s.servingClaim(ctx, faultsFuseki)
	s.patchBulkLoad(ctx, faults, map[string]any{"loader": map[string]any{"memoryBudget": "64Mi"}})
	u = s.waitBulkLoad(ctx, faults, "failing on the memory budget", buildTimeout, func(u *unstructured.Unstructured) bool {
		return statusString(u, "phase") == "Failed"
	})
	s.checkFinalFailure(ctx, u, `below the minimum of \d+ MiB`, "ResourceExhausted") // the numbers
	if got := s.servingClaim(ctx, faultsFuseki); got != served {
		t.Errorf("after the failed build %s mounts %q, before it %q", faultsFuseki, got, served)
	}
	if got := s.fusekiAnswer(ctx, faultsFuseki, revisionQuery); got != "faults" {
		t.Errorf("after the failed build %s answers %q, want the previous database's \"faults\"", faultsFuseki, got)
	}
	// the failed build's own volumes are kept for an attempt that resumes on them (exit 5 keeps
	// work); nothing else is created or deleted
	kept, _, _ := unstructured.NestedStringSlice(u.Object, "status", "keptVolumes", "claims")
	if len(kept) != 2 {
		t.Errorf("status.keptVolumes.claims %v after a failure on the memory budget, want its data and scratch volumes", kept)
	}
	want := slices.Sorted(slices.Values(append(slices.Clone(pvcsBefore), kept...)))
	if got := s.pvcNames(ctx, faults); !slices.Equal(got, want) {
		t.Errorf("PVCs after the failed build %v, want those before it %v and the kept %v", got, pvcsBefore, kept)
	}

	// --- 5b. Deletion with onDelete: Delete ----------------------------------------------------
	s.deleteBulkLoad(ctx, faults)
	// all but the snapshot of the volume Fuseki still mounts (kept with it). The operator deletes
	// them as it releases its finalizer; the snapshot controller and the CSI driver (on the build's
	// node) then remove each with its content, which takes a moment: gone within 2 min.
	servedSnapshot := []string{faults + "-" + strings.TrimPrefix(served, faults+"-db-")}
	var left []string
	if err := wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		left = s.snapshotNames(ctx, faults)
		return slices.Equal(left, servedSnapshot), nil
	}); err != nil {
		t.Errorf("snapshots left 2 min after deleting a BulkLoad with onDelete Delete: %v, want only the served volume's %v", left, servedSnapshot)
	}
	if got := s.pvcNames(ctx, ""); !slices.Contains(got, served) {
		t.Errorf("the serving volume %s was deleted with the BulkLoad (PVCs %v)", served, got)
	}
}

func setField(t *testing.T, u *unstructured.Unstructured, v any, path ...string) {
	t.Helper()
	if err := unstructured.SetNestedField(u.Object, v, path...); err != nil {
		t.Fatal(err)
	}
}

// faultTriples sizes the interrupted builds' dump: long enough that the load step is caught
// between its parse checkpoint and its end.
func faultTriples() int {
	n, err := strconv.Atoi(env("E2E_FAULT_TRIPLES", "1500000"))
	if err != nil || n < 1 {
		panic("E2E_FAULT_TRIPLES must be a positive number")
	}
	return n
}

// deleteBulkLoad deletes a BulkLoad and waits until its finalizer has run.
func (s *suite) deleteBulkLoad(ctx context.Context, name string) {
	if err := s.dyn.Resource(bulkLoadGVR).Namespace(s.ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		s.t.Fatalf("delete BulkLoad %s: %v", name, err)
	}
	if err := wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := s.dyn.Resource(bulkLoadGVR).Namespace(s.ns).Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	}); err != nil {
		s.t.Fatalf("BulkLoad %s not gone: %v", name, err)
	}
	s.t.Logf("BulkLoad %s deleted", name)
}

// checkFinalFailure: phase Failed, Stalled=True whose message matches want, a Warning event
// saying so, and the failure's reason.
func (s *suite) checkFinalFailure(ctx context.Context, u *unstructured.Unstructured, want, reason string) {
	s.t.Helper()
	re := regexp.MustCompile(want)
	stalled, _ := condition(u, "Stalled")
	msg := conditionMessage(u, "Stalled")
	if stalled != "True" || !re.MatchString(msg) {
		s.t.Errorf("Stalled=%s %q: want True with %q in the message", stalled, msg, want)
	}
	if got, _, _ := unstructured.NestedString(u.Object, "status", "lastFailure", "reason"); got != reason {
		s.t.Errorf("lastFailure.reason %q, want %q", got, reason)
	}
	ev, err := s.kube.CoreV1().Events(s.ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + u.GetName()})
	if err != nil {
		s.t.Fatal(err)
	}
	for _, e := range ev.Items {
		if e.Type == corev1.EventTypeWarning && re.MatchString(e.Message) {
			s.t.Logf("final failure: %s; event %s: %s", msg, e.Reason, e.Message)
			return
		}
	}
	s.t.Errorf("no Warning event of %s names %q", u.GetName(), want)
}

func conditionMessage(u *unstructured.Unstructured, typ string) string {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ {
			return fmt.Sprint(m["message"])
		}
	}
	return ""
}

// checkResumed: after the load pod interrupted was stopped, another load pod of the same build
// resumed from the checkpoint (the loader's "resuming" event) and finished.
func (s *suite) checkResumed(logs *logCapture, interrupted *corev1.Pod) {
	s.t.Helper()
	var resumed string
	all := logs.stepLogs(faults, "load")
	for pod, log := range all {
		if pod != instance(interrupted) && strings.Contains(log, `"event":"resuming"`) && strings.Contains(log, `"event":"summary"`) {
			resumed = pod
		}
	}
	if resumed == "" {
		s.t.Errorf("no load pod resumed after %s was interrupted; logs of %d load pods:\n%s", interrupted.Name, len(all), tail(fmt.Sprint(all), 4000))
		return
	}
	for _, line := range strings.Split(all[resumed], "\n") {
		if strings.Contains(line, `"event":"resuming"`) {
			s.t.Logf("load pod %s resumed after %s was interrupted: %s", resumed, instance(interrupted), line)
			break
		}
	}
}

// rollback runs the README's rollback procedure (its first sh block under "Rollback") as written,
// with kubectl in the test's namespace, for BulkLoad weekly; want is the revision the previous
// snapshot holds.
func (s *suite) rollback(ctx context.Context, u *unstructured.Unstructured, want string) {
	snaps, _, _ := unstructured.NestedSlice(u.Object, "status", "snapshots")
	if len(snaps) < 2 {
		s.t.Fatalf("no previous snapshot to roll back to: %v", snaps)
	}
	prev := fmt.Sprint(snaps[1].(map[string]any)["name"])
	s.runReadme(ctx, "### Rollback", 0, weekly)
	u = s.getBulkLoad(ctx, weekly)
	if got := statusString(u, "servedSnapshot"); got != prev {
		s.t.Errorf("after the README's rollback status.servedSnapshot is %q, want the previous snapshot %s", got, prev)
	}
	if got := s.fusekiAnswer(ctx, fusekiName, revisionQuery); got != want {
		s.t.Errorf("after the README's rollback Fuseki answers %q, want %q", got, want)
	}
}

// rollForward runs the README's second block under "Rollback" (remove the pin) and waits until
// the newest snapshot is served again.
func (s *suite) rollForward(ctx context.Context) {
	s.runReadme(ctx, "### Rollback", 1, weekly)
	s.waitBulkLoad(ctx, weekly, "serving the newest snapshot again", 5*time.Minute, func(u *unstructured.Unstructured) bool {
		ready, _ := condition(u, "Ready")
		return ready == "True" && statusString(u, "servedSnapshot") == statusString(u, "currentSnapshot")
	})
}
