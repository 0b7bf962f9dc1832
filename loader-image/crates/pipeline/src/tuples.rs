//! Append-only logs of encoded tuples (provisional ids), kept in memory up to a bound and
//! spilled to a file beyond it, read back once the final NodeIds are known.

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Write};
use std::path::PathBuf;
use std::sync::Arc;

use extsort::codec::{TupleReader, TupleWriter};
use extsort::SpillDir;

pub struct TupleLog<const N: usize> {
    buf: Vec<[u64; N]>,
    cap: usize,
    file: Option<(PathBuf, TupleWriter<BufWriter<File>, N>)>,
    spilled: u64,
    spill: Arc<SpillDir>,
    tag: &'static str,
}

impl<const N: usize> TupleLog<N> {
    pub fn new(spill: Arc<SpillDir>, tag: &'static str, cap: usize) -> Self {
        TupleLog { buf: Vec::new(), cap: cap.max(1024), file: None, spilled: 0, spill, tag }
    }

    #[inline]
    pub fn push(&mut self, t: [u64; N]) -> io::Result<()> {
        if self.buf.capacity() == 0 {
            self.buf.reserve_exact(self.cap); // no doubling past the budgeted size
        }
        if self.buf.len() == self.cap {
            self.flush_buf()?;
        }
        self.buf.push(t);
        Ok(())
    }

    fn flush_buf(&mut self) -> io::Result<()> {
        if self.file.is_none() {
            let (p, f) = self.spill.new_file(self.tag)?;
            self.file = Some((p, TupleWriter::new(BufWriter::with_capacity(1 << 20, f))));
        }
        let (_, w) = self.file.as_mut().expect("file");
        let before = w.bytes();
        for t in &self.buf {
            w.write(t)?;
        }
        self.spill.add_bytes(w.bytes() - before);
        self.spilled += self.buf.len() as u64;
        self.buf.clear();
        Ok(())
    }

    pub fn finish(mut self) -> io::Result<Logged<N>> {
        let (file, file_bytes) = match self.file.take() {
            Some((p, w)) => {
                let bytes = w.bytes();
                w.into_inner().flush()?;
                (Some(p), bytes)
            }
            None => (None, 0),
        };
        Ok(Logged { file, file_bytes, spilled: self.spilled, tail: std::mem::take(&mut self.buf), spill: self.spill.clone() })
    }
}

/// A finished log: its file (if it spilled) and its in-memory tail.
pub struct Logged<const N: usize> {
    file: Option<PathBuf>,
    file_bytes: u64,
    spilled: u64,
    tail: Vec<[u64; N]>,
    spill: Arc<SpillDir>,
}

impl<const N: usize> Logged<N> {
    pub fn len(&self) -> u64 {
        self.spilled + self.tail.len() as u64
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Calls `f` on every tuple, in the order they were logged.
    pub fn for_each(&self, mut f: impl FnMut(&[u64; N]) -> io::Result<()>) -> io::Result<()> {
        if let Some(p) = &self.file {
            let mut r = TupleReader::<_, N>::new(BufReader::with_capacity(1 << 20, File::open(p)?));
            for _ in 0..self.spilled {
                let t = r.read()?.ok_or_else(|| io::Error::new(io::ErrorKind::UnexpectedEof, "tuple log ends early"))?;
                f(&t)?;
            }
        }
        for t in &self.tail {
            f(t)?;
        }
        Ok(())
    }

    pub fn memory_bytes(&self) -> u64 {
        (self.tail.capacity() * N * 8) as u64
    }
}

impl<const N: usize> Drop for Logged<N> {
    fn drop(&mut self) {
        if let Some(p) = &self.file {
            let _ = std::fs::remove_file(p);
            self.spill.release_bytes(self.file_bytes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spills_and_replays_in_order() {
        let tmp = tempfile::tempdir().unwrap();
        let spill = SpillDir::create(tmp.path(), "s").unwrap();
        let mut log = TupleLog::<3>::new(spill.clone(), "t", 1024);
        for i in 0..5000u64 {
            log.push([i, i * 2, u64::MAX - i]).unwrap();
        }
        let logged = log.finish().unwrap();
        assert_eq!(logged.len(), 5000);
        assert!(spill.bytes_in_use() > 0);
        let mut next = 0;
        logged.for_each(|t| {
            assert_eq!(*t, [next, next * 2, u64::MAX - next]);
            next += 1;
            Ok(())
        }).unwrap();
        assert_eq!(next, 5000);
        drop(logged);
        assert_eq!(spill.bytes_in_use(), 0);
    }
}
