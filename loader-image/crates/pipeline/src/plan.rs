//! `rdf-bulkload plan`, and the same check at the start of `load`: what the inputs are,
//! how big the build will be, and whether memory and disk can hold it — before any hour
//! is spent.
//!
//! The estimate parses windows of each input (rdf_input::sample): 128 of 128 KiB spread
//! evenly over the compressed bytes where the format lets a reader start mid-file (bzip2
//! blocks, gzip members, zstd frames, lines of uncompressed files; Turtle windows from their
//! first statement boundary, with the head's prefixes), else the first 16 MiB. Windows are
//! spread because dumps often start unlike the rest (BSBM: products first, compressing 33:1,
//! then reviews, 4.6:1), so a head alone can be far off either way. Each window stands for an
//! equal share of the compressed bytes: the estimate is the mean of their statements per
//! compressed byte times the file's size. A head alone is scaled by the uncompressed size
//! where the format records it (gzip ISIZE when unambiguous, zstd's frame content size), else
//! by the compressed bytes it cost. Distinct terms are scaled as statements are, linearly:
//! they grow more slowly than statements in real data (predicates, classes and popular objects
//! repeat), so this overestimates them. Hence the [`MARGIN`], and a refusal only when even the
//! plain estimate cannot fit. Inputs sampled to their end are counted exactly (but terms
//! shared between files once per file). The load compares the statements it parses with the
//! estimate ([`bulkload_monitor::progress::ESTIMATE_MARGIN`]). How close the estimate comes on BSBM:
//! docs/loader.md.
//!
//! All sizes of the resource model are here, with where each constant comes from.

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use rdf_input::oxrdf::{GraphName, NamedOrBlankNode, Quad, Term as RdfTerm};
use rdf_input::sample::{in_parallel, sample_windows, turtle_statements, Reach, Window};
use rdf_input::{parse_file, parse_line_chunk, parse_terse, InputFile, Split};
use serde::Serialize;
use tdb2::term::{encode_term, format_lang_tag, Term, XSD_STRING};
use tdb2::{QUAD_INDEXES, TRIPLE_INDEXES};
use tdb2_nodeid::JenaVersion;

use bulkload_monitor::events::{fields, JsonEvent};
use bulkload_monitor::progress::Progress;

use crate::budget::{MemoryPlan, MIN_SORT_BYTES};
use crate::error::LoadError;
use crate::options::LoadOptions;

// ---- The model's constants -------------------------------------------------------------

/// Windows taken across each sampled input where its format allows (rdf_input::sample),
/// and the decompressed bytes of each: 128 x 128 KiB parse as fast as the one 16 MiB head
/// they replace, and spread over the file they see its middle and end. Fewer, larger
/// windows miss short stretches that hold many statements (BSBM's products are 8% of its
/// bzip2 bytes and 46% of its statements, in a few stretches that eight windows can all miss).
pub(crate) const SAMPLE_WINDOWS: usize = 128;
pub(crate) const WINDOW_BYTES: usize = 128 << 10;
/// Decompressed bytes parsed from the start of an input that can only be read from there.
pub(crate) const SAMPLE_BYTES: usize = 16 << 20;
/// At most this many inputs are sampled (evenly spread over the list); the others are
/// estimated from the sampled ones' statements and terms per compressed byte.
pub(crate) const MAX_SAMPLED_INPUTS: usize = 16;
/// Safety margin on every estimated size for the "tight" verdict: a build whose needs fit
/// only without it is started, with a warning; one whose needs do not fit even without it
/// is refused.
pub(crate) const MARGIN: f64 = 0.25;

/// Dictionary memory per distinct term besides its stored bytes: start offset (8), MD5 key
/// (16), hash-table slot (8) = dict.rs `ENTRY_OVERHEAD`, plus the spare capacity of vectors
/// and hash tables grown by doubling. Measured (report `dictionary_bytes` minus the stored
/// bytes, per distinct term): BSBM 1M 92, examples/ 57.
pub(crate) const DICT_MEMORY_PER_TERM: u64 = 96;
/// The checkpointed dictionary on temp disk: every distinct term's stored bytes plus its
/// MD5 key (16), provisional id (8) and length (4).
pub(crate) const DICT_DISK_PER_TERM: u64 = 28;
/// Tuple logs (provisional ids, XOR-delta varints, extsort::codec), bytes per statement.
/// Measured on BSBM 1M (the spill directory's `triples-*`/`quads-*` files at the end of the
/// parse phase, over the tuples spilled): 6.8–9.3 per triple, 8.5 per quad; rounded up.
pub(crate) const LOG_BYTES_PER_TRIPLE: f64 = 10.0;
pub(crate) const LOG_BYTES_PER_QUAD: f64 = 11.0;
/// Sorted runs of one index (final NodeIds in index order, same codec), bytes per record.
/// Sorted neighbours share leading columns, so runs are smaller than the logs; taken
/// equal to the logs to stay on the safe side.
pub(crate) const RUN_BYTES_PER_TRIPLE: f64 = LOG_BYTES_PER_TRIPLE;
pub(crate) const RUN_BYTES_PER_QUAD: f64 = LOG_BYTES_PER_QUAD;
/// Database bytes per index record: the record (24 bytes for a triple index, 32 for a quad
/// index) in 8 KiB leaf blocks packed full, plus the interior levels. Measured on BSBM 1M
/// ((X.dat + X.idn) / records): SPO 24.1, GSPO 32.3, nodes 24.2; set with a little room.
/// (With these, the model gives 141 MB for BSBM 1M N-Triples, whose database is 139 MB.)
pub(crate) const DB_BYTES_PER_TRIPLE_RECORD: f64 = 24.5;
pub(crate) const DB_BYTES_PER_QUAD_RECORD: f64 = 32.5;
/// The `nodes` index: MD5 key (16) + NodeId (8) per term.
pub(crate) const DB_BYTES_PER_NODE_RECORD: f64 = 24.5;
/// Files of every database whatever its size: the empty trees' blocks, prefix tables,
/// journal, stats, report. Measured: a one-triple database is 0.2 MiB.
pub(crate) const DB_FIXED_BYTES: u64 = 1 << 20;

