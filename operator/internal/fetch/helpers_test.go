package fetch_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"sort"
	"testing"

	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/fetch"
)

// envelope is how every JSON line starts: ts (RFC 3339 UTC, milliseconds), then event.
var envelope = regexp.MustCompile(`^\{"ts":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z","event":"([a-z_]+)"[,}]`)

func parseEvents(t *testing.T, b []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("progress line is not JSON: %q", sc.Text())
		}
		m := envelope.FindSubmatch(sc.Bytes())
		if m == nil {
			t.Fatalf("progress line does not start with ts and event: %q", sc.Text())
		}
		if !slices.Contains(fetch.EventNames, fetch.EventName(m[1])) {
			t.Fatalf("event %q is not one of fetch.EventNames: %q", m[1], sc.Text())
		}
		out = append(out, ev)
	}
	return out
}

func countEvents(evs []map[string]any, name string) int {
	n := 0
	for _, ev := range evs {
		if ev["event"] == name {
			n++
		}
	}
	return n
}

func eventNames(evs []map[string]any) []any {
	var out []any
	for _, ev := range evs {
		out = append(out, ev["event"])
	}
	return out
}

func sortStrings(s []string) { sort.Strings(s) }
