package fetch_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/fetch"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/miniotest"
)

// writeSelfSigned writes a throwaway CA-less certificate for 127.0.0.1 in MinIO's layout and
// returns the certificate's PEM path (what --ca-file gets).
func writeSelfSigned(t *testing.T, dir string) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "rdf-bulkload test minio"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	crt := filepath.Join(dir, "public.crt")
	if err := os.WriteFile(crt, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "private.key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return crt
}

// An https endpoint signed by a private CA: trusted with --ca-file (or --insecure), refused
// without, as a configuration error (2) that points at the CA.
func TestFetchTLSWithCAFile(t *testing.T) {
	srv := miniotest.New(t)
	srv.CertsDir = t.TempDir()
	ca := writeSelfSigned(t, srv.CertsDir)
	srv.Start()
	srv.MakeBucket(bucket)
	srv.Put(bucket, prefix+"a.nt.gz", []byte("<a> <b> <c> .\n"), minio.PutObjectOptions{})
	srv.Put(bucket, prefix+"_SUCCESS", nil, minio.PutObjectOptions{})

	opts := baseOptions(srv, filepath.Join(t.TempDir(), "in"))
	if !strings.HasPrefix(opts.Source.Endpoint, "https://") {
		t.Fatalf("endpoint %s is not https", opts.Source.Endpoint)
	}
	_, err := fetch.Run(context.Background(), opts)
	if fetch.ExitCode(err) != fetch.ExitUsage || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("untrusted certificate: exit %d (%v), want 2 mentioning the certificate", fetch.ExitCode(err), err)
	}
	opts.Source.CAFile = ca
	if _, err := fetch.Run(context.Background(), opts); err != nil {
		t.Fatalf("with --ca-file: %v", err)
	}
	opts.Source.CAFile, opts.Source.Insecure = "", true
	opts.Dest = filepath.Join(t.TempDir(), "in")
	if _, err := fetch.Run(context.Background(), opts); err != nil {
		t.Fatalf("with --insecure: %v", err)
	}
}

// A dated prefix fetches the newest directory that has its marker, and says which in the report.
func TestFetchDatedPicksNewestComplete(t *testing.T) {
	srv := newServer(t)
	for _, k := range []string{"wd/20261113/a.nt.gz", "wd/20261113/_SUCCESS", "wd/20261120/a.nt.gz", "wd/20261120/_SUCCESS",
		"wd/20261127/a.nt.gz"} { // the newest is still uploading
		srv.Put(bucket, k, []byte(k), minio.PutObjectOptions{})
	}
	opts := baseOptions(srv, filepath.Join(t.TempDir(), "in"))
	opts.Source.Prefix, opts.Source.Marker = "wd/*/", "wd/*/_SUCCESS"
	rep, err := fetch.Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Source.Prefix != "wd/20261120/" || rep.Source.Marker != "wd/20261120/_SUCCESS" || len(rep.Objects) != 1 {
		t.Fatalf("report source %+v with %d objects, want the 20261120 set", rep.Source, len(rep.Objects))
	}
	got, _ := os.ReadFile(filepath.Join(opts.Dest, "a.nt.gz"))
	if string(got) != "wd/20261120/a.nt.gz" {
		t.Fatalf("fetched %q", got)
	}
}
