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
	return &csi.NodeGetInfoResponse{
		NodeId:             d.cfg.NodeID,
		MaxVolumesPerNode:  d.cfg.MaxVolumesPerNode,
		AccessibleTopology: d.topology()[0],
	}, nil
}

func (d *Driver) NodeGetCapabilities(context.Context, *csi.NodeGetCapabilitiesRequest) (*csi.NodeGetCapabilitiesResponse, error) {
	return &csi.NodeGetCapabilitiesResponse{Capabilities: []*csi.NodeServiceCapability{{
		Type: &csi.NodeServiceCapability_Rpc{Rpc: &csi.NodeServiceCapability_RPC{Type: csi.NodeServiceCapability_RPC_GET_VOLUME_STATS}},
	}}}, nil
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
	v, ok := d.st.Volumes[id]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "volume %q not found", id)
	}
	mounted, err := isMountPoint(target)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "checking %s: %v", target, err)
	}
	if mounted {
		if ro, ok := v.Published[target]; ok && ro == readOnly {
			return &csi.NodePublishVolumeResponse{}, nil
		}
		return nil, status.Errorf(codes.AlreadyExists, "%s is already mounted with other options or another volume", target)
	}
	if err := os.MkdirAll(target, 0o750); err != nil {
		return nil, status.Errorf(codes.Internal, "creating target: %v", err)
	}
	if err := unix.Mount(d.volumeDir(id), target, "", unix.MS_BIND, ""); err != nil {
		return nil, status.Errorf(codes.Internal, "bind mount: %v", err)
	}
	if readOnly {
		if err := unix.Mount("", target, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
			if uerr := unix.Unmount(target, 0); uerr != nil {
				return nil, status.Errorf(codes.Internal, "read-only remount: %v (and unmounting the bind mount: %v)", err, uerr)
			}
			return nil, status.Errorf(codes.Internal, "read-only remount: %v", err)
		}
	}
	// Nothing was mounted here, so any other record of this target is stale.
	for _, o := range d.st.Volumes {
		delete(o.Published, target)
	}
	if v.Published == nil {
		v.Published = map[string]bool{}
	}
	v.Published[target] = readOnly
	return &csi.NodePublishVolumeResponse{}, d.saveOrInternal()
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
	for _, o := range d.st.Volumes {
		if _, ok := o.Published[target]; ok && o.ID != id {
			return &csi.NodeUnpublishVolumeResponse{}, nil
		}
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
	if v, ok := d.st.Volumes[id]; ok {
		if _, published := v.Published[target]; published {
			delete(v.Published, target)
			if err := d.saveOrInternal(); err != nil {
				return nil, err
			}
		}
	}
	return &csi.NodeUnpublishVolumeResponse{}, nil
}

// NodeGetVolumeStats reports the usage of the filesystem the volumes live on
// (volumes are directories and share it).
func (d *Driver) NodeGetVolumeStats(_ context.Context, req *csi.NodeGetVolumeStatsRequest) (*csi.NodeGetVolumeStatsResponse, error) {
	if req.GetVolumeId() == "" || req.GetVolumePath() == "" {
		return nil, status.Error(codes.InvalidArgument, "volume ID and volume path are required")
	}
	d.mu.Lock()
	_, ok := d.st.Volumes[req.GetVolumeId()]
	d.mu.Unlock()
	if !ok {
		return nil, status.Errorf(codes.NotFound, "volume %q not found", req.GetVolumeId())
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
