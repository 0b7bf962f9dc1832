//! Kill tests: the loader is SIGKILLed at crash points spread over every phase (and once
//! from outside, at a moment it does not choose); each rerun with the same arguments must
//! resume from the last checkpoint and produce a database byte-identical to an
//! uninterrupted run, and no kill may leave anything at --loc that is not a complete
//! database. Needs the `failpoints` feature (`make test-loader-unit` builds with it).
#![cfg(feature = "failpoints")]

mod common;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use common::{bin, data_files, write_dump, write_terse};

/// Inputs with every path through the parser: two N-Quads files (line chunks, named and
/// default graphs) and a Turtle file (whole-file parse, prefixes, blank nodes).
fn inputs(dir: &Path) -> Vec<PathBuf> {
    let mut files = write_dump(dir, 2, 40_000);
    let ttl = dir.join("extra.ttl");
    let mut f = std::fs::File::create(&ttl).unwrap();
    writeln!(f, "@prefix ex: <http://example.org/> .\n@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .").unwrap();
    for i in 0..3000 {
        writeln!(
            f,
            "ex:t{i} a ex:Class{} ; ex:label \"turtle {i}\"@en ; ex:n {i} ; ex:knows [ ex:name \"anon {i}\" ] .",
            i % 7
        )
        .unwrap();
    }
    files.push(ttl);
    files
}

/// Two indexes build at once.
const ARGS: &[&str] = &["--threads", "2", "--memory", "150Mi"];

fn run(db: &Path, files: &[PathBuf], failpoints: Option<&str>, extra: &[&str]) -> Output {
    let mut c = Command::new(bin());
    c.arg("load").arg("--loc").arg(db).args(ARGS).args(extra).args(files);
    match failpoints {
        Some(f) => c.env("FAILPOINTS", f),
        None => c.env_remove("FAILPOINTS"),
    };
    c.output().unwrap()
}

