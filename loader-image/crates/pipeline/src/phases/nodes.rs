//! Phase 2: the node table. The dictionary's sorted runs are merged in MD5 order into
//! `nodes-data.obj` and the `nodes` tree; each term's offset there is its NodeId, and the
//! id remap table maps every provisional id to it. Ends with the `nodes` checkpoint.
//!
//! The merge runs on every thread: each merges its own ranges of MD5 keys (disjoint and, MD5
//! being uniform, of equal size) and hands the terms in batches to one writer, which takes
//! the ranges in key order and alone assigns offsets, so the output is the one sequential
//! merge would give.

use std::io;
use std::ops::Range;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use crossbeam_channel::{Receiver, Sender};

use tdb2::db::NodeDataWriter;
use tdb2::stats::RDF_TYPE;
use tdb2::{PackedTreeWriter, TreeParams};

use bulkload_monitor::progress::{Phase, Progress};
use bulkload_storage::checkpoint::{sync_files, NodesState, ParseState};
use bulkload_storage::dict::{DictTerms, Dictionary, MergedTerm, Remap, KEY_BUCKETS};
use bulkload_storage::failpoint::crash_point;

use crate::budget::REMAP_BYTES_PER_ID;
use crate::build::Build;
use crate::error::LoadError;

/// The id remap table's file in the work directory.
const REMAP_FILE: &str = "remap.bin";

/// What the node-table phase leaves to the index phase.
pub(crate) struct NodeTable {
    pub(crate) state: NodesState,
    /// The id remap table, when this run built it (else it is read back from the work
    /// directory if an index still needs it).
    pub(crate) remap: Option<Remap>,
    /// Memory the remap table takes.
    pub(crate) remap_bytes: u64,
    /// Memory left for the index builders' sort buffers.
    pub(crate) sort_budget: u64,
}

/// Phase 2 of a build: writes the node table, or takes the one an earlier run
/// checkpointed; ends with the `nodes` checkpoint.
pub(crate) fn run(b: &mut Build<'_>, parse: &ParseState) -> Result<NodeTable, LoadError> {
    let progress = b.progress();
    let work = b.work_dir();
    let gen_dir = b.gen_dir();
    let ids_assigned: u64 = parse.dictionary.iter().map(|s| s.ids).sum();
    let remap_bytes = ids_assigned * REMAP_BYTES_PER_ID;
    let sort_budget = b.budget.sorting(remap_bytes)?;
    progress.expect_terms(ids_assigned);
    progress.memory_bytes.store(remap_bytes, Ordering::Relaxed);
    if let Some(n) = b.checkpoint.nodes.clone() {
        b.timer.resumed(Phase::Nodes, n.seconds);
        return Ok(NodeTable { state: n, remap: None, remap_bytes, sort_budget });
    }
    let dict =
        Dictionary::restore(&parse.dictionary, 0, b.spill.clone()).map_err(|e| LoadError::Internal(e.to_string()))?;
    let (terms, mut remap) = dict.into_terms().map_err(|e| LoadError::from_output_io("merging the dictionary", e))?;
    let (distinct_terms, node_data_bytes, rdf_type) =
        write_node_table(gen_dir, &terms, &mut remap, b.threads, &b.opts.interrupt, &progress)
            .map_err(|e| LoadError::from_output_io("writing the node table", e))?;
    crash_point("nodes.written");
    sync_files(gen_dir, ["nodes-data.obj", "nodes-data.bdf", "nodes.dat", "nodes.idn", "nodes.bpt"])
        .and_then(|_| remap.save(&work.join(REMAP_FILE)))
        .map_err(|e| LoadError::from_output_io("syncing the node table", e))?;
    progress.expect_index_records(
        parse.triple_logs.iter().map(|l| l.tuples).sum(),
        parse.quad_logs.iter().map(|l| l.tuples).sum(),
    );
    let n = NodesState {
        seconds: b.timer.lap(Phase::Nodes),
        distinct_terms,
        node_data_bytes,
        rdf_type,
        remap_file: REMAP_FILE.into(),
    };
    b.checkpoint.nodes = Some(n.clone());
    b.save_checkpoint()?;
    // The node table is durable: the dictionary's runs are not needed any more.
    terms.remove_runs().map_err(|e| LoadError::from_output_io("removing dictionary runs", e))?;
    Ok(NodeTable { state: n, remap: Some(remap), remap_bytes, sort_budget })
}

/// Terms a merging thread hands to the writer at a time.
const BATCH_TERMS: usize = 4096;
/// A batch's byte buffer: room for 4096 terms of 256 bytes, so that it is not grown (and
/// copied) on the way; with the 4 batches a range's channel holds and the one being filled,
/// within the per-worker buffers of the budget.
const BATCH_BYTES: usize = 1 << 20;
/// Read buffers of one merging thread, shared out over the runs it reads: with its batches
/// in flight, within the per-worker buffers of the budget (budget.rs), which the parse's
/// chunks no longer use.
const MERGE_BUFFER_BYTES_PER_THREAD: usize = 8 << 20;

/// Terms of one key range, in key order, with their stored bytes back to back.
struct Batch {
    terms: Vec<(MergedTerm, u32)>,
    bytes: Vec<u8>,
}

