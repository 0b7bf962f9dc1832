package check

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// An older release's types, in miniature: a template without a field the operator writes,
// and steps with their own UnmarshalJSON (as Argo's ParallelSteps), which the decoder's
// DisallowUnknownFields does not reach.
type oldStep struct {
	Name string `json:"name"`
}

type oldSteps struct{ Steps []oldStep }

func (s *oldSteps) UnmarshalJSON(data []byte) error { return json.Unmarshal(data, &s.Steps) }
func (s oldSteps) MarshalJSON() ([]byte, error)     { return json.Marshal(s.Steps) }

type oldTemplate struct {
	Name  string     `json:"name"`
	Steps []oldSteps `json:"steps,omitempty"`
}

func decodeStrictly(data string, v any) error {
	dec := json.NewDecoder(strings.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func roundTrip(t *testing.T, data string, v any) []string {
	t.Helper()
	if err := json.Unmarshal([]byte(data), v); err != nil {
		t.Fatal(err)
	}
	back, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return Diff("", generic(t, []byte(data)), generic(t, back))
}

func TestAnUnknownTopLevelFieldIsRefused(t *testing.T) {
	err := decodeStrictly(`{"name": "load", "retryStrategy": {"expression": "x"}}`, &oldTemplate{})
	if err == nil || !strings.Contains(err.Error(), `unknown field "retryStrategy"`) {
		t.Errorf("%v", err)
	}
}

func TestWhatStrictDecodingMissesTheRoundTripFinds(t *testing.T) {
	written := `{"name": "build", "steps": [[{"name": "fetch", "when": "true"}]]}`
	if err := decodeStrictly(written, &oldTemplate{}); err != nil {
		t.Fatalf("inside a type with its own UnmarshalJSON the decoder is not strict, yet it refused: %v", err)
	}
	diffs := roundTrip(t, written, &oldTemplate{})
	if len(diffs) != 1 || !strings.Contains(diffs[0], ".steps[0][0].when is lost") {
		t.Errorf("%q", diffs)
	}
	// encoding/json matches keys case-insensitively; Kubernetes clients do not
	diffs = roundTrip(t, `{"NAME": "build"}`, &oldTemplate{})
	if len(diffs) != 2 || !strings.Contains(diffs[0], ".NAME is lost") || !strings.Contains(diffs[1], ".name is added") {
		t.Errorf("%q", diffs)
	}
}

func TestNullIsNotADifferenceButLostEmptiesAndZerosAre(t *testing.T) {
	w := generic(t, []byte(`{"startedAt": null, "selector": {}, "list": [], "limit": 0, "on": false, "same": {"a": [1, "x"]}}`))
	r := generic(t, []byte(`{"extra": {"a": null}, "more": [], "same": {"a": [1, "x"]}}`))
	diffs := Diff("", w, r)
	want := []string{".limit is lost", ".list is lost", ".on is lost", ".selector is lost"}
	if len(diffs) != len(want) {
		t.Fatalf("%q", diffs)
	}
	for i := range want {
		if !strings.HasPrefix(diffs[i], want[i]) {
			t.Errorf("%q, want %s", diffs[i], want[i])
		}
	}
}

func TestKeyFields(t *testing.T) {
	w := generic(t, []byte(`{"spec": {"entrypoint": "build", "podSpecPatch": "{}", "activeDeadlineSeconds": 60, "podGC": {}, "ttlStrategy": {},
		"templates": [{"name": "load", "retryStrategy": {"expression": "e", "limit": 3}, "outputs": {"parameters": [{"name": "summary"}]}}]}}`))
	if d := KeyFields(w, w); len(d) != 0 {
		t.Errorf("%q", d)
	}
	var buf bytes.Buffer
	buf.WriteString(`{"spec": {"entrypoint": "build", "templates": [{"name": "load", "retryStrategy": {"expression": "e"}}]}}`)
	d := KeyFields(w, generic(t, buf.Bytes()))
	if len(d) != 6 || !strings.Contains(strings.Join(d, "\n"), "key field spec.templates[0].retryStrategy.limit: written 3, read back null") {
		t.Errorf("%q", d)
	}
}
