//! The load step's Argo output parameter is stored in the Workflow object, which etcd caps
//! at about 1.5 MiB: the file the operator reads it from must stay small whatever the dump
//! set, while the full build report (with a line per input and per fetched object) can be
//! megabytes. Shown with a dump set of 5,000 small objects, loaded as the operator runs the
//! loader: an input directory and the fetch step's report.

#[allow(dead_code)] // (helpers shared by the test files; not each uses every one)
mod common;

use std::io::Write;
use std::process::Command;

use common::bin;

const OBJECTS: usize = 5000;
/// The summary carries a fixed set of figures and two paths: a few hundred bytes. The
/// bound leaves room for added fields, far below etcd's limit.
const OUTPUT_PARAMETER_BOUND: usize = 4096;
/// etcd's default limit on one object (--max-request-bytes, 1.5 MiB), which holds the Workflow
/// with every output parameter of its steps.
const ETCD_OBJECT_LIMIT: usize = 1536 * 1024;

#[test]
fn the_output_parameter_stays_small_for_5000_objects_and_the_full_report_stays_on_the_volume() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("input");
    std::fs::create_dir(&input).unwrap();
    let mut objects = Vec::new();
    for i in 0..OBJECTS {
        let name = format!("part-{i:05}.nt");
        let body = format!("<http://example.org/s{i}> <http://example.org/p> \"object {i}\" .\n");
        std::fs::write(input.join(&name), &body).unwrap();
        objects.push(serde_json::json!({
            "key": format!("dumps/2026-11-28/{name}"), "path": name, "size": body.len(),
            "etag": format!("\"{:032x}\"", i), "sha256": format!("{:064x}", i), "md5": format!("{:032x}", i),
            "verifiedBy": "etag-md5", "transferredBytes": body.len(),
        }));
    }
    let fetch_report = tmp.path().join("fetch-report.json");
    let fetch = serde_json::json!({
        "tool": "rdf-bulkload-fetch", "source": {"endpoint": "https://s3.example.org", "bucket": "dumps",
        "prefix": "dumps/2026-11-28/"}, "revision": "2026-11-28", "destination": input,
        "totals": {"objects": OBJECTS}, "objects": objects,
    });
    std::fs::File::create(&fetch_report).unwrap().write_all(fetch.to_string().as_bytes()).unwrap();
    let db = tmp.path().join("db");
    let report = tmp.path().join("report.json");
    let summary = tmp.path().join("summary.json");
    let load = || {
        let out = Command::new(bin())
            .arg("load")
            .arg("--loc")
            .arg(&db)
            .arg("--report")
            .arg(&report)
            .arg("--summary")
            .arg(&summary)
            .arg("--source-report")
            .arg(&fetch_report)
            .arg(&input)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    };
    load();

    let full = std::fs::read(&report).unwrap();
    let parameter = std::fs::read(&summary).unwrap();
    eprintln!("report {} bytes, output parameter {} bytes", full.len(), parameter.len());
    assert!(
        parameter.len() <= OUTPUT_PARAMETER_BOUND,
        "the output parameter is {} bytes for {OBJECTS} objects (the full report: {})",
        parameter.len(),
        full.len()
    );
    let s: serde_json::Value = serde_json::from_slice(&parameter).unwrap();
    let r: serde_json::Value = serde_json::from_slice(&full).unwrap();
    for k in ["triples", "quads", "rejects", "duration_seconds", "database_bytes"] {
        assert_eq!(s[k], r[k], "{k}: the summary carries the report's figure");
    }
    assert_eq!(s["triples"], OBJECTS as u64);
    assert_eq!(s["report"], report.to_str().unwrap(), "the summary names the full report on the volume");
    assert_eq!(r["source"]["objects"].as_array().map(Vec::len), Some(OBJECTS), "the full report keeps every object");
    assert!(
        full.len() > ETCD_OBJECT_LIMIT,
        "the full report ({} bytes) would fit in the Workflow object: the case no longer shows why the summary exists",
        full.len()
    );
    let fields = s.as_object().unwrap();
    assert!(
        fields.values().all(|v| !v.is_array() && !v.is_object()),
        "the summary has no list or object that could grow with the dump set: {s}"
    );
    assert_eq!(s["already_complete"], false);

    // An Argo retry of a load step that had finished (the pod lost after the loader exited):
    // the loader finds the database complete and writes the summary again, for the output
    // parameter of the retried step.
    std::fs::remove_file(&summary).unwrap();
    load();
    let again: serde_json::Value = serde_json::from_slice(&std::fs::read(&summary).unwrap()).unwrap();
    assert_eq!(again["already_complete"], true, "{again}");
    assert_eq!((&again["triples"], &again["report"]), (&s["triples"], &s["report"]), "{again}");
}