// ---- Sampling ---------------------------------------------------------------------------

/// What sampling one input found.
#[derive(Clone, Debug, Serialize)]
pub struct InputEstimate {
    pub path: String,
    pub syntax: &'static str,
    pub compression: &'static str,
    /// Compressed size on disk.
    pub bytes: u64,
    /// How it was estimated: "sampled to the end" (exact), "spread windows" (extrapolated
    /// per compressed byte from windows across the file), "head, uncompressed size known"
    /// (per decompressed byte of the head, times the size the format records), "head only"
    /// (per compressed byte of the head: least trustworthy), or "like the sampled inputs".
    pub basis: &'static str,
    /// What was read, for people: which windows, or why only the head.
    pub method: String,
    /// Windows read (1 for the head alone).
    pub windows: usize,
    /// Decompressed bytes parsed.
    pub sample_bytes: u64,
    pub statements: u64,
    /// What the first window alone would have said (per compressed byte): how unlike the
    /// rest the start is.
    pub head_statements: u64,
    pub distinct_terms: u64,
    /// Stored (RDF Thrift) bytes of the distinct terms.
    pub term_bytes: u64,
    pub quads: bool,
}

/// Distinct stored terms of a sample and their stored bytes.
struct TermCounter {
    /// Each term's hash and stored length.
    seen: HashMap<u128, u32, foldhash::fast::FixedState>,
    bytes: u64,
    buf: Vec<u8>,
    lang: String,
    /// Whose inline rules decide which literals are stored terms.
    jena: JenaVersion,
}

impl TermCounter {
    fn new(jena: JenaVersion) -> Self {
        TermCounter {
            jena,
            seen: HashMap::with_hasher(foldhash::fast::FixedState::with_seed(7)),
            bytes: 0,
            buf: Vec::new(),
            lang: String::new(),
        }
    }

    fn stored(&mut self, t: Term<'_>) {
        self.buf.clear();
        encode_term(&t, &mut self.buf);
        let h = foldhash::fast::FixedState::with_seed(1).hash_one(&self.buf[..]);
        let h2 = foldhash::fast::FixedState::with_seed(2).hash_one(&self.buf[..]);
        if self.seen.insert((u128::from(h) << 64) | u128::from(h2), self.buf.len() as u32).is_none() {
            self.bytes += self.buf.len() as u64;
        }
    }

    /// Adds the terms of another sample.
    fn merge(&mut self, other: TermCounter) {
        for (h, len) in other.seen {
            if self.seen.insert(h, len).is_none() {
                self.bytes += u64::from(len);
            }
        }
    }

    fn term(&mut self, t: &RdfTerm) {
        match t {
            RdfTerm::NamedNode(n) => self.stored(Term::Iri(n.as_str())),
            // Stored labels are 32 hex digits derived from the input's identity (encode.rs).
            RdfTerm::BlankNode(b) => {
                let mut label = format!("{:032x}", foldhash::fast::FixedState::with_seed(3).hash_one(b.as_str()));
                label.truncate(32);
                self.stored(Term::Blank(&label));
            }
            // RDF 1.2 triple terms and directional literals: rare, counted at their size.
            RdfTerm::Triple(t) => {
                let mut scope = bulkload_storage::encode::BlankScope::Labels { scope: String::new() };
                let owned = bulkload_storage::rdf12::owned_triple(t, &mut scope);
                owned.with_term(&mut |term| self.stored(term));
            }
            RdfTerm::Literal(l) => {
                if let Some(lang) = l.language() {
                    let mut formatted = std::mem::take(&mut self.lang);
                    format_lang_tag(lang, &mut formatted);
                    self.stored(Term::Literal { lex: l.value(), lang: Some(&formatted), datatype: None });
                    self.lang = formatted;
                } else {
                    let dt = l.datatype().as_str();
                    // Inline values (numbers, dates, booleans...) are NodeIds, not terms.
                    if self.jena.inline_literal(l.value(), dt).is_none() {
                        let datatype = (dt != XSD_STRING).then_some(dt);
                        self.stored(Term::Literal { lex: l.value(), lang: None, datatype });
                    }
                }
            }
        }
    }

    fn quad(&mut self, q: &Quad) {
        match &q.subject {
            NamedOrBlankNode::NamedNode(n) => self.term(&RdfTerm::NamedNode(n.clone())),
            NamedOrBlankNode::BlankNode(b) => self.term(&RdfTerm::BlankNode(b.clone())),
        }
        self.stored(Term::Iri(q.predicate.as_str()));
        self.term(&q.object);
        match &q.graph_name {
            GraphName::NamedNode(n) => self.stored(Term::Iri(n.as_str())),
            GraphName::BlankNode(b) => self.term(&RdfTerm::BlankNode(b.clone())),
            GraphName::DefaultGraph => {}
        }
    }
}

/// What one sampled window holds.
struct WindowCount {
    statements: u64,
    /// Any statement in a named graph.
    quads: bool,
    terms: TermCounter,
    /// The compressed bytes the parsed part of the window stands for.
    cost: f64,
    /// The prefixes a Turtle head declares.
    prefixes: Vec<(String, String)>,
}

