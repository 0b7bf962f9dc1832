//! What a running load is doing, for people and machines: one [`Progress`] of atomics
//! that the phases bump, read by three renderers — progress bars on a terminal
//! ([`crate::progress_bar`]), JSON lines otherwise, and Prometheus metrics
//! ([`crate::metrics`]).
//!
//! The phases only store numbers; they never wait for a renderer. Phase changes go
//! through a small event queue so that a renderer sees every phase, however short.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use extsort::SpillDir;
use tdb2::{QUAD_INDEXES, TRIPLE_INDEXES};

use bulkload_storage::failpoint::crash_point;

use crate::events::JsonEvent;

/// How far off the plan's statement estimate may be before the load says so
/// ([`Progress::check_plan`], event `plan_off`): what `plan` aims for on a dump whose start is
/// unlike the rest.
pub const ESTIMATE_MARGIN: f64 = 0.10;

/// The phases of a load, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum Phase {
    /// Inputs detected and sampled, resources checked.
    Plan = 0,
    /// Parse and encode: the dictionary and the tuple logs.
    Parse = 1,
    /// The node table, in MD5 order.
    Nodes = 2,
    /// Sort and pack every index.
    Indexes = 3,
    /// Prefixes, statistics, journal, fsync, report, rename.
    Finish = 4,
    /// Over (successfully or not).
    Done = 5,
}

impl Phase {
    pub fn name(self) -> &'static str {
        match self {
            Phase::Plan => "plan",
            Phase::Parse => "parse",
            Phase::Nodes => "nodes",
            Phase::Indexes => "indexes",
            Phase::Finish => "finish",
            Phase::Done => "done",
        }
    }
    fn from_u8(v: u8) -> Phase {
        match v {
            0 => Phase::Plan,
            1 => Phase::Parse,
            2 => Phase::Nodes,
            3 => Phase::Indexes,
            4 => Phase::Finish,
            _ => Phase::Done,
        }
    }
    pub(crate) fn next(self) -> Phase {
        Phase::from_u8(self as u8 + 1)
    }
}

/// Names of the indexes in the order of [`Progress::index_records`].
pub(crate) fn index_names() -> impl Iterator<Item = &'static str> {
    TRIPLE_INDEXES.iter().map(|(n, _)| *n).chain(QUAD_INDEXES.iter().map(|(n, _)| *n))
}
const INDEXES: usize = TRIPLE_INDEXES.len() + QUAD_INDEXES.len();

/// A counter on a cache line of its own: index builders on different threads bump theirs
/// without contending.
#[derive(Default)]
#[repr(align(64))]
pub(crate) struct PaddedCounter(pub AtomicU64);

/// Something that happened, for renderers that must see every phase.
#[derive(Clone, Debug)]
pub(crate) enum Event {
    Started(Phase),
    Ended(Phase, f64),
    Note { json: String, text: String },
}

