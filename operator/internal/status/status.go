// Package status holds the pure functions that turn what a reconcile observed into
// the BulkLoad's phase, kstatus conditions (Ready, Reconciling, Stalled) and figures.
package status

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
)

// Condition reasons (CamelCase, stable: alerts and GitOps tools match on them).
const (
	ReasonBuilt            = "Built"
	ReasonBuilding         = "Building"
	ReasonIdle             = "Idle"
	ReasonWaitingForSource = "WaitingForSource"
	ReasonRetryScheduled   = "RetryScheduled"
	ReasonInvalidSpec      = "InvalidSpec"
	ReasonBuildFailed      = "BuildFailed"
	ReasonServingPending   = "ServingPending"
	// ReasonRollingOut: the serving workload mounts the database it should serve but
	// its rollout onto it is not complete (pods not updated or not available yet).
	ReasonRollingOut = "RollingOut"
	// ReasonHandoffDrifted: the serving workload mounted something else than the
	// handed-off database (a helm upgrade, a GitOps sync, an edit); the operator has
	// put the database back and the workload rolls out onto it again.
	ReasonHandoffDrifted = "HandoffDrifted"
	// ReasonServingReplicasUnsupported: the serving workload runs more than one replica
	// on the one restored volume, which a TDB2 database does not allow.
	ReasonServingReplicasUnsupported = "ServingReplicasUnsupported"
	// ReasonServingVolumeNotFound: the serving workload has no volume spec.serving.volumeName.
	ReasonServingVolumeNotFound = "ServingVolumeNotFound"
	// ReasonServingSnapshotNotFound: spec.serving.snapshotName (or the current
	// snapshot) is not a ready snapshot of this BulkLoad.
	ReasonServingSnapshotNotFound = "ServingSnapshotNotFound"
	// ReasonDependencyMissing: an API the operator needs (Argo Workflows, VolumeSnapshots) is not installed.
	ReasonDependencyMissing = "DependencyMissing"
	// ReasonSnapshotUnsupported: the build volumes' StorageClass cannot be snapshotted (no
	// CSI driver behind it, no VolumeSnapshotClass for its driver, or the named class is of
	// another driver), found before anything is created; the message names what is missing.
	ReasonSnapshotUnsupported = "SnapshotUnsupported"
	// ReasonStepPodPending: a build step's pod has not started for a while (unschedulable,
	// image pull failing...); the message carries what Kubernetes says about it.
	ReasonStepPodPending = "StepPodPending"
	// ReasonWorkflowNotStarted: no Argo workflow-controller has picked up the build's
	// Workflow within the operator's --workflow-start-timeout (none manages the namespace,
	// an instanceID mismatch, the controller down); the build goes on once one does.
	ReasonWorkflowNotStarted = "WorkflowNotStarted"
	// ReasonNodeLost: a build attempt ended because the node of its step pod, or of its
	// node-local volumes, was NotReady or gone past spec.build.nodeLossGracePeriod; the
	// next attempt runs elsewhere (on new volumes where the old ones were node-local).
	ReasonNodeLost = "NodeLost"
	// ReasonServingNodeLost: the served volume is node-local and its node is NotReady or
	// gone past spec.build.nodeLossGracePeriod; spec.serving.onNodeLoss says what follows.
	ReasonServingNodeLost = "ServingNodeLost"
	// ReasonScratchNotExpandable: spec.database.scratchSize grew but the kept scratch
	// volume's StorageClass does not allow volume expansion.
	ReasonScratchNotExpandable = "ScratchNotExpandable"
)

// SetProgressing records a build under way in the given phase: Reconciling=True,
// Stalled=False, Ready=False (the spec's database does not exist yet).
func SetProgressing(st *rdfv1.BulkLoadStatus, generation int64, phase rdfv1.Phase, reason, message string) {
	st.Phase = phase
	set(st, generation, rdfv1.ConditionReconciling, metav1.ConditionTrue, reason, message)
	set(st, generation, rdfv1.ConditionStalled, metav1.ConditionFalse, reason, "")
	set(st, generation, rdfv1.ConditionReady, metav1.ConditionFalse, reason, message)
}

// SetReady records that the database of the wanted revision is built and handed off.
func SetReady(st *rdfv1.BulkLoadStatus, generation int64, message string) {
	st.Phase = rdfv1.PhaseReady
	set(st, generation, rdfv1.ConditionReady, metav1.ConditionTrue, ReasonBuilt, message)
	set(st, generation, rdfv1.ConditionReconciling, metav1.ConditionFalse, ReasonBuilt, "")
	set(st, generation, rdfv1.ConditionStalled, metav1.ConditionFalse, ReasonBuilt, "")
}

