package source_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/miniotest"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/source"
)

// fakeClock stands in for the wall clock so settle periods pass without waiting.
type fakeClock struct{ t time.Time }

func (c *fakeClock) Now() time.Time          { return c.t }
func (c *fakeClock) Advance(d time.Duration) { c.t = c.t.Add(d) }

func TestWatcherMarkerSettleAndNewRevision(t *testing.T) {
	srv := miniotest.Start(t)
	srv.MakeBucket("dumps")
	clock := &fakeClock{t: time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC)}
	w := source.NewWatcher()
	var remembered source.Settle
	creds := source.Credentials{AccessKeyID: srv.AccessKey, SecretAccessKey: srv.SecretKey}
	spec := source.Spec{Endpoint: srv.Endpoint(), Bucket: "dumps", Prefix: "wikidata/20261120/",
		Marker: "wikidata/20261120/_SUCCESS", Include: []string{"*.nt.gz"}}
	const settle = 2 * time.Minute
	observe := func() source.Observation {
		t.Helper()
		obs, next, err := w.Observe(context.Background(), spec, creds, settle, remembered, clock.Now())
		remembered = next
		if err != nil {
			t.Fatal(err)
		}
		return obs
	}

	srv.Put("dumps", "wikidata/20261120/a.nt.gz", []byte("a"), minio.PutObjectOptions{})
	srv.Put("dumps", "wikidata/20261120/b.nt.gz", []byte("bb"), minio.PutObjectOptions{})
	if obs := observe(); obs.Revision != "" || obs.Reason != source.ReasonIncomplete || !strings.Contains(obs.Message, "_SUCCESS") {
		t.Fatalf("without the marker: %+v", obs)
	}
	clock.Advance(time.Hour)
	if obs := observe(); obs.Revision != "" {
		t.Fatalf("a set without its marker became buildable after an hour: %+v", obs)
	}

	srv.Put("dumps", "wikidata/20261120/_SUCCESS", nil, minio.PutObjectOptions{})
	if obs := observe(); obs.Revision != "" || obs.Reason != source.ReasonSettling {
		t.Fatalf("right after the marker: %+v", obs)
	}
	clock.Advance(settle)
	obs := observe()
	if obs.Reason != source.ReasonSettled || obs.Revision == "" {
		t.Fatalf("after the settle period: %+v", obs)
	}
	r1 := obs.Revision
	if want := source.ListingRevision(obs.Snapshot.Objects); r1 != want || len(obs.Snapshot.Objects) != 2 {
		t.Fatalf("revision %s over %d objects, want %s over a.nt.gz and b.nt.gz", r1, len(obs.Snapshot.Objects), want)
	}
	clock.Advance(time.Minute)
	if obs := observe(); obs.Revision != r1 {
		t.Fatalf("unchanged listing gave %q, want %s", obs.Revision, r1)
	}

	// A late upload after the marker: the listing is not quiet, so no revision until it settles
	// again, and then a different one.
	srv.Put("dumps", "wikidata/20261120/c.nt.gz", []byte("ccc"), minio.PutObjectOptions{})
	if obs := observe(); obs.Revision != "" || obs.Reason != source.ReasonSettling {
		t.Fatalf("listing changed under a complete set: %+v", obs)
	}
	clock.Advance(settle)
	if obs := observe(); obs.Revision == "" || obs.Revision == r1 {
		t.Fatalf("after the late upload settled: %q (r1 %s)", obs.Revision, r1)
	}
}

// Dated sets behind a manifest: a new dated directory becomes a new revision when the
// publisher replaces the manifest, and only then.
func TestWatcherManifestDatedSets(t *testing.T) {
	srv := miniotest.Start(t)
	srv.MakeBucket("dumps")
	clock := &fakeClock{t: time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC)}
	w := source.NewWatcher()
	var remembered source.Settle
	creds := source.Credentials{AccessKeyID: srv.AccessKey, SecretAccessKey: srv.SecretKey}
	spec := source.Spec{Endpoint: srv.Endpoint(), Bucket: "dumps", Prefix: "uniprot/", Manifest: "uniprot/RELEASE.sha256"}
	observe := func() source.Observation {
		t.Helper()
		obs, next, err := w.Observe(context.Background(), spec, creds, time.Minute, remembered, clock.Now())
		remembered = next
		if err != nil {
			t.Fatal(err)
		}
		return obs
	}
	publish := func(date string, files map[string]string) []byte {
		var m bytes.Buffer
		for name, content := range files {
			srv.Put("dumps", "uniprot/"+date+"/"+name, []byte(content), minio.PutObjectOptions{})
			fmt.Fprintf(&m, "%x  %s/%s\n", sha256.Sum256([]byte(content)), date, name)
		}
		return m.Bytes()
	}
	m1 := publish("2026_04", map[string]string{"core.nt.gz": "one", "extra.nt.gz": "two"})
	if obs := observe(); obs.Reason != source.ReasonIncomplete || !strings.Contains(obs.Message, "manifest") {
		t.Fatalf("without the manifest: %+v", obs)
	}
	srv.Put("dumps", "uniprot/RELEASE.sha256", m1, minio.PutObjectOptions{})
	observe()
	clock.Advance(time.Minute)
	obs := observe()
	if want := fmt.Sprintf("sha256:%x", sha256.Sum256(m1)); obs.Revision != want {
		t.Fatalf("revision %q, want the manifest digest %s", obs.Revision, want)
	}
	r1 := obs.Revision

	// The next release is uploaded: until the manifest names it, the revision stays.
	m2 := publish("2026_05", map[string]string{"core.nt.gz": "one'", "extra.nt.gz": "two'"})
	observe()
	clock.Advance(time.Minute)
	if obs := observe(); obs.Revision != r1 {
		t.Fatalf("revision changed before the manifest did: %q", obs.Revision)
	}
	srv.Put("dumps", "uniprot/RELEASE.sha256", m2, minio.PutObjectOptions{})
	observe()
	clock.Advance(time.Minute)
	obs = observe()
	if obs.Revision == r1 || obs.Revision != fmt.Sprintf("sha256:%x", sha256.Sum256(m2)) {
		t.Fatalf("new release: revision %q", obs.Revision)
	}
	for _, o := range obs.Snapshot.Objects {
		if !strings.HasPrefix(o.Key, "uniprot/2026_05/") || o.Expected == nil {
			t.Fatalf("the new revision selects %s (expected digest %v)", o.Key, o.Expected)
		}
	}
}