/// Reads windows of `f` (rdf_input::sample), parses them and extrapolates. A read error
/// (corrupt or truncated compressed data) fails the plan as it would fail the load, naming
/// the file.
fn sample(f: &InputFile, req: &PlanRequest) -> Result<InputEstimate, LoadError> {
    let (base, threads) = (req.base.as_deref(), req.threads.max(1));
    let corrupt = |e: io::Error| {
        if e.kind() == io::ErrorKind::NotFound {
            LoadError::InputMissing { path: f.path.clone(), source: e }
        } else {
            LoadError::CorruptInput {
                file: f.path.display().to_string(),
                message: format!(
                    "cannot read ({} compression): {e}; the file is truncated or corrupt",
                    f.compression.name()
                ),
            }
        }
    };
    let taken = sample_windows(f, SAMPLE_WINDOWS, WINDOW_BYTES, SAMPLE_BYTES, threads).map_err(corrupt)?;
    let base_iri = base.map(str::to_string).unwrap_or_else(|| format!("file://{}", f.path.display()));
    // Bad statements in the sample do not count; the load decides what they mean.
    let count = |w: &Window, head: bool, declared: &str| {
        let mut c = WindowCount {
            statements: 0,
            quads: false,
            terms: TermCounter::new(req.jena),
            cost: w.compressed_bytes,
            prefixes: Vec::new(),
        };
        let mut on_quad = |q: Quad| -> Result<(), ()> {
            c.statements += 1;
            c.quads |= q.graph_name != GraphName::DefaultGraph;
            c.terms.quad(&q);
            Ok(())
        };
        match f.syntax.split() {
            Split::Lines => parse_line_chunk(f.syntax, &w.text, 1, &mut on_quad, |_| Ok(())).unwrap_or(()),
            // Windows after the head (Turtle's, see rdf_input::sample).
            Split::Statements if !head => {
                let span = turtle_statements(&w.text);
                let share = span.len() as f64 / w.text.len().max(1) as f64;
                let text = [declared.as_bytes(), &w.text[span]].concat();
                let _ = parse_terse(f.syntax, &text[..], Some(&base_iri), &mut on_quad, |_| Ok(()));
                c.cost *= share;
            }
            Split::Statements | Split::Whole(_) => {
                let declared = parse_file(f.syntax, &w.text[..], Some(&base_iri), &mut on_quad, |_| Ok(()));
                c.prefixes = declared.unwrap_or_default();
            }
        }
        c
    };
    // The head first: the Turtle windows after it take the prefixes it declares.
    let (head, rest) = taken.windows.split_first().expect("the head window");
    let head = count(head, true, "");
    let declared: String = head.prefixes.iter().map(|(p, ns)| format!("@prefix {p}: <{ns}> .\n")).collect();
    let rest = in_parallel(rest, threads, |w| count(w, false, &declared))
        .map_err(|e| LoadError::Internal(format!("starting the sampling threads: {e}")))?;
    let mut terms = TermCounter::new(req.jena);
    let mut quads = false;
    // Statements per window (the first is the head), and the compressed bytes each stands for.
    let mut counts = Vec::with_capacity(taken.windows.len());
    let mut costs = Vec::with_capacity(taken.windows.len());
    for c in std::iter::once(head).chain(rest) {
        counts.push(c.statements);
        costs.push(c.cost);
        quads |= c.quads;
        terms.merge(c.terms);
    }
    let sampled: u64 = counts.iter().sum();
    let text_bytes: u64 = taken.windows.iter().map(|w| w.text.len() as u64).sum();
    let cost: f64 = costs.iter().sum();
    let per_compressed_byte = |n: u64, cost: f64| {
        if cost <= 0.0 {
            n as f64
        } else {
            n as f64 * f.size as f64 / cost
        }
    };
    let (basis, statements) = match (taken.reach, taken.uncompressed_size) {
        (Reach::Whole, _) => ("sampled to the end", sampled as f64),
        // Each window stands for an equal share of the compressed bytes (its stretch of the
        // file): the mean of their rates, not the rate of their union, which would weigh a
        // window by what its text cost and so slight the stretches that compress well.
        (Reach::Spread, _) => {
            let (weights, rates) = taken
                .windows
                .iter()
                .zip(counts.iter().zip(&costs))
                .filter(|(_, (_, &c))| c > 0.0)
                .fold((0.0, 0.0), |(ws, rs), (w, (&n, &c))| {
                    (ws + w.weight as f64, rs + w.weight as f64 * n as f64 / c)
                });
            ("spread windows", rates / f64::max(weights, 1.0) * f.size as f64)
        }
        (Reach::Head, Some(size)) => {
            ("head, uncompressed size known", sampled as f64 * size as f64 / text_bytes.max(1) as f64)
        }
        (Reach::Head, None) => ("head only", per_compressed_byte(sampled, cost)),
    };
    // Terms scale as statements do (linearly: an overestimate, see the module docs).
    let scale = |n: u64| if sampled == 0 { n } else { (n as f64 * statements / sampled as f64).ceil() as u64 };
    Ok(InputEstimate {
        path: f.path.display().to_string(),
        syntax: f.syntax.name(),
        compression: f.compression.name(),
        bytes: f.size,
        basis,
        method: taken.method,
        windows: taken.windows.len(),
        sample_bytes: text_bytes,
        statements: statements.ceil() as u64,
        head_statements: if taken.reach == Reach::Whole {
            sampled
        } else {
            per_compressed_byte(counts[0], costs[0]).ceil() as u64
        },
        distinct_terms: scale(terms.seen.len() as u64),
        term_bytes: scale(terms.bytes),
        quads: quads || f.syntax.has_graphs(),
    })
}

// ---- The plan ---------------------------------------------------------------------------

