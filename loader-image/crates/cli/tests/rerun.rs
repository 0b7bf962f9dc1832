//! A rerun of a load that completed (an Argo retry after the load step succeeded, a rerun
//! of the workflow on the same volumes) exits 0 and says `already_complete` without
//! touching the database; a rerun of another load (changed input, changed option) at the
//! same --loc, and any --loc that is not a complete database, are refused with exit 2.

#[allow(dead_code)] // (helpers shared by the test files; not each uses every one)
mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

use common::{bin, write_dump};

fn run(loc: &Path, args: &[&str], files: &[PathBuf]) -> (Option<i32>, String) {
    let out = Command::new(bin()).arg("load").arg("--loc").arg(loc).args(args).args(files).output().unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// Every file below `dir`: its bytes and modification time.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, (Vec<u8>, SystemTime)> {
    fn walk(dir: &Path, out: &mut BTreeMap<PathBuf, (Vec<u8>, SystemTime)>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            let m = e.metadata().unwrap();
            if m.is_dir() {
                walk(&e.path(), out);
            } else {
                out.insert(e.path(), (std::fs::read(e.path()).unwrap(), m.modified().unwrap()));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, &mut out);
    out
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// What a load leaves beside the database besides it (work, build, lock directories).
fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".db"))
        .collect()
}

#[test]
fn rerun_of_a_finished_load_exits_0_and_touches_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let files = write_dump(tmp.path(), 2, 2000);
    let db = tmp.path().join("db");
    let copy = tmp.path().join("report.json");
    let copy_arg = copy.to_str().unwrap();
    let (code, err) = run(&db, &["--report", copy_arg], &files);
    assert_eq!(code, Some(0), "{err}");
    let built = json(&copy);
    assert_eq!(built["already_complete"], false, "{built}");
    assert!(
        built["identity"]["inputs"].as_array().is_some_and(|i| i.len() == 2),
        "the report records the load's identity: {built}"
    );
    std::fs::remove_file(&copy).unwrap();
    let before = snapshot(&db);
    // Threads and memory do not change the database: still the same load.
    let (code, err) = run(&db, &["--report", copy_arg, "--threads", "1", "--memory", "300Mi"], &files);
    assert_eq!(code, Some(0), "a rerun of a finished load succeeds: {err}");
    assert!(err.contains("already holds this load"), "the human line says so: {err}");
    assert!(err.contains("\"event\":\"already_complete\""), "{err}");
    let summary =
        err.lines().find(|l| l.contains("\"event\":\"summary\"")).unwrap_or_else(|| panic!("no summary line: {err}"));
    let summary: serde_json::Value = serde_json::from_str(summary).unwrap();
    assert_eq!((&summary["result"], &summary["already_complete"]), (&"ok".into(), &true.into()), "{summary}");
    let again = json(&copy);
    assert_eq!(again["already_complete"], true, "{again}");
    for k in ["triples", "quads", "distinct_terms", "inputs", "identity"] {
        assert_eq!(again[k], built[k], "the --report copy carries the earlier build's {k}");
    }
    assert_eq!(snapshot(&db), before, "the database (bytes and modification times) was touched");
    assert!(leftovers(tmp.path()).is_empty(), "{:?}", leftovers(tmp.path()));
}

#[test]
fn rerun_of_another_load_at_the_same_loc_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let files = write_dump(tmp.path(), 2, 2000);
    let db = tmp.path().join("db");
    let (code, err) = run(&db, &[], &files);
    assert_eq!(code, Some(0), "{err}");
    let before = snapshot(&db);

    // An option that changes the database.
    let (code, err) = run(&db, &["--on-error", "skip"], &files);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("another load") && err.contains("--on-error strict → skip"), "names what differs: {err}");
    let (code, err) = run(&db, &["--base", "http://example.org/base/"], &files);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--base (none) → http://example.org/base/"), "{err}");
    // The Jena the database is for (its decimals are inlined differently, docs/tdb2-format.md §12).
    let (code, err) = run(&db, &["--jena", "6"], &files);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--jena 5.6.0 → 6.2.0"), "{err}");

    // One input fewer.
    let (code, err) = run(&db, &[], &files[..1]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("number of input files changed (2 → 1)"), "{err}");

    // A changed input: other content (a dump of another size), then the same bytes with
    // another modification time (a re-download).
    let original = std::fs::read(&files[1]).unwrap();
    let other = tempfile::tempdir().unwrap();
    let other_part = &write_dump(other.path(), 2, 2100)[1];
    std::fs::copy(other_part, &files[1]).unwrap();
    let (code, err) = run(&db, &[], &files);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("part-1.nq.gz changed size"), "names the input and why: {err}");
    std::fs::write(&files[1], &original).unwrap();
    let (code, err) = run(&db, &[], &files);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("part-1.nq.gz was modified"), "{err}");

    assert_eq!(snapshot(&db), before, "a refused rerun touched the database");
    assert!(leftovers(tmp.path()).is_empty(), "{:?}", leftovers(tmp.path()));
}

#[test]
fn a_loc_that_is_not_a_complete_database_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let files = write_dump(tmp.path(), 1, 1000);
    let db = tmp.path().join("db");
    let (code, err) = run(&db, &[], &files);
    assert_eq!(code, Some(0), "{err}");
    let copy_db = |name: &str| {
        let to = tmp.path().join(name);
        std::fs::create_dir_all(to.join("Data-0001")).unwrap();
        for (from, _) in snapshot(&db) {
            std::fs::copy(&from, to.join(from.strip_prefix(&db).unwrap())).unwrap();
        }
        to
    };
    let report = |loc: &Path| loc.join("bulkload-report.json");

    // Not a database at all.
    let other = tmp.path().join("other");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("notes.txt"), "mine").unwrap();
    // A database missing a file (a half copy) though its report is there.
    let half = copy_db("half");
    std::fs::remove_file(half.join("Data-0001").join("OSP.dat")).unwrap();
    // A database without its report (what the build writes last).
    let unreported = copy_db("unreported");
    std::fs::remove_file(report(&unreported)).unwrap();
    // A report that is not a build report.
    let garbled = copy_db("garbled");
    std::fs::write(report(&garbled), "{\"tool\": \"something else\"}").unwrap();
    // A report without a build identity (not written by this loader): nothing to compare.
    let older = copy_db("older");
    let mut r = json(&report(&older));
    r.as_object_mut().unwrap().remove("identity");
    std::fs::write(report(&older), r.to_string()).unwrap();

    for (loc, why) in [
        (&other, "no readable bulkload-report.json"),
        (&half, "Data-0001/OSP.dat is missing"),
        (&unreported, "no readable bulkload-report.json"),
        (&garbled, "not a build report"),
        (&older, "records no build identity"),
    ] {
        let before = snapshot(loc);
        let (code, err) = run(loc, &[], &files);
        assert_eq!(code, Some(2), "{}: {err}", loc.display());
        assert!(err.contains("already") && err.contains(why), "{}: {err}", loc.display());
        assert_eq!(snapshot(loc), before, "{}: touched", loc.display());
    }
}