/// The live state of one load.
pub struct Progress {
    phase: AtomicU8,
    /// Compressed input bytes read so far (shared with the input readers).
    pub bytes_read: Arc<AtomicU64>,
    /// Compressed size of all inputs.
    pub(crate) bytes_total: AtomicU64,
    /// Statements parsed (before duplicates collapse).
    pub statements: AtomicU64,
    pub rejects: AtomicU64,
    /// Terms kept with a warning so far (bulkload_storage::warnings), of the completed parse jobs.
    pub warnings: AtomicU64,
    /// Bytes read, statements and rejects of parse passes a restart discarded: what the
    /// three above held before [`restart_parse`](Self::restart_parse) set them to 0. The
    /// exported counters add them, so that they never go back.
    discarded: [AtomicU64; 3],
    /// Terms appended to the node table.
    pub terms_written: AtomicU64,
    /// Upper bound of `terms_written` (provisional ids handed out; a term seen again after
    /// its dictionary shard spilled has two).
    pub(crate) terms_total: AtomicU64,
    /// Records packed per index (see [`index_names`]).
    pub(crate) index_records: [PaddedCounter; INDEXES],
    /// Upper bound per index: tuples logged for it (before duplicates collapse).
    pub(crate) index_expected: [AtomicU64; INDEXES],
    /// Memory the load has accounted against its budget: dictionary and tuple buffers while
    /// parsing, id remap table and sort buffers later.
    pub memory_bytes: AtomicU64,
    pub(crate) memory_budget: AtomicU64,
    /// Tuple buffers of the parse phase, counted in `memory_bytes` with the dictionary.
    reserved: AtomicU64,
    spill: OnceLock<Arc<SpillDir>>,
    started: Instant,
    phase_started: Mutex<Instant>,
    /// Completed phases and their seconds (what the build report's `phases` holds).
    done: Mutex<Vec<(Phase, f64)>>,
    events: Mutex<VecDeque<Event>>,
    wake: Condvar,
    stopping: AtomicBool,
    failed: AtomicBool,
    /// The run found the same load complete at `--loc` and did nothing.
    pub already_complete: AtomicBool,
    /// The plan's statement estimate (0: no plan), and whether the load said it was off.
    pub planned_statements: AtomicU64,
    plan_off_told: AtomicBool,
}

impl Progress {
    pub fn new(memory_budget: u64) -> Arc<Progress> {
        Arc::new(Progress {
            phase: AtomicU8::new(Phase::Plan as u8),
            bytes_read: Arc::new(AtomicU64::new(0)),
            bytes_total: AtomicU64::new(0),
            statements: AtomicU64::new(0),
            rejects: AtomicU64::new(0),
            warnings: AtomicU64::new(0),
            discarded: Default::default(),
            terms_written: AtomicU64::new(0),
            terms_total: AtomicU64::new(0),
            index_records: Default::default(),
            index_expected: Default::default(),
            memory_bytes: AtomicU64::new(0),
            memory_budget: AtomicU64::new(memory_budget),
            reserved: AtomicU64::new(0),
            spill: OnceLock::new(),
            started: Instant::now(),
            phase_started: Mutex::new(Instant::now()),
            done: Mutex::new(Vec::new()),
            events: Mutex::new(VecDeque::new()),
            wake: Condvar::new(),
            stopping: AtomicBool::new(false),
            failed: AtomicBool::new(false),
            already_complete: AtomicBool::new(false),
            planned_statements: AtomicU64::new(0),
            plan_off_told: AtomicBool::new(false),
        })
    }

    pub(crate) fn phase(&self) -> Phase {
        Phase::from_u8(self.phase.load(Ordering::Relaxed))
    }

    fn push(&self, e: Event) {
        self.events.lock().expect("progress events").push_back(e);
        self.wake.notify_all();
    }

    /// Enters a phase.
    pub(crate) fn start_phase(&self, phase: Phase) {
        self.phase.store(phase as u8, Ordering::Relaxed);
        *self.phase_started.lock().expect("progress") = Instant::now();
        self.push(Event::Started(phase));
        // A delay point for the tests (FAILPOINTS="progress.<phase>=sleep(ms)"); see failpoint.rs.
        crash_point(match phase {
            Phase::Plan => "progress.plan",
            Phase::Parse => "progress.parse",
            Phase::Nodes => "progress.nodes",
            Phase::Indexes => "progress.indexes",
            Phase::Finish => "progress.finish",
            Phase::Done => "progress.done",
        });
    }

    /// Ends `phase` after `seconds`, and enters the next one (after finish: done).
    pub fn end_phase(&self, phase: Phase, seconds: f64) {
        if phase == Phase::Parse {
            self.check_plan(true);
        }
        self.done.lock().expect("progress").push((phase, seconds));
        self.push(Event::Ended(phase, seconds));
        self.start_phase(phase.next());
    }

