package driver

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

// running is a driver served on a temporary socket.
type running struct {
	d    *Driver
	conn *grpc.ClientConn
	stop func() // cancels Run and waits for it; safe to call twice
}

func (r *running) ctrl() csi.ControllerClient { return csi.NewControllerClient(r.conn) }
func (r *running) node() csi.NodeClient       { return csi.NewNodeClient(r.conn) }

func testLogger(t *testing.T) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

func startDriver(t *testing.T, cfg Config) *running {
	t.Helper()
	d, err := New(cfg, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	r := &running{d: d}
	stopped := false
	r.stop = func() {
		if stopped {
			return
		}
		stopped = true
		if r.conn != nil {
			r.conn.Close()
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}
	t.Cleanup(r.stop)
	waitForSocket(t, d.sock)
	r.conn = dial(t, d.sock)
	return r
}

func waitForSocket(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if fi, err := os.Stat(path); err == nil && fi.Mode()&os.ModeSocket != 0 {
			return
		}
	}
	t.Fatalf("socket %s did not appear", path)
}

func dial(t *testing.T, path string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient("unix://"+path, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// shortTempDir is a temporary directory with a short path: unix socket paths
// must stay under 108 bytes, and t.TempDir includes the test's name.
func shortTempDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "csihp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// testConfig is one process serving the controller and node1's node plugin
// of the local mode.
func testConfig(t *testing.T, dir string) Config {
	return Config{Mode: ModeLocal, Controller: true, Node: true, Endpoint: "unix://" + filepath.Join(dir, "csi.sock"),
		NodeID: "node1", DataDir: filepath.Join(dir, "data"), Capacity: 100 << 30}
}

// nodePlugin is the node plugin of node in mode, sharing dir's data dir.
func nodePlugin(dir string, mode Mode, node string) Config {
	return Config{Mode: mode, Node: true, Endpoint: "unix://" + filepath.Join(dir, node+".sock"),
		NodeID: node, DataDir: filepath.Join(dir, "data"), Capacity: 100 << 30}
}

// controller is the controller of mode, with dir's data dir.
func controller(dir string, mode Mode) Config {
	return Config{Mode: mode, Controller: true, Endpoint: "unix://" + filepath.Join(dir, "controller.sock"),
		DataDir: filepath.Join(dir, "data"), Capacity: 100 << 30}
}

// volumeDir is where the controller keeps volume id.
func (r *running) volumeDir(id string) string {
	r.d.mu.Lock()
	defer r.d.mu.Unlock()
	return r.d.volumeDir(r.d.st.Volumes[id])
}

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root for bind mounts")
	}
}

// unmountUnder lazily unmounts whatever a failed test left mounted below dir,
// so that removing the temporary directory cannot recurse into a volume.
func unmountUnder(t *testing.T, dir string) {
	t.Cleanup(func() {
		points, err := mountPoints()
		if err != nil {
			t.Error(err)
			return
		}
		for i := len(points) - 1; i >= 0; i-- {
			if strings.HasPrefix(points[i], dir+"/") {
				t.Errorf("left mounted: %s", points[i])
				_ = unix.Unmount(points[i], unix.MNT_DETACH) // best-effort cleanup; the test already failed
			}
		}
	})
}

var rwo = &csi.VolumeCapability{
	AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{}},
	AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
}

func createVolume(t *testing.T, r *running, name string, src *csi.VolumeContentSource) *csi.Volume {
	t.Helper()
	resp, err := r.ctrl().CreateVolume(context.Background(), volumeRequest(name, src, nil))
	if err != nil {
		t.Fatalf("CreateVolume %s: %v", name, err)
	}
	return resp.GetVolume()
}

// volumeRequest asks for a 1 MiB volume; top, if set, is the accessibility
// requirement the external-provisioner sends with WaitForFirstConsumer: the
// scheduler's node preferred.
func volumeRequest(name string, src *csi.VolumeContentSource, top *csi.TopologyRequirement) *csi.CreateVolumeRequest {
	return &csi.CreateVolumeRequest{
		Name:                      name,
		CapacityRange:             &csi.CapacityRange{RequiredBytes: 1 << 20},
		VolumeCapabilities:        []*csi.VolumeCapability{rwo},
		VolumeContentSource:       src,
		AccessibilityRequirements: top,
	}
}

