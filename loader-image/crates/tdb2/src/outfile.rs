//! The database's files are written once, front to back, and never read back by the loader:
//! [`OutputFile`] writes them with `O_DIRECT` from an aligned buffer, past the page cache.
//!
//! Through the page cache the kernel copies every byte into a page it first allocates (and
//! charges to the pod's memory cgroup), and writes it back later: on the 2-core build VM,
//! `dd` of 564 MB (bsbm-x10's node data) took 1.31 s of system time buffered and 0.06 s with
//! `O_DIRECT`, and that copy was the larger part of the node-table phase. A filesystem that
//! refuses `O_DIRECT`, or a write that is not block-aligned (the tail, small test trees), goes
//! through the page cache as before; the bytes on disk are the same either way.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Alignment `O_DIRECT` asks of offsets, lengths and buffers (the page size; a multiple of
/// every logical block size in use).
const ALIGN: usize = 4096;

/// A file written sequentially (with holes) through an aligned buffer of its own.
pub struct OutputFile {
    file: File,
    path: PathBuf,
    direct: bool,
    /// Backing storage; the buffer is `buf[start..start + cap]`, `ALIGN`-aligned.
    buf: Vec<u8>,
    start: usize,
    cap: usize,
    /// Bytes pending in the buffer, and the file offset they go to.
    len: usize,
    pos: u64,
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
        let buf = vec![0u8; cap + ALIGN];
        let start = buf.as_ptr().align_offset(ALIGN);
        Ok(OutputFile { file, path: path.to_path_buf(), direct, buf, start, cap, len: 0, pos: 0 })
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
            let n = (self.cap - self.len).min(bytes.len());
            let at = self.start + self.len;
            self.buf[at..at + n].copy_from_slice(&bytes[..n]);
            self.len += n;
            bytes = &bytes[n..];
            if self.len == self.cap {
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

    /// Writes what is pending: directly when it is aligned, else through the page cache.
    fn flush(&mut self) -> io::Result<()> {
        if self.len == 0 {
            return Ok(());
        }
        if self.direct && !(self.pos.is_multiple_of(ALIGN as u64) && self.len.is_multiple_of(ALIGN)) {
            self.through_page_cache()?;
        }
        let pending = &self.buf[self.start..self.start + self.len];
        match self.file.write_all_at(pending, self.pos) {
            // A filesystem that took the flag but not the write.
            Err(e) if self.direct && e.raw_os_error() == Some(libc::EINVAL) => {
                self.through_page_cache()?;
                self.file.write_all_at(&self.buf[self.start..self.start + self.len], self.pos)?;
            }
            r => r?,
        }
        self.pos += self.len as u64;
        self.len = 0;
        Ok(())
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
            self.buf[self.start + self.len..self.start + padded].fill(0);
            self.len = padded;
        }
        self.flush()?;
        self.file.set_len(end)?;
        Ok(self.file)
    }
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
