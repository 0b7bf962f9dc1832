package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/fetch"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/miniotest"
)

// The test binary doubles as rdf-bulkload-fetch when this variable is set, so the CLI is
// exercised as a real process (exit codes, stderr) without a separate build.
const asCLI = "RDF_BULKLOAD_FETCH_TEST_AS_CLI"

func TestMain(m *testing.M) {
	if os.Getenv(asCLI) == "1" {
		main()
	}
	os.Exit(m.Run())
}

type cliResult struct {
	code   int
	stderr string
}

func runCLI(t *testing.T, env []string, args ...string) cliResult {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(filterEnv(os.Environ()), asCLI+"=1"), env...)
	var stderr bytes.Buffer
	cmd.Stderr, cmd.Stdout = &stderr, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return cliResult{code, stderr.String()}
}

func filterEnv(env []string) []string {
	var out []string
	for _, e := range env {
		if !strings.HasPrefix(e, "AWS_") {
			out = append(out, e)
		}
	}
	return out
}

func setup(t *testing.T) (*miniotest.Server, map[string][]byte) {
	srv := miniotest.Start(t)
	srv.MakeBucket("dumps")
	files := map[string][]byte{
		"uniprot/2026_05/a.nt.gz": miniotest.RandomData(200 << 10),
		"uniprot/2026_05/b.nt.gz": miniotest.RandomData(7<<20 + 5), // multipart
	}
	for k, v := range files {
		opts := minio.PutObjectOptions{}
		if len(v) > 5<<20 {
			opts.PartSize = 5 << 20
		}
		srv.Put("dumps", k, v, opts)
	}
	srv.Put("dumps", "uniprot/2026_05/DONE", []byte("done\n"), minio.PutObjectOptions{})
	return srv, files
}

var envelope = regexp.MustCompile(`^\{"ts":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z","event":"[a-z_]+"[,}]`)

func lastError(t *testing.T, stderr string) map[string]any {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	var ev map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &ev); err != nil || ev["event"] != "error" {
		t.Fatalf("last stderr line is not a JSON error event: %q", lines[len(lines)-1])
	}
	// Every line has the one envelope: ts, then event.
	for _, l := range lines {
		if !envelope.MatchString(l) {
			t.Errorf("stderr line does not start with ts and event: %q", l)
		}
	}
	return ev
}

