package exitcodedoc

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestParseRejectsMalformedTables(t *testing.T) {
	head := Marker + " -->\n| code | name | reason | retried by | loader | fetch | validate | meaning |\n|---|---|---|---|---|---|---|---|\n"
	for name, doc := range map[string]string{
		"no marker":     "| code |\n",
		"other columns": Marker + " -->\n| code | name |\n|---|---|\n| 0 | ok |\n",
		"bad yes/no":    head + "| 0 | ok | - | - | y | yes | yes | done |\n",
		"duplicate":     head + "| 2 | a | A | - | yes | yes | yes | x |\n| 2 | b | B | - | yes | yes | yes | y |\n",
		"short row":     head + "| 2 | a | A | - | yes |\n",
		"no rows":       head,
	} {
		if _, err := Parse(strings.NewReader(doc)); err == nil {
			t.Errorf("%s: parsed without an error", name)
		}
	}
	rows, err := Parse(strings.NewReader(head + "| 3 | bad | BadInput (fetch: SourceIncomplete) | fetch, load | yes | - | yes | m |\n\nafter\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := Row{Code: 3, Name: "bad", Reason: "BadInput", StepReasons: map[string]string{"fetch": "SourceIncomplete"},
		RetriedBy: []string{"fetch", "load"}, Loader: true, Validate: true, Meaning: "m"}
	if len(rows) != 1 || rows[0].Reason != want.Reason || rows[0].StepReasons["fetch"] != "SourceIncomplete" ||
		!slices.Equal(rows[0].RetriedBy, want.RetriedBy) || rows[0].Fetch || !rows[0].Loader || !rows[0].Validate {
		t.Fatalf("got %+v, want %+v", rows, want)
	}
}

// The validate step is a shell script: every code it exits with (`die N ...`, `exit N`)
// must be a validate=yes row of the table, and every such row a code it uses.
func TestValidateScriptExitCodesMatchDocs(t *testing.T) {
	rows, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := Find()
	script := filepath.Join(filepath.Dir(filepath.Dir(doc)), "loader-image", "validate", "rdf-bulkload-validate")
	src, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	used := map[int32]bool{}
	for _, m := range regexp.MustCompile(`(?m)(?:\bdie|\bexit)\s+([0-9]+)\b`).FindAllStringSubmatch(string(src), -1) {
		n, _ := strconv.Atoi(m[1])
		used[int32(n)] = true
	}
	want := map[int32]bool{}
	for _, r := range rows {
		if r.Validate {
			want[r.Code] = true
		}
	}
	for c := range used {
		if !want[c] {
			t.Errorf("%s exits with %d, which docs/exit-codes.md does not give to validate", script, c)
		}
	}
	for c := range want {
		if !used[c] {
			t.Errorf("docs/exit-codes.md says validate exits with %d; %s never does", c, script)
		}
	}
}
