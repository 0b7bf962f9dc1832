//! `rdf-bulkload`: builds Apache Jena TDB2 databases from RDF dumps.

use std::io::{IsTerminal, Write};
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::process::ExitCode as ProcessExit;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use bulkload_pipeline::{
    detect_inputs, load_then, plan, ExitCode, JenaVersion, LoadError, LoadOptions, MonitorOptions, OnError,
    PlanRequest, ProgressStyle, Report,
};
use clap::{Args, Parser, Subcommand, ValueEnum};

#[cfg(test)]
mod loader_args_contract;
mod quantity;

#[derive(Parser)]
#[command(name = "rdf-bulkload", version, about = "Build an Apache Jena TDB2 database from RDF dumps, fast and safely")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, ValueEnum)]
enum OnErrorArg {
    /// Stop at the first bad statement with its file, line, column and reason.
    Strict,
    /// Write bad statements to the rejects file and go on (up to --max-rejects).
    Skip,
}

/// `--jena`: the Jena release whose inline rules the database follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum JenaArg {
    /// Jena 5.6.0 (byte-identical to its tdb2.xloader).
    #[value(name = "5", alias = "5.6.0")]
    V5,
    /// Jena 6 (checked: 6.2.0): xsd:decimal values are canonicalised before inlining.
    #[value(name = "6", alias = "6.2.0")]
    V6,
}

impl From<JenaArg> for JenaVersion {
    fn from(a: JenaArg) -> JenaVersion {
        match a {
            JenaArg::V5 => JenaVersion::V5,
            JenaArg::V6 => JenaVersion::V6,
        }
    }
}

/// What `load` and `plan` share: the inputs, the target and the resources.
#[derive(Args)]
struct BuildArgs {
    /// The database directory to create.
    #[arg(long, value_name = "DIR")]
    loc: PathBuf,
    /// Input files, or directories (every file below them, sorted by name).
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Directory for temporary spill files (default: beside the database).
    #[arg(long, value_name = "DIR")]
    tmpdir: Option<PathBuf>,
    /// Worker threads (default: all cores).
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// Memory budget for the whole process, a Kubernetes quantity: 4Gi, 1536Mi (powers of
    /// 1024), 800M (powers of 1000), or bytes.
    #[arg(long, default_value = "2Gi", value_parser = quantity::parse_bytes, value_name = "SIZE")]
    memory: u64,
    /// Base IRI for relative IRIs in Turtle/TriG (default: each file's file:// URL).
    #[arg(long, value_name = "IRI")]
    base: Option<String>,
    /// The Jena release that will serve the database: 5 (5.6.0) or 6 (6.x, checked: 6.2.0).
    /// They differ only in how xsd:decimal literals are inlined (Jena 6 canonicalises them:
    /// "12.50" and "12.5" become one term, "1" is stored as 1.0), and a database must be
    /// served by the Jena it was built for: the other one misses some decimal query constants.
    #[arg(long, value_enum, default_value = "5", value_name = "VERSION")]
    jena: JenaArg,
}