    /// The spill directory whose bytes are the temp disk in use.
    pub fn set_spill(&self, spill: &Arc<SpillDir>) {
        let _ = self.spill.set(spill.clone());
    }

    /// Temporary disk in use now (spill files: dictionary runs, tuple logs, sort runs).
    pub(crate) fn temp_disk_bytes(&self) -> u64 {
        self.spill.get().map_or(0, |s| s.bytes_in_use())
    }

    /// Enters the parse phase: `bytes_total` compressed bytes to read, `tuple_buffers`
    /// bytes of tuple buffers besides the dictionary.
    pub fn start_parse(&self, bytes_total: u64, tuple_buffers: u64) {
        self.bytes_total.store(bytes_total, Ordering::Relaxed);
        self.reserved.store(tuple_buffers, Ordering::Relaxed);
        self.memory_bytes.store(tuple_buffers, Ordering::Relaxed);
        self.start_phase(Phase::Parse);
    }

    /// The parse phase starts over, its output discarded: nothing read or parsed yet.
    pub fn restart_parse(&self) {
        self.warnings.store(0, Ordering::Relaxed);
        for (now, discarded) in [&*self.bytes_read, &self.statements, &self.rejects].into_iter().zip(&self.discarded) {
            discarded.fetch_add(now.swap(0, Ordering::Relaxed), Ordering::Relaxed);
        }
    }

    /// Bytes read, statements and rejects of every parse pass, discarded ones included: what
    /// the metrics export as counters.
    pub(crate) fn parse_work_total(&self) -> [u64; 3] {
        let now = [&*self.bytes_read, &self.statements, &self.rejects].map(|a| a.load(Ordering::Relaxed));
        std::array::from_fn(|i| now[i] + self.discarded[i].load(Ordering::Relaxed))
    }

    /// A parse job is done: its statements (counted once per job, not per statement), the
    /// rejects so far and the dictionary's memory now.
    pub fn parse_job_done(&self, statements: u64, rejects: u64, dictionary_bytes: u64) {
        self.statements.fetch_add(statements, Ordering::Relaxed);
        self.rejects.store(rejects, Ordering::Relaxed);
        self.memory_bytes.store(dictionary_bytes + self.reserved.load(Ordering::Relaxed), Ordering::Relaxed);
        self.check_plan(false);
        // A delay point for the tests: slows the parse phase job by job.
        crash_point("progress.parse_job");
    }

    /// Tells once when the statements parsed show the plan's estimate off by more than
    /// [`ESTIMATE_MARGIN`]. Only what is certain: more statements already than the plan
    /// allowed for, or the count at the end of parsing (`end`). Extrapolating the count so
    /// far is not: a dump whose start is unlike the rest misleads it as it misled a
    /// head-only plan (BSBM 1M half read: +57%).
    fn check_plan(&self, end: bool) {
        let planned = self.planned_statements.load(Ordering::Relaxed);
        let statements = self.statements.load(Ordering::Relaxed);
        if planned == 0 {
            return;
        }
        let off = statements as f64 / planned as f64 - 1.0;
        if !(off > ESTIMATE_MARGIN || end && off < -ESTIMATE_MARGIN) || self.plan_off_told.swap(true, Ordering::Relaxed)
        {
            return;
        }
        let message = format!(
            "the plan estimated ~{planned} statements; {} {statements} ({:+.0}%): its memory and disk figures are off as much",
            if end { "the input has" } else { "already parsed" },
            off * 100.0
        );
        let json =
            JsonEvent::PlanOff { planned_statements: planned, statements, final_count: end, message: message.clone() }
                .json_line();
        self.note(json, format!("warning: {message}"));
    }

    /// Before the node-table phase: it writes at most `terms` terms.
    pub fn expect_terms(&self, terms: u64) {
        self.terms_total.store(terms, Ordering::Relaxed);
    }

    /// Before the index phase: it builds from `triples` and `quads` logged tuples.
    pub fn expect_index_records(&self, triples: u64, quads: u64) {
        self.set_index_expected(triples, quads);
    }

