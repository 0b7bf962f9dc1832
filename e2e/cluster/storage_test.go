//go:build e2e

package cluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
)

// The storage suite: the same build on each kind of storage a multi-node cluster offers (the
// local cluster's CSI driver serves all three, e2e/csi-hostpath/README.md), and where the pods
// land:
//
//   - local (node-local, like TopoLVM): the build is pinned to the second node, the serving pod
//     is not; the database's snapshot lives on the build's node, so the restored volume and the
//     serving pod must land there.
//   - network (like EBS): the build is pinned to one node, Fuseki to the other; the restored
//     volume has no node affinity.
//
// Each kind's build, snapshot and restore times are logged ("storage kind ...:") for
// docs/local-cluster.md.
const (
	hostnameLabel = "kubernetes.io/hostname"
	storageDump   = 200000 // triples: a database of a few tens of MB to snapshot and restore
)

// storageKind is one StorageClass of the cluster under test and what it promises.
type storageKind struct {
	name          string // local, network
	storageClass  string
	snapshotClass string
	nodeLocal     bool // volumes and snapshots live on one node
}

// storageKinds are the kinds the environment names (e2e-cluster-local sets them all).
func storageKinds(t *testing.T) []storageKind {
	var kinds []storageKind
	for _, k := range []storageKind{
		{name: "local", storageClass: os.Getenv("E2E_LOCAL_STORAGE_CLASS"), snapshotClass: os.Getenv("E2E_LOCAL_SNAPSHOT_CLASS"), nodeLocal: true},
		{name: "network", storageClass: os.Getenv("E2E_NETWORK_STORAGE_CLASS"), snapshotClass: os.Getenv("E2E_NETWORK_SNAPSHOT_CLASS")},
	} {
		if k.storageClass == "" || k.snapshotClass == "" {
			t.Logf("storage kind %s: E2E_%s_STORAGE_CLASS or E2E_%s_SNAPSHOT_CLASS unset, not run", k.name,
				strings.ToUpper(k.name), strings.ToUpper(k.name))
			continue
		}
		kinds = append(kinds, k)
	}
	return kinds
}

func TestStorageKinds(t *testing.T) {
	kinds := storageKinds(t)
	if len(kinds) == 0 {
		t.Fatal("no storage kind named (E2E_LOCAL_STORAGE_CLASS, E2E_NETWORK_STORAGE_CLASS ...; see e2e/cluster/README.md); E2E_SKIP=TestStorageKinds leaves this test out")
	}
	s, ctx := newSuite(t)
	nodes := s.readyNodes(ctx)
	if len(nodes) < 2 {
		t.Fatalf("the storage scenarios need two Ready nodes, the cluster has %v", nodes)
	}
	stepLogs := s.captureLogs(ctx, workflowPodLabel) // Argo deletes succeeded step pods
	dir := t.TempDir()
	t.Run("kinds", func(t *testing.T) {
		for _, k := range kinds {
			t.Run(k.name, func(t *testing.T) {
				t.Parallel()
				s.with(t).storageScenario(ctx, k, nodes[0], nodes[1], dir)
			})
		}
		if sc := os.Getenv("E2E_NO_SNAPSHOTS_STORAGE_CLASS"); sc != "" {
			t.Run("no-snapshots", func(t *testing.T) { t.Parallel(); s.with(t).snapshotlessStalls(ctx, sc, dir) })
		} else {
			t.Run("no-snapshots", func(t *testing.T) {
				t.Fatal("E2E_NO_SNAPSHOTS_STORAGE_CLASS unset; E2E_SKIP=TestStorageKinds/kinds/no-snapshots leaves it out")
			})
		}
	})
	if sc := os.Getenv("E2E_SIZED_STORAGE_CLASS"); sc != "" && kinds[0].nodeLocal {
		t.Run("scratch-too-small", func(t *testing.T) { s.with(t).scratchTooSmall(ctx, stepLogs, sc, kinds[0].snapshotClass, dir) })
	} else {
		t.Run("scratch-too-small", func(t *testing.T) {
			t.Fatal("E2E_SIZED_STORAGE_CLASS unset or the first storage kind not node-local; E2E_SKIP=TestStorageKinds/scratch-too-small leaves it out")
		})
	}
	// last: it takes a node away (not E2E_INFRA_NODE, where the operator and MinIO run)
	if control, infra := os.Getenv("E2E_NODE_CONTROL"), os.Getenv("E2E_INFRA_NODE"); control != "" && infra != "" && kinds[0].nodeLocal {
		t.Run("node-lost", func(t *testing.T) { s.with(t).nodeLostMidBuild(ctx, stepLogs, kinds[0], control, infra, nodes, dir) })
	} else {
		t.Run("node-lost", func(t *testing.T) {
			t.Fatal("E2E_NODE_CONTROL or E2E_INFRA_NODE unset, or the first storage kind not node-local; E2E_SKIP=TestStorageKinds/node-lost leaves it out")
		})
	}
}

