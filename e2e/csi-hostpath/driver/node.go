package driver

import (
	"bufio"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func (d *Driver) NodeGetInfo(context.Context, *csi.NodeGetInfoRequest) (*csi.NodeGetInfoResponse, error) {
	resp := &csi.NodeGetInfoResponse{NodeId: d.cfg.NodeID, MaxVolumesPerNode: d.cfg.MaxVolumesPerNode}
	if t := d.topology(d.cfg.NodeID); t != nil {
		resp.AccessibleTopology = t[0]
	}
	return resp, nil
}

func (d *Driver) NodeGetCapabilities(context.Context, *csi.NodeGetCapabilitiesRequest) (*csi.NodeGetCapabilitiesResponse, error) {
	return &csi.NodeGetCapabilitiesResponse{Capabilities: []*csi.NodeServiceCapability{{
		Type: &csi.NodeServiceCapability_Rpc{Rpc: &csi.NodeServiceCapability_RPC{Type: csi.NodeServiceCapability_RPC_GET_VOLUME_STATS}},
	}}}, nil
}

// nodeVolumeDir is the directory of volume id as this node sees it; it does
// not exist for a node-local volume of another node.
func (d *Driver) nodeVolumeDir(id string) (string, error) {
	if id == "" || id != filepath.Base(id) || strings.HasPrefix(id, ".") {
		return "", status.Errorf(codes.NotFound, "volume %q not found", id)
	}
	dir := d.dataDir("volumes", d.cfg.NodeID, id)
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		if d.cfg.Mode.NodeLocal() {
			return "", status.Errorf(codes.NotFound, "volume %q not found on node %s", id, d.cfg.NodeID)
		}
		return "", status.Errorf(codes.NotFound, "volume %q not found", id)
	} else if err != nil {
		return "", status.Errorf(codes.Internal, "volume %q: %v", id, err)
	}
	return dir, nil
}

// attach records that volume id is published on this node, and fails while
// it is published on another: a volume is used by one node at a time, as a
// network block device is attached to one machine. The record is the file
// attachments/<id>, created exclusively, holding the node's ID.
func (d *Driver) attach(id string) error {
	p := d.path("attachments", id)
	f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err == nil {
		_, err = f.WriteString(d.cfg.NodeID)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(p)
			return status.Errorf(codes.Internal, "recording attachment: %v", err)
		}
		return nil
	}
	if !errors.Is(err, os.ErrExist) {
		return status.Errorf(codes.Internal, "recording attachment: %v", err)
	}
	if node, _ := d.attachedTo(id); node != d.cfg.NodeID {
		return status.Errorf(codes.FailedPrecondition, "volume %s is published on node %s: one node at a time", id, node)
	}
	return nil
}

// attachedTo returns the node volume id is published on, if any.
func (d *Driver) attachedTo(id string) (string, bool) {
	b, err := os.ReadFile(d.path("attachments", id))
	if err != nil {
		return "", false
	}
	return string(b), true
}

// detachIfUnused removes this node's attachment of volume id once no target
// of this node publishes it. The caller holds d.mu.
func (d *Driver) detachIfUnused(id string) error {
	for _, p := range d.pub {
		if p.VolumeID == id {
			return nil
		}
	}
	if node, ok := d.attachedTo(id); ok && node == d.cfg.NodeID {
		if err := os.Remove(d.path("attachments", id)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return status.Errorf(codes.Internal, "removing attachment: %v", err)
		}
	}
	return nil
}

// NodePublishVolume bind-mounts the volume's directory onto the target path,
// read-only when asked to or when the access mode is a reader-only one.
func (d *Driver) NodePublishVolume(_ context.Context, req *csi.NodePublishVolumeRequest) (*csi.NodePublishVolumeResponse, error) {
	id, target := req.GetVolumeId(), req.GetTargetPath()
	if id == "" || target == "" {
		return nil, status.Error(codes.InvalidArgument, "volume ID and target path are required")
	}
	if err := checkCapability(req.GetVolumeCapability()); err != nil {
		return nil, err
	}
	mode := req.GetVolumeCapability().GetAccessMode().GetMode()
	readOnly := req.GetReadonly() || mode != csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER

	d.mu.Lock()
	defer d.mu.Unlock()
	dir, err := d.nodeVolumeDir(id)
	if err != nil {
		return nil, err
	}
	mounted, err := isMountPoint(target)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "checking %s: %v", target, err)
	}
	if mounted {
		if p, ok := d.pub[target]; ok && p == (publication{VolumeID: id, ReadOnly: readOnly}) {
			return &csi.NodePublishVolumeResponse{}, nil
		}
		return nil, status.Errorf(codes.AlreadyExists, "%s is already mounted with other options or another volume", target)
	}
	if err := d.attach(id); err != nil {
		return nil, err
	}
	// Nothing was mounted here, so any record of this target is stale.
	delete(d.pub, target)
	if err := d.mount(dir, target, readOnly); err != nil {
		if derr := d.detachIfUnused(id); derr != nil {
			d.log.Warn("releasing attachment after a failed publish", "volume", id, "err", derr)
		}
		return nil, err
	}
	d.pub[target] = publication{VolumeID: id, ReadOnly: readOnly}
	return &csi.NodePublishVolumeResponse{}, d.savePublished()
}

