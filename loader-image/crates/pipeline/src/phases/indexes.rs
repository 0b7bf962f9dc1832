//! Phase 3: the indexes. Each index's tuples, remapped to final NodeIds and in the index's
//! column order, are sorted and packed into its tree, several indexes at a time; each one
//! is checkpointed as it is done, and the phase ends with all of them in the checkpoint.
//! The POS stream also yields the statistics' counts.

use std::collections::BTreeMap;
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use extsort::{SpillDir, TupleSorter};
use tdb2::{PackedTreeWriter, TreeParams, QUAD_INDEXES, TRIPLE_INDEXES};

use bulkload_monitor::progress::{Phase, Progress};
use bulkload_storage::checkpoint::{sync_files, IdStatsState, IndexState, ParseState};
use bulkload_storage::dict::Remap;
use bulkload_storage::failpoint::crash_point;
use bulkload_storage::tuples::Logged;

use crate::build::Build;
use crate::error::LoadError;
use crate::phases::nodes::NodeTable;

/// What the index phase leaves to the finish phase.
pub(crate) struct Indexes {
    pub(crate) triples: u64,
    pub(crate) quads: u64,
    pub(crate) id_stats: IdStats,
}

/// Phase 3 of a build: builds the indexes an earlier run has not checkpointed; ends with
/// every index in the checkpoint.
pub(crate) fn run(b: &mut Build<'_>, parse: &ParseState, nodes: NodeTable) -> Result<Indexes, LoadError> {
    let progress = b.progress();
    let work = b.work_dir();
    let triple_logs: Vec<Logged<3>> = parse.triple_logs.iter().map(|l| l.logged(&work)).collect();
    let quad_logs: Vec<Logged<4>> = parse.quad_logs.iter().map(|l| l.logged(&work)).collect();
    let todo = TRIPLE_INDEXES.len() + QUAD_INDEXES.len() - b.checkpoint.indexes.len();
    let index_started = Instant::now();
    let earlier_seconds = b.checkpoint.indexes_seconds;
    let cp = Mutex::new(&mut b.checkpoint);
    let on_index_done = |name: &str, state: IndexState| -> io::Result<()> {
        crash_point("indexes.index_done");
        let mut cp = cp.lock().expect("checkpoint");
        cp.indexes.insert(name.to_string(), state);
        cp.indexes_seconds = earlier_seconds + index_started.elapsed().as_secs_f64();
        cp.save(&work)
    };
    let done: BTreeMap<String, IndexState> = cp.lock().expect("checkpoint").indexes.clone();
    if todo == 0 {
        b.timer.resumed(Phase::Indexes, earlier_seconds);
    } else {
        let remap = match nodes.remap {
            Some(r) => r,
            None => Remap::load(&work.join(&nodes.state.remap_file))
                .map_err(|e| LoadError::from_output_io("reading the id remap table", e))?,
        };
        progress.start_index_memory(nodes.remap_bytes, nodes.sort_budget, b.threads);
        let sources = IndexSources {
            gen_dir: b.places.gen_dir.as_path(),
            spill: b.spill,
            remap: &remap,
            triples: &triple_logs,
            quads: &quad_logs,
            // At most `threads` sorters hold buffers at once.
            sort_bytes: nodes.sort_budget / b.threads as u64,
            interrupt: &b.opts.interrupt,
            progress: &progress,
        };
        build_indexes(&sources, b.threads, nodes.state.rdf_type, &done, &on_index_done)
            .map_err(|e| LoadError::from_output_io("building indexes", e))?;
        b.timer.lap(Phase::Indexes);
    }
    b.opts.check_interrupt()?;
    let cp = cp.into_inner().expect("checkpoint");
    let count = |name: &str| cp.indexes.get(name).map_or(0, |s| s.records);
    let (triples, quads) = (count(TRIPLE_INDEXES[0].0), count(QUAD_INDEXES[0].0));
    // The default graph's counts (POS) plus the named graphs' (POSG): stats.opt weighs the
    // patterns inside GRAPH as well, and a predicate it does not list weighs 0 (`other`).
    let stats_of =
        |name: &str| IdStats::from_state(cp.indexes.get(name).and_then(|s| s.stats.clone()).unwrap_or_default());
    let id_stats = stats_of("POS").plus(stats_of("POSG"));
    Ok(Indexes { triples, quads, id_stats })
}

/// What every index builder reads.
struct IndexSources<'a> {
    gen_dir: &'a Path,
    spill: &'a Arc<SpillDir>,
    remap: &'a Remap,
    triples: &'a [Logged<3>],
    quads: &'a [Logged<4>],
    /// Sort buffer bytes of one index builder.
    sort_bytes: u64,
    interrupt: &'a AtomicBool,
    progress: &'a Progress,
}