// A listing error is an error (for a condition), never a revision, and never shows the secret.
func TestWatcherListingErrors(t *testing.T) {
	srv := miniotest.Start(t)
	srv.MakeBucket("dumps")
	w := source.NewWatcher()
	spec := source.Spec{Endpoint: srv.Endpoint(), Bucket: "dumps", Prefix: "x/", Marker: "x/_SUCCESS"}
	bad := source.Credentials{AccessKeyID: srv.AccessKey, SecretAccessKey: "not-the-" + srv.SecretKey}
	_, _, err := w.Observe(context.Background(), spec, bad, 0, source.Settle{}, time.Now())
	var oe *source.ObserveError
	if !errors.As(err, &oe) || oe.Class != source.Auth {
		t.Fatalf("wrong credentials: %v (%T)", err, err)
	}
	if strings.Contains(err.Error(), bad.SecretAccessKey) || strings.Contains(err.Error(), srv.SecretKey) {
		t.Fatalf("secret in %q", err)
	}
	spec.Bucket = "no-such-bucket"
	good := source.Credentials{AccessKeyID: srv.AccessKey, SecretAccessKey: srv.SecretKey}
	if _, _, err := w.Observe(context.Background(), spec, good, 0, source.Settle{}, time.Now()); !errors.As(err, &oe) || oe.Class != source.Config {
		t.Fatalf("missing bucket: %v", err)
	}
	srv.Stop()
	spec.Bucket = "dumps"
	if _, _, err := w.Observe(context.Background(), spec, good, 0, source.Settle{}, time.Now()); !errors.As(err, &oe) || oe.Class != source.Transient {
		t.Fatalf("server down: %v", err)
	}
}

// Dated directories behind a "*" prefix: the newest directory with its marker is the dump set;
// a newer directory counts only once its own marker lands (then settles).
func TestWatcherDatedDirectories(t *testing.T) {
	srv := miniotest.Start(t)
	srv.MakeBucket("dumps")
	clock := &fakeClock{t: time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC)}
	w := source.NewWatcher()
	var remembered source.Settle
	creds := source.Credentials{AccessKeyID: srv.AccessKey, SecretAccessKey: srv.SecretKey}
	spec := source.Spec{Endpoint: srv.Endpoint(), Bucket: "dumps", Prefix: "wikidata/*/", Marker: "wikidata/*/_SUCCESS"}
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	observe := func() source.Observation {
		t.Helper()
		obs, next, err := w.Observe(context.Background(), spec, creds, time.Minute, remembered, clock.Now())
		remembered = next
		if err != nil {
			t.Fatal(err)
		}
		return obs
	}
	srv.Put("dumps", "wikidata/20261120/all.nt.gz", []byte("old"), minio.PutObjectOptions{})
	if obs := observe(); obs.Reason != source.ReasonIncomplete {
		t.Fatalf("no marker anywhere: %+v", obs)
	}
	srv.Put("dumps", "wikidata/20261120/_SUCCESS", nil, minio.PutObjectOptions{})
	observe()
	clock.Advance(time.Minute)
	obs := observe()
	if obs.Revision == "" || obs.Snapshot.Spec.Prefix != "wikidata/20261120/" {
		t.Fatalf("first dated set: %+v", obs)
	}
	r1 := obs.Revision

	// A newer dated set is being uploaded: without its marker it does not count.
	srv.Put("dumps", "wikidata/20261127/all.nt.gz", []byte("new"), minio.PutObjectOptions{})
	clock.Advance(time.Minute)
	if obs := observe(); obs.Revision != r1 {
		t.Fatalf("half-uploaded newer set changed the revision: %+v", obs)
	}
	srv.Put("dumps", "wikidata/20261127/_SUCCESS", nil, minio.PutObjectOptions{})
	if obs := observe(); obs.Revision != "" || obs.Reason != source.ReasonSettling {
		t.Fatalf("new dated set right after its marker: %+v", obs)
	}
	clock.Advance(time.Minute)
	obs = observe()
	if obs.Revision == "" || obs.Revision == r1 || obs.Snapshot.Spec.Prefix != "wikidata/20261127/" ||
		len(obs.Snapshot.Objects) != 1 || obs.Snapshot.Objects[0].Key != "wikidata/20261127/all.nt.gz" {
		t.Fatalf("new dated set: %+v", obs)
	}
}
