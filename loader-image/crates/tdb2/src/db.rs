//! The files of a generation directory besides the index trees.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::bptree::{PackedTreeWriter, TreeParams};
use crate::term::{encode_term, node_hash, Term};

/// Appends terms to a node-table data file (`nodes-data.obj` / `prefixes-data.obj`); the
/// offset at which a term starts is its NodeId.
pub struct NodeDataWriter {
    out: BufWriter<File>,
    bdf: PathBuf,
    len: u64,
}

impl NodeDataWriter {
    /// `name` is `nodes` or `prefixes`.
    pub fn create(dir: &Path, name: &str) -> io::Result<NodeDataWriter> {
        let out = BufWriter::with_capacity(1 << 20, File::create(dir.join(format!("{name}-data.obj")))?);
        Ok(NodeDataWriter { out, bdf: dir.join(format!("{name}-data.bdf")), len: 0 })
    }

    /// Appends already encoded term bytes; returns their offset.
    pub fn append_encoded(&mut self, bytes: &[u8]) -> io::Result<u64> {
        let at = self.len;
        self.out.write_all(bytes)?;
        self.len += bytes.len() as u64;
        Ok(at)
    }

    /// Flushes and writes the `.bdf` state: (committed length, 0), big-endian.
    pub fn finish(mut self) -> io::Result<u64> {
        self.out.flush()?;
        let mut st = Vec::with_capacity(16);
        st.extend_from_slice(&(self.len as i64).to_be_bytes());
        st.extend_from_slice(&0i64.to_be_bytes());
        std::fs::write(&self.bdf, st)?;
        Ok(self.len)
    }
}

/// Builds the prefix tables (`prefixes*` node table + `GPU` index) from
/// (graph IRI, prefix, namespace) rows; dataset-level prefixes use the graph `""` (`<>`).
pub fn write_prefix_tables(dir: &Path, rows: &[(String, String, String)]) -> io::Result<()> {
    // Distinct terms in MD5 order, as the main node table.
    let mut terms: Vec<([u8; 16], Vec<u8>)> = Vec::new();
    let term_of = |t: Term<'_>| {
        let mut enc = Vec::new();
        encode_term(&t, &mut enc);
        (node_hash(&t), enc)
    };
    let mut keyed_rows = Vec::with_capacity(rows.len());
    for (g, p, u) in rows {
        let g = term_of(Term::Iri(g));
        let p = term_of(Term::Literal { lex: p, lang: None, datatype: None });
        let u = term_of(Term::Iri(u));
        keyed_rows.push([g.0, p.0, u.0]);
        terms.extend([g, p, u]);
    }
    terms.sort();
    terms.dedup_by(|a, b| a.0 == b.0);
    let mut data = NodeDataWriter::create(dir, "prefixes")?;
    let mut index = PackedTreeWriter::create(dir, "prefixes", TreeParams::NODE)?;
    let mut id_of = std::collections::HashMap::new();
    for (hash, enc) in &terms {
        let at = data.append_encoded(enc)?;
        let mut rec = [0u8; 24];
        rec[..16].copy_from_slice(hash);
        rec[16..].copy_from_slice(&at.to_be_bytes());
        index.push(&rec)?;
        id_of.insert(*hash, at);
    }
    data.finish()?;
    index.finish()?;
    let mut gpu: Vec<[u8; 24]> = keyed_rows
        .iter()
        .map(|r| {
            let mut rec = [0u8; 24];
            for (i, h) in r.iter().enumerate() {
                rec[i * 8..i * 8 + 8].copy_from_slice(&id_of[h].to_be_bytes());
            }
            rec
        })
        .collect();
    gpu.sort();
    gpu.dedup();
    let mut w = PackedTreeWriter::create(dir, "GPU", TreeParams::TRIPLE)?;
    for r in &gpu {
        w.push(r)?;
    }
    w.finish()?;
    Ok(())
}

/// An empty transaction journal: Jena starts clean on it.
pub fn write_empty_journal(dir: &Path) -> io::Result<()> {
    File::create(dir.join("journal.jrnl"))?.sync_all()
}
