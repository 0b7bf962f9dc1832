//! `wikigen`: writes a Wikidata-shaped Turtle dump (the shapes of `latest-all.ttl`) of an exact
//! number of triples, the same bytes for the same seed and size, as `.ttl.gz`, `.ttl.bz2` or
//! plain Turtle. Segments are made and compressed on every core and written in order; each is
//! one gzip member or one bzip2 stream (as the real dump's concatenated chunks are).

mod gen;
mod rng;
mod stats;
mod ttl;
mod values;
mod vocab;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Condvar, Mutex};
use std::time::Instant;

use clap::Parser;

use crate::gen::{segment, Config, World};
use crate::stats::Stats;

/// The output's version: `wikigen --version` prints it, and caches of what is built from a
/// dump (the tests' xloader references, the benchmark's datasets) are keyed by that line, the
/// seed and the size. Bump it whenever the bytes for a given seed and size change (the
/// `output_is_pinned` test fails until then).
macro_rules! output_version {
    () => {
        "2"
    };
}
pub const VERSION: &str = output_version!();

#[derive(Parser)]
#[command(name = "wikigen", version = concat!(env!("CARGO_PKG_VERSION"), ", output ", output_version!()), about = "Write a Wikidata-shaped Turtle dump of an exact number of triples")]
struct Cli {
    /// Triples to write: 1000000, 1e6, 10^8.
    #[arg(long, value_parser = parse_count)]
    triples: u64,
    /// Seed: the same seed and size give the same bytes.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Chunks, each opened by the dump's header and @prefix lines (as in latest-all.ttl).
    #[arg(long, default_value_t = 8)]
    shards: u64,
    /// "Some value" and OWL restrictions as skolem IRIs (.well-known/genid) instead of blank nodes.
    #[arg(long)]
    skolem: bool,
    /// Per million external-identifier and URL IRIs, how many have a bad percent-encoding.
    #[arg(long, default_value_t = 500)]
    bad_iri_ppm: u32,
    /// Worker threads (default: all cores). The output does not depend on it.
    #[arg(long)]
    threads: Option<usize>,
    /// gzip level for .gz outputs.
    #[arg(long, default_value_t = 6)]
    gzip_level: u32,
    /// bzip2 block size (1-9, ×100k) for .bz2 outputs.
    #[arg(long, default_value_t = 9)]
    bzip2_level: u32,
    /// Write the counts of every shape (and the settings) here, as JSON.
    #[arg(long, value_name = "FILE")]
    stats: Option<PathBuf>,
    /// Output files: .ttl.gz, .ttl.bz2, .ttl (plain), or - for plain Turtle on stdout.
    /// Several at once share the generation.
    #[arg(required = true, value_name = "OUTPUT")]
    outputs: Vec<PathBuf>,
}

fn parse_count(s: &str) -> Result<u64, String> {
    let bad = || format!("not a count: {s} (1000000, 1e6, 10^6)");
    let t = s.replace('_', "");
    let n = if let Some((m, e)) = t.split_once(['e', 'E']) {
        m.parse::<u64>().map_err(|_| bad())?.checked_mul(10u64.pow(e.parse::<u32>().map_err(|_| bad())?))
    } else if let Some((b, e)) = t.split_once('^') {
        b.parse::<u64>().map_err(|_| bad())?.checked_pow(e.parse::<u32>().map_err(|_| bad())?)
    } else {
        t.parse::<u64>().ok()
    };
    match n {
        Some(n) if n > 0 => Ok(n),
        _ => Err(bad()),
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Codec {
    Plain,
    Gzip,
    Bzip2,
}

fn codec_of(path: &std::path::Path) -> Codec {
    match path.extension().and_then(|e| e.to_str()) {
        Some("gz") => Codec::Gzip,
        Some("bz2") => Codec::Bzip2,
        _ => Codec::Plain,
    }
}

fn compress(codec: Codec, text: &[u8], cli: &Cli) -> Vec<u8> {
    match codec {
        Codec::Plain => text.to_vec(),
        Codec::Gzip => {
            // One member per segment; flate2's header has no name and mtime 0: reproducible.
            let mut e = flate2::write::GzEncoder::new(
                Vec::with_capacity(text.len() / 6),
                flate2::Compression::new(cli.gzip_level),
            );
            e.write_all(text).expect("in memory");
            e.finish().expect("in memory")
        }
        Codec::Bzip2 => {
            let mut e = bzip2::write::BzEncoder::new(
                Vec::with_capacity(text.len() / 8),
                bzip2::Compression::new(cli.bzip2_level),
            );
            e.write_all(text).expect("in memory");
            e.finish().expect("in memory")
        }
    }
}

struct Out {
    path: PathBuf,
    tmp: PathBuf,
    codec: Codec,
    file: Box<dyn Write + Send>,
    bytes: u64,
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    match run(&cli) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("wikigen: {e}");
            std::process::ExitCode::from(1)
        }
    }
}

