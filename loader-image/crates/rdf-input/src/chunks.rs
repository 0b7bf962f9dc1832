use std::io::{self, Read};

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

/// Cuts a decompressed stream into chunks of about `target` bytes that end at a newline,
/// so that each can be parsed on its own (N-Triples/N-Quads statements never span lines).
pub struct LineChunker<R> {
    inner: R,
    target: usize,
    carry: Vec<u8>,
    next_line: u64,
    offset: u64,
    seq: u64,
    done: bool,
}

impl<R: Read> LineChunker<R> {
    pub fn new(inner: R, target: usize) -> Self {
        LineChunker { inner, target, carry: Vec::new(), next_line: 1, offset: 0, seq: 0, done: false }
    }

    /// Appends what one read gives; false (and `done`) at the end of the stream.
    fn read_more(&mut self, data: &mut Vec<u8>) -> io::Result<bool> {
        let len = data.len();
        data.resize(self.target.max(len + (1 << 16)), 0);
        loop {
            match self.inner.read(&mut data[len..]) {
                Ok(0) => {
                    data.truncate(len);
                    self.done = true;
                    return Ok(false);
                }
                Ok(n) => {
                    data.truncate(len + n);
                    return Ok(true);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    data.truncate(len);
                    return Err(e);
                }
            }
        }
    }

    /// The next chunk, or `None` at the end. A read error ends the stream with that error.
    pub fn next_chunk(&mut self) -> io::Result<Option<Chunk>> {
        if self.done {
            return Ok(None);
        }
        let mut data = std::mem::take(&mut self.carry);
        data.reserve(self.target + (1 << 16));
        while data.len() < self.target && self.read_more(&mut data)? {}
        // Cut after the last newline; keep the rest for the next chunk. A single line longer
        // than the target keeps reading until its newline.
        while !self.done {
            if let Some(pos) = memchr::memrchr(b'\n', &data) {
                self.carry = data.split_off(pos + 1);
                break;
            }
            self.read_more(&mut data)?;
        }
        if data.is_empty() {
            return Ok(None);
        }
        let chunk = Chunk { seq: self.seq, first_line: self.next_line, offset: self.offset, data };
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
    fn last_line_without_newline_is_kept() {
        let mut c = LineChunker::new(&b"<a> <b> <c> .\n<d> <e> <f> ."[..], 4);
        let a = c.next_chunk().unwrap().unwrap();
        let b = c.next_chunk().unwrap().unwrap();
        assert_eq!(a.data, b"<a> <b> <c> .\n");
        assert_eq!(b.data, b"<d> <e> <f> .");
        assert!(c.next_chunk().unwrap().is_none());
    }
}
