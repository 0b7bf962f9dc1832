package driver

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"
)

func (d *Driver) ControllerGetCapabilities(context.Context, *csi.ControllerGetCapabilitiesRequest) (*csi.ControllerGetCapabilitiesResponse, error) {
	types := []csi.ControllerServiceCapability_RPC_Type{
		csi.ControllerServiceCapability_RPC_CREATE_DELETE_VOLUME,
		csi.ControllerServiceCapability_RPC_LIST_VOLUMES,
		csi.ControllerServiceCapability_RPC_GET_CAPACITY,
		csi.ControllerServiceCapability_RPC_EXPAND_VOLUME,
	}
	if d.cfg.Mode.Snapshots() {
		types = append(types,
			csi.ControllerServiceCapability_RPC_CREATE_DELETE_SNAPSHOT,
			csi.ControllerServiceCapability_RPC_LIST_SNAPSHOTS,
			csi.ControllerServiceCapability_RPC_CLONE_VOLUME)
	}
	var caps []*csi.ControllerServiceCapability
	for _, t := range types {
		caps = append(caps, &csi.ControllerServiceCapability{
			Type: &csi.ControllerServiceCapability_Rpc{Rpc: &csi.ControllerServiceCapability_RPC{Type: t}},
		})
	}
	return &csi.ControllerGetCapabilitiesResponse{Capabilities: caps}, nil
}

// errNoSnapshots answers the snapshot RPCs of a mode without snapshots.
func (d *Driver) errNoSnapshots() error {
	return status.Errorf(codes.Unimplemented, "driver %s (mode %s) has no snapshots", d.name, d.cfg.Mode)
}

// checkCapability accepts filesystem (mount) volumes in single-node modes and
// read-only many (published on one node at a time, see attach).
func checkCapability(c *csi.VolumeCapability) error {
	if c == nil {
		return status.Error(codes.InvalidArgument, "volume capability missing")
	}
	if c.GetBlock() != nil {
		return status.Error(codes.InvalidArgument, "block volumes are not supported, only mount (filesystem)")
	}
	if c.GetMount() == nil {
		return status.Error(codes.InvalidArgument, "access type mount required")
	}
	switch c.GetAccessMode().GetMode() {
	case csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER,
		csi.VolumeCapability_AccessMode_SINGLE_NODE_READER_ONLY,
		csi.VolumeCapability_AccessMode_MULTI_NODE_READER_ONLY:
		return nil
	}
	return status.Errorf(codes.InvalidArgument, "access mode %v not supported", c.GetAccessMode().GetMode())
}

func checkCapabilities(caps []*csi.VolumeCapability) error {
	if len(caps) == 0 {
		return status.Error(codes.InvalidArgument, "volume capabilities missing")
	}
	for _, c := range caps {
		if err := checkCapability(c); err != nil {
			return err
		}
	}
	return nil
}

// topology is where a volume or snapshot on node is accessible: that node in
// the node-local modes, anywhere (no constraint) for network storage.
func (d *Driver) topology(node string) []*csi.Topology {
	if !d.cfg.Mode.NodeLocal() {
		return nil
	}
	return []*csi.Topology{{Segments: map[string]string{d.cfg.Mode.TopologyKey(): node}}}
}

