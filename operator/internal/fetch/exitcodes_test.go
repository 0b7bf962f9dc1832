package fetch

import (
	"errors"
	"testing"

	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/exitcodedoc"
)

// The fetch step exits with exactly the codes docs/exit-codes.md marks fetch=yes, by the same names.
func TestExitCodesMatchDocs(t *testing.T) {
	rows, err := exitcodedoc.Load()
	if err != nil {
		t.Fatal(err)
	}
	documented := map[int]string{}
	for _, r := range rows {
		if r.Fetch {
			documented[int(r.Code)] = r.Name
		}
	}
	for code, name := range ExitCodes {
		if documented[code] != name {
			t.Errorf("fetch exits with %d (%s); docs/exit-codes.md: %q", code, name, documented[code])
		}
	}
	for code, name := range documented {
		if _, ok := ExitCodes[code]; !ok {
			t.Errorf("docs/exit-codes.md says fetch exits with %d (%s); ExitCodes has no such code", code, name)
		}
	}
}

func TestExitCodeOutsideTheContractIsInternal(t *testing.T) {
	if got := ExitCode(&Error{Code: 4, Err: errors.New("x")}); got != ExitInternal {
		t.Errorf("code 4 (not fetch's) exits %d, want %d", got, ExitInternal)
	}
	if got := ExitCode(errorf(ExitNoSpace, "full")); got != ExitNoSpace {
		t.Errorf("got %d", got)
	}
}
