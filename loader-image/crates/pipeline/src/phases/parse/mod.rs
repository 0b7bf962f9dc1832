//! Phase 1: parse and encode. Reader threads decompress and cut inputs into chunks (lines;
//! whole Turtle/TriG statements); workers parse them (RDF/XML files whole), intern terms in the dictionary and
//! log encoded tuples. The phase ends with the dictionary and the logs durable in the work
//! directory, described by a [`ParseState`] for the checkpoint.

mod lines;
mod read;
mod statements;
mod whole;

use std::collections::HashSet;
use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use extsort::SpillDir;
use rdf_input::term_rules::WarningKind;
use rdf_input::{BlankLabels, Chunk, InputFile, Rejected, TerseChunk};

use bulkload_monitor::progress::{Phase, Progress};
use bulkload_storage::checkpoint::{LogState, ParseState, PartialParse, RejectState};
use bulkload_storage::dict::Dictionary;
use bulkload_storage::encode::{BlankScope, Encoded, Encoder, FastEncoder};
use bulkload_storage::failpoint::crash_point;
use bulkload_storage::tuples::TupleLog;
use bulkload_storage::unreadable;
use bulkload_storage::warnings::{find_term, written_term, Tally, WarningExample, Warnings};

use crate::budget::CHUNK_BYTES;
use crate::build::{save_checkpoint, Build};
use crate::error::LoadError;
use crate::input::RawDigest;
use crate::options::{LoadOptions, OnError};

use lines::parse_lines_job;
use read::produce;
use statements::parse_terse_chunk;
use whole::parse_whole_job;

enum Job {
    Lines {
        file: usize,
        chunk: Chunk,
    },
    /// Whole units of a Turtle/TriG file, with the state they start in.
    Terse {
        file: usize,
        chunk: TerseChunk,
    },
    /// An RDF/XML file, or a Turtle/TriG file whose split was wrong, parsed whole.
    Whole {
        file: usize,
    },
}

/// Size of the chunks a Turtle/TriG file is cut into. The environment variable
/// `RDF_BULKLOAD_TERSE_CHUNK_BYTES` overrides it, for tests that need small files cut into
/// many chunks (the database does not depend on it).
fn terse_chunk_bytes() -> usize {
    std::env::var("RDF_BULKLOAD_TERSE_CHUNK_BYTES").ok().and_then(|v| v.parse().ok()).unwrap_or(CHUNK_BYTES)
}

fn reject_state(file: usize, r: Rejected) -> RejectState {
    RejectState {
        file,
        line: r.position.line,
        column: r.position.column,
        message: r.message,
        text: r.text,
        start_line: r.start_line,
        end_line: r.end_line,
    }
}

/// The prefixes one input file declared: (file index, [(prefix, namespace)]).
type FilePrefixes = (usize, Vec<(String, String)>);

/// Shared state of the parse phase.
struct ParseShared<'a> {
    opts: &'a LoadOptions,
    files: &'a [InputFile],
    dict: Dictionary,
    spill: Arc<SpillDir>,
    /// Tuples a worker buffers in memory before its log spills.
    log_cap: usize,
    digests: Vec<Arc<Mutex<RawDigest>>>,
    raw_bytes_read: Arc<AtomicU64>,
    progress: &'a Progress,
    /// Strict mode: the earliest (file, chunk) that failed; later work is skipped.
    stop_at: Mutex<Option<(usize, u64)>>,
    /// A Turtle/TriG chunk found cut wrongly (file, its first line), in strict mode one
    /// with no error from its start on; the phase stops and [`run`] starts it over.
    split_wrong: Mutex<Option<(usize, u64)>>,
    first_errors: Mutex<Vec<RejectState>>,
    rejected: AtomicU64,
    fatal: Mutex<Option<LoadError>>,
    cancelled: AtomicBool,
    prefixes: Mutex<Vec<FilePrefixes>>,
    /// What an interrupted run of this parse already did (empty when starting afresh).
    resumed: &'a PartialParse,
    chunks_done: HashSet<(usize, u64)>,
    snapshots: Snapshots,
    /// RDF 1.2 directional literals seen, per node key (see bulkload_storage::rdf12).
    directions: bulkload_storage::rdf12::Directions,
}

