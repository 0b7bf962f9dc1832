package fetch_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	dto "github.com/prometheus/client_model/go"

	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/fetch"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/miniotest"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/source"
)

const (
	bucket = "dumps"
	prefix = "wikidata/20261120/"
	mib    = 1 << 20
)

// dumpSet is what a publisher uploads: some small objects, large multipart ones, an object
// the include pattern leaves out, and (optionally) the completion marker last.
type dumpSet map[string][]byte

func uploadSet(t *testing.T, srv *miniotest.Server, withMarker bool) dumpSet {
	t.Helper()
	set := dumpSet{
		prefix + "part-0001.nt.gz":    miniotest.RandomData(300 * 1024),
		prefix + "part-0002.nt.gz":    miniotest.RandomData(1*mib + 17),
		prefix + "sub/lexemes.nt.gz":  miniotest.RandomData(64 * 1024),
		prefix + "empty.nt.gz":        {},
		prefix + "big-0001.nt.gz":     miniotest.RandomData(12*mib + 4321), // multipart: 3 parts of 5 MiB
		prefix + "big-0002.nt.gz":     miniotest.RandomData(11 * mib),      // multipart
		prefix + "README.txt":         []byte("not RDF, left out by --include"),
		"wikidata/20261119/old.nt.gz": miniotest.RandomData(1000), // another dated set, outside the prefix
	}
	for k, v := range set {
		opts := minio.PutObjectOptions{}
		if len(v) > 10*mib {
			opts.PartSize = 5 * mib
		}
		srv.Put(bucket, k, v, opts)
	}
	if withMarker {
		srv.Put(bucket, prefix+"_SUCCESS", nil, minio.PutObjectOptions{})
	}
	delete(set, prefix+"README.txt")
	delete(set, "wikidata/20261119/old.nt.gz")
	return set
}

func newServer(t *testing.T) *miniotest.Server {
	srv := miniotest.Start(t)
	srv.MakeBucket(bucket)
	return srv
}

func baseOptions(srv *miniotest.Server, dest string) fetch.Options {
	return fetch.Options{
		Source: source.Spec{Endpoint: srv.Endpoint(), Bucket: bucket, Prefix: prefix, Marker: prefix + "_SUCCESS",
			Include: []string{"*.nt.gz"}},
		Creds:     source.Credentials{AccessKeyID: srv.AccessKey, SecretAccessKey: srv.SecretKey},
		Dest:      dest,
		Report:    filepath.Join(filepath.Dir(dest), "fetch-report.json"),
		Parallel:  4,
		PartSize:  1 * mib,
		Retries:   2,
		RetryBase: 1, // 1ns: retries here are about behaviour, not waiting
		Metrics:   fetch.NewMetrics(),
	}
}

func checkFiles(t *testing.T, dest string, set dumpSet) {
	t.Helper()
	for key, want := range set {
		got, err := os.ReadFile(filepath.Join(dest, strings.TrimPrefix(key, prefix)))
		if err != nil {
			t.Fatalf("object %s not fetched: %v", key, err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("object %s: local content differs from the source", key)
		}
	}
	// Nothing else is visible outside the state directory: no marker, no excluded object,
	// no partial file.
	var extra []string
	_ = filepath.WalkDir(dest, func(p string, d os.DirEntry, err error) error {
		if d.IsDir() && d.Name() == fetch.StateDirName {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(dest, p)
			if _, ok := set[prefix+filepath.ToSlash(rel)]; !ok {
				extra = append(extra, rel)
			}
		}
		return nil
	})
	if len(extra) > 0 {
		t.Fatalf("unexpected files in the destination: %v", extra)
	}
}

func counter(t *testing.T, m *fetch.Metrics, name string, label ...string) float64 {
	t.Helper()
	mfs, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, metric := range mf.GetMetric() {
			if len(label) == 2 && !hasLabel(metric, label[0], label[1]) {
				continue
			}
			if c := metric.GetCounter(); c != nil {
				return c.GetValue()
			}
			return metric.GetGauge().GetValue()
		}
	}
	t.Fatalf("metric %s%v not found", name, label)
	return 0
}

func hasLabel(m *dto.Metric, k, v string) bool {
	for _, l := range m.GetLabel() {
		if l.GetName() == k && l.GetValue() == v {
			return true
		}
	}
	return false
}

