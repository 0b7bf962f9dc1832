//! Recognising earlier runs of the same load: its identity, the checkpoint it left to
//! resume, and the complete database it left at `--loc`.

use std::fs;
use std::path::Path;
use std::sync::atomic::Ordering;

use rdf_input::InputFile;
use tdb2::{GENERATION_DIR, QUAD_INDEXES, TRIPLE_INDEXES};

use bulkload_monitor::progress::{log_event, Progress, StateEvent};
use bulkload_storage::checkpoint::{BuildIdentity, Checkpoint, InputIdentity};

use crate::error::LoadError;
use crate::options::LoadOptions;
use crate::report::{write_copies, Report, REPORT_FILE};
use crate::workdir::{sibling, Places};

pub(crate) fn identity(
    opts: &LoadOptions,
    files: &[InputFile],
    rejects_path: &Path,
) -> Result<BuildIdentity, LoadError> {
    let mut inputs = Vec::with_capacity(files.len());
    for f in files {
        inputs
            .push(InputIdentity::of(&f.path).map_err(|e| LoadError::InputMissing { path: f.path.clone(), source: e })?);
    }
    Ok(BuildIdentity {
        loader_version: env!("CARGO_PKG_VERSION").into(),
        loc: opts.loc.display().to_string(),
        on_error: opts.on_error.name().into(),
        max_rejects: opts.max_rejects,
        rejects_file: rejects_path.display().to_string(),
        base: opts.base.clone(),
        jena: opts.jena.release().into(),
        inputs,
    })
}

/// The checkpoint an earlier run of this same load left, if any; a checkpoint of another
/// load (changed inputs or options) is reported and discarded.
pub(crate) fn checkpoint_to_resume(
    opts: &LoadOptions,
    places: &Places,
    identity: &BuildIdentity,
    progress: &Progress,
) -> Option<Checkpoint> {
    let work = places.work_dir();
    let cp = match Checkpoint::read(&work) {
        Ok(Some(cp)) => cp,
        Ok(None) => return None,
        Err(e) => {
            log_event(
                progress,
                StateEvent::CheckpointDiscarded,
                &work,
                &format!("unreadable checkpoint ({e}); starting over"),
            );
            return None;
        }
    };
    if opts.fresh {
        log_event(
            progress,
            StateEvent::CheckpointDiscarded,
            &work,
            &format!("--fresh: not resuming after {}; starting over", cp.last_step()),
        );
        return None;
    }
    if let Some(why) = cp.identity.difference(identity) {
        log_event(
            progress,
            StateEvent::CheckpointDiscarded,
            &work,
            &format!("the checkpoint after {} is for another load: {why}; starting over", cp.last_step()),
        );
        return None;
    }
    if cp.building != places.building.display().to_string() {
        log_event(
            progress,
            StateEvent::CheckpointDiscarded,
            &work,
            "the checkpoint names another build directory; starting over",
        );
        return None;
    }
    if cp.nodes.is_some() && !places.gen_dir.is_dir() && !(cp.finished && opts.loc.is_dir()) {
        log_event(
            progress,
            StateEvent::CheckpointDiscarded,
            &work,
            &format!("{} is gone; starting over", places.building.display()),
        );
        return None;
    }
    Some(cp)
}

/// The build report of the complete database at `loc`, or why `loc` is not one. A complete
/// database is recognised by what the build writes last: its report, written after every
/// data file, then synced, then the whole directory renamed into place (so nothing the
/// loader leaves has a report without being complete); the data files are checked too,
/// against a directory put together by other means.
pub(crate) fn complete_database(loc: &Path) -> Result<Report, String> {
    let bytes = fs::read(loc.join(REPORT_FILE)).map_err(|e| format!("no readable {REPORT_FILE}: {e}"))?;
    let report: Report =
        serde_json::from_slice(&bytes).map_err(|e| format!("{REPORT_FILE} is not a build report: {e}"))?;
    let trees = std::iter::once("nodes")
        .chain(TRIPLE_INDEXES.iter().map(|(n, _)| *n))
        .chain(QUAD_INDEXES.iter().map(|(n, _)| *n));
    let mut names: Vec<String> = trees.flat_map(|t| ["dat", "idn", "bpt"].map(|ext| format!("{t}.{ext}"))).collect();
    names.extend(["nodes-data.obj", "stats.opt", "journal.jrnl"].map(String::from));
    let gen_dir = loc.join(GENERATION_DIR);
    match names.iter().find(|n| !gen_dir.join(n).is_file()) {
        Some(missing) => Err(format!("{GENERATION_DIR}/{missing} is missing")),
        None => Ok(report),
    }
}

/// Ends a run that found this load complete at --loc (`report` is the one in the database,
/// which stays untouched): says so, removes what a run killed after the rename left of
/// this load, and writes the `--report` copy with `already_complete`.
pub(crate) fn already_complete(
    opts: &LoadOptions,
    places: &Places,
    identity: &BuildIdentity,
    mut report: Report,
    progress: &Progress,
    why: &str,
) -> Result<Report, LoadError> {
    log_event(
        progress,
        StateEvent::AlreadyComplete,
        &opts.loc,
        &format!("{why}; the database is complete, nothing to do"),
    );
    progress.already_complete.store(true, Ordering::Relaxed);
    let _ = fs::remove_dir_all(sibling(&opts.loc, "old"));
    let work = places.work_dir();
    // (A checkpoint of another load, e.g. an interrupted --replace with other inputs, stays.)
    let ours = match Checkpoint::read(&work) {
        Ok(Some(cp)) => cp.identity.difference(identity).is_none(),
        Ok(None) | Err(_) => true,
    };
    if ours {
        for dir in [&work, &places.building] {
            if dir.exists() {
                fs::remove_dir_all(dir)
                    .map_err(|e| LoadError::from_output_io("removing the work of a finished load", e))?;
            }
        }
    }
    report.already_complete = true;
    let json = serde_json::to_string_pretty(&report).map_err(|e| LoadError::Internal(e.to_string()))?;
    write_copies(opts, &report, &json)?;
    Ok(report)
}
