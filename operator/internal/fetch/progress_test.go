package fetch_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/rdf-bulkload/rdf-bulkload/operator/internal/fetch"
)

func TestEventLogShape(t *testing.T) {
	var buf bytes.Buffer
	log := fetch.NewEventLog(&buf, func(s string) string { return strings.ReplaceAll(s, "s3cr3t", "***") })
	before := time.Now().UTC().Truncate(time.Millisecond)
	log.Emit(fetch.EventRetry, "what", "GET a key=s3cr3t", "attempt", 2, "delay_seconds", 1.5, "free_bytes", uint64(7))
	log.Emit(fetch.EventDone, "objects", 3)
	evs := parseEvents(t, buf.Bytes()) // checks the ts/event envelope of each line
	if len(evs) != 2 {
		t.Fatalf("%d lines: %s", len(evs), buf.String())
	}
	line := strings.SplitN(buf.String(), "\n", 2)[0]
	// Fields follow in the order given, strings redacted, numbers as numbers, no slog level.
	if want := `,"event":"retry","what":"GET a key=***","attempt":2,"delay_seconds":1.5,"free_bytes":7}`; !strings.HasSuffix(line, want) {
		t.Errorf("line %s\nwant suffix %s", line, want)
	}
	ts, err := time.Parse(time.RFC3339, evs[0]["ts"].(string))
	if err != nil || ts.Before(before) || ts.After(time.Now().Add(time.Second)) {
		t.Errorf("ts %v (%v), want now", evs[0]["ts"], err)
	}
	var nilLog *fetch.EventLog
	nilLog.Emit(fetch.EventDone) // writes nothing, does not panic
	if fetch.NewEventLog(nil, nil) != nil {
		t.Error("an EventLog without a writer")
	}
}
