// Package driver implements csi-hostpath-test, a hostpath-style CSI driver for
// the rdf-bulkload e2e test cluster only. It is never meant for production:
// volumes are plain directories on one node, capacity is bookkeeping rather than
// a quota, snapshots are full copies, and every caller is trusted.
//
// One process serves the CSI identity, controller and node services on one
// unix socket and registers itself with the kubelet's plugin watcher, so no
// node-driver-registrar or external-attacher is needed (the CSIDriver object
// must say attachRequired: false).
package driver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

const (
	// Name is the CSI driver name: the StorageClass provisioner, the
	// VolumeSnapshotClass driver and the CSIDriver object's name.
	Name = "hostpath.csi.test.rdf-bulkload.io"
	// TopologyKey is the one topology segment; its value is the node ID.
	TopologyKey = "topology.hostpath.csi.test.rdf-bulkload.io/node"
	// Version is reported by GetPluginInfo.
	Version = "0.1.0-test"

	defaultVolumeSize int64 = 1 << 30
)

// Config is the driver's configuration (the command's flags).
type Config struct {
	Endpoint          string // CSI socket: unix:///path/csi.sock or a plain path
	NodeID            string
	DataDir           string // volumes/<id>, snapshots/<id>, state.json
	RegistrationDir   string // kubelet plugins_registry dir; empty: do not register
	Capacity          int64  // bytes that volumes may take in total
	MaxVolumesPerNode int64  // reported by NodeGetInfo; 0 means no limit
}

// Driver serves the CSI services. Its state is kept in memory and persisted to
// DataDir/state.json after every change, so a restarted driver knows its volumes.
type Driver struct {
	csi.UnimplementedIdentityServer
	csi.UnimplementedControllerServer
	csi.UnimplementedNodeServer

	cfg  Config
	sock string // CSI socket path
	log  *slog.Logger

	mu sync.Mutex // guards st and the directories under DataDir
	st state
}

type state struct {
	Volumes   map[string]*volume   `json:"volumes"`
	Snapshots map[string]*snapshot `json:"snapshots"`
}

type volume struct {
	ID               string          `json:"id"`
	Name             string          `json:"name"`
	CapacityBytes    int64           `json:"capacityBytes"`
	SourceSnapshotID string          `json:"sourceSnapshotID,omitempty"`
	SourceVolumeID   string          `json:"sourceVolumeID,omitempty"`
	Published        map[string]bool `json:"published,omitempty"` // target path -> read-only
}

type snapshot struct {
	ID             string    `json:"id"`
	Name           string    `json:"name"`
	SourceVolumeID string    `json:"sourceVolumeID"`
	SizeBytes      int64     `json:"sizeBytes"`
	CreationTime   time.Time `json:"creationTime"`
}

// New checks cfg, creates the data directories and loads persisted state.
func New(cfg Config, log *slog.Logger) (*Driver, error) {
	sock, err := SocketPath(cfg.Endpoint)
	if err != nil {
		return nil, err
	}
	if cfg.NodeID == "" || cfg.DataDir == "" {
		return nil, errors.New("node ID and data dir are required")
	}
	if cfg.Capacity <= 0 {
		return nil, errors.New("capacity must be positive")
	}
	d := &Driver{cfg: cfg, sock: sock, log: log}
	for _, dir := range []string{d.path("volumes"), d.path("snapshots")} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	b, err := os.ReadFile(d.path("state.json"))
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, err
	default:
		if err := json.Unmarshal(b, &d.st); err != nil {
			return nil, fmt.Errorf("state.json: %w", err)
		}
	}
	if d.st.Volumes == nil {
		d.st.Volumes = map[string]*volume{}
	}
	if d.st.Snapshots == nil {
		d.st.Snapshots = map[string]*snapshot{}
	}
	log.Info("loaded state", "dataDir", cfg.DataDir, "volumes", len(d.st.Volumes), "snapshots", len(d.st.Snapshots))
	return d, nil
}

// SocketPath turns a unix:///path, unix:path or plain path endpoint into a path.
func SocketPath(endpoint string) (string, error) {
	p := endpoint
	if rest, ok := strings.CutPrefix(p, "unix://"); ok {
		p = rest
	} else if rest, ok := strings.CutPrefix(p, "unix:"); ok {
		p = rest
	}
	if p == "" || strings.Contains(p, "://") {
		return "", fmt.Errorf("endpoint %q: want unix:///path/to/csi.sock", endpoint)
	}
	return p, nil
}

// RegistrationSocket is the path of the kubelet registration socket, or "".
func (d *Driver) RegistrationSocket() string {
	if d.cfg.RegistrationDir == "" {
		return ""
	}
	return filepath.Join(d.cfg.RegistrationDir, Name+"-reg.sock")
}