    /// The index phase's memory: `resident` (remap table, tuple buffers) plus the sort
    /// buffers that `threads` index builders fill, each up to its share of `sort_budget`
    /// or its tuples, whichever is smaller.
    pub fn start_index_memory(&self, resident: u64, sort_budget: u64, threads: usize) {
        let per_index =
            |i: usize| self.index_expected[i].load(Ordering::Relaxed) * if i < TRIPLE_INDEXES.len() { 24 } else { 32 };
        let largest = (0..INDEXES).map(per_index).max().unwrap_or(0);
        let threads = threads.max(1) as u64;
        let sorting = threads * largest.min(sort_budget / threads);
        self.memory_bytes.store(resident + sorting, Ordering::Relaxed);
    }

    /// Adds the tuples remapped once and shared by the index builders (held until the phase
    /// ends) to the index phase's memory.
    pub fn add_index_memory(&self, bytes: u64) {
        self.memory_bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    /// A message for the renderers: `json` for JSON lines, `text` for a terminal.
    pub fn note(&self, json: String, text: String) {
        self.push(Event::Note { json, text });
    }

    /// The counter of the index called `name`.
    pub fn index_counter(&self, name: &str) -> &AtomicU64 {
        let i = index_names().position(|n| n == name).unwrap_or(0);
        &self.index_records[i].0
    }

    /// Upper bounds of the records each index will get: the triples and quads logged.
    pub(crate) fn set_index_expected(&self, triples: u64, quads: u64) {
        for (i, slot) in self.index_expected.iter().enumerate() {
            slot.store(if i < TRIPLE_INDEXES.len() { triples } else { quads }, Ordering::Relaxed);
        }
    }

    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    pub(crate) fn phase_elapsed(&self) -> Duration {
        self.phase_started.lock().expect("progress").elapsed()
    }

    /// Completed phases and their seconds, in order.
    pub(crate) fn phase_seconds(&self) -> Vec<(Phase, f64)> {
        self.done.lock().expect("progress").clone()
    }

    pub(crate) fn take_events(&self) -> Vec<Event> {
        self.events.lock().expect("progress events").drain(..).collect()
    }

    /// Waits until an event arrives, the load stops, or `timeout` passes.
    pub(crate) fn wait(&self, timeout: Duration) {
        let q = self.events.lock().expect("progress events");
        if q.is_empty() && !self.stopping.load(Ordering::Relaxed) {
            let _ = self.wake.wait_timeout(q, timeout);
        }
    }

    pub(crate) fn stopping(&self) -> bool {
        self.stopping.load(Ordering::Relaxed)
    }

    /// The load is over (`ok`: how it ended): the renderers draw the end and stop.
    pub(crate) fn stop(&self, ok: bool) {
        if !ok {
            self.failed.store(true, Ordering::Relaxed);
        }
        self.phase.store(Phase::Done as u8, Ordering::Relaxed);
        self.stopping.store(true, Ordering::Relaxed);
        self.wake.notify_all();
    }

    /// A snapshot of the numbers, as the JSON progress lines and the metrics show them.
    pub(crate) fn snapshot(&self) -> Snapshot {
        let phase = self.phase();
        let bytes_read = self.bytes_read.load(Ordering::Relaxed);
        let bytes_total = self.bytes_total.load(Ordering::Relaxed);
        let statements = self.statements.load(Ordering::Relaxed);
        // Rates over the parse phase: while it runs, its elapsed time; after it, its length.
        let parse_seconds = match phase {
            Phase::Plan => 0.0,
            Phase::Parse => self.phase_elapsed().as_secs_f64(),
            _ => self.phase_seconds().iter().find(|(p, _)| *p == Phase::Parse).map_or(0.0, |(_, s)| *s),
        };
        let per_second = |n: u64| if parse_seconds > 0.0 { n as f64 / parse_seconds } else { 0.0 };
        Snapshot {
            phase,
            bytes_read,
            bytes_total,
            bytes_per_second: per_second(bytes_read),
            statements,
            statements_per_second: per_second(statements),
            rejects: self.rejects.load(Ordering::Relaxed),
            warnings: self.warnings.load(Ordering::Relaxed),
            terms_written: self.terms_written.load(Ordering::Relaxed),
            terms_total: self.terms_total.load(Ordering::Relaxed),
            index_records: std::array::from_fn(|i| self.index_records[i].0.load(Ordering::Relaxed)),
            index_expected: std::array::from_fn(|i| self.index_expected[i].load(Ordering::Relaxed)),
            memory_bytes: self.memory_bytes.load(Ordering::Relaxed),
            memory_budget_bytes: self.memory_budget.load(Ordering::Relaxed),
            resident_bytes: resident_bytes(),
            temp_disk_bytes: self.temp_disk_bytes(),
            elapsed_seconds: self.elapsed().as_secs_f64(),
            phase_seconds: self.phase_elapsed().as_secs_f64(),
        }
    }
}

/// Numbers of a moment.
#[derive(Clone, Debug)]
pub(crate) struct Snapshot {
    pub phase: Phase,
    pub bytes_read: u64,
    pub(crate) bytes_total: u64,
    pub(crate) bytes_per_second: f64,
    pub statements: u64,
    pub(crate) statements_per_second: f64,
    pub rejects: u64,
    pub warnings: u64,
    pub terms_written: u64,
    pub(crate) terms_total: u64,
    pub(crate) index_records: [u64; INDEXES],
    pub(crate) index_expected: [u64; INDEXES],
    pub memory_bytes: u64,
    pub memory_budget_bytes: u64,
    pub(crate) resident_bytes: u64,
    pub(crate) temp_disk_bytes: u64,
    pub(crate) elapsed_seconds: f64,
    /// Seconds in the current phase.
    pub(crate) phase_seconds: f64,
}

impl Snapshot {
    /// The statements the whole input will give at the rate per compressed byte seen so far
    /// (parse phase). An extrapolation, as the plan's: see `Progress::check_plan`.
    pub(crate) fn statements_expected(&self) -> Option<u64> {
        (self.phase == Phase::Parse && self.bytes_read > 0).then(|| {
            (self.statements as f64 * self.bytes_total.max(self.bytes_read) as f64 / self.bytes_read as f64).round()
                as u64
        })
    }