/// Partial checkpoints of a parse under way: the coordinator asks for a generation; each
/// worker, between two jobs, makes its logs durable and publishes what its completed jobs
/// produced; once all have, the dictionary's new entries go to durable runs and the
/// checkpoint is saved. Workers never wait for one another.
struct Snapshots {
    requested: AtomicU64,
    slots: Mutex<Vec<WorkerSnapshot>>,
    published: Condvar,
}

#[derive(Clone, Default)]
struct WorkerSnapshot {
    /// The generation published; u64::MAX once the worker has ended.
    generation: u64,
    triples: Option<LogState>,
    quads: Option<LogState>,
    statements: u64,
    chunks: Vec<(usize, u64)>,
    files: Vec<usize>,
    rejects: Vec<RejectState>,
    warnings: Warnings,
}

impl ParseShared<'_> {
    fn fail(&self, e: LoadError) {
        let mut f = self.fatal.lock().expect("fatal");
        if f.is_none() {
            *f = Some(e);
        }
        self.cancelled.store(true, Ordering::SeqCst);
    }
    fn skipped(&self, file: usize, seq: u64) -> bool {
        if self.stopping() {
            return true;
        }
        matches!(*self.stop_at.lock().expect("stop"), Some(at) if (file, seq) > at)
    }
    /// Publishes this worker's completed work if a partial checkpoint asks for it (always
    /// when `last`, as the worker ends).
    fn publish(&self, id: usize, out: &mut WorkerOutput, last: bool) {
        let asked = self.snapshots.requested.load(Ordering::SeqCst);
        let mut slots = self.snapshots.slots.lock().expect("snapshots");
        if !last && slots[id].generation >= asked {
            return;
        }
        drop(slots);
        let synced = out.triples.sync().and_then(|t| Ok((t, out.quads.sync()?)));
        let (t, q) = match synced {
            Ok(tq) => tq,
            Err(e) => return self.fail(LoadError::from_output_io("syncing tuple logs", e)),
        };
        slots = self.snapshots.slots.lock().expect("snapshots");
        slots[id] = WorkerSnapshot {
            generation: if last { u64::MAX } else { asked },
            triples: Some(LogState::of(&t)),
            quads: Some(LogState::of(&q)),
            statements: out.statements_done,
            chunks: out.chunks_done.clone(),
            files: out.files_done.clone(),
            rejects: out.rejects.clone(),
            warnings: out.warnings.clone(),
        };
        self.snapshots.published.notify_all();
    }

    /// The partial checkpoint of the work the workers published (generation `generation`
    /// or their last), on top of what the resumed run had done.
    fn partial(
        &self,
        slots: &[WorkerSnapshot],
        dictionary: Vec<bulkload_storage::checkpoint::ShardState>,
    ) -> PartialParse {
        let mut p = self.resumed.clone();
        p.dictionary = dictionary;
        let digests: Vec<Option<String>> = self.digests.iter().map(|d| d.lock().expect("digest").md5.clone()).collect();
        let prefixes = self.prefixes.lock().expect("prefixes");
        for w in slots {
            p.statements += w.statements;
            for &(file, seq) in &w.chunks {
                p.chunks_done.entry(file).or_default().push(seq);
            }
            for &file in &w.files {
                p.files_done.insert(file, digests[file].clone());
                if let Some((_, ps)) = prefixes.iter().find(|(f, _)| *f == file) {
                    p.prefixes.insert(file, ps.clone());
                }
            }
            p.rejects.extend(w.rejects.iter().cloned());
            p.warnings.merge(&w.warnings);
            p.triple_logs.extend(w.triples.clone());
            p.quad_logs.extend(w.quads.clone());
        }
        for seqs in p.chunks_done.values_mut() {
            seqs.sort_unstable();
        }
        p
    }

    /// A load stopping: another worker failed, or a signal came.
    fn stopping(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed) || self.opts.interrupt.load(Ordering::Relaxed)
    }

    /// Stores a statement of `file` that the full parser gave, unless a literal in it is
    /// one Jena could not read back or its direction conflicts with an earlier one: those
    /// go back to the caller, which knows how to place them (`locate` gives the line, column
    /// and text of a suffix where the statement is).
    fn store_parsed(
        &self,
        q: &rdf_input::oxrdf::Quad,
        file: usize,
        locate: impl FnOnce(&str) -> (u64, u64, String),
        enc: &mut Encoder<'_>,
        scope: &mut BlankScope,
        out: &mut WorkerOutput,
    ) -> Result<ParsedQuad, Stop> {
        if let Err(r) = unreadable::check_quad(q) {
            return Ok(ParsedQuad::Refused(r));
        }
        if let Some(r) = self.direction_conflict(q, file, locate) {
            return Ok(ParsedQuad::Conflict(r));
        }
        out.emit(enc.quad(q, scope, self.files[file].syntax.has_graphs())).map_err(|e| {
            self.fail(LoadError::from_output_io("spilling", e));
            Stop
        })?;
        Ok(ParsedQuad::Stored)
    }

    /// A statement whose directional literal Jena could not keep apart from another
    /// (bulkload_storage::rdf12): the reject at its own position, or `None` when it may be stored (in
    /// strict mode a conflict found here but located at the other statement is recorded
    /// as that statement's error).
    fn direction_conflict(
        &self,
        q: &rdf_input::oxrdf::Quad,
        file: usize,
        locate: impl FnOnce(&str) -> (u64, u64, String),
    ) -> Option<Rejected> {
        let (key, dir, shown) = bulkload_storage::rdf12::directional_object(q)?;
        let suffix = shown.rsplit_once('@').map_or(String::new(), |(_, s)| format!("@{s}"));
        let (line, column, text) = locate(&suffix);
        let at = (file, line, column);
        let strict = self.opts.on_error == OnError::Strict;
        let c = self.directions.observe(key, dir, &shown, at, strict)?;
        if c.at != at {
            let (file, line, column) = c.at;
            let r = RejectState {
                file,
                line,
                column,
                message: c.message,
                text: String::new(),
                start_line: line,
                end_line: line,
            };
            self.first_errors.lock().expect("errors").push(r);
            return None;
        }
        Some(Rejected {
            position: rdf_input::Position { line, column },
            message: c.message,
            text,
            start_line: line,
            end_line: line,
        })
    }

    fn display_name(&self, file: usize) -> String {
        self.files[file].path.display().to_string()
    }
    fn input_error(&self, file: usize, e: io::Error) -> LoadError {
        if e.kind() == io::ErrorKind::NotFound {
            LoadError::InputMissing { path: self.files[file].path.clone(), source: e }
        } else {
            let what = self.files[file].compression.name();
            LoadError::CorruptInput {
                file: self.display_name(file),
                message: format!("cannot read ({what} compression): {e}; the file is truncated or corrupt"),
            }
        }
    }
}