#[derive(Subcommand)]
enum Command {
    /// Load N-Triples, N-Quads, Turtle or TriG files (plain, gzip, bzip2, zstd) into a new
    /// TDB2 database. Checks first, like `plan`, that memory and disk can hold the build, and
    /// refuses (exit 5) when they cannot. Shows progress on stderr: bars on a terminal, JSON
    /// lines otherwise.
    Load {
        #[command(flatten)]
        build: BuildArgs,
        #[arg(long, value_enum, default_value = "strict")]
        on_error: OnErrorArg,
        /// With --on-error skip: fail when more statements than this are rejected.
        #[arg(long, default_value_t = 1000, value_name = "N")]
        max_rejects: u64,
        /// Rejects file (JSON lines), default <DIR>.rejects.jsonl.
        #[arg(long, value_name = "FILE")]
        rejects: Option<PathBuf>,
        /// Also write the build report here (it is always in <DIR>/bulkload-report.json).
        #[arg(long, value_name = "FILE")]
        report: Option<PathBuf>,
        /// Write a summary of the build report here: its figures (triples, quads, rejects,
        /// duration_seconds, database_bytes, already_complete) and the path of the --report
        /// copy; small whatever the number of inputs (for Argo's output parameter).
        #[arg(long, value_name = "FILE")]
        summary: Option<PathBuf>,
        /// Replace an existing database at --loc once the new one is complete.
        #[arg(long)]
        replace: bool,
        /// A JSON report of where the inputs came from (the fetch step's), copied into the
        /// build report as "source".
        #[arg(long, value_name = "FILE")]
        source_report: Option<PathBuf>,
        /// Start over: discard the checkpoint an interrupted run of this load left in the
        /// work directory (by default a rerun with the same inputs and options resumes it).
        #[arg(long)]
        fresh: bool,
        /// Time between two checkpoints while the parse phase runs (the other phases
        /// checkpoint as each part completes); `off` for none: then a crash or a signal while
        /// parsing loses the parse done so far.
        // (`std::option::Option`: the value itself may be "none", the flag is not optional)
        #[arg(long, default_value = "10m", value_parser = parse_interval_or_off, value_name = "INTERVAL")]
        checkpoint_interval: std::option::Option<Duration>,
        /// Time between two JSON progress lines (when stderr is not a terminal): seconds, or
        /// with a unit (500ms, 30s, 1m).
        #[arg(long, default_value = "10", value_parser = parse_seconds, value_name = "SECONDS")]
        progress_interval: Duration,
        /// Serve Prometheus metrics at http://HOST:PORT/metrics while the load runs (phase,
        /// statements, bytes read, rate, rejects, memory, temp disk, phase durations).
        #[arg(long, value_parser = parse_addr, value_name = "HOST:PORT")]
        metrics_addr: Option<SocketAddr>,
        /// Keep serving the metrics this long after the load ends (it exits at once on
        /// SIGTERM/SIGINT, with the load's exit code), so that a load shorter than a scrape
        /// interval is still scraped with its final figures: seconds, or 500ms, 30s, 1m.
        #[arg(long, requires = "metrics_addr", value_parser = parse_seconds, value_name = "SECONDS")]
        metrics_linger: Option<Duration>,
        /// Start even when the plan estimates that memory or disk cannot hold the build (the
        /// estimate comes from a sample and can be wrong, e.g. when the start of a dump is
        /// unlike the rest, or when space is freed while the load runs).
        #[arg(long)]
        skip_plan_check: bool,
    },
    /// Estimate a load without doing it: inputs (format, compression, size), statements and
    /// distinct terms (from a sample of each input), memory, temp disk and database size,
    /// free disk; exit 0 when the build fits, 5 when it cannot. A table on a terminal, JSON
    /// otherwise.
    Plan {
        #[command(flatten)]
        build: BuildArgs,
        /// Print JSON even on a terminal.
        #[arg(long)]
        json: bool,
    },
}

/// Parses `10`, `0.5` (seconds) or `500ms`, `30s`, `1m`, `1h` (the fetch step's style).
fn parse_seconds(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let (num, unit) = t.split_at(t.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(t.len()));
    let scale = match unit {
        "" | "s" => 1.0,
        "ms" => 0.001,
        "m" => 60.0,
        "h" => 3600.0,
        _ => return Err(format!("invalid interval {s:?}: a number of seconds, or with ms, s, m or h")),
    };
    let v: f64 = num.parse().map_err(|_| format!("invalid interval {s:?}"))?;
    if !(v > 0.0 && v.is_finite()) {
        return Err(format!("the interval must be positive, not {s:?}"));
    }
    Ok(Duration::from_secs_f64(v * scale))
}

/// An interval as [`parse_seconds`] takes it, or `off`.
fn parse_interval_or_off(s: &str) -> Result<Option<Duration>, String> {
    if s.trim() == "off" {
        Ok(None)
    } else {
        parse_seconds(s).map(Some)
    }
}

/// Parses `HOST:PORT` (a name is resolved once, now).
fn parse_addr(s: &str) -> Result<SocketAddr, String> {
    s.to_socket_addrs()
        .map_err(|e| format!("{s:?} is not HOST:PORT ({e})"))?
        .next()
        .ok_or_else(|| format!("{s:?} resolves to no address"))
}

