package source

import (
	"context"
	"fmt"
	"time"

	"github.com/minio/minio-go/v7"
)

// Watch outcomes (also usable as condition reasons).
const (
	// ReasonIncomplete: the completion marker/manifest (or an object it names) is missing.
	ReasonIncomplete = "SourceIncomplete"
	// ReasonSettling: complete, but the listing changed less than a settle period ago.
	ReasonSettling = "SourceSettling"
	// ReasonSettled: complete and quiet; Revision is set.
	ReasonSettled = "SourceSettled"
)

// Settle is what is remembered about one source between polls: the listing fingerprint
// seen last and since when it has been unchanged.
type Settle struct {
	Fingerprint string
	Since       time.Time
}

// Observation is the watcher's verdict on one poll.
type Observation struct {
	// Revision is set only when the dump set is complete and has been quiet for the settle
	// period: it is then safe to build.
	Revision string
	// Reason is one of ReasonIncomplete, ReasonSettling, ReasonSettled.
	Reason  string
	Message string
	// Snapshot is the listing the verdict is based on.
	Snapshot *Snapshot
	// RecheckAfter is when a poll can change the verdict (the rest of the settle period),
	// zero when only the regular interval matters.
	RecheckAfter time.Duration
}

// Evaluate is the pure core of the watcher: given a listing, what was remembered, the time
// and the settle period, it says whether a revision is ready and what to remember next.
// Any change in the listing (objects, sizes, ETags, marker, manifest) restarts the settle clock.
func Evaluate(snap *Snapshot, prev Settle, now time.Time, settle time.Duration) (Observation, Settle) {
	next := prev
	if snap.Fingerprint != prev.Fingerprint || prev.Since.IsZero() {
		next = Settle{Fingerprint: snap.Fingerprint, Since: now}
	}
	obs := Observation{Snapshot: snap}
	switch {
	case !snap.Complete:
		obs.Reason, obs.Message = ReasonIncomplete, "waiting for a complete dump set: "+snap.Incomplete
	case now.Sub(next.Since) < settle:
		left := settle - now.Sub(next.Since)
		obs.Reason = ReasonSettling
		obs.Message = fmt.Sprintf("dump set %s is complete; waiting until the listing has been unchanged for %s (%s left)",
			snap.Revision, settle, left.Round(time.Second))
		obs.RecheckAfter = left
	default:
		obs.Reason, obs.Revision = ReasonSettled, snap.Revision
		obs.Message = fmt.Sprintf("dump set %s is complete and unchanged since %s", snap.Revision, next.Since.UTC().Format(time.RFC3339))
	}
	return obs, next
}

// Watcher lists sources and judges them with Evaluate. It remembers nothing: the caller
// keeps the Settle between polls (the operator keeps it in the BulkLoad's status, so the
// settle clock survives an operator restart).
type Watcher struct {
	// NewClient builds the S3 client (NewClient with minio-go's default retries when nil).
	NewClient func(Spec, Credentials) (*minio.Client, error)
}

// NewWatcher returns a Watcher.
func NewWatcher() *Watcher { return &Watcher{} }

// Observe lists the source once and returns the verdict at now, given what the previous
// poll left (prev), and what to keep for the next one. A listing error is returned as an
// error (for a condition), never as a revision.
func (w *Watcher) Observe(ctx context.Context, spec Spec, creds Credentials, settle time.Duration, prev Settle, now time.Time) (Observation, Settle, error) {
	newClient := w.NewClient
	if newClient == nil {
		newClient = func(s Spec, c Credentials) (*minio.Client, error) {
			return NewClient(s, c, ClientOptions{MaxRetries: 3})
		}
	}
	client, err := newClient(spec, creds)
	if err != nil {
		return Observation{}, prev, err
	}
	snap, err := Resolve(ctx, client, spec)
	if err != nil {
		return Observation{}, prev, &ObserveError{Class: Classify(err), Message: creds.Redact(Describe(err)), Err: err}
	}
	obs, next := Evaluate(snap, prev, now, settle)
	return obs, next, nil
}

// ObserveError is a failure to list a source. Message is safe to put in a condition or event.
type ObserveError struct {
	Class   Class
	Message string
	Err     error
}

func (e *ObserveError) Error() string { return e.Message }
func (e *ObserveError) Unwrap() error { return e.Err }