/// What one parse worker produced.
struct WorkerOutput {
    triples: TupleLog<3>,
    quads: TupleLog<4>,
    statements: u64,
    /// Statements, chunks and whole files of the jobs completed.
    statements_done: u64,
    chunks_done: Vec<(usize, u64)>,
    files_done: Vec<usize>,
    rejects: Vec<RejectState>,
    /// Of the jobs completed.
    warnings: Warnings,
}

impl WorkerOutput {
    fn emit(&mut self, e: io::Result<Encoded>) -> io::Result<()> {
        self.statements += 1;
        match e? {
            Encoded::Triple(t) => self.triples.push(t),
            Encoded::Quad(t) => self.quads.push(t),
        }
    }
}

struct Stop;

/// What became of a statement the full parser gave ([`ParseShared::store_parsed`]).
enum ParsedQuad {
    Stored,
    /// A literal Jena could not read back.
    Refused(unreadable::Refused),
    /// A direction conflicting with an earlier one for the same literal.
    Conflict(Rejected),
}

impl ParsedQuad {
    /// How a chunk's or a whole file's parse goes on after a statement: a refused literal is
    /// kept for the caller to place (and stops a strict load), a conflict goes to `on_reject`.
    fn settle(
        self,
        refused: &mut Vec<unreadable::Refused>,
        strict: bool,
        on_reject: &mut dyn FnMut(Rejected) -> Result<(), Stop>,
    ) -> Result<(), Stop> {
        match self {
            ParsedQuad::Stored => Ok(()),
            ParsedQuad::Refused(r) => {
                refused.push(r);
                if strict {
                    Err(Stop)
                } else {
                    Ok(())
                }
            }
            ParsedQuad::Conflict(r) => on_reject(r),
        }
    }
}

