//! The bulk-load dictionary: one entry per distinct stored term, keyed by its exact stored
//! bytes, handing out provisional ids while parsing. Final NodeIds (offsets in
//! `nodes-data.obj`) exist only once every term is known and ordered by MD5 key.
//!
//! Memory is bounded: each shard has a fixed share of the budget, and a shard that is full
//! spills its entries, sorted by MD5 key, to a run file and starts over. A term seen again
//! after its shard spilled gets a second provisional id; the final merge of all runs in MD5
//! order maps every provisional id of a term to the same NodeId.
//!
//! Every run ends with a footer saying where each bucket of keys (by their first byte)
//! starts in it, so that the node table can merge disjoint key ranges on several threads
//! ([`DictTerms::merge`]); MD5 keys are uniform, so equal bucket ranges are equal work.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::hash::BuildHasher;
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::ops::Range;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use extsort::SpillDir;

use crate::checkpoint::ShardState;

const SHARD_BITS: u32 = 6;
const SHARDS: usize = 1 << SHARD_BITS;
const SHARD_MASK: u64 = SHARDS as u64 - 1;
/// Bytes an entry costs besides its term bytes and header: start offset, MD5 key, table
/// slots (8 bytes each, at most 3/4 of them used).
const ENTRY_OVERHEAD: usize = 8 + 16 + 11;
/// An entry's header in the arena, before its term bytes: entry number, length (u32 LE each).
const ENTRY_HEADER: usize = 8;
/// Key buckets, by the key's first byte: the unit in which key ranges are merged.
pub const KEY_BUCKETS: usize = 256;
/// A run's footer: the offset of each bucket's first record, then the end of the records,
/// little-endian.
const FOOTER_BYTES: u64 = (KEY_BUCKETS as u64 + 1) * 8;
/// A run record's header: MD5 key, provisional sequence number, length of the term bytes.
const RECORD_HEADER: u64 = 16 + 8 + 4;

/// A provisional id: `(sequence within shard) << SHARD_BITS | shard`; always < 2^63, so
/// it never collides with an inline NodeId (bit 63 set) in the same tuple column.
pub(crate) type ProvId = u64;

struct Shard {
    table: TermTable,
    /// Entries back to back: header ([`ENTRY_HEADER`]), then the stored term bytes.
    arena: Vec<u8>,
    /// Where entry i's header starts in `arena`.
    starts: Vec<u64>,
    /// The node-table key (MD5) of entry i, computed for many entries at once when they are
    /// needed in key order ([`Shard::key_entries`]): entries from `keys.len()` on have none yet.
    keys: Vec<[u8; 16]>,
    /// Provisional sequence number of entry 0 (entries spilled before count first).
    base: u64,
    runs: Vec<PathBuf>,
    /// Entries 0..persisted are in a run already (written by a partial checkpoint and
    /// kept in memory, so that terms seen again keep their ids).
    persisted: usize,
    accounted: usize,
}

impl Shard {
    fn bytes(&self, i: usize) -> &[u8] {
        entry(&self.arena, self.starts[i] as usize).1
    }
    fn memory(&self) -> usize {
        self.arena.capacity() + self.starts.capacity() * 8 + self.keys.capacity() * 16 + self.table.memory()
    }
    fn len(&self) -> usize {
        self.starts.len()
    }
    /// Computes the keys of the entries that have none yet.
    fn key_entries(&mut self) -> io::Result<()> {
        const BATCH: usize = 4096;
        let mut keys = vec![[0u8; 16]; BATCH];
        while self.keys.len() < self.len() {
            let from = self.keys.len();
            let to = self.len().min(from + BATCH);
            let stored: Vec<&[u8]> = (from..to).map(|i| self.bytes(i)).collect();
            tdb2::term::stored_node_hashes(&stored, &mut keys[..to - from])
                .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "a dictionary entry is not a stored term"))?;
            self.keys.extend_from_slice(&keys[..to - from]);
        }
        Ok(())
    }

    /// Indexes of the entries not yet in a run, in MD5-key order (keys computed).
    fn order(&self) -> Vec<u32> {
        let mut o: Vec<u32> = (self.persisted as u32..self.len() as u32).collect();
        // The key as a big-endian integer: the bytes' order, without a `memcmp` call each.
        o.sort_unstable_by_key(|&i| u128::from_be_bytes(self.keys[i as usize]));
        o
    }
}

/// The entry whose header starts at `at` in an arena: its number and its term bytes.
#[inline]
fn entry(arena: &[u8], at: usize) -> (u32, &[u8]) {
    let head: &[u8; ENTRY_HEADER] = arena[at..at + ENTRY_HEADER].try_into().expect("entry header");
    let i = u32::from_le_bytes([head[0], head[1], head[2], head[3]]);
    let len = u32::from_le_bytes([head[4], head[5], head[6], head[7]]) as usize;
    (i, &arena[at + ENTRY_HEADER..at + ENTRY_HEADER + len])
}

