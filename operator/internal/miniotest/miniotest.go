// Package miniotest starts a real MinIO server on loopback for tests: a temporary data
// directory, a free port, random root credentials, stopped at cleanup. The binary comes from
// hack/install-minio.sh (built from the Go module proxy) through $RDF_BULKLOAD_MINIO.
package miniotest

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// EnvBinary names the environment variable holding the MinIO server binary.
const EnvBinary = "RDF_BULKLOAD_MINIO"

// Server is one MinIO process.
type Server struct {
	t         testing.TB
	Bin       string
	DataDir   string
	Addr      string // host:port of the S3 API
	AccessKey string
	SecretKey string
	CertsDir  string // when set (before Start), MinIO serves TLS with public.crt/private.key from it

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	logs *bytes.Buffer
}

// Binary returns the MinIO binary, skipping the test when it is not configured outside CI
// and failing it under CI=true (where the suite must run).
func Binary(t testing.TB) string {
	t.Helper()
	bin := os.Getenv(EnvBinary)
	if bin == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set under CI=true; run `eval $(hack/install-minio.sh)` (make test-source does)", EnvBinary)
		}
		t.Skipf("%s is not set: run `eval $(hack/install-minio.sh)` or `make test-source` to run the MinIO-backed tests", EnvBinary)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%s=%s: %v", EnvBinary, bin, err)
	}
	return bin
}

// New prepares a server without starting it (set CertsDir, then Start).
func New(t testing.TB) *Server {
	t.Helper()
	return &Server{t: t, Bin: Binary(t), DataDir: t.TempDir(), AccessKey: "rdfbl-" + randHex(4), SecretKey: "s3cr3t-" + randHex(12)}
}

// Start starts a new server and registers its stop at cleanup.
func Start(t testing.TB) *Server {
	t.Helper()
	s := New(t)
	s.Start()
	return s
}

// Start launches the process (on a free port the first time, on the same port afterwards)
// and waits until it answers its health check.
func (s *Server) Start() {
	s.t.Helper()
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		if s.Addr == "" || attempt > 0 {
			s.Addr = freeAddr(s.t)
		}
		if lastErr = s.launch(); lastErr == nil {
			return
		}
		// the port may have been taken in between: try another one
	}
	s.t.Fatalf("minio did not start: %v\n%s", lastErr, s.Logs())
}

// Restart starts the server again on the same port and data directory (after Kill or Stop).
func (s *Server) Restart() {
	s.t.Helper()
	for attempt := 0; attempt < 50; attempt++ {
		if err := s.launch(); err == nil {
			return
		} else if attempt == 49 {
			s.t.Fatalf("minio did not restart on %s: %v\n%s", s.Addr, err, s.Logs())
		}
		time.Sleep(100 * time.Millisecond) // the port may still be in TIME_WAIT/closing
	}
}

func (s *Server) launch() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	args := []string{"server", s.DataDir, "--address", s.Addr, "--console-address", freeAddr(s.t), "--quiet"}
	if s.CertsDir != "" {
		args = append(args, "--certs-dir", s.CertsDir)
	}
	cmd := exec.Command(s.Bin, args...)
	cmd.Env = append(os.Environ(),
		"MINIO_ROOT_USER="+s.AccessKey, "MINIO_ROOT_PASSWORD="+s.SecretKey,
		"MINIO_BROWSER=off", "MINIO_UPDATE=off", "MINIO_CI_CD=1")
	logMu.Lock()
	if s.logs == nil {
		s.logs = &bytes.Buffer{}
	}
	logMu.Unlock()
	cmd.Stdout, cmd.Stderr = &syncWriter{b: s.logs}, &syncWriter{b: s.logs}
	// The server dies with the test process even if the test is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	s.cmd, s.done = cmd, done
	s.t.Cleanup(s.Stop)
	s.mu.Unlock()
	err := s.waitHealthy(done)
	s.mu.Lock()
	if err != nil {
		_ = cmd.Process.Kill()
		<-done
		s.cmd = nil
	}
	return err
}

