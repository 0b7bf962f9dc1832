//! The JSON lines renderer: progress lines, phase ends, notes and the summary, on stderr
//! when it is not a terminal.

use std::io::Write;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::events::{fields, JsonEvent};
use crate::progress::{failed, index_names, peak_rss_bytes, Event, Phase, Progress, Snapshot};

impl Snapshot {
    /// The JSON progress line: `{"ts":..,"event":"progress","phase":"parse","progress":0.42,...}`.
    pub fn json_line(&self) -> String {
        use serde_json::{json, Value};
        let (fraction, eta) = self.fraction_and_eta();
        let mut v = json!({
            "phase": self.phase.name(),
            "progress": (fraction * 1000.0).round() / 1000.0,
        });
        let m = v.as_object_mut().expect("object");
        let mut put = |k: &str, x: Value| {
            m.insert(k.to_string(), x);
        };
        match self.phase {
            Phase::Parse => {
                put("bytes_read", self.bytes_read.into());
                put("bytes_total", self.bytes_total.into());
                put("bytes_per_second", (self.bytes_per_second.round() as u64).into());
                put("statements", self.statements.into());
                if let Some(n) = self.statements_expected() {
                    put("statements_expected", n.into());
                }
                put("statements_per_second", (self.statements_per_second.round() as u64).into());
                put("rejects", self.rejects.into());
                put("warnings", self.warnings.into());
            }
            Phase::Nodes => {
                put("terms_written", self.terms_written.into());
                put("terms_total", self.terms_total.into());
            }
            Phase::Indexes => {
                put("records_written", self.index_records.iter().sum::<u64>().into());
                put("records_total", self.index_expected.iter().sum::<u64>().into());
                let per: serde_json::Map<String, Value> = index_names()
                    .zip(self.index_records.iter())
                    .zip(self.index_expected.iter())
                    .filter(|(_, e)| **e > 0)
                    .map(|((n, r), _)| (n.to_string(), (*r).into()))
                    .collect();
                put("indexes", Value::Object(per));
            }
            _ => {}
        }
        if let Some(eta) = eta {
            put("eta_seconds", (eta.round() as u64).into());
        }
        put("memory_bytes", self.memory_bytes.into());
        put("memory_budget_bytes", self.memory_budget_bytes.into());
        put("resident_bytes", self.resident_bytes.into());
        put("temp_disk_bytes", self.temp_disk_bytes.into());
        put("elapsed_seconds", ((self.elapsed_seconds * 10.0).round() / 10.0).into());
        JsonEvent::Progress(fields(v)).json_line()
    }
}

/// JSON lines on stderr: a progress line when a phase starts and then every `interval`,
/// `phase_done` when it ends, and a summary line at the end.
pub(crate) fn run(p: &Progress, interval: Duration) {
    let mut next = Instant::now() + interval;
    let mut err = std::io::stderr();
    let mut building = false;
    loop {
        let stopping = p.stopping();
        for e in p.take_events() {
            let line = match e {
                Event::Started(Phase::Done | Phase::Plan) => continue,
                Event::Started(phase) => {
                    building = true;
                    next = Instant::now() + interval;
                    // The phase that started, even when a short one has already ended by now.
                    let mut s = p.snapshot();
                    s.phase = phase;
                    s.json_line()
                }
                Event::Ended(ph, s) => {
                    JsonEvent::PhaseDone { phase: ph.name(), seconds: (s * 1000.0).round() / 1000.0 }.json_line()
                }
                Event::Note { json, .. } => json,
            };
            let _ = writeln!(err, "{line}");
        }
        if stopping {
            break;
        }
        if Instant::now() >= next {
            let s = p.snapshot();
            if matches!(s.phase, Phase::Parse | Phase::Nodes | Phase::Indexes | Phase::Finish) {
                let _ = writeln!(err, "{}", s.json_line());
            }
            next = Instant::now() + interval;
        }
        p.wait(next.saturating_duration_since(Instant::now()).min(Duration::from_millis(500)));
    }
    if building || p.already_complete.load(Ordering::Relaxed) {
        // (A load refused before it began, e.g. by the plan, has nothing to sum up.)
        let _ = writeln!(err, "{}", summary_json(p));
    }
}

/// The final line: `{"ts":..,"event":"summary","result":"ok","seconds":..,"phases":[{"name":..,"seconds":..}],..}`.
pub(crate) fn summary_json(p: &Progress) -> String {
    // In order, as the build report's `phases`.
    let phases: Vec<serde_json::Value> = p
        .phase_seconds()
        .into_iter()
        .map(|(ph, s)| serde_json::json!({"name": ph.name(), "seconds": (s * 1000.0).round() / 1000.0}))
        .collect();
    let s = p.snapshot();
    JsonEvent::Summary(fields(serde_json::json!({
        "result": if failed(p) { "failed" } else { "ok" },
        "seconds": (s.elapsed_seconds * 1000.0).round() / 1000.0,
        "phases": phases,
        "statements": s.statements,
        "rejects": s.rejects,
        "warnings": s.warnings,
        "bytes_read": s.bytes_read,
        "terms": s.terms_written,
        "peak_rss_bytes": peak_rss_bytes(),
        "already_complete": p.already_complete.load(Ordering::Relaxed),
    })))
    .json_line()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_lines_carry_the_phase_numbers() {
        let p = Progress::new(1 << 30);
        p.start_parse(1000, 100);
        p.bytes_read.store(250, Ordering::Relaxed);
        p.parse_job_done(42, 0, 900);
        let v: serde_json::Value = serde_json::from_str(&p.snapshot().json_line()).unwrap();
        assert_eq!(v["event"], "progress");
        assert_eq!(v["phase"], "parse");
        assert_eq!(v["progress"], 0.25);
        assert_eq!(v["bytes_read"], 250);
        assert_eq!(v["statements"], 42);
        assert_eq!(v["statements_expected"], 168, "42 statements per 250 of 1000 bytes");
        assert_eq!(v["memory_budget_bytes"], 1u64 << 30);
        assert_eq!(v["memory_bytes"], 1000, "dictionary + tuple buffers");
        p.end_phase(Phase::Parse, 1.0);
        p.end_phase(Phase::Nodes, 1.0);
        p.set_index_expected(10, 0);
        p.index_counter("POS").store(5, Ordering::Relaxed);
        let v: serde_json::Value = serde_json::from_str(&p.snapshot().json_line()).unwrap();
        assert_eq!(v["phase"], "indexes");
        assert_eq!(v["records_written"], 5);
        assert_eq!(v["records_total"], 30);
        assert_eq!(v["indexes"]["POS"], 5);
        assert!(v["indexes"].get("GSPO").is_none(), "quad indexes without quads are left out: {v}");
    }
}
