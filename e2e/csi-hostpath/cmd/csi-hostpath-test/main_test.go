package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"

	"github.com/rdf-bulkload/rdf-bulkload/e2e/csi-hostpath/driver"
)

// TestMain lets the test binary act as the command, so the tests below run
// the real main with real flags and signals without a separate build.
func TestMain(m *testing.M) {
	if os.Getenv("CSI_HOSTPATH_TEST_AS_COMMAND") == "1" {
		os.Exit(run(os.Args[1:]))
	}
	os.Exit(m.Run())
}

func command(args ...string) (*exec.Cmd, *bytes.Buffer) {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "CSI_HOSTPATH_TEST_AS_COMMAND=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	return cmd, &stderr
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

func waitForSocket(t *testing.T, path string, stderr *bytes.Buffer) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if fi, err := os.Stat(path); err == nil && fi.Mode()&os.ModeSocket != 0 {
			return
		}
	}
	t.Fatalf("socket %s did not appear; stderr:\n%s", path, stderr)
}

// TestCommandRegistersAndStopsOnSIGTERM starts the command with the flags the
// cluster uses, asks its registration socket what the kubelet would, calls the
// CSI endpoint it names, and checks that SIGTERM stops it cleanly and removes
// both sockets.
func TestCommandRegistersAndStopsOnSIGTERM(t *testing.T) {
	dir := shortTempDir(t)
	csiSock := filepath.Join(dir, "plugins", "csi.sock")
	regDir := filepath.Join(dir, "plugins_registry")
	cmd, stderr := command("--endpoint", "unix://"+csiSock, "--node-id", "node1",
		"--data-dir", filepath.Join(dir, "data"), "--kubelet-registration-dir", regDir, "--capacity", "5Gi")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }) // killed: Wait reports that
	regSock := filepath.Join(regDir, driver.ModeLocal.DriverName()+"-reg.sock")
	waitForSocket(t, regSock, stderr)

	conn, err := grpc.NewClient("unix://"+regSock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	info, err := registerapi.NewRegistrationClient(conn).GetInfo(ctx, &registerapi.InfoRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if info.Endpoint != csiSock || info.Name != driver.ModeLocal.DriverName() || info.Type != registerapi.CSIPlugin {
		t.Fatalf("GetInfo = %v", info)
	}
	csiConn, err := grpc.NewClient("unix://"+info.Endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer csiConn.Close()
	capResp, err := csi.NewControllerClient(csiConn).GetCapacity(ctx, &csi.GetCapacityRequest{})
	if err != nil || capResp.AvailableCapacity != 5<<30 {
		t.Fatalf("GetCapacity = %v, %v; want 5Gi from --capacity", capResp, err)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v; stderr:\n%s", err, stderr)
	}
	for _, s := range []string{csiSock, regSock} {
		if _, err := os.Stat(s); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left after SIGTERM: %v", s, err)
		}
	}
	if !strings.Contains(stderr.String(), "GetCapacity") {
		t.Errorf("RPC not logged; stderr:\n%s", stderr)
	}
}

func TestCommandRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--capacity", "lots"},
		{"--mode", "tape"},
		{"--services", "attacher"},
		{"--endpoint", "tcp://127.0.0.1:1", "--data-dir", t.TempDir()},
	} {
		cmd, stderr := command(args...)
		err := cmd.Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() == 0 {
			t.Errorf("%v: err = %v, want non-zero exit; stderr:\n%s", args, err, stderr)
		}
	}
}

// TestCommandNodePluginOfAMode starts the command as the cluster starts a node plugin of the
// network mode: it registers under that mode's driver name and serves no controller.
func TestCommandNodePluginOfAMode(t *testing.T) {
	dir := shortTempDir(t)
	csiSock := filepath.Join(dir, "n2.sock")
	regDir := filepath.Join(dir, "plugins_registry")
	cmd, stderr := command("--mode", "network", "--services", "node", "--endpoint", "unix://"+csiSock, "--node-id", "node2",
		"--data-dir", filepath.Join(dir, "data"), "--kubelet-registration-dir", regDir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }) // killed: Wait reports that
	regSock := filepath.Join(regDir, driver.ModeNetwork.DriverName()+"-reg.sock")
	waitForSocket(t, regSock, stderr)
	conn, err := grpc.NewClient("unix://"+csiSock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ni, err := csi.NewNodeClient(conn).NodeGetInfo(ctx, &csi.NodeGetInfoRequest{})
	if err != nil || ni.NodeId != "node2" || ni.AccessibleTopology != nil {
		t.Errorf("NodeGetInfo = %v, %v; want node2 without topology", ni, err)
	}
	if _, err := csi.NewControllerClient(conn).GetCapacity(ctx, &csi.GetCapacityRequest{}); status.Code(err) != codes.Unimplemented {
		t.Errorf("a node plugin's GetCapacity = %v, want Unimplemented (no controller here)", err)
	}
}
