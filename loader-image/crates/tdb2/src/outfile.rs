//! The database's files are written once, front to back, and never read back by the loader:
//! [`OutputFile`] writes them with `O_DIRECT` from an aligned buffer, past the page cache.
//!
//! Through the page cache the kernel copies every byte into a page it first allocates (and
//! charges to the pod's memory cgroup), and writes it back later: for bytes the loader never
//! reads again that copy is pure cost, larger than the rest of the node-table phase's work,
//! and it keeps a pod's memory at its limit. A filesystem that
//! refuses `O_DIRECT`, or a write that is not block-aligned (the tail, small test trees), goes
//! through the page cache as before; the bytes on disk are the same either way.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread::JoinHandle;

/// Alignment `O_DIRECT` asks of offsets, lengths and buffers (the page size; a multiple of
/// every logical block size in use).
const ALIGN: usize = 4096;

/// A file written sequentially (with holes) through an aligned buffer of its own.
///
/// A full buffer's direct write is made by a thread of the file's own while the caller fills
/// a second buffer: the caller waits only when that write is still going when the next
/// buffer is full. An `O_DIRECT` write returns when the device has the data (about 0.8 ms
/// per MiB on the build VM), and the node table's writer, which also feeds the merge, had
/// spent half of that phase waiting for 540 of them. A write's error surfaces at the next
/// flush or at [`finish`](Self::finish), with its errno.
pub struct OutputFile {
    file: File,
    path: PathBuf,
    direct: bool,
    buf: AlignedBuf,
    /// The second buffer, back from the writer thread (none until the first direct write).
    spare: Option<AlignedBuf>,
    /// Bytes pending in the buffer, and the file offset they go to.
    len: usize,
    pos: u64,
    writer: Option<DirectWriter>,
}

/// `cap` bytes aligned to [`ALIGN`] in a vector of their own.
struct AlignedBuf {
    mem: Vec<u8>,
    start: usize,
    cap: usize,
}

impl AlignedBuf {
    fn new(cap: usize) -> AlignedBuf {
        let mem = vec![0u8; cap + ALIGN];
        let start = mem.as_ptr().align_offset(ALIGN);
        AlignedBuf { mem, start, cap }
    }
    fn bytes(&self, len: usize) -> &[u8] {
        &self.mem[self.start..self.start + len]
    }
    fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.mem[self.start..self.start + self.cap]
    }
}

/// A buffer's write: its first `len` bytes at `pos`; it comes back with the result.
struct Write {
    buf: AlignedBuf,
    len: usize,
    pos: u64,
    result: io::Result<()>,
}

/// The thread making one file's direct writes, one at a time, in the order given.
struct DirectWriter {
    jobs: Option<mpsc::SyncSender<Write>>,
    done: mpsc::Receiver<Write>,
    in_flight: bool,
    thread: Option<JoinHandle<()>>,
}

impl DirectWriter {
    fn spawn(file: File) -> io::Result<DirectWriter> {
        let (jobs, rx) = mpsc::sync_channel::<Write>(1);
        let (tx, done) = mpsc::sync_channel(1);
        let thread = std::thread::Builder::new().name("direct-write".into()).spawn(move || {
            for mut w in rx {
                w.result = file.write_all_at(w.buf.bytes(w.len), w.pos);
                if tx.send(w).is_err() {
                    break;
                }
            }
        })?;
        Ok(DirectWriter { jobs: Some(jobs), done, in_flight: false, thread: Some(thread) })
    }
}

