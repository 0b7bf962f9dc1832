//! Speed and memory settings must never change a single record: the same inputs give
//! byte-identical databases whatever the budget (dictionary and sort spills) and the
//! thread count.

mod common;

use common::{bin, data_files, write_dump, write_terse};
use std::path::{Path, PathBuf};
use std::process::Command;

use tdb2::read::read_tree;
use tdb2::TreeParams;

fn load(loc: &Path, files: &[PathBuf], extra: &[&str]) {
    let out = Command::new(bin()).arg("load").arg("--loc").arg(loc).args(extra).args(files).output().unwrap();
    assert!(out.status.success(), "load failed: {}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn budget_and_threads_do_not_change_the_database() {
    let tmp = tempfile::tempdir().unwrap();
    let one = write_dump(tmp.path(), 1, 500_000);
    let reference = tmp.path().join("ref");
    load(&reference, &one, &["--threads", "1"]);
    let spilled = tmp.path().join("spilled");
    load(&spilled, &one, &["--threads", "4", "--memory", "180Mi"]);
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(spilled.join("bulkload-report.json")).unwrap()).unwrap();
    assert!(
        report["dictionary_spilled_terms"].as_u64().unwrap() > 0,
        "the small budget made the dictionary spill: {report}"
    );
    let again = tmp.path().join("again");
    load(&again, &one, &["--threads", "3"]);
    let r = data_files(&reference);
    assert_eq!(r, data_files(&spilled), "spilling changed the database");
    assert_eq!(r, data_files(&again), "thread count changed the database");

    // Every tree reads back in order with Jena's invariants; the indexes agree.
    let gen = reference.join("Data-0001");
    let spo = read_tree(&gen, "SPO", TreeParams::TRIPLE).unwrap();
    let pos = read_tree(&gen, "POS", TreeParams::TRIPLE).unwrap();
    let osp = read_tree(&gen, "OSP", TreeParams::TRIPLE).unwrap();
    assert_eq!(spo.len(), pos.len());
    assert_eq!(spo.len(), osp.len());
    let gspo = read_tree(&gen, "GSPO", TreeParams::QUAD).unwrap();
    assert!(!gspo.is_empty());
    assert_eq!(gspo.len(), read_tree(&gen, "OSPG", TreeParams::QUAD).unwrap().len());
    assert_eq!(report["triples"].as_u64().unwrap(), spo.len() as u64);
    assert_eq!(report["quads"].as_u64().unwrap(), gspo.len() as u64);
    let nodes = read_tree(&gen, "nodes", TreeParams::NODE).unwrap();
    assert_eq!(report["distinct_terms"].as_u64().unwrap(), nodes.len() as u64);
}

/// Turtle/TriG files are cut into chunks parsed by any worker: neither the chunk size
/// (`RDF_BULKLOAD_TERSE_CHUNK_BYTES`, down to a cut after every statement) nor the thread
/// count nor the run changes a byte, blank nodes included.
#[test]
fn turtle_split_and_threads_do_not_change_the_database() {
    let tmp = tempfile::tempdir().unwrap();
    let files = write_terse(tmp.path(), 4000);
    let load_chunked = |name: &str, chunk: &str, threads: &str| {
        let loc = tmp.path().join(name);
        let out = Command::new(bin())
            .arg("load")
            .arg("--loc")
            .arg(&loc)
            .args(["--threads", threads])
            .args(&files)
            .env("RDF_BULKLOAD_TERSE_CHUNK_BYTES", chunk)
            .output()
            .unwrap();
        assert!(out.status.success(), "load failed: {}", String::from_utf8_lossy(&out.stderr));
        data_files(&loc)
    };
    let whole = load_chunked("whole", "1000000000", "1");
    assert_eq!(whole, load_chunked("small", "4096", "2"), "4 KiB chunks, 2 threads");
    assert_eq!(whole, load_chunked("small-again", "4096", "2"), "a second run");
    assert_eq!(whole, load_chunked("tiny", "1", "3"), "a chunk per statement, 3 threads");
    assert_eq!(whole, load_chunked("one-thread", "4096", "1"), "4 KiB chunks, 1 thread");
}

#[test]
fn failures_use_the_documented_exit_codes_and_leave_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let good = write_dump(tmp.path(), 1, 1000);
    let run = |loc: &Path, args: &[&str], files: &[PathBuf]| {
        let out = Command::new(bin()).arg("load").arg("--loc").arg(loc).args(args).args(files).output().unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let db = tmp.path().join("db");

    let (code, err) = run(&db, &[], &[tmp.path().join("absent.nt")]);
    assert_eq!(code, Some(4), "{err}");
    assert!(err.contains("absent.nt"), "{err}");

    let (code, err) = run(&db, &["--memory", "10Mi"], &good);
    assert_eq!(code, Some(5), "{err}");
    assert!(err.contains("MiB"), "names the numbers: {err}");

    let bad = tmp.path().join("bad.nt");
    std::fs::write(&bad, "<http://a/s> <http://a/p> <http://a/o> .\n<http://a/s> <http://a/p> \"open .\n").unwrap();
    let (code, err) = run(&db, &[], std::slice::from_ref(&bad));
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("bad.nt:2:"), "file and line: {err}");

    let truncated = tmp.path().join("trunc.nt.gz");
    let bytes = std::fs::read(&good[0]).unwrap();
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    let (code, err) = run(&db, &[], &[truncated]);
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("truncated or corrupt"), "{err}");

    assert!(!db.exists(), "a failed load left something at --loc");
    let leftovers: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().starts_with(".db"))
        .collect();
    assert!(leftovers.is_empty(), "temporary build or spill directories left: {leftovers:?}");

    run(&db, &[], &good);
    // (A rerun of the same load is `already_complete`, exit 0: tests/rerun.rs.)
    let (code, err) = run(&db, &["--on-error", "skip"], &good);
    assert_eq!(code, Some(2), "an existing database of another load is not overwritten: {err}");
}

#[test]
fn sigterm_stops_cleanly_with_exit_code_6() {
    let tmp = tempfile::tempdir().unwrap();
    let files = write_dump(tmp.path(), 1, 500_000);
    let db = tmp.path().join("db");
    let mut child = Command::new(bin()).arg("load").arg("--loc").arg(&db).args(&files).spawn().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let kill = Command::new("kill").arg("-TERM").arg(child.id().to_string()).status().unwrap();
    assert!(kill.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(6), "interrupted loads exit with 6");
    assert!(!db.exists());
    // What was kept (a checkpoint of the work done) lets the same command finish the job.
    load(&db, &files, &[]);
    let leftovers: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().starts_with(".db"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
}
