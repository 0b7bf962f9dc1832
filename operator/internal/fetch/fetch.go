package fetch

import (
	"context"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/minio/minio-go/v7"
	"golang.org/x/sync/errgroup"

	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/source"
)

// Options of one fetch.
type Options struct {
	Source source.Spec
	Creds  source.Credentials
	// Dest is the directory the objects land in (created if missing).
	Dest string
	// Report is where the fetch report (JSON) is written on success; empty = none.
	Report string
	// Parallel is the number of concurrent ranged reads (across and within objects). Default 8.
	Parallel int
	// PartSize is the size of one ranged read and the unit of resumption. Default 64 MiB.
	PartSize int64
	// Retries per request after a transient error (default 8), with exponential backoff from
	// RetryBase (default 1s) up to RetryMax (default 30s), jittered.
	Retries   int
	RetryBase time.Duration
	RetryMax  time.Duration
	// Progress receives JSON lines; nil = none. ProgressInterval defaults to 5s.
	Progress         io.Writer
	ProgressInterval time.Duration
	// Metrics to update; nil = a private set.
	Metrics *Metrics
	// FreeSpace reports the bytes available in a directory; nil = statfs.
	FreeSpace func(dir string) (uint64, error)
	// OnPart, when set, is called after each part is on disk and recorded (before the object is
	// verified), from the worker that fetched it. Observability hook; tests use it to
	// interrupt a transfer at a known point.
	OnPart func(PartEvent)
	// BufferSize per worker (default 1 MiB): memory use is about Parallel × BufferSize.
	BufferSize int
	// Version is recorded in the report.
	Version string
	// ExpectRevision, when set, must equal the resolved source revision: the build fetches
	// exactly the dump set the operator decided to build, or fails (exit 3).
	ExpectRevision string
	// BuildRevision is the operator's short revision of the build (its volumes', snapshot's and
	// the serving template's served-revision label), recorded in the report: the loader copies
	// the report into the database's build report, where a serving pod's readiness check
	// finds which revision the database it opened holds.
	BuildRevision string
}

// PartEvent describes one part written to disk.
type PartEvent struct {
	Key           string
	Part, Parts   int
	Offset, Bytes int64
}

type span struct{ off, n int64 }

type verifyPlan struct {
	Method   string // manifest-<algo>, checksum-<algo>, etag-md5, etag-multipart, size
	Expected string // hex digest or ETag
	PartSize int64  // etag-multipart only
	// Checksum is the S3 full-object checksum type (checksum-<algo> only).
	Checksum minio.ChecksumType
}

type object struct {
	src     source.Object
	rel     string
	verify  verifyPlan
	parts   []span
	skipped bool
	rec     doneRecord

	mu          sync.Mutex
	done        []bool
	remaining   int
	file        *os.File
	resumed     int64
	transferred atomic.Int64
}

type runner struct {
	opts    Options
	client  *minio.Client
	layout  layout
	metrics *Metrics
	prog    *EventLog
	bytes   atomic.Int64 // bytes on disk for the set, incl. resumed/skipped
	objDone atomic.Int64
	retries atomic.Int64

	previous map[string]doneRecord
}

// Run fetches the dump set. The error, if any, is an *Error whose Code is the exit code.
// Its phases: resolve the dump set (refusing an incomplete or changed one), plan what
// is left to fetch and check the disk has room for it, fetch, report.
func Run(ctx context.Context, opts Options) (*Report, error) {
	started := time.Now().UTC()
	opts = opts.withDefaults()
	if err := opts.Source.Validate(); err != nil {
		return nil, &Error{Code: ExitUsage, Err: err}
	}
	if opts.Dest == "" {
		return nil, errorf(ExitUsage, "a destination directory is required")
	}
	if err := os.MkdirAll(filepath.Join(opts.Dest, StateDirName), 0o755); err != nil {
		return nil, errorf(ExitInternal, "creating destination: %w", err)
	}
	client, err := source.NewClient(opts.Source, opts.Creds, source.ClientOptions{MaxRetries: 1})
	if err != nil {
		return nil, &Error{Code: ExitUsage, Err: err}
	}
	r := &runner{opts: opts, client: client, layout: layout{dest: opts.Dest}, metrics: opts.Metrics,
		prog: NewEventLog(opts.Progress, opts.Creds.Redact)}

	snap, err := r.resolve(ctx)
	if err != nil {
		return nil, err
	}
	objs, err := r.plan(ctx, snap)
	if err != nil {
		return nil, err
	}
	pending, total, err := r.checkSpace(snap, objs)
	if err != nil {
		return nil, err
	}
	if err := r.fetch(ctx, pending, total, len(objs)); err != nil {
		return nil, err
	}
	return r.finish(snap, objs, started)
}

