//! How the memory budget (`--memory`) is shared out among the phases; the plan
//! (crate::plan) uses the same model. Every constant says where it comes from.

/// Decompressed bytes of line-based input in one parse job.
pub(crate) const CHUNK_BYTES: usize = 4 << 20;
/// Chunk buffers per worker that can be alive at once: one being filled by the reader,
/// one queued, one being parsed.
const CHUNKS_IN_FLIGHT_PER_WORKER: u64 = 3;
/// Per worker besides its chunks: the reader's read-ahead and decompressor, the encoder's
/// scratch buffers and the writers' buffers.
const WORKER_OVERHEAD_BYTES: u64 = 4 << 20;
/// Per worker more when an input is bzip2: a decoding thread of rdf-input's bzip2_block holds
/// 6-7 MB at `-9` on RDF text (its vector alone 3.6 MB).
const BZIP2_DECODER_BYTES: u64 = 4 << 20;
/// The process itself whatever the threads: code, stacks, allocator arenas, the node
/// table's and the indexes' block writers.
const PROCESS_BYTES: u64 = 48 << 20;
/// Beyond the fixed buffers, less than this leaves the dictionary and the tuple buffers
/// too little to make progress (every few terms a spill).
const MIN_WORKING_BYTES: u64 = 64 << 20;
/// While parsing, an eighth of what is left after the fixed buffers goes to the workers'
/// tuple buffers, and another eighth stays free for the id remap table that the node
/// table phase allocates; the dictionary gets the rest.
const PARSE_SHARE_DIVISOR: u64 = 8;
/// Bytes of budget per buffered tuple: a triple is 24 bytes, a quad 32 (and a worker
/// reserves half as many quads as triples, see [`MemoryPlan::tuple_buffer_bytes`]).
const BUDGET_BYTES_PER_BUFFERED_TUPLE: u64 = 32;
/// A buffered triple: three provisional ids of 8 bytes.
const TRIPLE_BYTES: u64 = 24;
/// A buffered quad: four provisional ids of 8 bytes.
const QUAD_BYTES: u64 = 32;
/// Tuple buffers never hold fewer tuples than this (tuples.rs `TupleLog` reserves it).
const MIN_BUFFERED_TUPLES: u64 = 1024;
/// The id remap table of the node-table phase: one final NodeId (8 bytes) per
/// provisional id.
pub(crate) const REMAP_BYTES_PER_ID: u64 = 8;
/// Sort buffers below this for the index builders make no sense: each run would be a few
/// MiB and the merge would open thousands of them.
pub(crate) const MIN_SORT_BYTES: u64 = 32 << 20;

/// Why the budget cannot hold a build.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BudgetTooSmall {
    #[error(
        "--memory {} MiB is below the minimum of {} MiB for {threads} threads ({} MiB of fixed buffers + {} MiB to work with)",
        budget >> 20, minimum >> 20, fixed >> 20, MIN_WORKING_BYTES >> 20
    )]
    BelowMinimum { budget: u64, minimum: u64, fixed: u64, threads: usize },
    #[error(
        "--memory {} MiB cannot hold the id remap table and tuple buffers ({} MiB for this input) plus sort buffers; \
         give at least {} MiB",
        budget >> 20, resident >> 20, needed >> 20
    )]
    NoRoomToSort { budget: u64, resident: u64, needed: u64 },
}

/// How the memory budget is shared out (also the plan's memory model, crate::plan).
pub(crate) struct MemoryPlan {
    budget: u64,
    fixed: u64,
    pub(crate) dictionary: u64,
    pub(crate) log_tuples_per_worker: usize,
}

impl MemoryPlan {
    /// Chunk buffers in flight, read-ahead, decompressors (`bzip2`: an input is bzip2),
    /// writers and the process itself.
    pub(crate) fn fixed_bytes(threads: usize, bzip2: bool) -> u64 {
        let decoder = if bzip2 { BZIP2_DECODER_BYTES } else { 0 };
        PROCESS_BYTES
            + (threads as u64) * (CHUNKS_IN_FLIGHT_PER_WORKER * CHUNK_BYTES as u64 + WORKER_OVERHEAD_BYTES + decoder)
    }

    pub(crate) fn new(budget: u64, threads: usize, bzip2: bool) -> Result<MemoryPlan, BudgetTooSmall> {
        let fixed = Self::fixed_bytes(threads, bzip2);
        let minimum = fixed + MIN_WORKING_BYTES;
        if budget < minimum {
            return Err(BudgetTooSmall::BelowMinimum { budget, minimum, fixed, threads });
        }
        let free = budget - fixed;
        let logs = free / PARSE_SHARE_DIVISOR;
        let remap_reserve = free / PARSE_SHARE_DIVISOR;
        Ok(MemoryPlan {
            budget,
            fixed,
            dictionary: free - logs - remap_reserve,
            log_tuples_per_worker: (logs / threads as u64 / BUDGET_BYTES_PER_BUFFERED_TUPLE) as usize,
        })
    }

    /// Bytes left for sort buffers once the remap table (8 bytes per id) and the tuple
    /// logs' in-memory tails (`resident`) are accounted.
    pub(crate) fn sorting(&self, resident: u64) -> Result<u64, BudgetTooSmall> {
        let left = self.budget.saturating_sub(self.fixed + resident);
        if left < MIN_SORT_BYTES {
            return Err(BudgetTooSmall::NoRoomToSort {
                budget: self.budget,
                resident,
                needed: self.fixed + resident + MIN_SORT_BYTES,
            });
        }
        Ok(left)
    }

    /// The parse workers' tuple buffers: each holds `log_tuples_per_worker` triples (24
    /// bytes) and half as many quads (32 bytes), as tuples.rs `TupleLog` reserves them.
    pub(crate) fn tuple_buffer_bytes(&self, threads: usize) -> u64 {
        let t = (self.log_tuples_per_worker as u64).max(MIN_BUFFERED_TUPLES);
        threads as u64 * (t * TRIPLE_BYTES + (t / 2).max(MIN_BUFFERED_TUPLES) * QUAD_BYTES)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_add_up_to_the_budget() {
        let budget = 1 << 30;
        let plan = MemoryPlan::new(budget, 2, false).unwrap();
        let free = budget - MemoryPlan::fixed_bytes(2, false);
        assert_eq!(plan.dictionary + 2 * (free / PARSE_SHARE_DIVISOR), free);
        assert!(plan.sorting(free - MIN_SORT_BYTES).is_ok());
        assert!(matches!(plan.sorting(free - MIN_SORT_BYTES + 1), Err(BudgetTooSmall::NoRoomToSort { .. })));
    }

    #[test]
    fn below_the_minimum_names_the_numbers() {
        let e = MemoryPlan::new(100 << 20, 4, false).err().unwrap();
        assert_eq!(
            e.to_string(),
            "--memory 100 MiB is below the minimum of 176 MiB for 4 threads (112 MiB of fixed buffers + 64 MiB to work with)"
        );
        // A bzip2 decoder per worker: 4 MiB more each.
        let e = MemoryPlan::new(100 << 20, 4, true).err().unwrap();
        assert!(e.to_string().contains("minimum of 192 MiB for 4 threads (128 MiB of fixed"), "{e}");
    }
}
