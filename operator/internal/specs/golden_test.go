package specs

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// checkGoldenLines compares got, JSON lines of named cases, with the golden file at path, or
// rewrites the file with -update. On a difference it names each case that changed, is new
// or is gone, then fails with fix: what to run, check and commit when the change is meant.
func checkGoldenLines(t *testing.T, path string, got []byte, fix string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (%s)", err, fix)
	}
	if bytes.Equal(got, want) {
		return
	}
	byName := func(data []byte) ([]string, map[string]string) {
		var names []string
		lines := map[string]string{}
		for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
			var c struct {
				Name string `json:"name"`
			}
			if err := json.Unmarshal(line, &c); err != nil {
				t.Fatalf("%s: %v in %s", path, err, line)
			}
			names = append(names, c.Name)
			lines[c.Name] = string(line)
		}
		return names, lines
	}
	_, golden := byName(want)
	names, now := byName(got)
	for _, name := range names {
		if was, ok := golden[name]; !ok {
			t.Errorf("case %s is not in %s", name, path)
		} else if was != now[name] {
			t.Errorf("case %s:\n now:         %s\n golden file: %s", name, now[name], was)
		}
		delete(golden, name)
	}
	for name := range golden {
		t.Errorf("case %s of %s is no longer in the matrix", name, path)
	}
	t.Fatalf("%s differs from what the code writes now: %s", path, fix)
}