/// What the plan needs to know of a build besides its inputs: where it goes and what it
/// may use.
#[derive(Clone, Debug)]
pub struct PlanRequest {
    /// The database directory (`--loc`).
    pub loc: PathBuf,
    /// Where spill files go (default: beside the database).
    pub tmpdir: Option<PathBuf>,
    pub threads: usize,
    /// The memory budget in bytes.
    pub memory: u64,
    /// Base IRI for relative IRIs in the sampled Turtle/TriG.
    pub base: Option<String>,
    /// Whose inline rules (`--jena`): which literals are stored terms.
    pub jena: JenaVersion,
}

impl PlanRequest {
    /// The plan's part of a load's options.
    pub(crate) fn of(opts: &LoadOptions) -> PlanRequest {
        PlanRequest {
            loc: opts.loc.clone(),
            tmpdir: opts.tmpdir.clone(),
            threads: opts.threads,
            memory: opts.memory,
            base: opts.base.clone(),
            jena: opts.jena,
        }
    }
}

/// The check at the start of `load`: refuses (exit 5) a build that cannot fit, warns about
/// a tight one, and shows the estimate (one JSON line, or one line on a terminal).
pub(crate) fn check(opts: &LoadOptions, files: &[InputFile], progress: &Progress) -> Result<(), LoadError> {
    if opts.skip_plan_check {
        return Ok(());
    }
    let plan = plan(&PlanRequest::of(opts), files, &opts.interrupt)?;
    let json = JsonEvent::Plan(fields(serde_json::json!({
        "verdict": plan.verdict,
        "estimated_statements": plan.estimated_statements,
        "estimated_distinct_terms": plan.estimated_distinct_terms,
        "tmp_peak_bytes": plan.disk.tmp_peak_bytes,
        "tmp_free_bytes": plan.disk.tmp_free_bytes,
        "database_bytes": plan.disk.database_bytes,
        "target_free_bytes": plan.disk.target_free_bytes,
        "dictionary_spills": plan.memory.dictionary_spills,
        "problems": plan.problems,
    })))
    .json_line();
    let free = |f: Option<u64>| f.map_or("unknown".to_string(), human_bytes);
    let mut text = format!(
        "plan: ~{} statements, ~{} distinct terms; temp disk ~{} ({} free), database ~{} ({} free): {}",
        plan.estimated_statements,
        plan.estimated_distinct_terms,
        human_bytes(plan.disk.tmp_peak_bytes),
        free(plan.disk.tmp_free_bytes),
        human_bytes(plan.disk.database_bytes),
        free(plan.disk.target_free_bytes),
        match plan.verdict {
            Verdict::Fits => "fits",
            Verdict::Tight => "tight",
            Verdict::DoesNotFit => "does not fit",
        }
    );
    for p in &plan.problems {
        text.push_str(&format!("\n  - {p}"));
    }
    progress.note(json, text);
    progress.planned_statements.store(plan.estimated_statements, Ordering::Relaxed);
    match plan.refusal() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct MemoryNeeds {
    pub budget_bytes: u64,
    pub threads: usize,
    /// Chunk buffers, read-ahead, writers, the process (load.rs `MemoryPlan`).
    pub fixed_bytes: u64,
    /// The dictionary's share of the budget while parsing.
    pub dictionary_budget_bytes: u64,
    /// What the whole dictionary would take in memory.
    pub dictionary_bytes: u64,
    /// The dictionary does not fit its share: it spills sorted runs to temp disk (slower,
    /// not fatal).
    pub dictionary_spills: bool,
    /// The id remap table of the node-table phase: 8 bytes per distinct term, in memory.
    pub remap_bytes: u64,
    /// Tuple buffers that stay in memory until the indexes are built.
    pub tuple_buffer_bytes: u64,
    /// What is left for sort buffers (at least 32 MiB are needed).
    pub sort_bytes: i64,
}

#[derive(Clone, Debug, Serialize)]
pub struct DiskNeeds {
    /// Where spill files go (--tmpdir, default the parent of --loc).
    pub tmp_dir: String,
    /// Free bytes there (statvfs f_bavail), None if it cannot be asked.
    pub tmp_free_bytes: Option<u64>,
    /// Temp disk at the end of the parse phase: the dictionary and all tuple logs.
    pub tmp_parse_bytes: u64,
    /// Temp disk at its peak: that plus the sort runs of `threads` indexes at once.
    pub tmp_peak_bytes: u64,
    /// The parent directory of --loc.
    pub target_dir: String,
    pub target_free_bytes: Option<u64>,
    /// The database (all files under --loc).
    pub database_bytes: u64,
    /// Temp and target on one filesystem: both needs add up.
    pub same_filesystem: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Fits, with the safety margin.
    Fits,
    /// Fits by the estimate, but not with the margin: started, with a warning.
    Tight,
    /// Cannot fit: refused.
    DoesNotFit,
}

#[derive(Clone, Debug, Serialize)]
pub struct Plan {
    pub inputs: Vec<InputEstimate>,
    /// Estimates (not counts): statements, distinct terms and their stored bytes.
    pub estimated_statements: u64,
    pub estimated_triples: u64,
    pub estimated_quads: u64,
    pub estimated_distinct_terms: u64,
    pub estimated_term_bytes: u64,
    pub memory: MemoryNeeds,
    pub disk: DiskNeeds,
    pub verdict: Verdict,
    /// Why the verdict is not "fits", with the numbers.
    pub problems: Vec<Problem>,
}

/// One reason why a build does not fit, or fits only without the safety margin.
#[derive(Clone, Debug, PartialEq)]
pub struct Problem {
    /// [`Verdict::Tight`] or [`Verdict::DoesNotFit`].
    pub verdict: Verdict,
    /// What is needed and what there is.
    pub message: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.verdict {
            Verdict::Tight => write!(f, "tight: {}", self.message),
            _ => f.write_str(&self.message),
        }
    }
}