func (d *Driver) mount(dir, target string, readOnly bool) error {
	if err := os.MkdirAll(target, 0o750); err != nil {
		return status.Errorf(codes.Internal, "creating target: %v", err)
	}
	if err := unix.Mount(dir, target, "", unix.MS_BIND, ""); err != nil {
		return status.Errorf(codes.Internal, "bind mount: %v", err)
	}
	if readOnly {
		if err := unix.Mount("", target, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
			if uerr := unix.Unmount(target, 0); uerr != nil {
				return status.Errorf(codes.Internal, "read-only remount: %v (and unmounting the bind mount: %v)", err, uerr)
			}
			return status.Errorf(codes.Internal, "read-only remount: %v", err)
		}
	}
	return nil
}

// NodeUnpublishVolume unmounts the target path and removes it. It succeeds when
// there is nothing left to do, and leaves alone a target that another volume is
// published at.
func (d *Driver) NodeUnpublishVolume(_ context.Context, req *csi.NodeUnpublishVolumeRequest) (*csi.NodeUnpublishVolumeResponse, error) {
	id, target := req.GetVolumeId(), req.GetTargetPath()
	if id == "" || target == "" {
		return nil, status.Error(codes.InvalidArgument, "volume ID and target path are required")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if p, ok := d.pub[target]; ok && p.VolumeID != id {
		return &csi.NodeUnpublishVolumeResponse{}, nil
	}
	for range 8 { // unmount stacked mounts too, if any
		mounted, err := isMountPoint(target)
		if err != nil {
			return nil, status.Errorf(codes.Internal, "checking %s: %v", target, err)
		}
		if !mounted {
			break
		}
		if err := unix.Unmount(target, 0); err != nil {
			return nil, status.Errorf(codes.Internal, "unmount %s: %v", target, err)
		}
	}
	if err := os.Remove(target); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, status.Errorf(codes.Internal, "removing target: %v", err)
	}
	if _, ok := d.pub[target]; ok {
		delete(d.pub, target)
		if err := d.savePublished(); err != nil {
			return nil, err
		}
	}
	if err := d.detachIfUnused(id); err != nil {
		return nil, err
	}
	return &csi.NodeUnpublishVolumeResponse{}, nil
}

// NodeGetVolumeStats reports the usage of the filesystem the volumes live on
// (volumes are directories and share it).
func (d *Driver) NodeGetVolumeStats(_ context.Context, req *csi.NodeGetVolumeStatsRequest) (*csi.NodeGetVolumeStatsResponse, error) {
	if req.GetVolumeId() == "" || req.GetVolumePath() == "" {
		return nil, status.Error(codes.InvalidArgument, "volume ID and volume path are required")
	}
	if _, err := d.nodeVolumeDir(req.GetVolumeId()); err != nil {
		return nil, err
	}
	var fs unix.Statfs_t
	if err := unix.Statfs(req.GetVolumePath(), &fs); errors.Is(err, unix.ENOENT) {
		return nil, status.Errorf(codes.NotFound, "path %q not found", req.GetVolumePath())
	} else if err != nil {
		return nil, status.Errorf(codes.Internal, "statfs: %v", err)
	}
	bs := fs.Bsize
	return &csi.NodeGetVolumeStatsResponse{Usage: []*csi.VolumeUsage{
		{Unit: csi.VolumeUsage_BYTES, Total: int64(fs.Blocks) * bs, Available: int64(fs.Bavail) * bs, Used: int64(fs.Blocks-fs.Bfree) * bs},
		{Unit: csi.VolumeUsage_INODES, Total: int64(fs.Files), Available: int64(fs.Ffree), Used: int64(fs.Files - fs.Ffree)},
	}}, nil
}

// isMountPoint reports whether path is a mount point according to
// /proc/self/mountinfo. A bind mount from the same filesystem has the same
// device number as its parent, so stat cannot tell.
func isMountPoint(path string) (bool, error) {
	resolved, err := filepath.EvalSymlinks(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	points, err := mountPoints()
	if err != nil {
		return false, err
	}
	for _, p := range points {
		if p == resolved {
			return true, nil
		}
	}
	return false, nil
}

// mountPoints lists the mount points of this mount namespace.
func mountPoints() ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var points []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mount-point options ...
		fields := strings.Fields(sc.Text())
		if len(fields) > 4 {
			points = append(points, unescapeOctal(fields[4]))
		}
	}
	return points, sc.Err()
}

// unescapeOctal undoes the kernel's \NNN escaping of spaces, tabs, newlines
// and backslashes in mountinfo paths.
func unescapeOctal(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