// SetStalled records that nothing more happens without a change to the spec or the
// source: Stalled=True with the reason, Reconciling=False, phase Failed.
func SetStalled(st *rdfv1.BulkLoadStatus, generation int64, reason, message string) {
	st.Phase = rdfv1.PhaseFailed
	set(st, generation, rdfv1.ConditionStalled, metav1.ConditionTrue, reason, message)
	set(st, generation, rdfv1.ConditionReconciling, metav1.ConditionFalse, reason, "")
	set(st, generation, rdfv1.ConditionReady, metav1.ConditionFalse, reason, message)
}

// SetDependencyMissing records that the cluster lacks an API the operator needs:
// Stalled=True until it is installed (the operator checks again by itself),
// Reconciling=False, Ready=False. The phase stays (Pending when there is none yet):
// nothing was built and nothing failed.
func SetDependencyMissing(st *rdfv1.BulkLoadStatus, generation int64, message string) {
	if st.Phase == "" || st.Phase == rdfv1.PhaseReady {
		st.Phase = rdfv1.PhasePending
	}
	set(st, generation, rdfv1.ConditionStalled, metav1.ConditionTrue, ReasonDependencyMissing, message)
	set(st, generation, rdfv1.ConditionReconciling, metav1.ConditionFalse, ReasonDependencyMissing, "")
	set(st, generation, rdfv1.ConditionReady, metav1.ConditionFalse, ReasonDependencyMissing, message)
}

func set(st *rdfv1.BulkLoadStatus, generation int64, typ string, s metav1.ConditionStatus, reason, message string) {
	if len(message) > 1024 {
		message = message[:1021] + "..."
	}
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{
		Type: typ, Status: s, Reason: reason, Message: message, ObservedGeneration: generation,
	})
}

// IsTrue says whether the condition is present and True.
func IsTrue(st *rdfv1.BulkLoadStatus, typ string) bool {
	return meta.IsStatusConditionTrue(st.Conditions, typ)
}

// LoaderSummary is what the operator reads of the loader's summary (`--summary`, `Summary`
// in loader-image/crates/pipeline/src/report.rs), the load step's output parameter.
type LoaderSummary struct {
	Triples         int64   `json:"triples"`
	Quads           int64   `json:"quads"`
	Rejects         int64   `json:"rejects"`
	DurationSeconds float64 `json:"duration_seconds"`
	DatabaseBytes   int64   `json:"database_bytes"`
	ResumedAfter    string  `json:"resumed_after"`
	Report          string  `json:"report"`
}

// LoadFigures parses the loader's summary into the status figures; throughput
// counts triples and quads per second of the load step.
func LoadFigures(summary string) (*rdfv1.LoadFigures, error) {
	var r LoaderSummary
	if err := json.Unmarshal([]byte(summary), &r); err != nil {
		return nil, fmt.Errorf("cannot parse the loader's summary: %w", err)
	}
	if r.Triples < 0 || r.Quads < 0 || r.Rejects < 0 || r.DatabaseBytes < 0 ||
		r.DurationSeconds < 0 || math.IsNaN(r.DurationSeconds) || math.IsInf(r.DurationSeconds, 0) {
		return nil, fmt.Errorf("the loader's summary has negative or non-finite figures")
	}
	f := &rdfv1.LoadFigures{
		Triples:       r.Triples,
		Quads:         r.Quads,
		Rejects:       r.Rejects,
		Duration:      metav1.Duration{Duration: time.Duration(r.DurationSeconds * float64(time.Second)).Round(time.Millisecond)},
		DatabaseBytes: r.DatabaseBytes,
		ResumedAfter:  r.ResumedAfter,
		Report:        r.Report,
	}
	if r.DurationSeconds > 0 {
		f.TriplesPerSecond = int64(math.Round(float64(r.Triples+r.Quads) / r.DurationSeconds))
	}
	return f, nil
}

// PushSnapshot puts a new snapshot at the head of the history (replacing an entry
// of the same name) and keeps at most keep entries.
func PushSnapshot(history []rdfv1.SnapshotRecord, rec rdfv1.SnapshotRecord, keep int) []rdfv1.SnapshotRecord {
	out := []rdfv1.SnapshotRecord{rec}
	for _, h := range history {
		if h.Name != rec.Name {
			out = append(out, h)
		}
	}
	if keep > 0 && len(out) > keep {
		out = out[:keep]
	}
	return out
}

// Transition describes a change worth an event.
type Transition struct {
	From, To rdfv1.Phase
}

// PhaseTransition reports whether the phase changed between two statuses.
func PhaseTransition(before, after *rdfv1.BulkLoadStatus) (Transition, bool) {
	if before.Phase == after.Phase {
		return Transition{}, false
	}
	return Transition{From: before.Phase, To: after.Phase}, true
}