/// As the text shows it: JSON readers see the same line as a terminal.
impl Serialize for Problem {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// Free bytes for an unprivileged writer on the filesystem holding `dir` (or, if it does
/// not exist yet, its nearest existing ancestor).
pub(crate) fn free_bytes(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let existing = existing_ancestor(dir)?;
    let c = std::ffi::CString::new(existing.as_os_str().as_bytes()).ok()?;
    // SAFETY: statvfs writes into the zeroed struct we own; the path is NUL-terminated.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    Some(st.f_bavail as u64 * st.f_frsize as u64)
}

fn existing_ancestor(dir: &Path) -> Option<PathBuf> {
    let abs = if dir.is_absolute() { dir.to_path_buf() } else { std::env::current_dir().ok()?.join(dir) };
    abs.ancestors().find(|p| p.exists()).map(Path::to_path_buf)
}

fn device(dir: &Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(existing_ancestor(dir)?).ok().map(|m| m.dev())
}

/// The parent of --loc, where the database is built and renamed into place.
pub(crate) fn target_dir(loc: &Path) -> PathBuf {
    loc.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_path_buf()
}

/// 1.2 GiB, 340 MiB, 12 KiB, 100 B.
pub(crate) fn human_bytes(n: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < units.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else if v < 10.0 {
        format!("{v:.1} {}", units[u])
    } else {
        format!("{v:.0} {}", units[u])
    }
}

/// Samples the inputs and checks the build against memory and disk.
pub fn plan(req: &PlanRequest, files: &[InputFile], interrupt: &AtomicBool) -> Result<Plan, LoadError> {
    // Which inputs to sample: all up to MAX_SAMPLED_INPUTS, else evenly spread ones.
    let step = files.len().div_ceil(MAX_SAMPLED_INPUTS).max(1);
    let mut inputs: Vec<Option<InputEstimate>> = vec![None; files.len()];
    for i in (0..files.len()).step_by(step) {
        if interrupt.load(Ordering::Relaxed) {
            return Err(LoadError::Interrupted);
        }
        inputs[i] = Some(sample(&files[i], req)?);
    }
    // The rest: like the sampled ones, per compressed byte.
    let (sb, ss, st, stb) = inputs.iter().flatten().fold((0u64, 0u64, 0u64, 0u64), |a, e| {
        (a.0 + e.bytes, a.1 + e.statements, a.2 + e.distinct_terms, a.3 + e.term_bytes)
    });
    let per_byte = |n: u64, bytes: u64| ((n as f64) * bytes as f64 / sb.max(1) as f64).ceil() as u64;
    let inputs: Vec<InputEstimate> = inputs
        .into_iter()
        .zip(files)
        .map(|(e, f)| {
            e.unwrap_or_else(|| InputEstimate {
                path: f.path.display().to_string(),
                syntax: f.syntax.name(),
                compression: f.compression.name(),
                bytes: f.size,
                basis: "like the sampled inputs",
                method: "not read".into(),
                windows: 0,
                sample_bytes: 0,
                statements: per_byte(ss, f.size),
                head_statements: per_byte(ss, f.size),
                distinct_terms: per_byte(st, f.size),
                term_bytes: per_byte(stb, f.size),
                quads: f.syntax.has_graphs(),
            })
        })
        .collect();
    Ok(assess(req, inputs))
}

/// The resource model proper, on given estimates.
pub(crate) fn assess(req: &PlanRequest, inputs: Vec<InputEstimate>) -> Plan {
    let totals = Totals::of(&inputs);
    let mut findings = Findings { verdict: Verdict::Fits, problems: Vec::new() };
    let bzip2 = inputs.iter().any(|e| e.compression == rdf_input::Compression::Bzip2.name());
    let memory = memory_needs(req, &totals, bzip2, &mut findings);
    let disk = disk_needs(req, &totals, &memory, &mut findings);
    Plan {
        inputs,
        estimated_statements: totals.statements,
        estimated_triples: totals.triples,
        estimated_quads: totals.quads,
        estimated_distinct_terms: totals.terms,
        estimated_term_bytes: totals.term_bytes,
        memory,
        disk,
        verdict: findings.verdict,
        problems: findings.problems,
    }
}

/// The estimates of every input added up.
struct Totals {
    statements: u64,
    triples: u64,
    quads: u64,
    terms: u64,
    term_bytes: u64,
}

impl Totals {
    fn of(inputs: &[InputEstimate]) -> Totals {
        let statements: u64 = inputs.iter().map(|e| e.statements).sum();
        // Statements of quad syntaxes may all be quads; N-Triples/Turtle ones are triples.
        let quads: u64 = inputs.iter().filter(|e| e.quads).map(|e| e.statements).sum();
        Totals {
            statements,
            triples: statements - quads,
            quads,
            terms: inputs.iter().map(|e| e.distinct_terms).sum(),
            term_bytes: inputs.iter().map(|e| e.term_bytes).sum(),
        }
    }
}

/// The verdict so far and the problems behind it, in the order they were found.
struct Findings {
    verdict: Verdict,
    problems: Vec<Problem>,
}

impl Findings {
    /// A problem: the verdict becomes `v` unless it is already worse.
    fn worse(&mut self, v: Verdict, why: String) {
        if v == Verdict::DoesNotFit || self.verdict == Verdict::Fits {
            self.verdict = v;
        }
        self.problems.push(Problem { verdict: v, message: why });
    }

