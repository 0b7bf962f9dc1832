//! Phase 4: finish. Prefixes, statistics and the journal complete the database; the build
//! report is written last, everything synced, the checkpoint marked finished, and the
//! directory renamed into place.

use std::fs::{self, File};
use std::io;
use std::path::Path;

use tdb2::db::{write_empty_journal, write_prefix_tables};
use tdb2::stats::Stats;
use tdb2::term::{decode_term, DecodedTerm};

use bulkload_monitor::progress::{peak_rss_bytes, Phase};
use bulkload_storage::checkpoint::{sync_dir, NodesState, ParseState};
use bulkload_storage::failpoint::crash_point;

use crate::build::Build;
use crate::error::LoadError;
use crate::options::{LoadOptions, OnError};
use crate::phases::indexes::{IdStats, Indexes};
use crate::report::{write_copies, Report, REPORT_FILE};
use crate::workdir::{sibling, Places};

/// Phase 4 of a build: completes the database, writes its report, ends with the
/// `finished` checkpoint, and puts the database in place.
pub(crate) fn run(
    b: &mut Build<'_>,
    parse: &ParseState,
    nodes: &NodesState,
    indexes: Indexes,
) -> Result<Report, LoadError> {
    let opts = b.opts;
    let gen_dir = b.gen_dir();
    let Indexes { triples, quads, id_stats } = indexes;
    let prefix_mappings =
        write_prefix_tables(gen_dir, &parse.prefixes).map_err(|e| LoadError::from_output_io("writing prefixes", e))?;
    write_empty_journal(gen_dir).map_err(|e| LoadError::from_output_io("writing the journal", e))?;
    let stats =
        resolve_stats(gen_dir, id_stats).map_err(|e| LoadError::from_output_io("reading back statistics", e))?;
    fs::write(gen_dir.join("stats.opt"), tdb2::stats::render(&stats))
        .map_err(|e| LoadError::from_output_io("writing stats.opt", e))?;
    crash_point("finish.stats");
    let building = b.places.building.as_path();
    let database_bytes = dir_size(building);
    let mut report = Report::new(opts, b.files, &parse.input_md5, &b.checkpoint.identity);
    report.source = b.source.take();
    report.statements = parse.statements;
    report.triples = triples;
    report.quads = quads;
    report.distinct_terms = nodes.distinct_terms;
    report.rejects = parse.rejects;
    report.warnings = parse.warnings.counts.clone();
    report.warning_examples = parse.warnings.examples.clone();
    report.rejects_file = (opts.on_error == OnError::Skip).then(|| b.rejects_path.display().to_string());
    report.prefixes = prefix_mappings;
    report.node_table_bytes = nodes.node_data_bytes;
    report.dictionary_bytes = parse.dictionary_bytes;
    report.dictionary_spilled_terms = parse.dictionary_spilled_terms;
    report.temp_disk_peak_bytes = b.spill.peak_bytes();
    report.database_bytes = database_bytes;
    report.resumed_after = b.resumed_after.clone();
    b.timer.lap(Phase::Finish);
    report.phases = std::mem::take(&mut b.timer.phases);
    report.duration_seconds = b.started.elapsed().as_secs_f64();
    report.peak_rss_bytes = peak_rss_bytes();
    let json = serde_json::to_string_pretty(&report).map_err(|e| LoadError::Internal(e.to_string()))?;
    fs::write(building.join(REPORT_FILE), &json).map_err(|e| LoadError::from_output_io("writing the report", e))?;
    sync_tree(building).map_err(|e| LoadError::from_output_io("syncing the database", e))?;
    crash_point("finish.synced");
    b.checkpoint.finished = true;
    b.save_checkpoint()?;
    put_in_place(opts, building)?;
    write_copies(opts, &report, &json)?;
    Ok(report)
}