fn example(
    sh: &ParseShared<'_>,
    file: usize,
    kind: WarningKind,
    line: u64,
    column: u64,
    term: String,
) -> WarningExample {
    WarningExample { kind: kind.name().to_string(), input: file, file: sh.display_name(file), line, column, term }
}

/// Gives the examples a line's statement left their positions.
fn place_in_line(sh: &ParseShared<'_>, file: usize, tally: &mut Tally, text: &str, line: u64, w: &mut Warnings) {
    for (kind, term) in tally.pending.drain(..) {
        let found = find_term(text, 0, kind, &term);
        let column = found.map_or(1, |off| 1 + text[..off].chars().count() as u64);
        let term = match found {
            Some(off) => written_term(text, off, kind, term),
            None => term,
        };
        w.examples.push(example(sh, file, kind, line, column, term));
    }
}

/// Gives the examples a Turtle/TriG chunk left their positions: found in its text in order.
fn place_in_chunk(sh: &ParseShared<'_>, file: usize, tallies: &mut [&mut Tally], chunk: &TerseChunk, w: &mut Warnings) {
    if tallies.iter().all(|t| t.pending.is_empty()) {
        return;
    }
    let text = String::from_utf8_lossy(&chunk.data);
    for tally in tallies.iter_mut() {
        let mut from = 0;
        for (kind, term) in tally.pending.drain(..) {
            let found = find_term(&text, from, kind, &term);
            let (line, column) = match found {
                Some(off) => {
                    from = off;
                    let before = &text[..off];
                    match before.rfind('\n') {
                        Some(nl) => (
                            chunk.start.position.line + before.matches('\n').count() as u64,
                            1 + before[nl + 1..].chars().count() as u64,
                        ),
                        None => {
                            (chunk.start.position.line, chunk.start.position.column + before.chars().count() as u64)
                        }
                    }
                }
                None => (chunk.start.position.line, chunk.start.position.column),
            };
            let term = match found {
                Some(off) => written_term(&text, off, kind, term),
                None => term,
            };
            w.examples.push(example(sh, file, kind, line, column, term));
        }
    }
}

fn file_base_iri(path: &Path) -> String {
    let abs = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    format!("file://{}", abs.display())
}

/// The scope of file `file`'s blank nodes, by how its syntax's labels behave: the same
/// whether the file is parsed in chunks or whole.
fn blank_scope(file: usize, f: &InputFile) -> BlankScope {
    let name = f.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let scope = format!("{file}\0{name}");
    match f.syntax.blank_labels() {
        BlankLabels::Stable => BlankScope::Labels { scope },
        BlankLabels::FirstSeen => BlankScope::FirstSeen { scope, seen: Default::default() },
    }
}