fn default_threads(threads: Option<usize>) -> usize {
    threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

fn main() -> ProcessExit {
    // A fixed mmap threshold: glibc otherwise raises it to the size of the largest block
    // freed (up to 32 MiB; the plan's 16 MiB sample is one), after which blocks of that size
    // come from arenas that never shrink, and resident memory drifts above the budget's
    // accounting (by up to half of it). 8 MiB keeps the 4 MiB chunk buffers
    // reused from the heap (mapping each afresh costs ~10% in page faults).
    // SAFETY: called before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 8 << 20);
    }
    #[cfg(feature = "failpoints")]
    let _failpoints = bulkload_pipeline::setup_failpoints();
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { ExitCode::Usage } else { ExitCode::Ok };
            let _ = e.print();
            return ProcessExit::from(code.code());
        }
    };
    match cli.command {
        Command::Plan { build, json } => {
            let request = PlanRequest {
                loc: build.loc,
                tmpdir: build.tmpdir,
                threads: default_threads(build.threads),
                memory: build.memory,
                base: build.base,
                jena: build.jena.into(),
            };
            let no_interrupt = AtomicBool::new(false); // a plan is stopped by the signal's default action
            let p = match detect_inputs(&build.files).and_then(|files| plan(&request, &files, &no_interrupt)) {
                Ok(p) => p,
                Err(e) => return fail(&e),
            };
            // A closed stdout (`| head`) is not an error of the plan.
            let mut out = std::io::stdout();
            let _ = if json || !out.is_terminal() {
                writeln!(out, "{}", p.to_json())
            } else {
                write!(out, "{}", p.to_text())
            };
            match p.refusal() {
                Some(e) => fail(&e), // exit 5, with the numbers
                None => ProcessExit::SUCCESS,
            }
        }
        Command::Load {
            build: BuildArgs { loc, files, tmpdir, threads, memory, base, jena },
            on_error,
            max_rejects,
            rejects,
            report,
            summary,
            replace,
            source_report,
            progress_interval,
            metrics_addr,
            metrics_linger,
            skip_plan_check,
            fresh,
            checkpoint_interval,
        } => {
            let threads = default_threads(threads);
            // SIGTERM/SIGINT stop the load at the next safe point (exit code 6); nothing is
            // left at --loc and the work up to the last checkpoint is kept for a rerun.
            let interrupt = Arc::new(AtomicBool::new(false));
            for sig in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
                if let Err(e) = signal_hook::flag::register(sig, interrupt.clone()) {
                    eprintln!("rdf-bulkload: error: cannot install signal handler: {e}");
                    return ProcessExit::from(ExitCode::Internal.code());
                }
            }
            let opts = LoadOptions {
                loc,
                inputs: files,
                on_error: match on_error {
                    OnErrorArg::Strict => OnError::Strict,
                    OnErrorArg::Skip => OnError::Skip,
                },
                max_rejects,
                rejects,
                report,
                summary,
                tmpdir,
                threads,
                memory,
                base,
                jena: jena.into(),
                replace,
                source_report,
                interrupt,
                monitor: MonitorOptions {
                    style: ProgressStyle::Auto,
                    interval: progress_interval,
                    metrics_addr,
                    metrics_linger: metrics_linger.unwrap_or_default(),
                },
                skip_plan_check,
                fresh,
                checkpoint_interval,
            };
            // The outcome is told as soon as the load is over, before any --metrics-linger.
            let result = load_then(&opts, tell_outcome);
            match result {
                Ok(_) => ProcessExit::SUCCESS,
                Err(e) => ProcessExit::from(e.exit_code().code()),
            }
        }
    }
}

/// The line that tells how a load ended.
fn tell_outcome(result: &Result<Report, LoadError>) {
    match result {
        Ok(r) if r.already_complete => eprintln!(
            "{} already holds this load (same inputs and options): {} triples and {} quads, built earlier; nothing to do",
            r.location, r.triples, r.quads
        ),
        Ok(r) => eprintln!(
            "loaded {} triples and {} quads ({} distinct terms, {} rejected) into {} in {:.1}s",
            r.triples, r.quads, r.distinct_terms, r.rejects, r.location, r.duration_seconds
        ),
        Err(e) => print_error(e),
    }
}

fn print_error(e: &LoadError) {
    eprintln!("rdf-bulkload: error: {e}");
}

fn fail(e: &LoadError) -> ProcessExit {
    print_error(e);
    ProcessExit::from(e.exit_code().code())
}

#[cfg(test)]
mod tests {
    use super::parse_seconds;
    use std::time::Duration;

    #[test]
    fn intervals() {
        assert_eq!(parse_seconds("10"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_seconds("0.25"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_seconds("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_seconds("1m"), Ok(Duration::from_secs(60)));
        assert!(parse_seconds("0").is_err());
        assert!(parse_seconds("-1").is_err());
        assert!(parse_seconds("5 fortnights").is_err());
    }
}