// snapshotlessStalls: a BulkLoad on a StorageClass whose provisioner cannot snapshot ends
// Stalled/SnapshotUnsupported before anything is created, and says what is missing.
func (s *suite) snapshotlessStalls(ctx context.Context, storageClass, dir string) {
	t := s.t
	const name = "storage-no-snapshots"
	bl, _ := s.dumpBulkLoad(ctx, name, "storage/no-snapshots/", dir, 1000)
	setField(t, bl, storageClass, "spec", "database", "storageClassName")
	unstructured.RemoveNestedField(bl.Object, "spec", "snapshot", "volumeSnapshotClassName") // the driver's default, if any
	created := time.Now()
	s.createBulkLoad(ctx, bl)
	var msg string
	s.waitBulkLoad(ctx, name, "Stalled/SnapshotUnsupported", time.Minute, func(u *unstructured.Unstructured) bool {
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if m["type"] == "Stalled" && m["status"] == "True" && m["reason"] == "SnapshotUnsupported" {
				msg = fmt.Sprint(m["message"])
				return true
			}
		}
		return false
	})
	t.Logf("Stalled/SnapshotUnsupported %.0f s after the BulkLoad was created: %s", time.Since(created).Seconds(), msg)
	if !strings.Contains(msg, "VolumeSnapshotClass") {
		t.Errorf("the message does not say what is missing (a VolumeSnapshotClass for the driver): %q", msg)
	}
	// nothing was created, and nothing is, a while later
	time.Sleep(10 * time.Second)
	if pvcs := s.pvcNames(ctx, name); len(pvcs) != 0 {
		t.Errorf("volumes created for a class that cannot snapshot: %v", pvcs)
	}
	wfs, err := s.dyn.Resource(workflowGVR).Namespace(s.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range wfs.Items {
		if strings.HasPrefix(w.GetName(), name) {
			t.Errorf("workflow %s created for a class that cannot snapshot", w.GetName())
		}
	}
}