fn worker(sh: &ParseShared<'_>, id: usize, jobs: crossbeam_channel::Receiver<Job>) -> WorkerOutput {
    let mut out = WorkerOutput {
        triples: TupleLog::new(sh.spill.clone(), "triples", sh.log_cap),
        quads: TupleLog::new(sh.spill.clone(), "quads", sh.log_cap / 2),
        statements: 0,
        statements_done: 0,
        chunks_done: Vec::new(),
        files_done: Vec::new(),
        rejects: Vec::new(),
        warnings: Warnings::default(),
    };
    let mut encoders =
        Encoders { full: Encoder::new(&sh.dict, sh.opts.jena), fast: FastEncoder::new(&sh.dict, sh.opts.jena) };
    let strict = sh.opts.on_error == OnError::Strict;
    loop {
        // Between jobs (and while waiting for one), answer a partial checkpoint's request.
        sh.publish(id, &mut out, false);
        let job = match jobs.recv_timeout(Duration::from_millis(100)) {
            Ok(job) => job,
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => continue,
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => break,
        };
        let (file, seq) = match &job {
            Job::Lines { file, chunk } => (*file, chunk.seq),
            Job::Terse { file, chunk } => (*file, chunk.seq),
            Job::Whole { file } => (*file, 0),
        };
        if sh.skipped(file, seq) {
            continue;
        }
        let statements_before = out.statements;
        let whole = matches!(job, Job::Whole { .. });
        let mut job_warnings = Warnings::default();
        let mut local_rejects = Vec::new();
        let mut on_reject = |r: Rejected| -> Result<(), Stop> {
            if strict {
                let mut stop = sh.stop_at.lock().expect("stop");
                if stop.is_none_or(|at| (file, seq) < at) {
                    *stop = Some((file, seq));
                }
                drop(stop);
                sh.first_errors.lock().expect("errors").push(reject_state(file, r));
                return Err(Stop);
            }
            let n = sh.rejected.fetch_add(1, Ordering::Relaxed) + 1;
            local_rejects.push(reject_state(file, r));
            if n > sh.opts.max_rejects {
                sh.cancelled.store(true, Ordering::SeqCst);
                return Err(Stop);
            }
            Ok(())
        };
        let completed = match job {
            Job::Lines { file, chunk } => {
                parse_lines_job(sh, file, &chunk, &mut out, &mut encoders, &mut job_warnings, &mut on_reject)
            }
            Job::Terse { file, chunk } => {
                let Encoders { full: enc, fast } = &mut encoders;
                let completed = parse_terse_chunk(sh, file, &chunk, &mut out, enc, fast, &mut on_reject);
                place_in_chunk(sh, file, &mut [&mut fast.tally, &mut enc.tally], &chunk, &mut job_warnings);
                completed
            }
            Job::Whole { file } => match parse_whole_job(sh, file, &mut out, &mut encoders.full, &mut on_reject) {
                Some(completed) => completed,
                None => continue,
            },
        };
        out.rejects.append(&mut local_rejects);
        for tally in [&mut encoders.fast.tally, &mut encoders.full.tally] {
            // An input parsed whole: no positions (its chunks' would need another read).
            for (kind, term) in tally.pending.drain(..) {
                job_warnings.examples.push(example(sh, file, kind, 0, 0, term));
            }
            tally.drain_counts(&mut job_warnings);
        }
        if completed {
            sh.progress.warnings.fetch_add(job_warnings.total(), Ordering::Relaxed);
            out.warnings.merge(&job_warnings);
            out.statements_done += out.statements - statements_before;
            if whole {
                out.files_done.push(file);
            } else {
                out.chunks_done.push((file, seq));
            }
        }
        sh.progress.parse_job_done(
            out.statements - statements_before,
            sh.rejected.load(Ordering::Relaxed),
            sh.dict.memory_bytes(),
        );
        crash_point("parse.chunk");
    }
    sh.publish(id, &mut out, true);
    out
}

/// The two encoders of a worker: the full parser's and the fast path's.
struct Encoders<'d> {
    full: Encoder<'d>,
    fast: FastEncoder<'d>,
}

fn write_rejects(path: &Path, sh_files: &[InputFile], rejects: &mut [RejectState]) -> io::Result<()> {
    rejects.sort_by_key(|r| (r.file, r.line, r.column));
    let mut w = BufWriter::new(File::create(path)?);
    for r in rejects.iter() {
        let line = serde_json::json!({
            "file": sh_files[r.file].path.display().to_string(),
            "line": r.line,
            "column": r.column,
            "reason": r.message,
            "text": r.text,
            "start_line": if r.start_line == 0 { r.line } else { r.start_line },
            "end_line": if r.end_line == 0 { r.line } else { r.end_line },
        });
        writeln!(w, "{line}")?;
    }
    w.flush()
}

/// How the parse phase checkpoints while it runs.
pub(crate) struct PartialCheckpoints<'a> {
    /// What an interrupted run of this parse had done (default: nothing).
    pub resumed: &'a PartialParse,
    /// Time between two partial checkpoints (None: only at the end, or when interrupted).
    pub every: Option<Duration>,
    /// Makes a partial checkpoint durable.
    pub save: &'a (dyn Fn(PartialParse) -> Result<(), LoadError> + Sync),
}

/// How a parse phase ended, when it did not fail.
pub(crate) enum Parsed {
    Done(ParseState),
    /// A worker found a chunk of Turtle/TriG input `file`, starting at `line`, cut wrongly
    /// (parse_terse_chunk); the phase stopped and what it left in the work directory is to
    /// be discarded.
    SplitWrong {
        file: usize,
        line: u64,
    },
}

