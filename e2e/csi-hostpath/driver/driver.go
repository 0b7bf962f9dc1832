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

// Mode is the kind of storage a driver process serves. Each mode is a CSI
// driver of its own (its own name, StorageClass and, where it snapshots,
// VolumeSnapshotClass), modelled on a kind of storage users run.
type Mode string

const (
	// ModeLocal is node-local storage like TopoLVM: a volume and its
	// snapshots live on one node, and a restore lands only there.
	ModeLocal Mode = "local"
	// ModeNetwork is network storage like EBS or Ceph RBD: a volume can be
	// used on any node, one node at a time; snapshots are cluster-wide.
	ModeNetwork Mode = "network"
	// ModeNoSnapshots is node-local storage without snapshots, like
	// local-path: volumes only.
	ModeNoSnapshots Mode = "no-snapshots"
)

// Modes lists every mode.
var Modes = []Mode{ModeLocal, ModeNetwork, ModeNoSnapshots}

// ParseMode returns the mode named s.
func ParseMode(s string) (Mode, error) {
	for _, m := range Modes {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("unknown mode %q (want one of %v)", s, Modes)
}

// DriverName is the CSI driver name: the StorageClass provisioner, the
// VolumeSnapshotClass driver and the CSIDriver object's name.
func (m Mode) DriverName() string {
	switch m {
	case ModeNetwork:
		return "network.csi.test.rdf-bulkload.io"
	case ModeNoSnapshots:
		return "nosnap.csi.test.rdf-bulkload.io"
	default:
		return "hostpath.csi.test.rdf-bulkload.io"
	}
}

// NodeLocal reports whether a volume lives on one node (topology per node).
func (m Mode) NodeLocal() bool { return m != ModeNetwork }

// Snapshots reports whether the driver takes snapshots and restores and
// clones volumes.
func (m Mode) Snapshots() bool { return m != ModeNoSnapshots }

// TopologyKey is the one topology segment of a node-local mode; its value is
// the node ID.
func (m Mode) TopologyKey() string { return "topology." + m.DriverName() + "/node" }

const (
	// Version is reported by GetPluginInfo.
	Version = "0.2.0-test"

	defaultVolumeSize int64 = 1 << 30
)

// Config is the driver's configuration (the command's flags).
type Config struct {
	Mode Mode
	// Controller and Node choose the services this process serves. The
	// processes of one driver share DataDir: one controller for the cluster
	// and one node plugin per node, or one process serving both.
	Controller, Node  bool
	Endpoint          string // CSI socket: unix:///path/csi.sock or a plain path
	NodeID            string // the node plugin's node; required with Node
	DataDir           string // see the layout in dataLayout
	RegistrationDir   string // kubelet plugins_registry dir; empty: do not register
	Capacity          int64  // bytes that volumes may take on each node (node-local) or in total (network)
	MaxVolumesPerNode int64  // reported by NodeGetInfo; 0 means no limit
}

// Data layout under DataDir, shared by the controller and the node plugins:
//
//	controller/state.json, controller/lock    the controller's records
//	nodes/<node>/                              made by the node plugin on start: the node exists
//	nodes/<node>/published.json, lock          the node plugin's publications
//	nodes/<node>/volumes/<id>, snapshots/<id>  data of node-local modes
//	volumes/<id>, snapshots/<id>               data of the network mode
//	attachments/<id>                           the node a volume is published on (one at a time)

// Driver serves the CSI services. The controller's records are kept in
// memory and persisted to controller/state.json after every change, the node
// plugin's publications likewise to nodes/<node>/published.json, so a
// restarted driver knows its volumes.
type Driver struct {
	csi.UnimplementedIdentityServer
	csi.UnimplementedControllerServer
	csi.UnimplementedNodeServer

	cfg  Config
	name string // the CSI driver name
	sock string // CSI socket path
	log  *slog.Logger

	mu  sync.Mutex // guards st, pub and the directories under DataDir
	st  state      // controller
	pub published  // node plugin
}

type state struct {
	Volumes   map[string]*volume   `json:"volumes"`
	Snapshots map[string]*snapshot `json:"snapshots"`
}

type volume struct {
	ID               string `json:"id"`
	Name             string `json:"name"`
	Node             string `json:"node,omitempty"` // node-local modes: where it lives
	FS               string `json:"fs,omitempty"`   // ParamFilesystem: "" (a directory) or ext4
	CapacityBytes    int64  `json:"capacityBytes"`
	SourceSnapshotID string `json:"sourceSnapshotID,omitempty"`
	SourceVolumeID   string `json:"sourceVolumeID,omitempty"`
}

type snapshot struct {
	ID             string    `json:"id"`
	Name           string    `json:"name"`
	Node           string    `json:"node,omitempty"` // node-local modes: where it lives
	SourceVolumeID string    `json:"sourceVolumeID"`
	SizeBytes      int64     `json:"sizeBytes"`
	CreationTime   time.Time `json:"creationTime"`
}

// published maps a target path to what the node plugin mounted there.
type published map[string]publication

type publication struct {
	VolumeID string `json:"volumeID"`
	ReadOnly bool   `json:"readOnly"`
}

// New checks cfg, creates the data directories and loads persisted state.
func New(cfg Config, log *slog.Logger) (*Driver, error) {
	sock, err := SocketPath(cfg.Endpoint)
	if err != nil {
		return nil, err
	}
	if _, err := ParseMode(string(cfg.Mode)); err != nil {
		return nil, err
	}
	if !cfg.Controller && !cfg.Node {
		return nil, errors.New("serve the controller, the node service or both")
	}
	if cfg.DataDir == "" || (cfg.Node && cfg.NodeID == "") {
		return nil, errors.New("data dir and (for the node service) node ID are required")
	}
	if cfg.Capacity <= 0 {
		return nil, errors.New("capacity must be positive")
	}
	d := &Driver{cfg: cfg, name: cfg.Mode.DriverName(), sock: sock, log: log, pub: published{}}
	d.st.Volumes, d.st.Snapshots = map[string]*volume{}, map[string]*snapshot{}
	if cfg.Controller {
		if err := os.MkdirAll(d.path("controller"), 0o755); err != nil {
			return nil, err
		}
		if err := readJSON(d.path("controller", "state.json"), &d.st); err != nil {
			return nil, err
		}
		if d.st.Volumes == nil {
			d.st.Volumes = map[string]*volume{}
		}
		if d.st.Snapshots == nil {
			d.st.Snapshots = map[string]*snapshot{}
		}
	}
	if cfg.Node {
		if err := os.MkdirAll(d.nodePath(cfg.NodeID), 0o755); err != nil {
			return nil, err
		}
		if err := readJSON(d.nodePath(cfg.NodeID, "published.json"), &d.pub); err != nil {
			return nil, err
		}
		if d.pub == nil {
			d.pub = published{}
		}
	}
	for _, dir := range []string{d.path("attachments"), d.path("volumes"), d.path("snapshots")} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	log.Info("loaded state", "mode", cfg.Mode, "dataDir", cfg.DataDir, "controller", cfg.Controller, "node", cfg.NodeID,
		"volumes", len(d.st.Volumes), "snapshots", len(d.st.Snapshots), "published", len(d.pub))
	return d, nil
}

// Name is the CSI driver name this process serves.
func (d *Driver) Name() string { return d.name }

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
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
	if d.cfg.RegistrationDir == "" || !d.cfg.Node {
		return ""
	}
	return filepath.Join(d.cfg.RegistrationDir, d.name+"-reg.sock")
}