impl Drop for DirectWriter {
    /// Ends the thread after the write it is making (an `OutputFile` dropped on an error
    /// path leaves no write behind it).
    fn drop(&mut self) {
        self.jobs.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl OutputFile {
    /// Creates (truncates) `path`, with a buffer of about `capacity` bytes.
    pub fn create(path: &Path, capacity: usize) -> io::Result<OutputFile> {
        let cap = capacity.max(ALIGN).div_ceil(ALIGN) * ALIGN;
        let direct = OpenOptions::new().write(true).create(true).truncate(true).custom_flags(libc::O_DIRECT).open(path);
        let (file, direct) = match direct {
            Ok(f) => (f, true),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => (File::create(path)?, false),
            Err(e) => return Err(e),
        };
        Ok(OutputFile {
            file,
            path: path.to_path_buf(),
            direct,
            buf: AlignedBuf::new(cap),
            spare: None,
            len: 0,
            pos: 0,
            writer: None,
        })
    }

    /// Whether the file bypasses the page cache (so far).
    pub fn is_direct(&self) -> bool {
        self.direct
    }

    /// The offset the next appended byte goes to.
    pub fn position(&self) -> u64 {
        self.pos + self.len as u64
    }

    /// Appends `bytes`.
    pub fn write_all(&mut self, mut bytes: &[u8]) -> io::Result<()> {
        while !bytes.is_empty() {
            let n = (self.buf.cap - self.len).min(bytes.len());
            self.buf.bytes_mut()[self.len..self.len + n].copy_from_slice(&bytes[..n]);
            self.len += n;
            bytes = &bytes[n..];
            if self.len == self.buf.cap {
                self.flush()?;
            }
        }
        Ok(())
    }

    /// Leaves `n` bytes unwritten after what was appended: a hole, unless written later.
    pub fn skip(&mut self, n: u64) -> io::Result<()> {
        self.flush()?;
        self.pos += n;
        Ok(())
    }

    /// Writes `bytes` at `offset`, within what was appended or skipped already.
    pub fn write_at(&mut self, bytes: &[u8], offset: u64) -> io::Result<()> {
        self.flush()?;
        let (pos, len) = (self.pos, self.len);
        self.pos = offset;
        self.write_all(bytes)?;
        self.flush()?;
        (self.pos, self.len) = (pos, len);
        Ok(())
    }

    /// Writes what is pending, once the direct write in flight is done (which may have
    /// found `O_DIRECT` refused): directly (on the writer thread) when it is aligned, else
    /// through the page cache.
    fn flush(&mut self) -> io::Result<()> {
        if self.len == 0 {
            return Ok(());
        }
        let spare = self.wait()?;
        if self.direct && self.pos.is_multiple_of(ALIGN as u64) && self.len.is_multiple_of(ALIGN) {
            let next = spare.unwrap_or_else(|| AlignedBuf::new(self.buf.cap));
            let full = std::mem::replace(&mut self.buf, next);
            let writer = match &mut self.writer {
                Some(w) => w,
                None => self.writer.insert(DirectWriter::spawn(self.file.try_clone()?)?),
            };
            let job = Write { buf: full, len: self.len, pos: self.pos, result: Ok(()) };
            writer.jobs.as_ref().expect("open until dropped").send(job).map_err(|_| writer_gone())?;
            writer.in_flight = true;
        } else {
            self.spare = spare;
            self.through_page_cache()?;
            self.file.write_all_at(self.buf.bytes(self.len), self.pos)?;
        }
        self.pos += self.len as u64;
        self.len = 0;
        Ok(())
    }

    /// Waits for the direct write in flight, if any; gives back a free second buffer (that
    /// write's, or the one kept from before).
    fn wait(&mut self) -> io::Result<Option<AlignedBuf>> {
        let Some(writer) = self.writer.as_mut().filter(|w| w.in_flight) else { return Ok(self.spare.take()) };
        let w = writer.done.recv().map_err(|_| writer_gone())?;
        writer.in_flight = false;
        match w.result {
            // A filesystem that took the flag but not the write.
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                self.through_page_cache()?;
                self.file.write_all_at(w.buf.bytes(w.len), w.pos)?;
            }
            r => r?,
        }
        Ok(Some(w.buf))
    }

    /// Goes on without `O_DIRECT` (the same file, opened again).
    fn through_page_cache(&mut self) -> io::Result<()> {
        if self.direct {
            self.file = OpenOptions::new().write(true).open(&self.path)?;
            self.direct = false;
        }
        Ok(())
    }

    /// Writes what is pending and sets the file's length to `len`, or to the end of what
    /// was appended and skipped. A pending tail that starts aligned is written directly,
    /// zero-padded to a whole block, and cut back to its length.
    pub fn finish(mut self, len: Option<u64>) -> io::Result<File> {
        let end = len.unwrap_or(self.position());
        if self.direct && !self.len.is_multiple_of(ALIGN) && self.pos.is_multiple_of(ALIGN as u64) {
            let padded = self.len.div_ceil(ALIGN) * ALIGN;
            let at = self.len;
            self.buf.bytes_mut()[at..padded].fill(0);
            self.len = padded;
        }
        self.flush()?;
        self.wait()?;
        self.writer = None;
        self.file.set_len(end)?;
        Ok(self.file)
    }
}

fn writer_gone() -> io::Error {
    io::Error::other("the direct-write thread ended")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whatever the mix of appends, holes and rewrites, the file holds what a plain file
    /// written the same way would, direct or not.
    #[test]
    fn writes_the_same_bytes_as_plain_writes() {
        let tmp = tempfile::tempdir().unwrap();
        for (case, capacity) in [8192usize, 3 * ALIGN, 1 << 20].into_iter().enumerate() {
            let path = tmp.path().join(format!("f{case}"));
            let mut f = OutputFile::create(&path, capacity).unwrap();
            let mut model: Vec<u8> = Vec::new();
            let mut seed = 7u64 + case as u64;
            let mut next = || {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                seed >> 33
            };
            for _ in 0..400 {
                match next() % 8 {
                    0 => {
                        let n = (next() % 3) as usize * ALIGN;
                        f.skip(n as u64).unwrap();
                        model.resize(model.len() + n, 0);
                    }
                    1 if model.len() > 100 => {
                        let at = (next() as usize) % (model.len() - 100);
                        let bytes: Vec<u8> = (0..100).map(|i| (i as u8) ^ 0x5a).collect();
                        f.write_at(&bytes, at as u64).unwrap();
                        model[at..at + 100].copy_from_slice(&bytes);
                    }
                    2 => {
                        // Whole pages: a B+Tree block's used part.
                        let bytes = vec![(next() % 255) as u8 + 1; ALIGN * (1 + next() as usize % 3)];
                        f.write_all(&bytes).unwrap();
                        model.extend_from_slice(&bytes);
                    }
                    _ => {
                        let bytes: Vec<u8> = (0..next() % 5000).map(|_| next() as u8).collect();
                        f.write_all(&bytes).unwrap();
                        model.extend_from_slice(&bytes);
                    }
                }
                assert_eq!(f.position(), model.len() as u64);
            }
            f.finish(None).unwrap();
            assert_eq!(std::fs::read(&path).unwrap(), model, "case {case}");
        }
    }

    /// A direct write that fails on the writer thread is not lost: its error (errno kept)
    /// comes back from the next write that needs a buffer, or from `finish`.
    #[test]
    fn a_failed_direct_write_surfaces_with_its_errno() {
        let tmp = tempfile::tempdir().unwrap();
        for blocks in [1usize, 3] {
            let path = tmp.path().join(format!("f{blocks}"));
            let mut f = OutputFile::create(&path, ALIGN).unwrap();
            assert!(f.is_direct(), "O_DIRECT refused by the test's filesystem");
            // A descriptor the kernel refuses writes on, as a failing device would.
            f.file = File::open(&path).unwrap();
            let mut res = Ok(());
            for _ in 0..blocks {
                res = res.and_then(|()| f.write_all(&[7u8; ALIGN]));
            }
            let res = res.and_then(|()| f.finish(None).map(drop));
            let err = res.expect_err("a failed write reported");
            assert_eq!(err.raw_os_error(), Some(libc::EBADF), "{blocks} blocks: {err}");
        }
    }

    #[test]
    fn finish_sets_a_longer_length_as_a_trailing_hole() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("t");
        let mut f = OutputFile::create(&path, 1 << 16).unwrap();
        let direct = f.is_direct();
        f.write_all(&[1u8; ALIGN]).unwrap();
        f.write_all(b"tail").unwrap();
        f.finish(Some(3 * ALIGN as u64)).unwrap();
        let back = std::fs::read(&path).unwrap();
        assert_eq!(back.len(), 3 * ALIGN);
        assert!(back[..ALIGN].iter().all(|&b| b == 1));
        assert_eq!(&back[ALIGN..ALIGN + 4], b"tail");
        assert!(back[ALIGN + 4..].iter().all(|&b| b == 0));
        // The temp directory is on a filesystem with O_DIRECT here (ext4, tmpfs since 6.6).
        assert!(direct, "O_DIRECT refused by the test's filesystem");
    }
}