/// Phase 1: parses and encodes every input; leaves the dictionary and the tuple logs
/// durable in the work directory and returns what the checkpoint records of them. While it
/// runs it saves partial checkpoints, and one when a signal stops it, so that a rerun
/// redoes only the jobs not done.
fn parse_phase(b: &Build<'_>, progress: &Progress, partial: PartialCheckpoints<'_>) -> Result<Parsed, LoadError> {
    let threads = b.opts.threads.max(1);
    let sh = shared_state(b, progress, partial.resumed, threads)?;
    let outputs = run_workers(&sh, threads, &partial);
    if let Some(e) = sh.fatal.lock().expect("fatal").take() {
        return Err(e);
    }
    if sh.opts.interrupt.load(Ordering::SeqCst) {
        // Stopped by a signal: every worker published its completed jobs as it ended.
        let dictionary = sh.dict.persist().map_err(|e| LoadError::from_output_io("spilling the dictionary", e))?;
        let slots = sh.snapshots.slots.lock().expect("snapshots").clone();
        (partial.save)(sh.partial(&slots, dictionary))?;
        return Err(LoadError::Interrupted);
    }
    if let Some((file, line)) = sh.split_wrong.lock().expect("split").take() {
        return Ok(Parsed::SplitWrong { file, line });
    }
    let mut errors = std::mem::take(&mut *sh.first_errors.lock().expect("errors"));
    if let Some(first) = errors.iter().min_by_key(|r| (r.file, r.line, r.column)) {
        return Err(LoadError::BadInput {
            file: sh.display_name(first.file),
            line: first.line,
            column: first.column,
            message: first.message.clone(),
        });
    }
    errors.clear();
    let rejects_path = b.rejects_path;
    let mut rejects: Vec<RejectState> = sh.resumed.rejects.clone();
    let mut warnings = sh.resumed.warnings.clone();
    let mut statements = sh.resumed.statements;
    let mut triple_logs = sh.resumed.triple_logs.clone();
    let mut quad_logs = sh.resumed.quad_logs.clone();
    for mut o in outputs {
        statements += o.statements;
        rejects.append(&mut o.rejects);
        warnings.merge(&o.warnings);
        let t = o.triples.finish().map_err(|e| LoadError::from_output_io("spilling tuples", e))?;
        triple_logs.push(LogState::of(&t));
        let q = o.quads.finish().map_err(|e| LoadError::from_output_io("spilling tuples", e))?;
        quad_logs.push(LogState::of(&q));
    }
    let rejected = rejects.len() as u64;
    if sh.opts.on_error == OnError::Skip {
        write_rejects(rejects_path, sh.files, &mut rejects)
            .map_err(|e| LoadError::from_output_io("writing the rejects file", e))?;
        if sh.rejected.load(Ordering::Relaxed) > sh.opts.max_rejects {
            return Err(LoadError::TooManyRejects {
                rejected: sh.rejected.load(Ordering::Relaxed),
                max: sh.opts.max_rejects,
                rejects_file: rejects_path.display().to_string(),
            });
        }
    }
    let prefixes = prefixes_in_load_order(&sh);
    let input_md5 = sh.digests.iter().map(|d| d.lock().expect("digest").md5.clone()).collect();
    let dictionary_bytes = sh.dict.memory_bytes();
    let dictionary_spilled_terms = sh.dict.spilled_entries();
    // The whole dictionary goes to sorted runs: durable for the checkpoint, and its memory
    // is free for the id remap table.
    let dictionary = sh.dict.checkpoint().map_err(|e| LoadError::from_output_io("spilling the dictionary", e))?;
    Ok(Parsed::Done(ParseState {
        seconds: 0.0,
        statements,
        rejects: rejected,
        prefixes,
        input_md5,
        dictionary_bytes,
        dictionary_spilled_terms,
        dictionary,
        triple_logs,
        quad_logs,
        warnings,
    }))
}