/// A shard's index from term bytes to entry: open addressing, linear probing, each slot the
/// arena offset of an entry's header (plus one; 0 is empty) under a 16-bit tag of the term's
/// hash. A lookup that finds its term reads the slot and the entry, header and bytes side by
/// side: two cache misses where a table of entry numbers took four (control byte, slot, start
/// offset, bytes), and lookups are most of a parse worker's misses.
#[derive(Default)]
struct TermTable {
    slots: Vec<u64>,
    len: usize,
}

impl TermTable {
    const OFFSET_BITS: u32 = 48;
    const OFFSET_MASK: u64 = (1 << Self::OFFSET_BITS) - 1;

    /// The tag: hash bits 32..48 (the slot comes from bits 0..32, the shard from the top).
    #[inline]
    fn tag(h: u64) -> u64 {
        (h >> 32) & 0xffff
    }

    /// The first slot to probe: the low 32 bits of the hash scaled to the table's size.
    #[inline]
    fn home(h: u64, slots: usize) -> usize {
        (((h & 0xffff_ffff) * slots as u64) >> 32) as usize
    }

    /// Entries it holds before it must grow: 3/4 of its slots, so a probe soon meets an empty one.
    fn capacity(&self) -> usize {
        self.slots.len() / 4 * 3
    }

    fn memory(&self) -> usize {
        self.slots.capacity() * 8
    }

    #[inline]
    fn find(&self, h: u64, bytes: &[u8], arena: &[u8]) -> Option<u32> {
        let n = self.slots.len();
        if n == 0 {
            return None;
        }
        let tag = Self::tag(h);
        let mut at = Self::home(h, n);
        loop {
            let slot = self.slots[at];
            if slot == 0 {
                return None;
            }
            if slot >> Self::OFFSET_BITS == tag {
                let (i, term) = entry(arena, ((slot & Self::OFFSET_MASK) - 1) as usize);
                if term == bytes {
                    return Some(i);
                }
            }
            at += 1;
            if at == n {
                at = 0;
            }
        }
    }

    /// Adds the entry at arena offset `at` (not present yet; room made by `grow_to`).
    fn insert(&mut self, h: u64, at: u64) {
        debug_assert!(self.len < self.capacity() && at < Self::OFFSET_MASK);
        let n = self.slots.len();
        let mut pos = Self::home(h, n);
        while self.slots[pos] != 0 {
            pos += 1;
            if pos == n {
                pos = 0;
            }
        }
        self.slots[pos] = (Self::tag(h) << Self::OFFSET_BITS) | (at + 1);
        self.len += 1;
    }

    /// Makes room for `entries` entries (if it has less), placing every entry again.
    fn grow_to(&mut self, entries: usize, arena: &[u8], hasher: &impl BuildHasher) {
        if entries <= self.capacity() {
            return;
        }
        let old = std::mem::replace(&mut self.slots, vec![0; (entries + entries / 3 + 4).next_multiple_of(4)]);
        self.len = 0;
        for slot in old.into_iter().filter(|&s| s != 0) {
            let at = (slot & Self::OFFSET_MASK) - 1;
            self.insert(hasher.hash_one(entry(arena, at as usize).1), at);
        }
    }

    fn clear(&mut self) {
        self.slots.fill(0);
        self.len = 0;
    }
}

/// A concurrent, budgeted dictionary, sharded to keep lock hold times short.
pub struct Dictionary {
    shards: Vec<Mutex<Shard>>,
    hasher: foldhash::fast::FixedState,
    memory: AtomicU64,
    spilled: AtomicU64,
    shard_limit: usize,
    spill: Arc<SpillDir>,
}

impl Dictionary {
    /// A dictionary that holds at most about `budget` bytes in memory, spilling to `spill`.
    pub fn new(budget: u64, spill: Arc<SpillDir>) -> Dictionary {
        let shard_limit = ((budget as usize) / SHARDS).max(64 << 10);
        Dictionary {
            shards: (0..SHARDS)
                .map(|_| {
                    Mutex::new(Shard {
                        table: TermTable::default(),
                        arena: Vec::new(),
                        starts: Vec::new(),
                        keys: Vec::new(),
                        base: 0,
                        runs: Vec::new(),
                        persisted: 0,
                        accounted: 0,
                    })
                })
                .collect(),
            hasher: foldhash::fast::FixedState::with_seed(0x7464_6232),
            memory: AtomicU64::new(0),
            spilled: AtomicU64::new(0),
            shard_limit,
            spill,
        }
    }

    /// The hash that [`get`](Self::get) and [`intern_hashed`](Self::intern_hashed) take.
    #[inline]
    pub fn hash(&self, bytes: &[u8]) -> u64 {
        self.hasher.hash_one(bytes)
    }