    /// Fraction of the current phase done (0 when unknown), and the seconds it still needs
    /// at the rate so far.
    pub(crate) fn fraction_and_eta(&self) -> (f64, Option<f64>) {
        let (done, total) = match self.phase {
            Phase::Parse => (self.bytes_read, self.bytes_total),
            Phase::Nodes => (self.terms_written, self.terms_total),
            Phase::Indexes => (self.index_records.iter().sum(), self.index_expected.iter().sum()),
            Phase::Done => (1, 1),
            _ => (0, 0),
        };
        if total == 0 {
            return (0.0, None);
        }
        let f = (done as f64 / total as f64).min(1.0);
        let eta = (f > 0.0).then(|| self.phase_seconds * (1.0 - f) / f);
        (f, eta)
    }
}

/// The load's own state changes (not progress), for the renderers: a JSON line, or text
/// on a terminal.
#[derive(Clone, Copy, Debug)]
pub enum StateEvent {
    Resuming,
    Resumable,
    CheckpointDiscarded,
    AlreadyComplete,
}

/// Tells the renderers about a state change of the load at `path`.
pub fn log_event(progress: &Progress, event: StateEvent, path: &Path, message: &str) {
    let (path_text, message_text) = (path.display().to_string(), message.to_string());
    let e = match event {
        StateEvent::Resuming => JsonEvent::Resuming { path: path_text, message: message_text },
        StateEvent::Resumable => JsonEvent::Resumable { path: path_text, message: message_text },
        StateEvent::CheckpointDiscarded => JsonEvent::CheckpointDiscarded { path: path_text, message: message_text },
        StateEvent::AlreadyComplete => JsonEvent::AlreadyComplete { path: path_text, message: message_text },
    };
    progress.note(e.json_line(), format!("{message} ({})", path.display()));
}

/// Resident set size of this process now (from /proc/self/statm; 0 where unavailable).
pub(crate) fn resident_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| {
            // SAFETY: sysconf has no memory-safety preconditions.
            let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
            pages * page.max(4096) as u64
        })
}

