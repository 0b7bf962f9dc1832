package controller

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
	appsv1 "k8s.io/api/apps/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/source"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/specs"
)

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
	rdfv1.PhaseSnapshotting, rdfv1.PhaseReady, rdfv1.PhaseFailed,
}

// Values of rdf_bulkload_waiting's "for" label.
const (
	waitingSource   = "source"
	waitingSnapshot = "snapshot"
	waitingServing  = "serving"
	waitingRollout  = "rollout"
)

func init() {
	ctrlmetrics.Registry.MustRegister(buildsTotal, buildDurationSeconds, triplesLoadedTotal, phaseInfo,
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
	snapshotting := st.Phase == rdfv1.PhaseSnapshotting
	waitingInfo.WithLabelValues(ns, name, waitingSource).Set(boolValue(s.wanted.Reason == source.ReasonSettling))
	waitingInfo.WithLabelValues(ns, name, waitingSnapshot).Set(boolValue(snapshotting && s.snapshot == nil))
	waitingInfo.WithLabelValues(ns, name, waitingServing).Set(boolValue(snapshotting && s.snapshot != nil))
	waitingInfo.WithLabelValues(ns, name, waitingRollout).Set(boolValue(s.servingRollout == rolloutPending))
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

// rolloutState is what observeServing found.
type rolloutState int

const (
	rolloutUnknown rolloutState = iota // no serving workload handed off, or it could not be read
	rolloutDone                        // its pods run the template that mounts status.servingClaim
	rolloutPending                     // not yet, or its template no longer mounts the claim
)

// observeServing reads the serving workload once a snapshot is handed off, for the rollout gauge:
// the handoff is over when the template is patched, but queries see the new database only once
// the pods have been replaced. It looks again every servingRecheck until they have. It never
// fails the reconcile: an unreadable workload leaves the state unknown.
func (r *BulkLoadReconciler) observeServing(ctx context.Context, s *scope) error {
	sv, claim := s.bl.Spec.Serving, s.bl.Status.ServingClaim
	if sv == nil || claim == "" {
		return nil
	}
	key := client.ObjectKey{Namespace: s.bl.Namespace, Name: sv.Name}
	var done bool
	if sv.Kind == rdfv1.WorkloadStatefulSet {
		sts := &appsv1.StatefulSet{}
		if err := r.APIReader.Get(ctx, key, sts); err != nil {
			ctrl.LoggerFrom(ctx).Info("cannot read the serving StatefulSet", "name", sv.Name, "error", err.Error())
			return nil
		}
		want := int32(1)
		if sts.Spec.Replicas != nil {
			want = *sts.Spec.Replicas
		}
		st := sts.Status
		done = specs.ServedClaim(&sts.Spec.Template, sv.VolumeName) == claim && st.ObservedGeneration >= sts.Generation &&
			st.UpdateRevision == st.CurrentRevision && st.UpdatedReplicas >= want && st.ReadyReplicas >= want
	} else {
		d := &appsv1.Deployment{}
		if err := r.APIReader.Get(ctx, key, d); err != nil {
			ctrl.LoggerFrom(ctx).Info("cannot read the serving Deployment", "name", sv.Name, "error", err.Error())
			return nil
		}
		want := int32(1)
		if d.Spec.Replicas != nil {
			want = *d.Spec.Replicas
		}
		st := d.Status
		// kubectl rollout status' test: all replicas updated, no old ones left, the new ones available
		done = specs.ServedClaim(&d.Spec.Template, sv.VolumeName) == claim && st.ObservedGeneration >= d.Generation &&
			st.UpdatedReplicas >= want && st.Replicas == st.UpdatedReplicas && st.AvailableReplicas >= st.UpdatedReplicas
	}
	s.servingRollout = rolloutDone
	if !done {
		s.servingRollout = rolloutPending
		s.requeue(servingRecheck)
	}
	return nil
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
		phaseInfo, triplesLoadedTotal, buildsTotal, buildDurationSeconds,
		conditionInfo, waitingInfo, triggerInfo, lastSuccessTimestamp,
	} {
		v.DeletePartialMatch(labels)
	}
}