    /// The id of a term present in memory (a term whose shard spilled since it was last
    /// seen is not found, and gets a new id from `intern_hashed`).
    pub fn get(&self, bytes: &[u8], h: u64) -> Option<ProvId> {
        let shard_no = (h >> (64 - SHARD_BITS)) as usize;
        let sh = self.shards[shard_no].lock().expect("dictionary shard poisoned");
        let found = sh.table.find(h, bytes, &sh.arena);
        found.map(|i| ((sh.base + u64::from(i)) << SHARD_BITS) | shard_no as u64)
    }

    /// The id of the term with these stored bytes (as `tdb2::term::encode_term` writes them),
    /// inserting it if it is new. (The encoder hashes once for its own cache and calls
    /// [`intern_hashed`](Self::intern_hashed).)
    #[cfg(test)]
    pub(crate) fn intern(&self, bytes: &[u8]) -> io::Result<ProvId> {
        self.intern_hashed(bytes, self.hasher.hash_one(bytes))
    }

    /// The id of the term with these stored bytes and hash, inserting it if it is new.
    pub(crate) fn intern_hashed(&self, bytes: &[u8], h: u64) -> io::Result<ProvId> {
        let shard_no = (h >> (64 - SHARD_BITS)) as usize;
        let mut guard = self.shards[shard_no].lock().expect("dictionary shard poisoned");
        let sh = &mut *guard;
        if let Some(i) = sh.table.find(h, bytes, &sh.arena) {
            return Ok(((sh.base + u64::from(i)) << SHARD_BITS) | shard_no as u64);
        }
        // Room for one more entry within the shard's share? Grow by doubling, never past it.
        let len = u32::try_from(bytes.len()).map_err(|_| {
            io::Error::new(io::ErrorKind::InvalidInput, format!("a term of {} bytes (the limit is 4 GiB)", bytes.len()))
        })?;
        if !self.make_room(sh, bytes.len()) {
            self.spill_shard(sh, false)?;
            if !self.make_room(sh, bytes.len()) {
                // A single term larger than a shard's share: hold it anyway, accounted.
                sh.arena.reserve_exact(ENTRY_HEADER + bytes.len());
                sh.starts.reserve_exact(1);
                sh.keys.reserve_exact(sh.starts.len() + 1 - sh.keys.len());
                sh.table.grow_to(sh.table.len + 1, &sh.arena, &self.hasher);
            }
        }
        let i = sh.starts.len() as u32;
        let at = sh.arena.len() as u64;
        sh.starts.push(at);
        sh.arena.extend_from_slice(&i.to_le_bytes());
        sh.arena.extend_from_slice(&len.to_le_bytes());
        sh.arena.extend_from_slice(bytes);
        sh.table.insert(h, at);
        self.account(sh);
        Ok(((sh.base + u64::from(i)) << SHARD_BITS) | shard_no as u64)
    }

    fn account(&self, sh: &mut Shard) {
        let now = sh.memory();
        if now != sh.accounted {
            if now > sh.accounted {
                self.memory.fetch_add((now - sh.accounted) as u64, Ordering::Relaxed);
            } else {
                self.memory.fetch_sub((sh.accounted - now) as u64, Ordering::Relaxed);
            }
            sh.accounted = now;
        }
    }

    /// Ensures capacity for one more entry of `len` bytes without exceeding the shard's
    /// share (60% term bytes, 40% entries), growing by doubling; false when the shard is full.
    fn make_room(&self, sh: &mut Shard, len: usize) -> bool {
        let arena_limit = self.shard_limit * 3 / 5;
        let entries_limit = self.shard_limit * 2 / 5 / ENTRY_OVERHEAD;
        let need_arena = sh.arena.len() + ENTRY_HEADER + len;
        let need_entries = sh.starts.len() + 1;
        if need_arena > sh.arena.capacity() {
            if need_arena > arena_limit {
                return false;
            }
            let cap = (sh.arena.capacity() * 2).clamp(need_arena.max(16 << 10), arena_limit.max(need_arena));
            sh.arena.reserve_exact(cap - sh.arena.len());
        }
        if need_entries > sh.starts.capacity() || need_entries > sh.table.capacity() {
            if need_entries > entries_limit {
                return false;
            }
            let cap = (sh.starts.capacity() * 2).clamp(need_entries.max(256), entries_limit.max(need_entries));
            sh.starts.reserve_exact(cap - sh.starts.len());
            sh.keys.reserve_exact(cap - sh.keys.len());
            sh.table.grow_to(cap, &sh.arena, &self.hasher);
        }
        true
    }