// withDefaults fills in the options left at zero.
func (opts Options) withDefaults() Options {
	if opts.Parallel <= 0 {
		opts.Parallel = 8
	}
	if opts.PartSize <= 0 {
		opts.PartSize = 64 << 20
	}
	if opts.Retries < 0 {
		opts.Retries = 0
	} else if opts.Retries == 0 {
		opts.Retries = 8
	}
	if opts.RetryBase <= 0 {
		opts.RetryBase = time.Second
	}
	if opts.RetryMax <= 0 {
		opts.RetryMax = 30 * time.Second
	}
	if opts.ProgressInterval <= 0 {
		opts.ProgressInterval = 5 * time.Second
	}
	if opts.BufferSize <= 0 {
		opts.BufferSize = 1 << 20
	}
	if opts.FreeSpace == nil {
		opts.FreeSpace = freeSpace
	}
	if opts.Metrics == nil {
		opts.Metrics = NewMetrics()
	}
	return opts
}

// resolve finds the dump set and refuses an incomplete one, or one whose revision is not
// the one this build is for. A dated spec ("wikidata/*/") resolves to its newest complete
// directory, which the rest of the fetch then uses.
func (r *runner) resolve(ctx context.Context) (*source.Snapshot, error) {
	var snap *source.Snapshot
	if err := r.retry(ctx, "list "+r.opts.Source.Bucket, func() error {
		var err error
		snap, err = source.Resolve(ctx, r.client, r.opts.Source)
		return err
	}); err != nil {
		return nil, r.s3Error(err, "resolving the dump set")
	}
	if !snap.Complete {
		return nil, errorf(ExitIntegrity, "refusing to fetch: %s (a dump set is fetched only once its completion marker or manifest is present)", snap.Incomplete)
	}
	r.opts.Source = snap.Spec
	if want := r.opts.ExpectRevision; want != "" && snap.Revision != want {
		return nil, errorf(ExitIntegrity, "the source changed: its revision is now %s, this build is for %s", snap.Revision, want)
	}
	return snap, nil
}

// checkSpace compares the free disk with what is still to be written, announces the plan,
// and returns the objects still to fetch and the dump set's size.
func (r *runner) checkSpace(snap *source.Snapshot, objs []*object) ([]*object, int64, error) {
	var need, total, skippedBytes, resumable int64
	var pending []*object
	for _, o := range objs {
		total += o.src.Size
		if o.skipped {
			skippedBytes += o.src.Size
			continue
		}
		pending = append(pending, o)
		resumable += o.resumed
		if n := o.src.Size - allocated(r.layout.part(o.rel)); n > 0 {
			need += n
		}
	}
	r.metrics.ExpectedBytes.Set(float64(total))
	r.metrics.ExpectedObjects.Set(float64(len(objs)))

	dest := r.opts.Dest
	free, err := r.opts.FreeSpace(dest)
	if err != nil {
		return nil, 0, errorf(ExitInternal, "checking free space on %s: %w", dest, err)
	}
	if uint64(need) > free {
		return nil, 0, errorf(ExitNoSpace, "not enough disk space on %s: the dump set needs %d more bytes (%s) for %d object(s), %d bytes (%s) are free",
			dest, need, humanBytes(need), len(pending), free, humanBytes(int64(free)))
	}
	r.prog.Emit(EventPlan, "revision", snap.Revision, "objects", len(objs), "bytes", total,
		"skipped_objects", len(objs)-len(pending), "skipped_bytes", skippedBytes, "resumed_bytes", resumable,
		"bytes_to_fetch", total-skippedBytes-resumable, "free_bytes", free, "parallel", r.opts.Parallel, "part_size", r.opts.PartSize)
	for _, o := range objs {
		if o.skipped {
			r.metrics.ObjectsTotal.WithLabelValues("skipped").Inc()
			r.objDone.Add(1)
		}
	}
	r.bytes.Store(skippedBytes + resumable)
	return pending, total, nil
}

// fetchTask is one unit of the fetch: a part of an object, or a whole object (part -1,
// an object without parts, e.g. empty).
type fetchTask struct {
	o    *object
	part int
}

