//! Decompressed windows taken across a file, for estimates that must not trust its start
//! (`rdf-bulkload plan`). A dump's start is often unlike the rest (BSBM: products first,
//! reviews later; its start compresses 8:1, its middle 33:1, its end 4.6:1), so a window
//! is taken at each of `count` evenly spread compressed offsets wherever the format lets a
//! reader start there:
//!
//! - uncompressed: seek, resynchronise after the next newline;
//! - bzip2: the next block (48-bit magic at any bit offset), decoded on its own; a magic
//!   that is not one fails to decode and the next is tried;
//! - multi-member gzip, multi-frame zstd: the next member/frame header, accepted only when
//!   decoding from it gives a whole window without error;
//! - otherwise (one gzip member, one zstd frame, xz, lzma) only the head can be read: a
//!   longer head window, plus the uncompressed size where the format records it (gzip's
//!   ISIZE trailer when unambiguous, zstd's Frame_Content_Size).
//!
//! Windows are cut to whole lines; each carries the compressed bytes its text stands for.
//! Line-based syntaxes and Turtle are windowed. A Turtle window is parsed from its first
//! statement boundary ([`turtle_statements`]) with the prefixes its head declares: dumps
//! declare them at the top. TriG (a window may start inside a graph block) and RDF/XML are
//! read from the head only.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::detect::{decompress, read_up_to, Compression, InputFile, Split, Syntax};
use crate::parallel_bzip2::{decode_block, find_magics};

/// A bzip2 window decodes a whole block (900 KB of text at `-9`, some 60-250 KB compressed),
/// and the load's plan check samples before it starts: at most one window per this many
/// compressed bytes, and [`MIN_BZIP2_WINDOWS`] at least, so that a small file is not half
/// decoded to be sampled (128 windows are 45% of bsbm-1m's blocks; 72 give +0.1% on it, and
/// 62 on it as Turtle -1.4%, where 32 gave -19.7%).
pub const BZIP2_BYTES_PER_WINDOW: u64 = 256 << 10;
pub const MIN_BZIP2_WINDOWS: usize = 32;

/// `f` of every item, on a pool of `threads` threads, in the items' order.
pub fn in_parallel<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    f: impl Fn(&T) -> R + Sync + Send,
) -> io::Result<Vec<R>> {
    use rayon::prelude::*;
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads.max(1)).build().map_err(io::Error::other)?;
    Ok(pool.install(|| items.par_iter().map(f).collect()))
}

/// Decompressed text of one window, cut to whole lines (for line-based syntaxes).
#[derive(Clone, Debug)]
pub struct Window {
    /// Where the window was taken (compressed offset of its member, frame, block or line).
    pub offset: u64,
    pub text: Vec<u8>,
    /// Compressed bytes that `text` stands for (the decoded span's share).
    pub compressed_bytes: f64,
    /// How many of the evenly spread offsets this window stands for: each stands for an
    /// equal share of the file, and an offset inside a long gzip member or zstd frame is
    /// represented by that member's window.
    pub weight: usize,
}

/// How the windows of a file were taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    /// The head window holds the whole file.
    Whole,
    /// Windows spread over the file (the first is its head).
    Spread,
    /// Only the head: the format gives no random access here.
    Head,
}

#[derive(Clone, Debug)]
pub struct Sample {
    pub windows: Vec<Window>,
    pub reach: Reach,
    /// What the windows are, for people ("8 bzip2 block windows", "head; gzip ISIZE").
    pub method: String,
    /// The uncompressed size, when the format records it and it is unambiguous (head only).
    pub uncompressed_size: Option<u64>,
}

/// A compressed-bytes counter under a decompressor: what it consumed is exactly what the
/// decompressed text cost.
struct Counted<R> {
    inner: R,
    consumed: Arc<AtomicU64>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.consumed.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Counted<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }
    fn consume(&mut self, n: usize) {
        self.consumed.fetch_add(n as u64, Ordering::Relaxed);
        self.inner.consume(n)
    }
}

