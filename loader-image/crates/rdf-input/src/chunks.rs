use std::io::{self, Read};
use std::sync::{Arc, Mutex};

/// A newline-aligned piece of a line-based file.
#[derive(Debug)]
pub struct Chunk {
    /// Sequence number within the file, from 0.
    pub seq: u64,
    /// 1-based line number of the chunk's first line.
    pub first_line: u64,
    /// Byte offset of the chunk in the decompressed stream.
    pub offset: u64,
    pub data: Vec<u8>,
}

/// Chunk buffers the workers hand back once parsed, for the chunkers to fill again: the
/// input passes through the same few buffers, not through fresh memory for every chunk
/// (which the kernel must fault in and zero, and a VM's host back first).
#[derive(Clone, Default)]
pub struct BufferPool(Arc<Mutex<Vec<Vec<u8>>>>);

/// More buffers than are ever in flight (the job queue, one per worker, the producers').
const POOLED_BUFFERS: usize = 64;

impl BufferPool {
    /// A buffer from the pool (its contents are stale), or a new empty one.
    pub fn take(&self) -> Vec<u8> {
        self.0.lock().expect("buffer pool").pop().unwrap_or_default()
    }

    /// Hands a buffer back.
    pub fn give(&self, buf: Vec<u8>) {
        let mut free = self.0.lock().expect("buffer pool");
        if free.len() < POOLED_BUFFERS {
            free.push(buf);
        }
    }
}

/// Cuts a decompressed stream into chunks of about `target` bytes that end at a newline,
/// so that each can be parsed on its own (N-Triples/N-Quads statements never span lines).
pub struct LineChunker<R> {
    inner: R,
    target: usize,
    pool: BufferPool,
    /// The bytes after the last chunk's final newline.
    carry: Vec<u8>,
    next_line: u64,
    offset: u64,
    seq: u64,
    done: bool,
}

impl<R: Read> LineChunker<R> {
    pub fn new(inner: R, target: usize) -> Self {
        Self::recycling(inner, target, BufferPool::default())
    }

    /// A chunker that fills the buffers of `pool` (where its chunks' buffers go back).
    pub fn recycling(inner: R, target: usize, pool: BufferPool) -> Self {
        LineChunker { inner, target, pool, carry: Vec::new(), next_line: 1, offset: 0, seq: 0, done: false }
    }

    /// Reads into `buf[filled..]` (all of `buf` is initialised); false (and `done`) at the
    /// end of the stream.
    fn read_more(&mut self, buf: &mut [u8], filled: &mut usize) -> io::Result<bool> {
        loop {
            match self.inner.read(&mut buf[*filled..]) {
                Ok(0) => {
                    self.done = true;
                    return Ok(false);
                }
                Ok(n) => {
                    *filled += n;
                    return Ok(true);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// The next chunk, or `None` at the end. A read error ends the stream with that error.
    pub fn next_chunk(&mut self) -> io::Result<Option<Chunk>> {
        if self.done {
            return Ok(None);
        }
        // All of the buffer is read into: a recycled one's stale bytes count as initialised,
        // only what lies past them is zeroed (once).
        // A buffer that grew for a long line is let go, so that the pool holds chunk-sized ones.
        let room = (self.target + (1 << 16)).max(self.carry.len() + (1 << 16));
        let mut buf = Some(self.pool.take()).filter(|b| b.capacity() <= 2 * room).unwrap_or_default();
        buf.resize(room.max(buf.capacity()), 0);
        buf[..self.carry.len()].copy_from_slice(&self.carry);
        let mut filled = self.carry.len();
        while filled < self.target && self.read_more(&mut buf, &mut filled)? {}
        // Cut after the last newline; keep the rest for the next chunk. A single line longer
        // than the target keeps reading until its newline.
        let mut searched = 0;
        let end = loop {
            if self.done {
                break filled;
            }
            if let Some(pos) = memchr::memrchr(b'\n', &buf[searched..filled]) {
                break searched + pos + 1;
            }
            searched = filled;
            if filled == buf.len() {
                buf.resize(buf.len() * 2, 0);
            }
            self.read_more(&mut buf, &mut filled)?;
        };
        self.carry.clear();
        self.carry.extend_from_slice(&buf[end..filled]);
        buf.truncate(end);
        if buf.is_empty() {
            self.pool.give(buf);
            return Ok(None);
        }
        let chunk = Chunk { seq: self.seq, first_line: self.next_line, offset: self.offset, data: buf };
        self.seq += 1;
        self.next_line += memchr::memchr_iter(b'\n', &chunk.data).count() as u64;
        self.offset += chunk.data.len() as u64;
        Ok(Some(chunk))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_end_at_newlines_and_count_lines() {
        let text: String = (0..1000).map(|i| format!("<s{i}> <p> \"{}\" .\n", "x".repeat(i % 50))).collect();
        let mut c = LineChunker::new(text.as_bytes(), 997);
        let mut joined = Vec::new();
        let mut line = 1;
        let mut seq = 0;
        while let Some(ch) = c.next_chunk().unwrap() {
            assert_eq!(ch.first_line, line);
            assert_eq!(ch.seq, seq);
            assert_eq!(ch.offset as usize, joined.len());
            assert!(ch.data.ends_with(b"\n"));
            line += ch.data.iter().filter(|&&b| b == b'\n').count() as u64;
            seq += 1;
            joined.extend_from_slice(&ch.data);
        }
        assert_eq!(joined, text.as_bytes());
        assert_eq!(line, 1001);
    }

    #[test]
    fn recycled_buffers_never_leak_stale_bytes() {
        let text: String = (0..5000).map(|i| format!("<s{i}> <p> \"{}\" .\n", "y".repeat(i % 97))).collect();
        let pool = BufferPool::default();
        // A stale buffer larger than any chunk, full of bytes the input does not have.
        pool.give(vec![b'#'; 20_000]);
        for target in [300, 4096, 1 << 20] {
            let mut c = LineChunker::recycling(text.as_bytes(), target, pool.clone());
            let mut joined = Vec::new();
            while let Some(ch) = c.next_chunk().unwrap() {
                assert!(ch.data.ends_with(b"\n"));
                joined.extend_from_slice(&ch.data);
                pool.give(ch.data);
            }
            assert_eq!(joined, text.as_bytes(), "target {target}");
        }
        assert!(pool.0.lock().unwrap().len() <= 2, "the chunks went through the pooled buffers");
    }

    #[test]
    fn last_line_without_newline_is_kept() {
        let mut c = LineChunker::new(&b"<a> <b> <c> .\n<d> <e> <f> ."[..], 4);
        let a = c.next_chunk().unwrap().unwrap();
        let b = c.next_chunk().unwrap().unwrap();
        assert_eq!(a.data, b"<a> <b> <c> .\n");
        assert_eq!(b.data, b"<d> <e> <f> .");
        assert!(c.next_chunk().unwrap().is_none());
    }
}