// The contract the workflow relies on, run as a process: flags, exit 0, files, report, JSON
// lines; no credential in any output.
func TestCLIFetchesAndReports(t *testing.T) {
	srv, files := setup(t)
	dir := t.TempDir()
	dest, report := filepath.Join(dir, "in"), filepath.Join(dir, "fetch-report.json")
	res := runCLI(t, []string{"AWS_ACCESS_KEY_ID=" + srv.AccessKey, "AWS_SECRET_ACCESS_KEY=" + srv.SecretKey},
		"--endpoint", srv.Endpoint(), "--bucket", "dumps", "--prefix", "uniprot/2026_05/", "--include", "*.nt.gz",
		"--marker", "uniprot/2026_05/DONE", "--dest", dest, "--report", report, "--parallel", "3", "--part-size", "1Mi", "--build-revision", "0123456789",
		"--progress-interval", "10ms")
	if res.code != 0 {
		t.Fatalf("exit %d:\n%s", res.code, res.stderr)
	}
	for k, v := range files {
		got, err := os.ReadFile(filepath.Join(dest, filepath.Base(k)))
		if err != nil || !bytes.Equal(got, v) {
			t.Fatalf("%s not fetched intact: %v", k, err)
		}
	}
	var rep fetch.Report
	b, err := os.ReadFile(report)
	if err != nil || json.Unmarshal(b, &rep) != nil {
		t.Fatalf("report unreadable: %v", err)
	}
	// The build revision rides in the report into the database's build report, where the
	// serving pod's readiness check reads it.
	if rep.Totals.Objects != 2 || !strings.HasPrefix(rep.Revision, "sha256:") || rep.Source.Marker != "uniprot/2026_05/DONE" || rep.BuildRevision != "0123456789" {
		t.Errorf("report %+v", rep)
	}
	for _, line := range strings.Split(strings.TrimSpace(res.stderr), "\n") {
		if !json.Valid([]byte(line)) {
			t.Errorf("stderr line is not JSON: %q", line)
		}
	}
	for _, out := range []string{res.stderr, string(b)} {
		if strings.Contains(out, srv.SecretKey) {
			t.Fatal("secret key printed")
		}
	}

	// --expect-revision pins the build to the revision the operator chose.
	env := []string{"AWS_ACCESS_KEY_ID=" + srv.AccessKey, "AWS_SECRET_ACCESS_KEY=" + srv.SecretKey}
	common := []string{"--endpoint", srv.Endpoint(), "--bucket", "dumps", "--prefix", "uniprot/2026_05/", "--include", "*.nt.gz",
		"--marker", "uniprot/2026_05/DONE", "--dest", dest, "--report", report}
	if res := runCLI(t, env, append(common, "--expect-revision", rep.Revision)...); res.code != 0 {
		t.Fatalf("same revision: exit %d\n%s", res.code, res.stderr)
	}
	srv.Put("dumps", "uniprot/2026_05/late.nt.gz", []byte("late"), minio.PutObjectOptions{})
	res = runCLI(t, env, append(common, "--expect-revision", rep.Revision)...)
	if msg, _ := lastError(t, res.stderr)["error"].(string); res.code != fetch.ExitIntegrity || !strings.Contains(msg, rep.Revision) {
		t.Fatalf("changed source: exit %d, %q", res.code, msg)
	}
}

// Wrong credentials: a final error (2) that says what is wrong, never the secret.
func TestCLIWrongCredentials(t *testing.T) {
	srv, _ := setup(t)
	dir := t.TempDir()
	wrongSecret := "wrong-" + srv.SecretKey[len(srv.SecretKey)-8:] + "-Zq9"
	cases := map[string][]string{
		"wrong secret":     {"AWS_ACCESS_KEY_ID=" + srv.AccessKey, "AWS_SECRET_ACCESS_KEY=" + wrongSecret},
		"unknown key":      {"AWS_ACCESS_KEY_ID=nobody", "AWS_SECRET_ACCESS_KEY=" + wrongSecret},
		"with a token too": {"AWS_ACCESS_KEY_ID=nobody", "AWS_SECRET_ACCESS_KEY=" + wrongSecret, "AWS_SESSION_TOKEN=tok-" + wrongSecret},
	}
	for name, env := range cases {
		t.Run(name, func(t *testing.T) {
			res := runCLI(t, env, "--endpoint", srv.Endpoint(), "--bucket", "dumps", "--prefix", "uniprot/2026_05/",
				"--marker", "uniprot/2026_05/DONE", "--dest", filepath.Join(dir, "in"), "--report", filepath.Join(dir, "r.json"),
				"--retries", "1", "--retry-base", "1ms")
			if res.code != fetch.ExitUsage {
				t.Fatalf("exit %d, want %d:\n%s", res.code, fetch.ExitUsage, res.stderr)
			}
			msg, _ := lastError(t, res.stderr)["error"].(string)
			if !strings.Contains(msg, "denied") || !strings.Contains(msg, "AWS_SECRET_ACCESS_KEY") {
				t.Errorf("error is not clear about credentials: %q", msg)
			}
			if strings.Contains(res.stderr, wrongSecret) || strings.Contains(res.stderr, srv.SecretKey) {
				t.Fatalf("a secret appears in the output:\n%s", res.stderr)
			}
			if _, err := os.Stat(filepath.Join(dir, "r.json")); !os.IsNotExist(err) {
				t.Fatal("a report was written for a failed fetch")
			}
		})
	}
}

