//! The JSON lines the loader writes to stderr, defined here only: each is one object
//! `{"ts":"2026-11-25T03:40:00.123Z","event":"<name>",...fields}` (the fetch step writes the
//! same envelope). A terminal gets text instead (crate::progress_bar).

use std::time::SystemTime;

use serde::Serialize;
use serde_json::{Map, Value};

/// Every event, with its fields; `event` is the variant's snake_case name.
#[derive(Debug, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum JsonEvent {
    /// The plan check's estimate and verdict, before the build starts.
    Plan(Map<String, Value>),
    /// The numbers of the current phase (crate::progress::Snapshot).
    Progress(Map<String, Value>),
    /// A phase ended after `seconds` (or an earlier run completed it).
    PhaseDone { phase: &'static str, seconds: f64 },
    /// The last line: result, per-phase seconds, counts.
    Summary(Map<String, Value>),
    /// The statements parsed show the plan's estimate off by more than
    /// progress::ESTIMATE_MARGIN: more already than it allowed for, or (`final_count`) a
    /// different count at the end of the parse phase. Once per load.
    PlanOff { planned_statements: u64, statements: u64, final_count: bool, message: String },
    /// A worker found a chunk of the Turtle/TriG input `path` (starting at `line`) cut wrongly
    /// by the splitter, so the parse phase's output was discarded and the phase starts over
    /// with that file parsed whole, sequentially (bulkload-pipeline's parse phase).
    ParseRestarted { path: String, line: u64, message: String },
    /// The parse phase kept terms with a warning (bulkload_storage::warnings): counts per kind and the
    /// first few occurrences of each kind (as the build report's `warnings` and
    /// `warning_examples`). Once per load, when there are any.
    Warnings {
        counts: std::collections::BTreeMap<String, u64>,
        examples: Vec<bulkload_storage::warnings::WarningExample>,
    },
    /// The load resumes an earlier run's checkpoint.
    Resuming { path: String, message: String },
    /// The load stopped; its work is kept for a rerun.
    Resumable { path: String, message: String },
    /// A checkpoint was not resumed, and why.
    CheckpointDiscarded { path: String, message: String },
    /// The same load is complete at `--loc`; nothing to do.
    AlreadyComplete { path: String, message: String },
}

impl JsonEvent {
    /// The JSON line, stamped now.
    pub fn json_line(&self) -> String {
        self.json_line_at(SystemTime::now())
    }

    fn json_line_at(&self, at: SystemTime) -> String {
        let body = serde_json::to_string(self).expect("events are JSON");
        // `ts` first, then the tag and the fields as serde writes them.
        format!("{{\"ts\":\"{}\",{}", humantime::format_rfc3339_millis(at), &body[1..])
    }
}

/// The fields of a JSON object (`json!({...})`), for the events that carry a map.
pub fn fields(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        other => panic!("event fields must be an object, not {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn every_line_starts_with_ts_and_event() {
        let at = UNIX_EPOCH + Duration::from_millis(1_795_578_000_123);
        let line = JsonEvent::PhaseDone { phase: "nodes", seconds: 1.5 }.json_line_at(at);
        assert_eq!(line, r#"{"ts":"2026-11-25T03:40:00.123Z","event":"phase_done","phase":"nodes","seconds":1.5}"#);
        let mut m = Map::new();
        m.insert("result".into(), "ok".into());
        let line = JsonEvent::Summary(m).json_line_at(at);
        assert!(line.starts_with(r#"{"ts":"2026-11-25T03:40:00.123Z","event":"summary","result":"ok""#), "{line}");
        let v: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["event"], "summary");
        let line = JsonEvent::CheckpointDiscarded { path: "/w".into(), message: "m".into() }.json_line();
        let v: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["event"], "checkpoint_discarded");
        assert!(line.starts_with("{\"ts\":\"") && v["ts"].as_str().unwrap().ends_with('Z'), "{line}");
    }
}
