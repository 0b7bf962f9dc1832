package fetch

import (
	"time"

	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/source"
)

// Report is the fetch report (JSON) written on success; the loader's build report can
// embed it as the provenance of its inputs.
type Report struct {
	Tool            string         `json:"tool"`
	Version         string         `json:"version,omitempty"`
	Source          ReportSource   `json:"source"`
	Revision        string         `json:"revision"`
	BuildRevision   string         `json:"buildRevision,omitempty"`
	Destination     string         `json:"destination"`
	StartedAt       time.Time      `json:"startedAt"`
	FinishedAt      time.Time      `json:"finishedAt"`
	DurationSeconds float64        `json:"durationSeconds"`
	BytesPerSecond  float64        `json:"bytesPerSecond"`
	Totals          ReportTotals   `json:"totals"`
	Objects         []ReportObject `json:"objects"`
}

// ReportSource says where the dump set came from (never with credentials).
type ReportSource struct {
	Endpoint       string   `json:"endpoint"`
	Bucket         string   `json:"bucket"`
	Prefix         string   `json:"prefix,omitempty"`
	Keys           []string `json:"keys,omitempty"`
	Include        []string `json:"include,omitempty"`
	Marker         string   `json:"marker,omitempty"`
	Manifest       string   `json:"manifest,omitempty"`
	ManifestSHA256 string   `json:"manifestSHA256,omitempty"`
}

// ReportTotals sums the objects.
type ReportTotals struct {
	Objects          int   `json:"objects"`
	Bytes            int64 `json:"bytes"`
	TransferredBytes int64 `json:"transferredBytes"`
	ResumedBytes     int64 `json:"resumedBytes"`
	SkippedObjects   int   `json:"skippedObjects"`
	Retries          int64 `json:"retries"`
}

// ReportObject is one fetched object.
type ReportObject struct {
	Key  string `json:"key"`
	Path string `json:"path"`
	Size int64  `json:"size"`
	ETag string `json:"etag"`
	// SHA256 and MD5 of the local file.
	SHA256 string `json:"sha256"`
	MD5    string `json:"md5"`
	// Expected digest from the manifest, if any.
	Expected *source.Digest `json:"expected,omitempty"`
	// VerifiedBy: manifest-<algo>, checksum-<algo> (S3 full-object checksum), etag-md5,
	// etag-multipart or size.
	VerifiedBy string `json:"verifiedBy"`
	// Skipped: complete and verified by an earlier run.
	Skipped          bool  `json:"skipped,omitempty"`
	ResumedBytes     int64 `json:"resumedBytes,omitempty"`
	TransferredBytes int64 `json:"transferredBytes"`
}
