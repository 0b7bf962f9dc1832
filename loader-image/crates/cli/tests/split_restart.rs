//! A Turtle/TriG chunk cut wrongly (issue 16): in skip mode the parse phase starts over with
//! that file parsed sequentially, and the load ends with exactly the database and rejects
//! file of a sequential load; in strict mode it stops with the sequential load's error.
//! Real input gives no wrong cut, so the `parse.terse_dirty` failpoint forces one (needs the
//! `failpoints` feature, as the kill tests).
#![cfg(feature = "failpoints")]

mod common;

use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{bin, data_files, write_terse};

/// Cuts the test files into dozens of chunks.
const SMALL_CHUNKS: &str = "2048";
/// One chunk per file: the sequential parse.
const ONE_CHUNK: &str = "1073741824";

/// A Turtle file with bad statements spread over it (an undefined prefix, a statement with
/// a term too many, a bad IRI), after blank nodes, collections and redefined prefixes, and
/// the TriG file of `write_terse`.
fn inputs(dir: &Path) -> Vec<PathBuf> {
    let ttl = dir.join("bad.ttl");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&ttl).unwrap());
    for i in 0..1500 {
        if i % 400 == 0 {
            writeln!(f, "@prefix ex: <http://example.org/v{}/> .", i / 400).unwrap();
        }
        match i % 97 {
            50 => writeln!(f, "ex:s{i} ex:p undefined:x .").unwrap(),
            70 => writeln!(f, "ex:s{i} ex:p ex:o ex:extra .").unwrap(),
            90 => writeln!(f, "ex:s{i} ex:p <http://bad iri/{i}> .").unwrap(),
            _ => writeln!(f, "ex:s{i} a ex:C ; ex:knows [ ex:name \"anon {i}\" ] ; ex:list ( {i} _:b{} [] ) .", i % 13)
                .unwrap(),
        }
    }
    drop(f);
    let trig = write_terse(dir, 400).pop().unwrap();
    vec![ttl, trig]
}

fn load(db: &Path, files: &[PathBuf], mode: &str, chunk_bytes: &str, failpoints: Option<&str>) -> Output {
    let mut c = Command::new(bin());
    c.arg("load").arg("--loc").arg(db).args(["--threads", "2", "--on-error", mode]).args(files);
    c.env("RDF_BULKLOAD_TERSE_CHUNK_BYTES", chunk_bytes);
    match failpoints {
        Some(f) => c.env("FAILPOINTS", f),
        None => c.env_remove("FAILPOINTS"),
    };
    c.output().unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The `parse_restarted` events of a load's stderr (JSON lines).
fn restarts(out: &Output) -> Vec<serde_json::Value> {
    stderr(out)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|e| e["event"] == "parse_restarted")
        .collect()
}

fn rejects(db: &Path) -> Vec<u8> {
    let mut p = db.as_os_str().to_owned();
    p.push(".rejects.jsonl");
    std::fs::read(PathBuf::from(p)).unwrap()
}

fn report(db: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(db.join("bulkload-report.json")).unwrap()).unwrap()
}