fn run(cli: &Cli) -> Result<(), String> {
    let cfg = Config {
        seed: cli.seed,
        triples: cli.triples,
        shards: cli.shards,
        skolem: cli.skolem,
        bad_iri_ppm: cli.bad_iri_ppm,
    };
    let world = World::new(cfg);
    let layout = world.layout;
    let threads = cli.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())).max(1);
    let mut outs = open_outputs(cli)?;
    let codecs: Vec<Codec> = outs.iter().map(|o| o.codec).collect();
    let started = Instant::now();

    // Workers take segments in order and may run at most `window` segments ahead of the
    // writer, which writes them in order: memory stays bounded by the window.
    let window = 2 * threads as u64;
    let next = AtomicU64::new(0);
    let written = (Mutex::new(0u64), Condvar::new());
    let (tx, rx) = mpsc::channel::<(u64, Vec<Vec<u8>>, Stats)>();
    let mut total = Stats::default();
    let result: Result<(), String> = std::thread::scope(|scope| {
        for _ in 0..threads {
            let tx = tx.clone();
            let (world, next, written, codecs) = (&world, &next, &written, &codecs);
            scope.spawn(move || loop {
                let k = next.fetch_add(1, Ordering::SeqCst);
                if k >= layout.segments {
                    return;
                }
                {
                    let mut w = written.0.lock().expect("lock");
                    while k >= *w + window {
                        w = written.1.wait(w).expect("lock");
                    }
                }
                let (text, stats) = segment(world, k);
                let parts = codecs.iter().map(|&c| compress(c, &text, cli)).collect();
                if tx.send((k, parts, stats)).is_err() {
                    return;
                }
            });
        }
        drop(tx);
        let mut pending = BTreeMap::new();
        let mut k = 0;
        let mut last_report = Instant::now();
        for (i, parts, stats) in rx.iter() {
            pending.insert(i, (parts, stats));
            while let Some((parts, stats)) = pending.remove(&k) {
                for (o, part) in outs.iter_mut().zip(parts) {
                    o.file.write_all(&part).map_err(|e| format!("{}: {e}", o.path.display()))?;
                    o.bytes += part.len() as u64;
                }
                total.add(&stats);
                k += 1;
                *written.0.lock().expect("lock") = k;
                written.1.notify_all();
                if last_report.elapsed().as_secs() >= 10 {
                    last_report = Instant::now();
                    eprintln!(
                        "wikigen: {} / {} triples, {:.0} s",
                        total.triples,
                        cli.triples,
                        started.elapsed().as_secs_f64()
                    );
                }
            }
        }
        Ok(())
    });
    result?;
    if total.triples != cli.triples {
        return Err(format!("wrote {} triples, not {}", total.triples, cli.triples));
    }
    for o in &mut outs {
        o.file.flush().map_err(|e| format!("{}: {e}", o.path.display()))?;
    }
    let seconds = started.elapsed().as_secs_f64();
    let files = put_outputs_in_place(outs)?;
    let report = serde_json::json!({
        "generator": "wikigen",
        "version": VERSION,
        "seed": cli.seed,
        "triples": cli.triples,
        "shards": layout.shards,
        "segments": layout.segments,
        "skolem": cli.skolem,
        "bad_iri_ppm": cli.bad_iri_ppm,
        "gzip_level": cli.gzip_level,
        "bzip2_level": cli.bzip2_level,
        "threads": threads,
        "seconds": (seconds * 100.0).round() / 100.0,
        "outputs": files,
        "counts": total.to_json(),
    });
    let text = serde_json::to_string_pretty(&report).expect("json");
    if let Some(p) = &cli.stats {
        std::fs::write(p, format!("{text}\n")).map_err(|e| format!("{}: {e}", p.display()))?;
    }
    eprintln!(
        "wikigen: {} triples, {} MB of Turtle in {seconds:.1} s ({:.2} M triples/s, {threads} threads)",
        total.triples,
        total.bytes / 1_000_000,
        total.triples as f64 / seconds / 1e6
    );
    Ok(())
}

/// Every output, written under a temporary name (`-`: standard output) until it is complete.
fn open_outputs(cli: &Cli) -> Result<Vec<Out>, String> {
    let mut outs = Vec::new();
    for path in &cli.outputs {
        if path.as_os_str() == "-" {
            outs.push(Out {
                path: path.clone(),
                tmp: path.clone(),
                codec: Codec::Plain,
                file: Box::new(std::io::stdout()),
                bytes: 0,
            });
            continue;
        }
        let mut tmp = path.clone().into_os_string();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        let f = std::fs::File::create(&tmp).map_err(|e| format!("{}: {e}", tmp.display()))?;
        outs.push(Out {
            path: path.clone(),
            tmp,
            codec: codec_of(path),
            file: Box::new(std::io::BufWriter::with_capacity(1 << 20, f)),
            bytes: 0,
        });
    }
    Ok(outs)
}

/// Closes the complete outputs and renames each into place; their paths and sizes, for the
/// report.
fn put_outputs_in_place(outs: Vec<Out>) -> Result<Vec<serde_json::Value>, String> {
    let mut files = Vec::new();
    for o in outs {
        drop(o.file);
        if o.path.as_os_str() != "-" {
            std::fs::rename(&o.tmp, &o.path).map_err(|e| format!("{}: {e}", o.path.display()))?;
        }
        files.push(serde_json::json!({"path": o.path.display().to_string(), "bytes": o.bytes}));
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_read_in_three_ways() {
        assert_eq!(parse_count("1000000"), Ok(1_000_000));
        assert_eq!(parse_count("1e6"), Ok(1_000_000));
        assert_eq!(parse_count("10^8"), Ok(100_000_000));
        assert_eq!(parse_count("1_000"), Ok(1000));
        assert!(parse_count("0").is_err() && parse_count("x").is_err() && parse_count("10^30").is_err());
    }

    /// The bytes for a seed and size are pinned: a change to them must bump VERSION (and
    /// then this digest), or caches keyed by the version would hold another dump's results.
    #[test]
    fn output_is_pinned() {
        let w = World::new(Config { seed: 1, triples: 200_000, shards: 8, skolem: false, bad_iri_ppm: 500 });
        let mut text = Vec::new();
        for k in 0..w.layout.segments {
            text.extend_from_slice(&segment(&w, k).0);
        }
        let d = rng::digest(&text);
        assert_eq!(
            (VERSION, format!("{:016x}{:016x}", d[0], d[1])),
            ("2", String::from("e2afd898b233ee0424b98e580060cee3")),
            "bump VERSION"
        );
    }
}