/// Decompressed bytes (up to `limit`) from compressed offset `at` after skipping `skip`
/// of them, the compressed bytes they cost, and whether the stream ended within them.
fn read_from(f: &InputFile, at: u64, skip: u64, limit: usize) -> io::Result<(Vec<u8>, u64, bool)> {
    let mut file = File::open(&f.path)?;
    file.seek(SeekFrom::Start(at))?;
    let consumed = Arc::new(AtomicU64::new(0));
    let raw = Counted { inner: BufReader::with_capacity(64 << 10, file), consumed: consumed.clone() };
    let mut reader = decompress(raw, f.compression)?;
    let skipped = io::copy(&mut (&mut reader).take(skip), &mut io::sink())?;
    let before = consumed.load(Ordering::Relaxed);
    let mut data = Vec::with_capacity(limit.min(f.size as usize * 20 + 4096));
    if skipped == skip {
        (&mut reader).take(limit as u64).read_to_end(&mut data)?;
    }
    let mut probe = [0u8; 1];
    let ended = data.len() < limit || reader.read(&mut probe)? == 0;
    Ok((data, consumed.load(Ordering::Relaxed) - before, ended))
}

/// `data` cut to whole lines: after the first newline unless it starts the file, up to the
/// last one unless it ends the file.
fn whole_lines(data: &[u8], at_start: bool, at_end: bool) -> &[u8] {
    let from = if at_start { 0 } else { memchr::memchr(b'\n', data).map_or(data.len(), |i| i + 1) };
    let to = if at_end { data.len() } else { memchr::memrchr(b'\n', data).map_or(0, |i| i + 1) };
    if from >= to {
        &[]
    } else {
        &data[from..to]
    }
}

/// A window of `decoded` text that cost `compressed` bytes, cut to whole lines; its cost
/// shrinks with the text cut away.
fn window(offset: u64, decoded: &[u8], compressed: u64, at_start: bool, at_end: bool) -> Window {
    let text = whole_lines(decoded, at_start, at_end).to_vec();
    let share = if decoded.is_empty() { 0.0 } else { text.len() as f64 / decoded.len() as f64 };
    Window { offset, text, compressed_bytes: compressed as f64 * share, weight: 1 }
}

/// Whether windows from anywhere in a file of `syntax` can be parsed (see the module docs):
/// lines can, and statements from their first boundary unless graph blocks may enclose them.
fn windowed_syntax(syntax: Syntax) -> bool {
    match syntax.split() {
        Split::Lines => true,
        Split::Statements => !syntax.has_graphs(),
        Split::Whole(_) => false,
    }
}

