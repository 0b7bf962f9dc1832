package controller

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	rdfv1 "github.com/rdf-bulkload/rdf-bulkload/operator/api/v1alpha1"
)

// Revision is the identity of a complete dump set. Equal IDs mean the same inputs;
// a build is started for each ID that differs from the last one built.
type Revision struct {
	// ID is empty while no complete (and settled) dump set exists.
	ID string
	// Reason and Message explain an empty ID (e.g. Incomplete, Settling), for conditions.
	Reason  string
	Message string
	// RecheckAfter asks for an earlier poll than the trigger interval (e.g. the end
	// of a settle period); zero means the interval.
	RecheckAfter time.Duration
	// Source says whether ID is a digest of the source listing (the fetch step can
	// then refuse a dump set that changed since) rather than of the spec.
	Source bool
}

// SourceAccess is what a resolver needs to list the source: the credentials and CA
// from the Secret/ConfigMap the spec names. It never appears in logs or status.
type SourceAccess struct {
	AccessKeyID     string
	SecretAccessKey string
	CABundle        []byte
}

// String keeps the secret out of any formatted output.
func (a SourceAccess) String() string {
	if a.AccessKeyID == "" {
		return "anonymous"
	}
	return "access key " + a.AccessKeyID
}

// GoString keeps the secret out of %#v too.
func (a SourceAccess) GoString() string { return "controller.SourceAccess{" + a.String() + "}" }

// SourceResolver resolves the dump set a BulkLoad in watch mode should be built
// from: it lists the source, checks the completion marker or manifest and the
// settle period, and returns the revision (or an empty ID while incomplete).
type SourceResolver interface {
	Resolve(ctx context.Context, bl *rdfv1.BulkLoad, access SourceAccess) (Revision, error)
}

// ManualRevision is the revision of a manual-trigger BulkLoad: a digest of every
// spec field that changes what is built (source, database, loader, fetch, validate,
// trigger.rebuild). Changes to retention, serving or retry settings do not rebuild.
func ManualRevision(bl *rdfv1.BulkLoad) Revision {
	buildInputs := struct {
		Source   rdfv1.SourceSpec   `json:"source"`
		Database rdfv1.DatabaseSpec `json:"database"`
		Loader   rdfv1.LoaderSpec   `json:"loader"`
		Fetch    rdfv1.FetchSpec    `json:"fetch"`
		Validate rdfv1.ValidateSpec `json:"validate"`
		Rebuild  string             `json:"rebuild"`
	}{bl.Spec.Source, bl.Spec.Database, bl.Spec.Loader, bl.Spec.Fetch, bl.Spec.Validate, bl.Spec.Trigger.Rebuild}
	// Marshalling plain structs cannot fail.
	data, _ := json.Marshal(buildInputs)
	sum := sha256.Sum256(data)
	return Revision{ID: "spec:sha256:" + hex.EncodeToString(sum[:])}
}
