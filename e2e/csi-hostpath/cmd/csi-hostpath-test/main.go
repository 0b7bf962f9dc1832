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
	"syscall"

	"github.com/rdf-bulkload/rdf-bulkload/e2e/csi-hostpath/driver"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil)).With("driver", driver.Name)
	host, _ := os.Hostname()
	cfg := driver.Config{Capacity: 100 << 30}
	fs := flag.NewFlagSet("csi-hostpath-test", flag.ContinueOnError)
	fs.StringVar(&cfg.Endpoint, "endpoint", "unix:///var/lib/kubelet/plugins/"+driver.Name+"/csi.sock", "CSI socket that the kubelet and the sidecars use")
	fs.StringVar(&cfg.NodeID, "node-id", host, "node ID, also the value of the topology key "+driver.TopologyKey)
	fs.StringVar(&cfg.DataDir, "data-dir", "/var/lib/csi-hostpath-test", "directory that holds volumes/, snapshots/ and state.json")
	fs.StringVar(&cfg.RegistrationDir, "kubelet-registration-dir", "/var/lib/kubelet/plugins_registry", "kubelet plugin registration directory; empty: do not register")
	fs.Func("capacity", "bytes that volumes may take in total, e.g. 100Gi (default 100Gi)", func(s string) error {
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
