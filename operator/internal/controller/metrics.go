package controller

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
)

// The manager's metrics endpoint (internal/managermetrics) asks the API server to
// authenticate each scraper's token and authorize its GET /metrics.
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// Build metrics, served on the manager's metrics endpoint next to controller-runtime's own.
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
)

var allPhases = []rdfv1.Phase{
	rdfv1.PhasePending, rdfv1.PhaseFetching, rdfv1.PhaseLoading, rdfv1.PhaseValidating,
	rdfv1.PhaseSnapshotting, rdfv1.PhaseHandingOff, rdfv1.PhaseReady, rdfv1.PhaseFailed,
}

func init() {
	ctrlmetrics.Registry.MustRegister(buildsTotal, buildDurationSeconds, triplesLoadedTotal, handoffDriftCorrectionsTotal, phaseInfo)
}

func recordPhase(bl *rdfv1.BulkLoad) {
	for _, p := range allPhases {
		v := 0.0
		if p == bl.Status.Phase {
			v = 1
		}
		phaseInfo.WithLabelValues(bl.Namespace, bl.Name, string(p)).Set(v)
	}
}

func forgetMetrics(bl *rdfv1.BulkLoad) {
	labels := prometheus.Labels{"namespace": bl.Namespace, "bulkload": bl.Name}
	phaseInfo.DeletePartialMatch(labels)
	triplesLoadedTotal.DeletePartialMatch(labels)
	buildsTotal.DeletePartialMatch(labels)
	handoffDriftCorrectionsTotal.DeletePartialMatch(labels)
	buildDurationSeconds.DeletePartialMatch(labels)
}
