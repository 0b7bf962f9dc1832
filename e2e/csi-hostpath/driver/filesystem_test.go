package driver

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestSizedFilesystemFillsAndGrows: a volume of a class with fs=ext4 is a
// filesystem of its capacity, so a pod writing more than that gets ENOSPC; an
// expansion grows it once unpublished, keeping its files, and the write then fits; a
// restore of its snapshot is a sized filesystem too; deleting it leaves no
// mount or image behind.
func TestSizedFilesystemFillsAndGrows(t *testing.T) {
	requireRoot(t)
	dir := shortTempDir(t)
	unmountUnder(t, dir)
	n1 := startDriver(t, nodePlugin(dir, ModeLocal, "node1"))
	c := startDriver(t, controller(dir, ModeLocal))
	ctx := context.Background()
	params := map[string]string{ParamFilesystem: "ext4"}

	req := volumeRequest("scratch", nil, nil)
	req.CapacityRange.RequiredBytes, req.Parameters = 8<<20, params
	resp, err := c.ctrl().CreateVolume(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	vol := resp.Volume
	target := filepath.Join(dir, "pod", "scratch")
	publish(t, n1, vol.VolumeId, target, false)
	blob := make([]byte, 12<<20)
	if err := os.WriteFile(filepath.Join(target, "big"), blob, 0o644); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("writing 12 MiB to an 8 MiB volume: %v, want ENOSPC", err)
	}
	if err := os.Remove(filepath.Join(target, "big")); err != nil {
		t.Fatal(err)
	}

	writeFile(t, filepath.Join(target, "kept"), "checkpoint")
	expand := &csi.ControllerExpandVolumeRequest{VolumeId: vol.VolumeId, CapacityRange: &csi.CapacityRange{RequiredBytes: 32 << 20}}
	if _, err := c.ctrl().ControllerExpandVolume(ctx, expand); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("expanding a published sized volume: %v, want FailedPrecondition (offline only)", err)
	}
	unpublish(t, n1, vol.VolumeId, target)
	grown, err := c.ctrl().ControllerExpandVolume(ctx, expand)
	if err != nil || grown.CapacityBytes != 32<<20 || grown.NodeExpansionRequired {
		t.Fatalf("ControllerExpandVolume = %v, %v; want 32 MiB, no node step", grown, err)
	}
	publish(t, n1, vol.VolumeId, target, false)
	if got := readTree(t, target); got["kept"] != "checkpoint" {
		t.Errorf("after growing, the volume holds %v", got)
	}
	if err := os.WriteFile(filepath.Join(target, "big"), blob, 0o644); err != nil {
		t.Fatalf("writing 12 MiB after growing the volume to 32 MiB: %v", err)
	}

	snap, err := c.ctrl().CreateSnapshot(ctx, &csi.CreateSnapshotRequest{Name: "snap", SourceVolumeId: vol.VolumeId})
	if err != nil {
		t.Fatal(err)
	}
	rreq := volumeRequest("restored", fromSnapshot(snap.Snapshot.SnapshotId), nil)
	rreq.Parameters = params
	restored, err := c.ctrl().CreateVolume(ctx, rreq)
	if err != nil {
		t.Fatal(err)
	}
	rdir := c.volumeDir(restored.Volume.VolumeId)
	if mounted, _ := isMountPoint(rdir); !mounted || restored.Volume.CapacityBytes != 32<<20 {
		t.Errorf("restored volume: mounted %v, %d bytes; want a 32 MiB filesystem", mounted, restored.Volume.CapacityBytes)
	}
	if fi, err := os.Stat(filepath.Join(rdir, "big")); err != nil || fi.Size() != 12<<20 {
		t.Errorf("restored volume's file: %v, %v", fi, err)
	}

	unpublish(t, n1, vol.VolumeId, target)
	for _, id := range []string{vol.VolumeId, restored.Volume.VolumeId} {
		vdir := c.volumeDir(id)
		if _, err := c.ctrl().DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: id}); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(imagePath(vdir)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("image of %s left: %v", id, err)
		}
	}
	req.Parameters = map[string]string{ParamFilesystem: "xfs"}
	req.Name = "other"
	if _, err := c.ctrl().CreateVolume(ctx, req); err == nil {
		t.Error("fs=xfs accepted")
	}
}
