//! The bulk-load dictionary: one entry per distinct stored term, keyed by its exact stored
//! bytes, handing out provisional ids while parsing. Final NodeIds (offsets in
//! `nodes-data.obj`) exist only once every term is known and ordered by MD5 key.

use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use hashbrown::HashTable;

const SHARD_BITS: u32 = 6;
const SHARDS: usize = 1 << SHARD_BITS;

/// A provisional id: `(index within shard) << SHARD_BITS | shard`; always < 2^63, so it
/// never collides with an inline NodeId (bit 63 set) in the same tuple column.
pub type ProvId = u64;

#[derive(Default)]
struct Shard {
    table: HashTable<u32>,
    /// Stored term bytes, back to back.
    arena: Vec<u8>,
    /// Start of entry i in `arena`; entry i ends where i+1 starts (or at the arena's end).
    starts: Vec<u64>,
    /// The node-table key (MD5) of entry i.
    keys: Vec<[u8; 16]>,
}

impl Shard {
    fn bytes(&self, i: usize) -> &[u8] {
        let s = self.starts[i] as usize;
        let e = self.starts.get(i + 1).map_or(self.arena.len(), |&e| e as usize);
        &self.arena[s..e]
    }
    fn memory(&self) -> usize {
        self.arena.capacity() + self.starts.capacity() * 8 + self.keys.capacity() * 16 + self.table.capacity() * 5
    }
}

/// A concurrent dictionary, sharded to keep lock hold times short.
pub struct Dictionary {
    shards: Vec<Mutex<Shard>>,
    hasher: foldhash::fast::FixedState,
    memory: AtomicU64,
}

impl Default for Dictionary {
    fn default() -> Self {
        Dictionary {
            shards: (0..SHARDS).map(|_| Mutex::new(Shard::default())).collect(),
            hasher: foldhash::fast::FixedState::with_seed(0x7464_6232),
            memory: AtomicU64::new(0),
        }
    }
}

impl Dictionary {
    /// The hash that [`get`](Self::get) and [`intern_hashed`](Self::intern_hashed) take.
    #[inline]
    pub fn hash(&self, bytes: &[u8]) -> u64 {
        self.hasher.hash_one(bytes)
    }

    /// The id of a term already present.
    pub fn get(&self, bytes: &[u8], h: u64) -> Option<ProvId> {
        let shard_no = (h >> (64 - SHARD_BITS)) as usize;
        let sh = self.shards[shard_no].lock().expect("dictionary shard poisoned");
        let found = sh.table.find(h, |&i| sh.bytes(i as usize) == bytes).copied();
        found.map(|i| (u64::from(i) << SHARD_BITS) | shard_no as u64)
    }

    /// The id of the term with these stored bytes, inserting it (with its MD5 key, computed
    /// by `key` only for new terms) if it is new.
    pub fn intern(&self, bytes: &[u8], key: impl FnOnce() -> [u8; 16]) -> ProvId {
        self.intern_hashed(bytes, self.hasher.hash_one(bytes), key)
    }

    /// [`intern`](Self::intern) with the hash already computed.
    pub fn intern_hashed(&self, bytes: &[u8], h: u64, key: impl FnOnce() -> [u8; 16]) -> ProvId {
        let shard_no = (h >> (64 - SHARD_BITS)) as usize;
        let mut shard = self.shards[shard_no].lock().expect("dictionary shard poisoned");
        let sh = &mut *shard;
        let found = sh.table.find(h, |&i| {
            let s = sh.starts[i as usize] as usize;
            let e = sh.starts.get(i as usize + 1).map_or(sh.arena.len(), |&e| e as usize);
            &sh.arena[s..e] == bytes
        });
        let index = match found {
            Some(&i) => i,
            None => {
                let before = sh.memory();
                let i = sh.starts.len() as u32;
                sh.starts.push(sh.arena.len() as u64);
                sh.arena.extend_from_slice(bytes);
                sh.keys.push(key());
                let (starts, arena) = (&sh.starts, &sh.arena);
                let hasher = &self.hasher;
                sh.table.insert_unique(h, i, |&j| {
                    let s = starts[j as usize] as usize;
                    let e = starts.get(j as usize + 1).map_or(arena.len(), |&e| e as usize);
                    hasher.hash_one(&arena[s..e])
                });
                let after = sh.memory();
                if after != before {
                    self.memory.fetch_add((after - before) as u64, Ordering::Relaxed);
                }
                i
            }
        };
        (u64::from(index) << SHARD_BITS) | shard_no as u64
    }