/// Starts a load in the background with `FAILPOINTS` set (pauses, not crashes), its stderr
/// piped.
fn spawn(db: &Path, files: &[PathBuf], failpoints: &str) -> Child {
    Command::new(bin())
        .arg("load")
        .arg("--loc")
        .arg(db)
        .args(ARGS)
        .args(files)
        .env("FAILPOINTS", failpoints)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits until the file exists (the load has reached that point).
fn wait_for(path: &Path) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(300);
    while !path.exists() {
        assert!(std::time::Instant::now() < deadline, "{} did not appear in 300 s", path.display());
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

fn report(db: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(db.join("bulkload-report.json")).unwrap()).unwrap()
}

/// What a rerun after the kill is expected to do.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Resume {
    /// Start over: no checkpoint was durable yet.
    FromStart,
    /// Resume after the named checkpoint (`parse`, `nodes`, `indexes`, `finish`).
    After(&'static str),
    /// Resume after this checkpoint or a later one: where index builds run in parallel,
    /// which indexes are done when a kill lands in one of them is up to the scheduler.
    AtLeast(&'static str),
    /// The database was already in place: only clean up.
    Complete,
}

struct Fixture {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
    files: Vec<PathBuf>,
    reference: Vec<(String, Vec<u8>)>,
    reference_report: serde_json::Value,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_path_buf();
    let files = inputs(&dir);
    let refdb = dir.join("reference");
    let out = run(&refdb, &files, None, &[]);
    assert!(out.status.success(), "reference load failed: {}", String::from_utf8_lossy(&out.stderr));
    Fixture { reference: data_files(&refdb), reference_report: report(&refdb), _tmp: tmp, dir, files }
}

impl Fixture {
    /// Nothing but a complete database may be at --loc, and no build or work directory
    /// may stay once a load succeeded.
    fn assert_clean_success(&self, db: &Path, context: &str) {
        assert_eq!(data_files(db), self.reference, "{context}: the database differs from an uninterrupted run's");
        let r = report(db);
        for k in ["statements", "triples", "quads", "distinct_terms", "prefixes"] {
            assert_eq!(r[k], self.reference_report[k], "{context}: report field {k}");
        }
        let name = db.file_name().unwrap().to_string_lossy().into_owned();
        for leftover in
            [format!(".{name}.building"), format!(".{name}.spill"), format!(".{name}.old"), format!(".{name}.lock")]
        {
            assert!(!db.with_file_name(&leftover).exists(), "{context}: {leftover} left after success");
        }
    }

    /// Kills a load at `failpoint`, checks what the kill left, reruns and checks the result.
    fn kill_and_resume(&self, case: &str, failpoint: &str, expect: Resume, extra: &[&str]) {
        let db = self.dir.join(format!("db-{case}"));
        if extra.contains(&"--replace") {
            // An older database is at --loc: it must stay readable until the swap.
            let out = run(&db, &self.files[..1], None, &[]);
            assert!(out.status.success());
        }
        let killed = run(&db, &self.files, Some(failpoint), extra);
        assert_eq!(
            killed.status.signal(),
            Some(9),
            "{case}: {failpoint} was not reached (exit {:?}): {}",
            killed.status.code(),
            String::from_utf8_lossy(&killed.stderr)
        );
        if db.exists() {
            // Only ever a complete database: the old one (before the swap) or the new one.
            assert!(
                db.join("Data-0001").join("SPO.dat").exists() && db.join("bulkload-report.json").exists(),
                "{case}: incomplete directory at --loc"
            );
            if matches!(expect, Resume::Complete) {
                assert_eq!(data_files(&db), self.reference, "{case}: the renamed database is not complete");
            }
        }
        let rerun = run(&db, &self.files, None, extra);
        let err = String::from_utf8_lossy(&rerun.stderr);
        assert!(rerun.status.success(), "{case}: the rerun failed: {err}");
        let resumed = report(&db)["resumed_after"].as_str().map(str::to_owned);
        match expect {
            Resume::FromStart => {
                assert!(!err.contains("\"event\":\"resuming\""), "{case}: resumed without a checkpoint: {err}");
                assert_eq!(resumed, None, "{case}");
            }
            Resume::After(step) => {
                assert!(err.contains("\"event\":\"resuming\""), "{case}: did not resume: {err}");
                let r = resumed.unwrap_or_default();
                assert!(r.starts_with(step), "{case}: resumed after {r:?}, expected {step}");
            }
            Resume::AtLeast(step) => {
                const ORDER: [&str; 4] = ["parse", "nodes", "indexes", "finish"];
                let rank = |s: &str| ORDER.iter().position(|o| s.starts_with(o)).expect("known step");
                let r = resumed.unwrap_or_default();
                assert!(err.contains("\"event\":\"resuming\""), "{case}: did not resume: {err}");
                assert!(rank(&r) >= rank(step), "{case}: resumed after {r:?}, expected {step} or later");
            }
            Resume::Complete => assert!(err.contains("\"event\":\"already_complete\""), "{case}: {err}"),
        }
        self.assert_clean_success(&db, case);
        std::fs::remove_dir_all(&db).unwrap();
    }
}

/// 24 crash points over parse (chunks, dictionary spills, tuple-log spills), the parse
/// checkpoint, the node table, its checkpoint, index sorting and packing, each index's
/// checkpoint, and the finish (statistics, sync, the final checkpoint, the swap with an
/// old database, the rename).
#[test]
fn killed_anywhere_resumes_to_the_same_database() {
    let f = fixture();
    use Resume::*;
    // Checkpoint saves, in order: parse (1), nodes (2), nine indexes (3..=11), finish (12).
    let cases: &[(&str, &str, Resume, &[&str])] = &[
        ("first-chunk", "parse.chunk=return", FromStart, &[]),
        ("later-chunk", "parse.chunk=3*off->return", FromStart, &[]),
        ("tuple-spill", "parse.tuples_spill=return", FromStart, &[]),
        ("dict-spill-first", "parse.dict_spill=return", FromStart, &[]),
        ("dict-spill-late", "parse.dict_spill=50*off->return", FromStart, &[]),
        ("parse-checkpoint-unrenamed", "checkpoint.before_rename=return", FromStart, &[]),
        ("parse-checkpoint-saved", "checkpoint.saved=return", After("parse"), &[]),
        ("first-term", "nodes.term=return", After("parse"), &[]),
        ("mid-node-table", "nodes.term=20000*off->return", After("parse"), &[]),
        ("node-table-written", "nodes.written=return", After("parse"), &[]),
        ("nodes-checkpoint-unrenamed", "checkpoint.before_rename=1*off->return", After("parse"), &[]),
        ("nodes-checkpoint-saved", "checkpoint.saved=1*off->return", After("nodes"), &[]),
        ("sorting", "indexes.sort_push=return", AtLeast("nodes"), &[]),
        ("packing-first", "indexes.record=return", AtLeast("nodes"), &[]),
        ("packing-later", "indexes.record=5*off->return", AtLeast("nodes"), &[]),
        ("index-built-unrecorded", "indexes.index_done=return", AtLeast("nodes"), &[]),
        ("one-index-saved", "checkpoint.saved=2*off->return", After("indexes"), &[]),
        ("five-indexes-saved", "checkpoint.saved=6*off->return", After("indexes"), &[]),
        ("last-index-unrecorded", "indexes.index_done=8*off->return", After("indexes"), &[]),
        ("all-indexes-saved", "checkpoint.saved=10*off->return", After("indexes"), &[]),
        ("stats-written", "finish.stats=return", After("indexes"), &[]),
        ("synced", "finish.synced=return", After("indexes"), &[]),
        ("finished-unrenamed", "checkpoint.saved=11*off->return", After("finish"), &[]),
        ("mid-swap", "finish.swap=return", After("finish"), &["--replace"]),
        ("renamed", "finish.renamed=return", Complete, &[]),
    ];
    for (case, failpoint, expect, extra) in cases {
        f.kill_and_resume(case, failpoint, *expect, extra);
    }
}

/// Killed twice in a row at different phases, then completed: checkpoints accumulate.
#[test]
fn killed_twice_still_resumes() {
    let f = fixture();
    let db = f.dir.join("db");
    let first = run(&db, &f.files, Some("nodes.term=5000*off->return"), &[]);
    assert_eq!(first.status.signal(), Some(9));
    let second = run(&db, &f.files, Some("indexes.record=2*off->return"), &[]);
    assert_eq!(second.status.signal(), Some(9), "{}", String::from_utf8_lossy(&second.stderr));
    assert!(String::from_utf8_lossy(&second.stderr).contains("resuming after parse"));
    assert!(!db.exists());
    let third = run(&db, &f.files, None, &[]);
    assert!(third.status.success(), "{}", String::from_utf8_lossy(&third.stderr));
    let resumed = report(&db)["resumed_after"].as_str().unwrap_or_default().to_owned();
    assert!(resumed == "nodes" || resumed.starts_with("indexes"), "{resumed}");
    f.assert_clean_success(&db, "twice");
}

/// A SIGKILL from outside, as the OOM killer or a node failure deals it, once the parse
/// phase has ended (wherever the load then is), and a SIGTERM that stops at a safe point
/// and keeps the checkpointed work: both reruns finish the same database.
#[test]
fn external_sigkill_and_sigterm_leave_resumable_state() {
    let f = fixture();
    for (case, signal) in [("sigkill", "-KILL"), ("sigterm", "-TERM")] {
        let db = f.dir.join(format!("db-{case}"));
        // Holds the load for a while right after the parse checkpoint is durable (a pause,
        // not a crash); the signal comes once the checkpoint file exists.
        let mut child = spawn(&db, &f.files, "checkpoint.saved=1*sleep(5000)");
        wait_for(&f.dir.join(format!(".db-{case}.spill")).join("checkpoint.json"));
        assert!(Command::new("kill").arg(signal).arg(child.id().to_string()).status().unwrap().success());
        let rest: Vec<String> = BufReader::new(child.stderr.take().unwrap()).lines().map_while(Result::ok).collect();
        let status = child.wait().unwrap();
        if signal == "-TERM" {
            assert_eq!(status.code(), Some(6), "SIGTERM exits with 6: {rest:?}");
            assert!(rest.iter().any(|l| l.contains("\"event\":\"resumable\"")), "says the state is kept: {rest:?}");
        } else {
            assert_eq!(status.signal(), Some(9));
        }
        assert!(!db.exists(), "{case}: something at --loc");
        // the summary (the operator's output parameter) says so too: status.load.resumedAfter
        let summary = f.dir.join(format!("summary-{case}.json"));
        let rerun = run(&db, &f.files, None, &["--summary", summary.to_str().unwrap()]);
        assert!(rerun.status.success(), "{}", String::from_utf8_lossy(&rerun.stderr));
        assert_eq!(report(&db)["resumed_after"], "parse", "{case}");
        let summary: serde_json::Value = serde_json::from_slice(&std::fs::read(&summary).unwrap()).unwrap();
        assert_eq!(summary["resumed_after"], "parse", "{case}: the summary");
        f.assert_clean_success(&db, case);
    }
}

/// A changed input invalidates the checkpoints, with a message naming it and why.
#[test]
fn changed_input_starts_over() {
    let f = fixture();
    let db = f.dir.join("db");
    let killed = run(&db, &f.files, Some("checkpoint.saved=1*off->return"), &[]);
    assert_eq!(killed.status.signal(), Some(9));
    // Same length, other content: the Turtle file's last statement changes.
    let ttl = f.files.last().unwrap();
    let mut text = std::fs::read_to_string(ttl).unwrap();
    let at = text.rfind("anon").unwrap();
    text.replace_range(at..at + 4, "anom");
    std::fs::write(ttl, &text).unwrap();
    let rerun = run(&db, &f.files, None, &[]);
    let err = String::from_utf8_lossy(&rerun.stderr);
    assert!(rerun.status.success(), "{err}");
    assert!(err.contains("checkpoint_discarded") && err.contains("extra.ttl changed content"), "{err}");
    assert_eq!(report(&db)["resumed_after"], serde_json::Value::Null);
    assert_ne!(data_files(&db), f.reference, "the new content was loaded");

    // --fresh discards a valid checkpoint too.
    let db2 = f.dir.join("db2");
    let killed = run(&db2, &f.files, Some("checkpoint.saved=1*off->return"), &[]);
    assert_eq!(killed.status.signal(), Some(9));
    let rerun = run(&db2, &f.files, None, &["--fresh"]);
    assert!(rerun.status.success());
    assert!(String::from_utf8_lossy(&rerun.stderr).contains("--fresh"));
    assert_eq!(report(&db2)["resumed_after"], serde_json::Value::Null);
    assert_eq!(data_files(&db2), data_files(&db));
}

/// A second load of the same database while the first runs (a retry started too early)
/// is refused with the transient code, and the first one is not disturbed.
#[test]
fn concurrent_load_of_the_same_database_is_refused() {
    let f = fixture();
    let db = f.dir.join("db");
    let mut first = spawn(&db, &f.files, "checkpoint.saved=1*sleep(4000)");
    wait_for(&f.dir.join(".db.spill").join("checkpoint.json"));
    let second = run(&db, &f.files, None, &[]);
    let err = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(75), "{err}");
    assert!(err.contains("another load of this database is running"), "{err}");
    assert!(first.wait().unwrap().success());
    f.assert_clean_success(&db, "first of two");
}

/// Partial checkpoints while parsing: killed after the second one, the rerun skips the
/// chunks and files already parsed; in skip mode the rejects file and the counts are those
/// of an uninterrupted run.
#[test]
fn killed_mid_parse_resumes_from_a_partial_checkpoint() {
    let f = fixture();
    // Slow chunks down (a pause, not a crash) so that partial checkpoints happen.
    let slow = "parse.chunk=sleep(150);parse.partial_saved=1*off->return";
    let partial = ["--checkpoint-interval", "100ms"];
    let db = f.dir.join("db");
    let killed = run(&db, &f.files, Some(slow), &partial);
    assert_eq!(killed.status.signal(), Some(9), "{}", String::from_utf8_lossy(&killed.stderr));
    let rerun = run(&db, &f.files, None, &partial);
    let err = String::from_utf8_lossy(&rerun.stderr);
    assert!(rerun.status.success(), "{err}");
    let resumed = report(&db)["resumed_after"].as_str().unwrap_or_default().to_owned();
    assert!(resumed.starts_with("parse (partial: "), "{resumed}");
    f.assert_clean_success(&db, "partial");

    // Skip mode: some lines are bad; rejects before and after the checkpoint all count once.
    let bad_dir = f.dir.join("bad");
    std::fs::create_dir_all(&bad_dir).unwrap();
    let mut files = f.files.clone();
    for part in 0..2 {
        let p = bad_dir.join(format!("bad-{part}.nt"));
        let mut w = std::fs::File::create(&p).unwrap();
        for i in 0..30_000 {
            if i % 997 == 0 {
                writeln!(w, "<http://example.org/bad/{part}/{i}> <http://example.org/p> \"unterminated .").unwrap();
            } else {
                writeln!(
                    w,
                    "<http://example.org/ok/{part}/{i}> <http://example.org/p> \"v {i} {}\" .",
                    "x".repeat(200)
                )
                .unwrap();
            }
        }
        files.push(p);
    }
    let skip = ["--on-error", "skip", "--checkpoint-interval", "100ms"];
    let reference = f.dir.join("skip-ref");
    let out = run(&reference, &files, None, &skip);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let db = f.dir.join("skip");
    let killed = run(&db, &files, Some("parse.chunk=sleep(150);parse.partial_saved=2*off->return"), &skip);
    assert_eq!(killed.status.signal(), Some(9), "{}", String::from_utf8_lossy(&killed.stderr));
    let rerun = run(&db, &files, None, &skip);
    assert!(rerun.status.success(), "{}", String::from_utf8_lossy(&rerun.stderr));
    assert!(report(&db)["resumed_after"].as_str().unwrap_or_default().starts_with("parse (partial"));
    assert_eq!(data_files(&db), data_files(&reference));
    for k in ["statements", "triples", "quads", "distinct_terms", "rejects"] {
        assert_eq!(report(&db)[k], report(&reference)[k], "{k}");
    }
    assert_eq!(report(&db)["rejects"], 62);
    let rejects = |db: &Path| {
        std::fs::read_to_string(
            db.with_file_name(format!("{}.rejects.jsonl", db.file_name().unwrap().to_string_lossy())),
        )
        .unwrap()
    };
    assert_eq!(rejects(&db), rejects(&reference), "the rejects file");
}

/// SIGTERM while parsing stops at once, saves what the completed jobs did, and the rerun
/// goes on from there.
#[test]
fn sigterm_while_parsing_saves_a_partial_checkpoint() {
    let f = fixture();
    let db = f.dir.join("db");
    let mut child = spawn(&db, &f.files, "parse.chunk=sleep(300)");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    // The first progress line of the parse phase: workers are at it.
    for line in lines.by_ref() {
        if line.unwrap().contains("\"phase\":\"parse\"") {
            break;
        }
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert!(Command::new("kill").arg("-TERM").arg(child.id().to_string()).status().unwrap().success());
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    assert_eq!(child.wait().unwrap().code(), Some(6), "{rest:?}");
    assert!(rest.iter().any(|l| l.contains("\"event\":\"resumable\"") && l.contains("partial")), "{rest:?}");
    assert!(!db.exists());
    let rerun = run(&db, &f.files, None, &[]);
    assert!(rerun.status.success(), "{}", String::from_utf8_lossy(&rerun.stderr));
    assert!(report(&db)["resumed_after"].as_str().unwrap_or_default().starts_with("parse (partial"));
    f.assert_clean_success(&db, "sigterm while parsing");
}

/// Killed right after the rename into place, before the `--report` copy was written (the
/// operator's load step reads that copy): the rerun finds the load complete, exits 0 and
/// writes the copy, marked `already_complete`.
#[test]
fn killed_after_the_rename_the_rerun_writes_the_report_copy() {
    let f = fixture();
    let db = f.dir.join("db");
    let copy = f.dir.join("report-copy.json");
    let args = ["--report", copy.to_str().unwrap()];
    let killed = run(&db, &f.files, Some("finish.renamed=return"), &args);
    assert_eq!(killed.status.signal(), Some(9), "{}", String::from_utf8_lossy(&killed.stderr));
    assert!(!copy.exists(), "the kill came before the copy");
    let rerun = run(&db, &f.files, None, &args);
    let err = String::from_utf8_lossy(&rerun.stderr);
    assert!(rerun.status.success(), "{err}");
    assert!(err.contains("\"event\":\"already_complete\""), "{err}");
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&copy).unwrap()).unwrap();
    assert_eq!(r["already_complete"], true, "{r}");
    assert_eq!(r["triples"], f.reference_report["triples"]);
    f.assert_clean_success(&db, "killed after the rename");
}