/// A run killed between the `finished` checkpoint and the rename: the database in the
/// build directory is complete; its report gains `resumed_after` and it is put in place.
pub(crate) fn put_finished_in_place(
    opts: &LoadOptions,
    places: &Places,
    resumed_after: Option<String>,
) -> Result<Report, LoadError> {
    let report_file = places.building.join(REPORT_FILE);
    let json = fs::read(&report_file).map_err(|e| LoadError::from_output_io("reading the build report", e))?;
    let mut report: Report =
        serde_json::from_slice(&json).map_err(|e| LoadError::Internal(format!("build report: {e}")))?;
    report.resumed_after = resumed_after;
    let json = serde_json::to_string_pretty(&report).map_err(|e| LoadError::Internal(e.to_string()))?;
    fs::write(&report_file, &json)
        .and_then(|_| File::open(&report_file)?.sync_all())
        .map_err(|e| LoadError::from_output_io("writing the report", e))?;
    put_in_place(opts, &places.building)?;
    write_copies(opts, &report, &json)?;
    Ok(report)
}

/// Renames the complete database into place (swapping out an old one with --replace).
fn put_in_place(opts: &LoadOptions, building: &Path) -> Result<(), LoadError> {
    if opts.loc.exists() {
        // --replace (or an empty directory): move the old one aside, then swap.
        let old = sibling(&opts.loc, "old");
        let _ = fs::remove_dir_all(&old);
        fs::rename(&opts.loc, &old).map_err(|e| LoadError::from_output_io("moving the old database aside", e))?;
        crash_point("finish.swap");
        fs::rename(building, &opts.loc).map_err(|e| LoadError::from_output_io("renaming into place", e))?;
    } else {
        fs::rename(building, &opts.loc).map_err(|e| LoadError::from_output_io("renaming into place", e))?;
    }
    if let Some(parent) = opts.loc.parent().filter(|p| !p.as_os_str().is_empty()) {
        let _ = sync_dir(parent);
    }
    crash_point("finish.renamed");
    let _ = fs::remove_dir_all(sibling(&opts.loc, "old")); // also one left by a run killed mid-swap
    Ok(())
}

/// Turns id-based counts into IRIs by reading the terms back from the node table.
fn resolve_stats(gen_dir: &Path, st: IdStats) -> io::Result<Stats> {
    use std::os::unix::fs::FileExt;
    let f = File::open(gen_dir.join("nodes-data.obj"))?;
    let read_term = |id: u64| -> io::Result<Option<DecodedTerm>> {
        if id >> 63 == 1 {
            return Ok(None);
        }
        let mut buf = vec![0u8; 4096];
        loop {
            let n = f.read_at(&mut buf, id)?;
            if let Some((t, _)) = decode_term(&buf[..n]) {
                return Ok(Some(t));
            }
            if n < buf.len() {
                return Ok(None);
            }
            buf.resize(buf.len() * 4, 0);
        }
    };
    let mut out = Stats { count: st.count, ..Default::default() };
    for (p, c) in &st.predicates {
        if let Some(DecodedTerm::Iri(iri)) = read_term(*p)? {
            out.predicates.push((iri, *c));
        }
    }
    for (o, c) in &st.classes {
        if let Some(DecodedTerm::Iri(iri)) = read_term(*o)? {
            out.classes.push((iri, *c));
        }
    }
    Ok(out)
}

fn dir_size(p: &Path) -> u64 {
    let mut total = 0;
    if let Ok(rd) = fs::read_dir(p) {
        for e in rd.flatten() {
            match e.metadata() {
                Ok(m) if m.is_dir() => total += dir_size(&e.path()),
                Ok(m) => total += m.len(),
                Err(_) => {}
            }
        }
    }
    total
}

fn sync_tree(p: &Path) -> io::Result<()> {
    for e in fs::read_dir(p)? {
        let e = e?;
        if e.file_type()?.is_dir() {
            sync_tree(&e.path())?;
        } else {
            File::open(e.path())?.sync_all()?;
        }
    }
    sync_dir(p)
}
