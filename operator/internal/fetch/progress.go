package fetch

import (
	"encoding/json"
	"io"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Event is one JSON line of progress on stderr.
type Event map[string]any

type progress struct {
	mu     sync.Mutex
	w      io.Writer
	redact func(string) string
}

func (p *progress) emit(event string, fields Event) {
	if p == nil || p.w == nil {
		return
	}
	rec := Event{"ts": time.Now().UTC().Format(time.RFC3339Nano), "event": event}
	for k, v := range fields {
		if s, ok := v.(string); ok && p.redact != nil {
			v = p.redact(s)
		}
		rec[k] = v
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	_, _ = p.w.Write(append(b, '\n'))
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
		prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	for _, r := range []string{"fetched", "skipped", "failed"} {
		m.ObjectsTotal.WithLabelValues(r)
	}
	return m
}