// nodeLostMidBuild: the node running a build's load step stops (kubelet, kube-proxy,
// containerd and its containers, as a machine that dies; its disks stay). The build says so
// (a NodeLost event), starts a new attempt on the other node, reaches Ready, and Fuseki's
// answers equal Jena's own load of the dump. The node comes back at the end.
func (s *suite) nodeLostMidBuild(ctx context.Context, logs *logCapture, k storageKind, control, survivor string, nodes []string, dir string) {
	t := s.t
	const name = "storage-node-lost"
	fuseki := name + "-fuseki"
	if !slices.Contains(nodes, survivor) {
		t.Fatalf("E2E_INFRA_NODE %s is not a Ready node (%v)", survivor, nodes)
	}
	doomed := nodes[slices.IndexFunc(nodes, func(n string) bool { return n != survivor })]
	// Fuseki on the node that stays; the first attempt on the one that goes (the survivor is
	// cordoned until the load runs)
	s.cloneFuseki(ctx, fuseki)
	s.pinDeployment(ctx, fuseki, survivor)
	bl, dump := s.storageBulkLoad(ctx, name, "node-lost", k, fuseki, dir, storageDump)
	setField(t, bl, "30s", "spec", "build", "nodeLossGracePeriod")
	// one thread at a third of a core: still loading when the node goes
	setField(t, bl, int64(1), "spec", "loader", "threads")
	setField(t, bl, map[string]any{"requests": map[string]any{"cpu": "300m", "memory": "1Gi"},
		"limits": map[string]any{"cpu": "300m", "memory": "2Gi"}}, "spec", "loader", "resources")
	s.cordon(ctx, survivor, true)
	cordoned := true
	defer func() {
		if cordoned {
			s.cordon(ctx, survivor, false)
		}
	}()
	s.createBulkLoad(ctx, bl)
	first := s.stepPod(ctx, name+"-", "load")
	s.cordon(ctx, survivor, false)
	cordoned = false
	if first.Spec.NodeName != doomed {
		t.Fatalf("the first load runs on %s, want %s (the other node was cordoned)", first.Spec.NodeName, doomed)
	}
	stopped := time.Now()
	if out, err := exec.CommandContext(ctx, "sh", "-c", control+` node-stop "$0"`, doomed).CombinedOutput(); err != nil {
		t.Fatalf("stopping node %s: %v\n%s", doomed, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("sh", "-c", control+` node-start "$0"`, doomed).CombinedOutput(); err != nil {
			t.Errorf("starting node %s again: %v\n%s", doomed, err, out)
		}
	})
	s.readyWith(ctx, name, "", 2*buildTimeout)
	t.Logf("Ready %.0f s after node %s stopped", time.Since(stopped).Seconds(), doomed)
	second, _ := logs.otherStep(t, name, "load", first)
	if got := logs.hostOf(second); got != survivor {
		t.Errorf("the new attempt's load %s ran on %s, want %s", second, got, survivor)
	}
	ev, err := s.kube.CoreV1().Events(s.ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	said := false
	for _, e := range ev.Items {
		if e.Reason == "NodeLost" && strings.Contains(e.Message, doomed) {
			said = true
		}
	}
	if !said {
		t.Errorf("no NodeLost event naming %s", doomed)
	}
	if got := s.fusekiAnswer(ctx, fuseki, revisionQuery); got != name {
		t.Errorf("Fuseki answers %q, want %q", got, name)
	}
	s.compareWithJena(ctx, fuseki, dump)
}

// cordon marks a node (un)schedulable, as kubectl cordon/uncordon does.
func (s *suite) cordon(ctx context.Context, node string, on bool) {
	patch := fmt.Sprintf(`{"spec":{"unschedulable":%t}}`, on)
	if _, err := s.kube.CoreV1().Nodes().Patch(ctx, node, "application/strategic-merge-patch+json", []byte(patch), metav1.PatchOptions{}); err != nil {
		s.t.Fatalf("cordon %s=%t: %v", node, on, err)
	}
}

// readyNodes lists the names of the Ready nodes, sorted.
func (s *suite) readyNodes(ctx context.Context) []string {
	list, err := s.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		s.t.Fatal(err)
	}
	var names []string
	for _, n := range list.Items {
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				names = append(names, n.Name)
			}
		}
	}
	slices.Sort(names)
	return names
}

// dumpBulkLoad writes a dump of n triples named after the BulkLoad (under dir), uploads it
// with its marker under prefix, and returns the sample BulkLoad named name reading it, and the
// dump's path.
func (s *suite) dumpBulkLoad(ctx context.Context, name, prefix, dir string, n int) (*unstructured.Unstructured, string) {
	t := s.t
	d := filepath.Join(dir, strings.ReplaceAll(strings.TrimSuffix(prefix, "/"), "/", "-"))
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	dump := writeDump(t, d, "dump.nt.gz", name, n)
	s.upload(ctx, prefix, true, dump)
	bl := s.sampleBulkLoad()
	bl.SetName(name)
	setField(t, bl, prefix, "spec", "source", "prefix")
	setField(t, bl, prefix+"_SUCCESS", "spec", "source", "completion", "marker")
	return bl, dump
}