    /// Writes the shard's entries not yet in a run, in MD5 order, to a new run file; then
    /// empties the shard (keeping its allocations for reuse) unless `keep`.
    fn spill_shard(&self, sh: &mut Shard, keep: bool) -> io::Result<()> {
        if sh.len() > sh.persisted {
            crate::failpoint::crash_point("parse.dict_spill");
            sh.key_entries()?;
            let (path, f) = self.spill.new_file("dict")?;
            let mut w = BufWriter::with_capacity(1 << 20, f);
            let mut written = 0u64;
            let mut bucket_starts = [0u64; KEY_BUCKETS + 1];
            let mut next_bucket = 0;
            for i in sh.order() {
                let i = i as usize;
                let bytes = sh.bytes(i);
                while next_bucket <= usize::from(sh.keys[i][0]) {
                    bucket_starts[next_bucket] = written;
                    next_bucket += 1;
                }
                w.write_all(&sh.keys[i])?;
                w.write_all(&(sh.base + i as u64).to_le_bytes())?;
                w.write_all(&(bytes.len() as u32).to_le_bytes())?;
                w.write_all(bytes)?;
                written += RECORD_HEADER + bytes.len() as u64;
            }
            bucket_starts[next_bucket..].fill(written);
            for start in bucket_starts {
                w.write_all(&start.to_le_bytes())?;
            }
            written += FOOTER_BYTES;
            w.flush()?;
            start_writeback(w.get_ref());
            self.spill.add_bytes(written);
            if !keep {
                self.spilled.fetch_add((sh.len() - sh.persisted) as u64, Ordering::Relaxed);
            }
            sh.runs.push(path);
        }
        if keep {
            sh.persisted = sh.len();
        } else {
            sh.base += sh.len() as u64;
            sh.persisted = 0;
            sh.table.clear();
            sh.arena.clear();
            sh.starts.clear();
            sh.keys.clear();
        }
        Ok(())
    }

    /// Writes what is new in every shard since the last call to durable runs, keeping it in
    /// memory, for a checkpoint in the middle of the parse phase: per shard, the ids handed
    /// out so far (all in runs) and its runs. Workers go on interning meanwhile.
    pub fn persist(&self) -> io::Result<Vec<ShardState>> {
        self.snapshot(true)
    }

    /// Spills every shard and makes the runs durable, for the parse checkpoint: per shard,
    /// the ids it handed out and its run files (names in the spill directory).
    pub fn checkpoint(&self) -> io::Result<Vec<ShardState>> {
        self.snapshot(false)
    }

    fn snapshot(&self, keep: bool) -> io::Result<Vec<ShardState>> {
        use rayon::prelude::*;
        // Shards spill in parallel: each sorts its new entries and writes its own run; the
        // state is read under the same lock, so it names every run the shard has.
        let states: Vec<ShardState> = self
            .shards
            .par_iter()
            .map(|m| -> io::Result<ShardState> {
                let mut sh = m.lock().expect("dictionary shard poisoned");
                self.spill_shard(&mut sh, keep)?;
                if !keep {
                    sh.table = TermTable::default();
                    sh.arena = Vec::new();
                    sh.starts = Vec::new();
                    sh.keys = Vec::new();
                    self.account(&mut sh);
                }
                Ok(ShardState {
                    ids: sh.base + sh.len() as u64,
                    runs: sh
                        .runs
                        .iter()
                        .map(|r| r.file_name().expect("run file").to_string_lossy().into_owned())
                        .collect(),
                })
            })
            .collect::<io::Result<_>>()?;
        // Then every run is made durable before the states are handed out for a checkpoint:
        // once all are written, so that no shard's sort waits for its own run's sync (runs the
        // budget spilled earlier were not synced when written; syncing one again costs next to
        // nothing).
        let dir = self.spill.path();
        states.par_iter().flat_map(|st| &st.runs).try_for_each(|run| File::open(dir.join(run))?.sync_data())?;
        Ok(states)
    }

    /// The dictionary as a checkpoint left it: every entry in its shard's runs; new terms
    /// (when parsing resumes) get ids after them, within `budget`.
    pub fn restore(shards: &[ShardState], budget: u64, spill: Arc<SpillDir>) -> io::Result<Dictionary> {
        if shards.len() != SHARDS {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("checkpoint has {} dictionary shards, not {SHARDS}", shards.len()),
            ));
        }
        let d = Dictionary::new(budget, spill);
        for (m, st) in d.shards.iter().zip(shards) {
            let mut sh = m.lock().expect("dictionary shard poisoned");
            sh.base = st.ids;
            sh.runs = st.runs.iter().map(|r| d.spill.path().join(r)).collect();
        }
        Ok(d)
    }

    /// Bytes held by the dictionary (accounted against the memory budget).
    pub fn memory_bytes(&self) -> u64 {
        self.memory.load(Ordering::Relaxed)
    }

    /// Entries written to spill runs so far.
    pub fn spilled_entries(&self) -> u64 {
        self.spilled.load(Ordering::Relaxed)
    }

    /// Consumes the dictionary into its terms, ready to be merged in MD5-key order (the
    /// node table's order), and a remap table sized for every id.
    pub fn into_terms(self) -> io::Result<(DictTerms, Remap)> {
        use rayon::prelude::*;
        let mut shards: Vec<Shard> = self.shards.into_iter().map(|m| m.into_inner().expect("shard")).collect();
        let remap = Remap { per_shard: shards.iter().map(|s| vec![0u64; (s.base as usize) + s.len()]).collect() };
        let orders: Vec<Vec<u32>> =
            shards.par_iter_mut().map(|sh| sh.key_entries().map(|()| sh.order())).collect::<io::Result<_>>()?;
        let footers = shards
            .iter()
            .map(|sh| sh.runs.iter().map(|r| read_footer(r)).collect::<io::Result<Vec<_>>>())
            .collect::<io::Result<Vec<_>>>()?;
        Ok((DictTerms { shards, orders, footers, spill: self.spill }, remap))
    }
}

