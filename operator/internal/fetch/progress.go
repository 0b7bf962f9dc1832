package fetch

import (
	"io"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// EventName is the "event" of one JSON line on stderr; the set is closed: these constants.
type EventName string

const (
	// EventPlan: what this run fetches, skips and resumes, and the free disk.
	EventPlan EventName = "plan"
	// EventObject: one object written and verified.
	EventObject EventName = "object"
	// EventProgress: bytes and objects done so far, every --progress-interval.
	EventProgress EventName = "progress"
	// EventRetry: a request failed transiently and is retried after a delay.
	EventRetry EventName = "retry"
	// EventRemoved: a file of an earlier run that is not part of this dump set was removed.
	EventRemoved EventName = "removed"
	// EventWarning: something the user should know that does not stop the fetch.
	EventWarning EventName = "warning"
	// EventDone: the dump set is complete and verified (the report's totals).
	EventDone EventName = "done"
	// EventError: the fetch failed; exit_code and error say how.
	EventError EventName = "error"
)

// EventNames is every EventName.
var EventNames = []EventName{EventPlan, EventObject, EventProgress, EventRetry, EventRemoved, EventWarning, EventDone, EventError}

// TimestampFormat is the "ts" of every line: RFC 3339, UTC, milliseconds (the loader's too).
const TimestampFormat = "2006-01-02T15:04:05.000Z07:00"

// EventLog writes the JSON lines of the fetch step, one shape for all of them:
// {"ts":"2026-11-25T03:40:00.123Z","event":"<name>",<fields in the order given>}.
// A nil *EventLog writes nothing.
type EventLog struct {
	log *slog.Logger
}

// NewEventLog writes lines to w (each with one Write call, so lines of two EventLogs on one
// locked writer never interleave); redact, when set, is applied to every string field.
func NewEventLog(w io.Writer, redact func(string) string) *EventLog {
	if w == nil {
		return nil
	}
	h := slog.NewJSONHandler(w, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 {
				// slog's own keys become the envelope: time -> ts, msg -> event, no level.
				switch a.Key {
				case slog.TimeKey:
					return slog.String("ts", a.Value.Time().UTC().Format(TimestampFormat))
				case slog.MessageKey:
					return slog.String("event", a.Value.String())
				case slog.LevelKey:
					return slog.Attr{}
				}
			}
			if a.Value.Kind() == slog.KindString && redact != nil {
				return slog.String(a.Key, redact(a.Value.String()))
			}
			return a
		},
	})
	return &EventLog{log: slog.New(h)}
}

// Emit writes one line: the event, then the fields as key/value pairs (slog's form).
func (l *EventLog) Emit(name EventName, kv ...any) {
	if l == nil {
		return
	}
	l.log.Info(string(name), kv...)
}

// Metrics are the Prometheus metrics of one fetch.
type Metrics struct {
	Registry        *prometheus.Registry
	BytesTotal      prometheus.Counter
	ObjectsTotal    *prometheus.CounterVec
	RetriesTotal    prometheus.Counter
	ExpectedBytes   prometheus.Gauge
	ExpectedObjects prometheus.Gauge
	Rate            prometheus.Gauge
}

// NewMetrics registers the fetch metrics in a fresh registry (with Go and process collectors).
func NewMetrics() *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		BytesTotal: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "rdf_bulkload_fetch_bytes_total", Help: "Bytes downloaded from the source in this run."}),
		ObjectsTotal: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rdf_bulkload_fetch_objects_total", Help: "Objects finished, by result (fetched, skipped = already complete, failed)."},
			[]string{"result"}),
		RetriesTotal: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "rdf_bulkload_fetch_retries_total", Help: "Requests retried after a transient error."}),
		ExpectedBytes: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "rdf_bulkload_fetch_expected_bytes", Help: "Total size of the dump set."}),
		ExpectedObjects: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "rdf_bulkload_fetch_expected_objects", Help: "Number of objects in the dump set."}),
		Rate: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "rdf_bulkload_fetch_rate_bytes_per_second", Help: "Download rate over the last progress interval."}),
	}
	m.Registry.MustRegister(m.BytesTotal, m.ObjectsTotal, m.RetriesTotal, m.ExpectedBytes, m.ExpectedObjects, m.Rate,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, r := range []string{"fetched", "skipped", "failed"} {
		m.ObjectsTotal.WithLabelValues(r)
	}
	return m
}
