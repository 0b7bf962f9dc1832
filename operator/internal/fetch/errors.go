// Package fetch pulls a complete dump set from S3/MinIO onto a local directory: objects in
// parallel, large objects in parallel ranged reads, bounded memory, retries with backoff,
// verification against a manifest or ETags, resumable across runs. cmd/fetch is its CLI.
package fetch

import (
	"errors"
	"fmt"
)

// Exit codes of rdf-bulkload-fetch (docs/exit-codes.md, column fetch); the build workflow
// tells retryable from final failures by them.
const (
	ExitOK = 0
	// ExitUsage: bad flags or configuration (also wrong credentials, unknown bucket, TLS trust) — final.
	ExitUsage = 2
	// ExitIntegrity: digest mismatch, incomplete source (missing marker/manifest/object), source
	// changed during the fetch — final.
	ExitIntegrity = 3
	// ExitNoSpace: not enough disk for the dump set — final.
	ExitNoSpace = 5
	// ExitInternal: a bug or a local I/O failure.
	ExitInternal = 70
	// ExitTransient: the endpoint kept failing after all retries, or the fetch was interrupted — retryable.
	ExitTransient = 75
)

// ExitCodes names every code the fetch step exits with (the table's names); ExitCode never
// returns another, and the usage text lists them.
var ExitCodes = map[int]string{
	ExitOK:        "ok",
	ExitUsage:     "usage",
	ExitIntegrity: "bad-input",
	ExitNoSpace:   "resources",
	ExitInternal:  "internal",
	ExitTransient: "transient",
}

// Error carries an exit code with the cause.
type Error struct {
	Code int
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

func errorf(code int, format string, args ...any) *Error {
	return &Error{Code: code, Err: fmt.Errorf(format, args...)}
}

// ExitCode of an error returned by Run (0 for nil, 70 for errors without a code or with one
// outside the contract).
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var fe *Error
	if errors.As(err, &fe) {
		if _, ok := ExitCodes[fe.Code]; ok {
			return fe.Code
		}
	}
	return ExitInternal
}

// IntegrityError names the object that failed verification.
type IntegrityError struct {
	Key, Path string
	Method    string
	Expected  string
	Actual    string
}

func (e *IntegrityError) Error() string {
	return fmt.Sprintf("integrity check failed for object %s (local %s): %s expected %s, got %s",
		e.Key, e.Path, e.Method, e.Expected, e.Actual)
}