/// Takes up to `count` windows of about `window_bytes` decompressed bytes spread over `f`
/// (see the module docs), read on up to `threads` threads; where only the head can be read,
/// one head window of `head_bytes`.
pub fn sample_windows(
    f: &InputFile,
    count: usize,
    window_bytes: usize,
    head_bytes: usize,
    threads: usize,
) -> io::Result<Sample> {
    let windowed = windowed_syntax(f.syntax);
    let count = match f.compression {
        Compression::Bzip2 => count.min(((f.size / BZIP2_BYTES_PER_WINDOW) as usize).max(MIN_BZIP2_WINDOWS)),
        _ => count,
    }
    .max(1);
    // A file that may decompress to at most `head_bytes` is counted whole when it does.
    let first = if f.size <= head_bytes as u64 { head_bytes } else { window_bytes };
    let (mut head, mut cost, ended) = read_from(f, 0, 0, first)?;
    if ended {
        let w = Window { offset: 0, compressed_bytes: cost as f64, text: head, weight: 1 };
        return Ok(Sample {
            windows: vec![w],
            reach: Reach::Whole,
            method: "whole file".into(),
            uncompressed_size: None,
        });
    }
    if first > window_bytes {
        (head, cost, _) = read_from(f, 0, 0, window_bytes)?;
    }
    if windowed && count > 1 {
        let mut windows = vec![window(0, &head, cost, true, false)];
        let stride = f.size / count as u64;
        let what = match f.compression {
            Compression::None => "line",
            Compression::Bzip2 => "bzip2 block",
            Compression::Gzip => "gzip member",
            Compression::Zstd => "zstd frame",
            Compression::Xz | Compression::Lzma => "",
        };
        let random_access = !matches!(f.compression, Compression::Xz | Compression::Lzma);
        let starts: Vec<u64> = if random_access { (1..count).map(|k| stride * k as u64).collect() } else { Vec::new() };
        let take = |at: &u64| match f.compression {
            Compression::Bzip2 => bzip2_window(f, *at, window_bytes),
            Compression::Gzip | Compression::Zstd => member_window(f, *at, stride, window_bytes),
            _ => plain_window(f, *at, window_bytes),
        };
        let rest: Vec<Option<Window>> = in_parallel(&starts, threads, take)?.into_iter().collect::<io::Result<_>>()?;
        // (A member found at offset 0 is the head's: one member, no random access.)
        if rest.iter().flatten().any(|w| w.offset > 0) {
            for w in rest {
                let last = windows.last_mut().expect("the head");
                match w {
                    // Found again (one member spans both offsets), or nothing found after
                    // this offset: the window before stands for it too.
                    Some(w) if w.offset != last.offset => windows.push(w),
                    _ => last.weight += 1,
                }
            }
            let method = format!("{} windows at {what} starts, {count} offsets", windows.len());
            return Ok(Sample { windows, reach: Reach::Spread, method, uncompressed_size: None });
        }
    }
    // The head only.
    let (head, cost, ended) = read_from(f, 0, 0, head_bytes)?;
    let ratio = head.len() as f64 / cost.max(1) as f64;
    let (uncompressed_size, method) = match f.compression {
        _ if ended => (None, "whole file".to_string()),
        Compression::Gzip => match gzip_isize(f, ratio)? {
            Some(n) => (Some(n), "one gzip member, no random access; size from its ISIZE trailer".into()),
            None => (None, "one gzip member, no random access; its ISIZE trailer is ambiguous".into()),
        },
        Compression::Zstd => match zstd_content_size(f)? {
            Some(n) => (Some(n), "one zstd frame, no random access; size from its header".into()),
            None => (None, "one zstd frame, no random access, no content size in its header".into()),
        },
        Compression::None => (None, "windows need the head's prefixes and statement boundaries".into()),
        c if !windowed => (
            None,
            format!("{} {}: windows need the head's prefixes and statement boundaries", c.name(), f.syntax.name()),
        ),
        c => (None, format!("{}: no random access", c.name())),
    };
    let reach = if ended { Reach::Whole } else { Reach::Head };
    let w = window(0, &head, cost, true, ended || !windowed);
    let w = if windowed { w } else { Window { offset: 0, text: head, compressed_bytes: cost as f64, weight: 1 } };
    Ok(Sample { windows: vec![w], reach, method, uncompressed_size })
}

/// The span of a Turtle window's whole lines that holds whole statements, as far as lines
/// tell: from the first line that starts a statement after one that ended one (its last
/// non-blank byte is `.`; the next line is not indented, as continuations are), to the end
/// of the last line that ends one. An estimate's cut: a `.` at the end of a line inside a
/// long string misleads it, and the parse's error recovery then loses a statement or two.
pub fn turtle_statements(text: &[u8]) -> std::ops::Range<usize> {
    let ends_statement = |line: &[u8]| line.trim_ascii_end().ends_with(b".");
    let mut lines = Vec::new();
    let mut at = 0;
    for line in text.split_inclusive(|&b| b == b'\n') {
        lines.push((at, line));
        at += line.len();
    }
    let starts = |k: usize| {
        k > 0 && ends_statement(lines[k - 1].1) && lines[k].1.first().is_some_and(|b| !b.is_ascii_whitespace())
    };
    let Some(first) = (0..lines.len()).find(|&k| starts(k)) else { return 0..0 };
    let Some(last) = (first..lines.len()).rev().find(|&k| ends_statement(lines[k].1)) else { return 0..0 };
    lines[first].0..lines[last].0 + lines[last].1.len()
}

/// Uncompressed: the lines after offset `at`.
fn plain_window(f: &InputFile, at: u64, window_bytes: usize) -> io::Result<Option<Window>> {
    let file = File::open(&f.path)?;
    let mut buf = vec![0u8; window_bytes.min((f.size - at) as usize)];
    let n = read_at_full(&file, &mut buf, at)?;
    buf.truncate(n);
    let at_end = at + n as u64 >= f.size;
    Ok(Some(window(at, &buf, n as u64, false, at_end)))
}

fn read_at_full(mut file: &File, buf: &mut [u8], at: u64) -> io::Result<usize> {
    file.seek(SeekFrom::Start(at))?;
    read_up_to(&mut file, buf)
}

