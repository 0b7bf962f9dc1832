//! Durable checkpoints of a load, kept in its work directory (the spill directory), so that
//! a load started again with the same arguments resumes after the last completed phase
//! (parse, node table, each index, finish) instead of starting over.
//!
//! A checkpoint is one JSON file, replaced atomically (write, fsync, rename, fsync the
//! directory) only after everything it refers to is durable. It names every work file the
//! completed phases left for the next ones; on resume every other file in the directory is
//! the debris of an unfinished phase and is removed.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::fs::{self, File};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::Path;

use md5::{Digest, Md5};
use serde::{Deserialize, Serialize};

use crate::failpoint::crash_point;
use crate::tuples::Logged;

pub const CHECKPOINT_FILE: &str = "checkpoint.json";
const SAMPLE: u64 = 1 << 20;

/// The last step a checkpoint records as completed ([`Checkpoint::last_step`]); shown as
/// messages and the build report's `resumed_after` name it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    Start,
    /// Part of the parse phase (a partial checkpoint), this many statements.
    ParsePartial {
        statements: u64,
    },
    Parse,
    Nodes,
    /// The indexes completed so far, by name.
    Indexes(Vec<String>),
    Finish,
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Step::Start => f.write_str("start"),
            Step::ParsePartial { statements } => write!(f, "parse (partial: {statements} statements)"),
            Step::Parse => f.write_str("parse"),
            Step::Nodes => f.write_str("nodes"),
            Step::Indexes(names) => write!(f, "indexes ({})", names.join(", ")),
            Step::Finish => f.write_str("finish"),
        }
    }
}

/// What makes two runs "the same load": the inputs (path, size, modification time, MD5 of
/// their first and last MiB) and the options that change the database. Threads, memory
/// and progress options may differ: the database is byte-identical whatever they are.
/// A checkpoint records it to be resumed only by the same load; the build report records
/// it so that a rerun of a finished load is recognised (`already_complete`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BuildIdentity {
    pub loader_version: String,
    pub loc: String,
    pub on_error: String,
    pub max_rejects: u64,
    pub rejects_file: String,
    pub base: Option<String>,
    /// The Jena release whose inline rules the database follows (`--jena`, as the report's
    /// `jena_compat`); checkpoints and reports from before the option hold 5.6.0's.
    #[serde(default = "jena_5")]
    pub jena: String,
    pub inputs: Vec<InputIdentity>,
}