/// Asks the kernel to start writing a finished run to disk now, without waiting, so that the
/// disk works while the other shards sort and write theirs and the checkpoint's sync finds
/// little left to do. Only a hint: if it fails, the sync does the work.
fn start_writeback(f: &File) {
    use std::os::fd::AsRawFd;
    // SAFETY: sync_file_range reads no memory of ours; the descriptor is open for the call.
    unsafe {
        libc::sync_file_range(f.as_raw_fd(), 0, 0, libc::SYNC_FILE_RANGE_WRITE);
    }
}

/// Reads where each key bucket starts in a run (see [`FOOTER_BYTES`]).
fn read_footer(path: &std::path::Path) -> io::Result<[u64; KEY_BUCKETS + 1]> {
    let mut f = File::open(path)?;
    let len = f.metadata()?.len();
    let corrupt =
        || io::Error::new(io::ErrorKind::InvalidData, format!("dictionary run {} is corrupt", path.display()));
    if len < FOOTER_BYTES {
        return Err(corrupt());
    }
    f.seek(SeekFrom::Start(len - FOOTER_BYTES))?;
    let mut raw = vec![0u8; FOOTER_BYTES as usize];
    f.read_exact(&mut raw)?;
    let mut starts = [0u64; KEY_BUCKETS + 1];
    for (s, b) in starts.iter_mut().zip(raw.chunks_exact(8)) {
        *s = u64::from_le_bytes(b.try_into().expect("8 bytes"));
    }
    if starts.windows(2).any(|w| w[0] > w[1]) || starts[KEY_BUCKETS] != len - FOOTER_BYTES {
        return Err(corrupt());
    }
    Ok(starts)
}

/// Every term of a dictionary (its in-memory entries and its runs), to be merged in MD5-key
/// order: all at once or as disjoint ranges of key buckets, each on its own thread.
pub struct DictTerms {
    shards: Vec<Shard>,
    /// Per shard, its in-memory entries in key order.
    orders: Vec<Vec<u32>>,
    /// Per shard and run, where each key bucket starts in the run.
    footers: Vec<Vec<[u64; KEY_BUCKETS + 1]>>,
    spill: Arc<SpillDir>,
}

impl DictTerms {
    /// How many sources a merge reads at once (runs, and shards holding entries in memory).
    pub fn sources(&self) -> usize {
        self.shards.iter().zip(&self.orders).map(|(sh, o)| sh.runs.len() + usize::from(!o.is_empty())).sum()
    }

    /// The terms whose key's first byte is in `buckets`, in key order; each run is read
    /// through a buffer of `buffer_bytes`.
    pub fn merge(&self, buckets: Range<usize>, buffer_bytes: usize) -> io::Result<TermMerge<'_>> {
        let mut sources = Vec::new();
        for (n, ((sh, order), footers)) in self.shards.iter().zip(&self.orders).zip(&self.footers).enumerate() {
            for (run, starts) in sh.runs.iter().zip(footers) {
                let (from, to) = (starts[buckets.start], starts[buckets.end]);
                let mut f = File::open(run)?;
                f.seek(SeekFrom::Start(from))?;
                sources.push(Source::Run {
                    shard: n as u64,
                    r: BufReader::with_capacity(buffer_bytes, f),
                    left: to - from,
                });
            }
            let in_range = |b: usize| order.partition_point(|&i| usize::from(sh.keys[i as usize][0]) < b);
            sources.push(Source::Memory { shard: n as u64, pos: in_range(buckets.start), end: in_range(buckets.end) });
        }
        let mut m = TermMerge { terms: self, sources, heap: BinaryHeap::new(), current: Vec::new() };
        for s in 0..m.sources.len() {
            m.advance(s)?;
        }
        Ok(m)
    }

    /// Deletes the dictionary's run files (once the node table is durable).
    pub fn remove_runs(self) -> io::Result<()> {
        for sh in self.shards {
            for r in sh.runs {
                let bytes = std::fs::metadata(&r)?.len();
                std::fs::remove_file(&r)?;
                self.spill.release_bytes(bytes);
            }
        }
        Ok(())
    }
}

enum Source {
    /// Entries `pos..end` of the shard's key order.
    Memory { shard: u64, pos: usize, end: usize },
    /// A run, `left` bytes of records still to read.
    Run { shard: u64, r: BufReader<File>, left: u64 },
}