    /// Disk that `need`s `what`, where `free` is free (unknown: no verdict).
    fn check_disk(&mut self, what: String, need: u64, free: Option<u64>) {
        let Some(free) = free else { return };
        if need > free {
            self.worse(Verdict::DoesNotFit, format!("needs ~{} {what}, {} free", human_bytes(need), human_bytes(free)));
        } else if with_margin(need) > free {
            self.worse(
                Verdict::Tight,
                format!(
                    "needs ~{} {what} ({} with the {:.0}% margin), {} free",
                    human_bytes(need),
                    human_bytes(with_margin(need)),
                    MARGIN * 100.0,
                    human_bytes(free)
                ),
            );
        }
    }
}

/// `n` with the [`MARGIN`].
fn with_margin(n: u64) -> u64 {
    (n as f64 * (1.0 + MARGIN)) as u64
}

/// Memory: the fixed part, the dictionary, the id remap table and the sort buffers within
/// `--memory`.
fn memory_needs(req: &PlanRequest, totals: &Totals, bzip2: bool, findings: &mut Findings) -> MemoryNeeds {
    let threads = req.threads.max(1);
    let Totals { terms, term_bytes, .. } = *totals;
    let mem_plan = MemoryPlan::new(req.memory, threads, bzip2);
    let fixed = MemoryPlan::fixed_bytes(threads, bzip2);
    let (dictionary_budget, tuple_buffers) = match &mem_plan {
        Ok(p) => (p.dictionary, p.tuple_buffer_bytes(threads)),
        Err(_) => (0, 0),
    };
    if let Err(e) = &mem_plan {
        findings.worse(Verdict::DoesNotFit, e.to_string());
    }
    let dictionary_bytes = term_bytes + terms * DICT_MEMORY_PER_TERM;
    let remap = terms * 8;
    let sort_bytes = req.memory as i64 - (fixed + remap + tuple_buffers) as i64;
    if mem_plan.is_ok() {
        let need = fixed + remap + tuple_buffers + MIN_SORT_BYTES;
        let msg = |remap: u64, need: u64| {
            format!(
                "--memory {} cannot hold the id remap table (~{} for ~{} distinct terms, 8 bytes each) beside {} of fixed and tuple buffers \
                 and {} of sort buffers: give at least --memory {}",
                human_bytes(req.memory),
                human_bytes(remap),
                terms,
                human_bytes(fixed + tuple_buffers),
                human_bytes(MIN_SORT_BYTES),
                human_bytes(need)
            )
        };
        if need > req.memory {
            findings.worse(Verdict::DoesNotFit, msg(remap, need));
        } else if need + with_margin(remap) - remap > req.memory {
            findings.worse(Verdict::Tight, msg(with_margin(remap), need + with_margin(remap) - remap));
        }
    }
    MemoryNeeds {
        budget_bytes: req.memory,
        threads,
        fixed_bytes: fixed,
        dictionary_budget_bytes: dictionary_budget,
        dictionary_bytes,
        dictionary_spills: dictionary_bytes > dictionary_budget,
        remap_bytes: remap,
        tuple_buffer_bytes: tuple_buffers,
        sort_bytes,
    }
}

/// Disk: the temporary files at their peak and the database, on the file systems they go to.
fn disk_needs(req: &PlanRequest, totals: &Totals, memory: &MemoryNeeds, findings: &mut Findings) -> DiskNeeds {
    let Totals { triples, quads, terms, term_bytes, .. } = *totals;
    let threads = memory.threads;
    let dict_disk = term_bytes + terms * DICT_DISK_PER_TERM;
    let logs = (triples as f64 * LOG_BYTES_PER_TRIPLE + quads as f64 * LOG_BYTES_PER_QUAD) as u64;
    let tmp_parse = dict_disk + logs;
    // Index builders spill sorted runs only when their tuples exceed their share of the
    // sort buffers; at most `threads` of them run at once (the largest ones, to be safe).
    let per_sorter = (memory.sort_bytes.max(0) as u64) / threads as u64;
    let mut runs: Vec<u64> = Vec::new();
    for _ in TRIPLE_INDEXES {
        runs.push(if triples * 24 > per_sorter { (triples as f64 * RUN_BYTES_PER_TRIPLE) as u64 } else { 0 });
    }
    for _ in QUAD_INDEXES {
        runs.push(if quads * 32 > per_sorter { (quads as f64 * RUN_BYTES_PER_QUAD) as u64 } else { 0 });
    }
    runs.sort_unstable_by(|a, b| b.cmp(a));
    let tmp_peak = tmp_parse + runs.iter().take(threads).sum::<u64>();
    let database = DB_FIXED_BYTES
        + term_bytes
        + (terms as f64 * DB_BYTES_PER_NODE_RECORD) as u64
        + (triples as f64 * DB_BYTES_PER_TRIPLE_RECORD * TRIPLE_INDEXES.len() as f64) as u64
        + (quads as f64 * DB_BYTES_PER_QUAD_RECORD * QUAD_INDEXES.len() as f64) as u64;
    let tmp_dir = req.tmpdir.clone().unwrap_or_else(|| target_dir(&req.loc));
    let target = target_dir(&req.loc);
    let tmp_free = free_bytes(&tmp_dir);
    let target_free = free_bytes(&target);
    let same_filesystem = matches!((device(&tmp_dir), device(&target)), (Some(a), Some(b)) if a == b);
    if same_filesystem {
        findings.check_disk(
            format!("of temp disk and database on {}", tmp_dir.display()),
            tmp_peak + database,
            tmp_free,
        );
    } else {
        findings.check_disk(format!("of temp disk on {}", tmp_dir.display()), tmp_peak, tmp_free);
        findings.check_disk(format!("for the database on {}", target.display()), database, target_free);
    }
    DiskNeeds {
        tmp_dir: tmp_dir.display().to_string(),
        tmp_free_bytes: tmp_free,
        tmp_parse_bytes: tmp_parse,
        tmp_peak_bytes: tmp_peak,
        target_dir: target.display().to_string(),
        target_free_bytes: target_free,
        database_bytes: database,
        same_filesystem,
    }
}

impl Plan {
    /// The error `load` refuses with (exit 5), when the build cannot fit.
    pub fn refusal(&self) -> Option<LoadError> {
        (self.verdict == Verdict::DoesNotFit).then(|| {
            let hard: Vec<&str> =
                self.problems.iter().filter(|p| p.verdict == Verdict::DoesNotFit).map(|p| p.message.as_str()).collect();
            LoadError::Resources(format!(
                "the build cannot fit ({}; estimated from a sample: ~{} statements, ~{} distinct terms); \
                 `rdf-bulkload plan` shows the whole estimate",
                hard.join("; "),
                self.estimated_statements,
                self.estimated_distinct_terms
            ))
        })
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("plan is JSON")
    }

