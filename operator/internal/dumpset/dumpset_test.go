package dumpset

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
)

func bulkLoad() *rdfv1.BulkLoad {
	return &rdfv1.BulkLoad{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "x"},
		Spec: rdfv1.BulkLoadSpec{
			Source:   rdfv1.SourceSpec{Endpoint: "http://minio:9000", Bucket: "dumps", Prefix: "wikidata/2026-11-20/"},
			Database: rdfv1.DatabaseSpec{Size: resource.MustParse("10Gi"), ScratchSize: ptr.To(resource.MustParse("20Gi"))},
			Snapshot: rdfv1.SnapshotSpec{Keep: 2},
			Serving:  &rdfv1.ServingSpec{Name: "fuseki", VolumeName: "databases"},
			Retry:    rdfv1.RetrySpec{BuildAttempts: 3},
		},
	}
}

func TestManualRevisionDigestsTheBuildInputsOnly(t *testing.T) {
	a := bulkLoad()
	b := a.DeepCopy()
	if Manual(a) != Manual(b) {
		t.Fatal("same build inputs, same revision")
	}
	b.Spec.Snapshot.Keep, b.Spec.Serving, b.Spec.Retry.BuildAttempts = 5, nil, 9
	if Manual(a) != Manual(b) {
		t.Error("retention, serving and retry settings are not build inputs")
	}
	// The scratch volume's size leaves the database as it is: a failed build resumes on
	// its volumes after it grows, instead of starting over under a new revision.
	b.Spec.Database.ScratchSize = ptr.To(resource.MustParse("99Gi"))
	if Manual(a) != Manual(b) {
		t.Error("scratchSize is not a build input")
	}
	// Nor does skipping the loader's plan check: set after a refusal, the same revision
	// is tried again.
	b.Spec.Loader.SkipPlanCheck = true
	if Manual(a) != Manual(b) {
		t.Error("skipPlanCheck is not a build input")
	}
	for name, change := range map[string]func(*rdfv1.BulkLoad){
		"prefix":  func(bl *rdfv1.BulkLoad) { bl.Spec.Source.Prefix = "other/" },
		"threads": func(bl *rdfv1.BulkLoad) { bl.Spec.Loader.Threads = 3 },
		"size":    func(bl *rdfv1.BulkLoad) { bl.Spec.Database.Size = resource.MustParse("11Gi") },
		"rebuild": func(bl *rdfv1.BulkLoad) { bl.Spec.Trigger.Rebuild = "x" },
		"image":   func(bl *rdfv1.BulkLoad) { bl.Spec.Loader.Image = "loader:2" },
		"jena":    func(bl *rdfv1.BulkLoad) { bl.Spec.Database.Jena = "6" },
	} {
		c := a.DeepCopy()
		change(c)
		if Manual(c) == Manual(a) {
			t.Errorf("%s changes what is built: new revision expected", name)
		}
	}
}

// trigger.rebuild makes a new revision of the same inputs; WithoutRebuild finds those
// inputs again, in both modes.
func TestRebuildTokenChangesTheRevisionNotWhatIsBuilt(t *testing.T) {
	a := bulkLoad()
	b := a.DeepCopy()
	b.Spec.Trigger.Rebuild = "2026-11-28"
	if Manual(a).ID == Manual(b).ID || WithoutRebuild(Manual(a).ID) != WithoutRebuild(Manual(b).ID) {
		t.Errorf("manual: %s and %s", Manual(a).ID, Manual(b).ID)
	}
	listed := Revision{ID: "sha256:abc", Source: true}
	rebuilt := listed.WithRebuild("2026-11-28")
	if rebuilt.ID == listed.ID || rebuilt.Listing != "sha256:abc" || WithoutRebuild(rebuilt.ID) != "sha256:abc" {
		t.Errorf("watched: %+v", rebuilt)
	}
	if same := listed.WithRebuild(""); same.ID != listed.ID {
		t.Errorf("no token, no change: %+v", same)
	}
	if none := (Revision{Source: true}).WithRebuild("x"); none.ID != "" {
		t.Errorf("no dump set yet stays without an ID: %+v", none)
	}
}

func TestAccessNeverPrintsTheSecret(t *testing.T) {
	a := Access{AccessKeyID: "AKIA1", SecretAccessKey: "s3cr3t"}
	for _, s := range []string{a.String(), a.GoString()} {
		if s == "" || strings.Contains(s, "s3cr3t") {
			t.Errorf("%q", s)
		}
	}
}