// Multi-object, multipart objects, parallel ranged reads, ETag verification (single-part MD5
// and multipart MD5-of-MD5s), report, metrics, progress lines; a rerun skips everything.
func TestFetchMultiObjectAndMultipart(t *testing.T) {
	srv := newServer(t)
	set := uploadSet(t, srv, true)
	dest := filepath.Join(t.TempDir(), "input")
	opts := baseOptions(srv, dest)
	var progress bytes.Buffer
	opts.Progress = &progress

	rep, err := fetch.Run(context.Background(), opts)
	if err != nil {
		t.Fatalf("fetch failed (exit %d): %v", fetch.ExitCode(err), err)
	}
	checkFiles(t, dest, set)

	var total int64
	var want []source.Object
	for _, ro := range rep.Objects {
		data := set[ro.Key]
		sum := sha256.Sum256(data)
		if ro.SHA256 != hex.EncodeToString(sum[:]) || ro.Size != int64(len(data)) {
			t.Errorf("report for %s: sha256 %s size %d, want %x %d", ro.Key, ro.SHA256, ro.Size, sum, len(data))
		}
		wantMethod := "etag-md5"
		if len(data) > 10*mib {
			wantMethod = "etag-multipart"
			if !strings.Contains(ro.ETag, "-") {
				t.Errorf("%s was meant to be a multipart upload, ETag %s", ro.Key, ro.ETag)
			}
		}
		if ro.VerifiedBy != wantMethod {
			t.Errorf("%s verified by %q, want %q", ro.Key, ro.VerifiedBy, wantMethod)
		}
		total += int64(len(data))
		want = append(want, source.Object{Key: ro.Key, Size: ro.Size, ETag: ro.ETag})
	}
	if len(rep.Objects) != len(set) {
		t.Fatalf("report lists %d objects, want %d", len(rep.Objects), len(set))
	}
	if rep.Revision != source.ListingRevision(want) || !strings.HasPrefix(rep.Revision, "sha256:") {
		t.Errorf("revision %s, want the listing digest %s", rep.Revision, source.ListingRevision(want))
	}
	if rep.Totals.Bytes != total || rep.Totals.TransferredBytes != total || rep.Totals.SkippedObjects != 0 {
		t.Errorf("totals %+v, want %d bytes all transferred", rep.Totals, total)
	}
	if got := counter(t, opts.Metrics, "rdf_bulkload_fetch_bytes_total"); got != float64(total) {
		t.Errorf("bytes metric %v, want %d", got, total)
	}
	if got := counter(t, opts.Metrics, "rdf_bulkload_fetch_objects_total", "result", "fetched"); got != float64(len(set)) {
		t.Errorf("fetched objects metric %v, want %d", got, len(set))
	}
	if _, err := os.Stat(opts.Report); err != nil {
		t.Errorf("report file not written: %v", err)
	}
	events := parseEvents(t, progress.Bytes())
	if n := countEvents(events, "object"); n != len(set) {
		t.Errorf("%d object progress events, want %d", n, len(set))
	}
	if countEvents(events, "plan") != 1 || countEvents(events, "done") != 1 {
		t.Errorf("want one plan and one done event, got %v", eventNames(events))
	}
	if strings.Contains(progress.String(), srv.SecretKey) {
		t.Fatal("the secret key appears in the progress output")
	}
	rb, _ := os.ReadFile(opts.Report)
	if strings.Contains(string(rb), srv.SecretKey) || strings.Contains(string(rb), srv.AccessKey) {
		t.Fatal("credentials appear in the report")
	}

	if _, err := os.Stat(filepath.Join(dest, fetch.StateDirName)); !os.IsNotExist(err) {
		t.Errorf("the state directory outlived a successful fetch: %v", err)
	}

	// A rerun finds every object complete and verified (from the report): nothing is transferred.
	opts.Metrics = fetch.NewMetrics()
	rep2, err := fetch.Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if rep2.Totals.SkippedObjects != len(set) || rep2.Totals.TransferredBytes != 0 {
		t.Errorf("rerun totals %+v, want all %d objects skipped and nothing transferred", rep2.Totals, len(set))
	}
	if rep2.Revision != rep.Revision {
		t.Errorf("rerun revision %s != %s", rep2.Revision, rep.Revision)
	}
	checkFiles(t, dest, set)

	// A narrower set in the same destination: files of the earlier set that are not part of
	// it are removed, so the loader never reads them.
	opts.Source.Include = []string{"part-*.nt.gz"}
	rep3, err := fetch.Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	narrow := dumpSet{prefix + "part-0001.nt.gz": set[prefix+"part-0001.nt.gz"], prefix + "part-0002.nt.gz": set[prefix+"part-0002.nt.gz"]}
	checkFiles(t, dest, narrow)
	if rep3.Totals.SkippedObjects != 2 || rep3.Totals.TransferredBytes != 0 {
		t.Errorf("narrower rerun totals %+v", rep3.Totals)
	}
}