// nodes lists the nodes whose node plugin has started (nodes/<node> exists).
func (d *Driver) nodes() []string {
	entries, _ := os.ReadDir(d.path("nodes"))
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

// placeVolume picks the node a new node-local volume lives on. sourceNode is
// the node of its snapshot or source volume, if any: the copy is made there,
// so a volume from a node-local snapshot can only land on that node, as with
// LVM thin snapshots. The node asked for is the first preferred topology
// (the scheduler's choice with WaitForFirstConsumer), else the source's node
// or the first requisite one, else the node with the most free capacity.
func (d *Driver) placeVolume(req *csi.TopologyRequirement, sourceNode string) (string, error) {
	key := d.cfg.Mode.TopologyKey()
	inRequisite := func(n string) bool {
		if len(req.GetRequisite()) == 0 {
			return true
		}
		for _, t := range req.GetRequisite() {
			if t.GetSegments()[key] == n {
				return true
			}
		}
		return false
	}
	known := func(n string) bool { return slices.Contains(d.nodes(), n) }
	var node string
	switch {
	case len(req.GetPreferred()) > 0:
		node = req.GetPreferred()[0].GetSegments()[key]
	case sourceNode != "" && inRequisite(sourceNode):
		node = sourceNode
	case len(req.GetRequisite()) > 0:
		node = req.GetRequisite()[0].GetSegments()[key]
	case sourceNode != "":
		node = sourceNode
	default:
		best := int64(-1)
		for _, n := range d.nodes() {
			if free := d.cfg.Capacity - d.allocated(n); free > best {
				node, best = n, free
			}
		}
		if node == "" {
			return "", status.Error(codes.ResourceExhausted, "no node plugin has started yet")
		}
	}
	switch {
	case node == "" || !inRequisite(node):
		return "", status.Errorf(codes.InvalidArgument, "topology requirement %v names no node by %s", req, key)
	case !known(node):
		return "", status.Errorf(codes.ResourceExhausted, "no node plugin on node %s (nodes: %v)", node, d.nodes())
	case sourceNode != "" && node != sourceNode:
		return "", status.Errorf(codes.ResourceExhausted, "the source lives on node %s, not on %s: node-local snapshots and volumes are copied only on their own node", sourceNode, node)
	}
	return node, nil
}

func capacityFits(c int64, r *csi.CapacityRange) bool {
	return c >= r.GetRequiredBytes() && (r.GetLimitBytes() == 0 || c <= r.GetLimitBytes())
}

// allocated is what the volumes on node take (node-local modes), or all
// volumes (network).
func (d *Driver) allocated(node string) (n int64) {
	for _, v := range d.st.Volumes {
		if v.Node == node {
			n += v.CapacityBytes
		}
	}
	return n
}

func (d *Driver) CreateVolume(_ context.Context, req *csi.CreateVolumeRequest) (*csi.CreateVolumeResponse, error) {
	if req.GetName() == "" {
		return nil, status.Error(codes.InvalidArgument, "name missing")
	}
	if err := checkCapabilities(req.GetVolumeCapabilities()); err != nil {
		return nil, err
	}
	r := req.GetCapacityRange()
	if r.GetRequiredBytes() < 0 || r.GetLimitBytes() < 0 || (r.GetLimitBytes() > 0 && r.GetRequiredBytes() > r.GetLimitBytes()) {
		return nil, status.Errorf(codes.InvalidArgument, "invalid capacity range %v", r)
	}
	size := r.GetRequiredBytes()
	if size == 0 {
		size = min(defaultVolumeSize, d.cfg.Capacity)
		if r.GetLimitBytes() > 0 {
			size = min(size, r.GetLimitBytes())
		}
	}
	fs, err := volumeFilesystem(req.GetParameters())
	if err != nil {
		return nil, err
	}
	src := req.GetVolumeContentSource()
	srcSnap, srcVol := src.GetSnapshot().GetSnapshotId(), src.GetVolume().GetVolumeId()
	if src != nil && !d.cfg.Mode.Snapshots() {
		return nil, status.Errorf(codes.InvalidArgument, "driver %s (mode %s) cannot populate a volume from a snapshot or volume", d.name, d.cfg.Mode)
	}

	d.mu.Lock()
	defer d.mu.Unlock()
	for _, v := range d.st.Volumes {
		if v.Name != req.GetName() {
			continue
		}
		if !capacityFits(v.CapacityBytes, r) || v.SourceSnapshotID != srcSnap || v.SourceVolumeID != srcVol || v.FS != fs {
			return nil, status.Errorf(codes.AlreadyExists, "volume %q exists with different capacity or source", v.Name)
		}
		return &csi.CreateVolumeResponse{Volume: d.csiVolume(v)}, nil
	}

	var from, sourceNode string
	switch {
	case srcSnap != "":
		s, ok := d.st.Snapshots[srcSnap]
		if !ok {
			return nil, status.Errorf(codes.NotFound, "snapshot %q not found", srcSnap)
		}
		from, sourceNode, size = d.snapshotDir(s), s.Node, max(size, s.SizeBytes)
	case srcVol != "":
		v, ok := d.st.Volumes[srcVol]
		if !ok {
			return nil, status.Errorf(codes.NotFound, "volume %q not found", srcVol)
		}
		from, sourceNode, size = d.volumeDir(v), v.Node, max(size, v.CapacityBytes)
	case src != nil:
		return nil, status.Error(codes.InvalidArgument, "unknown volume content source")
	}
	var node string
	if d.cfg.Mode.NodeLocal() {
		if node, err = d.placeVolume(req.GetAccessibilityRequirements(), sourceNode); err != nil {
			return nil, err
		}
	}
	if !capacityFits(size, r) || size > d.cfg.Capacity {
		return nil, status.Errorf(codes.OutOfRange, "cannot provide %d bytes within %v", size, r)
	}
	if used := d.allocated(node); used+size > d.cfg.Capacity {
		return nil, status.Errorf(codes.ResourceExhausted, "%d bytes requested, %d of %d allocated", size, used, d.cfg.Capacity)
	}

	v := &volume{ID: newID(), Name: req.GetName(), Node: node, FS: fs, CapacityBytes: size, SourceSnapshotID: srcSnap, SourceVolumeID: srcVol}
	dir := d.volumeDir(v)
	if err := makeDir(dir); err != nil {
		return nil, status.Errorf(codes.Internal, "creating volume dir: %v", err)
	}
	undo := func() {
		if v.FS != "" {
			if err := removeFilesystem(dir); err != nil {
				d.log.Warn("removing the filesystem of a volume not created", "dir", dir, "err", err)
			}
		}
		os.RemoveAll(dir)
	}
	if v.FS != "" {
		if err := makeFilesystem(dir, size); err != nil {
			os.RemoveAll(dir)
			return nil, status.Errorf(codes.Internal, "making the volume's filesystem: %v", err)
		}
	}
	if from != "" {
		if err := copyTree(from, dir); err != nil {
			undo()
			return nil, status.Errorf(codes.Internal, "populating volume: %v", err)
		}
	}
	d.st.Volumes[v.ID] = v
	if err := d.saveOrInternal(); err != nil {
		delete(d.st.Volumes, v.ID)
		undo()
		return nil, err
	}
	d.log.Info("created volume", "id", v.ID, "name", v.Name, "node", v.Node, "fs", v.FS, "bytes", v.CapacityBytes, "fromSnapshot", srcSnap, "fromVolume", srcVol)
	return &csi.CreateVolumeResponse{Volume: d.csiVolume(v)}, nil
}

func (d *Driver) csiVolume(v *volume) *csi.Volume {
	out := &csi.Volume{VolumeId: v.ID, CapacityBytes: v.CapacityBytes, AccessibleTopology: d.topology(v.Node)}
	switch {
	case v.SourceSnapshotID != "":
		out.ContentSource = &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Snapshot{
			Snapshot: &csi.VolumeContentSource_SnapshotSource{SnapshotId: v.SourceSnapshotID}}}
	case v.SourceVolumeID != "":
		out.ContentSource = &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Volume{
			Volume: &csi.VolumeContentSource_VolumeSource{VolumeId: v.SourceVolumeID}}}
	}
	return out
}

