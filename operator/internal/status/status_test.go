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

func TestConditionsFollowTheVerdict(t *testing.T) {
	type want struct {
		phase                                 rdfv1.Phase
		ready, reconciling, stalled, building metav1.ConditionStatus
		readyReason                           string
	}
	T, F := metav1.ConditionTrue, metav1.ConditionFalse
	loading := Verdict{Phase: rdfv1.PhaseLoading, Reason: ReasonBuilding, Message: "step load", Building: true}
	servingWhileLoading := loading
	servingWhileLoading.Serving, servingWhileLoading.ServingMessage = true, "snapshot s"
	failedWhileServing := Verdict{Phase: rdfv1.PhaseFailed, Reason: "BadInput", Message: "line 3", Stalled: true, Serving: true, ServingMessage: "snapshot s"}
	rollingOut := Verdict{Phase: rdfv1.PhaseHandingOff, Reason: ReasonRollingOut, Message: "pods pending"}
	driftedWhileLoading := loading
	driftedWhileLoading.ServingReason, driftedWhileLoading.ServingMessage = ReasonHandoffDrifted, "put back"
	for name, tc := range map[string]struct {
		v    Verdict
		want want
	}{
		// kstatus: InProgress (Reconciling) while nothing the spec asks for is served.
		"first build": {loading, want{rdfv1.PhaseLoading, F, T, F, T, ReasonBuilding}},
		// kstatus: Current while the served database is the spec's and a newer dump set builds.
		"build while serving": {servingWhileLoading, want{rdfv1.PhaseLoading, T, F, F, T, ReasonBuilt}},
		"idle and serving": {Verdict{Phase: rdfv1.PhaseReady, Reason: ReasonBuilt, Serving: true, ServingMessage: "snapshot s"},
			want{rdfv1.PhaseReady, T, F, F, F, ReasonBuilt}},
		// kstatus: Failed; what was served stays served, and Ready says so.
		"failed while serving": {failedWhileServing, want{rdfv1.PhaseFailed, T, F, T, F, ReasonBuilt}},
		"failed first build": {Verdict{Phase: rdfv1.PhaseFailed, Reason: "BadInput", Message: "line 3", Stalled: true},
			want{rdfv1.PhaseFailed, F, F, T, F, "BadInput"}},
		"rolling out":                {rollingOut, want{rdfv1.PhaseHandingOff, F, T, F, F, ReasonRollingOut}},
		"drifted while a build runs": {driftedWhileLoading, want{rdfv1.PhaseLoading, F, T, F, T, ReasonHandoffDrifted}},
	} {
		t.Run(name, func(t *testing.T) {
			st := &rdfv1.BulkLoadStatus{}
			// From any earlier state, the verdict decides all four conditions.
			Apply(st, 6, Verdict{Phase: rdfv1.PhaseFailed, Reason: "Old", Message: "old", Stalled: true, Building: true, Serving: true})
			Apply(st, 7, tc.v)
			c := conds(st)
			got := want{st.Phase, c["Ready"].Status, c["Reconciling"].Status, c["Stalled"].Status, c["Building"].Status, c["Ready"].Reason}
			if got != tc.want {
				t.Fatalf("got %+v, want %+v: %+v", got, tc.want, st.Conditions)
			}
			for _, cond := range c {
				if cond.ObservedGeneration != 7 {
					t.Errorf("%s: %+v", cond.Type, cond)
				}
				if cond.Status == metav1.ConditionTrue && cond.Message == "" {
					t.Errorf("a True condition says why: %+v", cond)
				}
			}
			if b := c["Building"]; b.Status == metav1.ConditionTrue && b.Message != tc.v.Message {
				t.Errorf("Building carries the build's message: %+v", b)
			}
			if len(st.Conditions) != 4 {
				t.Errorf("exactly Ready, Reconciling, Stalled, Building: %v", st.Conditions)
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
	Apply(st, 1, Verdict{Phase: rdfv1.PhaseFailed, Reason: "BadInput", Message: string(long), Stalled: true})
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