/// A skip-mode load, sequential: the reference.
fn sequential(dir: &Path, files: &[PathBuf]) -> PathBuf {
    let db = dir.join("sequential");
    let out = load(&db, files, "skip", ONE_CHUNK, None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(report(&db)["rejects"].as_u64().unwrap() >= 40, "the input has rejects");
    db
}

fn assert_same_load(db: &Path, reference: &Path) {
    assert!(data_files(db) == data_files(reference), "the database differs from the sequential load's");
    assert_eq!(
        String::from_utf8_lossy(&rejects(db)),
        String::from_utf8_lossy(&rejects(reference)),
        "the rejects file differs from the sequential load's"
    );
    for k in ["statements", "triples", "quads", "distinct_terms", "prefixes", "rejects"] {
        assert_eq!(report(db)[k], report(reference)[k], "report field {k}");
    }
}

#[test]
fn skip_mode_parses_a_wrongly_cut_file_again_sequentially() {
    let tmp = tempfile::tempdir().unwrap();
    let files = inputs(tmp.path());
    let reference = sequential(tmp.path(), &files);

    // Chunk 3 of each file ends dirty: the first restart makes one file whole, the second
    // the other (chunks of both after the dirty ones were parsed and logged meanwhile).
    let db = tmp.path().join("split");
    let out = load(&db, &files, "skip", SMALL_CHUNKS, Some("parse.terse_dirty=return(3)"));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let events = restarts(&out);
    let mut paths: Vec<&str> = events.iter().map(|e| e["path"].as_str().unwrap()).collect();
    paths.sort_unstable();
    let expected: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    assert_eq!(paths, expected, "one parse_restarted per file: {}", stderr(&out));
    for e in &events {
        assert!(e["line"].as_u64().unwrap() > 1, "the line of the chunk cut wrongly: {e}");
        assert!(e["message"].as_str().unwrap().contains("parsed sequentially"), "{e}");
    }
    assert_same_load(&db, &reference);
}

#[test]
fn a_resumed_load_keeps_the_choice_to_parse_sequentially() {
    let tmp = tempfile::tempdir().unwrap();
    let files = inputs(tmp.path());
    let reference = sequential(tmp.path(), &files);

    // Killed as the first restart's checkpoint is saved (the checkpoint interval is 10 min:
    // no partial checkpoint came before).
    let db = tmp.path().join("resumed");
    let out = load(&db, &files, "skip", SMALL_CHUNKS, Some("parse.terse_dirty=return(3);checkpoint.saved=return"));
    assert_eq!(out.status.signal(), Some(libc::SIGKILL), "{}", stderr(&out));
    let checkpoint: serde_json::Value =
        serde_json::from_slice(&std::fs::read(tmp.path().join(".resumed.spill/checkpoint.json")).unwrap()).unwrap();
    let whole = checkpoint["parse_partial"]["whole_files"].as_array().expect("whole_files checkpointed").clone();
    assert_eq!(whole.len(), 1, "{checkpoint}");
    let whole = whole[0].as_u64().unwrap() as usize;

    // The rerun parses that file whole (its chunk 3 would end dirty again) and restarts
    // only for the other one.
    let out = load(&db, &files, "skip", SMALL_CHUNKS, Some("parse.terse_dirty=return(3)"));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("\"event\":\"resuming\""), "{}", stderr(&out));
    let paths: Vec<String> = restarts(&out).iter().map(|e| e["path"].as_str().unwrap().to_string()).collect();
    assert_eq!(paths, vec![files[1 - whole].display().to_string()], "{}", stderr(&out));
    assert_same_load(&db, &reference);
}

#[test]
fn strict_mode_stops_with_the_sequential_loads_error() {
    let tmp = tempfile::tempdir().unwrap();
    let files = inputs(tmp.path());
    let error_line = |out: &Output| {
        stderr(out).lines().find(|l| l.starts_with("rdf-bulkload: error:")).map(str::to_string).unwrap_or_default()
    };
    let sequential = load(&tmp.path().join("sequential"), &files, "strict", ONE_CHUNK, None);
    assert_eq!(sequential.status.code(), Some(3), "{}", stderr(&sequential));
    assert!(error_line(&sequential).contains("bad.ttl:"), "{}", stderr(&sequential));
    // Chunk 1 of bad.ttl ends dirty, before its first bad statement: the sequential parse
    // from its start finds that one.
    let split = load(&tmp.path().join("split"), &files, "strict", SMALL_CHUNKS, Some("parse.terse_dirty=return(1)"));
    assert_eq!(split.status.code(), Some(3), "{}", stderr(&split));
    assert_eq!(error_line(&split), error_line(&sequential));
}

#[test]
fn strict_mode_parses_a_wrongly_cut_file_without_errors_again_sequentially() {
    let tmp = tempfile::tempdir().unwrap();
    let files = &inputs(tmp.path())[1..]; // the TriG file, without errors
    let reference = tmp.path().join("sequential");
    let out = load(&reference, files, "strict", ONE_CHUNK, None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // No error from the dirty chunk's start on: no sequential error to report, the load
    // parses the file whole.
    let db = tmp.path().join("split");
    let out = load(&db, files, "strict", SMALL_CHUNKS, Some("parse.terse_dirty=return(1)"));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(restarts(&out).len(), 1, "{}", stderr(&out));
    assert!(data_files(&db) == data_files(&reference), "the database differs from the sequential load's");
}
