//! bzip2 decoded on several cores. A bzip2 stream is a header and a sequence of blocks that
//! compress independently (each carries its own CRC), so blocks can be decoded in parallel
//! once their boundaries are known, as lbzip2 does. Blocks are bit-aligned: a splitter
//! thread finds them by their 48-bit magic and a pool of workers decodes them with
//! [`bzip2_block`] (a block it declines goes to libbzip2, wrapped in a stream of its own:
//! header, the block's bits, end-of-stream marker with the block's CRC as the stream CRC);
//! the reader returns them in order.
//!
//! The magic can also occur by chance inside a block's compressed bits (2^-48 per bit). A
//! block cut at such a false boundary fails to decode; the reader then joins it with the
//! next piece and decodes the two as one, so the output is always the sequential decoder's.
//! Each stream's combined CRC is checked too: a corrupt or truncated input is an error,
//! never short output.

use std::collections::BTreeMap;
use std::io::{self, Read};
use std::thread;

use crossbeam_channel::{bounded, unbounded, Receiver, Sender};

use crate::bzip2_block::{self, Scratch};

const BLOCK_MAGIC: u64 = 0x3141_5926_5359;
const END_MAGIC: u64 = 0x1772_4538_5090;
const MAGIC_MASK: u64 = (1 << 48) - 1;
/// Raw bytes read from the input at a time.
const READ_SIZE: usize = 1 << 20;

/// A block's bits, from its magic up to the next magic, as found in the input.
struct Segment {
    /// The stream header's block-size digit (`b'1'..=b'9'`).
    level: u8,
    /// Bytes holding the bits; the first bit is bit `shift` (from the top) of `bytes[0]`.
    bytes: Vec<u8>,
    shift: u8,
    nbits: u64,
}

impl Segment {
    /// The CRC stored after the block magic.
    fn block_crc(&self) -> u32 {
        let mut r = BitCursor { bytes: &self.bytes, pos: u64::from(self.shift) + 48 };
        r.take(32) as u32
    }

    /// This segment followed by `next` (for a boundary that was not one).
    fn join(mut self, next: &Segment) -> Segment {
        let mut w = BitWriter::from_bits(&self.bytes, u64::from(self.shift), self.nbits);
        w.copy_bits(&next.bytes, u64::from(next.shift), next.nbits);
        self.nbits += next.nbits;
        self.bytes = w.finish();
        self.shift = 0;
        self
    }

    /// A complete one-block bzip2 stream of this segment.
    fn to_stream(&self) -> Vec<u8> {
        let mut w = BitWriter { out: Vec::with_capacity(self.bytes.len() + 16), acc: 0, nacc: 0 };
        for b in [b'B', b'Z', b'h', self.level] {
            w.put(8, u64::from(b));
        }
        w.copy_bits(&self.bytes, u64::from(self.shift), self.nbits);
        w.put(48, END_MAGIC);
        // A one-block stream's combined CRC is the block's CRC (rotate of 0, xor crc).
        w.put(32, u64::from(self.block_crc()));
        w.finish()
    }

    /// The block's bytes: by [`bzip2_block`], or by libbzip2 where that declines.
    fn decode(&self, scratch: &mut Scratch) -> io::Result<Vec<u8>> {
        let max_block = usize::from(self.level - b'0') * 100_000;
        let mut out = Vec::with_capacity(max_block + max_block / 8);
        let start = u64::from(self.shift);
        if bzip2_block::decode(&self.bytes, start, start + self.nbits, max_block, scratch, &mut out).is_some() {
            return Ok(out);
        }
        bzip2::read::BzDecoder::new(&self.to_stream()[..]).read_to_end(&mut out)?;
        Ok(out)
    }
}

struct BitCursor<'a> {
    bytes: &'a [u8],
    pos: u64,
}

impl BitCursor<'_> {
    fn take(&mut self, n: u32) -> u64 {
        let mut v = 0u64;
        for _ in 0..n {
            let byte = self.bytes[(self.pos / 8) as usize];
            v = (v << 1) | u64::from((byte >> (7 - (self.pos % 8))) & 1);
            self.pos += 1;
        }
        v
    }
}

/// Appends bits, most significant first (bzip2's order).
struct BitWriter {
    out: Vec<u8>,
    acc: u64,
    nacc: u32,
}

impl BitWriter {
    fn from_bits(src: &[u8], start: u64, nbits: u64) -> BitWriter {
        let mut w = BitWriter { out: Vec::with_capacity(src.len() * 2), acc: 0, nacc: 0 };
        w.copy_bits(src, start, nbits);
        w
    }