// storageBulkLoad uploads a dump of n triples under storage/<key>/ and returns it with the
// BulkLoad name that builds it on storage kind k, served by the Deployment fuseki.
func (s *suite) storageBulkLoad(ctx context.Context, name, key string, k storageKind, fuseki, dir string, n int) (*unstructured.Unstructured, string) {
	t := s.t
	bl, dump := s.dumpBulkLoad(ctx, name, "storage/"+key+"/", dir, n)
	setField(t, bl, k.storageClass, "spec", "database", "storageClassName")
	setField(t, bl, k.snapshotClass, "spec", "snapshot", "volumeSnapshotClassName")
	setField(t, bl, "Delete", "spec", "snapshot", "onDelete")
	setField(t, bl, fuseki, "spec", "serving", "name")
	return bl, dump
}

// storageScenario builds one dump on kind k with the build pinned to buildNode; a network
// volume is served from the other node (Fuseki pinned there), a node-local one wherever the
// scheduler must put it (Fuseki unpinned).
func (s *suite) storageScenario(ctx context.Context, k storageKind, otherNode, buildNode, dir string) {
	t := s.t
	name := "storage-" + k.name
	fuseki := name + "-fuseki"
	s.cloneFuseki(ctx, fuseki)
	if !k.nodeLocal {
		s.pinDeployment(ctx, fuseki, otherNode)
	}
	bl, _ := s.storageBulkLoad(ctx, name, k.name, k, fuseki, dir, storageDump)
	setField(t, bl, map[string]any{hostnameLabel: buildNode}, "spec", "build", "nodeSelector")

	phases := s.timePhases(ctx, name)
	s.createBulkLoad(ctx, bl)
	load := s.stepPod(ctx, name+"-", "load")
	if load.Spec.NodeName != buildNode {
		t.Errorf("the load step runs on %s, want %s (spec.build.nodeSelector)", load.Spec.NodeName, buildNode)
	}
	u := s.readyWith(ctx, name, "", buildTimeout)
	at := phases()

	// the restored volume and the pod serving it
	claim := s.servingClaim(ctx, fuseki)
	if claim == "" {
		t.Fatalf("%s serves no volume after Ready", fuseki)
	}
	pvc, err := s.kube.CoreV1().PersistentVolumeClaims(s.ns).Get(ctx, claim, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pvc.Spec.DataSource == nil || pvc.Spec.DataSource.Kind != "VolumeSnapshot" || pvc.Spec.VolumeName == "" {
		t.Fatalf("serving claim %s: data source %v, volume %q; want a bound restore of a VolumeSnapshot", claim, pvc.Spec.DataSource, pvc.Spec.VolumeName)
	}
	pv, err := s.kube.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pvNodes := nodeAffinityValues(pv)
	servedOn := s.servingNode(ctx, fuseki, claim)
	switch {
	case k.nodeLocal && (len(pvNodes) != 1 || pvNodes[0] != buildNode):
		t.Errorf("restored node-local volume %s has node affinity %v, want the build's node %s only", pv.Name, pvNodes, buildNode)
	case !k.nodeLocal && len(pvNodes) != 0:
		t.Errorf("restored network volume %s has node affinity %v, want none", pv.Name, pvNodes)
	}
	if k.nodeLocal && servedOn != buildNode {
		t.Errorf("a node-local database built on %s is served from %s: the snapshot's node is the only place a restore can land", buildNode, servedOn)
	}
	if !k.nodeLocal && servedOn != otherNode {
		t.Errorf("Fuseki (pinned to %s) serves from %s", otherNode, servedOn)
	}
	if got := s.fusekiAnswer(ctx, fuseki, revisionQuery); got != name {
		t.Errorf("Fuseki on %s answers %q, want %q", servedOn, got, name)
	}
	want, _, _ := unstructured.NestedInt64(u.Object, "status", "load", "triples")
	if got := s.fusekiAnswer(ctx, fuseki, `SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }`); want == 0 || got != fmt.Sprint(want) {
		t.Errorf("Fuseki counts %s triples, the build loaded %d", got, want)
	}

	restore := pv.CreationTimestamp.Sub(pvc.CreationTimestamp.Time)
	t.Logf("storage kind %s (%s): built on %s, served on %s; build %s (Fetching→Snapshotting), snapshot %s (Snapshotting→HandingOff), "+
		"handoff %s (HandingOff→Ready) of which restore %s (restored PVC created→PV provisioned); %d triples",
		k.name, k.storageClass, buildNode, servedOn, at.between("Fetching", "Snapshotting"), at.between("Snapshotting", "HandingOff"),
		at.between("HandingOff", "Ready"), restore, want)
}

// pinDeployment puts a Deployment's pods on node.
func (s *suite) pinDeployment(ctx context.Context, name, node string) {
	patch := fmt.Sprintf(`{"spec":{"template":{"spec":{"nodeSelector":{%q:%q}}}}}`, hostnameLabel, node)
	if _, err := s.kube.AppsV1().Deployments(s.ns).Patch(ctx, name, "application/strategic-merge-patch+json", []byte(patch), metav1.PatchOptions{}); err != nil {
		s.t.Fatalf("pin %s to %s: %v", name, node, err)
	}
	s.waitDeployment(ctx, name, 5*time.Minute)
}

// servingNode is the node of the ready pod of a Fuseki Deployment that mounts claim.
func (s *suite) servingNode(ctx context.Context, deployment, claim string) string {
	var node string
	err := wait.PollUntilContextTimeout(ctx, time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := s.kube.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{LabelSelector: fusekiSelector(deployment)})
		if err != nil {
			return false, nil
		}
		for i := range pods.Items {
			p := &pods.Items[i]
			for _, v := range p.Spec.Volumes {
				if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == claim && podReady(p) && p.DeletionTimestamp == nil {
					node = p.Spec.NodeName
					return true, nil
				}
			}
		}
		return false, nil
	})
	if err != nil {
		s.t.Fatalf("no ready pod of %s mounts %s: %v", deployment, claim, err)
	}
	return node
}

