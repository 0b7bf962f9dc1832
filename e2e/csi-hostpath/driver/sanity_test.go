package driver

import (
	"path/filepath"
	"testing"

	"github.com/kubernetes-csi/csi-test/v5/pkg/sanity"
)

// TestSanity runs the kubernetes-csi sanity suite (the CSI conformance
// checks) against the real driver: real directories, copies and bind mounts.
// Specs for capabilities the driver does not claim are skipped by the suite.
func TestSanity(t *testing.T) {
	requireRoot(t)
	dir := shortTempDir(t)
	unmountUnder(t, dir)
	r := startDriver(t, testConfig(t, dir))

	cfg := sanity.NewTestConfig()
	cfg.Address = "unix://" + r.d.sock
	cfg.TargetPath = filepath.Join(dir, "target")
	cfg.StagingPath = filepath.Join(dir, "staging")
	cfg.TestVolumeSize = 16 << 20
	sanity.Test(t, cfg)
}