// fetch runs a pool of workers over the (object, part) tasks in key order. The first
// error stops them all and is the fetch's.
func (r *runner) fetch(ctx context.Context, pending []*object, total int64, objects int) error {
	stopTicker := r.startTicker(total, int64(objects))
	tasks := make(chan fetchTask)
	g, gctx := errgroup.WithContext(ctx)
	for w := 0; w < r.opts.Parallel; w++ {
		g.Go(func() error {
			buf := make([]byte, r.opts.BufferSize)
			for t := range tasks {
				if err := r.fetchTask(gctx, t, buf); err != nil {
					return err
				}
			}
			return nil
		})
	}
	g.Go(func() error {
		defer close(tasks)
		for _, o := range pending {
			for _, t := range o.tasks() {
				select {
				case tasks <- t:
				case <-gctx.Done():
					return nil
				}
			}
		}
		return nil
	})
	err := g.Wait()
	for _, o := range pending {
		o.mu.Lock()
		if o.file != nil {
			o.file.Close()
			o.file = nil
		}
		o.mu.Unlock()
	}
	stopTicker()
	if err != nil {
		r.metrics.ObjectsTotal.WithLabelValues("failed").Inc()
		return err
	}
	if err := ctx.Err(); err != nil {
		return errorf(ExitTransient, "fetch interrupted: %w", err)
	}
	return nil
}

// tasks are the object's parts still to fetch, or the whole object when it has no parts.
func (o *object) tasks() []fetchTask {
	if len(o.parts) == 0 {
		return []fetchTask{{o, -1}}
	}
	var ts []fetchTask
	for i := range o.parts {
		if !o.done[i] {
			ts = append(ts, fetchTask{o, i})
		}
	}
	return ts
}

// fetchTask fetches a part and, once the object is complete, verifies and finalizes it.
func (r *runner) fetchTask(ctx context.Context, t fetchTask, buf []byte) error {
	complete := t.part < 0
	if !complete {
		if err := r.fetchPart(ctx, t.o, t.part, buf); err != nil {
			return err
		}
		var err error
		if complete, err = r.partDone(t.o, t.part); err != nil {
			return err
		}
	}
	if complete {
		return r.finalize(t.o, buf)
	}
	return nil
}

// finish writes the report and removes the state directory: the report now records every
// object, and the destination holds only the dump set.
func (r *runner) finish(snap *source.Snapshot, objs []*object, started time.Time) (*Report, error) {
	rep := r.report(snap, objs, started)
	if r.opts.Report != "" {
		if err := writeJSONAtomic(r.opts.Report, rep); err != nil {
			return nil, errorf(ExitInternal, "writing report: %w", err)
		}
	}
	if err := os.RemoveAll(filepath.Join(r.opts.Dest, StateDirName)); err != nil {
		r.prog.Emit(EventWarning, "message", "cannot remove the fetch state directory: "+err.Error())
	}
	r.prog.Emit(EventDone, "revision", rep.Revision, "objects", rep.Totals.Objects, "bytes", rep.Totals.Bytes,
		"transferred_bytes", rep.Totals.TransferredBytes, "resumed_bytes", rep.Totals.ResumedBytes,
		"skipped_objects", rep.Totals.SkippedObjects, "duration_seconds", rep.DurationSeconds,
		"rate_bytes_per_second", rep.BytesPerSecond)
	return rep, nil
}

// s3Error maps an endpoint error to an exit code with a clear message.
func (r *runner) s3Error(err error, doing string) error {
	var fe *Error
	if errors.As(err, &fe) {
		return fe
	}
	var me *source.ManifestError
	if errors.As(err, &me) {
		return &Error{Code: ExitIntegrity, Err: err}
	}
	msg := r.opts.Creds.Redact(fmt.Sprintf("%s: %s", doing, source.Describe(err)))
	switch source.Classify(err) {
	case source.Auth:
		return errorf(ExitUsage, "access to s3 bucket %q at %s denied: %s", r.opts.Source.Bucket, r.opts.Source.SafeEndpoint(), msg)
	case source.Config:
		return errorf(ExitUsage, "%s", msg)
	case source.Missing:
		return errorf(ExitIntegrity, "%s (the source changed during the fetch; a new revision will be fetched by the next build)", msg)
	case source.Canceled:
		return errorf(ExitTransient, "interrupted: %s", msg)
	}
	return errorf(ExitTransient, "%s (after %d retries)", msg, r.opts.Retries)
}

