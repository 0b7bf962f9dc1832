//! The load: parse and encode → node table → indexes → finish, each phase separable.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use extsort::{SpillDir, TupleSorter};
use rdf_input::{detect, InputFile};
use tdb2::db::{write_empty_journal, write_prefix_tables, NodeDataWriter};
use tdb2::stats::{Stats, RDF_TYPE};
use tdb2::term::{decode_term, DecodedTerm};
use tdb2::{PackedTreeWriter, TreeParams, GENERATION_DIR, QUAD_INDEXES, TRIPLE_INDEXES};

use crate::checkpoint::{
    sync_dir, sync_files, BuildIdentity, Checkpoint, IdStatsState, IndexState, InputIdentity, NodesState, PartialParse,
    CHECKPOINT_FILE,
};
use crate::dict::{Dictionary, Remap, TermMerge};
use crate::error::LoadError;
use crate::failpoint::crash_point;
use crate::parse::{parse_phase, PartialCheckpoints, CHUNK_BYTES};
use crate::progress::{Monitor, MonitorOptions, Progress};
use crate::report::{PhaseReport, Report};
use crate::tuples::Logged;

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
    pub fn name(self) -> &'static str {
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
    /// Where spill files go (default: beside the database).
    pub tmpdir: Option<PathBuf>,
    pub threads: usize,
    /// Memory budget in bytes for the whole process.
    pub memory: u64,
    /// Base IRI for relative IRIs in Turtle/TriG (default: the file's `file://` URL, as Jena).
    pub base: Option<String>,
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
    pub checkpoint_interval: Option<std::time::Duration>,
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
}

/// Name of the build report inside the database directory (not `Data*`, so Jena ignores it).
pub const REPORT_FILE: &str = "bulkload-report.json";

struct Timer {
    phases: Vec<PhaseReport>,
    at: Instant,
    progress: Arc<Progress>,
}

impl Timer {
    /// Ends a phase; returns its seconds.
    fn lap(&mut self, name: &str) -> f64 {
        let now = Instant::now();
        let seconds = (now - self.at).as_secs_f64();
        self.progress.end_phase(name, seconds); // shown by the progress renderer
        self.phases.push(PhaseReport { name: name.to_string(), seconds });
        self.at = now;
        seconds
    }

    /// A phase an earlier run completed (its seconds from the checkpoint).
    fn resumed(&mut self, name: &str, seconds: f64) {
        self.progress.end_phase(name, seconds);
        self.phases.push(PhaseReport { name: name.to_string(), seconds });
        self.at = Instant::now();
    }
}

