//! Phase 2: the node table. The dictionary's sorted runs are merged in MD5 order into
//! `nodes-data.obj` and the `nodes` tree; each term's offset there is its NodeId, and the
//! id remap table maps every provisional id to it. Ends with the `nodes` checkpoint.

use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use tdb2::db::NodeDataWriter;
use tdb2::stats::RDF_TYPE;
use tdb2::{PackedTreeWriter, TreeParams};

use crate::budget::REMAP_BYTES_PER_ID;
use crate::build::Build;
use crate::checkpoint::{sync_files, NodesState, ParseState};
use crate::dict::{Dictionary, Remap, TermMerge};
use crate::error::LoadError;
use crate::failpoint::crash_point;
use crate::progress::Progress;

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
        b.timer.resumed("nodes", n.seconds);
        return Ok(NodeTable { state: n, remap: None, remap_bytes, sort_budget });
    }
    let dict =
        Dictionary::restore(&parse.dictionary, 0, b.spill.clone()).map_err(|e| LoadError::Internal(e.to_string()))?;
    let (mut merge, mut remap) =
        dict.into_merge().map_err(|e| LoadError::from_output_io("merging the dictionary", e))?;
    let (distinct_terms, node_data_bytes, rdf_type) =
        write_node_table(gen_dir, &mut merge, &mut remap, &b.opts.interrupt, &progress)
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
        seconds: b.timer.lap("nodes"),
        distinct_terms,
        node_data_bytes,
        rdf_type,
        remap_file: REMAP_FILE.into(),
    };
    b.checkpoint.nodes = Some(n.clone());
    b.save_checkpoint()?;
    // The node table is durable: the dictionary's runs are not needed any more.
    merge.remove_runs().map_err(|e| LoadError::from_output_io("removing dictionary runs", e))?;
    Ok(NodeTable { state: n, remap: Some(remap), remap_bytes, sort_budget })
}

/// Writes `nodes-data.obj` and the `nodes` tree from the merged dictionary; returns the
/// number of distinct terms and the data file's length.
fn write_node_table(
    gen_dir: &Path,
    merge: &mut TermMerge,
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
    while let Some(t) = merge.next_term()? {
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
        let offset = data.append_encoded(&t.bytes)?;
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
    progress.terms_written.store(distinct, Ordering::Relaxed);
    index.finish()?;
    Ok((distinct, data.finish()?, rdf_type))
}
