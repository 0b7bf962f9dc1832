// Command rdf-bulkload-fetch pulls a complete RDF dump set from S3/MinIO onto a local
// directory for the loader: parallel, ranged, verified, resumable. See internal/fetch.
//
//	rdf-bulkload-fetch --endpoint URL --bucket B [--prefix P] [--key K ...] [--include GLOB ...]
//	    [--marker KEY | --manifest KEY] [--ca-file F] [--insecure] --dest DIR --report FILE
//	    [--parallel N] [--part-size SIZE] [--metrics-addr ADDR [--metrics-linger D]]
//
// Credentials come from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (/ AWS_SESSION_TOKEN).
// Exit codes: 0 ok, 2 usage/configuration (incl. wrong credentials), 3 integrity failure or
// incomplete source, 5 not enough disk, 70 internal, 75 transient (retry the step).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/fetch"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/source"
)

// testHookOnPart is called after each part is written (tests only).
var testHookOnPart func(fetch.PartEvent)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stderr)
	stop()
	os.Exit(code)
}

// exitCodesText lists the exit codes as "0 ok, 2 usage, ...".
func exitCodesText() string {
	var parts []string
	for _, c := range slices.Sorted(maps.Keys(fetch.ExitCodes)) {
		parts = append(parts, fmt.Sprintf("%d %s", c, fetch.ExitCodes[c]))
	}
	return strings.Join(parts, ", ")
}

func run(ctx context.Context, args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("rdf-bulkload-fetch", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		spec                 source.Spec
		keys, include        multiFlag
		dest, report         string
		parallel, retries    int
		partSize, metrics    string
		retryBase, progEvery time.Duration
		metricsLinger        time.Duration
		showVersion          bool
		expectRevision       string
		buildRevision        string
	)
	fs.StringVar(&spec.Endpoint, "endpoint", "", "S3 endpoint URL, e.g. https://s3.example.org or http://minio:9000 (required)")
	fs.StringVar(&spec.Bucket, "bucket", "", "bucket (required)")
	fs.StringVar(&spec.Prefix, "prefix", "", "fetch every object under this prefix")
	fs.Var(&keys, "key", "also fetch this object (full key; repeatable)")
	fs.Var(&include, "include", "keep only objects whose relative path or base name matches this glob (repeatable)")
	fs.StringVar(&spec.Marker, "marker", "", "full key of the completion marker object; refuse to start without it")
	fs.StringVar(&spec.Manifest, "manifest", "", "full key of a checksum manifest (sha256sum/md5sum/BSD style) naming the objects relative to its directory; refuse to start without it")
	fs.StringVar(&spec.CAFile, "ca-file", "", "PEM file of CA certificates to trust for the endpoint")
	fs.BoolVar(&spec.Insecure, "insecure", false, "skip TLS certificate verification (testing only)")
	fs.StringVar(&spec.Region, "region", "", "S3 region (optional)")
	fs.StringVar(&dest, "dest", "", "destination directory (required)")
	fs.StringVar(&report, "report", "", "write the fetch report (JSON) here (required)")
	fs.IntVar(&parallel, "parallel", 8, "concurrent ranged reads, across and within objects")
	fs.StringVar(&partSize, "part-size", "64Mi", "size of one ranged read and unit of resumption (a Kubernetes quantity: 64Mi = 64·2^20 bytes, 64M = 64·10^6)")
	fs.StringVar(&metrics, "metrics-addr", "", "serve Prometheus metrics on this address (e.g. :9090) while running")
	fs.DurationVar(&metricsLinger, "metrics-linger", 0, "keep serving the metrics this long after the fetch ends, so that a scrape sees its final figures")
	fs.IntVar(&retries, "retries", 8, "retries per request after a transient error")
	fs.DurationVar(&retryBase, "retry-base", time.Second, "first retry delay (doubles each retry, at most 30s)")
	fs.DurationVar(&progEvery, "progress-interval", 5*time.Second, "interval of JSON progress lines on stderr")
	fs.StringVar(&expectRevision, "expect-revision", "", "fail (exit 3) unless the source revision is this one (e.g. status.sourceRevision)")
	fs.StringVar(&buildRevision, "build-revision", "", "record this build revision in the report (buildRevision; the operator's short revision)")
	fs.BoolVar(&showVersion, "version", false, "print the version and exit")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: rdf-bulkload-fetch --endpoint URL --bucket B [--prefix P] [--key K ...] [--include GLOB ...]\n"+
			"  [--marker KEY | --manifest KEY] [--ca-file F] [--insecure] --dest DIR --report FILE\n"+
			"  [--parallel N] [--part-size SIZE] [--metrics-addr ADDR [--metrics-linger D]]\n"+
			"Credentials: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN (environment only).\n"+
			"Exit codes (docs/exit-codes.md): %s.\n\n", exitCodesText())
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return fetch.ExitOK
		}
		return fetch.ExitUsage
	}
	if showVersion {
		fmt.Fprintln(os.Stdout, "rdf-bulkload-fetch", version)
		return fetch.ExitOK
	}
	spec.Keys, spec.Include = keys, include
	creds := source.CredentialsFromEnv()
	out := &lockedWriter{w: stderr}
	events := fetch.NewEventLog(out, creds.Redact)
	fail := func(code int, err error) int {
		events.Emit(fetch.EventError, "exit_code", code, "error", err.Error())
		return code
	}
	if fs.NArg() > 0 {
		return fail(fetch.ExitUsage, fmt.Errorf("unexpected arguments: %q", fs.Args()))
	}
	var usage []string
	if dest == "" {
		usage = append(usage, "--dest is required")
	}
	if report == "" {
		usage = append(usage, "--report is required")
	}
	if parallel < 1 {
		usage = append(usage, "--parallel must be at least 1")
	}
	ps, err := fetch.ParseSize(partSize)
	switch {
	case err != nil:
		usage = append(usage, "--part-size: "+err.Error())
	case ps < 1:
		usage = append(usage, "--part-size must be at least 1 byte")
	}
	if err := spec.Validate(); err != nil {
		usage = append(usage, strings.Split(err.Error(), "\n")...)
	}
	if len(usage) > 0 {
		return fail(fetch.ExitUsage, errors.New(strings.Join(usage, "; ")))
	}
	if creds.AccessKeyID == "" {
		events.Emit(fetch.EventWarning, "message", "AWS_ACCESS_KEY_ID is not set: accessing the bucket anonymously")
	}

	m := fetch.NewMetrics()
	if metrics != "" {
		ln, err := net.Listen("tcp", metrics)
		if err != nil {
			return fail(fetch.ExitUsage, fmt.Errorf("--metrics-addr: %w", err))
		}
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{}))
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		defer srv.Close()
		// A step shorter than a scrape interval (plus service discovery's delay) would
		// otherwise never be scraped: its final figures stay up a while. A signal cuts it short.
		defer func() {
			select {
			case <-time.After(metricsLinger):
			case <-ctx.Done():
			}
		}()
	}
	_, err = fetch.Run(ctx, fetch.Options{
		Source: spec, Creds: creds, Dest: dest, Report: report, Parallel: parallel, PartSize: ps,
		Retries: retries, RetryBase: retryBase, Progress: out, ProgressInterval: progEvery, Metrics: m, Version: version,
		OnPart: testHookOnPart, ExpectRevision: expectRevision, BuildRevision: buildRevision,
	})
	if err != nil {
		return fail(fetch.ExitCode(err), err)
	}
	return fetch.ExitOK
}