// A manifest (sha256sum style) gives the digests and the revision; a digest mismatch fails with
// the object named, and the bad bytes never reach the final path.
func TestFetchManifestAndCorruptedObject(t *testing.T) {
	srv := newServer(t)
	set := uploadSet(t, srv, false)
	var manifest bytes.Buffer
	for _, k := range sortedKeys(set) {
		sum := sha256.Sum256(set[k])
		fmt.Fprintf(&manifest, "%x  %s\n", sum, strings.TrimPrefix(k, prefix))
	}
	srv.Put(bucket, prefix+"SHA256SUMS", manifest.Bytes(), minio.PutObjectOptions{})

	dest := filepath.Join(t.TempDir(), "input")
	opts := baseOptions(srv, dest)
	opts.Source.Marker, opts.Source.Manifest = "", prefix+"SHA256SUMS"
	rep, err := fetch.Run(context.Background(), opts)
	if err != nil {
		t.Fatalf("fetch failed (exit %d): %v", fetch.ExitCode(err), err)
	}
	checkFiles(t, dest, set)
	msum := sha256.Sum256(manifest.Bytes())
	if rep.Revision != "sha256:"+hex.EncodeToString(msum[:]) || rep.Source.ManifestSHA256 != hex.EncodeToString(msum[:]) {
		t.Errorf("revision %s, want the manifest digest %x", rep.Revision, msum)
	}
	for _, ro := range rep.Objects {
		if ro.VerifiedBy != "manifest-sha256" || ro.Expected == nil || ro.Expected.Hex != ro.SHA256 {
			t.Errorf("%s: verified by %s expected %+v sha256 %s", ro.Key, ro.VerifiedBy, ro.Expected, ro.SHA256)
		}
	}

	// The publisher's manifest says one thing, the object holds another (an md5sum-style
	// manifest this time): the fetch fails and names the object.
	corrupt := prefix + "part-0002.nt.gz"
	var md5s bytes.Buffer
	for _, k := range sortedKeys(set) {
		sum := md5.Sum(set[k])
		if k == corrupt {
			sum[0] ^= 0xff
		}
		fmt.Fprintf(&md5s, "%x *%s\n", sum, strings.TrimPrefix(k, prefix))
	}
	srv.Put(bucket, prefix+"md5sums.txt", md5s.Bytes(), minio.PutObjectOptions{})
	dest2 := filepath.Join(t.TempDir(), "input")
	opts2 := baseOptions(srv, dest2)
	opts2.Source.Marker, opts2.Source.Manifest = "", prefix+"md5sums.txt"
	opts2.Parallel = 1
	_, err = fetch.Run(context.Background(), opts2)
	if code := fetch.ExitCode(err); code != fetch.ExitIntegrity {
		t.Fatalf("exit %d (%v), want %d for a digest mismatch", code, err, fetch.ExitIntegrity)
	}
	var ie *fetch.IntegrityError
	if !errors.As(err, &ie) || ie.Key != corrupt || !strings.Contains(err.Error(), corrupt) {
		t.Fatalf("error %q does not name the corrupted object %s", err, corrupt)
	}
	if _, err := os.Stat(filepath.Join(dest2, "part-0002.nt.gz")); !os.IsNotExist(err) {
		t.Fatal("the corrupted object reached its final path")
	}
	if _, err := os.Stat(filepath.Join(dest2, fetch.StateDirName, "parts", "part-0002.nt.gz.part")); !os.IsNotExist(err) {
		t.Fatal("the corrupted partial file was kept")
	}
}

