//! The load step's command line as the operator writes it, read with this binary's own parser.
//!
//! The operator's `specs.LoaderArgs` turns a BulkLoad's loader spec into `rdf-bulkload load`
//! arguments; its test writes them for a matrix of specs into a golden file, each line with
//! what the spec means (`expect`). Every line must parse here and give exactly those options,
//! so a flag renamed, a unit the loader does not read or a default that moved on either side
//! fails a test instead of a build on a cluster.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Parser;
use serde_json::Value;

use super::{BuildArgs, Cli, Command, JenaArg, OnErrorArg};

const GOLDEN: &str =
    concat!(env!("CARGO_MANIFEST_DIR"), "/../../../operator/internal/specs/testdata/loader-args.jsonl");

/// The options of a `load` command line that the contract covers.
struct Load {
    build: BuildArgs,
    on_error: OnErrorArg,
    max_rejects: u64,
    rejects: Option<PathBuf>,
    report: Option<PathBuf>,
    summary: Option<PathBuf>,
    source_report: Option<PathBuf>,
    metrics_addr: Option<SocketAddr>,
    metrics_linger: Option<Duration>,
    replace: bool,
    fresh: bool,
    skip_plan_check: bool,
}

fn parse_load<'a>(args: impl IntoIterator<Item = &'a str>) -> Result<Load, clap::Error> {
    let cli = Cli::try_parse_from(std::iter::once("rdf-bulkload").chain(args))?;
    match cli.command {
        Command::Load {
            build,
            on_error,
            max_rejects,
            rejects,
            report,
            summary,
            replace,
            source_report,
            fresh,
            metrics_addr,
            metrics_linger,
            skip_plan_check,
            ..
        } => Ok(Load {
            build,
            on_error,
            max_rejects,
            rejects,
            report,
            summary,
            source_report,
            metrics_addr,
            metrics_linger,
            replace,
            fresh,
            skip_plan_check,
        }),
        Command::Plan { .. } => panic!("not a load command line"),
    }
}

fn text<'v>(v: &'v Value, key: &str) -> &'v str {
    v[key].as_str().unwrap_or_else(|| panic!("{key} is not a string in {v}"))
}

fn optional_path(v: &Value, key: &str) -> Option<PathBuf> {
    (!v[key].is_null()).then(|| PathBuf::from(text(v, key)))
}

#[test]
fn loader_args_of_the_operator_parse_to_what_the_spec_means() {
    let golden = std::fs::read_to_string(GOLDEN).unwrap_or_else(|e| panic!("{GOLDEN}: {e}"));
    // What the loader does when the operator leaves an option out.
    let defaults = parse_load(["load", "--loc", "db", "input"]).unwrap();
    let mut cases = 0;
    for (n, line) in golden.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let case: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{GOLDEN}:{}: {e}", n + 1));
        let name = text(&case, "name");
        let args: Vec<&str> = case["args"]
            .as_array()
            .unwrap_or_else(|| panic!("{name}: no args"))
            .iter()
            .map(|a| a.as_str().expect("an argument is a string"))
            .collect();
        let load = parse_load(args.iter().copied())
            .unwrap_or_else(|e| panic!("{name}: rdf-bulkload {}:\n{e}", args.join(" ")));
        let want = &case["expect"];
        let b = &load.build;
        assert_eq!(b.loc, Path::new(text(want, "loc")), "{name}: --loc");
        assert_eq!(b.tmpdir.as_deref(), Some(Path::new(text(want, "tmpdir"))), "{name}: --tmpdir");
        assert_eq!(Some(b.memory), want["memory_bytes"].as_u64(), "{name}: --memory");
        assert_eq!(b.threads.map(|t| t as u64), want["threads"].as_u64(), "{name}: --threads");
        let on_error = match load.on_error {
            OnErrorArg::Strict => "strict",
            OnErrorArg::Skip => "skip",
        };
        assert_eq!(on_error, text(want, "on_error"), "{name}: --on-error");
        let max_rejects = want["max_rejects"].as_u64().unwrap_or(defaults.max_rejects);
        assert_eq!(load.max_rejects, max_rejects, "{name}: --max-rejects");
        assert_eq!(load.rejects, optional_path(want, "rejects"), "{name}: --rejects");
        assert_eq!(load.report, optional_path(want, "report"), "{name}: --report");
        assert_eq!(load.summary, optional_path(want, "summary"), "{name}: --summary");
        assert_eq!(load.source_report, optional_path(want, "source_report"), "{name}: --source-report");
        let addr: SocketAddr = text(want, "metrics_addr").parse().unwrap();
        assert_eq!(load.metrics_addr, Some(addr), "{name}: --metrics-addr");
        let linger = want["metrics_linger_seconds"].as_f64().expect("metrics_linger_seconds");
        let linger = (linger > 0.0).then(|| Duration::from_secs_f64(linger));
        assert_eq!(load.metrics_linger, linger, "{name}: --metrics-linger");
        let inputs: Vec<PathBuf> =
            want["inputs"].as_array().unwrap().iter().map(|p| PathBuf::from(p.as_str().unwrap())).collect();
        assert_eq!(b.files, inputs, "{name}: inputs");
        assert_eq!(b.base, None, "{name}: --base");
        // The Jena that serves the database (spec.database.jena).
        let jena = match b.jena {
            JenaArg::V5 => "5",
            JenaArg::V6 => "6",
        };
        assert_eq!(jena, want["jena"].as_str().expect("expect.jena"), "{name}: --jena");
        // The pre-load check is skipped only when the spec says so (spec.loader.skipPlanCheck).
        assert_eq!(load.skip_plan_check, want["skip_plan_check"].as_bool().unwrap(), "{name}: --skip-plan-check");
        // A retried step must resume its checkpoint or find its finished database: never start
        // over, never replace.
        assert!(!load.fresh && !load.replace, "{name}: --fresh or --replace");
        cases += 1;
    }
    assert!(cases >= 10, "{GOLDEN} holds {cases} cases");
}

#[test]
fn a_changed_flag_fails_the_contract() {
    // The check above can fail: a flag the loader does not know is refused by its parser.
    assert!(parse_load(["load", "--loc", "db", "--memory-budget", "1Gi", "input"]).is_err());
    assert!(parse_load(["load", "--loc", "db", "--memory", "1GB", "input"]).is_ok());
    assert_eq!(parse_load(["load", "--loc", "db", "--jena", "6", "input"]).unwrap().build.jena, JenaArg::V6);
    assert_eq!(parse_load(["load", "--loc", "db", "--jena", "5.6.0", "input"]).unwrap().build.jena, JenaArg::V5);
    assert!(parse_load(["load", "--loc", "db", "--jena", "7", "input"]).is_err());
    assert!(
        parse_load(["load", "--loc", "db", "--metrics-linger", "8", "input"]).is_err(),
        "--metrics-linger needs --metrics-addr"
    );
}
