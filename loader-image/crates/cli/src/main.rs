//! `rdf-bulkload`: builds Apache Jena TDB2 databases from RDF dumps.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::process::ExitCode;

use bulkload_pipeline::{load, LoadError, LoadOptions, OnError};
use clap::{Parser, Subcommand, ValueEnum};

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

#[derive(Subcommand)]
enum Command {
    /// Load N-Triples, N-Quads, Turtle or TriG files (plain, gzip, bzip2, zstd) into a new
    /// TDB2 database.
    Load {
        /// The database directory to create.
        #[arg(long, value_name = "DIR")]
        loc: PathBuf,
        /// Input files, or directories (every file below them, sorted by name).
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
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
        /// Directory for temporary spill files (default: beside the database).
        #[arg(long, value_name = "DIR")]
        tmpdir: Option<PathBuf>,
        /// Worker threads (default: all cores).
        #[arg(long, value_name = "N")]
        threads: Option<usize>,
        /// Memory budget for the whole process, e.g. 4GiB, 800M.
        #[arg(long, default_value = "2GiB", value_parser = parse_size, value_name = "SIZE")]
        memory: u64,
        /// Base IRI for relative IRIs in Turtle/TriG (default: each file's file:// URL).
        #[arg(long, value_name = "IRI")]
        base: Option<String>,
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
    },
}

/// Parses sizes like `512M`, `4GiB`, `1.5G`, `1000000` (bytes).
fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num.parse().map_err(|_| format!("invalid size {s:?}"))?;
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        _ => return Err(format!("invalid size unit in {s:?}")),
    };
    Ok((n * mult as f64) as u64)
}

fn main() -> ExitCode {
    #[cfg(feature = "failpoints")]
    let _failpoints = bulkload_pipeline::failpoint::setup();
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    match cli.command {
        Command::Load { loc, files, on_error, max_rejects, rejects, report, tmpdir, threads, memory, base, replace, source_report, fresh } => {
            let threads = threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
            // SIGTERM/SIGINT stop the load at the next safe point (exit code 6); nothing is
            // left at --loc and temporary files are removed.
            let interrupt = Arc::new(AtomicBool::new(false));
            for sig in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
                if let Err(e) = signal_hook::flag::register(sig, interrupt.clone()) {
                    eprintln!("rdf-bulkload: error: cannot install signal handler: {e}");
                    return ExitCode::from(70);
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
                tmpdir,
                threads,
                memory,
                base,
                replace,
                source_report,
                interrupt,
                fresh,
            };
            match load(&opts) {
                Ok(r) => {
                    eprintln!(
                        "loaded {} triples and {} quads ({} distinct terms, {} rejected) into {} in {:.1}s",
                        r.triples, r.quads, r.distinct_terms, r.rejects, r.location, r.duration_seconds
                    );
                    ExitCode::SUCCESS
                }
                Err(e) => fail(&e),
            }
        }
    }
}

fn fail(e: &LoadError) -> ExitCode {
    eprintln!("rdf-bulkload: error: {e}");
    ExitCode::from(e.exit_code() as u8)
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert_eq!(parse_size("4GiB"), Ok(4 << 30));
        assert_eq!(parse_size("1.5g"), Ok(3 << 29));
        assert_eq!(parse_size("100"), Ok(100));
        assert!(parse_size("12 parsecs").is_err());
    }
}
