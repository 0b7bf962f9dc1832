//! Phase 0: prepare a build. The inputs detected, the work directory locked, a database
//! already at `--loc` and an earlier run's checkpoint looked at, the plan checked (unless the
//! load resumes), and the checkpoint and work directory the build goes on with.

use std::fs;
use std::path::PathBuf;
use std::sync::Arc;

use extsort::SpillDir;
use rdf_input::{detect, InputFile};

use bulkload_monitor::progress::{log_event, Progress, StateEvent};
use bulkload_storage::checkpoint::{BuildIdentity, Checkpoint, CHECKPOINT_FILE};

use crate::error::LoadError;
use crate::input_files;
use crate::options::LoadOptions;
use crate::plan;
use crate::report::Report;
use crate::rerun::{already_complete, checkpoint_to_resume, complete_database, identity};
use crate::workdir::{LoadLock, Places};

/// What the phases after this one start from (both boxed: each is large, and the other small
/// beside it).
pub(crate) enum Prepared {
    /// Nothing to build: the same load is complete at `--loc`.
    AlreadyComplete(Box<Report>),
    /// A build to run, or to put in place when its checkpoint says it finished.
    Build(Box<Ready>),
}

/// A build ready to run.
pub(crate) struct Ready {
    pub(crate) files: Vec<InputFile>,
    pub(crate) rejects_path: PathBuf,
    pub(crate) places: Places,
    /// Held until the load ends: one load at a time per work directory.
    pub(crate) lock: LoadLock,
    /// The fetch step's report (`--source-report`), read up front.
    pub(crate) source: Option<serde_json::Value>,
    /// An earlier run's checkpoint to resume, or a new one.
    pub(crate) checkpoint: Checkpoint,
    pub(crate) spill: Arc<SpillDir>,
}

/// Phase 0 of a load: prepares its build, or finds the same load complete at `--loc`.
pub(crate) fn run(opts: &LoadOptions, progress: &Progress) -> Result<Prepared, LoadError> {
    let files = detect_inputs(opts)?;
    let rejects_path = opts.rejects.clone().unwrap_or_else(|| {
        let mut s = opts.loc.clone().into_os_string();
        s.push(".rejects.jsonl");
        PathBuf::from(s)
    });
    let places = Places::of(opts);
    fs::create_dir_all(&places.work_parent).map_err(|e| LoadError::from_output_io("creating --tmpdir", e))?;
    let lock = LoadLock::take(&places)?;
    let identity = identity(opts, &files, &rejects_path)?;
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
                )
                .map(|report| Prepared::AlreadyComplete(Box::new(report))),
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
            return already_complete(opts, &places, &identity, report, progress, &why)
                .map(|report| Prepared::AlreadyComplete(Box::new(report)));
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
    let (checkpoint, spill) = open_work(&places, resumed, identity, progress)?;
    progress.set_spill(&spill);
    Ok(Prepared::Build(Box::new(Ready { files, rejects_path, places, lock, source, checkpoint, spill })))
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