// Run serves the CSI socket and, if configured, the kubelet registration
// socket until ctx is cancelled, then stops gracefully and removes both sockets.
func (d *Driver) Run(ctx context.Context) error {
	// One controller per data dir and one node plugin per node: a second one
	// would write the same records and replace the first one's sockets.
	var locks []string
	if d.cfg.Controller {
		locks = append(locks, d.path("controller", "lock"))
	}
	if d.cfg.Node {
		locks = append(locks, d.nodePath(d.cfg.NodeID, "lock"))
	}
	var held []*os.File
	defer func() {
		for _, f := range held {
			f.Close()
		}
	}()
	for _, p := range locks {
		lock, err := os.OpenFile(p, os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			return err
		}
		held = append(held, lock)
		if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			return fmt.Errorf("%s is in use by another driver: %w", filepath.Dir(p), err)
		}
	}

	csiSrv := grpc.NewServer(grpc.UnaryInterceptor(d.logRPC))
	csi.RegisterIdentityServer(csiSrv, d)
	if d.cfg.Controller {
		csi.RegisterControllerServer(csiSrv, d)
	}
	if d.cfg.Node {
		csi.RegisterNodeServer(csiSrv, d)
	}
	servers := map[string]*grpc.Server{d.sock: csiSrv}
	if reg := d.RegistrationSocket(); reg != "" {
		regSrv := grpc.NewServer(grpc.UnaryInterceptor(d.logRPC))
		registerapi.RegisterRegistrationServer(regSrv, &registrar{name: d.name, endpoint: d.sock, log: d.log})
		servers[reg] = regSrv
	}

	errc := make(chan error, len(servers))
	var err error
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

