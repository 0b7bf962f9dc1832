//! The files of a generation directory besides the index trees.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use crate::bptree::{PackedTreeWriter, TreeParams};
use crate::outfile::OutputFile;
use crate::term::{encode_term, node_hash, Term};

/// Appends terms to a node-table data file (`nodes-data.obj` / `prefixes-data.obj`); the
/// offset at which a term starts is its NodeId.
pub struct NodeDataWriter {
    out: OutputFile,
    bdf: PathBuf,
    len: u64,
}

impl NodeDataWriter {
    /// `name` is `nodes` or `prefixes`.
    pub fn create(dir: &Path, name: &str) -> io::Result<NodeDataWriter> {
        let out = OutputFile::create(&dir.join(format!("{name}-data.obj")), 1 << 20)?;
        Ok(NodeDataWriter { out, bdf: dir.join(format!("{name}-data.bdf")), len: 0 })
    }

    /// Appends already encoded term bytes; returns their offset.
    pub fn append_encoded(&mut self, bytes: &[u8]) -> io::Result<u64> {
        let at = self.len;
        self.out.write_all(bytes)?;
        self.len += bytes.len() as u64;
        Ok(at)
    }

    /// Writes the rest and the `.bdf` state: (committed length, 0), big-endian.
    pub fn finish(self) -> io::Result<u64> {
        self.out.finish(None)?;
        let mut st = Vec::with_capacity(16);
        st.extend_from_slice(&(self.len as i64).to_be_bytes());
        st.extend_from_slice(&0i64.to_be_bytes());
        std::fs::write(&self.bdf, st)?;
        Ok(self.len)
    }
}

/// Builds the prefix tables (`prefixes*` node table + `GPU` index) from the prefix
/// declarations (graph IRI, prefix, namespace) in load order; dataset-level prefixes use the
/// graph `""` (`<>`). As Jena's loaders (`StoragePrefixesTDB.add`), each declaration
/// allocates its graph, prefix and namespace nodes, in that order, unless already present
/// (NodeIds are offsets in `prefixes-data.obj`, so allocation order matters); a later
/// declaration of the same prefix replaces its mapping in `GPU`, and the namespace it
/// replaced stays in the node table. Returns the number of mappings (`GPU` records).
pub fn write_prefix_tables(dir: &Path, declarations: &[(String, String, String)]) -> io::Result<u64> {
    let mut data = NodeDataWriter::create(dir, "prefixes")?;
    let mut keys: Vec<([u8; 16], u64)> = Vec::new();
    let mut id_of: std::collections::HashMap<[u8; 16], u64> = std::collections::HashMap::new();
    let mut mapping: std::collections::BTreeMap<(u64, u64), u64> = std::collections::BTreeMap::new();
    let mut enc = Vec::new();
    for (g, p, u) in declarations {
        let mut ids = [0u64; 3];
        let terms = [Term::Iri(g), Term::Literal { lex: p, lang: None, datatype: None }, Term::Iri(u)];
        for (slot, t) in ids.iter_mut().zip(terms.iter()) {
            let hash = node_hash(t);
            *slot = match id_of.get(&hash) {
                Some(&id) => id,
                None => {
                    enc.clear();
                    encode_term(t, &mut enc);
                    let at = data.append_encoded(&enc)?;
                    id_of.insert(hash, at);
                    keys.push((hash, at));
                    at
                }
            };
        }
        mapping.insert((ids[0], ids[1]), ids[2]);
    }
    data.finish()?;
    keys.sort();
    let mut index = PackedTreeWriter::create(dir, "prefixes", TreeParams::NODE)?;
    for (hash, at) in &keys {
        let mut rec = [0u8; 24];
        rec[..16].copy_from_slice(hash);
        rec[16..].copy_from_slice(&at.to_be_bytes());
        index.push(&rec)?;
    }
    index.finish()?;
    let mut gpu: Vec<[u8; 24]> = mapping
        .iter()
        .map(|(&(g, p), &u)| {
            let mut rec = [0u8; 24];
            for (i, id) in [g, p, u].iter().enumerate() {
                rec[i * 8..i * 8 + 8].copy_from_slice(&id.to_be_bytes());
            }
            rec
        })
        .collect();
    gpu.sort();
    let mut w = PackedTreeWriter::create(dir, "GPU", TreeParams::TRIPLE)?;
    for r in &gpu {
        w.push(r)?;
    }
    w.finish()?;
    Ok(gpu.len() as u64)
}

/// An empty transaction journal: Jena starts clean on it.
pub fn write_empty_journal(dir: &Path) -> io::Result<()> {
    File::create(dir.join("journal.jrnl"))?.sync_all()
}