// makeDir creates a world-writable directory, so that pods running as any
// user can write to a fresh volume (test cluster only).
func makeDir(dir string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o777); err != nil {
		return err
	}
	return os.Chmod(dir, 0o777)
}

// copyTree copies the contents of directory from into directory to, keeping
// owners, modes and times, and sharing extents where the filesystem can. It
// ignores the RPC's deadline on purpose: a sidecar that times out retries, and
// the retry then finds the finished copy by name instead of starting over.
func copyTree(from, to string) error {
	out, err := exec.Command("cp", "-a", "--reflink=auto", from+"/.", to+"/").CombinedOutput()
	if err != nil {
		return fmt.Errorf("cp: %w: %s", err, bytes.TrimSpace(out))
	}
	return nil
}

func (d *Driver) DeleteVolume(_ context.Context, req *csi.DeleteVolumeRequest) (*csi.DeleteVolumeResponse, error) {
	if req.GetVolumeId() == "" {
		return nil, status.Error(codes.InvalidArgument, "volume ID missing")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	v, ok := d.st.Volumes[req.GetVolumeId()]
	if !ok {
		return &csi.DeleteVolumeResponse{}, nil
	}
	if node, attached := d.attachedTo(v.ID); attached {
		return nil, status.Errorf(codes.FailedPrecondition, "volume %s is still published on node %s", v.ID, node)
	}
	if v.FS != "" {
		if err := removeFilesystem(d.volumeDir(v)); err != nil {
			return nil, status.Errorf(codes.Internal, "removing the volume's filesystem: %v", err)
		}
	}
	if err := os.RemoveAll(d.volumeDir(v)); err != nil {
		return nil, status.Errorf(codes.Internal, "removing volume dir: %v", err)
	}
	delete(d.st.Volumes, v.ID)
	if err := d.saveOrInternal(); err != nil {
		return nil, err
	}
	d.log.Info("deleted volume", "id", v.ID, "name", v.Name)
	return &csi.DeleteVolumeResponse{}, nil
}

func (d *Driver) ValidateVolumeCapabilities(_ context.Context, req *csi.ValidateVolumeCapabilitiesRequest) (*csi.ValidateVolumeCapabilitiesResponse, error) {
	if req.GetVolumeId() == "" {
		return nil, status.Error(codes.InvalidArgument, "volume ID missing")
	}
	if len(req.GetVolumeCapabilities()) == 0 {
		return nil, status.Error(codes.InvalidArgument, "volume capabilities missing")
	}
	d.mu.Lock()
	_, ok := d.st.Volumes[req.GetVolumeId()]
	d.mu.Unlock()
	if !ok {
		return nil, status.Errorf(codes.NotFound, "volume %q not found", req.GetVolumeId())
	}
	if err := checkCapabilities(req.GetVolumeCapabilities()); err != nil {
		return &csi.ValidateVolumeCapabilitiesResponse{Message: status.Convert(err).Message()}, nil
	}
	return &csi.ValidateVolumeCapabilitiesResponse{Confirmed: &csi.ValidateVolumeCapabilitiesResponse_Confirmed{
		VolumeContext:      req.GetVolumeContext(),
		VolumeCapabilities: req.GetVolumeCapabilities(),
		Parameters:         req.GetParameters(),
	}}, nil
}

func (d *Driver) GetCapacity(_ context.Context, req *csi.GetCapacityRequest) (*csi.GetCapacityResponse, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.cfg.Mode.NodeLocal() {
		return &csi.GetCapacityResponse{AvailableCapacity: d.cfg.Capacity - d.allocated("")}, nil
	}
	// node-local: the free bytes of the node asked about, else of the node
	// with the most (what one volume can get)
	var free int64
	for _, n := range d.nodes() {
		if t := req.GetAccessibleTopology(); t != nil && t.GetSegments()[d.cfg.Mode.TopologyKey()] != n {
			continue
		}
		free = max(free, d.cfg.Capacity-d.allocated(n))
	}
	return &csi.GetCapacityResponse{AvailableCapacity: free}, nil
}

// page returns the page of items that starts at the index in token.
func page[T any](items []T, token string, maxEntries int32) ([]T, string, error) {
	if maxEntries < 0 {
		return nil, "", status.Error(codes.InvalidArgument, "max_entries must not be negative")
	}
	start := 0
	if token != "" {
		n, err := strconv.Atoi(token)
		if err != nil || n < 0 || n > len(items) {
			return nil, "", status.Errorf(codes.Aborted, "invalid starting token %q", token)
		}
		start = n
	}
	end, next := len(items), ""
	if maxEntries > 0 && start+int(maxEntries) < end {
		end = start + int(maxEntries)
		next = strconv.Itoa(end)
	}
	return items[start:end], next, nil
}

func (d *Driver) ListVolumes(_ context.Context, req *csi.ListVolumesRequest) (*csi.ListVolumesResponse, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var vols []*volume
	for _, v := range d.st.Volumes {
		vols = append(vols, v)
	}
	sort.Slice(vols, func(i, j int) bool { return vols[i].ID < vols[j].ID })
	vols, next, err := page(vols, req.GetStartingToken(), req.GetMaxEntries())
	if err != nil {
		return nil, err
	}
	resp := &csi.ListVolumesResponse{NextToken: next}
	for _, v := range vols {
		resp.Entries = append(resp.Entries, &csi.ListVolumesResponse_Entry{Volume: d.csiVolume(v)})
	}
	return resp, nil
}

func (d *Driver) csiSnapshot(s *snapshot) *csi.Snapshot {
	return &csi.Snapshot{
		SnapshotId:     s.ID,
		SourceVolumeId: s.SourceVolumeID,
		SizeBytes:      s.SizeBytes,
		CreationTime:   timestamppb.New(s.CreationTime),
		ReadyToUse:     true,
	}
}

func (d *Driver) CreateSnapshot(_ context.Context, req *csi.CreateSnapshotRequest) (*csi.CreateSnapshotResponse, error) {
	if !d.cfg.Mode.Snapshots() {
		return nil, d.errNoSnapshots()
	}
	if req.GetName() == "" {
		return nil, status.Error(codes.InvalidArgument, "name missing")
	}
	if req.GetSourceVolumeId() == "" {
		return nil, status.Error(codes.InvalidArgument, "source volume ID missing")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, s := range d.st.Snapshots {
		if s.Name != req.GetName() {
			continue
		}
		if s.SourceVolumeID != req.GetSourceVolumeId() {
			return nil, status.Errorf(codes.AlreadyExists, "snapshot %q exists for volume %s", s.Name, s.SourceVolumeID)
		}
		return &csi.CreateSnapshotResponse{Snapshot: d.csiSnapshot(s)}, nil
	}
	v, ok := d.st.Volumes[req.GetSourceVolumeId()]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "volume %q not found", req.GetSourceVolumeId())
	}
	// The restore size is the source volume's size, as with block storage; a
	// node-local snapshot stays on its volume's node.
	s := &snapshot{ID: newID(), Name: req.GetName(), Node: v.Node, SourceVolumeID: v.ID, SizeBytes: v.CapacityBytes}
	dir := d.snapshotDir(s)
	if err := makeDir(dir); err != nil {
		return nil, status.Errorf(codes.Internal, "creating snapshot dir: %v", err)
	}
	if err := copyTree(d.volumeDir(v), dir); err != nil {
		os.RemoveAll(dir)
		return nil, status.Errorf(codes.Internal, "copying volume: %v", err)
	}
	s.CreationTime = time.Now().UTC()
	d.st.Snapshots[s.ID] = s
	if err := d.saveOrInternal(); err != nil {
		delete(d.st.Snapshots, s.ID)
		os.RemoveAll(dir)
		return nil, err
	}
	d.log.Info("created snapshot", "id", s.ID, "name", s.Name, "node", s.Node, "volume", v.ID)
	return &csi.CreateSnapshotResponse{Snapshot: d.csiSnapshot(s)}, nil
}

