package specs

import (
	"fmt"
	"slices"
)

// Steps of the build workflow (template names, also the step names).
const (
	StepFetch    = "fetch"
	StepLoad     = "load"
	StepValidate = "validate"
	// StepSnapshot is done by the controller after the workflow, not by Argo.
	StepSnapshot = "snapshot"
)

// ExitClass is what a step's exit code means for the build.
type ExitClass struct {
	Reason    string
	Retryable bool
}

// ExitCodeRow is one row of the exit-code contract shared by rdf-bulkload,
// rdf-bulkload-fetch and rdf-bulkload-validate (docs/exit-codes.md, which a test
// compares with ExitCodeTable).
type ExitCodeRow struct {
	Code int32
	Name string
	// Reason is the condition/event reason of a step that failed with Code.
	Reason string
	// StepReasons overrides Reason for some steps (fetch's 3 is an incomplete source
	// rather than a bad dump).
	StepReasons map[string]string
	// RetriedBy are the steps whose retry strategy runs the step again on Code (Argo
	// inside the workflow, then a new workflow on the same volumes).
	RetriedBy []string
}

// ExitKilled is a container's exit code after SIGKILL (128+9).
const ExitKilled = 137

// ExitCodeTable is the contract: the classifier, the retry expressions and the docs'
// table all come from it. Codes outside it count as final: retrying an unknown failure
// on the same inputs would fail the same way. 137 (SIGKILL: the OOM killer, a node under
// pressure, a person) and 6 (SIGTERM) are retried for the load step, which resumes from its
// last checkpoint, so a retry makes progress, and for the validate step, which only reads.
var ExitCodeTable = []ExitCodeRow{
	{Code: 2, Name: "usage", Reason: "UsageError"},
	{Code: 3, Name: "bad-input", Reason: "BadInput", StepReasons: map[string]string{StepFetch: "SourceIncomplete"}},
	{Code: 4, Name: "input-missing", Reason: "InputMissing"},
	{Code: 5, Name: "resources", Reason: "ResourceExhausted"},
	{Code: 6, Name: "interrupted", Reason: "Interrupted", RetriedBy: []string{StepLoad, StepValidate}},
	{Code: 70, Name: "internal", Reason: "InternalError"},
	{Code: 75, Name: "transient", Reason: "TransientIO", RetriedBy: []string{StepFetch, StepLoad, StepValidate}},
	{Code: ExitKilled, Name: "killed", Reason: "Killed", RetriedBy: []string{StepLoad, StepValidate}},
}

func exitCodeRow(code int32) (ExitCodeRow, bool) {
	i := slices.IndexFunc(ExitCodeTable, func(r ExitCodeRow) bool { return r.Code == code })
	if i < 0 {
		return ExitCodeRow{}, false
	}
	return ExitCodeTable[i], true
}

// ClassifyExit says what a step's exit code means for the build: the reason shown on
// the BulkLoad and whether the step's retry strategy runs it again.
func ClassifyExit(step string, code int32) ExitClass {
	r, ok := exitCodeRow(code)
	if !ok {
		return ExitClass{Reason: fmt.Sprintf("ExitCode%d", code)}
	}
	reason := r.Reason
	if s, ok := r.StepReasons[step]; ok {
		reason = s
	}
	return ExitClass{Reason: reason, Retryable: slices.Contains(r.RetriedBy, step)}
}

// retryableCodes lists, in the table's order, the exit codes the step's retryStrategy retries.
func retryableCodes(step string) []int32 {
	var codes []int32
	for _, r := range ExitCodeTable {
		if slices.Contains(r.RetriedBy, step) {
			codes = append(codes, r.Code)
		}
	}
	return codes
}
