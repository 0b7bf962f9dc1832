package driver

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func onNode(m Mode, node string) *csi.TopologyRequirement {
	t := &csi.Topology{Segments: map[string]string{m.TopologyKey(): node}}
	return &csi.TopologyRequirement{Requisite: []*csi.Topology{t}, Preferred: []*csi.Topology{t}}
}

func fromSnapshot(id string) *csi.VolumeContentSource {
	return &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Snapshot{
		Snapshot: &csi.VolumeContentSource_SnapshotSource{SnapshotId: id}}}
}

func publishErr(r *running, volID, target string) error {
	_, err := r.node().NodePublishVolume(context.Background(), &csi.NodePublishVolumeRequest{
		VolumeId: volID, TargetPath: target, VolumeCapability: rwo})
	return err
}

// TestLocalModeKeepsVolumesAndSnapshotsOnTheirNode deploys the local mode as
// on the two-node cluster (a controller, a node plugin per node) and checks
// what makes it node-local: a volume lives on the node the scheduler chose,
// only that node can publish it, its snapshot stays there, and a restore
// asked for on the other node is refused (ResourceExhausted, which makes the
// external-provisioner reschedule) while one on the snapshot's node works.
func TestLocalModeKeepsVolumesAndSnapshotsOnTheirNode(t *testing.T) {
	requireRoot(t)
	dir := shortTempDir(t)
	unmountUnder(t, dir)
	n1 := startDriver(t, nodePlugin(dir, ModeLocal, "node1"))
	n2 := startDriver(t, nodePlugin(dir, ModeLocal, "node2"))
	c := startDriver(t, controller(dir, ModeLocal))
	ctx := context.Background()

	resp, err := c.ctrl().CreateVolume(ctx, volumeRequest("data", nil, onNode(ModeLocal, "node2")))
	if err != nil {
		t.Fatal(err)
	}
	vol := resp.Volume
	if got := vol.AccessibleTopology; len(got) != 1 || got[0].Segments[ModeLocal.TopologyKey()] != "node2" {
		t.Fatalf("volume topology = %v, want node2 only", got)
	}
	if err := publishErr(n1, vol.VolumeId, filepath.Join(dir, "n1pod", "mount")); status.Code(err) != codes.NotFound {
		t.Errorf("publish of node2's volume on node1: %v, want NotFound", err)
	}
	target := filepath.Join(dir, "n2pod", "mount")
	publish(t, n2, vol.VolumeId, target, false)
	writeFile(t, filepath.Join(target, "f"), "on node2")
	if _, err := c.ctrl().DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: vol.VolumeId}); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("DeleteVolume while published on node2: %v, want FailedPrecondition", err)
	}

	snap, err := c.ctrl().CreateSnapshot(ctx, &csi.CreateSnapshotRequest{Name: "snap", SourceVolumeId: vol.VolumeId})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.ctrl().CreateVolume(ctx, volumeRequest("restore-elsewhere", fromSnapshot(snap.Snapshot.SnapshotId), onNode(ModeLocal, "node1")))
	if status.Code(err) != codes.ResourceExhausted {
		t.Errorf("restore of node2's snapshot on node1: %v, want ResourceExhausted", err)
	}
	resp, err = c.ctrl().CreateVolume(ctx, volumeRequest("restore", fromSnapshot(snap.Snapshot.SnapshotId), onNode(ModeLocal, "node2")))
	if err != nil {
		t.Fatalf("restore on the snapshot's node: %v", err)
	}
	if got := readTree(t, c.volumeDir(resp.Volume.VolumeId)); got["f"] != "on node2" {
		t.Errorf("restored volume holds %v", got)
	}
	if got := c.volumeDir(resp.Volume.VolumeId); filepath.Dir(filepath.Dir(got)) != c.d.nodePath("node2") {
		t.Errorf("restored volume at %s, want under node2's directory", got)
	}

	// capacity is per node
	capOf := func(node string) int64 {
		t.Helper()
		r, err := c.ctrl().GetCapacity(ctx, &csi.GetCapacityRequest{AccessibleTopology: onNode(ModeLocal, node).Preferred[0]})
		if err != nil {
			t.Fatal(err)
		}
		return r.AvailableCapacity
	}
	if c1, c2 := capOf("node1"), capOf("node2"); c1 != 100<<30 || c2 != 100<<30-2<<20 {
		t.Errorf("capacity node1 %d, node2 %d; want all of node1's, node2's less two 1 MiB volumes", c1, c2)
	}
	if _, err := c.ctrl().CreateVolume(ctx, volumeRequest("nowhere", nil, onNode(ModeLocal, "node3"))); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("volume on a node without a node plugin: %v, want ResourceExhausted", err)
	}
	unpublish(t, n2, vol.VolumeId, target)
}