    fn put(&mut self, n: u32, v: u64) {
        debug_assert!(n <= 32);
        self.acc = (self.acc << n) | (v & ((1u64 << n) - 1));
        self.nacc += n;
        while self.nacc >= 8 {
            self.nacc -= 8;
            self.out.push((self.acc >> self.nacc) as u8);
        }
    }

    /// Copies `nbits` bits of `src` starting at bit `start`.
    fn copy_bits(&mut self, src: &[u8], start: u64, nbits: u64) {
        let mut pos = start;
        let end = start + nbits;
        // Whole source bytes at a bit offset: two shifts per output byte.
        if self.nacc == 0 && end - pos >= 16 {
            let s = (pos % 8) as u32;
            let first = (pos / 8) as usize;
            let whole = ((end - pos) / 8 - 1) as usize;
            let src = &src[first..first + whole + 1];
            if s == 0 {
                self.out.extend_from_slice(&src[..whole]);
            } else {
                self.out.extend(src.windows(2).map(|w| (w[0] << s) | (w[1] >> (8 - s))));
            }
            pos += whole as u64 * 8;
        }
        while pos < end {
            let n = (end - pos).min(8) as u32;
            let mut c = BitCursor { bytes: src, pos };
            self.put(n, c.take(n));
            pos += u64::from(n);
        }
    }

    fn finish(mut self) -> Vec<u8> {
        if self.nacc > 0 {
            let pad = 8 - self.nacc;
            self.put(pad, 0);
        }
        self.out
    }
}

/// What the splitter hands on, in input order.
enum Item {
    Block(Segment),
    /// End of a stream with its stored combined CRC.
    StreamEnd(u32),
    Error(io::Error),
}

/// Decoded items, as the workers return them.
enum Decoded {
    Block { data: io::Result<Vec<u8>>, crc: u32, segment: Option<Segment> },
    StreamEnd(u32),
    Error(io::Error),
}

/// A worker's job: decode a block (keeping its bits when that fails, so that the reader can
/// join it with the next piece); markers pass through.
fn decode_item(item: Item, scratch: &mut Scratch) -> Decoded {
    match item {
        Item::Block(seg) => {
            let crc = seg.block_crc();
            let data = seg.decode(scratch);
            let segment = if data.is_err() { Some(seg) } else { None };
            Decoded::Block { data, crc, segment }
        }
        Item::StreamEnd(crc) => Decoded::StreamEnd(crc),
        Item::Error(e) => Decoded::Error(e),
    }
}

/// Reads a bzip2 file (one or more concatenated streams) and decodes its blocks on
/// `threads` worker threads; the output equals a sequential multi-stream decoder's.
pub struct ParallelBzDecoder {
    results: Receiver<(u64, Decoded)>,
    tokens: Sender<()>,
    pending: BTreeMap<u64, Decoded>,
    next: u64,
    /// A block that failed to decode alone: joined with the next one (see module docs).
    held: Option<Segment>,
    combined_crc: u32,
    cur: Vec<u8>,
    pos: usize,
    done: bool,
    /// The splitter and the workers, joined on drop.
    threads: Vec<thread::JoinHandle<()>>,
}

impl ParallelBzDecoder {
    pub fn new(raw: impl Read + Send + 'static, threads: usize) -> ParallelBzDecoder {
        let threads = threads.max(1);
        // Blocks in flight (queued, decoding, or waiting to be read in order): bounds memory
        // to a few MiB per thread.
        let in_flight = 2 * threads + 2;
        let (token_tx, token_rx) = bounded(in_flight);
        for _ in 0..in_flight {
            token_tx.send(()).expect("fresh channel");
        }
        let (work_tx, work_rx) = bounded::<(u64, Item)>(in_flight);
        let (result_tx, result_rx) = unbounded();
        let mut handles = vec![thread::Builder::new()
            .name("bzip2-split".into())
            .spawn(move || split(raw, &work_tx, &token_rx))
            .expect("spawn bzip2 splitter")];
        for i in 0..threads {
            let (rx, tx) = (work_rx.clone(), result_tx.clone());
            let worker = thread::Builder::new()
                .name(format!("bzip2-decode-{i}"))
                .spawn(move || {
                    let mut scratch = Scratch::default();
                    for (seq, item) in rx {
                        if tx.send((seq, decode_item(item, &mut scratch))).is_err() {
                            return;
                        }
                    }
                })
                .expect("spawn bzip2 decoder");
            handles.push(worker);
        }
        ParallelBzDecoder {
            results: result_rx,
            tokens: token_tx,
            pending: BTreeMap::new(),
            next: 0,
            held: None,
            combined_crc: 0,
            cur: Vec::new(),
            pos: 0,
            done: false,
            threads: handles,
        }
    }