func publish(t *testing.T, r *running, volID, target string, readOnly bool) {
	t.Helper()
	_, err := r.node().NodePublishVolume(context.Background(), &csi.NodePublishVolumeRequest{
		VolumeId: volID, TargetPath: target, VolumeCapability: rwo, Readonly: readOnly,
	})
	if err != nil {
		t.Fatalf("NodePublishVolume: %v", err)
	}
}

func unpublish(t *testing.T, r *running, volID, target string) {
	t.Helper()
	if _, err := r.node().NodeUnpublishVolume(context.Background(), &csi.NodeUnpublishVolumeRequest{VolumeId: volID, TargetPath: target}); err != nil {
		t.Fatalf("NodeUnpublishVolume: %v", err)
	}
	if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("target %s still exists after unpublish: %v", target, err)
	}
}

// readTree maps each regular file below dir to its contents.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err != nil || !e.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSnapshotRestoreAndClone writes files through a published volume, takes
// a snapshot, changes the volume, and checks that a volume restored from the
// snapshot holds the files as they were, read-only when published read-only,
// and that a clone holds the files as they are now.
func TestSnapshotRestoreAndClone(t *testing.T) {
	requireRoot(t)
	dir := shortTempDir(t)
	unmountUnder(t, dir)
	r := startDriver(t, testConfig(t, dir))
	ctx := context.Background()

	src := createVolume(t, r, "source", nil)
	target := filepath.Join(dir, "pod1", "mount")
	publish(t, r, src.VolumeId, target, false)
	writeFile(t, filepath.Join(target, "db", "triples.nq"), "<s> <p> <o> .\n")
	writeFile(t, filepath.Join(target, "meta.json"), `{"rev":1}`)
	want := readTree(t, target)

	snap, err := r.ctrl().CreateSnapshot(ctx, &csi.CreateSnapshotRequest{Name: "snap", SourceVolumeId: src.VolumeId})
	if err != nil {
		t.Fatal(err)
	}
	if s := snap.GetSnapshot(); !s.ReadyToUse || s.SizeBytes != src.CapacityBytes || s.CreationTime == nil {
		t.Fatalf("snapshot = %v", s)
	}
	writeFile(t, filepath.Join(target, "meta.json"), `{"rev":2}`)
	writeFile(t, filepath.Join(target, "after-snapshot"), "x")
	now := readTree(t, target)

	restored := createVolume(t, r, "restored", &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Snapshot{
		Snapshot: &csi.VolumeContentSource_SnapshotSource{SnapshotId: snap.GetSnapshot().SnapshotId}}})
	if restored.VolumeId == src.VolumeId || restored.GetContentSource().GetSnapshot().GetSnapshotId() != snap.GetSnapshot().SnapshotId {
		t.Fatalf("restored volume = %v", restored)
	}
	target2 := filepath.Join(dir, "pod2", "mount")
	publish(t, r, restored.VolumeId, target2, true)
	if got := readTree(t, target2); !equalMaps(got, want) {
		t.Errorf("restored volume has %v, want %v", got, want)
	}
	if err := os.WriteFile(filepath.Join(target2, "new"), nil, 0o644); !errors.Is(err, syscall.EROFS) {
		t.Errorf("write to read-only publish: err = %v, want EROFS", err)
	}
	unpublish(t, r, restored.VolumeId, target2)

	clone := createVolume(t, r, "clone", &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Volume{
		Volume: &csi.VolumeContentSource_VolumeSource{VolumeId: src.VolumeId}}})
	if got := readTree(t, r.volumeDir(clone.VolumeId)); !equalMaps(got, now) {
		t.Errorf("clone has %v, want %v", got, now)
	}

	// A published volume cannot be deleted; after unpublish it can.
	if _, err := r.ctrl().DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: src.VolumeId}); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("DeleteVolume of a published volume: %v, want FailedPrecondition", err)
	}
	unpublish(t, r, src.VolumeId, target)
	for _, id := range []string{src.VolumeId, restored.VolumeId, clone.VolumeId} {
		if _, err := r.ctrl().DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: id}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.ctrl().DeleteSnapshot(ctx, &csi.DeleteSnapshotRequest{SnapshotId: snap.GetSnapshot().SnapshotId}); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"volumes", "snapshots"} {
		if left, _ := os.ReadDir(r.d.nodePath("node1", sub)); len(left) != 0 {
			t.Errorf("%s left behind: %v", sub, left)
		}
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestRestartKeepsState stops a driver and starts another on the same data
// directory: it must know the volumes and snapshots the first one made.
func TestRestartKeepsState(t *testing.T) {
	dir := shortTempDir(t)
	cfg := testConfig(t, dir)
	r1 := startDriver(t, cfg)
	ctx := context.Background()
	vol := createVolume(t, r1, "data", nil)
	writeFile(t, filepath.Join(r1.volumeDir(vol.VolumeId), "f"), "kept")
	snap, err := r1.ctrl().CreateSnapshot(ctx, &csi.CreateSnapshotRequest{Name: "snap", SourceVolumeId: vol.VolumeId})
	if err != nil {
		t.Fatal(err)
	}
	other := cfg
	other.Endpoint = filepath.Join(dir, "other.sock")
	second, err := New(other, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := second.Run(ctx); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Errorf("second driver on the same data dir: Run = %v, want in-use error", err)
	}
	r1.stop()
	if _, err := os.Stat(r1.d.sock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("CSI socket left after stop: %v", err)
	}

	r2 := startDriver(t, cfg)
	again := createVolume(t, r2, "data", nil)
	if again.VolumeId != vol.VolumeId {
		t.Errorf("after restart CreateVolume(data) = %s, want existing %s", again.VolumeId, vol.VolumeId)
	}
	if _, err := r2.ctrl().ValidateVolumeCapabilities(ctx, &csi.ValidateVolumeCapabilitiesRequest{
		VolumeId: vol.VolumeId, VolumeCapabilities: []*csi.VolumeCapability{rwo}}); err != nil {
		t.Errorf("ValidateVolumeCapabilities after restart: %v", err)
	}
	vols, err := r2.ctrl().ListVolumes(ctx, &csi.ListVolumesRequest{})
	if err != nil || len(vols.Entries) != 1 || vols.Entries[0].Volume.VolumeId != vol.VolumeId {
		t.Errorf("ListVolumes after restart = %v, %v", vols, err)
	}
	snaps, err := r2.ctrl().ListSnapshots(ctx, &csi.ListSnapshotsRequest{SourceVolumeId: vol.VolumeId})
	if err != nil || len(snaps.Entries) != 1 || snaps.Entries[0].Snapshot.SnapshotId != snap.Snapshot.SnapshotId ||
		!snaps.Entries[0].Snapshot.CreationTime.AsTime().Equal(snap.Snapshot.CreationTime.AsTime()) {
		t.Errorf("ListSnapshots after restart = %v, %v", snaps, err)
	}
	restored := createVolume(t, r2, "restored", &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Snapshot{
		Snapshot: &csi.VolumeContentSource_SnapshotSource{SnapshotId: snap.Snapshot.SnapshotId}}})
	if got := readTree(t, r2.volumeDir(restored.VolumeId)); got["f"] != "kept" {
		t.Errorf("restored after restart: %v", got)
	}
	capResp, err := r2.ctrl().GetCapacity(ctx, &csi.GetCapacityRequest{})
	if err != nil || capResp.AvailableCapacity != cfg.Capacity-2<<20 {
		t.Errorf("GetCapacity = %v, %v; want %d", capResp, err, cfg.Capacity-2<<20)
	}
}

