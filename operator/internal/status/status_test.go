package status

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
)

func conds(st *rdfv1.BulkLoadStatus) map[string]metav1.Condition {
	out := map[string]metav1.Condition{}
	for _, c := range st.Conditions {
		out[c.Type] = c
	}
	return out
}

func TestKstatusConditions(t *testing.T) {
	for name, tc := range map[string]struct {
		set                         func(st *rdfv1.BulkLoadStatus)
		phase                       rdfv1.Phase
		ready, reconciling, stalled metav1.ConditionStatus
		reason                      string
	}{
		"progressing": {func(st *rdfv1.BulkLoadStatus) { SetProgressing(st, 7, rdfv1.PhaseLoading, ReasonBuilding, "step load") },
			rdfv1.PhaseLoading, metav1.ConditionFalse, metav1.ConditionTrue, metav1.ConditionFalse, ReasonBuilding},
		"ready": {func(st *rdfv1.BulkLoadStatus) { SetReady(st, 7, "snapshot s") },
			rdfv1.PhaseReady, metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionFalse, ReasonBuilt},
		"stalled": {func(st *rdfv1.BulkLoadStatus) { SetStalled(st, 7, "BadInput", "line 3") },
			rdfv1.PhaseFailed, metav1.ConditionFalse, metav1.ConditionFalse, metav1.ConditionTrue, "BadInput"},
		"dependency missing": {func(st *rdfv1.BulkLoadStatus) { SetDependencyMissing(st, 7, "install Argo Workflows") },
			rdfv1.PhasePending, metav1.ConditionFalse, metav1.ConditionFalse, metav1.ConditionTrue, ReasonDependencyMissing},
	} {
		t.Run(name, func(t *testing.T) {
			st := &rdfv1.BulkLoadStatus{}
			// From any earlier state, the setter decides all three conditions.
			SetStalled(st, 6, "Old", "old")
			SetReady(st, 6, "old")
			tc.set(st)
			c := conds(st)
			if st.Phase != tc.phase || c["Ready"].Status != tc.ready || c["Reconciling"].Status != tc.reconciling || c["Stalled"].Status != tc.stalled {
				t.Fatalf("%+v", st)
			}
			for _, cond := range c {
				if cond.ObservedGeneration != 7 || cond.Reason != tc.reason {
					t.Errorf("%s: %+v", cond.Type, cond)
				}
			}
			if len(st.Conditions) != 3 {
				t.Errorf("exactly Ready, Reconciling, Stalled: %v", st.Conditions)
			}
		})
	}
}

func TestConditionMessagesAreBounded(t *testing.T) {
	st := &rdfv1.BulkLoadStatus{}
	long := make([]byte, 5000)
	for i := range long {
		long[i] = 'x'
	}
	SetStalled(st, 1, "BadInput", string(long))
	if m := meta.FindStatusCondition(st.Conditions, "Stalled").Message; len(m) != 1024 {
		t.Errorf("message length %d", len(m))
	}
	if !IsTrue(st, "Stalled") || IsTrue(st, "Ready") {
		t.Error("IsTrue")
	}
}

func TestLoadFigures(t *testing.T) {
	f, err := LoadFigures(`{"triples": 1000000, "quads": 500000, "rejects": 2, "duration_seconds": 12.5, "database_bytes": 4096, "already_complete": false, "report": "/data/report.json"}`)
	if err != nil {
		t.Fatal(err)
	}
	want := rdfv1.LoadFigures{Triples: 1000000, Quads: 500000, Rejects: 2, Duration: metav1.Duration{Duration: 12500 * time.Millisecond}, TriplesPerSecond: 120000, DatabaseBytes: 4096, Report: "/data/report.json"}
	if *f != want {
		t.Errorf("%+v", *f)
	}
	f, err = LoadFigures(`{"triples": 5, "duration_seconds": 0}`)
	if err != nil || f.TriplesPerSecond != 0 || f.ResumedAfter != "" {
		t.Errorf("zero duration: %+v %v", f, err)
	}
	// a load that resumed from an earlier attempt's checkpoint says after which
	if f, err = LoadFigures(`{"triples": 5, "duration_seconds": 1, "resumed_after": "parse"}`); err != nil || f.ResumedAfter != "parse" {
		t.Errorf("resumed: %+v %v", f, err)
	}
	for _, bad := range []string{"", "not json", `{"triples": -1}`, `{"duration_seconds": -3}`} {
		if _, err := LoadFigures(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestPushSnapshot(t *testing.T) {
	rec := func(name string) rdfv1.SnapshotRecord { return rdfv1.SnapshotRecord{Name: name} }
	h := PushSnapshot(nil, rec("a"), 2)
	h = PushSnapshot(h, rec("b"), 2)
	h = PushSnapshot(h, rec("c"), 2)
	if len(h) != 2 || h[0].Name != "c" || h[1].Name != "b" {
		t.Errorf("newest first, at most keep: %+v", h)
	}
	h = PushSnapshot(h, rec("b"), 2)
	if len(h) != 2 || h[0].Name != "b" || h[1].Name != "c" {
		t.Errorf("re-pushing moves to the head without duplicates: %+v", h)
	}
}

func TestPhaseTransition(t *testing.T) {
	a, b := &rdfv1.BulkLoadStatus{Phase: rdfv1.PhaseLoading}, &rdfv1.BulkLoadStatus{Phase: rdfv1.PhaseValidating}
	if tr, ok := PhaseTransition(a, b); !ok || tr.From != rdfv1.PhaseLoading || tr.To != rdfv1.PhaseValidating {
		t.Errorf("%+v %v", tr, ok)
	}
	if _, ok := PhaseTransition(a, a); ok {
		t.Error("no transition")
	}
}

// A missing dependency keeps the phase of a build under way: nothing failed.
func TestDependencyMissingKeepsThePhase(t *testing.T) {
	st := &rdfv1.BulkLoadStatus{}
	SetProgressing(st, 1, rdfv1.PhaseLoading, ReasonBuilding, "step load")
	SetDependencyMissing(st, 1, "the API server does not serve Workflow (argoproj.io/v1alpha1)")
	if st.Phase != rdfv1.PhaseLoading || !IsTrue(st, rdfv1.ConditionStalled) || conds(st)["Stalled"].Message == "" {
		t.Errorf("%+v", st)
	}
	st = &rdfv1.BulkLoadStatus{}
	SetDependencyMissing(st, 1, "m")
	if st.Phase != rdfv1.PhasePending {
		t.Errorf("a new BulkLoad is Pending: %q", st.Phase)
	}
}