// Run serves the CSI socket and, if configured, the kubelet registration
// socket until ctx is cancelled, then stops gracefully and removes both sockets.
func (d *Driver) Run(ctx context.Context) error {
	// One driver per data dir: a second one would replace the first one's sockets.
	lock, err := os.OpenFile(d.path("lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return fmt.Errorf("data dir %s is in use by another driver: %w", d.cfg.DataDir, err)
	}

	csiSrv := grpc.NewServer(grpc.UnaryInterceptor(d.logRPC))
	csi.RegisterIdentityServer(csiSrv, d)
	csi.RegisterControllerServer(csiSrv, d)
	csi.RegisterNodeServer(csiSrv, d)
	servers := map[string]*grpc.Server{d.sock: csiSrv}
	if reg := d.RegistrationSocket(); reg != "" {
		regSrv := grpc.NewServer(grpc.UnaryInterceptor(d.logRPC))
		registerapi.RegisterRegistrationServer(regSrv, &registrar{endpoint: d.sock, log: d.log})
		servers[reg] = regSrv
	}

	errc := make(chan error, len(servers))
	for path, srv := range servers {
		l, err := listenUnix(path)
		if err != nil {
			for p, s := range servers {
				s.Stop()
				os.Remove(p)
			}
			return err
		}
		d.log.Info("serving", "socket", path)
		go func() { errc <- srv.Serve(l) }()
	}

	select {
	case <-ctx.Done():
		d.log.Info("shutting down")
	case err = <-errc:
		d.log.Error("server failed", "err", err)
	}
	for path, srv := range servers {
		stopGracefully(srv, 10*time.Second)
		if rmErr := os.Remove(path); rmErr != nil && !errors.Is(rmErr, os.ErrNotExist) {
			d.log.Warn("removing socket", "socket", path, "err", rmErr)
		}
	}
	return err
}

func listenUnix(path string) (net.Listener, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("removing stale socket: %w", err)
	}
	return net.Listen("unix", path)
}

func stopGracefully(s *grpc.Server, timeout time.Duration) {
	done := make(chan struct{})
	go func() { s.GracefulStop(); close(done) }()
	select {
	case <-done:
	case <-time.After(timeout):
		s.Stop()
	}
}

func (d *Driver) logRPC(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	start := time.Now()
	resp, err := h(ctx, req)
	method := info.FullMethod[strings.LastIndex(info.FullMethod, "/")+1:]
	if err != nil {
		d.log.Warn("rpc", "method", method, "code", status.Code(err).String(), "err", status.Convert(err).Message(), "took", time.Since(start))
	} else {
		d.log.Info("rpc", "method", method, "took", time.Since(start))
	}
	return resp, err
}

func (d *Driver) path(elem ...string) string {
	return filepath.Join(append([]string{d.cfg.DataDir}, elem...)...)
}

func (d *Driver) volumeDir(id string) string   { return d.path("volumes", id) }
func (d *Driver) snapshotDir(id string) string { return d.path("snapshots", id) }

// save writes the state atomically. The caller holds d.mu.
func (d *Driver) save() error {
	b, err := json.MarshalIndent(&d.st, "", "  ")
	if err != nil {
		return err
	}
	tmp := d.path("state.json.tmp")
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err = f.Write(b); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp, d.path("state.json"))
}

// saveOrInternal persists the state and maps a failure to codes.Internal.
func (d *Driver) saveOrInternal() error {
	if err := d.save(); err != nil {
		return status.Errorf(codes.Internal, "persisting state: %v", err)
	}
	return nil
}

func newID() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// ParseSize parses a byte count such as 100Gi, 500M or 1048576.
func ParseSize(s string) (int64, error) {
	units := []struct {
		suffix string
		mult   int64
	}{{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"Ti", 1 << 40},
		{"k", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}}
	num, mult := s, int64(1)
	for _, u := range units {
		if rest, ok := strings.CutSuffix(s, u.suffix); ok {
			num, mult = rest, u.mult
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || (n > 0 && mult > (1<<63-1)/n) {
		return 0, fmt.Errorf("invalid size %q", s)
	}
	return n * mult, nil
}

// Identity service.

func (d *Driver) GetPluginInfo(context.Context, *csi.GetPluginInfoRequest) (*csi.GetPluginInfoResponse, error) {
	return &csi.GetPluginInfoResponse{Name: Name, VendorVersion: Version}, nil
}

func (d *Driver) GetPluginCapabilities(context.Context, *csi.GetPluginCapabilitiesRequest) (*csi.GetPluginCapabilitiesResponse, error) {
	svc := func(t csi.PluginCapability_Service_Type) *csi.PluginCapability {
		return &csi.PluginCapability{Type: &csi.PluginCapability_Service_{Service: &csi.PluginCapability_Service{Type: t}}}
	}
	return &csi.GetPluginCapabilitiesResponse{Capabilities: []*csi.PluginCapability{
		svc(csi.PluginCapability_Service_CONTROLLER_SERVICE),
		svc(csi.PluginCapability_Service_VOLUME_ACCESSIBILITY_CONSTRAINTS),
	}}, nil
}

func (d *Driver) Probe(context.Context, *csi.ProbeRequest) (*csi.ProbeResponse, error) {
	return &csi.ProbeResponse{}, nil
}

// registrar answers the kubelet's plugin watcher on the registration socket.
type registrar struct {
	registerapi.UnimplementedRegistrationServer
	endpoint string
	log      *slog.Logger
}

func (r *registrar) GetInfo(context.Context, *registerapi.InfoRequest) (*registerapi.PluginInfo, error) {
	return &registerapi.PluginInfo{
		Type:              registerapi.CSIPlugin,
		Name:              Name,
		Endpoint:          r.endpoint,
		SupportedVersions: []string{"1.0.0"},
	}, nil
}

func (r *registrar) NotifyRegistrationStatus(_ context.Context, s *registerapi.RegistrationStatus) (*registerapi.RegistrationStatusResponse, error) {
	if s.PluginRegistered {
		r.log.Info("registered with kubelet")
	} else {
		r.log.Error("kubelet rejected registration", "err", s.Error)
	}
	return &registerapi.RegistrationStatusResponse{}, nil
}
