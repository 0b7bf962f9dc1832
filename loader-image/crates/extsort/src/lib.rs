//! External sort of fixed-width integer tuples, for index building.
//!
//! Tuples are sorted in memory in runs of a bounded size, spilled to files owned by one
//! [`SpillDir`], and k-way merged back into one stream of unique tuples in ascending
//! (unsigned, column by column) order, which is exactly TDB2's key order.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// The one owner of temporary files: every spill file lives in its directory, which is
/// removed with everything in it when the last handle is dropped (on success, on error,
/// on panic) unless [`preserve`](SpillDir::preserve) was called: a load that stops with a
/// checkpoint keeps its work files for the run that resumes it.
#[derive(Debug)]
pub struct SpillDir {
    path: PathBuf,
    next: AtomicU64,
    bytes: AtomicU64,
    peak: AtomicU64,
    preserve: AtomicBool,
}

impl SpillDir {
    /// Creates `<parent>/<name>` (removing a stale one left by a crashed run).
    pub fn create(parent: &Path, name: &str) -> io::Result<Arc<SpillDir>> {
        let path = parent.join(name);
        if path.exists() {
            std::fs::remove_dir_all(&path)?;
        }
        std::fs::create_dir_all(&path)?;
        Ok(Arc::new(SpillDir::at(path, 0)))
    }

    fn at(path: PathBuf, next: u64) -> SpillDir {
        SpillDir {
            path,
            next: AtomicU64::new(next),
            bytes: AtomicU64::new(0),
            peak: AtomicU64::new(0),
            preserve: AtomicBool::new(false),
        }
    }