// nodeAffinityValues are the values of a PV's required node affinity (a node-local volume's
// node); none for a volume usable anywhere.
func nodeAffinityValues(pv *corev1.PersistentVolume) []string {
	var values []string
	if pv.Spec.NodeAffinity == nil || pv.Spec.NodeAffinity.Required == nil {
		return nil
	}
	for _, term := range pv.Spec.NodeAffinity.Required.NodeSelectorTerms {
		for _, e := range term.MatchExpressions {
			values = append(values, e.Values...)
		}
	}
	return values
}

// phaseTimes is when a BulkLoad was first seen in each phase.
type phaseTimes map[string]time.Time

// between is the time from phase a to phase b, rounded to the second.
func (p phaseTimes) between(a, b string) string {
	ta, okA := p[a]
	tb, okB := p[b]
	if !okA || !okB {
		return "?"
	}
	return tb.Sub(ta).Round(time.Second).String()
}

// timePhases watches the BulkLoad name until the returned function is called, which returns
// when each phase was first seen (a watch: a phase may last less than a second).
func (s *suite) timePhases(ctx context.Context, name string) func() phaseTimes {
	ctx, cancel := context.WithCancel(ctx)
	var mu sync.Mutex
	seen := phaseTimes{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			w, err := s.dyn.Resource(bulkLoadGVR).Namespace(s.ns).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
			if err != nil {
				time.Sleep(time.Second)
				continue
			}
			for ev := range w.ResultChan() {
				u, ok := ev.Object.(*unstructured.Unstructured)
				if !ok {
					continue
				}
				mu.Lock()
				if p := statusString(u, "phase"); p != "" {
					if _, ok := seen[p]; !ok {
						seen[p] = time.Now()
					}
				}
				mu.Unlock()
			}
			w.Stop()
		}
	}()
	return func() phaseTimes {
		cancel()
		<-done
		mu.Lock()
		defer mu.Unlock()
		return seen
	}
}

