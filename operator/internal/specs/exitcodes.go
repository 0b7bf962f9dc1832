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

// Exit codes shared by rdf-bulkload, rdf-bulkload-fetch and rdf-bulkload-validate.
// Retryable ones are retried inside the workflow (Argo retryStrategy) and then by
// a new workflow on the same volumes; final ones stop the build.
var exitClasses = map[int32]ExitClass{
	2:  {Reason: "UsageError", Retryable: false},
	3:  {Reason: "BadInput", Retryable: false},
	4:  {Reason: "InputMissing", Retryable: false},
	5:  {Reason: "ResourceExhausted", Retryable: false},
	6:  {Reason: "Interrupted", Retryable: true},
	70: {Reason: "InternalError", Retryable: false},
	75: {Reason: "TransientIO", Retryable: true},
}

// ClassifyExit says whether a step's exit code is worth retrying. Codes outside the
// contract count as final: retrying an unknown failure on the same inputs would fail
// the same way. 137 (SIGKILL: the OOM killer, a node under pressure, a person) is
// retried for the load step only, which resumes from its last checkpoint, so a retry
// makes progress; elsewhere it is final.
func ClassifyExit(step string, code int32) ExitClass {
	if step == StepFetch && code == 3 {
		return ExitClass{Reason: "SourceIncomplete"}
	}
	if c, ok := exitClasses[code]; ok {
		// Only the codes the step's contract defines as retryable are retried.
		c.Retryable = slices.Contains(retryableCodes(step), code)
		return c
	}
	if code == ExitKilled {
		return ExitClass{Reason: "Killed", Retryable: slices.Contains(retryableCodes(step), code)}
	}
	return ExitClass{Reason: fmt.Sprintf("ExitCode%d", code)}
}

// ExitKilled is a container's exit code after SIGKILL (128+9).
const ExitKilled = 137

// retryableCodes lists, per step, the exit codes its retryStrategy retries.
func retryableCodes(step string) []int32 {
	if step == StepLoad {
		return []int32{6, 75, ExitKilled}
	}
	return []int32{75}
}
