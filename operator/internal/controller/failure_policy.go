package controller

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/specs"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/status"
)

// AnnotationSpecDigest on a build Workflow or VolumeSnapshot is the specDigest of the
// spec it was made from (what a failure of it is compared with).
const AnnotationSpecDigest = "rdf.bulkload.io/spec-digest"

// failureScope is what a failed step depends on beyond the revision: the spec parts
// whose change may fix it (and so starts a new attempt of the same revision).
type failureScope int

const (
	// scopeNone: no spec change fixes it; only a new revision (trigger.rebuild) builds again.
	scopeNone failureScope = iota
	// scopeWorkflow: a step of the build workflow (fetch, load, validate) or its pods.
	scopeWorkflow
	// scopeSnapshot: the VolumeSnapshot of the built database.
	scopeSnapshot
)

// scopeOf is the scope of a failure.
func scopeOf(f *rdfv1.BuildFailure) failureScope {
	switch {
	case f.Reason == status.ReasonSnapshotNameTaken:
		return scopeNone
	case f.Step == specs.StepSnapshot:
		return scopeSnapshot
	default:
		return scopeWorkflow
	}
}

// specDigest digests the spec parts a failure of the scope depends on. For the
// workflow: the build settings an attempt runs with (placement, deadline, service
// account, retries) and, since in watch mode they are not part of the revision, the
// source, database, loader, fetch and validate settings. For the snapshot: its class
// and readyTimeout. Retention, serving and trigger settings are in neither.
func specDigest(bl *rdfv1.BulkLoad, scope failureScope) string {
	var parts any
	spec := &bl.Spec
	switch scope {
	case scopeWorkflow:
		parts = struct {
			Source             rdfv1.SourceSpec   `json:"source"`
			Database           rdfv1.DatabaseSpec `json:"database"`
			Loader             rdfv1.LoaderSpec   `json:"loader"`
			Fetch              rdfv1.FetchSpec    `json:"fetch"`
			Validate           rdfv1.ValidateSpec `json:"validate"`
			Build              rdfv1.BuildSpec    `json:"build"`
			ServiceAccountName string             `json:"serviceAccountName"`
			RetryLimit         int32              `json:"retryLimit"`
			BuildAttempts      int32              `json:"buildAttempts"`
		}{spec.Source, spec.Database, spec.Loader, spec.Fetch, spec.Validate, spec.Build, spec.ServiceAccountName,
			spec.Retry.Limit, spec.Retry.BuildAttempts}
	case scopeSnapshot:
		parts = struct {
			Class        string          `json:"class"`
			ReadyTimeout metav1.Duration `json:"readyTimeout"`
		}{spec.Snapshot.VolumeSnapshotClassName, spec.Snapshot.ReadyTimeout}
	default:
		return ""
	}
	// Marshalling plain structs cannot fail.
	data, _ := json.Marshal(parts)
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:16])
}

// fixedBySpec says whether the spec now differs, in what the failure depends on, from
// the spec the failed attempt ran with.
func fixedBySpec(bl *rdfv1.BulkLoad, f *rdfv1.BuildFailure) bool {
	return f != nil && f.SpecDigest != "" && f.SpecDigest != specDigest(bl, scopeOf(f))
}

// fixHint says which spec changes start a new attempt after the failure.
func fixHint(f *rdfv1.BuildFailure) string {
	switch scopeOf(f) {
	case scopeWorkflow:
		return "a change to spec.build, serviceAccountName, retry.limit, retry.buildAttempts, or to the source, database, loader, fetch or validate settings that leaves the revision as it is (database.scratchSize; in watch mode any of them), starts a new attempt of this revision; any other change to them, or to trigger.rebuild, builds a new revision"
	case scopeSnapshot:
		return "a change to spec.snapshot.volumeSnapshotClassName or snapshot.readyTimeout takes the snapshot again (no rebuild); trigger.rebuild builds a new revision"
	default:
		return "changing trigger.rebuild builds a new revision"
	}
}

// keepsWork says whether a final failure leaves work on the build volumes that an
// attempt started after a fix resumes: the loader's checkpoint after a full disk
// (exit 5), a deadline (SIGTERM checkpoints), an interruption or a lost pod with no
// attempts left; the database after a snapshot timeout; volumes a larger scratchSize
// could not grow. Not after bad input, a usage or internal error (the loader removes
// its work, and rerunning fails the same way), a refused pod, or a lost node (its
// node-local volumes are gone with it).
func keepsWork(f *rdfv1.BuildFailure) bool {
	switch f.Reason {
	case status.ReasonDeadlineExceeded, status.ReasonSnapshotTimeout, status.ReasonNodesUnavailable, reasonPodError, status.ReasonScratchNotExpandable:
		return true
	case status.ReasonNodeLost, status.ReasonPodRejected, status.ReasonSnapshotNameTaken:
		return false
	}
	if f.ExitCode == nil {
		return false
	}
	i := slices.IndexFunc(specs.ExitCodeTable, func(r specs.ExitCodeRow) bool { return r.Code == *f.ExitCode })
	if i < 0 {
		return false
	}
	row := specs.ExitCodeTable[i]
	return row.Code == exitResources || len(row.RetriedBy) > 0
}

// exitResources is exit code 5 (docs/exit-codes.md): out of memory budget or disk. The
// loader keeps its checkpoint; a larger scratchSize or memoryBudget lets it resume.
const exitResources = 5