/// One Turtle and one TriG file (blank nodes, collections, `[]` graphs, prefixes redefined),
/// each cut into many chunks: killed after a partial checkpoint, the rerun parses only the
/// chunks not done, and the database is the one an uninterrupted load gives (with whole
/// files as one chunk each, on one thread: chunking and threads change nothing).
#[test]
fn parallel_turtle_resumes_from_its_chunks() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let files = write_terse(dir, 6000);
    let load = |db: &Path, chunk: &str, threads: &str, failpoints: Option<&str>| {
        let mut c = Command::new(bin());
        c.arg("load").arg("--loc").arg(db).args(["--threads", threads, "--memory", "150Mi"]);
        c.args(["--checkpoint-interval", "100ms"]).args(&files).env("RDF_BULKLOAD_TERSE_CHUNK_BYTES", chunk);
        match failpoints {
            Some(fp) => c.env("FAILPOINTS", fp),
            None => c.env_remove("FAILPOINTS"),
        };
        c.output().unwrap()
    };
    let reference = dir.join("reference");
    let out = load(&reference, "1000000000", "1", None);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let db = dir.join("db");
    let killed = load(&db, "8192", "2", Some("parse.chunk=sleep(20);parse.partial_saved=2*off->return"));
    assert_eq!(killed.status.signal(), Some(9), "{}", String::from_utf8_lossy(&killed.stderr));
    let work = dir.join(".db.spill");
    let checkpoint: serde_json::Value =
        serde_json::from_slice(&std::fs::read(work.join("checkpoint.json")).unwrap()).unwrap();
    let done = &checkpoint["parse_partial"]["chunks_done"];
    let chunks = |file: &str| done[file].as_array().map_or(0, Vec::len);
    assert!(chunks("0") + chunks("1") > 0, "chunks of the Turtle/TriG files checkpointed: {done}");
    let rerun = load(&db, "8192", "2", None);
    assert!(rerun.status.success(), "{}", String::from_utf8_lossy(&rerun.stderr));
    assert!(report(&db)["resumed_after"].as_str().unwrap_or_default().starts_with("parse (partial"));
    assert_eq!(data_files(&db), data_files(&reference), "resumed, chunked, 2 threads vs whole files, 1 thread");
    for k in ["statements", "triples", "quads", "distinct_terms", "prefixes"] {
        assert_eq!(report(&db)[k], report(&reference)[k], "{k}");
    }
}
