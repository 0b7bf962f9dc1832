package controller

import (
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/source"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/status"
)

// The manager's metrics endpoint (internal/managermetrics) asks the API server to
// authenticate each scraper's token and authorize its GET /metrics.
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// Build metrics, served on the manager's metrics endpoint next to controller-runtime's own.
// The gauges below the counters mirror the stored status (set from it at every status
// computation, so an operator restart restores them) for the chart's alerts and dashboard.
var (
	buildsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rdf_bulkload_builds_total",
		Help: "Finished builds by result (succeeded, failed).",
	}, []string{"namespace", "bulkload", "result"})

	buildDurationSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "rdf_bulkload_build_duration_seconds",
		Help:    "Time from a build's first workflow to its handoff or final failure.",
		Buckets: prometheus.ExponentialBuckets(60, 2, 12), // 1 min .. ~34 h
	}, []string{"namespace", "bulkload", "result"})

	triplesLoadedTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rdf_bulkload_triples_loaded_total",
		Help: "Triples and quads loaded by successful builds.",
	}, []string{"namespace", "bulkload"})

	handoffDriftCorrectionsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rdf_bulkload_handoff_drift_corrections_total",
		Help: "Times the serving workload no longer mounted the handed-off database (a helm upgrade, a GitOps sync, an edit) and the operator put it back.",
	}, []string{"namespace", "bulkload"})

	phaseInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "rdf_bulkload_phase",
		Help: "Current phase of each BulkLoad (1 for the current phase, 0 for the others).",
	}, []string{"namespace", "bulkload", "phase"})

	conditionInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "rdf_bulkload_condition",
		Help: "Conditions of each BulkLoad (Ready, Reconciling, Stalled) with their current reason: 1 when True, 0 otherwise.",
	}, []string{"namespace", "bulkload", "condition", "reason"})

	waitingInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "rdf_bulkload_waiting",
		Help: "What a BulkLoad waits for (1) or not (0): source = a complete dump set whose listing is still settling (watch mode), " +
			"snapshot = a built database's VolumeSnapshot to become ready, serving = the serving workload to hand the ready snapshot to, " +
			"rollout = the serving workload's pods to run on the handed-off volume.",
	}, []string{"namespace", "bulkload", "for"})

	triggerInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "rdf_bulkload_trigger_mode",
		Help: "Trigger mode of each BulkLoad (1 for the current mode: manual or watch, 0 for the other).",
	}, []string{"namespace", "bulkload", "mode"})

	lastSuccessTimestamp = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "rdf_bulkload_last_successful_build_timestamp_seconds",
		Help: "Unix time of the newest retained snapshot (the end of the last successful build); absent before the first.",
	}, []string{"namespace", "bulkload"})
)

var allPhases = []rdfv1.Phase{
	rdfv1.PhasePending, rdfv1.PhaseFetching, rdfv1.PhaseLoading, rdfv1.PhaseValidating,
	rdfv1.PhaseSnapshotting, rdfv1.PhaseHandingOff, rdfv1.PhaseReady, rdfv1.PhaseFailed,
}

// Values of rdf_bulkload_waiting's "for" label.
const (
	waitingSource   = "source"
	waitingSnapshot = "snapshot"
	waitingServing  = "serving"
	waitingRollout  = "rollout"
)

func init() {
	ctrlmetrics.Registry.MustRegister(buildsTotal, buildDurationSeconds, triplesLoadedTotal, handoffDriftCorrectionsTotal, phaseInfo,
		conditionInfo, waitingInfo, triggerInfo, lastSuccessTimestamp)
}

// recordStatus sets the status gauges from the computed status and what the reconcile found.
func recordStatus(s *scope) {
	bl := s.bl
	st := &bl.Status
	ns, name := bl.Namespace, bl.Name
	for _, p := range allPhases {
		phaseInfo.WithLabelValues(ns, name, string(p)).Set(boolValue(p == st.Phase))
	}
	// the reason is a label: drop the series of a previous reason
	conditionInfo.DeletePartialMatch(prometheus.Labels{"namespace": ns, "bulkload": name})
	for _, c := range st.Conditions {
		conditionInfo.WithLabelValues(ns, name, c.Type, c.Reason).Set(boolValue(c.Status == "True"))
	}
	handingOff := st.Phase == rdfv1.PhaseHandingOff
	ready := meta.FindStatusCondition(st.Conditions, rdfv1.ConditionReady)
	readyReason := ""
	if ready != nil {
		readyReason = ready.Reason
	}
	waitingInfo.WithLabelValues(ns, name, waitingSource).Set(boolValue(s.wanted.Reason == source.ReasonSettling))
	waitingInfo.WithLabelValues(ns, name, waitingSnapshot).Set(boolValue(st.Phase == rdfv1.PhaseSnapshotting && s.snapshot == nil))
	waitingInfo.WithLabelValues(ns, name, waitingServing).Set(boolValue(handingOff && readyReason == status.ReasonServingPending))
	waitingInfo.WithLabelValues(ns, name, waitingRollout).Set(boolValue(handingOff &&
		(readyReason == status.ReasonRollingOut || readyReason == status.ReasonHandoffDrifted)))
	mode := bl.Spec.Trigger.Mode
	if mode == "" {
		mode = rdfv1.TriggerManual
	}
	for _, m := range []rdfv1.TriggerMode{rdfv1.TriggerManual, rdfv1.TriggerWatch} {
		triggerInfo.WithLabelValues(ns, name, string(m)).Set(boolValue(m == mode))
	}
	if len(st.Snapshots) > 0 { // newest first
		lastSuccessTimestamp.WithLabelValues(ns, name).Set(float64(st.Snapshots[0].CreationTime.Unix()))
	} else {
		lastSuccessTimestamp.DeleteLabelValues(ns, name)
	}
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func forgetMetrics(bl *rdfv1.BulkLoad) {
	labels := prometheus.Labels{"namespace": bl.Namespace, "bulkload": bl.Name}
	for _, v := range []interface{ DeletePartialMatch(prometheus.Labels) int }{
		phaseInfo, triplesLoadedTotal, buildsTotal, buildDurationSeconds, handoffDriftCorrectionsTotal,
		conditionInfo, waitingInfo, triggerInfo, lastSuccessTimestamp,
	} {
		v.DeletePartialMatch(labels)
	}
}