func (s *Server) waitHealthy(done chan struct{}) error {
	client := &http.Client{Timeout: 2 * time.Second}
	if s.CertsDir != "" {
		client.Transport = insecureTransport()
	}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			return fmt.Errorf("minio exited during startup")
		default:
		}
		// "live" answers before the object layer is up; wait for a real S3 call to succeed.
		resp, err := client.Get(s.Endpoint() + "/minio/health/live")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				_, err := s.client(1).ListBuckets(ctx)
				cancel()
				if err == nil {
					return nil
				}
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("minio not healthy within 60s")
}

// Endpoint is the URL of the S3 API.
func (s *Server) Endpoint() string {
	if s.CertsDir != "" {
		return "https://" + s.Addr
	}
	return "http://" + s.Addr
}

// Kill stops the server abruptly (SIGKILL), as a crash or network cut would, and waits for it.
func (s *Server) Kill() { s.signal(syscall.SIGKILL) }

// Stop terminates the server gracefully and waits for it. Safe to call more than once.
func (s *Server) Stop() { s.signal(syscall.SIGTERM) }

func (s *Server) signal(sig syscall.Signal) {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(sig)
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

// Logs returns what the server printed.
func (s *Server) Logs() string {
	logMu.Lock()
	defer logMu.Unlock()
	if s.logs == nil {
		return ""
	}
	return s.logs.String()
}

// Client returns a minio-go client with the root credentials.
func (s *Server) Client() *minio.Client { return s.client(0) }

func (s *Server) client(maxRetries int) *minio.Client {
	s.t.Helper()
	opts := &minio.Options{Creds: credentials.NewStaticV4(s.AccessKey, s.SecretKey, ""), Secure: s.CertsDir != "", MaxRetries: maxRetries}
	if s.CertsDir != "" {
		opts.Transport = insecureTransport()
	}
	c, err := minio.New(s.Addr, opts)
	if err != nil {
		s.t.Fatal(err)
	}
	return c
}

// MakeBucket creates a bucket.
func (s *Server) MakeBucket(bucket string) {
	s.t.Helper()
	if err := s.Client().MakeBucket(context.Background(), bucket, minio.MakeBucketOptions{}); err != nil {
		s.t.Fatalf("make bucket %s: %v", bucket, err)
	}
}

// Put uploads data. A PartSize in opts (>= 5 MiB) with data larger than it makes a multipart
// object (ETag "<md5 of md5s>-N").
func (s *Server) Put(bucket, key string, data []byte, opts minio.PutObjectOptions) minio.UploadInfo {
	s.t.Helper()
	info, err := s.Client().PutObject(context.Background(), bucket, key, bytes.NewReader(data), int64(len(data)), opts)
	if err != nil {
		s.t.Fatalf("put %s/%s: %v", bucket, key, err)
	}
	return info
}

// Remove deletes an object.
func (s *Server) Remove(bucket, key string) {
	s.t.Helper()
	if err := s.Client().RemoveObject(context.Background(), bucket, key, minio.RemoveObjectOptions{}); err != nil {
		s.t.Fatalf("remove %s/%s: %v", bucket, key, err)
	}
}

// RandomData returns n pseudo-random bytes (incompressible, so sizes on the wire are real).
func RandomData(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

type syncWriter struct{ b *bytes.Buffer }

func (w *syncWriter) Write(p []byte) (int, error) {
	logMu.Lock()
	defer logMu.Unlock()
	return w.b.Write(p)
}

var logMu sync.Mutex

// DataPath is where MinIO keeps an object's files inside the data directory (single-drive mode).
func (s *Server) DataPath(bucket, key string) string { return filepath.Join(s.DataDir, bucket, key) }

// insecureTransport trusts any certificate: only for the test's own health checks and
// uploads against a server it started with a throwaway certificate.
func insecureTransport() *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // test server with a throwaway cert
	return tr
}