/// Predicate and class counts by NodeId, gathered from the POS stream (the default graph) and
/// the POSG stream (the named graphs, as their union: a triple in several graphs counts once,
/// as `tdb2.tdbstats --graph urn:x-arq:UnionGraph` counts).
#[derive(Default)]
pub(crate) struct IdStats {
    /// rdf:type's NodeId, when the data uses it.
    pub(crate) rdf_type: Option<u64>,
    /// The (P, O, S) of the last POSG record seen, to count each triple of the union once.
    last_pos: Option<[u64; 3]>,
    pub(crate) count: u64,
    pub(crate) predicates: Vec<(u64, u64)>,
    /// (class, count) of `?x rdf:type class`.
    pub(crate) classes: Vec<(u64, u64)>,
}

/// Builds the indexes not in `done`, `threads` at a time (each holding one sort buffer, which
/// the budget allows for), their fill and sort spread over a pool of `threads`; `on_done`
/// records each finished (and synced) one in the checkpoint.
fn build_indexes(
    src: &IndexSources<'_>,
    threads: usize,
    rdf_type: Option<u64>,
    done: &BTreeMap<String, IndexState>,
    on_done: &(dyn Fn(&str, IndexState) -> io::Result<()> + Sync),
) -> io::Result<()> {
    // The builders are plain threads, not tasks of the pool: a pool thread waiting for its
    // share of a sort would start another index (work stealing), and its buffer with it.
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().map_err(io::Error::other)?;
    let have_quads = src.quads.iter().any(|l| !l.is_empty());
    let quad_logs = if have_quads { src.quads } else { &[] };
    let todo: Vec<&str> = TRIPLE_INDEXES
        .iter()
        .map(|(n, _)| *n)
        .chain(QUAD_INDEXES.iter().map(|(n, _)| *n))
        .filter(|n| !done.contains_key(*n))
        .collect();
    let pending_triples = TRIPLE_INDEXES.iter().filter(|(n, _)| todo.contains(n)).count();
    let pending_quads = QUAD_INDEXES.iter().filter(|(n, _)| todo.contains(n)).count();
    let triple_base = shared_base(src, &pool, threads, src.triples, pending_triples)?;
    let quad_base = shared_base(src, &pool, threads, quad_logs, pending_quads)?;
    let gen_dir = src.gen_dir;
    let build = |name: &str| -> io::Result<()> {
        let mut stats: Option<IdStats>;
        let records = if let Some((_, cols)) = TRIPLE_INDEXES.iter().find(|(n, _)| *n == name) {
            stats = (name == "POS").then(|| IdStats { rdf_type, ..Default::default() });
            let index = IndexToBuild {
                name,
                cols,
                logs: src.triples,
                base: triple_base.as_deref(),
                params: TreeParams::TRIPLE,
            };
            build_index(src, &pool, index, |t| {
                if let Some(st) = stats.as_mut() {
                    st.observe_pos(t);
                }
            })?
        } else {
            let (_, cols) = QUAD_INDEXES.iter().find(|(n, _)| *n == name).expect("an index name");
            stats = (name == "POSG").then(|| IdStats { rdf_type, ..Default::default() });
            let index =
                IndexToBuild { name, cols, logs: quad_logs, base: quad_base.as_deref(), params: TreeParams::QUAD };
            build_index(src, &pool, index, |t| {
                if let Some(st) = stats.as_mut() {
                    st.observe_posg(t);
                }
            })?
        };
        sync_files(
            gen_dir,
            [format!("{name}.dat"), format!("{name}.idn"), format!("{name}.bpt")].iter().map(String::as_str),
        )?;
        on_done(name, IndexState { records, stats: stats.map(IdStats::into_state) })
    };
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    std::thread::scope(|s| {
        let builders: Vec<_> = (0..threads.clamp(1, todo.len().max(1)))
            .map(|_| {
                s.spawn(|| -> io::Result<()> {
                    while !failed.load(Ordering::Relaxed) {
                        let Some(name) = todo.get(next.fetch_add(1, Ordering::Relaxed)) else { break };
                        build(name).inspect_err(|_| failed.store(true, Ordering::Relaxed))?;
                    }
                    Ok(())
                })
            })
            .collect();
        builders.into_iter().try_for_each(|b| b.join().expect("index builder panicked"))
    })
}

