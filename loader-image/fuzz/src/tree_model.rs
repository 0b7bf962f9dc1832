//! The model for `bptree_build`: which records a tree must hold (a sorted map) and what
//! shape a packed tree of that many records must have, plus a walk that checks every
//! block of both files is used exactly once.
//!
//! Input format (bytes, read in order; missing bytes read as 0), chosen so that seeds can
//! be written by hand and every input lands on or near a boundary of the tree's geometry:
//!
//! | byte  | meaning                                                                      |
//! |-------|------------------------------------------------------------------------------|
//! | 0     | low 2 bits: record shape (0 node 16+8, 1 triple 24, 2 quad 32, 3 node); bits 2-7: 0 = real 8 KiB blocks, k = small blocks (`2*rec_len + 8 + 4*(k-1)` bytes) for deep trees |
//! | 1     | count mode: 0 small, 1 near a leaf boundary, 2 near a branch-level boundary (small blocks; real blocks: many leaves) |
//! | 2-3   | count parameter (u16, big-endian)                                            |
//! | 4     | offset from the boundary (i8)                                                |
//! | 5-12  | seed of the key generator (u64, big-endian)                                  |
//! | 13    | key gaps: low 6 bits = log2 of the largest gap; bits 6-7: how often the leading column changes |
//! | 14    | bit 0: add duplicate keys (node shape: with other values); bit 1: after the last record, push a record that is not ascending (must be refused, changing nothing) |
//! | 15..  | count mode 0 only: extra records, `rec_len` bytes each, in any order         |

use std::collections::BTreeMap;

use tdb2::{TreeParams, BLOCK_SIZE};

use crate::SplitMix64;

/// Largest tree a single input may ask for, so that runs stay fast (tens per second with
/// the sanitizer). Real 8 KiB blocks then reach up to ~60 leaves under one root; deeper
/// trees come from small blocks (the same code with other numbers), and the real-size
/// level boundaries (341 * 292 records) are unit tests of tdb2.
const MAX_RECORDS: u64 = 20_000;

#[derive(Debug)]
pub struct TreeCase {
    pub params: TreeParams,
    /// The distinct keys the tree must hold, with the record chosen for each.
    pub model: BTreeMap<Vec<u8>, Vec<u8>>,
    /// Records as the writer's caller would see them before sorting: the model's records
    /// plus duplicates of some keys.
    pub raw: Vec<Vec<u8>>,
    pub reject_check: bool,
}

fn byte(data: &[u8], i: usize) -> u8 {
    data.get(i).copied().unwrap_or(0)
}

impl TreeCase {
    pub fn decode(data: &[u8]) -> TreeCase {
        let (key_len, val_len) = match byte(data, 0) & 3 {
            1 => (24, 0),
            2 => (32, 0),
            _ => (16, 8),
        };
        let step = usize::from(byte(data, 0) >> 2);
        let params = if step == 0 {
            TreeParams::new(key_len, val_len)
        } else {
            // The smallest block holding two records per leaf and one key per branch.
            let rec_len = key_len + val_len;
            TreeParams::with_block_size(key_len, val_len, (2 * rec_len + 8 + 4 * (step - 1)).min(BLOCK_SIZE))
        };
        let param = u64::from(u16::from_be_bytes([byte(data, 2), byte(data, 3)]));
        let offset = i64::from(byte(data, 4) as i8);
        let leaf_cap = params.leaf_cap as u64;
        let max_ptr = params.max_ptr as u64;
        let wanted = match byte(data, 1) % 3 {
            0 => (param % 1024) as i64,
            // k full leaves, give or take a few records (k = 0 is the empty tree).
            1 => ((param % 8) * leaf_cap) as i64 + offset % 4,
            // Leaf count at a branch level's fill boundary (max_ptr^j * m children, j >= 1),
            // give or take a leaf, then give or take a few records.
            _ => {
                let (mut j, mut m) = (1 + (param % 4) as u32, 1 + (param >> 2) % 3);
                let fits =
                    |j: u32, m: u64| max_ptr.saturating_pow(j).saturating_mul(m).saturating_mul(leaf_cap) < MAX_RECORDS;
                while j > 1 && !fits(j, m) {
                    j -= 1;
                }
                while m > 1 && !fits(j, m) {
                    m -= 1;
                }
                // Real blocks: no branch level fills within MAX_RECORDS; many leaves instead.
                let leaves = if fits(j, m) {
                    max_ptr.saturating_pow(j).saturating_mul(m)
                } else {
                    MAX_RECORDS / leaf_cap - param % 16
                };
                let leaves = leaves as i64 + ((param >> 4) % 3) as i64 - 1;
                leaves * leaf_cap as i64 + offset % 4
            }
        };
        let n = (wanted.max(0) as u64).min(MAX_RECORDS);

        let mut seed = [0u8; 8];
        for (i, b) in seed.iter_mut().enumerate() {
            *b = byte(data, 5 + i);
        }
        let mut rng = SplitMix64(u64::from_be_bytes(seed));
        let gaps = byte(data, 13);
        let max_gap_log2 = u32::from(gaps & 63);
        let major_change_one_in = 1u64 << (2 * u32::from(gaps >> 6) + 1); // 2, 8, 32, 128
        let flags = byte(data, 14);

        let mut model = BTreeMap::new();
        let mut raw = Vec::new();
        // Strictly ascending keys: (major column, filler, 128-bit counter). The major column
        // starts anywhere, so keys on both sides of 0x80 in byte 0 occur (an unsigned/signed
        // mix-up would show); the counter advances by random gaps.
        let mut major = rng.next_u64();
        let mut filler = rng.next_u64();
        let mut counter = u128::from(rng.next_u64()) << 32 | u128::from(rng.next_u64());
        for _ in 0..n {
            let mut key = vec![0u8; key_len];
            key[key_len - 16..].copy_from_slice(&counter.to_be_bytes());
            if key_len > 16 {
                key[..8].copy_from_slice(&major.to_be_bytes());
                for (i, b) in key[8..key_len - 16].iter_mut().enumerate() {
                    *b = (filler >> (8 * (i % 8))) as u8;
                }
            }
            let mut rec = key.clone();
            rec.extend((0..val_len).map(|_| rng.next_u64() as u8));
            raw.push(rec.clone());
            model.insert(key, rec);
            let gap = 1 + u128::from(rng.next_u64() & ((1u64 << max_gap_log2.min(63)) - 1));
            counter += gap;
            if key_len > 16 && rng.below(major_change_one_in) == 0 && major < u64::MAX - 3 {
                major += 1 + rng.below(3);
                filler = rng.next_u64();
                counter = u128::from(rng.next_u64());
            }
        }
        let rec_len = key_len + val_len;
        if byte(data, 1) % 3 == 0 {
            for rec in data.get(15..).unwrap_or_default().chunks_exact(rec_len) {
                raw.push(rec.to_vec());
                model.entry(rec[..key_len].to_vec()).or_insert_with(|| rec.to_vec());
            }
        }
        if flags & 1 != 0 && !raw.is_empty() {
            // Duplicates of some keys: the model keeps the first record of each key.
            for _ in 0..1 + rng.below(raw.len() as u64).min(64) {
                let mut dup = raw[rng.below(raw.len() as u64) as usize].clone();
                for b in &mut dup[key_len..] {
                    *b = rng.next_u64() as u8;
                }
                raw.push(dup);
            }
        }
        TreeCase { params, model, raw, reject_check: flags & 2 != 0 }
    }

