// Package status holds the pure functions that turn what a reconcile observed into
// the BulkLoad's phase, conditions (kstatus' Ready, Reconciling, Stalled, and Building) and figures.
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
	// ReasonCRDOutdated: the installed BulkLoad CRD lacks fields of the operator's API (an
	// operator upgraded without its CRD); nothing is built until the CRD is upgraded.
	ReasonCRDOutdated = "CRDOutdated"
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
	// ReasonSourceAccessDenied: a watched source refuses the operator's listing (wrong or
	// expired credentials, access denied); Stalled until the credentials are fixed (the
	// source is listed again every trigger.interval, and at once after a spec change).
	ReasonSourceAccessDenied = "SourceAccessDenied"
	// ReasonSourceMisconfigured: a watched source cannot be listed as the spec names it (no
	// such bucket, an endpoint whose TLS certificate is not trusted, a credentials Secret
	// that does not exist or lacks a key); Stalled until the spec or the Secret is fixed.
	ReasonSourceMisconfigured = "SourceMisconfigured"
	// ReasonSourceUnavailable: the last listing of a watched source failed in a way that may
	// pass (the network, the endpoint's 5xx, throttling) (status.source.reason; not Stalled).
	ReasonSourceUnavailable = "SourceUnavailable"
	// ReasonSnapshotNameTaken: the build's snapshot name is held by an earlier BulkLoad's
	// retained snapshot.
	ReasonSnapshotNameTaken = "SnapshotNameTaken"
	// ReasonSnapshotTimeout: the snapshot was not readyToUse within snapshot.readyTimeout.
	ReasonSnapshotTimeout = "SnapshotTimeout"
	// ReasonNodesUnavailable: the workflow failed and its nodes (steps, exit codes) cannot be read.
	ReasonNodesUnavailable = "WorkflowNodesUnavailable"
	// ReasonDeadlineExceeded: the attempt ran past spec.build.deadline.
	ReasonDeadlineExceeded = "DeadlineExceeded"
	// ReasonPodRejected: the API server refused to create a step's pod (admission).
	ReasonPodRejected = "PodRejected"
)

// Verdict is what one reconcile concluded; the phase and the conditions follow from it
// (Apply). Two things are judged apart: the work towards what the spec asks (the phase,
// Reconciling, Stalled, Building) and what is served (Ready). A build of a newer dump set
// (or a trigger.rebuild) while the spec's database is served is work that leaves Ready
// True and Reconciling False, so that GitOps tools (kstatus: Current) do not wait out a
// build of hours every time a dump is published.
type Verdict struct {
	// Phase, Reason and Message describe the work: the build step under way, what it waits
	// for, why it cannot go on (Stalled), or Built when nothing is left to do.
	Phase   rdfv1.Phase
	Reason  string
	Message string
	// Stalled: nothing more happens without a change to the spec, the source, a Secret or
	// the cluster.
	Stalled bool
	// Building: a build of a revision is under way (an attempt, or the backoff before the next).
	Building bool
	// Serving: the database the spec asks for is served (ServingMessage says which). When
	// it is not, ServingReason and ServingMessage say why, unless the work does.
	Serving        bool
	ServingReason  string
	ServingMessage string
}

// Apply records the verdict: the phase and all four conditions, whatever they said before.
func Apply(st *rdfv1.BulkLoadStatus, generation int64, v Verdict) {
	st.Phase = v.Phase
	if v.Stalled {
		set(st, generation, rdfv1.ConditionStalled, metav1.ConditionTrue, v.Reason, v.Message)
	} else {
		set(st, generation, rdfv1.ConditionStalled, metav1.ConditionFalse, v.Reason, "")
	}
	if v.Serving {
		set(st, generation, rdfv1.ConditionReady, metav1.ConditionTrue, ReasonBuilt, v.ServingMessage)
	} else {
		set(st, generation, rdfv1.ConditionReady, metav1.ConditionFalse, orDefault(v.ServingReason, v.Reason), orDefault(v.ServingMessage, v.Message))
	}
	if !v.Stalled && !v.Serving {
		set(st, generation, rdfv1.ConditionReconciling, metav1.ConditionTrue, v.Reason, v.Message)
	} else {
		set(st, generation, rdfv1.ConditionReconciling, metav1.ConditionFalse, v.Reason, "")
	}
	if v.Building && !v.Stalled {
		set(st, generation, rdfv1.ConditionBuilding, metav1.ConditionTrue, v.Reason, v.Message)
	} else {
		set(st, generation, rdfv1.ConditionBuilding, metav1.ConditionFalse, ReasonIdle, "")
	}
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
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
