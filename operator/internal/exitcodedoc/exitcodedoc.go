// Package exitcodedoc reads the exit-code table of docs/exit-codes.md, the one contract of
// the loader, the fetch step, the validate step and the operator's classifier, so that
// tests of each can fail when their code disagrees with it.
package exitcodedoc

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Marker is the HTML comment that precedes the table in the document.
const Marker = "<!-- exit-code-table"

// Columns of the table, in order.
var Columns = []string{"code", "name", "reason", "retried by", "loader", "fetch", "validate", "meaning"}

// Row is one exit code as the document states it.
type Row struct {
	Code int32
	Name string
	// Reason is the operator's reason ("" for "-"); StepReasons the per-step
	// exceptions written as "Reason (step: Other, step2: Other2)".
	Reason      string
	StepReasons map[string]string
	// RetriedBy are the steps whose retry strategy retries the code (nil for "-").
	RetriedBy []string
	// Programs that exit with the code.
	Loader, Fetch, Validate bool
	Meaning                 string
}

// Find walks up from the working directory to the repository's docs/exit-codes.md.
func Find() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, "docs", "exit-codes.md")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("docs/exit-codes.md not found above the working directory")
		}
		dir = parent
	}
}

// Load finds and parses the document.
func Load() ([]Row, error) {
	p, err := Find()
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := Parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return rows, nil
}

var stepReasons = regexp.MustCompile(`^(\w+) \((.+)\)$`)

// Parse reads the table after the marker: a header row with Columns, a separator row,
// then one row per code up to the first line that is not a table row.
func Parse(r io.Reader) ([]Row, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() && !strings.HasPrefix(sc.Text(), Marker) {
	}
	if !sc.Scan() {
		return nil, fmt.Errorf("no table after %q", Marker)
	}
	if got := cells(sc.Text()); strings.Join(got, "|") != strings.Join(Columns, "|") {
		return nil, fmt.Errorf("table header %q, want columns %q", got, Columns)
	}
	sc.Scan() // |---|---|
	var rows []Row
	seen := map[int32]bool{}
	for sc.Scan() && strings.HasPrefix(sc.Text(), "|") {
		c := cells(sc.Text())
		if len(c) != len(Columns) {
			return nil, fmt.Errorf("row %q: %d cells, want %d", sc.Text(), len(c), len(Columns))
		}
		code, err := strconv.ParseInt(c[0], 10, 32)
		if err != nil {
			return nil, fmt.Errorf("row %q: code: %w", sc.Text(), err)
		}
		r := Row{Code: int32(code), Name: c[1], Reason: c[2], Meaning: c[7]}
		if seen[r.Code] {
			return nil, fmt.Errorf("code %d has two rows", r.Code)
		}
		seen[r.Code] = true
		if m := stepReasons.FindStringSubmatch(r.Reason); m != nil {
			r.Reason, r.StepReasons = m[1], map[string]string{}
			for _, kv := range strings.Split(m[2], ",") {
				step, reason, ok := strings.Cut(kv, ":")
				if !ok {
					return nil, fmt.Errorf("code %d: reason %q: want \"Reason (step: Other, ...)\"", r.Code, c[2])
				}
				r.StepReasons[strings.TrimSpace(step)] = strings.TrimSpace(reason)
			}
		}
		if r.Reason == "-" {
			r.Reason = ""
		}
		if c[3] != "-" {
			for _, s := range strings.Split(c[3], ",") {
				r.RetriedBy = append(r.RetriedBy, strings.TrimSpace(s))
			}
		}
		for i, dst := range []*bool{&r.Loader, &r.Fetch, &r.Validate} {
			switch c[4+i] {
			case "yes":
				*dst = true
			case "-":
			default:
				return nil, fmt.Errorf("code %d: column %s is %q, want yes or -", r.Code, Columns[4+i], c[4+i])
			}
		}
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		return nil, errors.New("the exit-code table has no rows")
	}
	return rows, sc.Err()
}

func cells(line string) []string {
	line = strings.TrimSpace(line)
	parts := strings.Split(strings.Trim(line, "|"), "|")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}