// scratchTooSmall: a build whose scratch volume (a class with real sizes) fills up after the
// parse checkpoint fails with exit 5 and keeps its volumes; raising spec.database.scratchSize
// grows the same scratch volume, and the next attempt resumes from the checkpoint (no second
// parse) and reaches Ready.
func (s *suite) scratchTooSmall(ctx context.Context, logs *logCapture, storageClass, snapshotClass, dir string) {
	t := s.t
	const name = "storage-scratch"
	fuseki := name + "-fuseki"
	s.cloneFuseki(ctx, fuseki)
	sized := storageKind{name: "sized", storageClass: storageClass, snapshotClass: snapshotClass, nodeLocal: true}
	bl, _ := s.storageBulkLoad(ctx, name, "scratch", sized, fuseki, dir, 500000)
	// Room for the fetched dump (4.5 MB) and the parse's spill files with one thread, not for
	// the nodes phase's: the load fails after its parse checkpoint (an ext4 of 40Mi fails in
	// the parse, 42-44Mi in the nodes phase, 46Mi fits). The plan, which estimates 32 MB of
	// temp disk and would refuse the load before parsing, is skipped.
	setField(t, bl, "43Mi", "spec", "database", "scratchSize")
	setField(t, bl, int64(1), "spec", "loader", "threads")
	setField(t, bl, true, "spec", "loader", "skipPlanCheck")
	s.createBulkLoad(ctx, bl)
	first := s.stepPod(ctx, name+"-", "load")
	u := s.waitBulkLoad(ctx, name, "failing on the full scratch disk", buildTimeout, func(u *unstructured.Unstructured) bool {
		return statusString(u, "phase") == "Failed"
	})
	if _, reason := condition(u, "Ready"); reason != "ResourceExhausted" {
		t.Errorf("the failed build's reason is %q, want ResourceExhausted (exit 5)", reason)
	}
	kept := s.pvcNames(ctx, name)
	if len(kept) == 0 {
		t.Fatalf("the failed build's volumes were deleted: nothing to resume from (status %s)", yamlOf(u.Object["status"]))
	}
	t.Logf("kept after exit 5: %v", kept)
	s.patchBulkLoad(ctx, name, map[string]any{"database": map[string]any{"scratchSize": "1Gi"}})
	u = s.readyWith(ctx, name, "", buildTimeout)
	// the load report says the second load resumed after the first one's parse checkpoint
	// (no second parse); so does its log (the resuming event), when the capture caught the
	// pod before Argo deleted it
	if got, _, _ := unstructured.NestedString(u.Object, "status", "load", "resumedAfter"); !strings.HasPrefix(got, "parse") {
		t.Errorf("status.load.resumedAfter %q, want the first attempt's parse checkpoint", got)
	}
	if inst, log := logs.otherStep(t, name, "load", first); log != "" && !strings.Contains(log, `"event":"resuming"`) {
		t.Errorf("the second load %s did not resume after the parse checkpoint; its log:\n%s", inst, tail(log, 4000))
	}
	for _, claim := range kept {
		pvc, err := s.kube.CoreV1().PersistentVolumeClaims(s.ns).Get(ctx, claim, metav1.GetOptions{})
		if err != nil {
			continue // the data volume may be pruned after the handoff
		}
		if got := pvc.Status.Capacity.Storage(); strings.Contains(claim, "scratch") && got.Cmp(resource.MustParse("1Gi")) < 0 {
			t.Errorf("scratch volume %s holds %s after scratchSize was raised to 1Gi", claim, got)
		}
	}
	if got := s.fusekiAnswer(ctx, fuseki, revisionQuery); got != name {
		t.Errorf("Fuseki answers %q, want %q", got, name)
	}
}
