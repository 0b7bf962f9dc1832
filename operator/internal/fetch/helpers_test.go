package fetch_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"sort"
	"testing"
)

func parseEvents(t *testing.T, b []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("progress line is not JSON: %q", sc.Text())
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