// retry runs fn, retrying transient errors with jittered exponential backoff.
func (r *runner) retry(ctx context.Context, what string, fn func() error) error {
	for attempt := 0; ; attempt++ {
		err := fn()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return errorf(ExitTransient, "fetch interrupted (%v) during %s: %s", context.Cause(ctx), what, source.Describe(err))
		}
		if source.Classify(err) != source.Transient || attempt >= r.opts.Retries {
			return err
		}
		if !r.backoff(ctx, what, attempt, err) {
			return errorf(ExitTransient, "fetch interrupted (%v) while retrying %s: %s", context.Cause(ctx), what, source.Describe(err))
		}
	}
}

func (r *runner) backoff(ctx context.Context, what string, attempt int, err error) bool {
	d := r.opts.RetryBase << min(attempt, 20)
	if d > r.opts.RetryMax || d <= 0 {
		d = r.opts.RetryMax
	}
	d = d/2 + time.Duration(rand.Int64N(int64(d/2)+1))
	r.retries.Add(1)
	r.metrics.RetriesTotal.Inc()
	r.prog.Emit(EventRetry, "what", what, "attempt", attempt+1, "max_retries", r.opts.Retries,
		"delay_seconds", d.Seconds(), "error", source.Describe(err))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func (r *runner) plan(ctx context.Context, snap *source.Snapshot) ([]*object, error) {
	objs := make([]*object, 0, len(snap.Objects))
	byRel := map[string]string{}
	for _, so := range snap.Objects {
		rel, err := r.opts.Source.LocalPath(so.Key)
		if err != nil {
			return nil, &Error{Code: ExitIntegrity, Err: err}
		}
		if strings.HasPrefix(rel, StateDirName+"/") || rel == StateDirName {
			return nil, errorf(ExitIntegrity, "object key %q collides with the fetch state directory", so.Key)
		}
		if other, dup := byRel[rel]; dup {
			return nil, errorf(ExitIntegrity, "objects %q and %q map to the same local path %s", other, so.Key, rel)
		}
		byRel[rel] = so.Key
		o := &object{src: so, rel: rel}
		objs = append(objs, o)
	}
	// What earlier runs completed: records in the state directory (runs that failed later)
	// and the report of the last successful run (which removed its state directory).
	r.previous = r.previousRecords()
	// Remove objects fetched by an earlier run that are no longer part of the set, so the
	// loader never sees a stale file beside the new ones.
	if err := r.removeStale(byRel); err != nil {
		return nil, errorf(ExitInternal, "removing stale objects: %w", err)
	}

	var headMu sync.Mutex
	var headErr error
	sem := make(chan struct{}, r.opts.Parallel)
	var wg sync.WaitGroup
	for _, o := range objs {
		expected := ""
		if o.src.Expected != nil {
			expected = o.src.Expected.String()
		}
		if rec, ok := r.previous[o.rel]; ok && rec.Key == o.src.Key && rec.Size == o.src.Size &&
			rec.ETag == o.src.ETag && rec.Expected == expected {
			if fi, err := os.Stat(r.layout.final(o.rel)); err == nil && fi.Mode().IsRegular() && fi.Size() == o.src.Size {
				o.skipped, o.rec = true, rec
				continue
			}
		}
		for off := int64(0); off < o.src.Size; off += r.opts.PartSize {
			o.parts = append(o.parts, span{off, min(r.opts.PartSize, o.src.Size-off)})
		}
		o.done = make([]bool, len(o.parts))
		o.remaining = len(o.parts)
		var st partState
		if readJSON(r.layout.partState(o.rel), &st) == nil && st.Key == o.src.Key && st.Size == o.src.Size &&
			st.ETag == o.src.ETag && st.PartSize == r.opts.PartSize {
			if fi, err := os.Stat(r.layout.part(o.rel)); err == nil && fi.Size() == o.src.Size {
				if done, err := parseDone(st.Done, len(o.parts)); err == nil {
					o.done = done
					for i, d := range done {
						if d {
							o.remaining--
							o.resumed += o.parts[i].n
						}
					}
				}
			}
		} else {
			_ = os.Remove(r.layout.partState(o.rel))
			if _, err := os.Stat(r.layout.part(o.rel)); err == nil {
				// A partial file from another version of the object or another part size:
				// its content cannot be trusted part by part.
				if st.Key != "" {
					_ = os.Remove(r.layout.part(o.rel))
				}
			}
		}
		if o.src.Expected != nil {
			o.verify = verifyPlan{Method: "manifest-" + o.src.Expected.Algorithm, Expected: o.src.Expected.Hex}
			continue
		}
		if isHex(o.src.ETag, 32) {
			o.verify = verifyPlan{Method: "etag-md5", Expected: strings.ToLower(o.src.ETag)}
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func(o *object) {
			defer wg.Done()
			defer func() { <-sem }()
			vp, err := r.planMultipart(ctx, o.src)
			if err != nil {
				headMu.Lock()
				if headErr == nil {
					headErr = err
				}
				headMu.Unlock()
				return
			}
			o.verify = vp
		}(o)
	}
	wg.Wait()
	if headErr != nil {
		return nil, r.s3Error(headErr, "reading object checksums")
	}
	for _, o := range objs {
		if !o.skipped && o.verify.Method == "size" {
			r.prog.Emit(EventWarning, "key", o.src.Key, "message", "no manifest digest, single-part ETag or full-object checksum for this object: verified by size only")
		}
	}
	return objs, nil
}

// planMultipart finds a way to verify an object whose ETag is not an MD5: a full-object
// SHA-256 checksum if the uploader stored one, else the multipart ETag recomputed from the
// part size (read from part 1), else its size.
func (r *runner) planMultipart(ctx context.Context, so source.Object) (verifyPlan, error) {
	var info minio.ObjectInfo
	opts := minio.StatObjectOptions{Checksum: true}
	_ = opts.SetMatchETag(so.ETag)
	if err := r.retry(ctx, "stat "+so.Key, func() (err error) {
		info, err = r.client.StatObject(ctx, r.opts.Source.Bucket, so.Key, opts)
		return err
	}); err != nil {
		return verifyPlan{}, err
	}
	// A full-object checksum (what current AWS SDKs and mc store by default: CRC64NVME, or
	// CRC32/CRC32C with the full-object type) covers the whole content, however it was uploaded.
	if strings.EqualFold(info.ChecksumMode, "FULL_OBJECT") {
		for _, c := range []struct {
			value string
			typ   minio.ChecksumType
			name  string
		}{
			{info.ChecksumCRC64NVME, minio.ChecksumCRC64NVME, "crc64nvme"},
			{info.ChecksumCRC32C, minio.ChecksumCRC32C, "crc32c"},
			{info.ChecksumCRC32, minio.ChecksumCRC32, "crc32"},
			{info.ChecksumSHA256, minio.ChecksumSHA256, "sha256"},
			{info.ChecksumSHA1, minio.ChecksumSHA1, "sha1"},
		} {
			if c.value == "" || strings.Contains(c.value, "-") {
				continue
			}
			if raw, err := base64.StdEncoding.DecodeString(c.value); err == nil && len(raw) == c.typ.RawByteLen() {
				return verifyPlan{Method: "checksum-" + c.name, Expected: hex.EncodeToString(raw), Checksum: c.typ}, nil
			}
		}
	}
	dash := strings.LastIndex(so.ETag, "-")
	if dash == 32 && isHex(so.ETag[:32], 32) {
		if n, err := strconv.Atoi(so.ETag[dash+1:]); err == nil && n > 0 {
			popts := minio.StatObjectOptions{PartNumber: 1}
			_ = popts.SetMatchETag(so.ETag)
			var p1 minio.ObjectInfo
			if err := r.retry(ctx, "stat part 1 of "+so.Key, func() (err error) {
				p1, err = r.client.StatObject(ctx, r.opts.Source.Bucket, so.Key, popts)
				return err
			}); err != nil {
				return verifyPlan{}, err
			}
			if p := p1.Size; p > 0 && (so.Size+p-1)/p == int64(n) {
				return verifyPlan{Method: "etag-multipart", Expected: strings.ToLower(so.ETag), PartSize: p}, nil
			}
		}
	}
	return verifyPlan{Method: "size"}, nil
}

// previousRecords collects what earlier runs verified, by local path.
func (r *runner) previousRecords() map[string]doneRecord {
	recs := map[string]doneRecord{}
	if r.opts.Report != "" {
		var rep Report
		if readJSON(r.opts.Report, &rep) == nil && rep.Tool == "rdf-bulkload-fetch" && rep.Destination == r.opts.Dest {
			for _, o := range rep.Objects {
				rec := doneRecord{Key: o.Key, Size: o.Size, ETag: o.ETag, SHA256: o.SHA256, MD5: o.MD5, VerifiedBy: o.VerifiedBy}
				if o.Expected != nil {
					rec.Expected = o.Expected.String()
				}
				recs[o.Path] = rec
			}
		}
	}
	root := r.layout.doneDir()
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".json") {
			return nil
		}
		rel, err := filepath.Rel(root, strings.TrimSuffix(p, ".json"))
		var rec doneRecord
		if err == nil && readJSON(p, &rec) == nil {
			recs[filepath.ToSlash(rel)] = rec
		}
		return nil
	})
	return recs
}