    /// The next item in input order.
    fn next_item(&mut self) -> Option<Decoded> {
        loop {
            if let Some(d) = self.pending.remove(&self.next) {
                self.next += 1;
                let _ = self.tokens.send(());
                return Some(d);
            }
            match self.results.recv() {
                Ok((seq, d)) => {
                    self.pending.insert(seq, d);
                }
                Err(_) => return None,
            }
        }
    }

    /// Fills `cur` with the next decoded block; false at the end.
    fn refill(&mut self) -> io::Result<bool> {
        loop {
            let Some(item) = self.next_item() else {
                return match self.held.take() {
                    Some(_) => Err(corrupt("bzip2 block does not decode")),
                    None => Ok(false),
                };
            };
            match item {
                Decoded::Error(e) => return Err(e),
                Decoded::StreamEnd(stored) => {
                    if self.held.take().is_some() {
                        return Err(corrupt("bzip2 block does not decode"));
                    }
                    if stored != self.combined_crc {
                        return Err(corrupt("bzip2 stream CRC mismatch"));
                    }
                    self.combined_crc = 0;
                }
                Decoded::Block { data, crc, segment } => {
                    let (data, crc, failed) = match self.held.take() {
                        // The piece before this one was cut at a false boundary: decode both as one.
                        Some(prev) => {
                            let seg = match segment {
                                Some(s) => prev.join(&s),
                                None => return Err(corrupt("bzip2 block does not decode")),
                            };
                            let data = seg.decode(&mut Scratch::default());
                            let crc = seg.block_crc();
                            let failed = if data.is_err() { Some(seg) } else { None };
                            (data, crc, failed)
                        }
                        None => (data, crc, segment),
                    };
                    match data {
                        Ok(d) => {
                            self.combined_crc = self.combined_crc.rotate_left(1) ^ crc;
                            if d.is_empty() {
                                continue;
                            }
                            self.cur = d;
                            self.pos = 0;
                            return Ok(true);
                        }
                        Err(_) => self.held = failed,
                    }
                }
            }
        }
    }
}