// Usage errors exit 2 before touching the network.
func TestCLIUsage(t *testing.T) {
	base := []string{"--endpoint", "http://127.0.0.1:1", "--bucket", "bkt", "--prefix", "p/"}
	for name, c := range map[string]struct {
		args []string
		want string
	}{
		"no dest":           {append(base, "--marker", "p/M", "--report", "r"), "--dest is required"},
		"no report":         {append(base, "--marker", "p/M", "--dest", "d"), "--report is required"},
		"marker + manifest": {append(base, "--marker", "p/M", "--manifest", "p/S", "--dest", "d", "--report", "r"), "mutually exclusive"},
		"neither":           {append(base, "--dest", "d", "--report", "r"), "completion marker or a manifest is required"},
		"bad part size":     {append(base, "--marker", "p/M", "--dest", "d", "--report", "r", "--part-size", "lots"), "--part-size"},
		"milli part size":   {append(base, "--marker", "p/M", "--dest", "d", "--report", "r", "--part-size", "64m"), "--part-size: invalid size"},
		"zero part size":    {append(base, "--marker", "p/M", "--dest", "d", "--report", "r", "--part-size", "0"), "--part-size must be at least 1 byte"},
		"bad bucket":        {[]string{"--endpoint", "http://127.0.0.1:1", "--bucket", "b", "--prefix", "p/", "--marker", "p/M", "--dest", "d", "--report", "r"}, "bucket"},
		"creds in endpoint": {[]string{"--endpoint", "http://user:pa55word@127.0.0.1:1", "--bucket", "bkt", "--prefix", "p/", "--marker", "p/M", "--dest", "d", "--report", "r"}, "must not contain credentials"},
		"unknown flag":      {[]string{"--endpoint", "http://127.0.0.1:1", "--frobnicate"}, "frobnicate"},
	} {
		t.Run(name, func(t *testing.T) {
			var stderr bytes.Buffer
			if code := run(context.Background(), c.args, &stderr); code != fetch.ExitUsage {
				t.Fatalf("exit %d, want 2:\n%s", code, stderr.String())
			}
			if !strings.Contains(stderr.String(), c.want) {
				t.Errorf("output lacks %q:\n%s", c.want, stderr.String())
			}
			if strings.Contains(stderr.String(), "pa55word") {
				t.Fatal("password from the endpoint URL printed")
			}
		})
	}
}

// setupMetrics is setup with the credentials in the environment and a free loopback address
// for --metrics-addr.
func setupMetrics(t *testing.T) (*miniotest.Server, map[string][]byte, string) {
	srv, files := setup(t)
	t.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", srv.SecretKey)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return srv, files, l.Addr().String()
}

