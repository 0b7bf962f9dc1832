package sourcewatch_test

import (
	"context"
	"strings"
	"testing"
	"time"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/dumpset"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/sourcewatch"
)

// The watcher sees the same dump set the fetch step is told to fetch.
func TestSpecForMapsTheSource(t *testing.T) {
	bl := &rdfv1.BulkLoad{Spec: rdfv1.BulkLoadSpec{Source: rdfv1.SourceSpec{
		Endpoint: "https://s3.example.org", Bucket: "dumps", Prefix: "uniprot/*/", Keys: []string{"extra/x.nt.gz"},
		Include: []string{"*.rdf.xz"}, InsecureSkipTLSVerify: true,
		Completion: &rdfv1.CompletionSpec{Manifest: &rdfv1.ManifestSpec{Key: "uniprot/*/RELEASE.sha256"}},
	}}}
	s := sourcewatch.SpecFor(bl, dumpset.Access{CABundle: []byte("PEM")})
	if s.Endpoint != "https://s3.example.org" || s.Bucket != "dumps" || s.Prefix != "uniprot/*/" || s.Manifest != "uniprot/*/RELEASE.sha256" ||
		s.Marker != "" || len(s.Keys) != 1 || s.Include[0] != "*.rdf.xz" || !s.Insecure || string(s.CAPEM) != "PEM" {
		t.Fatalf("spec %+v", s)
	}
	bl.Spec.Source.Completion = &rdfv1.CompletionSpec{Marker: "uniprot/*/DONE"}
	if s := sourcewatch.SpecFor(bl, dumpset.Access{}); s.Marker != "uniprot/*/DONE" || s.Manifest != "" {
		t.Fatalf("marker spec %+v", s)
	}
}

// A spec the watcher cannot use is an error (a condition), not a revision.
func TestResolveRejectsAnUnusableSpec(t *testing.T) {
	bl := &rdfv1.BulkLoad{Spec: rdfv1.BulkLoadSpec{Source: rdfv1.SourceSpec{Endpoint: "https://s3.example.org", Bucket: "dumps", Prefix: "p/"}}}
	rev, err := sourcewatch.New().Resolve(context.Background(), bl, dumpset.Access{}, dumpset.Settle{}, time.Now())
	if err == nil || rev.ID != "" || !strings.Contains(err.Error(), "marker") {
		t.Fatalf("revision %+v, error %v", rev, err)
	}
}