func (r *runner) removeStale(current map[string]string) error {
	var stale []string
	for rel := range r.previous {
		if _, ok := current[rel]; !ok {
			stale = append(stale, rel)
		}
	}
	sort.Strings(stale)
	for _, rel := range stale {
		if err := os.Remove(r.layout.final(rel)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if err := os.Remove(r.layout.done(rel)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		delete(r.previous, rel)
		r.prog.Emit(EventRemoved, "path", rel, "reason", "fetched by an earlier run, not part of this dump set")
	}
	return nil
}

// openPart opens (creating and preallocating) the partial file of o.
func (r *runner) openPart(o *object) (*os.File, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.file != nil {
		return o.file, nil
	}
	p := r.layout.part(o.rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, r.localError(err, "creating "+filepath.Dir(p))
	}
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, r.localError(err, "opening "+p)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, r.localError(err, "stat "+p)
	}
	if fi.Size() != o.src.Size || allocated(p) < o.src.Size {
		if err := preallocate(f, o.src.Size); err != nil {
			f.Close()
			return nil, r.localError(err, "allocating "+p)
		}
	}
	o.file = f
	return f, nil
}

func (r *runner) localError(err error, doing string) error {
	if isNoSpace(err) {
		return errorf(ExitNoSpace, "not enough disk space on %s: %s: %v", r.opts.Dest, doing, err)
	}
	return errorf(ExitInternal, "%s: %v", doing, err)
}

type localWriteError struct{ err error }

func (e *localWriteError) Error() string { return e.err.Error() }
func (e *localWriteError) Unwrap() error { return e.err }

// fetchPart downloads one part, continuing with ranged reads after transient errors.
func (r *runner) fetchPart(ctx context.Context, o *object, i int, buf []byte) error {
	f, err := r.openPart(o)
	if err != nil {
		return err
	}
	sp := o.parts[i]
	var written int64
	for attempt := 0; ; attempt++ {
		n, err := r.readRange(ctx, o, f, sp.off+written, sp.n-written, buf)
		written += n
		if err == nil && written == sp.n {
			return nil
		}
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		var lw *localWriteError
		if errors.As(err, &lw) {
			return r.localError(lw.err, "writing "+r.layout.part(o.rel))
		}
		if n > 0 {
			attempt = 0 // progress was made: the error budget starts over
		}
		if source.Classify(err) != source.Transient || attempt >= r.opts.Retries || ctx.Err() != nil {
			return r.s3Error(fmt.Errorf("object %s bytes %d-%d: %w", o.src.Key, sp.off+written, sp.off+sp.n-1, err), "fetching")
		}
		if !r.backoff(ctx, fmt.Sprintf("get %s part %d/%d", o.src.Key, i+1, len(o.parts)), attempt, err) {
			return errorf(ExitTransient, "fetch interrupted: %v", ctx.Err())
		}
	}
}

func (r *runner) readRange(ctx context.Context, o *object, f *os.File, off, n int64, buf []byte) (int64, error) {
	opts := minio.GetObjectOptions{}
	if err := opts.SetRange(off, off+n-1); err != nil {
		return 0, err
	}
	_ = opts.SetMatchETag(o.src.ETag)
	obj, err := r.client.GetObject(ctx, r.opts.Source.Bucket, o.src.Key, opts)
	if err != nil {
		return 0, err
	}
	defer obj.Close()
	var got int64
	for got < n {
		want := min(int64(len(buf)), n-got)
		m, rerr := obj.Read(buf[:want])
		if m > 0 {
			if _, werr := f.WriteAt(buf[:m], off+got); werr != nil {
				return got, &localWriteError{werr}
			}
			got += int64(m)
			o.transferred.Add(int64(m))
			r.bytes.Add(int64(m))
			r.metrics.BytesTotal.Add(float64(m))
		}
		if errors.Is(rerr, io.EOF) {
			if got < n {
				return got, io.ErrUnexpectedEOF
			}
			break
		}
		if rerr != nil {
			return got, rerr
		}
	}
	return got, nil
}

// partDone records part i of o as on disk; it reports whether the object is complete.
func (r *runner) partDone(o *object, i int) (bool, error) {
	o.mu.Lock()
	o.done[i] = true
	o.remaining--
	complete := o.remaining == 0
	var saveErr error
	if !complete && len(o.parts) > 1 {
		// The data must be durable before the state says so.
		if err := o.file.Sync(); err != nil {
			saveErr = err
		} else {
			saveErr = writeJSONAtomic(r.layout.partState(o.rel), partState{
				Key: o.src.Key, Size: o.src.Size, ETag: o.src.ETag, PartSize: r.opts.PartSize, Done: doneString(o.done)})
		}
	}
	o.mu.Unlock()
	if saveErr != nil {
		return false, r.localError(saveErr, "recording progress of "+o.rel)
	}
	if r.opts.OnPart != nil {
		r.opts.OnPart(PartEvent{Key: o.src.Key, Part: i, Parts: len(o.parts), Offset: o.parts[i].off, Bytes: o.parts[i].n})
	}
	return complete, nil
}

// finalize verifies a complete partial file and renames it into place.
func (r *runner) finalize(o *object, buf []byte) error {
	f, err := r.openPart(o)
	if err != nil {
		return err
	}
	partPath := r.layout.part(o.rel)
	if err := f.Sync(); err != nil {
		return r.localError(err, "syncing "+partPath)
	}
	sums, err := hashFile(f, o.src.Size, o.verify, buf)
	if err != nil {
		return r.localError(err, "reading back "+partPath)
	}
	o.mu.Lock()
	f.Close()
	o.file = nil
	o.mu.Unlock()
	actual := ""
	switch {
	case strings.HasPrefix(o.verify.Method, "manifest-"):
		actual = sums.byAlgo[strings.TrimPrefix(o.verify.Method, "manifest-")]
	case strings.HasPrefix(o.verify.Method, "checksum-"):
		actual = sums.checksum
	case o.verify.Method == "etag-md5":
		actual = sums.md5
	case o.verify.Method == "etag-multipart":
		actual = sums.multipart
	}
	if o.verify.Method != "size" && actual != o.verify.Expected {
		_ = os.Remove(partPath)
		_ = os.Remove(r.layout.partState(o.rel))
		return &Error{Code: ExitIntegrity, Err: &IntegrityError{Key: o.src.Key, Path: o.rel, Method: o.verify.Method,
			Expected: o.verify.Expected, Actual: actual}}
	}
	final := r.layout.final(o.rel)
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return r.localError(err, "creating "+filepath.Dir(final))
	}
	if err := os.Rename(partPath, final); err != nil {
		return r.localError(err, "renaming into "+final)
	}
	if err := syncDir(filepath.Dir(final)); err != nil {
		return r.localError(err, "syncing "+filepath.Dir(final))
	}
	expected := ""
	if o.src.Expected != nil {
		expected = o.src.Expected.String()
	}
	o.rec = doneRecord{Key: o.src.Key, Size: o.src.Size, ETag: o.src.ETag, SHA256: sums.sha256, MD5: sums.md5,
		VerifiedBy: o.verify.Method, Expected: expected}
	if err := writeJSONAtomic(r.layout.done(o.rel), o.rec); err != nil {
		return r.localError(err, "recording "+o.rel)
	}
	_ = os.Remove(r.layout.partState(o.rel))
	r.metrics.ObjectsTotal.WithLabelValues("fetched").Inc()
	done := r.objDone.Add(1)
	r.prog.Emit(EventObject, "key", o.src.Key, "path", o.rel, "size", o.src.Size, "sha256", sums.sha256,
		"verified_by", o.verify.Method, "resumed_bytes", o.resumed, "transferred_bytes", o.transferred.Load(),
		"objects_done", done)
	return nil
}