    /// Opens `<parent>/<name>` as left by an earlier run, keeping the files named in
    /// `keep` (and in `also_keep`, not counted as spill bytes) and removing every other one:
    /// the debris of work that did not reach a checkpoint. New files get numbers after the
    /// kept ones.
    pub fn reopen(parent: &Path, name: &str, keep: &[String], also_keep: &[&str]) -> io::Result<Arc<SpillDir>> {
        let path = parent.join(name);
        std::fs::create_dir_all(&path)?;
        let mut next = 0;
        let mut bytes = 0;
        for e in std::fs::read_dir(&path)? {
            let e = e?;
            let name = e.file_name().to_string_lossy().into_owned();
            if also_keep.contains(&name.as_str()) {
                continue;
            }
            if !keep.contains(&name) {
                std::fs::remove_file(e.path())?;
                continue;
            }
            bytes += e.metadata()?.len();
            if let Some(n) =
                name.strip_suffix(".run").and_then(|s| s.rsplit('-').next()).and_then(|n| n.parse::<u64>().ok())
            {
                next = next.max(n + 1);
            }
        }
        for k in keep {
            if !path.join(k).exists() {
                return Err(io::Error::new(
                    io::ErrorKind::NotFound,
                    format!("work file {} is missing", path.join(k).display()),
                ));
            }
        }
        let dir = SpillDir::at(path, next);
        dir.add_bytes(bytes);
        Ok(Arc::new(dir))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Removes every file but those named in `also_keep` (not counted as spill bytes, as
    /// in [`reopen`](SpillDir::reopen)): work to be discarded, of which nothing may still be
    /// open.
    pub fn remove_all_but(&self, also_keep: &[&str]) -> io::Result<()> {
        for e in std::fs::read_dir(&self.path)? {
            let e = e?;
            if !also_keep.contains(&e.file_name().to_string_lossy().as_ref()) {
                std::fs::remove_file(e.path())?;
            }
        }
        self.bytes.store(0, Ordering::Relaxed);
        Ok(())
    }

    /// A new file with a unique name in the directory.
    pub fn new_file(&self, tag: &str) -> io::Result<(PathBuf, File)> {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let p = self.path.join(format!("{tag}-{n:06}.run"));
        let f = File::create(&p)?;
        Ok((p, f))
    }

    /// Accounts bytes written to / released from spill files, for temp-disk reporting.
    pub fn add_bytes(&self, n: u64) {
        let now = self.bytes.fetch_add(n, Ordering::Relaxed) + n;
        self.peak.fetch_max(now, Ordering::Relaxed);
    }
    pub fn release_bytes(&self, n: u64) {
        self.bytes.fetch_sub(n, Ordering::Relaxed);
    }
    pub fn bytes_in_use(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }
    pub fn peak_bytes(&self) -> u64 {
        self.peak.load(Ordering::Relaxed)
    }

    /// Keeps the directory and its files when the last handle is dropped.
    pub fn preserve(&self) {
        self.preserve.store(true, Ordering::SeqCst);
    }
}

impl Drop for SpillDir {
    fn drop(&mut self) {
        if !self.preserve.load(Ordering::SeqCst) {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// Compact encoding of tuple streams on disk. Each tuple is written as the index of the
/// first column that differs from the previous tuple, then that column and the following
/// ones XORed with the previous tuple's, as LEB128 varints. Sorted runs share leading
/// columns and NodeIds of neighbours share high bits, so records shrink from 8*N bytes to
/// a few bytes each.
pub mod codec {
    use std::io::{self, Read, Write};

    pub struct TupleWriter<W: Write, const N: usize> {
        w: W,
        prev: [u64; N],
        bytes: u64,
        buf: Vec<u8>,
    }

    impl<W: Write, const N: usize> TupleWriter<W, N> {
        pub fn new(w: W) -> Self {
            TupleWriter { w, prev: [0; N], bytes: 0, buf: Vec::with_capacity(1 + N * 10) }
        }
        #[inline]
        pub fn write(&mut self, t: &[u64; N]) -> io::Result<()> {
            let first = (0..N).find(|&i| t[i] != self.prev[i]).unwrap_or(N);
            self.buf.clear();
            self.buf.push(first as u8);
            for (&v, &prev) in t[first..].iter().zip(&self.prev[first..]) {
                let mut x = v ^ prev;
                loop {
                    let b = (x & 0x7f) as u8;
                    x >>= 7;
                    if x == 0 {
                        self.buf.push(b);
                        break;
                    }
                    self.buf.push(b | 0x80);
                }
            }
            self.prev = *t;
            self.bytes += self.buf.len() as u64;
            self.w.write_all(&self.buf)
        }
        /// Bytes written so far.
        pub fn bytes(&self) -> u64 {
            self.bytes
        }
        pub fn get_mut(&mut self) -> &mut W {
            &mut self.w
        }
        pub fn into_inner(self) -> W {
            self.w
        }
    }

    pub struct TupleReader<R: Read, const N: usize> {
        r: R,
        prev: [u64; N],
    }

    impl<R: Read, const N: usize> TupleReader<R, N> {
        pub fn new(r: R) -> Self {
            TupleReader { r, prev: [0; N] }
        }
        fn byte(&mut self) -> io::Result<u8> {
            let mut b = [0u8; 1];
            self.r.read_exact(&mut b)?;
            Ok(b[0])
        }
        /// The next tuple, or `None` at a clean end of stream.
        #[inline]
        pub fn read(&mut self) -> io::Result<Option<[u64; N]>> {
            let first = match self.byte() {
                Ok(b) => b as usize,
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
                Err(e) => return Err(e),
            };
            if first > N {
                return Err(io::Error::new(io::ErrorKind::InvalidData, "corrupt tuple run"));
            }
            let mut t = self.prev;
            for v in t.iter_mut().skip(first) {
                let mut x = 0u64;
                let mut shift = 0;
                loop {
                    let b = self.byte()?;
                    x |= u64::from(b & 0x7f) << shift;
                    if b & 0x80 == 0 {
                        break;
                    }
                    shift += 7;
                    if shift > 63 {
                        return Err(io::Error::new(io::ErrorKind::InvalidData, "corrupt tuple run"));
                    }
                }
                *v ^= x;
            }
            self.prev = t;
            Ok(Some(t))
        }
    }
}

/// A spilled run: its file is deleted when the run is dropped.
struct Run {
    path: PathBuf,
    bytes: u64,
    spill: Arc<SpillDir>,
}

impl Drop for Run {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        self.spill.release_bytes(self.bytes);
    }
}

/// Sorts tuples of `N` u64 columns with at most `max_in_memory` tuples buffered.
pub struct TupleSorter<const N: usize> {
    buf: Vec<[u64; N]>,
    max_in_memory: usize,
    runs: Vec<Run>,
    spill: Arc<SpillDir>,
    tag: String,
}

impl<const N: usize> TupleSorter<N> {
    pub fn new(spill: Arc<SpillDir>, tag: &str, max_in_memory: usize) -> Self {
        TupleSorter {
            buf: Vec::new(),
            max_in_memory: max_in_memory.max(1024),
            runs: Vec::new(),
            spill,
            tag: tag.to_string(),
        }
    }

    pub fn push(&mut self, t: [u64; N]) -> io::Result<()> {
        if self.buf.capacity() == 0 {
            // Reserve the whole run at once: growing by doubling would overshoot the budget
            // (untouched pages of the reservation cost nothing).
            self.buf.reserve_exact(self.max_in_memory);
        }
        if self.buf.len() >= self.max_in_memory {
            self.spill_run()?;
        }
        self.buf.push(t);
        Ok(())
    }

    fn sort_buf(&mut self) {
        self.buf.sort_unstable();
        self.buf.dedup();
    }

    fn spill_run(&mut self) -> io::Result<()> {
        self.sort_buf();
        let (path, f) = self.spill.new_file(&self.tag)?;
        let mut w = codec::TupleWriter::<_, N>::new(BufWriter::with_capacity(1 << 20, f));
        for t in &self.buf {
            w.write(t)?;
        }
        let bytes = w.bytes();
        w.into_inner().flush()?;
        self.spill.add_bytes(bytes);
        self.runs.push(Run { path, bytes, spill: self.spill.clone() });
        self.buf.clear();
        Ok(())
    }

    /// Finishes sorting: an iterator over the unique tuples in ascending order.
    pub fn finish(mut self) -> io::Result<Sorted<N>> {
        self.sort_buf();
        if self.runs.is_empty() {
            return Ok(Sorted { inner: SortedInner::Memory(std::mem::take(&mut self.buf).into_iter()), last: None });
        }
        if !self.buf.is_empty() {
            self.spill_run()?;
        }
        self.buf = Vec::new();
        let mut readers = Vec::with_capacity(self.runs.len());
        let mut heap = BinaryHeap::with_capacity(self.runs.len());
        for (i, run) in self.runs.iter().enumerate() {
            let mut r = codec::TupleReader::new(BufReader::with_capacity(1 << 18, File::open(&run.path)?));
            if let Some(t) = r.read()? {
                heap.push(Reverse((t, i)));
            }
            readers.push(r);
        }
        Ok(Sorted { inner: SortedInner::Merge { heap, readers, _runs: std::mem::take(&mut self.runs) }, last: None })
    }
}

enum SortedInner<const N: usize> {
    Memory(std::vec::IntoIter<[u64; N]>),
    Merge {
        heap: BinaryHeap<Reverse<([u64; N], usize)>>,
        readers: Vec<codec::TupleReader<BufReader<File>, N>>,
        _runs: Vec<Run>,
    },
}

/// Unique tuples in ascending order.
pub struct Sorted<const N: usize> {
    inner: SortedInner<N>,
    last: Option<[u64; N]>,
}

impl<const N: usize> Iterator for Sorted<N> {
    type Item = io::Result<[u64; N]>;
    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let t = match &mut self.inner {
                SortedInner::Memory(it) => it.next()?,
                SortedInner::Merge { heap, readers, .. } => {
                    let Reverse((t, i)) = heap.pop()?;
                    match readers[i].read() {
                        Ok(Some(next)) => heap.push(Reverse((next, i))),
                        Ok(None) => {}
                        Err(e) => return Some(Err(e)),
                    }
                    t
                }
            };
            if self.last == Some(t) {
                continue; // duplicates across runs
            }
            self.last = Some(t);
            return Some(Ok(t));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lcg(seed: &mut u64) -> u64 {
        *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        *seed
    }

    #[test]
    fn codec_roundtrips_any_tuples() {
        let mut seed = 3;
        let tuples: Vec<[u64; 4]> = (0..10_000)
            .map(|i| {
                [i / 100, lcg(&mut seed) >> (i % 64), if i % 7 == 0 { u64::MAX } else { 0 }, lcg(&mut seed) | (1 << 63)]
            })
            .collect();
        let mut w = codec::TupleWriter::<_, 4>::new(Vec::new());
        for t in &tuples {
            w.write(t).unwrap();
        }
        let bytes = w.into_inner();
        let mut r = codec::TupleReader::<_, 4>::new(&bytes[..]);
        for t in &tuples {
            assert_eq!(r.read().unwrap().as_ref(), Some(t));
        }
        assert_eq!(r.read().unwrap(), None);
        assert!(r.read().is_ok());
    }

    #[test]
    fn sorted_runs_are_compact() {
        let mut w = codec::TupleWriter::<_, 3>::new(Vec::new());
        for s in 0..1000u64 {
            for p in 0..10u64 {
                w.write(&[s * 131 + 7_000_000, 200_000 + p * 40, (1 << 63) | (s * 10 + p)]).unwrap();
            }
        }
        assert!(w.bytes() < 10_000 * 24 / 3, "{} bytes for 10000 tuples", w.bytes());
    }

    #[test]
    fn sorts_unique_across_spilled_runs_and_cleans_up() {
        let tmp = tempfile::tempdir().unwrap();
        let spill = SpillDir::create(tmp.path(), "work").unwrap();
        let mut s = TupleSorter::<3>::new(spill.clone(), "t", 1024);
        let mut seed = 7;
        let mut model = Vec::new();
        for _ in 0..20_000 {
            // small domain so duplicates occur within and across runs; top bit set often
            let t = [(lcg(&mut seed) % 50) | (lcg(&mut seed) & (1 << 63)), lcg(&mut seed) % 7, lcg(&mut seed) % 3];
            model.push(t);
            s.push(t).unwrap();
        }
        model.sort();
        model.dedup();
        assert!(spill.peak_bytes() > 0, "runs were spilled");
        let out: Vec<_> = s.finish().unwrap().map(Result::unwrap).collect();
        assert_eq!(out, model);
        assert_eq!(std::fs::read_dir(spill.path()).unwrap().count(), 0, "run files removed");
        assert_eq!(spill.bytes_in_use(), 0);
        let p = spill.path().to_path_buf();
        drop(spill);
        assert!(!p.exists());
    }

    #[test]
    fn reopen_keeps_named_files_and_removes_debris() {
        let tmp = tempfile::tempdir().unwrap();
        let spill = SpillDir::create(tmp.path(), "w").unwrap();
        let (a, mut fa) = spill.new_file("dict").unwrap();
        fa.write_all(b"kept").unwrap();
        let (b, _) = spill.new_file("t").unwrap();
        std::fs::write(spill.path().join("checkpoint.json"), b"{}").unwrap();
        spill.preserve();
        drop(spill);
        let keep = vec![a.file_name().unwrap().to_string_lossy().into_owned()];
        let spill = SpillDir::reopen(tmp.path(), "w", &keep, &["checkpoint.json"]).unwrap();
        assert!(a.exists() && !b.exists(), "kept the named file, removed the other");
        assert!(spill.path().join("checkpoint.json").exists());
        assert_eq!(spill.bytes_in_use(), 4);
        let (c, _) = spill.new_file("dict").unwrap();
        assert_ne!(c, a, "new files do not overwrite kept ones");
        assert!(c.to_string_lossy().ends_with("-000001.run"), "{}", c.display());
        let missing = vec!["gone-000009.run".to_string()];
        drop(spill);
        assert!(!tmp.path().join("w").exists(), "not preserved: removed on drop");
        assert!(SpillDir::reopen(tmp.path(), "w", &missing, &[]).is_err(), "a named file that is missing is an error");
    }

    #[test]
    fn remove_all_but_discards_every_other_file() {
        let tmp = tempfile::tempdir().unwrap();
        let spill = SpillDir::create(tmp.path(), "w").unwrap();
        let (a, mut fa) = spill.new_file("dict").unwrap();
        fa.write_all(b"gone").unwrap();
        spill.add_bytes(4);
        std::fs::write(spill.path().join("checkpoint.json"), b"{}").unwrap();
        spill.remove_all_but(&["checkpoint.json"]).unwrap();
        assert!(!a.exists() && spill.path().join("checkpoint.json").exists());
        assert_eq!(spill.bytes_in_use(), 0);
        let (b, _) = spill.new_file("dict").unwrap();
        assert_ne!(b, a, "numbers go on");
    }
}
