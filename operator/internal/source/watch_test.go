package source

import (
	"testing"
	"time"
)

func TestEvaluateSettles(t *testing.T) {
	t0 := time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC)
	settle := 2 * time.Minute
	incomplete := &Snapshot{Fingerprint: "f1", Incomplete: "completion marker x is missing"}
	complete := &Snapshot{Fingerprint: "f2", Complete: true, Revision: "sha256:r2"}
	changed := &Snapshot{Fingerprint: "f3", Complete: true, Revision: "sha256:r3"}

	obs, st := Evaluate(incomplete, Settle{}, t0, settle)
	if obs.Revision != "" || obs.Reason != ReasonIncomplete {
		t.Fatalf("incomplete set: %+v", obs)
	}
	// The marker lands: complete, but the settle clock starts now.
	obs, st = Evaluate(complete, st, t0.Add(time.Minute), settle)
	if obs.Revision != "" || obs.Reason != ReasonSettling || obs.RecheckAfter != settle {
		t.Fatalf("just completed: %+v", obs)
	}
	obs, st = Evaluate(complete, st, t0.Add(2*time.Minute), settle)
	if obs.Revision != "" || obs.RecheckAfter != time.Minute {
		t.Fatalf("half settled: %+v", obs)
	}
	obs, st = Evaluate(complete, st, t0.Add(3*time.Minute), settle)
	if obs.Revision != "sha256:r2" || obs.Reason != ReasonSettled {
		t.Fatalf("settled: %+v", obs)
	}
	// Unchanged: the same revision again (the controller does not build it twice).
	if obs, _ := Evaluate(complete, st, t0.Add(time.Hour), settle); obs.Revision != "sha256:r2" {
		t.Fatalf("unchanged: %+v", obs)
	}
	// Any change restarts the clock, even for a complete set.
	obs, st = Evaluate(changed, st, t0.Add(time.Hour), settle)
	if obs.Revision != "" || obs.Reason != ReasonSettling {
		t.Fatalf("changed listing was not settled again: %+v", obs)
	}
	if obs, _ = Evaluate(changed, st, t0.Add(time.Hour+settle), settle); obs.Revision != "sha256:r3" {
		t.Fatalf("new revision: %+v", obs)
	}
	// A zero settle period builds at once.
	if obs, _ := Evaluate(complete, Settle{}, t0, 0); obs.Revision != "sha256:r2" {
		t.Fatalf("zero settle: %+v", obs)
	}
}