/// Input paths with directories replaced by the files below them (sorted, hidden files
/// and the fetch step's bookkeeping skipped), so a fetched dump set can be passed as is.
pub(crate) fn expand_inputs(inputs: &[PathBuf]) -> Result<Vec<PathBuf>, LoadError> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> io::Result<()> {
        let mut entries: Vec<_> = fs::read_dir(dir)?.collect::<Result<_, _>>()?;
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            if e.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            if e.file_type()?.is_dir() {
                walk(&e.path(), out)?;
            } else {
                out.push(e.path());
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    for p in inputs {
        if p.is_dir() {
            walk(p, &mut out).map_err(|e| LoadError::InputMissing { path: p.clone(), message: e.to_string() })?;
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

fn sibling(loc: &Path, suffix: &str) -> PathBuf {
    let name = loc.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "db".into());
    let parent = loc.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    parent.join(format!(".{name}.{suffix}"))
}

/// Where a load keeps its work: the temporary database directory beside the target, and
/// the work (spill) directory with the checkpoint.
struct Places {
    building: PathBuf,
    gen_dir: PathBuf,
    work_parent: PathBuf,
    work_name: String,
}

impl Places {
    fn of(opts: &LoadOptions) -> Places {
        let building = sibling(&opts.loc, "building");
        let work_parent =
            opts.tmpdir.clone().unwrap_or_else(|| building.parent().unwrap_or(Path::new(".")).to_path_buf());
        let work_name = format!(
            ".{}.spill",
            opts.loc.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "db".into())
        );
        Places { gen_dir: building.join(GENERATION_DIR), building, work_parent, work_name }
    }
    fn work_dir(&self) -> PathBuf {
        self.work_parent.join(&self.work_name)
    }
}

fn identity(opts: &LoadOptions, files: &[InputFile], rejects_path: &Path) -> Result<BuildIdentity, LoadError> {
    let mut inputs = Vec::with_capacity(files.len());
    for f in files {
        inputs.push(
            InputIdentity::of(&f.path)
                .map_err(|e| LoadError::InputMissing { path: f.path.clone(), message: e.to_string() })?,
        );
    }
    Ok(BuildIdentity {
        loader_version: env!("CARGO_PKG_VERSION").into(),
        loc: opts.loc.display().to_string(),
        on_error: opts.on_error.name().into(),
        max_rejects: opts.max_rejects,
        rejects_file: rejects_path.display().to_string(),
        base: opts.base.clone(),
        inputs,
    })
}

/// The checkpoint an earlier run of this same load left, if any; a checkpoint of another
/// load (changed inputs or options) is reported and discarded.
fn checkpoint_to_resume(
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
            log_event(progress, "checkpoint_discarded", &work, &format!("unreadable checkpoint ({e}); starting over"));
            return None;
        }
    };
    if opts.fresh {
        log_event(
            progress,
            "checkpoint_discarded",
            &work,
            &format!("--fresh: not resuming after {}; starting over", cp.last_step()),
        );
        return None;
    }
    if let Some(why) = cp.identity.difference(identity) {
        log_event(
            progress,
            "checkpoint_discarded",
            &work,
            &format!("the checkpoint after {} is for another load: {why}; starting over", cp.last_step()),
        );
        return None;
    }
    if cp.building != places.building.display().to_string() {
        log_event(
            progress,
            "checkpoint_discarded",
            &work,
            "the checkpoint names another build directory; starting over",
        );
        return None;
    }
    if cp.nodes.is_some() && !places.gen_dir.is_dir() && !(cp.finished && opts.loc.is_dir()) {
        log_event(
            progress,
            "checkpoint_discarded",
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
fn complete_database(loc: &Path) -> Result<Report, String> {
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
fn already_complete(
    opts: &LoadOptions,
    places: &Places,
    identity: &BuildIdentity,
    mut report: Report,
    progress: &Progress,
    why: &str,
) -> Result<Report, LoadError> {
    log_event(progress, "already_complete", &opts.loc, &format!("{why}; the database is complete, nothing to do"));
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
    if let Some(extra) = &opts.report {
        let json = serde_json::to_string_pretty(&report).map_err(|e| LoadError::Internal(e.to_string()))?;
        fs::write(extra, json).map_err(|e| LoadError::from_output_io("writing --report", e))?;
    }
    Ok(report)
}

/// An exclusive lock on `<work parent>/.<name>.lock`, held for the whole load: two loads of
/// one database (a retry started while the first attempt still runs) would share the work
/// and build directories. The file is removed when the load ends; a SIGKILL leaves it, and
/// the next load takes it over.
struct LoadLock {
    path: PathBuf,
    _file: File,
}

impl LoadLock {
    fn take(places: &Places) -> Result<LoadLock, LoadError> {
        use std::os::unix::fs::MetadataExt;
        let path = places.work_parent.join(format!("{}.lock", places.work_name.trim_end_matches(".spill")));
        let busy = || {
            LoadError::Transient(format!(
                "another load of this database is running (it holds {}); try again when it has ended",
                path.display()
            ))
        };
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| LoadError::from_output_io("creating the lock file", e))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) => return Err(busy()),
            Err(fs::TryLockError::Error(e)) => return Err(LoadError::from_output_io("locking", e)),
        }
        // Locked a file that its holder removed in the meantime: the path is someone else's now.
        let same = fs::metadata(&path).and_then(|m| file.metadata().map(|f| f.ino() == m.ino())).unwrap_or(false);
        if !same {
            return Err(busy());
        }
        Ok(LoadLock { path, _file: file })
    }
}

impl Drop for LoadLock {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path); // still locked: nobody else can hold it now
    }
}

/// A message about the load's own state (not progress): a JSON line, or text on a terminal.
fn log_event(progress: &Progress, event: &str, path: &Path, message: &str) {
    let json = serde_json::json!({"event": event, "path": path.display().to_string(), "message": message}).to_string();
    progress.note(json, format!("{message} ({})", path.display()));
}

