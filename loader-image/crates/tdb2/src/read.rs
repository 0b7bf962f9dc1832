//! Reads a B+Tree back by descending from its root, checking the invariants Jena relies on
//! (docs/tdb2-format.md §5, §10): used by tests, fuzzing and `rdf-bulkload verify`.

use std::path::Path;

use crate::bptree::TreeParams;

#[derive(Debug, thiserror::Error)]
pub enum TreeError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("{tree}: {what}")]
    Invalid { tree: String, what: String },
}

fn be_i32(b: &[u8]) -> i32 {
    i32::from_be_bytes(b[..4].try_into().expect("4 bytes"))
}

/// All records of tree `<dir>/<name>` in key order, after checking: block types, counts
/// within capacity, separator keys equal to subtree maxima, strictly ascending records,
/// minimum fill of non-root blocks, and `.bpt` limits covering every block in use.
pub fn read_tree(dir: &Path, name: &str, p: TreeParams) -> Result<Vec<Vec<u8>>, TreeError> {
    let bad = |what: String| TreeError::Invalid { tree: name.to_string(), what };
    let idn = std::fs::read(dir.join(format!("{name}.idn")))?;
    let dat = std::fs::read(dir.join(format!("{name}.dat")))?;
    let bpt = std::fs::read(dir.join(format!("{name}.bpt")))?;
    if bpt.len() != 24 || idn.len() % p.block_size != 0 || dat.len() % p.block_size != 0 {
        return Err(bad("file sizes".into()));
    }
    let state: Vec<i64> = bpt.chunks(8).map(|c| i64::from_be_bytes(c.try_into().expect("8"))).collect();
    let (root, node_limit, rec_limit) = (state[0], state[1], state[2]);
    let mut out = Vec::new();
    // (block id, is root, lower bound exclusive, upper bound inclusive)
    struct Walk<'a> {
        p: TreeParams,
        idn: &'a [u8],
        dat: &'a [u8],
        node_limit: i64,
        rec_limit: i64,
        out: &'a mut Vec<Vec<u8>>,
        leaf_depth: Option<usize>,
    }
    impl Walk<'_> {
        fn node(&mut self, id: i64, is_root: bool, depth: usize) -> Result<Vec<u8>, String> {
            if id < 0 || id >= self.node_limit || (id as usize + 1) * self.p.block_size > self.idn.len() {
                return Err(format!("branch block {id} outside the allocation limit"));
            }
            let bs = self.p.block_size;
            let b = &self.idn[id as usize * bs..(id as usize + 1) * bs];
            let header = be_i32(b) as u32;
            let (ty, count) = ((header >> 24) as u8, (header & 0xff_ffff) as usize);
            if ty != 6 && ty != 7 {
                return Err(format!("branch block {id}: type {ty}"));
            }
            if count > self.p.max_rec || (!is_root && count < self.p.min_rec) {
                return Err(format!("branch block {id}: {count} keys"));
            }
            let kl = self.p.key_len;
            let mut max = Vec::new();
            for i in 0..=count {
                let ptr = be_i32(&b[self.p.ptr_base + 4 * i..]) as i64;
                let sub_max = if ty == 7 {
                    self.leaf(ptr, depth + 1, is_root && count == 0)?
                } else {
                    self.node(ptr, false, depth + 1)?
                };
                if i < count {
                    let key = &b[4 + i * kl..4 + (i + 1) * kl];
                    if sub_max.as_slice() != key {
                        return Err(format!("branch block {id}: key {i} is not the max of its subtree"));
                    }
                }
                max = sub_max;
            }
            Ok(max)
        }
        fn leaf(&mut self, id: i64, depth: usize, only_leaf: bool) -> Result<Vec<u8>, String> {
            if let Some(d) = self.leaf_depth {
                if d != depth {
                    return Err("leaves at different depths".into());
                }
            }
            self.leaf_depth = Some(depth);
            if id < 0 || id >= self.rec_limit || (id as usize + 1) * self.p.block_size > self.dat.len() {
                return Err(format!("leaf block {id} outside the allocation limit"));
            }
            let bs = self.p.block_size;
            let b = &self.dat[id as usize * bs..(id as usize + 1) * bs];
            let count = be_i32(b);
            if be_i32(&b[4..]) != -1 {
                return Err(format!("leaf block {id}: link is not -1"));
            }
            if count < 0 || count as usize > self.p.leaf_cap || (!only_leaf && (count as usize) < self.p.leaf_cap / 2) {
                return Err(format!("leaf block {id}: {count} records"));
            }
            let rl = self.p.rec_len;
            for i in 0..count as usize {
                let rec = &b[8 + i * rl..8 + (i + 1) * rl];
                if let Some(prev) = self.out.last() {
                    if prev[..self.p.key_len] >= rec[..self.p.key_len] {
                        return Err(format!("leaf block {id}: records not strictly ascending"));
                    }
                }
                self.out.push(rec.to_vec());
            }
            Ok(self.out.last().map(|r| r[..self.p.key_len].to_vec()).unwrap_or_default())
        }
    }
    let mut w = Walk { p, idn: &idn, dat: &dat, node_limit, rec_limit, out: &mut out, leaf_depth: None };
    w.node(root, true, 0).map_err(bad)?;
    Ok(out)
}