impl Drop for ParallelBzDecoder {
    /// A reader dropped before the end (an error elsewhere, a sniffed head) stops its threads
    /// and waits for them: the splitter gets no more tokens, the workers' results have no
    /// receiver, so each stops after at most the blocks already handed to it.
    fn drop(&mut self) {
        self.tokens = bounded(1).0;
        self.results = crossbeam_channel::never();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

fn corrupt(msg: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg)
}

impl Read for ParallelBzDecoder {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.pos == self.cur.len() {
            if self.done {
                return Ok(0);
            }
            match self.refill() {
                Ok(true) => {}
                Ok(false) => {
                    self.done = true;
                    return Ok(0);
                }
                Err(e) => {
                    self.done = true;
                    return Err(e);
                }
            }
        }
        let n = buf.len().min(self.cur.len() - self.pos);
        buf[..n].copy_from_slice(&self.cur[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// For each byte value, whether it can be the second byte of a magic at some bit offset:
/// only positions where that holds are checked in full.
fn candidate_table() -> [bool; 256] {
    let mut t = [false; 256];
    for magic in [BLOCK_MAGIC, END_MAGIC] {
        for shift in 0..8 {
            // The magic starting at bit `shift` of byte 0 covers bits [shift, shift+48) of the
            // 64-bit window of bytes 0..8; byte 1 is bits 8..16 of the window.
            let window = magic << (16 - shift);
            t[((window >> 48) & 0xff) as usize] = true;
        }
    }
    t
}

/// Finds blocks and stream ends in `raw` and sends them, numbered in order, to the workers.
fn split(mut raw: impl Read, work: &Sender<(u64, Item)>, tokens: &Receiver<()>) {
    let mut seq = 0u64;
    let mut send = |item: Item| -> bool {
        if tokens.recv().is_err() {
            return false;
        }
        let ok = work.send((seq, item)).is_ok();
        seq += 1;
        ok
    };
    if let Err(e) = split_into(&mut raw, &mut |item| send(item)) {
        send(Item::Error(e));
    }
}

/// The input buffer: bytes from the start of the current block on.
struct Input<'a, R> {
    raw: &'a mut R,
    buf: Vec<u8>,
    eof: bool,
}

impl<R: Read> Input<'_, R> {
    /// Reads more; false at end of input.
    fn fill(&mut self) -> io::Result<bool> {
        if self.eof {
            return Ok(false);
        }
        let len = self.buf.len();
        self.buf.resize(len + READ_SIZE, 0);
        let n = loop {
            match self.raw.read(&mut self.buf[len..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.buf.truncate(len);
                    return Err(e);
                }
            }
        };
        self.buf.truncate(len + n);
        self.eof = n == 0;
        Ok(n > 0)
    }

    fn ensure(&mut self, bytes: usize) -> io::Result<bool> {
        while self.buf.len() < bytes {
            if !self.fill()? {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

fn truncated() -> io::Error {
    io::Error::new(io::ErrorKind::UnexpectedEof, "bzip2 stream is truncated")
}

/// Returns false when the receiver went away.
fn split_into<R: Read>(raw: &mut R, emit: &mut dyn FnMut(Item) -> bool) -> io::Result<()> {
    let table = candidate_table();
    let mut input = Input { raw, buf: Vec::with_capacity(2 * READ_SIZE), eof: false };
    // Byte offset in `buf` where the current stream's header starts.
    let mut stream_start = 0usize;
    loop {
        // A stream: "BZh" and the block size digit.
        if !input.ensure(stream_start + 1)? {
            return Ok(()); // end of input after a complete stream (or an empty file)
        }
        if !input.ensure(stream_start + 4)? {
            return Err(corrupt("not a bzip2 stream (trailing data)"));
        }
        let header = &input.buf[stream_start..stream_start + 4];
        if &header[..3] != b"BZh" || !(b'1'..=b'9').contains(&header[3]) {
            return Err(corrupt("not a bzip2 stream (trailing data)"));
        }
        let level = header[3];
        // Bit position (from the start of `buf`) of the current block's magic.
        let mut block_start = (stream_start as u64 + 4) * 8;
        if !input.ensure(stream_start + 4 + 6)? {
            return Err(truncated());
        }
        let first = BitCursor { bytes: &input.buf, pos: block_start }.take(48);
        let in_block = first == BLOCK_MAGIC;
        if !in_block && first != END_MAGIC {
            return Err(corrupt("bzip2 stream has no block or end marker after its header"));
        }
        // Scan position: bytes before it were checked for magics starting there.
        let mut scan = (block_start / 8 + 1) as usize;
        let end_bit = loop {
            if !in_block {
                break block_start; // empty stream: the end marker follows the header
            }
            // Candidates at byte i need bytes i..i+8.
            let mut found = None;
            while found.is_none() {
                let limit = input.buf.len().saturating_sub(8);
                while scan < limit {
                    if table[input.buf[scan + 1] as usize] {
                        let w = u64::from_be_bytes(input.buf[scan..scan + 8].try_into().expect("8 bytes"));
                        for shift in 0..8u64 {
                            let bit = scan as u64 * 8 + shift;
                            if bit <= block_start {
                                continue;
                            }
                            let v = (w >> (16 - shift)) & MAGIC_MASK;
                            if v == BLOCK_MAGIC || v == END_MAGIC {
                                found = Some((bit, v));
                                break;
                            }
                        }
                        if found.is_some() {
                            break;
                        }
                    }
                    scan += 1;
                }
                if found.is_none() && !input.fill()? {
                    // The last 7 bytes cannot hold a whole marker: the stream has no end.
                    return Err(truncated());
                }
            }
            let (bit, magic) = found.expect("found");
            let seg = segment(&input.buf, level, block_start, bit);
            if !emit(Item::Block(seg)) {
                return Ok(());
            }
            if magic == END_MAGIC {
                break bit;
            }
            block_start = bit;
            scan = (bit / 8 + 1) as usize;
            // Forget what is before the block (keep the buffer from growing).
            let drop = (block_start / 8) as usize;
            if drop >= READ_SIZE {
                input.buf.drain(..drop);
                block_start -= drop as u64 * 8;
                scan -= drop;
            }
        };
        // End marker (48 bits) and the stream's combined CRC (32 bits), then padding.
        let crc_end = end_bit + 48 + 32;
        if !input.ensure(crc_end.div_ceil(8) as usize)? {
            return Err(truncated());
        }
        let crc = BitCursor { bytes: &input.buf, pos: end_bit + 48 }.take(32) as u32;
        if !emit(Item::StreamEnd(crc)) {
            return Ok(());
        }
        stream_start = crc_end.div_ceil(8) as usize;
        input.buf.drain(..stream_start);
        stream_start = 0;
    }
}

/// Bit positions in `buf` of every block magic (`true`) and end-of-stream magic (`false`),
/// for readers that start in the middle of a file (plan's sampling). Some may be false:
/// [`decode_block`] tells.
pub fn find_magics(buf: &[u8]) -> Vec<(u64, bool)> {
    let table = candidate_table();
    let mut found = Vec::new();
    for at in 0..buf.len().saturating_sub(7) {
        if !table[buf[at + 1] as usize] {
            continue;
        }
        let w = u64::from_be_bytes(buf[at..at + 8].try_into().expect("8 bytes"));
        for shift in 0..8u64 {
            let v = (w >> (16 - shift)) & MAGIC_MASK;
            if v == BLOCK_MAGIC || v == END_MAGIC {
                found.push((at as u64 * 8 + shift, v == BLOCK_MAGIC));
            }
        }
    }
    found
}

/// Decodes the block whose bits are `[from, to)` of `buf` (from its magic up to the next
/// magic). Under the largest block size, which every block fits.
pub fn decode_block(buf: &[u8], from: u64, to: u64) -> io::Result<Vec<u8>> {
    // Sampling decodes many blocks on a few threads: each keeps its buffers.
    thread_local! {
        static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::default();
    }
    SCRATCH.with_borrow_mut(|scratch| segment(buf, b'9', from, to).decode(scratch))
}

/// The bits `[from, to)` of `buf` as a segment.
fn segment(buf: &[u8], level: u8, from: u64, to: u64) -> Segment {
    let first = (from / 8) as usize;
    let last = to.div_ceil(8) as usize;
    Segment { level, bytes: buf[first..last].to_vec(), shift: (from % 8) as u8, nbits: to - from }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use bzip2::write::BzEncoder;
    use std::io::Write;

    pub(crate) fn compress(data: &[u8], level: u32) -> Vec<u8> {
        let mut e = BzEncoder::new(Vec::new(), bzip2::Compression::new(level));
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    /// Text-like data with some randomness, so that blocks differ.
    pub(crate) fn sample(len: usize, seed: u64) -> Vec<u8> {
        let mut x = seed;
        let mut out = Vec::with_capacity(len);
        while out.len() < len {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            writeln!(out, "<http://example.org/s{}> <http://example.org/p{}> \"{}\" .", x % 100_000, x % 37, x)
                .unwrap();
        }
        out.truncate(len);
        out
    }

    fn sequential(bz: &[u8]) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        bzip2::read::MultiBzDecoder::new(bz).read_to_end(&mut out)?;
        Ok(out)
    }

    fn parallel(bz: &[u8], threads: usize) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        ParallelBzDecoder::new(io::Cursor::new(bz.to_vec()), threads).read_to_end(&mut out)?;
        Ok(out)
    }

    #[test]
    fn many_blocks_and_streams_decode_as_sequentially() {
        let a = sample(1_000_000, 1);
        let b = sample(300_000, 2);
        // Level 1: 100k blocks, so ten or more blocks per stream.
        let mut bz = compress(&a, 1);
        bz.extend(compress(&b, 1));
        bz.extend(compress(b"", 9)); // an empty stream between two
        bz.extend(compress(&a[..5000], 9));
        let want = sequential(&bz).unwrap();
        assert_eq!(want.len(), a.len() + b.len() + 5000);
        for threads in [1, 2, 4] {
            assert!(parallel(&bz, threads).unwrap() == want, "threads {threads}");
        }
        assert_eq!(parallel(&compress(b"", 9), 2).unwrap(), b"");
        assert_eq!(parallel(b"", 2).unwrap(), b"");
    }

    #[test]
    fn a_false_boundary_is_joined_back() {
        let data = sample(400_000, 3);
        let bz = compress(&data, 1);
        let mut items = Vec::new();
        split_into(&mut &bz[..], &mut |i| {
            items.push(i);
            true
        })
        .unwrap();
        // Cut the second block in two, as a magic inside its bits would.
        let Item::Block(seg) = items.remove(1) else { panic!("block expected") };
        let cut = seg.nbits / 2;
        let from = u64::from(seg.shift);
        let a = segment(&seg.bytes, seg.level, from, from + cut);
        let b = segment(&seg.bytes, seg.level, from + cut, from + seg.nbits);
        let mut scratch = Scratch::default();
        assert!(a.decode(&mut scratch).is_err() && b.decode(&mut scratch).is_err());
        items.insert(1, Item::Block(b));
        items.insert(1, Item::Block(a));
        // Feed the items through the reader's ordering and joining.
        let (tx, rx) = unbounded();
        for (seq, item) in items.into_iter().enumerate() {
            tx.send((seq as u64, decode_item(item, &mut scratch))).unwrap();
        }
        drop(tx);
        let (tokens, _keep) = bounded(1000);
        let mut r = ParallelBzDecoder {
            results: rx,
            tokens,
            pending: BTreeMap::new(),
            next: 0,
            held: None,
            combined_crc: 0,
            cur: Vec::new(),
            pos: 0,
            done: false,
            threads: Vec::new(),
        };
        let mut out = Vec::new();
        r.read_to_end(&mut out).unwrap();
        assert!(out == data);
    }

    #[test]
    fn damage_is_an_error_never_short_output() {
        let data = sample(500_000, 4);
        let bz = compress(&data, 1);
        // Truncated anywhere: an error.
        for cut in [5, 100, bz.len() / 2, bz.len() - 5, bz.len() - 1] {
            assert!(parallel(&bz[..cut], 2).is_err(), "cut at {cut}");
        }
        // A flipped bit in a block or in the stored CRC: an error.
        for at in [bz.len() / 3, bz.len() - 2] {
            let mut bad = bz.clone();
            bad[at] ^= 0x10;
            assert!(parallel(&bad, 2).is_err(), "flip at {at}");
        }
        // Trailing garbage after a complete stream.
        let mut trailing = bz.clone();
        trailing.extend_from_slice(b"garbage");
        assert!(parallel(&trailing, 2).is_err());
        assert!(sequential(&trailing).is_err());
    }
}

/// The whole reader on a file, libbzip2 sequentially against 1-3 decoding threads (`BZ2_BENCH=FILE cargo test --release -p rdf-input bench_file -- --ignored --nocapture`).
#[cfg(test)]
#[test]
#[ignore]
fn bench_file() {
    let path = std::env::var("BZ2_BENCH").expect("BZ2_BENCH=FILE");
    let bz = std::fs::read(path).unwrap();
    let t = std::time::Instant::now();
    let mut n = 0;
    let mut r = bzip2::read::MultiBzDecoder::new(&bz[..]);
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let k = r.read(&mut buf).unwrap();
        if k == 0 {
            break;
        }
        n += k;
    }
    println!("sequential: {n} bytes in {:?}", t.elapsed());
    for threads in [1, 2, 3] {
        let t = std::time::Instant::now();
        let mut r = ParallelBzDecoder::new(io::Cursor::new(bz.clone()), threads);
        let mut m = 0;
        loop {
            let k = r.read(&mut buf).unwrap();
            if k == 0 {
                break;
            }
            m += k;
        }
        assert_eq!(m, n);
        println!("parallel {threads}: {m} bytes in {:?}", t.elapsed());
    }
}

/// The block decoder alone, on one thread, against libbzip2 (`BZ2_BENCH=FILE cargo test --release -p rdf-input bench_blocks -- --ignored --nocapture`).
#[cfg(test)]
#[test]
#[ignore]
fn bench_blocks() {
    let path = std::env::var("BZ2_BENCH").expect("BZ2_BENCH=FILE");
    let bz = std::fs::read(path).unwrap();
    let mut segs = Vec::new();
    split_into(&mut &bz[..], &mut |i| {
        if let Item::Block(s) = i {
            segs.push(s);
        }
        true
    })
    .unwrap();
    let mut scratch = Scratch::default();
    let t = std::time::Instant::now();
    let (mut fast, mut n) = (0, 0);
    for s in &segs {
        let mut out = Vec::new();
        let start = u64::from(s.shift);
        if bzip2_block::decode(&s.bytes, start, start + s.nbits, 900_000, &mut scratch, &mut out).is_some() {
            fast += 1;
        }
        n += out.len();
    }
    println!("bzip2_block: {fast}/{} blocks decoded, {n} bytes in {:?}", segs.len(), t.elapsed());
    let t = std::time::Instant::now();
    let mut m = 0;
    for s in &segs {
        let mut out = Vec::new();
        bzip2::read::BzDecoder::new(&s.to_stream()[..]).read_to_end(&mut out).unwrap();
        m += out.len();
    }
    assert_eq!(m, n);
    println!("libbzip2: {m} bytes in {:?}", t.elapsed());
}