/// A merged term: its key and provisional id (its bytes go to the caller's buffer).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MergedTerm {
    pub key: [u8; 16],
    pub prov: ProvId,
}

/// Where the bytes of a source's current term are: in memory (shard, entry) or next in its
/// run (their length).
#[derive(Clone, Copy)]
enum Pending {
    Memory(usize, usize),
    Run(u32),
}

/// Terms of every shard and run in a range of key buckets, ascending by MD5 key (equal keys:
/// the same term seen in several runs, each with its own provisional id, in source order).
pub struct TermMerge<'a> {
    terms: &'a DictTerms,
    sources: Vec<Source>,
    /// (key as a big-endian integer, source): the same order as the key's bytes, compared
    /// without a `memcmp` call.
    heap: BinaryHeap<Reverse<(u128, usize)>>,
    current: Vec<Option<(MergedTerm, Pending)>>,
}

impl TermMerge<'_> {
    /// Reads a source's next term head (its bytes stay where they are until it is taken).
    fn advance(&mut self, s: usize) -> io::Result<()> {
        if self.current.len() <= s {
            self.current.resize_with(s + 1, || None);
        }
        let next = match &mut self.sources[s] {
            Source::Memory { shard, pos, end } => {
                if *pos < *end {
                    let n = *shard as usize;
                    let sh = &self.terms.shards[n];
                    let i = self.terms.orders[n][*pos] as usize;
                    *pos += 1;
                    let prov = ((sh.base + i as u64) << SHARD_BITS) | *shard;
                    Some((MergedTerm { key: sh.keys[i], prov }, Pending::Memory(n, i)))
                } else {
                    None
                }
            }
            Source::Run { shard, r, left } => {
                if *left == 0 {
                    None
                } else {
                    let mut head = [0u8; RECORD_HEADER as usize];
                    r.read_exact(&mut head)?;
                    let key: [u8; 16] = head[..16].try_into().expect("16 bytes");
                    let seq = u64::from_le_bytes(head[16..24].try_into().expect("8 bytes"));
                    let len = u32::from_le_bytes(head[24..28].try_into().expect("4 bytes"));
                    *left = left.checked_sub(RECORD_HEADER + u64::from(len)).ok_or_else(|| {
                        io::Error::new(io::ErrorKind::InvalidData, "a dictionary run record crosses its bucket range")
                    })?;
                    Some((MergedTerm { key, prov: (seq << SHARD_BITS) | *shard }, Pending::Run(len)))
                }
            }
        };
        if let Some((t, _)) = &next {
            self.heap.push(Reverse((u128::from_be_bytes(t.key), s)));
        }
        self.current[s] = next;
        Ok(())
    }

    /// The next term in key order; its stored bytes are appended to `bytes`.
    pub fn next_term(&mut self, bytes: &mut Vec<u8>) -> io::Result<Option<MergedTerm>> {
        let Some(Reverse((_, s))) = self.heap.pop() else { return Ok(None) };
        let (t, pending) = self.current[s].take().expect("a queued source has a current term");
        match (pending, &mut self.sources[s]) {
            (Pending::Memory(n, i), _) => bytes.extend_from_slice(self.terms.shards[n].bytes(i)),
            (Pending::Run(len), Source::Run { r, .. }) => {
                let at = bytes.len();
                bytes.resize(at + len as usize, 0);
                r.read_exact(&mut bytes[at..])?;
            }
            (Pending::Run(_), Source::Memory { .. }) => unreachable!("a run's term comes from a run"),
        }
        self.advance(s)?;
        Ok(Some(t))
    }
}

/// Provisional id → final NodeId.
pub struct Remap {
    per_shard: Vec<Vec<u64>>,
}

impl Remap {
    pub fn set(&mut self, prov: ProvId, node_id: u64) {
        self.per_shard[(prov & SHARD_MASK) as usize][(prov >> SHARD_BITS) as usize] = node_id;
    }
    /// Maps a tuple column: inline NodeIds (bit 63) pass through.
    #[inline]
    pub fn map(&self, v: u64) -> u64 {
        if v >> 63 == 1 {
            v
        } else {
            self.per_shard[(v & SHARD_MASK) as usize][(v >> SHARD_BITS) as usize]
        }
    }
    pub fn memory_bytes(&self) -> u64 {
        self.per_shard.iter().map(|v| v.capacity() as u64 * 8).sum()
    }
}

impl Remap {
    /// Writes the table to a work file (durably): shard count, then each shard's length
    /// and ids, little-endian.
    pub fn save(&self, path: &std::path::Path) -> io::Result<u64> {
        let f = File::create(path)?;
        let mut w = BufWriter::with_capacity(1 << 20, f);
        w.write_all(&(self.per_shard.len() as u64).to_le_bytes())?;
        let mut bytes = 8;
        for ids in &self.per_shard {
            w.write_all(&(ids.len() as u64).to_le_bytes())?;
            for id in ids {
                w.write_all(&id.to_le_bytes())?;
            }
            bytes += 8 + 8 * ids.len() as u64;
        }
        w.into_inner().map_err(|e| e.into_error())?.sync_data()?;
        Ok(bytes)
    }