/// The logs' tuples remapped to final NodeIds, in log order, read once for every index of
/// their kind still to build (each then takes its columns from it instead of reading and
/// remapping the logs again: a third of the phase's CPU did that) -- when it fits beside
/// the builders' sort buffers, and more than one index needs it.
fn shared_base<const N: usize>(
    src: &IndexSources<'_>,
    pool: &rayon::ThreadPool,
    threads: usize,
    logs: &[Logged<N>],
    indexes: usize,
) -> io::Result<Option<Vec<[u64; N]>>> {
    let bytes = logs.iter().map(Logged::len).sum::<u64>() * 8 * N as u64;
    if indexes < 2 || bytes == 0 || bytes * (threads as u64 + 1) > src.sort_bytes * threads as u64 {
        return Ok(None);
    }
    src.progress.add_index_memory(bytes);
    remapped_logs(src, pool, logs, &std::array::from_fn(|i| i)).map(Some)
}

/// A logged tuple with final NodeIds, its columns in `cols` order.
fn remapped<const N: usize>(remap: &Remap, t: &[u64; N], cols: &[usize; N]) -> [u64; N] {
    std::array::from_fn(|i| remap.map(t[cols[i]]))
}

/// Every logged tuple, remapped to final NodeIds with its columns in `cols` order, in log
/// order; each log is read by its own thread of the pool into its part of the result.
fn remapped_logs<const N: usize>(
    src: &IndexSources<'_>,
    pool: &rayon::ThreadPool,
    logs: &[Logged<N>],
    cols: &[usize; N],
) -> io::Result<Vec<[u64; N]>> {
    use rayon::prelude::*;
    let remap = src.remap;
    let total: u64 = logs.iter().map(Logged::len).sum();
    let mut buf = vec![[0u64; N]; total as usize];
    let mut parts = Vec::with_capacity(logs.len());
    let mut rest = buf.as_mut_slice();
    for log in logs {
        let (part, tail) = rest.split_at_mut(log.len() as usize);
        parts.push((log, part));
        rest = tail;
    }
    pool.install(|| {
        parts.into_par_iter().try_for_each(|(log, part)| {
            src.stop()?;
            let mut i = 0;
            log.for_each(|t| {
                part[i] = remapped(remap, t, cols);
                i += 1;
                if i.is_multiple_of(1 << 14) {
                    crash_point("indexes.sort_push");
                }
                Ok(())
            })
        })
    })?;
    Ok(buf)
}

/// Sorts the logged tuples (remapped to final NodeIds, columns in the index's order) and
/// packs them into the index's tree, showing each record to `observe` on the way.
///
/// An index whose tuples fit its sort buffer is filled by every thread (from `base`, the
/// tuples already remapped, or else one log each) and sorted by every thread: several
/// indexes are built at once, but the last ones (and a big node's) would otherwise run on
/// one core each. An index that does not fit goes through the external sorter.
fn build_index<const N: usize>(
    src: &IndexSources<'_>,
    pool: &rayon::ThreadPool,
    index: IndexToBuild<'_, N>,
    observe: impl FnMut(&[u64; N]),
) -> io::Result<u64> {
    let IndexToBuild { name, cols, logs, base, params } = index;
    let IndexSources { gen_dir, spill, remap, sort_bytes, .. } = *src;
    let mut w = PackedTreeWriter::create(gen_dir, name, params)?;
    let total: u64 = logs.iter().map(Logged::len).sum();
    let max_in_memory = (sort_bytes / (8 * N as u64)).max(1024);
    let n = if total == 0 {
        0
    } else if total <= max_in_memory {
        use rayon::prelude::*;
        let mut buf = match base {
            Some(base) => pool.install(|| base.par_iter().map(|t| std::array::from_fn(|i| t[cols[i]])).collect()),
            None => remapped_logs(src, pool, logs, cols)?,
        };
        pool.install(|| buf.par_sort_unstable());
        buf.dedup();
        write_sorted(src, name, &mut w, buf.into_iter().map(Ok), observe)?
    } else {
        let mut sorter = TupleSorter::<N>::new(spill.clone(), name, max_in_memory as usize);
        let mut pushed = 0u64;
        for log in logs {
            src.stop()?;
            log.for_each(|t| {
                pushed += 1;
                if pushed.is_multiple_of(1 << 14) {
                    crash_point("indexes.sort_push");
                }
                sorter.push(remapped(remap, t, cols))
            })?;
        }
        write_sorted(src, name, &mut w, sorter.finish()?, observe)?
    };
    src.progress.index_counter(name).store(n, Ordering::Relaxed);
    w.finish()?;
    Ok(n)
}

