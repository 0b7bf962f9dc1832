//! What a load is asked to do: the options the command line gives (a leaf module: it
//! imports nothing of the pipeline but its error type).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bulkload_monitor::monitor::MonitorOptions;

use crate::error::LoadError;
use tdb2_nodeid::JenaVersion;

/// What to do with a statement the parser rejects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnError {
    /// Stop at the first bad statement (file, line, column, reason).
    Strict,
    /// Write it to the rejects file and go on, up to `max_rejects`.
    Skip,
}

impl OnError {
    /// The name the command line, the report and the checkpoint use.
    pub(crate) fn name(self) -> &'static str {
        match self {
            OnError::Strict => "strict",
            OnError::Skip => "skip",
        }
    }
}

#[derive(Clone, Debug)]
pub struct LoadOptions {
    /// The database directory to create (Jena's `--loc`).
    pub loc: PathBuf,
    pub inputs: Vec<PathBuf>,
    pub on_error: OnError,
    pub max_rejects: u64,
    /// Default: `<loc>.rejects.jsonl`.
    pub rejects: Option<PathBuf>,
    /// Extra copy of the build report.
    pub report: Option<PathBuf>,
    /// The summary of the build report (`Summary`): the figures and where the copy is.
    pub summary: Option<PathBuf>,
    /// Where spill files go (default: beside the database).
    pub tmpdir: Option<PathBuf>,
    pub threads: usize,
    /// Memory budget in bytes for the whole process.
    pub memory: u64,
    /// Base IRI for relative IRIs in Turtle/TriG (default: the file's `file://` URL, as Jena).
    pub base: Option<String>,
    /// The Jena whose inline rules the database follows (`--jena`; docs/tdb2-format.md §12):
    /// the Jena that serves it must be that one.
    pub jena: JenaVersion,
    /// Replace an existing database at `loc`.
    pub replace: bool,
    /// A JSON report of where the inputs came from (the fetch step's), copied into the
    /// build report as `source`.
    pub source_report: Option<PathBuf>,
    /// Set (by a signal handler) to stop at the next safe point with [`LoadError::Interrupted`].
    pub interrupt: Arc<AtomicBool>,
    /// Discard the checkpoint of an earlier run of this load instead of resuming it.
    pub fresh: bool,
    /// Time between two checkpoints of the parse phase while it runs (None: only at its end).
    pub checkpoint_interval: Option<Duration>,
    /// Progress bars or JSON lines, and Prometheus metrics, while the load runs.
    pub monitor: MonitorOptions,
    /// Start even when the plan (crate::plan) says the build cannot fit.
    pub skip_plan_check: bool,
}

impl LoadOptions {
    pub(crate) fn check_interrupt(&self) -> Result<(), LoadError> {
        if self.interrupt.load(Ordering::Relaxed) {
            Err(LoadError::Interrupted)
        } else {
            Ok(())
        }
    }

    /// Worker threads (at least one).
    pub(crate) fn threads(&self) -> usize {
        self.threads.max(1)
    }
}
