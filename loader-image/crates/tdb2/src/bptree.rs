//! Bottom-up packing of a Jena dboe B+Tree from a sorted stream of unique records.
//!
//! Layout and fill rules follow Jena's `BPlusTreeRewriter` (docs/tdb2-format.md §5): leaves
//! filled completely, the last two leaves rebalanced, branch blocks filled to `MaxPtr`
//! pointers, the last two branch blocks of each level rebalanced to at least `MinRec` keys,
//! the root in node block 0. Unlike Jena, stale bytes are zeroed, the root is written
//! straight into block 0 (no duplicate), and block ids are assigned in write order.
//!
//! It streams: each level holds at most its last two blocks, so memory is O(depth) blocks
//! whatever the record count, and both files are written sequentially.

use std::io;
use std::path::Path;

use crate::outfile::OutputFile;

/// Block size of every TDB2 B+Tree file.
pub const BLOCK_SIZE: usize = 8192;

const TYPE_BRANCH: u8 = 6; // children are branch blocks
const TYPE_LEAF_PARENT: u8 = 7; // children are leaf ("records") blocks

/// Writes one block, leaving whole zero pages at its end as a hole (as Jena's memory-mapped
/// writes do), so that empty and partly filled blocks take no more disk than Jena's.
fn write_block(w: &mut OutputFile, block: &[u8]) -> io::Result<()> {
    let keep = used_pages(block);
    if keep >= block.len() {
        return w.write_all(block);
    }
    w.write_all(&block[..keep])?;
    w.skip((block.len() - keep) as u64)
}

const PAGE: usize = 4096;
static ZERO_PAGE: [u8; PAGE] = [0; PAGE];

/// The block's bytes up to its last whole page that is not all zeros.
fn used_pages(block: &[u8]) -> usize {
    let used = block.iter().rposition(|&b| b != 0).map_or(0, |p| p + 1);
    used.div_ceil(PAGE) * PAGE
}

/// Geometry of a tree, derived from its key and value lengths exactly as dboe does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TreeParams {
    /// Always [`BLOCK_SIZE`] on disk; smaller only in tests, to build deep trees cheaply.
    pub block_size: usize,
    pub key_len: usize,
    pub rec_len: usize,
    /// Max keys in a branch block (`2*order - 1`).
    pub max_rec: usize,
    /// Max pointers in a branch block (`2*order`).
    pub max_ptr: usize,
    /// Min keys in a non-root branch block (`order - 1`).
    pub min_rec: usize,
    /// Records per leaf block.
    pub leaf_cap: usize,
    /// Byte offset of the pointer area in a branch block.
    pub ptr_base: usize,
}

impl TreeParams {
    pub const fn new(key_len: usize, val_len: usize) -> TreeParams {
        TreeParams::with_block_size(key_len, val_len, BLOCK_SIZE)
    }
    pub const fn with_block_size(key_len: usize, val_len: usize, block_size: usize) -> TreeParams {
        let rec_len = key_len + val_len;
        let x = (block_size - 4 - rec_len) / (rec_len + 4);
        let order = x.div_ceil(2);
        TreeParams {
            block_size,
            key_len,
            rec_len,
            max_rec: 2 * order - 1,
            max_ptr: 2 * order,
            min_rec: order - 1,
            leaf_cap: (block_size - 8) / rec_len,
            ptr_base: 4 + (2 * order - 1) * rec_len,
        }
    }
    /// Triple indexes (SPO, POS, OSP) and the prefix index GPU: 3 NodeIds, no value.
    pub const TRIPLE: TreeParams = TreeParams::new(24, 0);
    /// Quad indexes (GSPO ... OSPG): 4 NodeIds, no value.
    pub const QUAD: TreeParams = TreeParams::new(32, 0);
    /// Node tables (`nodes`, `prefixes`): 16-byte MD5 key, 8-byte NodeId value.
    pub const NODE: TreeParams = TreeParams::new(16, 8);
}

/// What a finished tree looks like, for the report and the `.bpt` state file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TreeSummary {
    pub records: u64,
    pub root: u32,
    pub branch_blocks: u32,
    pub leaf_blocks: u32,
}

/// A branch block under construction: keys and child pointers.
#[derive(Default)]
struct Branch {
    keys: Vec<u8>, // n_keys * key_len
    ptrs: Vec<u32>,
}

impl Branch {
    fn n_keys(&self, p: &TreeParams) -> usize {
        self.keys.len() / p.key_len
    }
}

