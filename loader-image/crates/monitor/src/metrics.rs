//! Prometheus metrics of a running load (`--metrics-addr HOST:PORT`): `/metrics` in the
//! text exposition format, taken from [`Progress`] at each scrape.
//!
//! The server lives as long as the load, and `--metrics-linger` after it (until a signal
//! comes), so that a load shorter than a scrape interval is still scraped with its final
//! figures (phase durations, totals); then its port closes, whether the load succeeded or
//! not. The final numbers are also in the build report (`bulkload-report.json`).

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use crate::progress::{index_names, Phase, Progress};

type Labels = Vec<(String, String)>;
type FloatGauge = Gauge<f64, AtomicU64>;

/// The registered metrics; [`Metrics::refresh`] copies the current numbers into them.
struct Metrics {
    registry: Registry,
    phase: Family<Labels, Gauge>,
    statements: Counter,
    rejects: Counter,
    bytes_read: Counter,
    bytes_total: Gauge,
    bytes_rate: FloatGauge,
    statements_rate: FloatGauge,
    terms_written: Counter,
    terms_expected: Gauge,
    index_records: Family<Labels, Counter>,
    memory: Gauge,
    memory_budget: Gauge,
    resident: Gauge,
    temp_disk: Gauge,
    phase_seconds: Family<Labels, FloatGauge>,
    elapsed: FloatGauge,
}

fn label(k: &str, v: &str) -> Labels {
    vec![(k.to_string(), v.to_string())]
}

impl Metrics {
    fn new() -> Metrics {
        let mut r = Registry::default();
        let m = Metrics {
            registry: Registry::default(),
            phase: Family::default(),
            statements: Counter::default(),
            rejects: Counter::default(),
            bytes_read: Counter::default(),
            bytes_total: Gauge::default(),
            bytes_rate: FloatGauge::default(),
            statements_rate: FloatGauge::default(),
            terms_written: Counter::default(),
            terms_expected: Gauge::default(),
            index_records: Family::default(),
            memory: Gauge::default(),
            memory_budget: Gauge::default(),
            resident: Gauge::default(),
            temp_disk: Gauge::default(),
            phase_seconds: Family::default(),
            elapsed: FloatGauge::default(),
        };
        r.register(
            "rdf_bulkload_load_phase",
            "Phase the load is in (1 for the current one): plan, parse, nodes, indexes, finish, done",
            m.phase.clone(),
        );
        r.register(
            "rdf_bulkload_load_statements",
            "Statements parsed so far (before duplicates collapse)",
            m.statements.clone(),
        );
        r.register("rdf_bulkload_load_rejects", "Statements rejected so far (--on-error skip)", m.rejects.clone());
        r.register("rdf_bulkload_load_input_read_bytes", "Compressed input bytes read so far", m.bytes_read.clone());
        r.register("rdf_bulkload_load_input_bytes", "Compressed size of all inputs", m.bytes_total.clone());
        r.register(
            "rdf_bulkload_load_input_read_bytes_per_second",
            "Compressed input bytes read per second, over the parse phase",
            m.bytes_rate.clone(),
        );
        r.register(
            "rdf_bulkload_load_statements_per_second",
            "Statements parsed per second, over the parse phase",
            m.statements_rate.clone(),
        );
        r.register(
            "rdf_bulkload_load_terms_written",
            "Terms written to the node table so far",
            m.terms_written.clone(),
        );
        r.register(
            "rdf_bulkload_load_terms_expected",
            "Upper bound of the terms the node table gets (provisional ids)",
            m.terms_expected.clone(),
        );
        r.register(
            "rdf_bulkload_load_index_records_written",
            "Records packed into each index so far",
            m.index_records.clone(),
        );
        r.register(
            "rdf_bulkload_load_memory_bytes",
            "Memory accounted against the budget (dictionary and tuple buffers, remap table, sort buffers)",
            m.memory.clone(),
        );
        r.register("rdf_bulkload_load_memory_budget_bytes", "The memory budget (--memory)", m.memory_budget.clone());
        r.register(
            "rdf_bulkload_load_resident_memory_bytes",
            "Resident set size of the loader process",
            m.resident.clone(),
        );
        r.register(
            "rdf_bulkload_load_temp_disk_bytes",
            "Temporary disk in use (spill files under --tmpdir)",
            m.temp_disk.clone(),
        );
        r.register(
            "rdf_bulkload_load_phase_duration_seconds",
            "Seconds each completed phase took",
            m.phase_seconds.clone(),
        );
        r.register("rdf_bulkload_load_elapsed_seconds", "Seconds since the load started", m.elapsed.clone());
        Metrics { registry: r, ..m }
    }