/// Compressed bytes searched after a window's offset for a gzip member or zstd frame at
/// most: members and frames further apart than this are too few to spread windows over.
const SEARCH_BYTES: usize = 4 << 20;

/// Compressed bytes read for a bzip2 window besides its decompressed size: blocks of a -9
/// file are 900 kB decompressed, 70-400 KiB compressed for RDF text (about 1 MiB at most),
/// so the first block after the offset, the window's blocks and the magic after them fit.
const BZIP2_BLOCK_READ: usize = 3 << 19;

/// bzip2: whole blocks from the first one after `at`, until `window_bytes` are decoded.
fn bzip2_window(f: &InputFile, at: u64, window_bytes: usize) -> io::Result<Option<Window>> {
    let file = File::open(&f.path)?;
    let mut buf = vec![0u8; (BZIP2_BLOCK_READ + window_bytes).min((f.size - at) as usize)];
    let n = read_at_full(&file, &mut buf, at)?;
    buf.truncate(n);
    let magics = find_magics(&buf);
    let mut decoded = Vec::new();
    // Bit span of the decoded blocks (stream trailers and headers between them included).
    let mut span: Option<(u64, u64)> = None;
    let mut i = 0;
    while i + 1 < magics.len() && decoded.len() < window_bytes {
        let (from, is_block) = magics[i];
        if !is_block {
            i += 1;
            continue;
        }
        // A false magic inside a block cuts it short: join it with the next pieces.
        let joined =
            (i + 1..magics.len().min(i + 4)).find_map(|j| decode_block(&buf, from, magics[j].0).ok().map(|d| (j, d)));
        match joined {
            Some((j, d)) => {
                span = Some((span.map_or(from, |s| s.0), magics[j].0));
                decoded.extend_from_slice(&d);
                i = j;
            }
            // Before the first block: a false magic, try the next one. After it: the
            // window ends (the next block would need more than was read).
            None if span.is_none() => i += 1,
            None => break,
        }
    }
    let Some((from, to)) = span else { return Ok(None) };
    Ok(Some(window(at + from / 8, &decoded, (to - from) / 8, false, false)))
}

/// Multi-member gzip, multi-frame zstd: the member or frame that holds offset `at`, found by
/// its header within `stride` before it, decoded from there; a header counts only when a
/// whole window decodes from it without error.
fn member_window(f: &InputFile, at: u64, stride: u64, window_bytes: usize) -> io::Result<Option<Window>> {
    let file = File::open(&f.path)?;
    let search = stride.clamp(1 << 20, SEARCH_BYTES as u64).min(at);
    let from = at - search;
    // Headers starting at `at` or before, and the 10 bytes of a gzip header.
    let mut buf = vec![0u8; search as usize + 10];
    let n = read_at_full(&file, &mut buf, from)?;
    buf.truncate(n);
    let magic: &[u8] = match f.compression {
        Compression::Gzip => &[0x1f, 0x8b, 0x08],
        _ => &[0x28, 0xb5, 0x2f, 0xfd],
    };
    let mut found: Vec<usize> = memchr::memmem::find_iter(&buf, magic).filter(|&p| p as u64 <= search).collect();
    found.reverse();
    for pos in found {
        if f.compression == Compression::Gzip && !plausible_gzip_header(&buf[pos..]) {
            continue;
        }
        let offset = from + pos as u64;
        // A false header fails to decode (or decodes garbage that ends early); a true one
        // decodes a whole window or reaches the end of the file.
        // The window is the member's second `window_bytes`: its first compress worse, from
        // an empty dictionary (zstd's larger window takes longer to warm: BSBM's product
        // frames give 0.13 statements per compressed byte in their first 512 KiB, 0.19 in
        // all). A member too short for that is taken whole.
        let Ok((mut decoded, mut cost, mut ended)) = read_from(f, offset, window_bytes as u64, window_bytes) else {
            continue;
        };
        if decoded.is_empty() {
            let Ok(whole) = read_from(f, offset, 0, window_bytes) else { continue };
            (decoded, cost, ended) = whole;
        }
        if decoded.len() < window_bytes && !ended {
            continue;
        }
        let mut w = window(offset, &decoded, cost, false, ended);
        // Even the second MiB of a zstd frame compresses worse than the frame (its window
        // is larger; -23% on BSBM's reviews): where the frame records its content size, its
        // text costs its share of the whole frame's compressed bytes.
        if f.compression == Compression::Zstd {
            if let Some((content, compressed)) = zstd_frame_sizes(&file, offset, f.size)? {
                w.compressed_bytes = w.text.len() as f64 * compressed as f64 / content.max(1) as f64;
            }
        }
        return Ok(Some(w));
    }
    Ok(None)
}

