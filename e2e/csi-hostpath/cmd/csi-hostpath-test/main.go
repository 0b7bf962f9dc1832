// Command csi-hostpath-test runs the hostpath-style CSI driver of the
// rdf-bulkload e2e test cluster. It is for that test cluster only, never for
// production: see package driver.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/rdf-bulkload/rdf-bulkload/e2e/csi-hostpath/driver"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	host, _ := os.Hostname()
	cfg := driver.Config{Mode: driver.ModeLocal, Controller: true, Node: true, Capacity: 100 << 30}
	fs := flag.NewFlagSet("csi-hostpath-test", flag.ContinueOnError)
	fs.Func("mode", "kind of storage, each its own driver name: local (node-local, like TopoLVM), network (any node, one at a time, like EBS) or no-snapshots (node-local without snapshots, like local-path) (default local)", func(s string) error {
		m, err := driver.ParseMode(s)
		cfg.Mode = m
		return err
	})
	fs.Func("services", "CSI services this process serves: controller, node or controller,node (default controller,node)", func(s string) error {
		cfg.Controller, cfg.Node = false, false
		for _, svc := range strings.Split(s, ",") {
			switch svc {
			case "controller":
				cfg.Controller = true
			case "node":
				cfg.Node = true
			default:
				return fmt.Errorf("unknown service %q", svc)
			}
		}
		return nil
	})
	fs.StringVar(&cfg.Endpoint, "endpoint", "", "CSI socket that the kubelet and the sidecars use (default unix:///var/lib/kubelet/plugins/DRIVER/csi.sock)")
	fs.StringVar(&cfg.NodeID, "node-id", host, "node ID (node service), also the value of the mode's topology key")
	fs.StringVar(&cfg.DataDir, "data-dir", "/var/lib/csi-hostpath-test", "directory shared by the driver's controller and node plugins: volumes, snapshots, records")
	fs.StringVar(&cfg.RegistrationDir, "kubelet-registration-dir", "/var/lib/kubelet/plugins_registry", "kubelet plugin registration directory (node service); empty: do not register")
	fs.Func("capacity", "bytes that volumes may take on each node (node-local modes) or in total (network), e.g. 100Gi (default 100Gi)", func(s string) error {
		n, err := driver.ParseSize(s)
		if err == nil && n == 0 {
			err = fmt.Errorf("capacity must be positive")
		}
		cfg.Capacity = n
		return err
	})
	fs.Int64Var(&cfg.MaxVolumesPerNode, "max-volumes-per-node", 0, "volume limit reported to the kubelet; 0: no limit")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if cfg.Endpoint == "" {
		cfg.Endpoint = "unix:///var/lib/kubelet/plugins/" + cfg.Mode.DriverName() + "/csi.sock"
	}
	log = log.With("driver", cfg.Mode.DriverName())

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	d, err := driver.New(cfg, log)
	if err != nil {
		log.Error("starting", "err", err)
		return 1
	}
	if err := d.Run(ctx); err != nil {
		log.Error("serving", "err", err)
		return 1
	}
	return 0
}