/// Loads the inputs into a new TDB2 database at `opts.loc`, resuming an earlier run of the
/// same load from its last checkpoint.
pub fn load(opts: &LoadOptions) -> Result<Report, LoadError> {
    let progress = Progress::new(opts.memory);
    let monitor = Monitor::start(&opts.monitor, progress.clone())?;
    let result = load_monitored(opts, progress);
    monitor.finish(result.is_ok());
    result
}

fn load_monitored(opts: &LoadOptions, progress: Arc<Progress>) -> Result<Report, LoadError> {
    let started = Instant::now();
    let mut timer = Timer { phases: Vec::new(), at: started, progress };
    if opts.inputs.is_empty() {
        return Err(LoadError::Usage("no input files".into()));
    }
    let mut files = Vec::with_capacity(opts.inputs.len());
    for p in expand_inputs(&opts.inputs)? {
        files.push(detect(&p).map_err(|e| LoadError::InputMissing { path: p.clone(), message: e.to_string() })?);
    }
    if files.is_empty() {
        return Err(LoadError::Usage("the input directories hold no files".into()));
    }
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
                Some(None) => already_complete(opts, &places, &identity, report, progress, "the same inputs and options were loaded here before"),
                Some(Some(why)) => Err(LoadError::Usage(format!(
                    "{} already holds a database of another load ({why}); choose another --loc or pass --replace",
                    opts.loc.display()
                ))),
                None => Err(LoadError::Usage(format!(
                    "{} already holds a database whose report records no build identity (an older loader's), so a rerun \
                     cannot tell whether it is this load; choose another --loc or pass --replace",
                    opts.loc.display()
                ))),
            };
        }
        (at_loc, _) => at_loc,
    };
    let resumed = checkpoint_to_resume(opts, &places, &identity, progress);
    if resumed.is_none() {
        // (A resumed load was checked when it started; what it has done holds disk now.)
        crate::plan::check(opts, &files, progress)?;
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
    let source = match &opts.source_report {
        Some(p) => {
            let text = fs::read_to_string(p)
                .map_err(|e| LoadError::InputMissing { path: p.clone(), message: e.to_string() })?;
            Some(serde_json::from_str(&text).map_err(|e| LoadError::Usage(format!("{}: not JSON: {e}", p.display())))?)
        }
        None => None,
    };

    let reopened = resumed.and_then(|cp| {
        match SpillDir::reopen(&places.work_parent, &places.work_name, &cp.live_files(), &[CHECKPOINT_FILE]) {
            Ok(spill) => Some((cp, spill)),
            Err(e) => {
                log_event(progress, "checkpoint_discarded", &places.work_dir(), &format!("{e}; starting over"));
                None
            }
        }
    });
    let (cp, spill) = match reopened {
        Some((cp, spill)) => {
            log_event(progress, "resuming", &places.work_dir(), &format!("resuming after {}", cp.last_step()));
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
    let result = build(opts, &files, source, &places, &rejects_path, &mut timer, started, &spill, cp);
    if let Err(e) = &result {
        // A stop that a rerun can resume (a signal, a full disk, a transient I/O error) keeps
        // the work up to the last checkpoint; anything else leaves no trace.
        let resumable = matches!(e, LoadError::Interrupted | LoadError::Resources(_) | LoadError::Transient(_));
        match Checkpoint::read(spill.path()) {
            Ok(Some(cp)) if resumable => {
                spill.preserve();
                log_event(
                    progress,
                    "resumable",
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
    result
}

#[allow(clippy::too_many_arguments)]
fn build(
    opts: &LoadOptions,
    files: &[InputFile],
    source: Option<serde_json::Value>,
    places: &Places,
    rejects_path: &Path,
    timer: &mut Timer,
    started: Instant,
    spill: &Arc<SpillDir>,
    mut cp: Checkpoint,
) -> Result<Report, LoadError> {
    let work = spill.path().to_path_buf();
    let gen_dir = places.gen_dir.as_path();
    let save = |cp: &Checkpoint| cp.save(&work).map_err(|e| LoadError::from_output_io("saving a checkpoint", e));
    let resumed_after = (cp.parse.is_some() || cp.parse_partial.is_some()).then(|| cp.last_step());
    let progress = timer.progress.clone();
    progress.set_spill(spill);
    if cp.finished {
        // Killed between the last checkpoint and the rename: the database is complete.
        let report_file = places.building.join(REPORT_FILE);
        let json = fs::read(&report_file).map_err(|e| LoadError::from_output_io("reading the build report", e))?;
        let mut report: Report =
            serde_json::from_slice(&json).map_err(|e| LoadError::Internal(format!("build report: {e}")))?;
        report.resumed_after = resumed_after;
        let json = serde_json::to_string_pretty(&report).map_err(|e| LoadError::Internal(e.to_string()))?;
        fs::write(&report_file, &json)
            .and_then(|_| File::open(&report_file)?.sync_all())
            .map_err(|e| LoadError::from_output_io("writing the report", e))?;
        put_in_place(opts, &places.building)?;
        if let Some(extra) = &opts.report {
            fs::write(extra, &json).map_err(|e| LoadError::from_output_io("writing --report", e))?;
        }
        return Ok(report);
    }

    // ---- Memory plan: fixed buffers first, then shares of what is left.
    let threads = opts.threads.max(1);
    let plan = MemoryPlan::new(opts.memory, threads)?;
    progress.start_parse(files.iter().map(|f| f.size).sum(), plan.tuple_buffer_bytes(threads));

    // ---- Phase 1: parse and encode
    let parse = match cp.parse.clone() {
        Some(p) => {
            timer.resumed("parse", p.seconds);
            p
        }
        None => {
            let resumed = cp.parse_partial.take().unwrap_or_default();
            let base = cp.clone();
            let save_partial = |partial: PartialParse| -> Result<(), LoadError> {
                let mut c = base.clone();
                c.parse_partial = Some(partial);
                save(&c)
            };
            let partial =
                PartialCheckpoints { resumed: &resumed, every: opts.checkpoint_interval, save: &save_partial };
            let mut p = parse_phase(opts, files, spill, &plan, rejects_path, &progress, partial)?;
            p.seconds = timer.lap("parse");
            cp.parse = Some(p.clone());
            save(&cp)?;
            p
        }
    };
    opts.check_interrupt()?;

    // ---- Phase 2: node table, in MD5 order; each term's offset is its NodeId
    let ids_assigned: u64 = parse.dictionary.iter().map(|s| s.ids).sum();
    let remap_bytes = ids_assigned * 8;
    let sort_budget = plan.sorting(remap_bytes)?;
    progress.expect_terms(ids_assigned);
    progress.memory_bytes.store(remap_bytes, Ordering::Relaxed);
    let remap_file = "remap.bin";
    let (nodes, remap) = match cp.nodes.clone() {
        Some(n) => {
            timer.resumed("nodes", n.seconds);
            (n, None)
        }
        None => {
            let dict = Dictionary::restore(&parse.dictionary, 0, spill.clone())
                .map_err(|e| LoadError::Internal(e.to_string()))?;
            let (mut merge, mut remap) =
                dict.into_merge().map_err(|e| LoadError::from_output_io("merging the dictionary", e))?;
            let (distinct_terms, node_data_bytes, rdf_type) =
                write_node_table(gen_dir, &mut merge, &mut remap, &opts.interrupt, &progress)
                    .map_err(|e| LoadError::from_output_io("writing the node table", e))?;
            crash_point("nodes.written");
            sync_files(gen_dir, ["nodes-data.obj", "nodes-data.bdf", "nodes.dat", "nodes.idn", "nodes.bpt"])
                .and_then(|_| remap.save(&work.join(remap_file)))
                .map_err(|e| LoadError::from_output_io("syncing the node table", e))?;
            progress.expect_index_records(
                parse.triple_logs.iter().map(|l| l.tuples).sum(),
                parse.quad_logs.iter().map(|l| l.tuples).sum(),
            );
            let n = NodesState {
                seconds: timer.lap("nodes"),
                distinct_terms,
                node_data_bytes,
                rdf_type,
                remap_file: remap_file.into(),
            };
            cp.nodes = Some(n.clone());
            save(&cp)?;
            // The node table is durable: the dictionary's runs are not needed any more.
            merge.remove_runs().map_err(|e| LoadError::from_output_io("removing dictionary runs", e))?;
            (n, Some(remap))
        }
    };
    opts.check_interrupt()?;

    // ---- Phase 3: indexes (each one checkpointed when done)
    let triple_logs: Vec<Logged<3>> = parse.triple_logs.iter().map(|l| l.logged(&work)).collect();
    let quad_logs: Vec<Logged<4>> = parse.quad_logs.iter().map(|l| l.logged(&work)).collect();
    let todo = TRIPLE_INDEXES.len() + QUAD_INDEXES.len() - cp.indexes.len();
    let index_started = Instant::now();
    let earlier_seconds = cp.indexes_seconds;
    let cp = Mutex::new(cp);
    let on_index_done = |name: &str, state: IndexState| -> io::Result<()> {
        crash_point("indexes.index_done");
        let mut cp = cp.lock().expect("checkpoint");
        cp.indexes.insert(name.to_string(), state);
        cp.indexes_seconds = earlier_seconds + index_started.elapsed().as_secs_f64();
        cp.save(&work)
    };
    let done: BTreeMap<String, IndexState> = cp.lock().expect("checkpoint").indexes.clone();
    if todo == 0 {
        timer.resumed("indexes", earlier_seconds);
    } else {
        let remap = match remap {
            Some(r) => r,
            None => Remap::load(&work.join(&nodes.remap_file))
                .map_err(|e| LoadError::from_output_io("reading the id remap table", e))?,
        };
        progress.start_index_memory(remap_bytes, sort_budget, threads);
        build_indexes(
            gen_dir,
            spill,
            &remap,
            &triple_logs,
            &quad_logs,
            sort_budget,
            threads,
            nodes.rdf_type,
            &done,
            &on_index_done,
            &opts.interrupt,
            &progress,
        )
        .map_err(|e| LoadError::from_output_io("building indexes", e))?;
        timer.lap("indexes");
    }
    opts.check_interrupt()?;
    let mut cp = cp.into_inner().expect("checkpoint");
    let count = |name: &str| cp.indexes.get(name).map_or(0, |s| s.records);
    let (triples, quads) = (count(TRIPLE_INDEXES[0].0), count(QUAD_INDEXES[0].0));
    let id_stats = IdStats::from_state(cp.indexes.get("POS").and_then(|s| s.stats.clone()).unwrap_or_default());

    // ---- Phase 4: prefixes, statistics, journal; make durable; rename into place
    let prefix_mappings =
        write_prefix_tables(gen_dir, &parse.prefixes).map_err(|e| LoadError::from_output_io("writing prefixes", e))?;
    write_empty_journal(gen_dir).map_err(|e| LoadError::from_output_io("writing the journal", e))?;
    let stats =
        resolve_stats(gen_dir, id_stats).map_err(|e| LoadError::from_output_io("reading back statistics", e))?;
    fs::write(gen_dir.join("stats.opt"), tdb2::stats::render(&stats))
        .map_err(|e| LoadError::from_output_io("writing stats.opt", e))?;
    crash_point("finish.stats");
    let building = places.building.as_path();
    let database_bytes = dir_size(building);
    let mut report = Report::new(opts, files, &parse.input_md5, &cp.identity);
    report.source = source;
    report.statements = parse.statements;
    report.triples = triples;
    report.quads = quads;
    report.distinct_terms = nodes.distinct_terms;
    report.rejects = parse.rejects;
    report.rejects_file = (opts.on_error == OnError::Skip).then(|| rejects_path.display().to_string());
    report.prefixes = prefix_mappings;
    report.node_table_bytes = nodes.node_data_bytes;
    report.dictionary_bytes = parse.dictionary_bytes;
    report.dictionary_spilled_terms = parse.dictionary_spilled_terms;
    report.temp_disk_peak_bytes = spill.peak_bytes();
    report.database_bytes = database_bytes;
    report.resumed_after = resumed_after;
    timer.lap("finish");
    report.phases = std::mem::take(&mut timer.phases);
    report.duration_seconds = started.elapsed().as_secs_f64();
    report.peak_rss_bytes = peak_rss_bytes();
    let json = serde_json::to_string_pretty(&report).map_err(|e| LoadError::Internal(e.to_string()))?;
    fs::write(building.join(REPORT_FILE), &json).map_err(|e| LoadError::from_output_io("writing the report", e))?;
    sync_tree(building).map_err(|e| LoadError::from_output_io("syncing the database", e))?;
    crash_point("finish.synced");
    cp.finished = true;
    save(&cp)?;
    put_in_place(opts, building)?;
    if let Some(extra) = &opts.report {
        fs::write(extra, &json).map_err(|e| LoadError::from_output_io("writing --report", e))?;
    }
    Ok(report)
}

/// Renames the complete database into place (swapping out an old one with --replace).
fn put_in_place(opts: &LoadOptions, building: &Path) -> Result<(), LoadError> {
    if opts.loc.exists() {
        // --replace (or an empty directory): move the old one aside, then swap.
        let old = sibling(&opts.loc, "old");
        let _ = fs::remove_dir_all(&old);
        fs::rename(&opts.loc, &old).map_err(|e| LoadError::from_output_io("moving the old database aside", e))?;
        crash_point("finish.swap");
        fs::rename(building, &opts.loc).map_err(|e| LoadError::from_output_io("renaming into place", e))?;
    } else {
        fs::rename(building, &opts.loc).map_err(|e| LoadError::from_output_io("renaming into place", e))?;
    }
    if let Some(parent) = opts.loc.parent().filter(|p| !p.as_os_str().is_empty()) {
        let _ = sync_dir(parent);
    }
    crash_point("finish.renamed");
    let _ = fs::remove_dir_all(sibling(&opts.loc, "old")); // also one left by a run killed mid-swap
    Ok(())
}

/// Writes `nodes-data.obj` and the `nodes` tree from the merged dictionary; returns the
/// number of distinct terms and the data file's length.
fn write_node_table(
    gen_dir: &Path,
    merge: &mut TermMerge,
    remap: &mut Remap,
    interrupt: &AtomicBool,
    progress: &Progress,
) -> io::Result<(u64, u64, Option<u64>)> {
    let rdf_type_key = tdb2::term::node_hash(&tdb2::term::Term::Iri(RDF_TYPE));
    let mut rdf_type = None;
    let mut data = NodeDataWriter::create(gen_dir, "nodes")?;
    let mut index = PackedTreeWriter::create(gen_dir, "nodes", TreeParams::NODE)?;
    let mut last_key: Option<[u8; 16]> = None;
    let mut last_offset = 0;
    let mut distinct = 0;
    while let Some(t) = merge.next_term()? {
        crash_point("nodes.term");
        if distinct % (1 << 20) == 0 && interrupt.load(Ordering::Relaxed) {
            return Err(io::Error::new(io::ErrorKind::Interrupted, "interrupted"));
        }
        if last_key == Some(t.key) {
            // The same term again (its shard spilled in between), or two stored forms with
            // one MD5 key, which Jena too would find as one: one NodeId.
            remap.set(t.prov, last_offset);
            continue;
        }
        let offset = data.append_encoded(&t.bytes)?;
        let mut rec = [0u8; 24];
        rec[..16].copy_from_slice(&t.key);
        rec[16..].copy_from_slice(&offset.to_be_bytes());
        index.push(&rec)?;
        remap.set(t.prov, offset);
        if t.key == rdf_type_key {
            rdf_type = Some(offset);
        }
        last_key = Some(t.key);
        last_offset = offset;
        distinct += 1;
        if distinct % 4096 == 0 {
            progress.terms_written.store(distinct, Ordering::Relaxed);
        }
    }
    progress.terms_written.store(distinct, Ordering::Relaxed);
    index.finish()?;
    Ok((distinct, data.finish()?, rdf_type))
}

/// How the memory budget is shared out (also the plan's memory model, crate::plan).
pub(crate) struct MemoryPlan {
    budget: u64,
    fixed: u64,
    pub(crate) dictionary: u64,
    pub(crate) log_tuples_per_worker: usize,
}

impl MemoryPlan {
    /// Chunk buffers in flight, read-ahead, writers and the process itself.
    pub(crate) fn fixed_bytes(threads: usize) -> u64 {
        (48 << 20) + (threads as u64) * (3 * CHUNK_BYTES as u64 + (4 << 20))
    }

    pub(crate) fn new(budget: u64, threads: usize) -> Result<MemoryPlan, LoadError> {
        let fixed = Self::fixed_bytes(threads);
        let minimum = fixed + (64 << 20);
        if budget < minimum {
            return Err(LoadError::Resources(format!(
                "--memory {} MiB is below the minimum of {} MiB for {threads} threads ({} MiB of fixed buffers + 64 MiB to work with)",
                budget >> 20,
                minimum >> 20,
                fixed >> 20
            )));
        }
        let free = budget - fixed;
        // While parsing, the dictionary gets most, each worker's tuple buffer a little, and
        // an eighth stays free for the id remap table that the node table phase allocates.
        let logs = free / 8;
        Ok(MemoryPlan {
            budget,
            fixed,
            dictionary: free - 2 * logs,
            log_tuples_per_worker: (logs / threads as u64 / 32) as usize,
        })
    }

    /// Bytes left for sort buffers once the remap table (8 bytes per id) and the tuple
    /// logs' in-memory tails (`resident`) are accounted.
    fn sorting(&self, resident: u64) -> Result<u64, LoadError> {
        let left = self.budget.saturating_sub(self.fixed + resident);
        if left < (32 << 20) {
            return Err(LoadError::Resources(format!(
                "--memory {} MiB cannot hold the id remap table and tuple buffers ({} MiB for this input) plus sort buffers; \
                 give at least {} MiB",
                self.budget >> 20,
                resident >> 20,
                (self.fixed + resident + (32 << 20)) >> 20
            )));
        }
        Ok(left)
    }
}

/// Predicate and class counts by NodeId, gathered from the POS stream.
#[derive(Default)]
struct IdStats {
    /// rdf:type's NodeId, when the data uses it.
    rdf_type: Option<u64>,
    count: u64,
    predicates: Vec<(u64, u64)>,
    /// (class, count) of `?x rdf:type class`.
    classes: Vec<(u64, u64)>,
}

/// Builds the indexes not in `done`, several at a time; `on_done` records each finished
/// (and synced) one in the checkpoint.
#[allow(clippy::too_many_arguments)]
fn build_indexes(
    gen_dir: &Path,
    spill: &Arc<SpillDir>,
    remap: &Remap,
    triples: &[Logged<3>],
    quads: &[Logged<4>],
    sort_budget: u64,
    threads: usize,
    rdf_type: Option<u64>,
    done: &BTreeMap<String, IndexState>,
    on_done: &(dyn Fn(&str, IndexState) -> io::Result<()> + Sync),
    interrupt: &AtomicBool,
    progress: &Progress,
) -> io::Result<()> {
    use rayon::prelude::*;
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().map_err(io::Error::other)?;
    // At most `threads` sorters hold buffers at once.
    let per_sorter = sort_budget / threads as u64;
    let have_quads = quads.iter().any(|l| !l.is_empty());
    let finish = |name: &str, state: IndexState| -> io::Result<()> {
        sync_files(
            gen_dir,
            [format!("{name}.dat"), format!("{name}.idn"), format!("{name}.bpt")].iter().map(String::as_str),
        )?;
        on_done(name, state)
    };
    pool.install(|| {
        let triple_jobs =
            TRIPLE_INDEXES.par_iter().filter(|(name, _)| !done.contains_key(*name)).map(|(name, cols)| {
                let mut stats = (*name == "POS").then(|| IdStats { rdf_type, ..Default::default() });
                let records = build_index(
                    gen_dir,
                    spill,
                    remap,
                    name,
                    cols,
                    triples,
                    TreeParams::TRIPLE,
                    per_sorter,
                    interrupt,
                    progress,
                    |t| {
                        if let Some(st) = stats.as_mut() {
                            st.observe_pos(t);
                        }
                    },
                )?;
                finish(name, IndexState { records, stats: stats.map(IdStats::into_state) })
            });
        let quad_jobs = QUAD_INDEXES.par_iter().filter(|(name, _)| !done.contains_key(*name)).map(|(name, cols)| {
            let logs = if have_quads { quads } else { &[] };
            let records = build_index(
                gen_dir,
                spill,
                remap,
                name,
                cols,
                logs,
                TreeParams::QUAD,
                per_sorter,
                interrupt,
                progress,
                |_| {},
            )?;
            finish(name, IndexState { records, stats: None })
        });
        triple_jobs.chain(quad_jobs).collect::<io::Result<()>>()
    })
}

/// Sorts the logged tuples (remapped to final NodeIds, columns in the index's order) and
/// packs them into the index's tree, showing each record to `observe` on the way.
#[allow(clippy::too_many_arguments)]
fn build_index<const N: usize>(
    gen_dir: &Path,
    spill: &Arc<SpillDir>,
    remap: &Remap,
    name: &str,
    cols: &[usize; N],
    logs: &[Logged<N>],
    params: TreeParams,
    sort_bytes: u64,
    interrupt: &AtomicBool,
    progress: &Progress,
    mut observe: impl FnMut(&[u64; N]),
) -> io::Result<u64> {
    let stop = || {
        if interrupt.load(Ordering::Relaxed) {
            Err(io::Error::new(io::ErrorKind::Interrupted, "interrupted"))
        } else {
            Ok(())
        }
    };
    let mut w = PackedTreeWriter::create(gen_dir, name, params)?;
    let mut n = 0;
    if logs.iter().any(|l| !l.is_empty()) {
        let mut sorter = TupleSorter::<N>::new(spill.clone(), name, (sort_bytes / (8 * N as u64)) as usize);
        let mut pushed = 0u64;
        for log in logs {
            stop()?;
            log.for_each(|t| {
                pushed += 1;
                if pushed % (1 << 14) == 0 {
                    crash_point("indexes.sort_push");
                }
                sorter.push(std::array::from_fn(|i| remap.map(t[cols[i]])))
            })?;
        }
        let mut rec = vec![0u8; 8 * N];
        for t in sorter.finish()? {
            let t = t?;
            for (i, v) in t.iter().enumerate() {
                rec[i * 8..i * 8 + 8].copy_from_slice(&v.to_be_bytes());
            }
            w.push(&rec)?;
            observe(&t);
            n += 1;
            if n % 4096 == 0 {
                progress.index_counter(name).store(n, Ordering::Relaxed);
            }
            if n % (1 << 14) == 0 {
                crash_point("indexes.record");
                if n % (1 << 20) == 0 {
                    stop()?;
                }
            }
        }
    }
    progress.index_counter(name).store(n, Ordering::Relaxed);
    w.finish()?;
    Ok(n)
}

impl IdStats {
    fn into_state(self) -> IdStatsState {
        IdStatsState { count: self.count, predicates: self.predicates, classes: self.classes }
    }

    fn from_state(st: IdStatsState) -> IdStats {
        IdStats { rdf_type: None, count: st.count, predicates: st.predicates, classes: st.classes }
    }

    /// Counts one POS record: triples, per predicate, and per class for rdf:type.
    fn observe_pos(&mut self, t: &[u64; 3]) {
        self.count += 1;
        match self.predicates.last_mut() {
            Some((p, c)) if *p == t[0] => *c += 1,
            _ => self.predicates.push((t[0], 1)),
        }
        if Some(t[0]) == self.rdf_type {
            match self.classes.last_mut() {
                Some((o, c)) if *o == t[1] => *c += 1,
                _ => self.classes.push((t[1], 1)),
            }
        }
    }
}

/// Turns id-based counts into IRIs by reading the terms back from the node table.
fn resolve_stats(gen_dir: &Path, st: IdStats) -> io::Result<Stats> {
    use std::os::unix::fs::FileExt;
    let f = File::open(gen_dir.join("nodes-data.obj"))?;
    let read_term = |id: u64| -> io::Result<Option<DecodedTerm>> {
        if id >> 63 == 1 {
            return Ok(None);
        }
        let mut buf = vec![0u8; 4096];
        loop {
            let n = f.read_at(&mut buf, id)?;
            if let Some((t, _)) = decode_term(&buf[..n]) {
                return Ok(Some(t));
            }
            if n < buf.len() {
                return Ok(None);
            }
            buf.resize(buf.len() * 4, 0);
        }
    };
    let mut out = Stats { count: st.count, ..Default::default() };
    for (p, c) in &st.predicates {
        if let Some(DecodedTerm::Iri(iri)) = read_term(*p)? {
            out.predicates.push((iri, *c));
        }
    }
    for (o, c) in &st.classes {
        if let Some(DecodedTerm::Iri(iri)) = read_term(*o)? {
            out.classes.push((iri, *c));
        }
    }
    Ok(out)
}

fn dir_size(p: &Path) -> u64 {
    let mut total = 0;
    if let Ok(rd) = fs::read_dir(p) {
        for e in rd.flatten() {
            match e.metadata() {
                Ok(m) if m.is_dir() => total += dir_size(&e.path()),
                Ok(m) => total += m.len(),
                Err(_) => {}
            }
        }
    }
    total
}

fn sync_tree(p: &Path) -> io::Result<()> {
    for e in fs::read_dir(p)? {
        let e = e?;
        if e.file_type()?.is_dir() {
            sync_tree(&e.path())?;
        } else {
            File::open(e.path())?.sync_all()?;
        }
    }
    sync_dir(p)
}

/// Peak resident set size of this process (VmHWM), in bytes.
pub fn peak_rss_bytes() -> u64 {
    fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("VmHWM:")).and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}