// TestNetworkModeAttachesToOneNodeAtATime: a network volume has no topology,
// either node can publish it but not both at once, and a snapshot restores
// on any node.
func TestNetworkModeAttachesToOneNodeAtATime(t *testing.T) {
	requireRoot(t)
	dir := shortTempDir(t)
	unmountUnder(t, dir)
	n1 := startDriver(t, nodePlugin(dir, ModeNetwork, "node1"))
	n2 := startDriver(t, nodePlugin(dir, ModeNetwork, "node2"))
	c := startDriver(t, controller(dir, ModeNetwork))
	ctx := context.Background()

	if ni, err := n1.node().NodeGetInfo(ctx, &csi.NodeGetInfoRequest{}); err != nil || ni.AccessibleTopology != nil {
		t.Errorf("NodeGetInfo = %v, %v; want no topology", ni, err)
	}
	vol := createVolume(t, c, "data", nil)
	if vol.AccessibleTopology != nil {
		t.Errorf("network volume topology = %v, want none", vol.AccessibleTopology)
	}
	t1 := filepath.Join(dir, "n1pod", "mount")
	publish(t, n1, vol.VolumeId, t1, false)
	writeFile(t, filepath.Join(t1, "f"), "written on node1")
	t2 := filepath.Join(dir, "n2pod", "mount")
	if err := publishErr(n2, vol.VolumeId, t2); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("publish on node2 while node1 has it: %v, want FailedPrecondition", err)
	}
	unpublish(t, n1, vol.VolumeId, t1)
	publish(t, n2, vol.VolumeId, t2, false)
	if got := readTree(t, t2); got["f"] != "written on node1" {
		t.Errorf("node2 sees %v", got)
	}

	snap, err := c.ctrl().CreateSnapshot(ctx, &csi.CreateSnapshotRequest{Name: "snap", SourceVolumeId: vol.VolumeId})
	if err != nil {
		t.Fatal(err)
	}
	restored := createVolume(t, c, "restored", fromSnapshot(snap.Snapshot.SnapshotId))
	t3 := filepath.Join(dir, "n1pod2", "mount")
	publish(t, n1, restored.VolumeId, t3, true)
	if got := readTree(t, t3); got["f"] != "written on node1" {
		t.Errorf("restored volume on node1 holds %v", got)
	}
	unpublish(t, n1, restored.VolumeId, t3)
	unpublish(t, n2, vol.VolumeId, t2)
}

// TestNoSnapshotsMode: its own driver name, node-local volumes, and no
// snapshot capability: the snapshot RPCs are unimplemented and a volume
// cannot be populated from a snapshot.
func TestNoSnapshotsMode(t *testing.T) {
	dir := shortTempDir(t)
	startDriver(t, nodePlugin(dir, ModeNoSnapshots, "node1"))
	c := startDriver(t, controller(dir, ModeNoSnapshots))
	ctx := context.Background()
	names := map[string]bool{}
	for _, m := range Modes {
		names[m.DriverName()] = true
	}
	if len(names) != len(Modes) {
		t.Errorf("driver names %v: each mode needs its own", names)
	}
	info, err := csi.NewIdentityClient(c.conn).GetPluginInfo(ctx, &csi.GetPluginInfoRequest{})
	if err != nil || info.Name != ModeNoSnapshots.DriverName() {
		t.Errorf("GetPluginInfo = %v, %v", info, err)
	}
	caps, err := c.ctrl().ControllerGetCapabilities(ctx, &csi.ControllerGetCapabilitiesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cp := range caps.Capabilities {
		switch cp.GetRpc().GetType() {
		case csi.ControllerServiceCapability_RPC_CREATE_DELETE_SNAPSHOT, csi.ControllerServiceCapability_RPC_LIST_SNAPSHOTS,
			csi.ControllerServiceCapability_RPC_CLONE_VOLUME:
			t.Errorf("capability %v claimed", cp.GetRpc().GetType())
		}
	}
	vol := createVolume(t, c, "data", nil)
	if got := vol.AccessibleTopology; len(got) != 1 || got[0].Segments[ModeNoSnapshots.TopologyKey()] != "node1" {
		t.Errorf("volume topology = %v, want node1", got)
	}
	if _, err := c.ctrl().CreateSnapshot(ctx, &csi.CreateSnapshotRequest{Name: "s", SourceVolumeId: vol.VolumeId}); status.Code(err) != codes.Unimplemented {
		t.Errorf("CreateSnapshot = %v, want Unimplemented", err)
	}
	if _, err := c.ctrl().CreateVolume(ctx, volumeRequest("r", fromSnapshot("x"), nil)); status.Code(err) != codes.InvalidArgument {
		t.Errorf("CreateVolume from a snapshot = %v, want InvalidArgument", err)
	}
}
