//! The load: prepares a build (`phases::prepare`: inputs, work directory, lock, an earlier run
//! to resume or find complete, the plan check), then runs its phases in order (crate::phases).

use std::fs;
use std::sync::Arc;
use std::time::Instant;

use extsort::SpillDir;

use bulkload_monitor::monitor::Monitor;
use bulkload_monitor::progress::{log_event, Progress, StateEvent};
use bulkload_storage::checkpoint::Checkpoint;

use crate::build::{self, Build, Setup, Timer};
use crate::error::LoadError;
use crate::options::LoadOptions;
use crate::phases;
use crate::phases::prepare::{Prepared, Ready};
use crate::report::Report;
use crate::workdir::Places;

/// Loads the inputs into a new TDB2 database at `opts.loc`, resuming an earlier run of the
/// same load from its last checkpoint. Hands the result to `done` as soon as the load is
/// over, while the metrics endpoint still serves the final figures: it closes
/// `--metrics-linger` later, or at a signal (the result stands either way).
pub fn load_then(opts: &LoadOptions, done: impl FnOnce(&Result<Report, LoadError>)) -> Result<Report, LoadError> {
    let progress = Progress::new(opts.memory);
    let monitor = match Monitor::start(&opts.monitor, progress.clone()) {
        Ok(m) => m,
        Err(e) => {
            let result = Err(e.into());
            done(&result);
            return result;
        }
    };
    let result = load_monitored(opts, progress);
    let metrics = monitor.finish(result.is_ok());
    done(&result);
    if let Some(m) = metrics {
        m.linger(opts.monitor.metrics_linger, &opts.interrupt);
        m.stop();
    }
    result
}

fn load_monitored(opts: &LoadOptions, progress: Arc<Progress>) -> Result<Report, LoadError> {
    let started = Instant::now();
    let timer = Timer::new(started, progress);
    let progress = timer.progress.clone();
    let progress = progress.as_ref();
    let ready = match phases::prepare::run(opts, progress)? {
        Prepared::AlreadyComplete(report) => return Ok(*report),
        Prepared::Build(ready) => *ready,
    };
    let Ready { files, rejects_path, places, lock: _lock, source, checkpoint: cp, spill } = ready;
    let result = if cp.finished {
        // Killed between the last checkpoint and the rename: the database is complete.
        phases::finish::put_finished_in_place(opts, &places, build::resumed_after(&cp))
    } else {
        let setup = Setup { opts, files: &files, rejects_path: &rejects_path, places: &places, spill: &spill };
        Build::new(setup, cp, timer, source, started).and_then(|mut b| run_phases(&mut b))
    };
    if let Err(e) = &result {
        keep_work_if_resumable(e, &spill, &places, progress);
    }
    result
}

/// After a failed build: a stop that a rerun can resume (a signal, a full disk, a transient
/// I/O error) keeps the work up to the last checkpoint; anything else leaves no trace.
fn keep_work_if_resumable(e: &LoadError, spill: &SpillDir, places: &Places, progress: &Progress) {
    let resumable = e.keeps_checkpoint();
    match Checkpoint::read(spill.path()) {
        Ok(Some(cp)) if resumable => {
            spill.preserve();
            log_event(
                progress,
                StateEvent::Resumable,
                spill.path(),
                &format!(
                    "the work up to the checkpoint after {} is kept here and in {}; run the same command again to resume \
                     (--fresh to start over)",
                    cp.last_step(),
                    places.building.display()
                ),
            );
        }
        _ => {
            let _ = fs::remove_dir_all(&places.building);
        }
    }
}

/// The phases of a build, each ending with its checkpoint.
fn run_phases(b: &mut Build<'_>) -> Result<Report, LoadError> {
    let parse = phases::parse::run(b)?;
    b.opts.check_interrupt()?;
    let nodes = phases::nodes::run(b, &parse)?;
    b.opts.check_interrupt()?;
    let node_state = nodes.state.clone();
    let indexes = phases::indexes::run(b, &parse, nodes)?;
    phases::finish::run(b, &parse, &node_state, indexes)
}