type sums struct {
	md5, sha256, multipart, checksum string
	byAlgo                           map[string]string
}

func hashFile(f *os.File, size int64, vp verifyPlan, buf []byte) (sums, error) {
	hMD5, hSHA256 := md5.New(), sha256.New()
	var extra hash.Hash
	algo := strings.TrimPrefix(vp.Method, "manifest-")
	switch algo {
	case "sha1":
		extra = sha1.New()
	case "sha512":
		extra = sha512.New()
	}
	var checksum hash.Hash
	if vp.Checksum.IsSet() {
		checksum = vp.Checksum.Hasher()
	}
	var partMD5s []byte
	var partHash hash.Hash
	var partLeft int64
	if vp.Method == "etag-multipart" {
		partHash, partLeft = md5.New(), vp.PartSize
	}
	var off int64
	for off < size {
		n, err := f.ReadAt(buf[:min(int64(len(buf)), size-off)], off)
		if n == 0 && err != nil {
			return sums{}, err
		}
		chunk := buf[:n]
		hMD5.Write(chunk)
		hSHA256.Write(chunk)
		if extra != nil {
			extra.Write(chunk)
		}
		if checksum != nil {
			checksum.Write(chunk)
		}
		for partHash != nil && len(chunk) > 0 {
			k := min(int64(len(chunk)), partLeft)
			partHash.Write(chunk[:k])
			chunk, partLeft = chunk[k:], partLeft-k
			if partLeft == 0 {
				partMD5s = partHash.Sum(partMD5s)
				partHash.Reset()
				partLeft = vp.PartSize
			}
		}
		off += int64(n)
	}
	s := sums{md5: hex.EncodeToString(hMD5.Sum(nil)), sha256: hex.EncodeToString(hSHA256.Sum(nil))}
	s.byAlgo = map[string]string{"md5": s.md5, "sha256": s.sha256}
	if extra != nil {
		s.byAlgo[algo] = hex.EncodeToString(extra.Sum(nil))
	}
	if checksum != nil {
		s.checksum = hex.EncodeToString(checksum.Sum(nil))
	}
	if partHash != nil {
		if partLeft != vp.PartSize {
			partMD5s = partHash.Sum(partMD5s)
		}
		sum := md5.Sum(partMD5s)
		s.multipart = fmt.Sprintf("%s-%d", hex.EncodeToString(sum[:]), len(partMD5s)/md5.Size)
	}
	return s, nil
}