/// FLG's reserved bits are zero; XFL is 0, 2 or 4; OS is known (RFC 1952).
fn plausible_gzip_header(h: &[u8]) -> bool {
    h.len() >= 10 && h[3] & 0xe0 == 0 && matches!(h[8], 0 | 2 | 4) && (h[9] <= 13 || h[9] == 255)
}

/// The uncompressed size of a one-member gzip file: ISIZE is it modulo 2^32, so of the
/// sizes it allows, the one nearest (by ratio) to what the head's compression ratio
/// predicts — when the next nearest would need a ratio another 4x further off (a head may
/// compress several times better or worse than the rest: BSBM's products 33:1, its
/// reviews 4.6:1).
fn gzip_isize(f: &InputFile, head_ratio: f64) -> io::Result<Option<u64>> {
    if f.size < 18 {
        return Ok(None);
    }
    let mut tail = [0u8; 4];
    File::open(&f.path)?.read_exact_at(&mut tail, f.size - 4)?;
    let isize = u64::from(u32::from_le_bytes(tail));
    let guess = head_ratio * f.size as f64;
    // Distance in orders of magnitude from the guess, of the two nearest sizes ISIZE allows.
    let off = |n: u64| (n as f64 / guess).ln().abs();
    let nearest = guess as u64 / (1 << 32);
    let mut candidates: Vec<u64> = (nearest.saturating_sub(1)..=nearest + 1).map(|k| isize + (k << 32)).collect();
    candidates.sort_by(|a, b| off(*a).total_cmp(&off(*b)));
    let (best, second) = (candidates[0], candidates[1]);
    Ok((off(second) - off(best) > 4f64.ln()).then_some(best))
}

/// The first zstd frame's Frame_Content_Size, when its header records it.
fn zstd_content_size(f: &InputFile) -> io::Result<Option<u64>> {
    Ok(zstd_header(&File::open(&f.path)?, 0)?.and_then(|h| h.content_size))
}

struct ZstdHeader {
    len: u64,
    content_size: Option<u64>,
    checksum: bool,
}

/// The zstd frame header at `at` (RFC 8878 3.1.1).
fn zstd_header(file: &File, at: u64) -> io::Result<Option<ZstdHeader>> {
    let mut h = [0u8; 18];
    let n = read_at_full(file, &mut h, at)?;
    if n < 6 || h[..4] != [0x28, 0xb5, 0x2f, 0xfd] {
        return Ok(None);
    }
    let fhd = h[4];
    let single_segment = fhd & 0x20 != 0;
    let fcs_len = match fhd >> 6 {
        0 if single_segment => 1,
        0 => 0,
        1 => 2,
        2 => 4,
        _ => 8,
    };
    let at_fcs = 5 + usize::from(!single_segment) + [0, 1, 2, 4][usize::from(fhd & 3)];
    if n < at_fcs + fcs_len {
        return Ok(None);
    }
    let mut v = [0u8; 8];
    v[..fcs_len].copy_from_slice(&h[at_fcs..at_fcs + fcs_len]);
    let size = u64::from_le_bytes(v);
    let content_size = match fcs_len {
        0 => None,
        2 => Some(size + 256),
        _ => Some(size),
    };
    Ok(Some(ZstdHeader { len: (at_fcs + fcs_len) as u64, content_size, checksum: fhd & 4 != 0 }))
}