    pub fn load(path: &std::path::Path) -> io::Result<Remap> {
        let mut r = BufReader::with_capacity(1 << 20, File::open(path)?);
        let mut b8 = [0u8; 8];
        let mut next = |r: &mut BufReader<File>| -> io::Result<u64> {
            r.read_exact(&mut b8)?;
            Ok(u64::from_le_bytes(b8))
        };
        let shards = next(&mut r)?;
        let mut per_shard = Vec::with_capacity(shards as usize);
        for _ in 0..shards {
            let n = next(&mut r)?;
            let mut ids = Vec::with_capacity(n as usize);
            for _ in 0..n {
                ids.push(next(&mut r)?);
            }
            per_shard.push(ids);
        }
        Ok(Remap { per_shard })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Entries whose hashes collide (same home slot, same tag) are all found by probing past
    /// each other, a same-tag entry with other bytes is never taken for the term, and every
    /// entry is found again after the table grows and wraps around its end.
    #[test]
    fn term_table_probes_past_collisions_and_keeps_entries_when_growing() {
        let mut arena = Vec::new();
        let mut table = TermTable::default();
        let hasher = foldhash::fast::FixedState::with_seed(1);
        let add = |arena: &mut Vec<u8>, table: &mut TermTable, i: u32, bytes: &[u8], h: u64| {
            let at = arena.len() as u64;
            arena.extend_from_slice(&i.to_le_bytes());
            arena.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
            arena.extend_from_slice(bytes);
            table.grow_to(table.len + 1, arena, &hasher);
            table.insert(h, at);
        };
        // Three terms under one hash whose home is the table's last slot, so probes wrap.
        let h = 0x0000_abcd_ffff_ffff;
        for (i, t) in [&b"one"[..], b"two", b"three"].into_iter().enumerate() {
            add(&mut arena, &mut table, i as u32, t, h);
        }
        assert_eq!(TermTable::home(h, table.slots.len()), table.slots.len() - 1);
        assert_eq!(table.find(h, b"one", &arena), Some(0));
        assert_eq!(table.find(h, b"three", &arena), Some(2));
        assert_eq!(table.find(h, b"four", &arena), None, "same tag, other bytes");
        assert_eq!(table.find(h ^ (1 << 40), b"two", &arena), None, "other tag, same home");
        // Many more, placed by their real hashes: the table grows several times.
        let words: Vec<String> = (0..5000).map(|n| format!("term {n}")).collect();
        for (n, w) in words.iter().enumerate() {
            add(&mut arena, &mut table, 3 + n as u32, w.as_bytes(), hasher.hash_one(w.as_bytes()));
        }
        for (n, w) in words.iter().enumerate() {
            assert_eq!(table.find(hasher.hash_one(w.as_bytes()), w.as_bytes(), &arena), Some(3 + n as u32));
        }
        assert_eq!(table.find(h, b"two", &arena), None, "regrown: placed by the real hash of its bytes");
        assert!(table.len <= table.capacity() && table.capacity() * 4 <= table.slots.len() * 3);
        table.clear();
        assert_eq!(table.find(hasher.hash_one(&b"term 7"[..]), b"term 7", &arena), None);
    }

    /// The node key of stored term bytes, one at a time.
    fn key(b: &[u8]) -> [u8; 16] {
        tdb2::term::decode_term(b).expect("a stored term").0.node_hash()
    }

    /// A word stored as an IRI term.
    fn stored(w: &str) -> Vec<u8> {
        let mut b = Vec::new();
        tdb2::term::encode_term(&tdb2::term::Term::Iri(w), &mut b);
        b
    }

    fn check(budget: u64, expect_spill: bool, restore: bool) {
        let tmp = tempfile::tempdir().unwrap();
        let spill = SpillDir::create(tmp.path(), "s").unwrap();
        let d = Dictionary::new(budget, spill.clone());
        let words: Vec<String> =
            (0..90_000).map(|i| format!("term-{}-{}", i % 30_000, "x".repeat(100 + i % 40))).collect();
        let mut ids = Vec::new();
        for w in &words {
            ids.push(d.intern(&stored(w)).unwrap());
        }
        // 64 shards, each at least 64 KiB: the smallest budget the dictionary honours.
        assert!(d.memory_bytes() <= budget.max(64 * (64 << 10)), "memory {} over budget", d.memory_bytes());
        assert_eq!(d.spilled_entries() > 0, expect_spill);
        let d = if restore {
            // As a resumed load: everything to durable runs, then a dictionary rebuilt from them.
            let state = d.checkpoint().unwrap();
            assert_eq!(d.memory_bytes(), 0, "a checkpointed dictionary holds no memory");
            Dictionary::restore(&state, 0, spill.clone()).unwrap()
        } else {
            d
        };
        let (terms, mut remap) = d.into_terms().unwrap();
        let mut offset = 0u64;
        let mut last: Option<[u8; 16]> = None;
        let mut distinct = 0;
        let mut whole = Vec::new();
        let mut merge = terms.merge(0..KEY_BUCKETS, 1 << 12).unwrap();
        let mut bytes = Vec::new();
        while let Some(t) = merge.next_term(&mut bytes).unwrap() {
            assert_eq!(t.key, key(&bytes));
            if last != Some(t.key) {
                assert!(last.is_none_or(|l| l < t.key));
                offset += 1000;
                distinct += 1;
                last = Some(t.key);
            }
            remap.set(t.prov, offset);
            whole.push((t, std::mem::take(&mut bytes)));
        }
        assert_eq!(distinct, 30_000, "distinct terms");
        // Disjoint bucket ranges, merged one after the other, give the same stream.
        let mut by_ranges = Vec::new();
        for range in [0..1, 1..100, 100..101, 101..255, 255..KEY_BUCKETS] {
            let mut merge = terms.merge(range, 1 << 10).unwrap();
            while let Some(t) = merge.next_term(&mut bytes).unwrap() {
                by_ranges.push((t, std::mem::take(&mut bytes)));
            }
        }
        assert!(by_ranges == whole, "merged by ranges, the stream differs");
        // Every occurrence of a word maps to the same final id; different words differ.
        let mut by_word = std::collections::HashMap::new();
        for (w, id) in words.iter().zip(&ids) {
            let f = remap.map(*id);
            assert_eq!(*by_word.entry(w.clone()).or_insert(f), f, "{w}");
        }
        let finals: std::collections::HashSet<_> = by_word.values().collect();
        assert_eq!(finals.len(), by_word.len());
        // The remap table survives a round trip through its work file.
        let path = tmp.path().join("remap.bin");
        remap.save(&path).unwrap();
        let back = Remap::load(&path).unwrap();
        for id in &ids {
            assert_eq!(back.map(*id), remap.map(*id));
        }
        drop(merge);
        terms.remove_runs().unwrap();
        assert_eq!(spill.bytes_in_use(), 0, "run files released");
    }

    /// A partial checkpoint persists new entries without forgetting them (a term seen again
    /// keeps its id); a load resumed from it (a dictionary restored from the runs, the
    /// words after the checkpoint interned again) maps every word to one NodeId.
    #[test]
    fn persisted_midway_and_resumed_gives_one_id_per_term() {
        let tmp = tempfile::tempdir().unwrap();
        let spill = SpillDir::create(tmp.path(), "s").unwrap();
        let d = Dictionary::new(1 << 30, spill.clone());
        let words: Vec<String> = (0..20_000).map(|i| format!("w{}", i % 7_000)).collect();
        let (first, rest) = words.split_at(10_000);
        let ids: Vec<_> = first.iter().map(|w| d.intern(&stored(w)).unwrap()).collect();
        let state = d.persist().unwrap();
        assert_eq!(state.iter().map(|s| s.ids).sum::<u64>(), 7_000);
        assert_eq!(d.intern(&stored("w5")).unwrap(), ids[5], "a persisted term keeps its id");
        let before = d.persist().unwrap();
        assert_eq!(
            before.iter().map(|s| s.runs.len()).sum::<usize>(),
            state.iter().map(|s| s.runs.len()).sum::<usize>(),
            "nothing new, no new run"
        );
        // The load dies; the resumed one starts from the persisted state.
        drop(d);
        let d = Dictionary::restore(&state, 1 << 30, spill.clone()).unwrap();
        let mut all = ids.clone();
        all.extend(rest.iter().map(|w| d.intern(&stored(w)).unwrap()));
        let (terms, mut remap) = d.into_terms().unwrap();
        let mut merge = terms.merge(0..KEY_BUCKETS, 1 << 12).unwrap();
        let mut offset = 0;
        let mut last = None;
        let mut bytes = Vec::new();
        while let Some(t) = merge.next_term(&mut bytes).unwrap() {
            bytes.clear();
            if last != Some(t.key) {
                offset += 1;
                last = Some(t.key);
            }
            remap.set(t.prov, offset);
        }
        assert_eq!(offset, 7_000, "distinct terms");
        let mut by_word = std::collections::HashMap::new();
        for (w, id) in words.iter().zip(&all) {
            assert_eq!(*by_word.entry(w).or_insert(remap.map(*id)), remap.map(*id), "{w}");
        }
    }

    #[test]
    fn in_memory_dictionary() {
        check(1 << 30, false, false);
    }

    #[test]
    fn checkpointed_and_restored_dictionary_gives_the_same_mapping() {
        check(1 << 30, false, true);
        check(64 * (64 << 10), true, true);
    }

    #[test]
    fn spilling_dictionary_gives_the_same_mapping() {
        check(64 * (64 << 10), true, false);
    }
}