// TestRegistrationSocket plays the kubelet's plugin watcher: it finds the
// registration socket, asks GetInfo for the CSI endpoint, reports success, and
// checks that a stale socket file is replaced and the socket removed on stop.
func TestRegistrationSocket(t *testing.T) {
	dir := shortTempDir(t)
	cfg := testConfig(t, dir)
	cfg.RegistrationDir = filepath.Join(dir, "plugins_registry")
	regSock := filepath.Join(cfg.RegistrationDir, ModeLocal.DriverName()+"-reg.sock")
	writeFile(t, regSock, "stale")

	r := startDriver(t, cfg)
	waitForSocket(t, regSock)
	reg := registerapi.NewRegistrationClient(dial(t, regSock))
	ctx := context.Background()
	info, err := reg.GetInfo(ctx, &registerapi.InfoRequest{})
	if err != nil {
		t.Fatal(err)
	}
	wantEndpoint := filepath.Join(dir, "csi.sock")
	if info.Type != registerapi.CSIPlugin || info.Name != ModeLocal.DriverName() || info.Endpoint != wantEndpoint ||
		len(info.SupportedVersions) != 1 || info.SupportedVersions[0] != "1.0.0" {
		t.Errorf("GetInfo = %v, want CSIPlugin %s at %s, versions [1.0.0]", info, ModeLocal.DriverName(), wantEndpoint)
	}
	if _, err := reg.NotifyRegistrationStatus(ctx, &registerapi.RegistrationStatus{PluginRegistered: true}); err != nil {
		t.Fatal(err)
	}
	// The kubelet then calls NodeGetInfo on the endpoint it was given.
	ni, err := csi.NewNodeClient(dial(t, info.Endpoint)).NodeGetInfo(ctx, &csi.NodeGetInfoRequest{})
	if err != nil || ni.NodeId != "node1" || ni.AccessibleTopology.Segments[ModeLocal.TopologyKey()] != "node1" {
		t.Errorf("NodeGetInfo = %v, %v", ni, err)
	}
	r.stop()
	for _, s := range []string{regSock, info.Endpoint} {
		if _, err := os.Stat(s); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left after stop: %v", s, err)
		}
	}
}

