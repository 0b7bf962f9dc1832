//! Append-only logs of encoded tuples (provisional ids), kept in memory up to a bound and
//! spilled to a file beyond it, read back once the final NodeIds are known.

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
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
        crate::failpoint::crash_point("parse.tuples_spill");
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

    /// Makes everything logged so far durable (the log goes on afterwards), for a checkpoint
    /// in the middle of the parse phase: the log up to here.
    pub fn sync(&mut self) -> io::Result<Logged<N>> {
        if !self.buf.is_empty() {
            self.flush_buf()?;
        }
        match self.file.as_mut() {
            Some((p, w)) => {
                let inner = w.get_mut();
                inner.flush()?;
                inner.get_ref().sync_data()?;
                Ok(Logged { file: Some(p.clone()), file_bytes: w.bytes(), tuples: self.spilled })
            }
            None => Ok(Logged { file: None, file_bytes: 0, tuples: 0 }),
        }
    }

    /// Writes what is still in memory to the log's file and makes the file durable: the
    /// parse checkpoint names it, and the index phase (of this run or of one that resumes
    /// it) reads it back.
    pub fn finish(mut self) -> io::Result<Logged<N>> {
        self.sync()
    }
}

/// A finished log: a file of tuples in the work directory (none when nothing was logged).
/// Its file stays until [`remove`](Logged::remove): a checkpoint may name it.
pub struct Logged<const N: usize> {
    file: Option<PathBuf>,
    file_bytes: u64,
    tuples: u64,
}

impl<const N: usize> Logged<N> {
    /// A log left by an earlier run (named in its checkpoint).
    pub fn from_state(file: Option<PathBuf>, file_bytes: u64, tuples: u64) -> Self {
        Logged { file, file_bytes, tuples }
    }

    pub fn file(&self) -> Option<&Path> {
        self.file.as_deref()
    }

    pub(crate) fn file_bytes(&self) -> u64 {
        self.file_bytes
    }

    pub fn len(&self) -> u64 {
        self.tuples
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Calls `f` on every tuple, in the order they were logged.
    pub fn for_each(&self, mut f: impl FnMut(&[u64; N]) -> io::Result<()>) -> io::Result<()> {
        if let Some(p) = &self.file {
            let mut r = TupleReader::<_, N>::new(BufReader::with_capacity(1 << 20, File::open(p)?));
            for _ in 0..self.tuples {
                let t =
                    r.read()?.ok_or_else(|| io::Error::new(io::ErrorKind::UnexpectedEof, "tuple log ends early"))?;
                f(&t)?;
            }
        }
        Ok(())
    }

    /// Deletes the log's file once no phase needs it.
    pub fn remove(self, spill: &SpillDir) -> io::Result<()> {
        if let Some(p) = &self.file {
            std::fs::remove_file(p)?;
            spill.release_bytes(self.file_bytes);
        }
        Ok(())
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
        logged
            .for_each(|t| {
                assert_eq!(*t, [next, next * 2, u64::MAX - next]);
                next += 1;
                Ok(())
            })
            .unwrap();
        assert_eq!(next, 5000);
        logged.remove(&spill).unwrap();
        assert_eq!(spill.bytes_in_use(), 0);
    }
}