fn jena_5() -> String {
    tdb2_nodeid::JenaVersion::V5.release().into()
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputIdentity {
    pub path: String,
    pub bytes: u64,
    pub(crate) modified_ns: u128,
    /// MD5 of the first and the last MiB (the whole file when smaller).
    pub(crate) sample_md5: String,
}

impl InputIdentity {
    pub fn of(path: &Path) -> io::Result<InputIdentity> {
        let mut f = File::open(path)?;
        let meta = f.metadata()?;
        let bytes = meta.len();
        let modified_ns = meta.modified()?.duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let mut md5 = Md5::new();
        let mut buf = vec![0u8; SAMPLE as usize];
        let head = read_up_to(&mut f, &mut buf)?;
        md5.update(&buf[..head]);
        if bytes > SAMPLE {
            f.seek(SeekFrom::Start(bytes.saturating_sub(SAMPLE).max(SAMPLE)))?;
            let tail = read_up_to(&mut f, &mut buf)?;
            md5.update(&buf[..tail]);
        }
        Ok(InputIdentity { path: path.display().to_string(), bytes, modified_ns, sample_md5: hex(&md5.finalize()) })
    }
}

fn read_up_to(f: &mut File, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl BuildIdentity {
    /// Why `self` (the recorded one: a checkpoint's or a build report's) is not the load
    /// asked for now; `None` when it is.
    pub fn difference(&self, now: &BuildIdentity) -> Option<String> {
        if self.inputs.len() != now.inputs.len() {
            return Some(format!("the number of input files changed ({} → {})", self.inputs.len(), now.inputs.len()));
        }
        for (a, b) in self.inputs.iter().zip(&now.inputs) {
            if a.path != b.path {
                return Some(format!("input {} is now {}", a.path, b.path));
            }
            if a.bytes != b.bytes {
                return Some(format!("input {} changed size ({} → {} bytes)", a.path, a.bytes, b.bytes));
            }
            if a.sample_md5 != b.sample_md5 {
                return Some(format!("input {} changed content (digest {} → {})", a.path, a.sample_md5, b.sample_md5));
            }
            if a.modified_ns != b.modified_ns {
                return Some(format!("input {} was modified (its modification time changed)", a.path));
            }
        }
        let fields = |i: &BuildIdentity| {
            [
                ("loader version", i.loader_version.clone()),
                ("--loc", i.loc.clone()),
                ("--on-error", i.on_error.clone()),
                ("--max-rejects", i.max_rejects.to_string()),
                ("--rejects", i.rejects_file.clone()),
                ("--base", i.base.clone().unwrap_or_else(|| "(none)".into())),
                ("--jena", i.jena.clone()),
            ]
        };
        let changed: Vec<String> = fields(self)
            .into_iter()
            .zip(fields(now))
            .filter(|(a, b)| a.1 != b.1)
            .map(|((name, a), (_, b))| format!("{name} {a} → {b}"))
            .collect();
        if !changed.is_empty() {
            return Some(format!("the options differ ({})", changed.join(", ")));
        }
        None
    }
}

/// A tuple log left by the parse phase (a file in the work directory).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LogState {
    pub file: Option<String>,
    pub(crate) file_bytes: u64,
    pub tuples: u64,
}

impl LogState {
    pub fn of<const N: usize>(l: &Logged<N>) -> LogState {
        LogState {
            file: l.file().and_then(|p| p.file_name()).map(|n| n.to_string_lossy().into_owned()),
            file_bytes: l.file_bytes(),
            tuples: l.len(),
        }
    }

    /// The log this names, in the work directory.
    pub fn logged<const N: usize>(&self, work: &Path) -> Logged<N> {
        Logged::from_state(self.file.as_ref().map(|f| work.join(f)), self.file_bytes, self.tuples)
    }
}

/// One dictionary shard, all spilled: its sorted runs and how many ids it handed out.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ShardState {
    pub ids: u64,
    pub runs: Vec<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ParseState {
    pub seconds: f64,
    pub statements: u64,
    pub rejects: u64,
    /// Every prefix declaration (graph, prefix, namespace), in load order, redefinitions
    /// included: the prefix tables allocate their nodes in this order, as Jena does.
    pub prefixes: Vec<(String, String, String)>,
    /// MD5 of each input's raw bytes.
    pub input_md5: Vec<Option<String>>,
    pub dictionary_bytes: u64,
    /// Entries the dictionary spilled while parsing, because of the memory budget.
    pub dictionary_spilled_terms: u64,
    pub dictionary: Vec<ShardState>,
    pub triple_logs: Vec<LogState>,
    pub quad_logs: Vec<LogState>,
    /// Terms kept with a warning (crate::warnings).
    #[serde(default)]
    pub warnings: crate::warnings::Warnings,
}

/// A statement rejected in skip mode, kept in a partial checkpoint until the rejects file
/// is written at the end of the parse phase.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RejectState {
    pub file: usize,
    pub line: u64,
    pub column: u64,
    pub message: String,
    pub text: String,
    /// The lines `text` spans (a Turtle/TriG statement may span several).
    #[serde(default)]
    pub start_line: u64,
    #[serde(default)]
    pub end_line: u64,
}