/// What the workers and readers of one parse share: the inputs, the dictionary (an earlier
/// run's, when resumed), and where they record rejects, failures and progress.
fn shared_state<'a>(
    b: &Build<'a>,
    progress: &'a Progress,
    resumed: &'a PartialParse,
    threads: usize,
) -> Result<ParseShared<'a>, LoadError> {
    let (plan, spill) = (&b.budget, b.spill);
    let dict = if resumed.dictionary.is_empty() {
        Dictionary::new(plan.dictionary, spill.clone())
    } else {
        Dictionary::restore(&resumed.dictionary, plan.dictionary, spill.clone())
            .map_err(|e| LoadError::Internal(e.to_string()))?
    };
    let sh = ParseShared {
        opts: b.opts,
        files: b.files,
        dict,
        spill: b.spill.clone(),
        log_cap: b.budget.log_tuples_per_worker,
        digests: b.files.iter().map(|_| Arc::new(Mutex::new(RawDigest::default()))).collect(),
        raw_bytes_read: progress.bytes_read.clone(),
        progress,
        stop_at: Mutex::new(None),
        split_wrong: Mutex::new(None),
        first_errors: Mutex::new(Vec::new()),
        rejected: AtomicU64::new(resumed.rejects.len() as u64),
        fatal: Mutex::new(None),
        cancelled: AtomicBool::new(false),
        prefixes: Mutex::new(Vec::new()),
        resumed,
        chunks_done: resumed.chunks_done.iter().flat_map(|(&f, seqs)| seqs.iter().map(move |&s| (f, s))).collect(),
        snapshots: Snapshots {
            requested: AtomicU64::new(0),
            slots: Mutex::new(vec![WorkerSnapshot::default(); threads]),
            published: Condvar::new(),
        },
        directions: Default::default(),
    };
    for (file, md5) in &resumed.files_done {
        sh.digests[*file].lock().expect("digest").md5 = md5.clone();
    }
    for (file, md5) in &resumed.files_done {
        sh.digests[*file].lock().expect("digest").md5 = md5.clone();
    }
    Ok(sh)
}

/// Runs the readers, the parse workers and the periodic checkpoints until every job is
/// done (or the parse stops); each worker's output.
fn run_workers(sh: &ParseShared<'_>, threads: usize, partial: &PartialCheckpoints<'_>) -> Vec<WorkerOutput> {
    let next_file = AtomicUsize::new(0);
    let parsing = AtomicBool::new(true);
    std::thread::scope(|s| {
        let (tx, rx) = crossbeam_channel::bounded::<Job>(threads * 2);
        let handles: Vec<_> = (0..threads)
            .map(|i| {
                let rx = rx.clone();
                std::thread::Builder::new()
                    .name(format!("parse-{i}"))
                    .spawn_scoped(s, move || worker(sh, i, rx))
                    .expect("spawn parse worker")
            })
            .collect();
        if let Some(every) = partial.every {
            let (parsing, save) = (&parsing, partial.save);
            std::thread::Builder::new()
                .name("checkpoint".into())
                .spawn_scoped(s, move || checkpoint_periodically(sh, every, parsing, save))
                .expect("spawn checkpointer");
        }
        drop(rx);
        // Decompression runs on the producers: one per file being read, up to half the
        // threads (a single gzip stream cannot be decompressed in parallel).
        let producers = sh.files.len().min((threads / 2).max(1));
        for i in 1..producers {
            let (tx, next_file) = (tx.clone(), &next_file);
            std::thread::Builder::new()
                .name(format!("read-{i}"))
                .spawn_scoped(s, move || produce(sh, tx, next_file))
                .expect("spawn reader");
        }
        produce(sh, tx, &next_file);
        let joined: Vec<_> = handles.into_iter().map(|h| h.join()).collect();
        parsing.store(false, Ordering::SeqCst);
        sh.snapshots.published.notify_all();
        joined.into_iter().map(|r| r.expect("parse worker panicked")).collect()
    })
}

/// Every prefix declaration of the parse (and of the run it resumed), in load order.
fn prefixes_in_load_order(sh: &ParseShared<'_>) -> Vec<(String, String, String)> {
    let mut prefixes: Vec<(String, String, String)> = Vec::new();
    {
        let mut per_file = std::mem::take(&mut *sh.prefixes.lock().expect("prefixes"));
        per_file.extend(sh.resumed.prefixes.iter().map(|(f, ps)| (*f, ps.clone())));
        per_file.sort_by_key(|(f, _)| *f);
        // Every declaration in load order (files in order, each in input order), as Jena's
        // loaders add them to the prefix table: a later definition of a prefix replaces the
        // mapping, the earlier namespace stays in the prefix node table.
        for (_, ps) in per_file {
            prefixes.extend(ps.into_iter().map(|(p, ns)| (String::new(), p, ns)));
        }
    }
    prefixes
}

