//go:build e2e

package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
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
		t.Skip("no storage kind named (E2E_LOCAL_STORAGE_CLASS, E2E_NETWORK_STORAGE_CLASS ...; see e2e/cluster/README.md)")
	}
	s, ctx := newSuite(t)
	nodes := s.readyNodes(ctx)
	if len(nodes) < 2 {
		t.Fatalf("the storage scenarios need two Ready nodes, the cluster has %v", nodes)
	}
	dir := t.TempDir()
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			s.with(t).storageScenario(ctx, k, nodes[0], nodes[1], dir)
		})
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

// storageScenario builds one dump on kind k with the build pinned to buildNode; a network
// volume is served from the other node (Fuseki pinned there), a node-local one wherever the
// scheduler must put it (Fuseki unpinned).
func (s *suite) storageScenario(ctx context.Context, k storageKind, otherNode, buildNode, dir string) {
	t := s.t
	name := "storage-" + k.name
	prefix := "storage/" + k.name + "/"
	fuseki := name + "-fuseki"
	s.cloneFuseki(ctx, fuseki)
	if !k.nodeLocal {
		s.pinDeployment(ctx, fuseki, otherNode)
	}
	d := filepath.Join(dir, k.name)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	dump := writeDump(t, d, "dump.nt.gz", name, storageDump)
	s.upload(ctx, prefix, true, dump)

	bl := s.sampleBulkLoad()
	bl.SetName(name)
	setField(t, bl, prefix, "spec", "source", "prefix")
	setField(t, bl, prefix+"_SUCCESS", "spec", "source", "completion", "marker")
	setField(t, bl, k.storageClass, "spec", "database", "storageClassName")
	setField(t, bl, k.snapshotClass, "spec", "snapshot", "volumeSnapshotClassName")
	setField(t, bl, "Delete", "spec", "snapshot", "onDelete")
	setField(t, bl, fuseki, "spec", "serving", "name")
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
		at.between("HandingOff", "Ready"), restore, storageDump+1)
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

// between is the time from phase a to phase b, rounded to the poll's second.
func (p phaseTimes) between(a, b string) string {
	ta, okA := p[a]
	tb, okB := p[b]
	if !okA || !okB {
		return "?"
	}
	return tb.Sub(ta).Round(time.Second).String()
}

// timePhases polls the BulkLoad name every second until the returned function is called, which
// returns when each phase was first seen.
func (s *suite) timePhases(ctx context.Context, name string) func() phaseTimes {
	ctx, cancel := context.WithCancel(ctx)
	var mu sync.Mutex
	seen := phaseTimes{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
			u, err := s.dyn.Resource(bulkLoadGVR).Namespace(s.ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			mu.Lock()
			defer mu.Unlock()
			if p := statusString(u, "phase"); p != "" {
				if _, ok := seen[p]; !ok {
					seen[p] = time.Now()
				}
			}
			return false, nil
		})
	}()
	return func() phaseTimes {
		cancel()
		<-done
		mu.Lock()
		defer mu.Unlock()
		return seen
	}
}