    /// Blocks a packed tree of `n` records has: full leaves (the last two rebalanced, so
    /// the count is unchanged), then each branch level holding its children in blocks of
    /// `max_ptr` pointers, up to a single root; an empty tree is one empty leaf and a root.
    pub fn expected_blocks(&self) -> (u64, u64) {
        let n = self.model.len() as u64;
        let leaves = n.div_ceil(self.params.leaf_cap as u64).max(1);
        let mut branches = 0;
        let mut level = leaves;
        loop {
            level = level.div_ceil(self.params.max_ptr as u64);
            branches += level;
            if level == 1 {
                return (leaves, branches);
            }
        }
    }
}

fn be_i32(b: &[u8]) -> i32 {
    i32::from_be_bytes(b[..4].try_into().expect("4 bytes"))
}

/// Walks the tree from block 0 of `idn` and counts how often each block of both files is
/// referenced; every block must be referenced exactly once (the root, block 0, by the
/// walk itself): no orphan or shared blocks. Returns the tree's depth (branch levels).
pub fn check_every_block_used_once(p: &TreeParams, idn: &[u8], dat: &[u8]) -> Result<usize, String> {
    let bs = p.block_size;
    let mut branch_refs = vec![0u32; idn.len() / bs];
    let mut leaf_refs = vec![0u32; dat.len() / bs];
    let mut depth = 0;
    let mut level = vec![0usize];
    loop {
        depth += 1;
        let mut next = Vec::new();
        let mut leaf_parent = None;
        for &id in &level {
            let refs = branch_refs.get_mut(id).ok_or(format!("branch pointer {id} beyond the file"))?;
            *refs += 1;
            let b = &idn[id * bs..(id + 1) * bs];
            let header = be_i32(b) as u32;
            let (ty, count) = (header >> 24, (header & 0xff_ffff) as usize);
            if leaf_parent.is_some_and(|lp| lp != (ty == 7)) {
                return Err(format!("branch block {id}: a level mixes block types"));
            }
            leaf_parent = Some(ty == 7);
            for i in 0..=count.min(p.max_rec) {
                next.push(be_i32(&b[p.ptr_base + 4 * i..]));
            }
        }
        if leaf_parent == Some(true) {
            for id in next {
                let refs = usize::try_from(id).ok().and_then(|i| leaf_refs.get_mut(i));
                *refs.ok_or(format!("leaf pointer {id} beyond the file"))? += 1;
            }
            break;
        }
        level = next.into_iter().map(|id| usize::try_from(id).unwrap_or(usize::MAX)).collect();
    }
    if let Some(id) = branch_refs.iter().position(|&r| r != 1) {
        return Err(format!("branch block {id} referenced {} times", branch_refs[id]));
    }
    if let Some(id) = leaf_refs.iter().position(|&r| r != 1) {
        return Err(format!("leaf block {id} referenced {} times", leaf_refs[id]));
    }
    Ok(depth)
}