func (d *Driver) nodePath(node string, elem ...string) string {
	return d.path(append([]string{"nodes", node}, elem...)...)
}

// dataDir is where the data of a volume or snapshot (kind "volumes" or
// "snapshots") lives: under its node in the node-local modes.
func (d *Driver) dataDir(kind, node, id string) string {
	if d.cfg.Mode.NodeLocal() {
		return d.nodePath(node, kind, id)
	}
	return d.path(kind, id)
}

func (d *Driver) volumeDir(v *volume) string     { return d.dataDir("volumes", v.Node, v.ID) }
func (d *Driver) snapshotDir(s *snapshot) string { return d.dataDir("snapshots", s.Node, s.ID) }

// save writes the controller's records atomically. The caller holds d.mu.
func (d *Driver) save() error { return writeJSON(d.path("controller", "state.json"), &d.st) }

// savePublished writes the node plugin's publications. The caller holds d.mu.
func (d *Driver) savePublished() error {
	if err := writeJSON(d.nodePath(d.cfg.NodeID, "published.json"), d.pub); err != nil {
		return status.Errorf(codes.Internal, "persisting publications: %v", err)
	}
	return nil
}

// writeJSON replaces path atomically with v as JSON.
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
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
	return os.Rename(tmp, path)
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
	return &csi.GetPluginInfoResponse{Name: d.name, VendorVersion: Version}, nil
}

func (d *Driver) GetPluginCapabilities(context.Context, *csi.GetPluginCapabilitiesRequest) (*csi.GetPluginCapabilitiesResponse, error) {
	svc := func(t csi.PluginCapability_Service_Type) *csi.PluginCapability {
		return &csi.PluginCapability{Type: &csi.PluginCapability_Service_{Service: &csi.PluginCapability_Service{Type: t}}}
	}
	// The plugin's capabilities, the same on every socket of the driver: the
	// controller process and the node plugins together are the plugin.
	caps := []*csi.PluginCapability{svc(csi.PluginCapability_Service_CONTROLLER_SERVICE),
		{Type: &csi.PluginCapability_VolumeExpansion_{VolumeExpansion: &csi.PluginCapability_VolumeExpansion{
			Type: csi.PluginCapability_VolumeExpansion_OFFLINE}}}}
	if d.cfg.Mode.NodeLocal() {
		caps = append(caps, svc(csi.PluginCapability_Service_VOLUME_ACCESSIBILITY_CONSTRAINTS))
	}
	return &csi.GetPluginCapabilitiesResponse{Capabilities: caps}, nil
}

func (d *Driver) Probe(context.Context, *csi.ProbeRequest) (*csi.ProbeResponse, error) {
	return &csi.ProbeResponse{}, nil
}

// registrar answers the kubelet's plugin watcher on the registration socket.
type registrar struct {
	registerapi.UnimplementedRegistrationServer
	name     string
	endpoint string
	log      *slog.Logger
}

func (r *registrar) GetInfo(context.Context, *registerapi.InfoRequest) (*registerapi.PluginInfo, error) {
	return &registerapi.PluginInfo{
		Type:              registerapi.CSIPlugin,
		Name:              r.name,
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