/// The work of a parse phase still under way: what its completed jobs produced. Jobs after
/// the checkpoint are redone by the run that resumes it; tuples they logged before the
/// checkpoint are beyond the logs' recorded lengths, or (a Turtle file cut short) logged
/// again: duplicates, which the indexes drop as they do any repeated statement.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct PartialParse {
    /// Statements of the completed jobs.
    pub statements: u64,
    /// Per line-based input (by position), the chunks parsed.
    pub chunks_done: BTreeMap<usize, Vec<u64>>,
    /// Inputs parsed whole (RDF/XML, and the files of `whole_files`), with the MD5 of their
    /// raw bytes.
    pub files_done: BTreeMap<usize, Option<String>>,
    /// Turtle/TriG inputs to parse whole, sequentially, instead of split: those whose split
    /// a worker found cut wrongly in skip mode, which made the parse phase start over
    /// (bulkload-pipeline's parse phase). Kept so that a resumed parse makes the same choice.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub whole_files: BTreeSet<usize>,
    /// Prefix declarations of the Turtle/TriG inputs parsed, in input order.
    pub prefixes: BTreeMap<usize, Vec<(String, String)>>,
    pub rejects: Vec<RejectState>,
    /// Terms kept with a warning by the completed jobs.
    #[serde(default)]
    pub warnings: crate::warnings::Warnings,
    pub dictionary: Vec<ShardState>,
    pub triple_logs: Vec<LogState>,
    pub quad_logs: Vec<LogState>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct NodesState {
    pub seconds: f64,
    pub distinct_terms: u64,
    pub node_data_bytes: u64,
    pub rdf_type: Option<u64>,
    /// Provisional id → NodeId table (`remap.bin` in the work directory).
    pub remap_file: String,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct IndexState {
    pub records: u64,
    /// POS (the default graph) and POSG (the named graphs' union) only: predicate and class
    /// counts by NodeId, for stats.opt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stats: Option<IdStatsState>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct IdStatsState {
    pub count: u64,
    pub predicates: Vec<(u64, u64)>,
    pub classes: Vec<(u64, u64)>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Checkpoint {
    pub identity: BuildIdentity,
    /// The temporary database directory the phases write into.
    pub building: String,
    /// A parse phase under way (None once `parse` is set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parse_partial: Option<PartialParse>,
    pub parse: Option<ParseState>,
    pub nodes: Option<NodesState>,
    /// Finished indexes by name (seconds of the whole index phase are in `indexes_seconds`).
    pub indexes: BTreeMap<String, IndexState>,
    pub indexes_seconds: f64,
    /// The database is complete in `building`; only the rename into place may be missing.
    pub finished: bool,
}

impl Checkpoint {
    pub fn new(identity: BuildIdentity, building: &Path) -> Checkpoint {
        Checkpoint {
            identity,
            building: building.display().to_string(),
            parse_partial: None,
            parse: None,
            nodes: None,
            indexes: BTreeMap::new(),
            indexes_seconds: 0.0,
            finished: false,
        }
    }

    /// The last completed step.
    pub fn last_step(&self) -> Step {
        if self.finished {
            Step::Finish
        } else if !self.indexes.is_empty() {
            Step::Indexes(self.indexes.keys().cloned().collect())
        } else if self.nodes.is_some() {
            Step::Nodes
        } else if self.parse.is_some() {
            Step::Parse
        } else if let Some(p) = &self.parse_partial {
            Step::ParsePartial { statements: p.statements }
        } else {
            Step::Start
        }
    }

    /// Work files the next phases still need.
    pub fn live_files(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let (Some(p), None) = (&self.parse_partial, &self.parse) {
            out.extend(p.dictionary.iter().flat_map(|s| s.runs.iter().cloned()));
            out.extend(p.triple_logs.iter().chain(&p.quad_logs).filter_map(|l| l.file.clone()));
        }
        if let Some(p) = &self.parse {
            if self.nodes.is_none() {
                out.extend(p.dictionary.iter().flat_map(|s| s.runs.iter().cloned()));
            }
            if !self.finished {
                out.extend(p.triple_logs.iter().chain(&p.quad_logs).filter_map(|l| l.file.clone()));
            }
        }
        if let (Some(n), false) = (&self.nodes, self.finished) {
            out.push(n.remap_file.clone());
        }
        out
    }

    /// Reads the checkpoint in `work_dir`, if there is one.
    pub fn read(work_dir: &Path) -> io::Result<Option<Checkpoint>> {
        match fs::read(work_dir.join(CHECKPOINT_FILE)) {
            Ok(bytes) => {
                serde_json::from_slice(&bytes).map(Some).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Makes this checkpoint the durable one. Everything it names must already be synced.
    pub fn save(&self, work_dir: &Path) -> io::Result<()> {
        let tmp = work_dir.join(format!("{CHECKPOINT_FILE}.tmp"));
        let mut f = File::create(&tmp)?;
        f.write_all(&serde_json::to_vec_pretty(self).map_err(io::Error::other)?)?;
        f.sync_all()?;
        drop(f);
        crash_point("checkpoint.before_rename");
        fs::rename(&tmp, work_dir.join(CHECKPOINT_FILE))?;
        sync_dir(work_dir)?;
        crash_point("checkpoint.saved");
        Ok(())
    }
}

pub fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Syncs the named files (relative to `dir`).
pub fn sync_files<'a>(dir: &Path, names: impl IntoIterator<Item = &'a str>) -> io::Result<()> {
    for n in names {
        File::open(dir.join(n))?.sync_all()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_sees_changed_inputs() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("in.nt");
        fs::write(&p, vec![b'a'; 3 << 20]).unwrap();
        let a = InputIdentity::of(&p).unwrap();
        assert_eq!(a, InputIdentity::of(&p).unwrap(), "stable for an unchanged file");
        // Same size, one byte changed in the last MiB.
        let mut bytes = fs::read(&p).unwrap();
        let n = bytes.len();
        bytes[n - 10] = b'b';
        fs::write(&p, &bytes).unwrap();
        let b = InputIdentity::of(&p).unwrap();
        assert_ne!(a.sample_md5, b.sample_md5);
        let id = |i: InputIdentity| test_identity("5.6.0", vec![i]);
        let why = id(a.clone()).difference(&id(b)).unwrap();
        assert!(why.contains("changed content"), "{why}");
        fs::write(&p, b"short").unwrap();
        let why = id(a).difference(&id(InputIdentity::of(&p).unwrap())).unwrap();
        assert!(why.contains("changed size"), "{why}");
    }

    /// A build identity that differs only in what a test varies.
    fn test_identity(jena: &str, inputs: Vec<InputIdentity>) -> BuildIdentity {
        BuildIdentity {
            loader_version: "x".into(),
            loc: "db".into(),
            on_error: "strict".into(),
            max_rejects: 0,
            rejects_file: "r".into(),
            base: None,
            jena: jena.into(),
            inputs,
        }
    }

    #[test]
    fn identity_records_the_jena_version() {
        let id = |jena: &str| test_identity(jena, vec![]);
        let why = id("5.6.0").difference(&id("6.2.0")).unwrap();
        assert!(why.contains("--jena 5.6.0 → 6.2.0"), "{why}");
        assert_eq!(id("6.2.0").difference(&id("6.2.0")), None);
        // A checkpoint or report written before the option: 5.6.0's rules.
        let mut old = serde_json::to_value(id("6.2.0")).unwrap();
        old.as_object_mut().unwrap().remove("jena");
        let old: BuildIdentity = serde_json::from_value(old).unwrap();
        assert_eq!(old.jena, "5.6.0");
    }

    #[test]
    fn save_replaces_atomically_and_reads_back() {
        let tmp = tempfile::tempdir().unwrap();
        assert!(Checkpoint::read(tmp.path()).unwrap().is_none());
        let id = BuildIdentity {
            loader_version: "x".into(),
            loc: "db".into(),
            on_error: "skip".into(),
            max_rejects: 3,
            rejects_file: "r".into(),
            base: Some("http://b/".into()),
            jena: "6.2.0".into(),
            inputs: vec![],
        };
        let mut c = Checkpoint::new(id.clone(), Path::new("b"));
        c.save(tmp.path()).unwrap();
        c.indexes.insert("SPO".into(), IndexState { records: 7, stats: None });
        c.save(tmp.path()).unwrap();
        let back = Checkpoint::read(tmp.path()).unwrap().unwrap();
        assert_eq!(back.identity, id);
        assert_eq!(back.indexes["SPO"].records, 7);
        assert!(!tmp.path().join("checkpoint.json.tmp").exists());
    }
}