    /// The human table.
    pub fn to_text(&self) -> String {
        let mut o = String::new();
        let w = self.inputs.iter().map(|i| i.path.chars().count()).max().unwrap_or(5).clamp(5, 60);
        o.push_str(&format!(
            "{:<w$}  {:<9}  {:<11}  {:>9}  {:>13}  basis\n",
            "input", "format", "compression", "size", "statements~"
        ));
        for i in &self.inputs {
            o.push_str(&format!(
                "{:<w$}  {:<9}  {:<11}  {:>9}  {:>13}  {}\n",
                i.path,
                i.syntax,
                i.compression,
                human_bytes(i.bytes),
                i.statements,
                i.basis
            ));
        }
        o.push_str("\nhow each input was sampled:\n");
        for i in &self.inputs {
            o.push_str(&format!("  {}: {} ({})\n", i.path, i.basis, i.method));
        }
        o.push_str("\nestimate:\n");
        o.push_str(&format!(
            "  statements       ~{} ({} triples, {} quads)\n",
            self.estimated_statements, self.estimated_triples, self.estimated_quads
        ));
        o.push_str(&format!(
            "  distinct terms   ~{} ({} stored)\n",
            self.estimated_distinct_terms,
            human_bytes(self.estimated_term_bytes)
        ));
        let m = &self.memory;
        o.push_str(&format!("\nmemory (--memory {}, {} threads):\n", human_bytes(m.budget_bytes), m.threads));
        o.push_str(&format!("  fixed buffers    {}\n", human_bytes(m.fixed_bytes)));
        o.push_str(&format!(
            "  dictionary       ~{} of a {} share: {}\n",
            human_bytes(m.dictionary_bytes),
            human_bytes(m.dictionary_budget_bytes),
            if m.dictionary_spills { "spills to temp disk (slower, not fatal)" } else { "fits in memory" }
        ));
        o.push_str(&format!("  id remap table   ~{} (8 bytes per term)\n", human_bytes(m.remap_bytes)));
        o.push_str(&format!(
            "  sort buffers     {}\n",
            if m.sort_bytes > 0 { human_bytes(m.sort_bytes as u64) } else { "none left".into() }
        ));
        let d = &self.disk;
        let free = |f: Option<u64>| f.map_or("unknown".to_string(), human_bytes);
        o.push_str("\ndisk:\n");
        o.push_str(&format!(
            "  temp ({})  ~{} after parsing, ~{} at peak; {} free\n",
            d.tmp_dir,
            human_bytes(d.tmp_parse_bytes),
            human_bytes(d.tmp_peak_bytes),
            free(d.tmp_free_bytes)
        ));
        o.push_str(&format!(
            "  database ({})  ~{}; {} free{}\n",
            d.target_dir,
            human_bytes(d.database_bytes),
            free(d.target_free_bytes),
            if d.same_filesystem { " (same filesystem as temp: the needs add up)" } else { "" }
        ));
        o.push_str(&format!(
            "\nverdict: {}\n",
            match self.verdict {
                Verdict::Fits => "fits",
                Verdict::Tight => "fits, but tight",
                Verdict::DoesNotFit => "does not fit",
            }
        ));
        for p in &self.problems {
            o.push_str(&format!("  - {p}\n"));
        }
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::File;
    use std::io::Write;

    fn opts(dir: &Path, memory: u64) -> PlanRequest {
        PlanRequest { loc: dir.join("db"), tmpdir: None, threads: 2, memory, base: None, jena: JenaVersion::V5 }
    }

    fn est(statements: u64, terms: u64, term_bytes: u64) -> InputEstimate {
        InputEstimate {
            path: "x.nt".into(),
            syntax: "n-triples",
            compression: "none",
            bytes: 1,
            basis: "spread windows",
            method: String::new(),
            windows: 1,
            sample_bytes: 1,
            statements,
            head_statements: statements,
            distinct_terms: terms,
            term_bytes,
            quads: false,
        }
    }

    #[test]
    fn small_file_is_counted_exactly_and_fits() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("a.nt.gz");
        let mut gz = flate2::write::GzEncoder::new(File::create(&p).unwrap(), flate2::Compression::fast());
        for i in 0..1000 {
            // 1000 subjects, one predicate, 500 distinct string objects, inline integers
            writeln!(gz, "<http://e/s{i}> <http://e/p> \"o{}\" .", i % 500).unwrap();
            writeln!(gz, "<http://e/s{i}> <http://e/n> \"{i}\"^^<http://www.w3.org/2001/XMLSchema#integer> .").unwrap();
        }
        gz.finish().unwrap();
        let f = rdf_input::detect(&p).unwrap();
        let plan = plan(&opts(tmp.path(), 1 << 30), &[f], &AtomicBool::new(false)).unwrap();
        assert_eq!(plan.inputs[0].basis, "sampled to the end");
        assert_eq!(plan.estimated_statements, 2000);
        // s0..s999, p, n, o0..o499; integers are inline
        assert_eq!(plan.estimated_distinct_terms, 1502);
        assert_eq!(plan.verdict, Verdict::Fits, "{:?}", plan.problems);
        assert!(plan.refusal().is_none());
    }