/// Peak resident set size of this process (VmHWM), in bytes.
pub fn peak_rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("VmHWM:")).and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

pub(crate) fn failed(p: &Progress) -> bool {
    p.failed.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_advance_in_order_and_every_one_is_an_event() {
        let p = Progress::new(1 << 30);
        p.start_phase(Phase::Parse);
        p.end_phase(Phase::Parse, 1.5);
        assert_eq!(p.phase(), Phase::Nodes);
        p.end_phase(Phase::Nodes, 0.5);
        p.end_phase(Phase::Indexes, 0.25);
        p.end_phase(Phase::Finish, 0.125);
        assert_eq!(p.phase(), Phase::Done);
        let names: Vec<String> = p
            .take_events()
            .into_iter()
            .map(|e| match e {
                Event::Started(ph) => format!("+{}", ph.name()),
                Event::Ended(ph, _) => format!("-{}", ph.name()),
                Event::Note { text, .. } => text,
            })
            .collect();
        assert_eq!(
            names,
            ["+parse", "-parse", "+nodes", "-nodes", "+indexes", "-indexes", "+finish", "-finish", "+done"]
        );
        let secs: Vec<f64> = p.phase_seconds().into_iter().map(|(_, s)| s).collect();
        assert_eq!(secs, [1.5, 0.5, 0.25, 0.125]);
    }

    fn plan_off_notes(p: &Progress) -> Vec<String> {
        p.take_events()
            .into_iter()
            .filter_map(|e| match e {
                Event::Note { json, .. } if json.contains("\"plan_off\"") => Some(json),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_plan_off_by_more_than_the_margin_is_told_once() {
        let p = Progress::new(1 << 30);
        p.planned_statements.store(1000, Ordering::Relaxed);
        p.start_parse(100, 0);
        p.parse_job_done(1090, 0, 0); // within the margin: nothing yet
        assert!(plan_off_notes(&p).is_empty());
        p.parse_job_done(20, 0, 0); // 1110: beyond it
        p.parse_job_done(500, 0, 0);
        p.end_phase(Phase::Parse, 1.0);
        let notes = plan_off_notes(&p);
        assert_eq!(notes.len(), 1, "{notes:?}");
        let v: serde_json::Value = serde_json::from_str(&notes[0]).unwrap();
        assert_eq!((v["planned_statements"].as_u64(), v["statements"].as_u64()), (Some(1000), Some(1110)));
        assert_eq!(v["final_count"], false);
        // Too few is certain only at the end of parsing.
        let p = Progress::new(1 << 30);
        p.planned_statements.store(1000, Ordering::Relaxed);
        p.start_parse(100, 0);
        p.parse_job_done(850, 0, 0);
        assert!(plan_off_notes(&p).is_empty());
        p.end_phase(Phase::Parse, 1.0);
        let notes = plan_off_notes(&p);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].contains("\"final_count\":true") && notes[0].contains("-15%"), "{}", notes[0]);
        // Within the margin at the end: nothing.
        let p = Progress::new(1 << 30);
        p.planned_statements.store(1000, Ordering::Relaxed);
        p.start_parse(100, 0);
        p.parse_job_done(950, 0, 0);
        p.end_phase(Phase::Parse, 1.0);
        assert!(plan_off_notes(&p).is_empty());
    }
}