func (d *Driver) DeleteSnapshot(_ context.Context, req *csi.DeleteSnapshotRequest) (*csi.DeleteSnapshotResponse, error) {
	if !d.cfg.Mode.Snapshots() {
		return nil, d.errNoSnapshots()
	}
	if req.GetSnapshotId() == "" {
		return nil, status.Error(codes.InvalidArgument, "snapshot ID missing")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	s, ok := d.st.Snapshots[req.GetSnapshotId()]
	if !ok {
		return &csi.DeleteSnapshotResponse{}, nil
	}
	if err := os.RemoveAll(d.snapshotDir(s)); err != nil {
		return nil, status.Errorf(codes.Internal, "removing snapshot dir: %v", err)
	}
	delete(d.st.Snapshots, s.ID)
	if err := d.saveOrInternal(); err != nil {
		return nil, err
	}
	d.log.Info("deleted snapshot", "id", s.ID, "name", s.Name)
	return &csi.DeleteSnapshotResponse{}, nil
}

func (d *Driver) ListSnapshots(_ context.Context, req *csi.ListSnapshotsRequest) (*csi.ListSnapshotsResponse, error) {
	if !d.cfg.Mode.Snapshots() {
		return nil, d.errNoSnapshots()
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	var snaps []*snapshot
	for _, s := range d.st.Snapshots {
		if (req.GetSnapshotId() == "" || s.ID == req.GetSnapshotId()) &&
			(req.GetSourceVolumeId() == "" || s.SourceVolumeID == req.GetSourceVolumeId()) {
			snaps = append(snaps, s)
		}
	}
	sort.Slice(snaps, func(i, j int) bool {
		if !snaps[i].CreationTime.Equal(snaps[j].CreationTime) {
			return snaps[i].CreationTime.Before(snaps[j].CreationTime)
		}
		return snaps[i].ID < snaps[j].ID
	})
	snaps, next, err := page(snaps, req.GetStartingToken(), req.GetMaxEntries())
	if err != nil {
		return nil, err
	}
	resp := &csi.ListSnapshotsResponse{NextToken: next}
	for _, s := range snaps {
		resp.Entries = append(resp.Entries, &csi.ListSnapshotsResponse_Entry{Snapshot: d.csiSnapshot(s)})
	}
	return resp, nil
}

// ControllerExpandVolume grows a volume: its record, and a sized filesystem
// while no pod has it published (offline expansion); no node step follows.
func (d *Driver) ControllerExpandVolume(_ context.Context, req *csi.ControllerExpandVolumeRequest) (*csi.ControllerExpandVolumeResponse, error) {
	if req.GetVolumeId() == "" {
		return nil, status.Error(codes.InvalidArgument, "volume ID missing")
	}
	r := req.GetCapacityRange()
	if r == nil || r.GetRequiredBytes() <= 0 || (r.GetLimitBytes() > 0 && r.GetRequiredBytes() > r.GetLimitBytes()) {
		return nil, status.Errorf(codes.InvalidArgument, "invalid capacity range %v", r)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	v, ok := d.st.Volumes[req.GetVolumeId()]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "volume %q not found", req.GetVolumeId())
	}
	if c := req.GetVolumeCapability(); c != nil {
		if err := checkCapability(c); err != nil {
			return nil, err
		}
	}
	size := r.GetRequiredBytes()
	if size <= v.CapacityBytes {
		return &csi.ControllerExpandVolumeResponse{CapacityBytes: v.CapacityBytes}, nil
	}
	if used := d.allocated(v.Node) - v.CapacityBytes; used+size > d.cfg.Capacity {
		return nil, status.Errorf(codes.OutOfRange, "%d bytes requested, %d of %d allocated to other volumes", size, used, d.cfg.Capacity)
	}
	if v.FS != "" {
		if node, attached := d.attachedTo(v.ID); attached {
			return nil, status.Errorf(codes.FailedPrecondition, "volume %s is published on node %s: its filesystem grows offline only", v.ID, node)
		}
		if err := growFilesystem(d.volumeDir(v), size); err != nil {
			return nil, status.Errorf(codes.Internal, "growing the volume's filesystem: %v", err)
		}
	}
	old := v.CapacityBytes
	v.CapacityBytes = size
	if err := d.saveOrInternal(); err != nil {
		v.CapacityBytes = old
		return nil, err
	}
	d.log.Info("expanded volume", "id", v.ID, "from", old, "to", size)
	return &csi.ControllerExpandVolumeResponse{CapacityBytes: size}, nil
}
