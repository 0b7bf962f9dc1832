package controller

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/status"
)

// recordBuild records a build whose snapshot is ready: the snapshot joins the
// history and becomes current. Handing it to the serving workload is serve's work,
// which also keeps it there.
func (r *BulkLoadReconciler) recordBuild(ctx context.Context, s *scope) error {
	bl, st := s.bl, &s.bl.Status
	if s.snapshot == nil {
		return nil
	}
	rev := st.SourceRevision
	figures, err := s.loadFigures()
	if err != nil {
		r.event(s, corev1.EventTypeWarning, "ReportUnreadable", "%v", err)
		figures = nil
	}
	st.LastBuiltRevision = rev
	st.CurrentSnapshot = s.snapshot.Name
	rec := rdfv1.SnapshotRecord{Name: s.snapshot.Name, Revision: rev, CreationTime: metav1.Time{Time: s.now}}
	if ct := s.snapshot.Status.CreationTime; ct != nil {
		rec.CreationTime = *ct
	}
	if figures != nil {
		rec.Triples = figures.Triples + figures.Quads
		st.Load = figures
		loaded := float64(figures.Triples + figures.Quads)
		s.onCommit(func() { triplesLoadedTotal.WithLabelValues(bl.Namespace, bl.Name).Add(loaded) })
	}
	st.Snapshots = keepPinned(status.PushSnapshot(st.Snapshots, rec, bl.Spec.Snapshot.EffectiveKeep()), st.Snapshots, pinnedSnapshot(bl))
	st.LastFailure = nil
	st.LastFailedRevision = ""
	r.finishBuild(s, "succeeded")
	st.SourceRevision = ""
	ctrl.LoggerFrom(ctx).Info("build succeeded: snapshot ready", "revision", rev, "snapshot", s.snapshot.Name, "kept", len(st.Snapshots))
	r.event(s, corev1.EventTypeNormal, "BuildSucceeded", "revision %s is in snapshot %s", rev, s.snapshot.Name)
	if st.QueuedRevision != "" {
		s.requeue(0)
	}
	return nil
}

// keepPinned puts the pinned snapshot's record back when retention dropped it from
// the history: it stays (and is listed) while spec.serving.snapshotName names it.
func keepPinned(history, before []rdfv1.SnapshotRecord, pin string) []rdfv1.SnapshotRecord {
	if pin == "" {
		return history
	}
	for _, rec := range history {
		if rec.Name == pin {
			return history
		}
	}
	for _, rec := range before {
		if rec.Name == pin {
			return append(history, rec)
		}
	}
	return history
}

// pinnedSnapshot is spec.serving.snapshotName ("" when nothing is pinned).
func pinnedSnapshot(bl *rdfv1.BulkLoad) string {
	if bl.Spec.Serving == nil {
		return ""
	}
	return bl.Spec.Serving.SnapshotName
}

func (r *BulkLoadReconciler) finishBuild(s *scope, result string) {
	bl, st := s.bl, &s.bl.Status
	var seconds float64 = -1
	if st.BuildStartTime != nil {
		seconds = s.now.Sub(st.BuildStartTime.Time).Seconds()
	}
	s.onCommit(func() {
		buildsTotal.WithLabelValues(bl.Namespace, bl.Name, result).Inc()
		if seconds >= 0 {
			buildDurationSeconds.WithLabelValues(bl.Namespace, bl.Name, result).Observe(seconds)
		}
	})
}
