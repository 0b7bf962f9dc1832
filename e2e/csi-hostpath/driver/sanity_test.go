package driver

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/kubernetes-csi/csi-test/v5/pkg/sanity"
)

// sanityModeEnv makes the test binary run the sanity suite for one mode (a
// child process: Ginkgo runs one suite per process).
const sanityModeEnv = "CSI_HOSTPATH_SANITY_MODE"

// sanityFilesystemEnv, if set, is the fs parameter of the suite's volumes.
const sanityFilesystemEnv = "CSI_HOSTPATH_SANITY_FS"

var ranSpecs = regexp.MustCompile(`Ran (\d+) of (\d+) Specs`)

// TestSanity runs the kubernetes-csi sanity suite (the CSI conformance
// checks) against the real driver in every mode, deployed as in the cluster:
// a controller process and a node plugin sharing the data directory, real
// directories (and, for local, sized ext4 filesystems), copies and bind mounts.
// Specs for capabilities a mode does not claim are skipped by the suite, so a
// mode without snapshots must run fewer.
func TestSanity(t *testing.T) {
	requireRoot(t)
	if m := os.Getenv(sanityModeEnv); m != "" {
		sanityOfMode(t, Mode(m), os.Getenv(sanityFilesystemEnv))
		return
	}
	ran := map[Mode]int{}
	type run struct {
		mode Mode
		fs   string
	}
	runs := []run{{ModeLocal, ""}, {ModeNetwork, ""}, {ModeNoSnapshots, ""}, {ModeLocal, "ext4"}}
	for _, r := range runs {
		m := r.mode
		name := string(m)
		if r.fs != "" {
			name += "-" + r.fs
		}
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run", "^TestSanity$", "-test.count=1")
			cmd.Env = append(os.Environ(), sanityModeEnv+"="+string(m), sanityFilesystemEnv+"="+r.fs)
			out, err := cmd.CombinedOutput()
			if testing.Verbose() {
				t.Logf("%s", out)
			}
			if err != nil {
				t.Fatalf("sanity suite, mode %s: %v\n%s", m, err, out)
			}
			match := ranSpecs.FindSubmatch(out)
			if match == nil {
				t.Fatalf("no spec count in the suite's output:\n%s", out)
			}
			if r.fs == "" {
				ran[m], _ = strconv.Atoi(string(match[1]))
			}
			t.Logf("mode %s: ran %s of %s specs", m, match[1], match[2])
		})
	}
	if ran[ModeNoSnapshots] >= ran[ModeLocal] || ran[ModeNoSnapshots] >= ran[ModeNetwork] {
		t.Errorf("specs run per mode %v: the mode without snapshots must skip the snapshot specs", ran)
	}
}

func sanityOfMode(t *testing.T, m Mode, fs string) {
	dir := shortTempDir(t)
	unmountUnder(t, dir)
	node := startDriver(t, nodePlugin(dir, m, "node1"))
	ctrl := startDriver(t, controller(dir, m))

	cfg := sanity.NewTestConfig()
	cfg.Address = "unix://" + node.d.sock
	cfg.ControllerAddress = "unix://" + ctrl.d.sock
	cfg.TargetPath = filepath.Join(dir, "target")
	cfg.StagingPath = filepath.Join(dir, "staging")
	cfg.TestVolumeSize = 16 << 20
	if fs != "" {
		cfg.TestVolumeParameters = map[string]string{ParamFilesystem: fs}
	}
	sanity.Test(t, cfg)
}