// The server dies in the middle of a large object: the fetch fails as retryable (75) with the
// partial file and its state kept out of sight; after a restart, a rerun continues with
// ranged reads from the recorded parts instead of starting over.
func TestFetchInterruptedTransferResumes(t *testing.T) {
	srv := newServer(t)
	set := uploadSet(t, srv, true)
	big := prefix + "big-0001.nt.gz"
	dest := filepath.Join(t.TempDir(), "input")
	opts := baseOptions(srv, dest)
	opts.Source.Prefix, opts.Source.Keys, opts.Source.Include = "", []string{big}, nil
	opts.Parallel = 1 // parts in order, so "4 parts done" is exact
	killed := false
	opts.OnPart = func(ev fetch.PartEvent) {
		if ev.Key == big && ev.Part == 3 && !killed {
			killed = true
			srv.Kill()
		}
	}
	_, err := fetch.Run(context.Background(), opts)
	if !killed {
		t.Fatal("the transfer was never interrupted")
	}
	if code := fetch.ExitCode(err); code != fetch.ExitTransient {
		t.Fatalf("exit %d (%v), want %d (retryable) when the server is gone", code, err, fetch.ExitTransient)
	}
	if !strings.Contains(err.Error(), big) {
		t.Errorf("error %q does not name the object", err)
	}
	if _, err := os.Stat(filepath.Join(dest, "big-0001.nt.gz")); !os.IsNotExist(err) {
		t.Fatal("a partial object is visible at its final path")
	}
	if _, err := os.Stat(filepath.Join(dest, fetch.StateDirName, "parts", "big-0001.nt.gz.state")); err != nil {
		t.Fatalf("no sidecar state for the partial object: %v", err)
	}

	srv.Restart()
	opts.OnPart = nil
	opts.Metrics = fetch.NewMetrics()
	rep, err := fetch.Run(context.Background(), opts)
	if err != nil {
		t.Fatalf("resume failed (exit %d): %v", fetch.ExitCode(err), err)
	}
	size := int64(len(set[big]))
	ro := rep.Objects[0]
	if ro.ResumedBytes != 4*mib || ro.TransferredBytes != size-4*mib {
		t.Fatalf("resumed %d and transferred %d bytes, want 4 MiB resumed and %d transferred", ro.ResumedBytes, ro.TransferredBytes, size-4*mib)
	}
	if got := counter(t, opts.Metrics, "rdf_bulkload_fetch_bytes_total"); got != float64(size-4*mib) {
		t.Errorf("bytes metric %v after resume, want %d", got, size-4*mib)
	}
	checkFiles(t, dest, dumpSet{big: set[big]})
	if ro.VerifiedBy != "etag-multipart" {
		t.Errorf("verified by %s", ro.VerifiedBy)
	}
}

// Bytes damaged on the local disk between runs are caught by the ETag check on resume.
func TestFetchDamagedPartialFileIsCaught(t *testing.T) {
	srv := newServer(t)
	set := uploadSet(t, srv, true)
	big := prefix + "big-0002.nt.gz"
	dest := filepath.Join(t.TempDir(), "input")
	opts := baseOptions(srv, dest)
	opts.Source.Prefix, opts.Source.Keys, opts.Source.Include = "", []string{big}, nil
	opts.Parallel = 1
	ctx, cancel := context.WithCancel(context.Background())
	opts.OnPart = func(ev fetch.PartEvent) {
		if ev.Part == 2 {
			cancel()
		}
	}
	if _, err := fetch.Run(ctx, opts); fetch.ExitCode(err) != fetch.ExitTransient {
		t.Fatalf("interrupted fetch: exit %d (%v), want %d", fetch.ExitCode(err), err, fetch.ExitTransient)
	}
	part := filepath.Join(dest, fetch.StateDirName, "parts", "big-0002.nt.gz.part")
	f, err := os.OpenFile(part, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("bitrot"), 1000); err != nil {
		t.Fatal(err)
	}
	f.Close()
	opts.OnPart = nil
	_, err = fetch.Run(context.Background(), opts)
	var ie *fetch.IntegrityError
	if fetch.ExitCode(err) != fetch.ExitIntegrity || !errors.As(err, &ie) || ie.Key != big || ie.Method != "etag-multipart" {
		t.Fatalf("exit %d (%v), want an etag-multipart integrity failure naming %s", fetch.ExitCode(err), err, big)
	}
	// The damaged partial is discarded, so the next run fetches the object afresh.
	rep, err := fetch.Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Objects[0].ResumedBytes != 0 {
		t.Errorf("resumed %d bytes from a discarded partial", rep.Objects[0].ResumedBytes)
	}
	checkFiles(t, dest, dumpSet{big: set[big]})
}