/// One branch level: receives (child id, max key) pairs, emits closed blocks upward.
struct Level {
    block_type: u8,
    /// The closed block before `current`, held back for the end-of-level rebalance, with
    /// the separator key it emits upward.
    held: Option<(Branch, Vec<u8>)>,
    current: Branch,
    /// Blocks of this level already written; a level that wrote none and ends with a
    /// single block is the top, and that block is the root.
    written: u64,
}

/// Streaming bottom-up packer. Feed strictly ascending unique records with [`push`].
pub struct PackedTreeWriter {
    p: TreeParams,
    dat: OutputFile,
    idn: OutputFile,
    bpt_path: std::path::PathBuf,
    // leaf level: the last closed leaf is held for the final rebalance
    held_leaf: Option<Vec<u8>>,
    cur_leaf: Vec<u8>,
    leaves_written: u32,
    branches_written: u32, // ids 1.. (0 is the root)
    levels: Vec<Level>,
    records: u64,
    block_buf: Vec<u8>,
}

impl PackedTreeWriter {
    /// Creates `<dir>/<name>.{dat,idn,bpt}`.
    pub fn create(dir: &Path, name: &str, p: TreeParams) -> io::Result<PackedTreeWriter> {
        let dat = OutputFile::create(&dir.join(format!("{name}.dat")), 1 << 20)?;
        let mut idn = OutputFile::create(&dir.join(format!("{name}.idn")), 1 << 18)?;
        idn.skip(p.block_size as u64)?; // block 0 is reserved for the root
        Ok(PackedTreeWriter {
            p,
            dat,
            idn,
            bpt_path: dir.join(format!("{name}.bpt")),
            held_leaf: None,
            cur_leaf: Vec::with_capacity(p.leaf_cap * p.rec_len),
            leaves_written: 0,
            branches_written: 0,
            levels: Vec::new(),
            records: 0,
            block_buf: vec![0u8; p.block_size],
        })
    }