/// Content size and compressed size of the zstd frame at `at`, when its header records the
/// former: the latter by walking its block headers (3 bytes per block of at most 128 KiB).
fn zstd_frame_sizes(file: &File, at: u64, file_size: u64) -> io::Result<Option<(u64, u64)>> {
    let Some(h) = zstd_header(file, at)? else { return Ok(None) };
    let Some(content) = h.content_size else { return Ok(None) };
    let mut pos = at + h.len;
    loop {
        let mut b = [0u8; 3];
        if pos + 3 > file_size {
            return Ok(None);
        }
        file.read_exact_at(&mut b, pos)?;
        let header = u32::from(b[0]) | u32::from(b[1]) << 8 | u32::from(b[2]) << 16;
        let size = u64::from(header >> 3);
        pos += 3 + match (header >> 1) & 3 {
            1 => 1, // RLE: one byte, repeated
            3 => return Ok(None),
            _ => size,
        };
        if header & 1 == 1 {
            break;
        }
    }
    Ok(Some((content, pos + if h.checksum { 4 } else { 0 } - at)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_file(name: &str, bytes: &[u8]) -> std::path::PathBuf {
        let p = std::env::temp_dir().join(format!("rdf-input-sample-{}-{name}", std::process::id()));
        std::fs::write(&p, bytes).unwrap();
        p
    }

    fn lines(n: usize, seed: usize) -> Vec<u8> {
        (0..n)
            .flat_map(|i| format!("<http://e/s{}> <http://e/p> \"{}\" .\n", i * seed % 7919, i).into_bytes())
            .collect()
    }

    #[test]
    fn zstd_frames_are_measured_by_their_headers_and_blocks() {
        let (a, b) = (lines(20_000, 3), lines(30_000, 5));
        // One-shot compression records the content size; streaming (encode_all) does not.
        let (za, zb) = (zstd::bulk::compress(&a, 3).unwrap(), zstd::bulk::compress(&b, 19).unwrap());
        let p = temp_file("frames.nt.zst", &[za.clone(), zb.clone()].concat());
        let file = File::open(&p).unwrap();
        let size = (za.len() + zb.len()) as u64;
        assert_eq!(zstd_frame_sizes(&file, 0, size).unwrap(), Some((a.len() as u64, za.len() as u64)));
        assert_eq!(zstd_frame_sizes(&file, za.len() as u64, size).unwrap(), Some((b.len() as u64, zb.len() as u64)));
        assert_eq!(zstd_frame_sizes(&file, 1, size).unwrap(), None, "not a frame header");
        std::fs::remove_file(p).unwrap();
        let streamed = zstd::encode_all(&a[..], 3).unwrap();
        let p = temp_file("streamed.nt.zst", &streamed);
        assert_eq!(zstd_frame_sizes(&File::open(&p).unwrap(), 0, streamed.len() as u64).unwrap(), None);
        std::fs::remove_file(p).unwrap();
    }

    #[test]
    fn gzip_isize_pins_the_size_near_the_guess_only() {
        use std::io::Write;
        let data = lines(50_000, 7);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&data).unwrap();
        let p = temp_file("one.nt.gz", &gz.finish().unwrap());
        let f = crate::detect(&p).unwrap();
        let ratio = data.len() as f64 / f.size as f64;
        assert_eq!(gzip_isize(&f, ratio).unwrap(), Some(data.len() as u64));
        assert_eq!(gzip_isize(&f, ratio * 3.0).unwrap(), Some(data.len() as u64), "3x off: still the nearest by far");
        // A guess of ~6 GiB: ISIZE allows 4 GiB + n and 8 GiB + n, both about as near.
        assert_eq!(gzip_isize(&f, 6e9 / f.size as f64).unwrap(), None);
        std::fs::remove_file(p).unwrap();
    }

    #[test]
    fn turtle_windows_start_after_a_statement_and_end_with_one() {
        let text = b"  ex:b 2 ;\n  ex:c \"x.\" .\nex:s ex:p 1 ;\n    ex:q 2 .\n<s> <p> <o> .\nex:t ex:p";
        let span = turtle_statements(text);
        assert_eq!(&text[span], b"ex:s ex:p 1 ;\n    ex:q 2 .\n<s> <p> <o> .\n");
        assert_eq!(turtle_statements(b"ex:s ex:p 1 ;\n  ex:q 2 ;\n"), 0..0);
    }

    #[test]
    fn whole_lines_cut() {
        assert_eq!(whole_lines(b"ab\ncd\nef", false, false), b"cd\n");
        assert_eq!(whole_lines(b"ab\ncd\nef", true, false), b"ab\ncd\n");
        assert_eq!(whole_lines(b"ab\ncd\nef", false, true), b"cd\nef");
        assert_eq!(whole_lines(b"abcdef", false, false), b"");
    }
}