// Without its completion marker (or manifest) a dump set is never fetched.
func TestFetchRefusesIncompleteSet(t *testing.T) {
	srv := newServer(t)
	uploadSet(t, srv, false)
	dest := filepath.Join(t.TempDir(), "input")
	opts := baseOptions(srv, dest)
	_, err := fetch.Run(context.Background(), opts)
	if fetch.ExitCode(err) != fetch.ExitIntegrity || !strings.Contains(err.Error(), prefix+"_SUCCESS") ||
		!strings.Contains(err.Error(), "missing") {
		t.Fatalf("exit %d (%v), want %d naming the missing marker", fetch.ExitCode(err), err, fetch.ExitIntegrity)
	}
	opts.Source.Marker, opts.Source.Manifest = "", prefix+"SHA256SUMS"
	_, err = fetch.Run(context.Background(), opts)
	if fetch.ExitCode(err) != fetch.ExitIntegrity || !strings.Contains(err.Error(), "manifest") {
		t.Fatalf("exit %d (%v), want %d for a missing manifest", fetch.ExitCode(err), err, fetch.ExitIntegrity)
	}
	if counter(t, opts.Metrics, "rdf_bulkload_fetch_bytes_total") != 0 {
		t.Fatal("bytes were fetched from an incomplete set")
	}
	entries, _ := os.ReadDir(dest)
	for _, e := range entries {
		if e.Name() != fetch.StateDirName {
			t.Fatalf("%s written from an incomplete set", e.Name())
		}
	}
	// The marker lands: now it is fetched.
	srv.Put(bucket, prefix+"_SUCCESS", nil, minio.PutObjectOptions{})
	opts = baseOptions(srv, dest)
	if _, err := fetch.Run(context.Background(), opts); err != nil {
		t.Fatalf("fetch after the marker landed: %v", err)
	}
}

// Free disk is checked against the dump set before anything is written: a real, tiny tmpfs.
func TestFetchNotEnoughDisk(t *testing.T) {
	srv := newServer(t)
	set := uploadSet(t, srv, true)
	dest := filepath.Join(t.TempDir(), "small")
	if err := os.MkdirAll(dest, 0o755); err != nil {
		t.Fatal(err)
	}
	opts := baseOptions(srv, dest)
	opts.Report = filepath.Join(t.TempDir(), "report.json")
	var total int64
	for _, v := range set {
		total += int64(len(v))
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", dest).CombinedOutput(); err == nil {
		t.Cleanup(func() { _ = exec.Command("umount", "-l", dest).Run() })
	} else {
		// Only when mounting is impossible (not root): probe what an 8 MiB filesystem would report.
		t.Logf("cannot mount a tmpfs (%s: %v); using a free-space probe that reports 8 MiB", strings.TrimSpace(string(out)), err)
		opts.FreeSpace = func(string) (uint64, error) { return 8 * mib, nil }
	}
	_, err := fetch.Run(context.Background(), opts)
	if fetch.ExitCode(err) != fetch.ExitNoSpace {
		t.Fatalf("exit %d (%v), want %d", fetch.ExitCode(err), err, fetch.ExitNoSpace)
	}
	if !strings.Contains(err.Error(), fmt.Sprint(total)) || !strings.Contains(err.Error(), "not enough disk space") {
		t.Errorf("error %q does not give the needed size %d", err, total)
	}
	if counter(t, opts.Metrics, "rdf_bulkload_fetch_bytes_total") != 0 {
		t.Fatal("bytes were fetched before the disk check")
	}
	// The same set without the two big objects fits.
	opts.Source.Include = []string{"part-*.nt.gz"}
	if _, err := fetch.Run(context.Background(), opts); err != nil {
		t.Fatalf("a set that fits: %v", err)
	}
}

func sortedKeys(set dumpSet) []string {
	var keys []string
	for k := range set {
		keys = append(keys, k)
	}
	sortStrings(keys)
	return keys
}

// retryWriter watches the JSON progress lines and calls onRetry (synchronously, before the
// fetch sleeps and retries) the first time a retry is announced.
type retryWriter struct {
	buf     bytes.Buffer
	onRetry func()
	fired   bool
}

func (w *retryWriter) Write(p []byte) (int, error) {
	w.buf.Write(p)
	if !w.fired && bytes.Contains(p, []byte(`"event":"retry"`)) {
		w.fired = true
		w.onRetry()
	}
	return len(p), nil
}