    fn refresh(&self, p: &Progress) {
        let s = p.snapshot();
        for ph in [Phase::Plan, Phase::Parse, Phase::Nodes, Phase::Indexes, Phase::Finish, Phase::Done] {
            self.phase.get_or_create(&label("phase", ph.name())).set(i64::from(ph == s.phase));
        }
        // Counters: a parse pass that a restart discarded stays counted.
        let [bytes_read, statements, rejects] = p.parse_work_total();
        self.statements.inner().store(statements, Ordering::Relaxed);
        self.rejects.inner().store(rejects, Ordering::Relaxed);
        self.bytes_read.inner().store(bytes_read, Ordering::Relaxed);
        self.bytes_total.set(s.bytes_total as i64);
        self.bytes_rate.set(s.bytes_per_second);
        self.statements_rate.set(s.statements_per_second);
        self.terms_written.inner().store(s.terms_written, Ordering::Relaxed);
        self.terms_expected.set(s.terms_total as i64);
        for (i, name) in index_names().enumerate() {
            self.index_records
                .get_or_create(&label("index", name))
                .inner()
                .store(s.index_records[i], Ordering::Relaxed);
        }
        self.memory.set(s.memory_bytes as i64);
        self.memory_budget.set(s.memory_budget_bytes as i64);
        self.resident.set(s.resident_bytes as i64);
        self.temp_disk.set(s.temp_disk_bytes as i64);
        for (ph, secs) in p.phase_seconds() {
            self.phase_seconds.get_or_create(&label("phase", ph.name())).set(secs);
        }
        self.elapsed.set(s.elapsed_seconds);
    }

    fn render(&self, p: &Progress) -> String {
        self.refresh(p);
        let mut out = String::new();
        encode(&mut out, &self.registry).expect("writing to a String");
        out
    }
}

/// The metrics server cannot take its address (a usage error of the load).
#[derive(Debug, thiserror::Error)]
#[error("--metrics-addr {addr}: cannot listen: {reason}")]
pub struct CannotListen {
    addr: SocketAddr,
    reason: String,
}

/// The HTTP server behind `--metrics-addr`.
pub struct MetricsServer {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<()>,
}

impl MetricsServer {
    /// Listens on `addr` (before the load starts, so a taken port fails fast).
    pub fn start(addr: SocketAddr, progress: Arc<Progress>) -> Result<MetricsServer, CannotListen> {
        let server = tiny_http::Server::http(addr).map_err(|e| CannotListen { addr, reason: e.to_string() })?;
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let thread = std::thread::Builder::new()
            .name("metrics".into())
            .spawn(move || {
                let metrics = Metrics::new();
                while !stopping.load(Ordering::Relaxed) {
                    let req = match server.recv_timeout(Duration::from_millis(100)) {
                        Ok(Some(r)) => r,
                        Ok(None) => continue,
                        Err(_) => break,
                    };
                    let resp = if req.url() == "/metrics" || req.url().starts_with("/metrics?") {
                        let header = tiny_http::Header::from_bytes(
                            &b"Content-Type"[..],
                            &b"text/plain; version=0.0.4; charset=utf-8"[..],
                        )
                        .expect("static header");
                        tiny_http::Response::from_string(metrics.render(&progress)).with_header(header)
                    } else {
                        tiny_http::Response::from_string("rdf-bulkload: metrics are at /metrics\n")
                            .with_status_code(404)
                    };
                    let _ = req.respond(resp);
                }
            })
            .expect("spawn metrics server");
        Ok(MetricsServer { stop, thread })
    }

    /// Goes on serving for `linger`, or until `interrupt` is set (SIGTERM, SIGINT).
    pub fn linger(&self, linger: Duration, interrupt: &AtomicBool) {
        let end = std::time::Instant::now() + linger;
        while !interrupt.load(Ordering::Relaxed) {
            let left = end.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                break;
            }
            std::thread::sleep(left.min(Duration::from_millis(100)));
        }
    }

    /// Stops serving; the port is closed when this returns.
    pub fn stop(self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.thread.join();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exposition_names_every_metric_with_help_and_current_values() {
        let p = Progress::new(512 << 20);
        p.start_parse(1 << 20, 0);
        p.bytes_read.store(4096, Ordering::Relaxed);
        p.parse_job_done(7, 0, 0);
        let text = Metrics::new().render(&p);
        for name in [
            "rdf_bulkload_load_statements_total 7",
            "rdf_bulkload_load_input_read_bytes_total 4096",
            "rdf_bulkload_load_phase{phase=\"parse\"} 1",
            "rdf_bulkload_load_phase{phase=\"nodes\"} 0",
            "rdf_bulkload_load_memory_budget_bytes 536870912",
            "# HELP rdf_bulkload_load_temp_disk_bytes ",
            "rdf_bulkload_load_index_records_written_total{index=\"SPO\"} 0",
        ] {
            assert!(text.contains(name), "{name:?} missing from\n{text}");
        }
    }

    /// A parse that starts over (a Turtle file's split proved wrong) sets the progress back
    /// to 0; the counters keep what the discarded pass did (Prometheus reads a counter that
    /// goes down as a restart of the process).
    #[test]
    fn counters_never_go_back_when_the_parse_restarts() {
        let p = Progress::new(512 << 20);
        p.start_parse(1 << 20, 0);
        p.bytes_read.store(4096, Ordering::Relaxed);
        p.parse_job_done(7, 2, 0);
        p.restart_parse();
        assert_eq!(p.snapshot().statements, 0, "the progress starts over");
        p.bytes_read.store(100, Ordering::Relaxed);
        p.parse_job_done(3, 1, 0);
        let text = Metrics::new().render(&p);
        for name in [
            "rdf_bulkload_load_statements_total 10",
            "rdf_bulkload_load_input_read_bytes_total 4196",
            "rdf_bulkload_load_rejects_total 3",
        ] {
            assert!(text.contains(name), "{name:?} missing from\n{text}");
        }
    }
}