func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

func (r *runner) startTicker(total, objects int64) func() {
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(r.opts.ProgressInterval)
		defer t.Stop()
		last, lastT := r.bytes.Load(), time.Now()
		for {
			select {
			case <-stop:
				return
			case now := <-t.C:
				cur := r.bytes.Load()
				rate := float64(cur-last) / now.Sub(lastT).Seconds()
				r.metrics.Rate.Set(rate)
				fields := []any{"bytes_done", cur, "bytes_total", total, "objects_done", r.objDone.Load(),
					"objects_total", objects, "rate_bytes_per_second", int64(rate)}
				if rate > 0 {
					fields = append(fields, "eta_seconds", int64(float64(total-cur)/rate))
				}
				r.prog.Emit(EventProgress, fields...)
				last, lastT = cur, now
			}
		}
	}()
	return func() { close(stop); <-done }
}

func (r *runner) report(snap *source.Snapshot, objs []*object, started time.Time) *Report {
	finished := time.Now().UTC()
	spec := r.opts.Source
	rep := &Report{
		Tool: "rdf-bulkload-fetch", Version: r.opts.Version,
		Source: ReportSource{Endpoint: spec.SafeEndpoint(), Bucket: spec.Bucket, Prefix: spec.Prefix, Keys: spec.Keys,
			Include: spec.Include, Marker: snap.MarkerKey, Manifest: snap.ManifestKey, ManifestSHA256: snap.ManifestDigest},
		Revision: snap.Revision, BuildRevision: r.opts.BuildRevision, Destination: r.opts.Dest, StartedAt: started, FinishedAt: finished,
		DurationSeconds: finished.Sub(started).Seconds(),
	}
	for _, o := range objs {
		ro := ReportObject{Key: o.src.Key, Path: o.rel, Size: o.src.Size, ETag: o.src.ETag, SHA256: o.rec.SHA256,
			MD5: o.rec.MD5, VerifiedBy: o.rec.VerifiedBy, Skipped: o.skipped}
		if o.src.Expected != nil {
			d := *o.src.Expected
			ro.Expected = &d
		}
		if !o.skipped {
			ro.ResumedBytes = o.resumed
			ro.TransferredBytes = o.transferred.Load()
		}
		rep.Objects = append(rep.Objects, ro)
		rep.Totals.Objects++
		rep.Totals.Bytes += o.src.Size
		rep.Totals.TransferredBytes += ro.TransferredBytes
		rep.Totals.ResumedBytes += ro.ResumedBytes
		if o.skipped {
			rep.Totals.SkippedObjects++
		}
	}
	sort.Slice(rep.Objects, func(i, j int) bool { return rep.Objects[i].Key < rep.Objects[j].Key })
	rep.Totals.Retries = r.retries.Load()
	if rep.DurationSeconds > 0 {
		rep.BytesPerSecond = float64(rep.Totals.TransferredBytes) / rep.DurationSeconds
	}
	return rep
}