/// One index to build: its name and column order, the logs it is built from, and the tuples
/// already remapped for every index of its kind when they fit in memory.
struct IndexToBuild<'a, const N: usize> {
    name: &'a str,
    cols: &'a [usize; N],
    logs: &'a [Logged<N>],
    base: Option<&'a [[u64; N]]>,
    params: TreeParams,
}

/// Packs sorted unique tuples into the tree; the number of records.
fn write_sorted<const N: usize>(
    src: &IndexSources<'_>,
    name: &str,
    w: &mut PackedTreeWriter,
    sorted: impl Iterator<Item = io::Result<[u64; N]>>,
    mut observe: impl FnMut(&[u64; N]),
) -> io::Result<u64> {
    let mut rec = vec![0u8; 8 * N];
    let mut n = 0;
    for t in sorted {
        let t = t?;
        for (i, v) in t.iter().enumerate() {
            rec[i * 8..i * 8 + 8].copy_from_slice(&v.to_be_bytes());
        }
        w.push(&rec)?;
        observe(&t);
        n += 1;
        if n % 4096 == 0 {
            src.progress.index_counter(name).store(n, Ordering::Relaxed);
        }
        if n % (1 << 14) == 0 {
            crash_point("indexes.record");
            if n % (1 << 20) == 0 {
                src.stop()?;
            }
        }
    }
    Ok(n)
}

impl IndexSources<'_> {
    /// An error once the load is interrupted.
    fn stop(&self) -> io::Result<()> {
        if self.interrupt.load(Ordering::Relaxed) {
            Err(io::Error::new(io::ErrorKind::Interrupted, "interrupted"))
        } else {
            Ok(())
        }
    }
}

impl IdStats {
    fn into_state(self) -> IdStatsState {
        IdStatsState { count: self.count, predicates: self.predicates, classes: self.classes }
    }

    fn from_state(st: IdStatsState) -> IdStats {
        IdStats { rdf_type: None, last_pos: None, count: st.count, predicates: st.predicates, classes: st.classes }
    }

    /// Both sets of counts, added up per predicate and per class.
    fn plus(self, other: IdStats) -> IdStats {
        fn add(a: Vec<(u64, u64)>, b: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
            let mut sum = BTreeMap::new();
            for (k, n) in a.into_iter().chain(b) {
                *sum.entry(k).or_insert(0) += n;
            }
            sum.into_iter().collect()
        }
        IdStats {
            rdf_type: self.rdf_type.or(other.rdf_type),
            last_pos: None,
            count: self.count + other.count,
            predicates: add(self.predicates, other.predicates),
            classes: add(self.classes, other.classes),
        }
    }

    /// Counts one POSG record unless its triple was the previous record's (in another graph).
    fn observe_posg(&mut self, t: &[u64; 4]) {
        let pos = [t[0], t[1], t[2]];
        if self.last_pos != Some(pos) {
            self.last_pos = Some(pos);
            self.observe_pos(&pos);
        }
    }

    /// Counts one POS record: triples, per predicate, and per class for rdf:type.
    fn observe_pos(&mut self, t: &[u64; 3]) {
        self.count += 1;
        match self.predicates.last_mut() {
            Some((p, c)) if *p == t[0] => *c += 1,
            _ => self.predicates.push((t[0], 1)),
        }
        if Some(t[0]) == self.rdf_type {
            match self.classes.last_mut() {
                Some((o, c)) if *o == t[1] => *c += 1,
                _ => self.classes.push((t[1], 1)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_graphs_count_each_triple_of_their_union_once_and_add_to_the_default_graph() {
        const TYPE: u64 = 7;
        let mut default = IdStats { rdf_type: Some(TYPE), ..Default::default() };
        for t in [[5, 1, 10], [TYPE, 2, 10]] {
            default.observe_pos(&t);
        }
        let mut named = IdStats { rdf_type: Some(TYPE), ..Default::default() };
        // POSG order: (P, O, S, G); the first triple is in graphs 100 and 101.
        for t in [[5, 1, 10, 100], [5, 1, 10, 101], [5, 1, 11, 100], [6, 3, 10, 100], [TYPE, 2, 11, 101]] {
            named.observe_posg(&t);
        }
        assert_eq!((named.count, &named.predicates), (4, &vec![(5, 2), (6, 1), (TYPE, 1)]));
        let sum = default.plus(named);
        assert_eq!(sum.count, 6);
        assert_eq!(sum.predicates, vec![(5, 3), (6, 1), (TYPE, 2)]);
        assert_eq!(sum.classes, vec![(2, 2)]);
    }
}