    /// Appends one record. Records must be strictly ascending (unsigned byte order):
    /// Jena never checks this, and an unsorted tree silently gives wrong answers.
    pub fn push(&mut self, rec: &[u8]) -> io::Result<()> {
        let p = self.p;
        debug_assert_eq!(rec.len(), p.rec_len);
        if self.records > 0 {
            // The record before is the open leaf's last (a leaf is closed only when the next
            // record comes, and that record then opens the next one).
            let at = self.cur_leaf.len() - p.rec_len;
            if !ascending(&self.cur_leaf[at..at + p.key_len], &rec[..p.key_len]) {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "B+Tree records must be strictly ascending by key",
                ));
            }
        }
        self.records += 1;
        if self.cur_leaf.len() == p.leaf_cap * p.rec_len {
            // The held leaf is written, and its buffer takes the next records.
            let mut next = match self.held_leaf.take() {
                Some(mut prev) => {
                    self.write_leaf(&prev)?;
                    prev.clear();
                    prev
                }
                None => Vec::with_capacity(p.leaf_cap * p.rec_len),
            };
            std::mem::swap(&mut self.cur_leaf, &mut next);
            self.held_leaf = Some(next);
        }
        self.cur_leaf.extend_from_slice(rec);
        Ok(())
    }

    /// Writes a leaf block: header, records, zeros, straight to the file (as [`write_block`]
    /// would write the assembled block: up to its last page that is not all zeros).
    fn write_leaf(&mut self, recs: &[u8]) -> io::Result<()> {
        let p = self.p;
        let n = recs.len() / p.rec_len;
        let mut head = [0u8; 8];
        head[0..4].copy_from_slice(&(n as i32).to_be_bytes());
        head[4..8].copy_from_slice(&(-1i32).to_be_bytes());
        let used = recs.iter().rposition(|&b| b != 0).map_or(head.len(), |i| head.len() + i + 1);
        let keep = (used.div_ceil(PAGE) * PAGE).min(p.block_size);
        let body = (keep - head.len()).min(recs.len());
        self.dat.write_all(&head)?;
        self.dat.write_all(&recs[..body])?;
        // Less than a page: `used` is past the records' last non-zero byte.
        self.dat.write_all(&ZERO_PAGE[..keep - head.len() - body])?;
        if keep < p.block_size {
            self.dat.skip((p.block_size - keep) as u64)?;
        }
        let id = self.leaves_written;
        self.leaves_written += 1;
        let key = recs[(n - 1) * p.rec_len..(n - 1) * p.rec_len + p.key_len].to_vec();
        self.push_pair(0, id, key)
    }

    /// Gives the branch level `depth` one (child, max key) pair. Jena's
    /// `BPTreeNodeBuilder`: append the pointer; a block that reaches MaxPtr closes and
    /// emits the key just received as its separator (not stored in it); otherwise the key
    /// is stored.
    fn push_pair(&mut self, depth: usize, child: u32, key: Vec<u8>) -> io::Result<()> {
        if self.levels.len() == depth {
            let block_type = if depth == 0 { TYPE_LEAF_PARENT } else { TYPE_BRANCH };
            self.levels.push(Level { block_type, held: None, current: Branch::default(), written: 0 });
        }
        let p = self.p;
        let lvl = &mut self.levels[depth];
        lvl.current.ptrs.push(child);
        if lvl.current.ptrs.len() == p.max_ptr {
            let closed = std::mem::take(&mut lvl.current);
            if let Some((prev, sep)) = lvl.held.replace((closed, key)) {
                self.emit_branch(depth, prev, sep)?;
            }
        } else {
            lvl.current.keys.extend_from_slice(&key);
        }
        Ok(())
    }

    /// Writes a finished branch block of level `depth` and passes it to the level above.
    fn emit_branch(&mut self, depth: usize, b: Branch, sep: Vec<u8>) -> io::Result<()> {
        self.branches_written += 1;
        let id = self.branches_written;
        let block_type = self.levels[depth].block_type;
        self.levels[depth].written += 1;
        self.encode_branch(block_type, &b);
        write_block(&mut self.idn, &self.block_buf)?;
        self.push_pair(depth + 1, id, sep)
    }

    fn encode_branch(&mut self, block_type: u8, b: &Branch) {
        let p = self.p;
        let buf = &mut self.block_buf;
        buf.fill(0);
        let count = b.n_keys(&p) as u32;
        debug_assert_eq!(b.ptrs.len() as u32, count + 1);
        buf[0..4].copy_from_slice(&((u32::from(block_type) << 24) | count).to_be_bytes());
        buf[4..4 + b.keys.len()].copy_from_slice(&b.keys);
        for (i, ptr) in b.ptrs.iter().enumerate() {
            let at = p.ptr_base + 4 * i;
            buf[at..at + 4].copy_from_slice(&(*ptr as i32).to_be_bytes());
        }
    }

    /// Finishes the tree: rebalances the ends of every level, writes the root into node
    /// block 0 and the `.bpt` state (root, node-block limit, record-block limit).
    pub fn finish(mut self) -> io::Result<TreeSummary> {
        let p = self.p;
        if self.records == 0 {
            // Empty tree (docs/tdb2-format.md §5): one empty leaf, a type-7 root with count 0 and ptr 0.
            self.write_leaf_raw_empty()?;
            self.encode_branch(TYPE_LEAF_PARENT, &Branch { keys: Vec::new(), ptrs: vec![0] });
            return self.write_root_and_state(TreeSummary { records: 0, root: 0, branch_blocks: 1, leaf_blocks: 1 });
        }
        // Leaves: the last leaf gets at least LeafCap/2 records from the one before it.
        let mut last = std::mem::take(&mut self.cur_leaf);
        if let Some(mut prev) = self.held_leaf.take() {
            let min = p.leaf_cap / 2;
            let have = last.len() / p.rec_len;
            if have < min {
                let mv = (min - have) * p.rec_len;
                let cut = prev.len() - mv;
                let mut moved = prev.split_off(cut);
                moved.extend_from_slice(&last);
                last = moved;
            }
            self.write_leaf(&prev)?;
        }
        self.write_leaf(&last)?;

        // Branch levels, bottom up: close the open block (Jena's `removeTop`: its last key
        // becomes its separator), rebalance it against the held one, write both upward. A
        // level that wrote nothing and ends with one block is the top: that block is the root.
        let mut depth = 0;
        loop {
            let lvl = &mut self.levels[depth];
            let held = lvl.held.take();
            let mut cur = std::mem::take(&mut lvl.current);
            let open = if cur.ptrs.is_empty() {
                None
            } else {
                let cut = cur.keys.len() - p.key_len;
                let sep = cur.keys.split_off(cut);
                Some((cur, sep))
            };
            let blocks = match (held, open) {
                (Some((mut h, mut sep)), Some((mut c, csep))) => {
                    while c.n_keys(&p) < p.min_rec {
                        let ptr = h.ptrs.pop().expect("held block has pointers to spare");
                        let cut = h.keys.len() - p.key_len;
                        let new_sep = h.keys.split_off(cut);
                        c.ptrs.insert(0, ptr);
                        let mut keys = std::mem::replace(&mut sep, new_sep);
                        keys.extend_from_slice(&c.keys);
                        c.keys = keys;
                    }
                    vec![(h, sep), (c, csep)]
                }
                (Some(h), None) => vec![h],
                (None, Some(c)) => vec![c],
                (None, None) => unreachable!("every level receives at least one pair"),
            };
            if blocks.len() == 1 && self.levels[depth].written == 0 {
                let (root, _) = blocks.into_iter().next().expect("one block");
                let t = self.levels[depth].block_type;
                self.encode_branch(t, &root);
                let summary = TreeSummary {
                    records: self.records,
                    root: 0,
                    branch_blocks: self.branches_written + 1,
                    leaf_blocks: self.leaves_written,
                };
                return self.write_root_and_state(summary);
            }
            for (b, sep) in blocks {
                self.emit_branch(depth, b, sep)?;
            }
            depth += 1;
        }
    }

    fn write_leaf_raw_empty(&mut self) -> io::Result<()> {
        let b = &mut self.block_buf;
        b.fill(0);
        b[4..8].copy_from_slice(&(-1i32).to_be_bytes());
        write_block(&mut self.dat, b)?;
        self.leaves_written = 1;
        Ok(())
    }

    fn write_root_and_state(mut self, s: TreeSummary) -> io::Result<TreeSummary> {
        let bs = self.p.block_size as u64;
        let root = &self.block_buf[..used_pages(&self.block_buf).min(self.block_buf.len())];
        self.idn.write_at(root, 0)?;
        // Trailing holes need the length set explicitly.
        self.idn.finish(Some(u64::from(s.branch_blocks) * bs))?;
        self.dat.finish(Some(u64::from(s.leaf_blocks) * bs))?;
        let mut state = Vec::with_capacity(24);
        state.extend_from_slice(&i64::from(s.root).to_be_bytes());
        state.extend_from_slice(&i64::from(s.branch_blocks).to_be_bytes());
        state.extend_from_slice(&i64::from(s.leaf_blocks).to_be_bytes());
        std::fs::write(&self.bpt_path, state)?;
        Ok(s)
    }
}