func TestCreateVolumeCapacityAndTopology(t *testing.T) {
	dir := shortTempDir(t)
	cfg := testConfig(t, dir)
	cfg.Capacity = 10 << 20
	r := startDriver(t, cfg)
	ctx := context.Background()
	req := func(name string, required, limit int64, node string) *csi.CreateVolumeRequest {
		q := &csi.CreateVolumeRequest{Name: name, VolumeCapabilities: []*csi.VolumeCapability{rwo},
			CapacityRange: &csi.CapacityRange{RequiredBytes: required, LimitBytes: limit}}
		if node != "" {
			q.AccessibilityRequirements = &csi.TopologyRequirement{Requisite: []*csi.Topology{{Segments: map[string]string{ModeLocal.TopologyKey(): node}}}}
		}
		return q
	}
	for _, c := range []struct {
		req  *csi.CreateVolumeRequest
		code codes.Code
	}{
		{req("a", 6<<20, 0, "node1"), codes.OK},
		{req("b", 6<<20, 0, ""), codes.ResourceExhausted}, // 12 MiB > 10 MiB
		{req("c", 1<<20, 0, "node2"), codes.ResourceExhausted},
		{req("d", 20<<20, 0, ""), codes.OutOfRange},
		{req("e", 2<<20, 1<<20, ""), codes.InvalidArgument},
		{req("a", 7<<20, 0, ""), codes.AlreadyExists},
	} {
		resp, err := r.ctrl().CreateVolume(ctx, c.req)
		if status.Code(err) != c.code {
			t.Errorf("CreateVolume(%s) = %v, want %v", c.req.Name, err, c.code)
		}
		if err == nil && resp.Volume.AccessibleTopology[0].Segments[ModeLocal.TopologyKey()] != "node1" {
			t.Errorf("CreateVolume(%s) topology = %v", c.req.Name, resp.Volume.AccessibleTopology)
		}
	}
	block := &csi.VolumeCapability{AccessType: &csi.VolumeCapability_Block{Block: &csi.VolumeCapability_BlockVolume{}},
		AccessMode: rwo.AccessMode}
	if _, err := r.ctrl().CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "blk", VolumeCapabilities: []*csi.VolumeCapability{block}}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("block CreateVolume = %v, want InvalidArgument", err)
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"100Gi": 100 << 30, "5Mi": 5 << 20, "1k": 1000, "2G": 2e9, "123": 123, "1Ti": 1 << 40} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "Gi", "-1Gi", "1.5Gi", "1Pi", "99999999999Ti"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) succeeded", in)
		}
	}
}

func TestUnescapeOctal(t *testing.T) {
	if got := unescapeOctal(`/var/lib/a\040b\134c`); got != `/var/lib/a b\c` {
		t.Errorf("got %q", got)
	}
}
