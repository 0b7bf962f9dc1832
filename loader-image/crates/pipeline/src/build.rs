//! The context of one build (the loader's "scope", as the operator has one per
//! reconcile): what every phase reads — options, inputs, memory budget, work directory,
//! progress — and the checkpoint each phase ends with.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use extsort::SpillDir;
use rdf_input::InputFile;

use bulkload_monitor::progress::{Phase, Progress};
use bulkload_storage::checkpoint::Checkpoint;

use crate::budget::MemoryPlan;
use crate::error::LoadError;
use crate::options::LoadOptions;
use crate::report::PhaseReport;
use crate::workdir::Places;

/// Times the phases, for the progress renderers and the build report.
pub(crate) struct Timer {
    pub(crate) phases: Vec<PhaseReport>,
    at: Instant,
    pub(crate) progress: Arc<Progress>,
}

impl Timer {
    /// Starts timing at `at` (the load's start: the first phase includes the setup).
    pub(crate) fn new(at: Instant, progress: Arc<Progress>) -> Timer {
        Timer { phases: Vec::new(), at, progress }
    }

    /// Ends a phase; returns its seconds.
    pub(crate) fn lap(&mut self, phase: Phase) -> f64 {
        let now = Instant::now();
        let seconds = (now - self.at).as_secs_f64();
        self.progress.end_phase(phase, seconds); // shown by the progress renderer
        self.phases.push(PhaseReport { name: phase.name().to_string(), seconds });
        self.at = now;
        seconds
    }

    /// A phase an earlier run completed (its seconds from the checkpoint).
    pub(crate) fn resumed(&mut self, phase: Phase, seconds: f64) {
        self.progress.end_phase(phase, seconds);
        self.phases.push(PhaseReport { name: phase.name().to_string(), seconds });
        self.at = Instant::now();
    }
}

/// One build under way: set up by crate::load, passed through the phases in order.
pub(crate) struct Build<'a> {
    pub(crate) opts: &'a LoadOptions,
    pub(crate) files: &'a [InputFile],
    /// Where rejected statements go (`--rejects`, or beside the database).
    pub(crate) rejects_path: &'a Path,
    pub(crate) places: &'a Places,
    /// The work directory: spill files and the checkpoint.
    pub(crate) spill: &'a Arc<SpillDir>,
    pub(crate) budget: MemoryPlan,
    pub(crate) threads: usize,
    /// What is durable so far; each phase records its end here and saves it.
    pub(crate) checkpoint: Checkpoint,
    pub(crate) timer: Timer,
    /// The fetch step's report (`--source-report`), for the build report.
    pub(crate) source: Option<serde_json::Value>,
    pub(crate) started: Instant,
    /// The step an earlier run checkpointed after, when this run resumed one.
    pub(crate) resumed_after: Option<String>,
}

/// What crate::load sets up before the phases run.
pub(crate) struct Setup<'a> {
    pub(crate) opts: &'a LoadOptions,
    pub(crate) files: &'a [InputFile],
    pub(crate) rejects_path: &'a Path,
    pub(crate) places: &'a Places,
    pub(crate) spill: &'a Arc<SpillDir>,
}

impl<'a> Build<'a> {
    /// Shares out the memory budget; refuses (exit 5) one too small for the threads.
    pub(crate) fn new(
        setup: Setup<'a>,
        checkpoint: Checkpoint,
        timer: Timer,
        source: Option<serde_json::Value>,
        started: Instant,
    ) -> Result<Build<'a>, LoadError> {
        let Setup { opts, files, rejects_path, places, spill } = setup;
        let threads = opts.threads();
        let bzip2 = files.iter().any(|f| f.compression == rdf_input::Compression::Bzip2);
        let budget = MemoryPlan::new(opts.memory, threads, bzip2)?;
        let resumed_after = resumed_after(&checkpoint);
        Ok(Build {
            opts,
            files,
            rejects_path,
            places,
            spill,
            budget,
            threads,
            checkpoint,
            timer,
            source,
            started,
            resumed_after,
        })
    }

    pub(crate) fn progress(&self) -> Arc<Progress> {
        self.timer.progress.clone()
    }

    /// The work directory (spill files and the checkpoint).
    pub(crate) fn work_dir(&self) -> PathBuf {
        self.spill.path().to_path_buf()
    }

    /// The generation directory of the database being built (`Data-0001`).
    pub(crate) fn gen_dir(&self) -> &'a Path {
        self.places.gen_dir.as_path()
    }

    /// Makes the checkpoint durable: what a rerun resumes from.
    pub(crate) fn save_checkpoint(&self) -> Result<(), LoadError> {
        save_checkpoint(&self.checkpoint, self.spill.path())
    }
}

/// Saves `cp` in the work directory `work`.
pub(crate) fn save_checkpoint(cp: &Checkpoint, work: &Path) -> Result<(), LoadError> {
    cp.save(work).map_err(|e| LoadError::from_output_io("saving a checkpoint", e))
}

/// The step an earlier run checkpointed after, when `cp` is one to resume.
pub(crate) fn resumed_after(cp: &Checkpoint) -> Option<String> {
    (cp.parse.is_some() || cp.parse_partial.is_some()).then(|| cp.last_step().to_string())
}