/// Key-bucket ranges of equal size, in key order: several per thread so that the threads
/// stay busy while the writer takes the ranges one after the other; one for one thread.
fn key_ranges(threads: usize) -> Vec<Range<usize>> {
    let n = if threads <= 1 { 1 } else { (threads * 8).min(KEY_BUCKETS) };
    (0..n).map(|i| i * KEY_BUCKETS / n..(i + 1) * KEY_BUCKETS / n).collect()
}

/// Merges the given key ranges in order, each into its own channel (closed at the range's
/// end); stops when the writer has gone (an error or an interrupt on its side).
fn merge_ranges(terms: &DictTerms, ranges: Vec<(Range<usize>, Sender<io::Result<Batch>>)>, buffer_bytes: usize) {
    for (range, tx) in ranges {
        let mut merge = match terms.merge(range, buffer_bytes) {
            Ok(m) => m,
            Err(e) => {
                let _ = tx.send(Err(e));
                return;
            }
        };
        loop {
            let mut batch = Batch { terms: Vec::with_capacity(BATCH_TERMS), bytes: Vec::with_capacity(BATCH_BYTES) };
            let mut failed = None;
            while batch.terms.len() < BATCH_TERMS {
                let at = batch.bytes.len();
                match merge.next_term(&mut batch.bytes) {
                    Ok(Some(t)) => batch.terms.push((t, (batch.bytes.len() - at) as u32)),
                    Ok(None) => break,
                    Err(e) => {
                        failed = Some(e);
                        break;
                    }
                }
            }
            let last = batch.terms.len() < BATCH_TERMS || failed.is_some();
            if !batch.terms.is_empty() && tx.send(Ok(batch)).is_err() {
                return;
            }
            if let Some(e) = failed {
                let _ = tx.send(Err(e));
                return;
            }
            if last {
                break;
            }
        }
    }
}

/// Writes `nodes-data.obj` and the `nodes` tree from the dictionary's terms, merged by key
/// range on `threads` threads; returns the number of distinct terms, the data file's length
/// and rdf:type's NodeId.
fn write_node_table(
    gen_dir: &Path,
    terms: &DictTerms,
    remap: &mut Remap,
    threads: usize,
    interrupt: &AtomicBool,
    progress: &Progress,
) -> io::Result<(u64, u64, Option<u64>)> {
    let ranges = key_ranges(threads);
    let mergers = threads.clamp(1, ranges.len());
    let buffer_bytes = (MERGE_BUFFER_BYTES_PER_THREAD / terms.sources().max(1)).clamp(8 << 10, 64 << 10);
    let (senders, receivers): (Vec<_>, Vec<_>) = ranges.iter().map(|_| crossbeam_channel::bounded(4)).unzip();
    let mut senders: Vec<Option<Sender<_>>> = senders.into_iter().map(Some).collect();
    std::thread::scope(|s| {
        for m in 0..mergers {
            let mine: Vec<_> = (m..ranges.len())
                .step_by(mergers)
                .map(|r| (ranges[r].clone(), senders[r].take().expect("one merger per range")))
                .collect();
            s.spawn(move || merge_ranges(terms, mine, buffer_bytes));
        }
        // Returning drops the receivers, which stops the mergers.
        write_merged(gen_dir, receivers, remap, interrupt, progress)
    })
}

/// The writer: takes the ranges' batches in key order and appends each distinct term.
fn write_merged(
    gen_dir: &Path,
    ranges: Vec<Receiver<io::Result<Batch>>>,
    remap: &mut Remap,
    interrupt: &AtomicBool,
    progress: &Progress,
) -> io::Result<(u64, u64, Option<u64>)> {
    let rdf_type_key = tdb2::term::node_hash(&tdb2::term::Term::Iri(RDF_TYPE));
    let mut rdf_type = None;
    let mut data = NodeDataWriter::create(gen_dir, "nodes")?;
    let mut index = PackedTreeWriter::create(gen_dir, "nodes", TreeParams::NODE)?;
    let mut last_key: Option<[u8; 16]> = None;
    let mut last_offset = 0;
    let mut distinct = 0;
    for batch in ranges.iter().flat_map(Receiver::iter) {
        let batch = batch?;
        let mut at = 0;
        for &(t, len) in &batch.terms {
            let bytes = &batch.bytes[at..at + len as usize];
            at += len as usize;
            crash_point("nodes.term");
            if distinct % (1 << 20) == 0 && interrupt.load(Ordering::Relaxed) {
                return Err(io::Error::new(io::ErrorKind::Interrupted, "interrupted"));
            }
            if last_key == Some(t.key) {
                // The same term again (its shard spilled in between), or two stored forms with
                // one MD5 key, which Jena too would find as one: one NodeId.
                remap.set(t.prov, last_offset);
                continue;
            }
            let offset = data.append_encoded(bytes)?;
            let mut rec = [0u8; 24];
            rec[..16].copy_from_slice(&t.key);
            rec[16..].copy_from_slice(&offset.to_be_bytes());
            index.push(&rec)?;
            remap.set(t.prov, offset);
            if t.key == rdf_type_key {
                rdf_type = Some(offset);
            }
            last_key = Some(t.key);
            last_offset = offset;
            distinct += 1;
            if distinct % 4096 == 0 {
                progress.terms_written.store(distinct, Ordering::Relaxed);
            }
        }
    }
    progress.terms_written.store(distinct, Ordering::Relaxed);
    index.finish()?;
    Ok((distinct, data.finish()?, rdf_type))
}