    /// Bytes held by the dictionary (accounted against the memory budget).
    pub fn memory_bytes(&self) -> u64 {
        self.memory.load(Ordering::Relaxed)
    }

    /// Number of distinct terms.
    pub fn len(&self) -> usize {
        self.shards.iter().map(|s| s.lock().expect("shard").starts.len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Consumes the dictionary into its terms ordered by MD5 key, the order of the node
    /// table, with each term's provisional id.
    pub fn into_sorted(self) -> SortedTerms {
        let shards: Vec<Shard> = self.shards.into_iter().map(|m| m.into_inner().expect("shard")).collect();
        let mut order: Vec<([u8; 16], u64)> = Vec::with_capacity(shards.iter().map(|s| s.starts.len()).sum());
        for (n, sh) in shards.iter().enumerate() {
            for (i, k) in sh.keys.iter().enumerate() {
                order.push((*k, ((i as u64) << SHARD_BITS) | n as u64));
            }
        }
        use rayon::slice::ParallelSliceMut;
        order.par_sort_unstable();
        SortedTerms { shards, order }
    }
}

/// Terms in node-table order.
pub struct SortedTerms {
    shards: Vec<Shard>,
    order: Vec<([u8; 16], ProvId)>,
}

impl SortedTerms {
    pub fn len(&self) -> usize {
        self.order.len()
    }
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }
    /// (MD5 key, provisional id, stored bytes), ascending by key.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8; 16], ProvId, &[u8])> {
        self.order.iter().map(|(k, id)| {
            let sh = &self.shards[(*id & (SHARDS as u64 - 1)) as usize];
            (k, *id, sh.bytes((*id >> SHARD_BITS) as usize))
        })
    }
    /// A table from provisional id to final NodeId, sized for every shard.
    pub fn new_remap(&self) -> Remap {
        Remap { per_shard: self.shards.iter().map(|s| vec![0u64; s.starts.len()]).collect() }
    }
}

/// Provisional id → final NodeId.
pub struct Remap {
    per_shard: Vec<Vec<u64>>,
}

impl Remap {
    pub fn set(&mut self, prov: ProvId, node_id: u64) {
        self.per_shard[(prov & (SHARDS as u64 - 1)) as usize][(prov >> SHARD_BITS) as usize] = node_id;
    }
    /// Maps a tuple column: inline NodeIds (bit 63) pass through.
    #[inline]
    pub fn map(&self, v: u64) -> u64 {
        if v >> 63 == 1 {
            v
        } else {
            self.per_shard[(v & (SHARDS as u64 - 1)) as usize][(v >> SHARD_BITS) as usize]
        }
    }
    pub fn memory_bytes(&self) -> u64 {
        self.per_shard.iter().map(|v| v.capacity() as u64 * 8).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interning_is_idempotent_and_sorted_by_key() {
        let d = Dictionary::default();
        let words: Vec<String> = (0..5000).map(|i| format!("term-{}", i % 1200)).collect();
        let ids: Vec<_> = words.iter().map(|w| d.intern(w.as_bytes(), || md5::Md5::digest(w.as_bytes()).into())).collect();
        for (w, id) in words.iter().zip(&ids) {
            assert_eq!(d.intern(w.as_bytes(), || unreachable!("already present")), *id);
            assert!(id >> 63 == 0);
        }
        assert_eq!(d.len(), 1200);
        let sorted = d.into_sorted();
        let keys: Vec<_> = sorted.iter().map(|(k, _, _)| *k).collect();
        assert!(keys.windows(2).all(|w| w[0] < w[1]));
        for (k, _, bytes) in sorted.iter() {
            let want: [u8; 16] = md5::Md5::digest(bytes).into();
            assert_eq!(*k, want);
        }
    }
    use md5::Digest;
}