// --metrics-addr serves the Prometheus metrics while the fetch runs.
func TestCLIMetricsEndpoint(t *testing.T) {
	srv, files, addr := setupMetrics(t)
	var scraped string
	testHookOnPart = func(ev fetch.PartEvent) {
		if scraped != "" {
			return
		}
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			t.Errorf("scrape: %v", err)
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		scraped = string(b)
	}
	defer func() { testHookOnPart = nil }()
	dir := t.TempDir()
	var stderr bytes.Buffer
	code := run(context.Background(), []string{"--endpoint", srv.Endpoint(), "--bucket", "dumps", "--prefix", "uniprot/2026_05/",
		"--include", "*.nt.gz", "--marker", "uniprot/2026_05/DONE", "--dest", filepath.Join(dir, "in"), "--report", filepath.Join(dir, "r.json"),
		"--parallel", "1", "--part-size", "1Mi", "--metrics-addr", addr}, &stderr)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr.String())
	}
	// make test-alerts checks the names the chart's rules and dashboard use against this scrape
	if dir := os.Getenv("RDF_BULKLOAD_SCRAPE_DIR"); dir != "" && scraped != "" {
		if err := os.WriteFile(filepath.Join(dir, "fetch.prom"), []byte(scraped), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var total int
	for _, v := range files {
		total += len(v)
	}
	want := map[string]func(float64) bool{
		"rdf_bulkload_fetch_bytes_total":                     func(v float64) bool { return v > 0 && v < float64(total) },
		`rdf_bulkload_fetch_objects_total{result="fetched"}`: func(v float64) bool { return v <= 2 },
		"rdf_bulkload_fetch_rate_bytes_per_second":           func(v float64) bool { return v >= 0 },
		"rdf_bulkload_fetch_expected_bytes":                  func(v float64) bool { return v == float64(total) },
		"rdf_bulkload_fetch_expected_objects":                func(v float64) bool { return v == 2 },
	}
	for name, ok := range want {
		v, found := metricValue(scraped, name)
		if !found || !ok(v) {
			t.Errorf("metric %s = %v (found %v) while fetching %d bytes:\n%s", name, v, found, total, scraped)
		}
	}
}

// --metrics-linger keeps the endpoint up after the fetch ends, with its final figures, until the
// linger ends or a signal comes: a step shorter than a scrape interval is still scraped.
func TestCLIMetricsLinger(t *testing.T) {
	srv, files, addr := setupMetrics(t)
	dir := t.TempDir()
	report := filepath.Join(dir, "r.json")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"--endpoint", srv.Endpoint(), "--bucket", "dumps", "--prefix", "uniprot/2026_05/",
			"--include", "*.nt.gz", "--marker", "uniprot/2026_05/DONE", "--dest", filepath.Join(dir, "in"), "--report", report,
			"--metrics-addr", addr, "--metrics-linger", "1h"}, &stderr)
	}()
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := os.Stat(report); err == nil {
			break
		}
		select {
		case code := <-done:
			t.Fatalf("exit %d before lingering:\n%s", code, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("no report after a minute")
		}
	}
	select {
	case code := <-done:
		t.Fatalf("exit %d right after the fetch ended, without lingering", code)
	case <-time.After(300 * time.Millisecond):
	}
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatalf("scrape after the fetch ended: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var total int
	for _, v := range files {
		total += len(v)
	}
	if v, found := metricValue(string(b), "rdf_bulkload_fetch_bytes_total"); !found || v != float64(total) {
		t.Errorf("rdf_bulkload_fetch_bytes_total = %v (found %v) after the fetch, want all %d bytes", v, found, total)
	}
	cancel() // the pod's SIGTERM: the linger ends at once, the fetch's result stands
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d:\n%s", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("still lingering 10 s after the signal")
	}
}

// SIGTERM (pod eviction, workflow stop) ends the fetch as retryable (75), promptly, even while
// it is backing off from an unreachable endpoint.
func TestCLISigtermIsRetryable(t *testing.T) {
	srv, _ := setup(t)
	srv.Stop() // unreachable: the fetch retries with backoff
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "--endpoint", srv.Endpoint(), "--bucket", "dumps", "--prefix", "uniprot/2026_05/",
		"--marker", "uniprot/2026_05/DONE", "--dest", filepath.Join(dir, "in"), "--report", filepath.Join(dir, "r.json"),
		"--retries", "100", "--retry-base", "30s")
	cmd.Env = append(filterEnv(os.Environ()), asCLI+"=1", "AWS_ACCESS_KEY_ID="+srv.AccessKey, "AWS_SECRET_ACCESS_KEY="+srv.SecretKey)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	buf := make([]byte, 4096)
	for !strings.Contains(out.String(), `"event":"retry"`) {
		n, err := stderr.Read(buf)
		out.Write(buf[:n])
		if err != nil {
			t.Fatalf("the fetch ended before retrying: %v\n%s", err, out.String())
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(stderr)
	out.Write(rest)
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != fetch.ExitTransient {
		t.Fatalf("after SIGTERM: %v, want exit %d\n%s", err, fetch.ExitTransient, out.String())
	}
	if msg, _ := lastError(t, out.String())["error"].(string); !strings.Contains(msg, "interrupted") {
		t.Errorf("error %q does not say the fetch was interrupted", msg)
	}
}