// The server goes away in the middle of a large object and comes back while the fetch is
// backing off: the same run continues with ranged reads and succeeds, nothing re-fetched.
func TestFetchRetriesThroughAnOutage(t *testing.T) {
	srv := newServer(t)
	set := uploadSet(t, srv, true)
	big := prefix + "big-0002.nt.gz"
	dest := filepath.Join(t.TempDir(), "input")
	opts := baseOptions(srv, dest)
	opts.Source.Prefix, opts.Source.Keys, opts.Source.Include = "", []string{big}, nil
	opts.Parallel = 1
	opts.Retries = 3
	down := false
	opts.OnPart = func(ev fetch.PartEvent) {
		if ev.Part == 4 && !down {
			down = true
			srv.Kill()
		}
	}
	w := &retryWriter{onRetry: srv.Restart}
	opts.Progress = w
	rep, err := fetch.Run(context.Background(), opts)
	if err != nil {
		t.Fatalf("fetch did not ride out the outage (exit %d): %v\n%s", fetch.ExitCode(err), err, w.buf.String())
	}
	if !down || !w.fired || rep.Totals.Retries < 1 {
		t.Fatalf("no outage was ridden out: killed %v, retry seen %v, retries %d", down, w.fired, rep.Totals.Retries)
	}
	size := int64(len(set[big]))
	if rep.Totals.TransferredBytes != size {
		t.Errorf("transferred %d bytes for a %d-byte object: parts were fetched twice or lost", rep.Totals.TransferredBytes, size)
	}
	checkFiles(t, dest, dumpSet{big: set[big]})
}

// Multipart objects uploaded with a full-object checksum (CRC64NVME is what current AWS SDKs
// and mc send by default; CRC32C with the full-object type) are verified against it; a
// damaged local copy fails naming the object and the checksum.
func TestFetchVerifiesFullObjectChecksums(t *testing.T) {
	srv := newServer(t)
	up, err := minio.New(strings.TrimPrefix(srv.Endpoint(), "http://"), &minio.Options{
		Creds: credentials.NewStaticV4(srv.AccessKey, srv.SecretKey, ""), TrailingHeaders: true})
	if err != nil {
		t.Fatal(err)
	}
	data := map[string][]byte{
		prefix + "crc64.nt.gz":  miniotest.RandomData(11 * mib),
		prefix + "crc32c.nt.gz": miniotest.RandomData(12*mib + 7),
	}
	types := map[string]minio.ChecksumType{prefix + "crc64.nt.gz": minio.ChecksumCRC64NVME, prefix + "crc32c.nt.gz": minio.ChecksumFullObjectCRC32C}
	for k, v := range data {
		if _, err := up.PutObject(context.Background(), bucket, k, bytes.NewReader(v), int64(len(v)),
			minio.PutObjectOptions{PartSize: 5 * mib, Checksum: types[k]}); err != nil {
			t.Fatalf("upload %s with %v: %v", k, types[k], err)
		}
	}
	srv.Put(bucket, prefix+"_SUCCESS", nil, minio.PutObjectOptions{})
	dest := filepath.Join(t.TempDir(), "input")
	opts := baseOptions(srv, dest)
	rep, err := fetch.Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{prefix + "crc64.nt.gz": "checksum-crc64nvme", prefix + "crc32c.nt.gz": "checksum-crc32c"}
	for _, ro := range rep.Objects {
		if ro.VerifiedBy != want[ro.Key] {
			t.Errorf("%s (ETag %s) verified by %q, want %q", ro.Key, ro.ETag, ro.VerifiedBy, want[ro.Key])
		}
	}
	checkFiles(t, dest, dumpSet(data))

	// Damage a partial copy between runs: the checksum catches it.
	dest2 := filepath.Join(t.TempDir(), "input")
	opts = baseOptions(srv, dest2)
	opts.Source.Prefix, opts.Source.Keys, opts.Source.Include = "", []string{prefix + "crc64.nt.gz"}, nil
	opts.Parallel = 1
	ctx, cancel := context.WithCancel(context.Background())
	opts.OnPart = func(ev fetch.PartEvent) {
		if ev.Part == 1 {
			cancel()
		}
	}
	if _, err := fetch.Run(ctx, opts); fetch.ExitCode(err) != fetch.ExitTransient {
		t.Fatalf("interrupted run: %v", err)
	}
	part := filepath.Join(dest2, fetch.StateDirName, "parts", "crc64.nt.gz.part")
	f, err := os.OpenFile(part, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteAt([]byte{0xde, 0xad}, 12345)
	f.Close()
	opts.OnPart = nil
	_, err = fetch.Run(context.Background(), opts)
	var ie *fetch.IntegrityError
	if !errors.As(err, &ie) || ie.Key != prefix+"crc64.nt.gz" || ie.Method != "checksum-crc64nvme" {
		t.Fatalf("damaged copy: %v, want a checksum-crc64nvme integrity error", err)
	}
}
