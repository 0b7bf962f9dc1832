package specs

import (
	"maps"
	"slices"
	"testing"

	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/exitcodedoc"
)

// The classifier is docs/exit-codes.md: the same codes, names, reasons and retrying steps.
func TestExitCodeTableMatchesDocs(t *testing.T) {
	rows, err := exitcodedoc.Load()
	if err != nil {
		t.Fatal(err)
	}
	documented := map[int32]bool{}
	for _, d := range rows {
		documented[d.Code] = true
		if d.Code == 0 {
			continue // success: never classified
		}
		r, ok := exitCodeRow(d.Code)
		if !ok {
			t.Errorf("code %d (%s) is documented but not in ExitCodeTable", d.Code, d.Name)
			continue
		}
		if r.Name != d.Name || r.Reason != d.Reason || !maps.Equal(r.StepReasons, d.StepReasons) ||
			!slices.Equal(slices.Sorted(slices.Values(r.RetriedBy)), slices.Sorted(slices.Values(d.RetriedBy))) {
			t.Errorf("code %d: ExitCodeTable %+v, docs %+v", d.Code, r, d)
		}
		for _, step := range []string{StepFetch, StepLoad, StepValidate} {
			want := ExitClass{Reason: d.Reason, Retryable: slices.Contains(d.RetriedBy, step)}
			if s, ok := d.StepReasons[step]; ok {
				want.Reason = s
			}
			if got := ClassifyExit(step, d.Code); got != want {
				t.Errorf("ClassifyExit(%s, %d) = %+v, docs say %+v", step, d.Code, got, want)
			}
			if got := slices.Contains(retryableCodes(step), d.Code); got != want.Retryable {
				t.Errorf("step %s: code %d in the retry expression is %v, docs say %v", step, d.Code, got, want.Retryable)
			}
		}
	}
	for _, r := range ExitCodeTable {
		if !documented[r.Code] {
			t.Errorf("ExitCodeTable has code %d (%s), docs/exit-codes.md does not", r.Code, r.Name)
		}
	}
}
