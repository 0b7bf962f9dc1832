//! The load: sets up a build (inputs, work directory, lock, an earlier run to resume or
//! find complete, the plan check), then runs its phases in order (crate::phases).

use std::fs;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use extsort::SpillDir;
use rdf_input::{detect, InputFile};

use crate::build::{self, Build, Setup, Timer};
use crate::checkpoint::{BuildIdentity, Checkpoint, CHECKPOINT_FILE};
use crate::error::LoadError;
use crate::input_files;
use crate::monitor::Monitor;
use crate::options::LoadOptions;
use crate::phases;
use crate::plan;
use crate::progress::{log_event, Progress, StateEvent};
use crate::report::Report;
use crate::rerun::{already_complete, checkpoint_to_resume, complete_database, identity};
use crate::workdir::{LoadLock, Places};

/// Loads the inputs into a new TDB2 database at `opts.loc`, resuming an earlier run of the
/// same load from its last checkpoint.
pub fn load(opts: &LoadOptions) -> Result<Report, LoadError> {
    load_then(opts, |_| ())
}

/// [`load`], handing the result to `done` as soon as the load is over, while the metrics
/// endpoint still serves the final figures: it closes `--metrics-linger` later, or at a
/// signal (the result stands either way).
pub fn load_then(opts: &LoadOptions, done: impl FnOnce(&Result<Report, LoadError>)) -> Result<Report, LoadError> {
    let progress = Progress::new(opts.memory);
    let monitor = match Monitor::start(&opts.monitor, progress.clone()) {
        Ok(m) => m,
        Err(e) => {
            let result = Err(e);
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
    let files = detect_inputs(opts)?;
    let rejects_path = opts.rejects.clone().unwrap_or_else(|| {
        let mut s = opts.loc.clone().into_os_string();
        s.push(".rejects.jsonl");
        PathBuf::from(s)
    });
    let places = Places::of(opts);
    fs::create_dir_all(&places.work_parent).map_err(|e| LoadError::from_output_io("creating --tmpdir", e))?;
    let _lock = LoadLock::take(&places)?;
    let identity = identity(opts, &files, &rejects_path)?;
    let progress = timer.progress.clone();
    let progress = progress.as_ref();
    // A rerun of a load that completed (an Argo retry after the load step succeeded, a rerun
    // of the workflow on the same volumes): nothing to do. Checked before the plan, which
    // would count the finished database's disk as needed a second time.
    let at_loc = if opts.loc.exists() { Some(complete_database(&opts.loc)) } else { None };
    let at_loc = match (at_loc, opts.replace) {
        (Some(Ok(report)), false) => {
            let difference = report.identity.as_ref().map(|recorded| recorded.difference(&identity));
            return match difference {
                Some(None) => already_complete(
                    opts,
                    &places,
                    &identity,
                    report,
                    progress,
                    "the same inputs and options were loaded here before",
                ),
                Some(Some(why)) => Err(LoadError::Usage(format!(
                    "{} already holds a database of another load ({why}); choose another --loc or pass --replace",
                    opts.loc.display()
                ))),
                None => Err(LoadError::Usage(format!(
                    "{} already holds a database whose report records no build identity (not written by this loader), \
                     so a rerun cannot tell whether it is this load; choose another --loc or pass --replace",
                    opts.loc.display()
                ))),
            };
        }
        (at_loc, _) => at_loc,
    };
    let resumed = checkpoint_to_resume(opts, &places, &identity, progress);
    if resumed.is_none() {
        // (A resumed load was checked when it started; what it has done holds disk now.)
        plan::check(opts, &files, progress)?;
    }

    // --replace killed after the rename into place, before the work directory was removed:
    // the database is complete.
    if let Some(cp) = resumed.as_ref().filter(|cp| cp.finished && !places.building.exists()) {
        if let Some(Ok(report)) = at_loc {
            let why = format!("the database was completed by the run that checkpointed after {}", cp.last_step());
            return already_complete(opts, &places, &identity, report, progress, &why);
        }
    }
    if let (Some(Err(why)), false) = (&at_loc, opts.replace) {
        let empty = opts.loc.is_dir() && fs::read_dir(&opts.loc).map(|mut d| d.next().is_none()).unwrap_or(false);
        if !empty {
            return Err(LoadError::Usage(format!(
                "{} already exists and is not a complete database ({why}); choose another --loc or pass --replace",
                opts.loc.display()
            )));
        }
    }

    // Read up front: a bad --source-report must not cost a whole load.
    let source = read_source_report(opts)?;
    let (cp, spill) = open_work(&places, resumed, identity, progress)?;
    progress.set_spill(&spill);
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

/// The input files, each detected (syntax, compression): the paths given, directories
/// expanded.
fn detect_inputs(opts: &LoadOptions) -> Result<Vec<InputFile>, LoadError> {
    if opts.inputs.is_empty() {
        return Err(LoadError::Usage("no input files".into()));
    }
    let mut files = Vec::with_capacity(opts.inputs.len());
    for p in input_files::expand_inputs(&opts.inputs)? {
        files.push(detect(&p).map_err(|e| LoadError::InputMissing { path: p.clone(), source: e })?);
    }
    if files.is_empty() {
        return Err(LoadError::Usage("the input directories hold no files".into()));
    }
    Ok(files)
}

/// The fetch step's report (`--source-report`), if given.
fn read_source_report(opts: &LoadOptions) -> Result<Option<serde_json::Value>, LoadError> {
    match &opts.source_report {
        Some(p) => {
            let text = fs::read_to_string(p).map_err(|e| LoadError::InputMissing { path: p.clone(), source: e })?;
            Ok(Some(
                serde_json::from_str(&text).map_err(|e| LoadError::Usage(format!("{}: not JSON: {e}", p.display())))?,
            ))
        }
        None => Ok(None),
    }
}

/// The checkpoint and work directory the build goes on with: the earlier run's (`resumed`),
/// when its work directory still holds every file the checkpoint names, or else new ones
/// (and a fresh build directory).
fn open_work(
    places: &Places,
    resumed: Option<Checkpoint>,
    identity: BuildIdentity,
    progress: &Progress,
) -> Result<(Checkpoint, Arc<SpillDir>), LoadError> {
    let reopened = resumed.and_then(|cp| {
        match SpillDir::reopen(&places.work_parent, &places.work_name, &cp.live_files(), &[CHECKPOINT_FILE]) {
            Ok(spill) => Some((cp, spill)),
            Err(e) => {
                log_event(
                    progress,
                    StateEvent::CheckpointDiscarded,
                    &places.work_dir(),
                    &format!("{e}; starting over"),
                );
                None
            }
        }
    });
    let (cp, spill) = match reopened {
        Some((cp, spill)) => {
            log_event(
                progress,
                StateEvent::Resuming,
                &places.work_dir(),
                &format!("resuming after {}", cp.last_step()),
            );
            if cp.nodes.is_none() {
                // Nothing in the build directory is checkpointed yet.
                let _ = fs::remove_dir_all(&places.building);
            }
            fs::create_dir_all(&places.gen_dir)
                .map_err(|e| LoadError::from_output_io("creating the build directory", e))?;
            (cp, spill)
        }
        None => {
            // Build under a temporary name beside the target; rename into place only when complete.
            if places.building.exists() {
                fs::remove_dir_all(&places.building)
                    .map_err(|e| LoadError::from_output_io("removing a stale build", e))?;
            }
            fs::create_dir_all(&places.gen_dir)
                .map_err(|e| LoadError::from_output_io("creating the build directory", e))?;
            let spill = SpillDir::create(&places.work_parent, &places.work_name)
                .map_err(|e| LoadError::from_output_io("creating the work directory", e))?;
            (Checkpoint::new(identity, &places.building), spill)
        }
    };
    Ok((cp, spill))
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