/// Every `every`, asks the workers for their completed work and saves a partial checkpoint
/// of it, until the parse ends.
fn checkpoint_periodically(
    sh: &ParseShared<'_>,
    every: Duration,
    parsing: &AtomicBool,
    save: &(dyn Fn(PartialParse) -> Result<(), LoadError> + Sync),
) {
    let mut last = Instant::now();
    while parsing.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(50).min(every));
        if last.elapsed() < every || sh.cancelled.load(Ordering::Relaxed) || sh.opts.interrupt.load(Ordering::Relaxed) {
            continue;
        }
        let generation = sh.snapshots.requested.fetch_add(1, Ordering::SeqCst) + 1;
        let mut slots = sh.snapshots.slots.lock().expect("snapshots");
        while slots.iter().any(|w| w.generation < generation) {
            if !parsing.load(Ordering::SeqCst) {
                return; // the parse ended first: its final checkpoint follows
            }
            slots = sh.snapshots.published.wait_timeout(slots, Duration::from_millis(100)).expect("snapshots").0;
        }
        let slots = slots.clone();
        let saved = sh
            .dict
            .persist()
            .map_err(|e| LoadError::from_output_io("spilling the dictionary", e))
            .and_then(|dictionary| save(sh.partial(&slots, dictionary)));
        if let Err(e) = saved {
            return sh.fail(e);
        }
        crash_point("parse.partial_saved");
        last = Instant::now();
    }
}

/// Phase 1 of a build: parses every input, or takes the parse an earlier run
/// checkpointed; ends with the `parse` checkpoint.
///
/// A Turtle/TriG chunk cut wrongly (`ChunkEnd::Dirty`) in skip mode, or in strict mode
/// with no error from its start on (see [`parse_terse_chunk`]), cannot be parsed again on
/// its own: chunks after it may already be logged, their terms interned and their rejects
/// counted. So the whole phase starts over with that file parsed whole, sequentially
/// (`Job::Whole`), which gives exactly a sequential load's database and rejects. The choice
/// is checkpointed (`whole_files`) before the discarded work files are removed, so that a
/// resumed parse makes it too and never mixes split and whole output of one file.
pub(crate) fn run(b: &mut Build<'_>) -> Result<ParseState, LoadError> {
    let progress = b.progress();
    progress.start_parse(b.files.iter().map(|f| f.size).sum(), b.budget.tuple_buffer_bytes(b.threads));
    if let Some(p) = b.checkpoint.parse.clone() {
        b.timer.resumed(Phase::Parse, p.seconds);
        return Ok(p);
    }
    let mut resumed = b.checkpoint.parse_partial.take().unwrap_or_default();
    let base = b.checkpoint.clone();
    let work = b.work_dir();
    let save_partial = |partial: PartialParse| -> Result<(), LoadError> {
        let mut c = base.clone();
        c.parse_partial = Some(partial);
        save_checkpoint(&c, &work)
    };
    let mut p = loop {
        let partial = PartialCheckpoints { resumed: &resumed, every: b.opts.checkpoint_interval, save: &save_partial };
        let (file, line) = match parse_phase(b, &progress, partial)? {
            Parsed::Done(p) => break p,
            Parsed::SplitWrong { file, line } => (file, line),
        };
        let mut whole_files = std::mem::take(&mut resumed.whole_files);
        whole_files.insert(file);
        resumed = PartialParse { whole_files, ..PartialParse::default() };
        save_partial(resumed.clone())?;
        b.spill
            .remove_all_but(&[bulkload_storage::checkpoint::CHECKPOINT_FILE])
            .map_err(|e| LoadError::from_output_io("discarding the parse's work files", e))?;
        progress.restart_parse();
        let path = b.files[file].path.display().to_string();
        let message = format!(
            "the parallel Turtle/TriG split of {path} cut a statement in the chunk starting at line {line} (a statement \
             boundary the scanner and the parser disagree on; please report it): the parse starts over with that file \
             parsed sequentially"
        );
        let json =
            bulkload_monitor::events::JsonEvent::ParseRestarted { path, line, message: message.clone() }.json_line();
        progress.note(json, format!("warning: {message}"));
    };
    if !p.warnings.counts.is_empty() {
        let json = bulkload_monitor::events::JsonEvent::Warnings {
            counts: p.warnings.counts.clone(),
            examples: p.warnings.examples.clone(),
        }
        .json_line();
        progress.note(json, p.warnings.log_lines().join("\n"));
    }
    p.seconds = b.timer.lap(Phase::Parse);
    b.checkpoint.parse = Some(p.clone());
    b.save_checkpoint()?;
    Ok(p)
}