/// `a < b` in unsigned byte order, as a slice compare gives it, but a word at a time: keys are
/// 16-32 bytes, and a `memcmp` call per record was a fifth of the node-table phase's CPU.
fn ascending(a: &[u8], b: &[u8]) -> bool {
    let (wa, wb) = (a.chunks_exact(8), b.chunks_exact(8));
    let (ra, rb) = (wa.remainder(), wb.remainder());
    for (x, y) in wa.zip(wb) {
        let (x, y) =
            (u64::from_be_bytes(x.try_into().expect("8 bytes")), u64::from_be_bytes(y.try_into().expect("8 bytes")));
        if x != y {
            return x < y;
        }
    }
    ra < rb
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::read_tree;

    /// Distinct records whose first byte mixes values above and below 0x80, so that an
    /// unsigned/signed mix-up would show.
    fn records(n: u64, p: TreeParams) -> Vec<Vec<u8>> {
        (0..n)
            .map(|i| {
                let mut r = vec![0u8; p.rec_len];
                r[0] = ((i % 3) * 0x60) as u8;
                r[p.key_len - 8..p.key_len].copy_from_slice(&i.to_be_bytes());
                r
            })
            .collect()
    }

    fn roundtrip(n: u64, p: TreeParams) {
        let dir = tempfile::tempdir().unwrap();
        let mut recs = records(n, p);
        recs.sort();
        recs.dedup();
        let mut w = PackedTreeWriter::create(dir.path(), "T", p).unwrap();
        for r in &recs {
            w.push(r).unwrap();
        }
        let s = w.finish().unwrap();
        assert_eq!(s.records, recs.len() as u64);
        let back = read_tree(dir.path(), "T", p).unwrap();
        assert_eq!(back, recs, "n = {n}");
        let idn = std::fs::metadata(dir.path().join("T.idn")).unwrap().len();
        assert_eq!(idn, u64::from(s.branch_blocks) * p.block_size as u64);
    }

    /// The word-at-a-time order check equals the slice compare, for every key length (with a
    /// tail shorter than a word) and for pairs that differ in one byte anywhere, in either
    /// direction, or not at all.
    #[test]
    fn ascending_is_unsigned_byte_order() {
        for len in 0..=33usize {
            let base: Vec<u8> = (0..len).map(|i| (i * 37 + 11) as u8).collect();
            assert!(!ascending(&base, &base), "equal keys, len {len}");
            for at in 0..len {
                for v in [0u8, 1, 0x7f, 0x80, 0xfe, 0xff] {
                    let mut other = base.clone();
                    other[at] = v;
                    assert_eq!(ascending(&base, &other), base < other, "len {len}, byte {at} = {v:#x}");
                    assert_eq!(ascending(&other, &base), other < base, "len {len}, byte {at} = {v:#x}");
                }
            }
        }
    }

    #[test]
    fn params_match_the_spec_table() {
        let t = TreeParams::TRIPLE;
        assert_eq!((t.max_rec, t.max_ptr, t.min_rec, t.ptr_base, t.leaf_cap), (291, 292, 145, 6988, 341));
        let q = TreeParams::QUAD;
        assert_eq!((q.max_rec, q.max_ptr, q.min_rec, q.ptr_base, q.leaf_cap), (225, 226, 112, 7204, 255));
        let n = TreeParams::NODE;
        assert_eq!((n.max_rec, n.max_ptr, n.min_rec, n.ptr_base, n.leaf_cap), (291, 292, 145, 6988, 341));
    }

    #[test]
    fn packs_trees_of_every_shape() {
        // empty, one leaf, two leaves with rebalance, level boundaries, three levels
        for n in [0, 1, 2, 170, 341, 342, 400, 682, 683, 1000, 341 * 292, 341 * 292 + 1, 341 * 292 * 2 + 5] {
            roundtrip(n, TreeParams::TRIPLE);
        }
        for n in [0, 1, 255, 256, 255 * 226 + 1] {
            roundtrip(n, TreeParams::QUAD);
        }
        roundtrip(5_000, TreeParams::NODE);
    }

    #[test]
    fn small_blocks_give_deep_trees_that_read_back() {
        // 128-byte blocks with 24-byte records: leaf cap 5, max 4 pointers: up to 7+ levels.
        let p = TreeParams::with_block_size(24, 0, 128);
        for n in 0..200 {
            roundtrip(n, p);
        }
        for n in [1000, 4096, 5000, 20_000] {
            roundtrip(n, p);
        }
        roundtrip(3000, TreeParams::with_block_size(16, 8, 96));
    }

    #[test]
    fn empty_tree_is_jenas_empty_tree() {
        let dir = tempfile::tempdir().unwrap();
        PackedTreeWriter::create(dir.path(), "E", TreeParams::TRIPLE).unwrap().finish().unwrap();
        let bpt = std::fs::read(dir.path().join("E.bpt")).unwrap();
        assert_eq!(bpt, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1]);
        let idn = std::fs::read(dir.path().join("E.idn")).unwrap();
        assert_eq!(idn.len(), BLOCK_SIZE);
        assert_eq!(idn[..4], [7, 0, 0, 0]);
        assert!(idn[4..].iter().all(|&b| b == 0));
        let dat = std::fs::read(dir.path().join("E.dat")).unwrap();
        assert_eq!(dat[..8], [0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]);
    }

    #[test]
    fn rejects_unsorted_input() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = PackedTreeWriter::create(dir.path(), "T", TreeParams::TRIPLE).unwrap();
        w.push(&[1u8; 24]).unwrap();
        assert!(w.push(&[0u8; 24]).is_err());
        assert!(w.push(&[1u8; 24]).is_err());
        // Across a full leaf: the next record is checked against the full leaf's last.
        let mut w = PackedTreeWriter::create(dir.path(), "U", TreeParams::TRIPLE).unwrap();
        let cap = TreeParams::TRIPLE.leaf_cap as u64;
        for i in 0..cap {
            w.push(&[&[0u8; 16][..], &(i + 10).to_be_bytes()].concat()).unwrap();
        }
        assert!(w.push(&[&[0u8; 16][..], &5u64.to_be_bytes()].concat()).is_err());
        w.push(&[&[0u8; 16][..], &(cap + 10).to_be_bytes()].concat()).unwrap();
    }
}