    #[test]
    fn partial_sample_extrapolates_by_compressed_bytes() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("big.nt");
        let mut f = std::io::BufWriter::new(File::create(&p).unwrap());
        let line = |i: u64| format!("<http://e/s{i:08}> <http://e/p> <http://e/o{i:08}> .\n");
        let n = 2 * SAMPLE_BYTES as u64 / line(0).len() as u64 + 10;
        for i in 0..n {
            f.write_all(line(i).as_bytes()).unwrap();
        }
        drop(f);
        let plan =
            plan(&opts(tmp.path(), 1 << 30), &[rdf_input::detect(&p).unwrap()], &AtomicBool::new(false)).unwrap();
        let e = &plan.inputs[0];
        assert_eq!(e.basis, "spread windows");
        assert_eq!(e.windows, SAMPLE_WINDOWS);
        let err = (e.statements as f64 - n as f64).abs() / n as f64;
        assert!(err < 0.01, "estimated {} statements, the file has {n}", e.statements);
        assert!(e.distinct_terms >= 2 * n, "every subject and object is new: {} < {}", e.distinct_terms, 2 * n);
    }

    #[test]
    fn an_input_within_the_head_sample_is_counted_whole() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("mid.nt");
        let mut f = std::io::BufWriter::new(File::create(&p).unwrap());
        let line = |i: u64| format!("<http://e/s{i:08}> <http://e/p> <http://e/o{}> .\n", i % 1000);
        // Several windows' worth, less than the head sample: read whole, exact.
        let n = (SAMPLE_BYTES as u64 / 2) / line(0).len() as u64;
        for i in 0..n {
            f.write_all(line(i).as_bytes()).unwrap();
        }
        drop(f);
        let plan =
            plan(&opts(tmp.path(), 1 << 30), &[rdf_input::detect(&p).unwrap()], &AtomicBool::new(false)).unwrap();
        assert_eq!(plan.inputs[0].basis, "sampled to the end");
        assert_eq!(plan.estimated_statements, n);
        assert_eq!(plan.estimated_distinct_terms, n + 1 + 1000);
    }

    #[test]
    fn remap_table_beyond_the_budget_is_refused_with_numbers() {
        let tmp = tempfile::tempdir().unwrap();
        // 100M terms need 800 MB of remap table; the budget is 512 MiB.
        let plan = assess(&opts(tmp.path(), 512 << 20), vec![est(300_000_000, 100_000_000, 4_000_000_000)]);
        assert_eq!(plan.verdict, Verdict::DoesNotFit);
        let msg = plan.refusal().unwrap().to_string();
        assert!(msg.contains("remap table") && msg.contains("give at least --memory"), "{msg}");
    }

    #[test]
    fn a_bzip2_input_sets_a_block_decoder_aside_per_worker() {
        let tmp = tempfile::tempdir().unwrap();
        let gz = assess(&opts(tmp.path(), 1 << 30), vec![est(1000, 1000, 10_000)]);
        let bz =
            assess(&opts(tmp.path(), 1 << 30), vec![InputEstimate { compression: "bzip2", ..est(1000, 1000, 10_000) }]);
        assert_eq!(bz.memory.fixed_bytes, gz.memory.fixed_bytes + 2 * (4 << 20), "two workers");
    }

    #[test]
    fn remap_table_that_fits_only_without_the_margin_is_tight() {
        let tmp = tempfile::tempdir().unwrap();
        let budget = 256 << 20;
        let mp = MemoryPlan::new(budget, 2, false).unwrap();
        let spare = budget - MemoryPlan::fixed_bytes(2, false) - mp.tuple_buffer_bytes(2) - MIN_SORT_BYTES;
        let terms = (spare - (1 << 20)) / 8; // the remap table fits with 1 MiB to spare
        let plan = assess(&opts(tmp.path(), budget), vec![est(terms, terms, terms * 10)]);
        assert_eq!(plan.verdict, Verdict::Tight, "{:?}", plan.problems);
        assert!(plan.refusal().is_none(), "a tight build is started");
        assert!(
            plan.problems.iter().any(|p| p.verdict == Verdict::Tight && p.message.contains("remap table")),
            "{:?}",
            plan.problems
        );
        let plan = assess(&opts(tmp.path(), budget), vec![est(terms, terms + (2 << 17), terms * 10)]);
        assert_eq!(plan.verdict, Verdict::DoesNotFit, "2 MiB more of remap table do not fit");
    }

    #[test]
    fn budget_below_the_minimum_does_not_fit() {
        let tmp = tempfile::tempdir().unwrap();
        let plan = assess(&opts(tmp.path(), 1 << 20), vec![est(10, 10, 100)]);
        assert_eq!(plan.verdict, Verdict::DoesNotFit);
        assert!(plan.problems[0].message.contains("below the minimum"), "{:?}", plan.problems);
    }

    #[test]
    fn disk_model_adds_dictionary_logs_and_runs() {
        let tmp = tempfile::tempdir().unwrap();
        let plan = assess(&opts(tmp.path(), 256 << 20), vec![est(10_000_000, 2_000_000, 60_000_000)]);
        let d = &plan.disk;
        let dict = 60_000_000 + 2_000_000 * DICT_DISK_PER_TERM;
        let logs = (10_000_000.0 * LOG_BYTES_PER_TRIPLE) as u64;
        assert_eq!(d.tmp_parse_bytes, dict + logs);
        // 10M triples do not fit a 2-thread share of ~100 MiB: two indexes spill runs at once
        assert_eq!(d.tmp_peak_bytes, dict + logs + 2 * (10_000_000.0 * RUN_BYTES_PER_TRIPLE) as u64);
        assert!(d.database_bytes > 3 * 24 * 10_000_000);
        assert!(d.same_filesystem, "temp defaults to the parent of --loc");
    }
}
