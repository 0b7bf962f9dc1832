//! One bzip2 block decoded fast. libbzip2 spends most of a block in two places: Huffman
//! symbols read one bit at a time, and the inverse BWT, a chain of ~900k dependent loads
//! into a 3.6 MB vector that miss the L2 cache at nearly every step. Here symbols come from a
//! lookup table (codes up to [`LOOKUP_BITS`] bits in one step), and the BWT's cycle is cut
//! at marked positions into segments that [`LANES`] lanes walk at once, so that their misses
//! overlap; the pieces are put in order afterwards.
//!
//! Only what the common encoders write is handled: a block that is randomised (bzip2
//! 0.9.0), uses an incomplete or oversubscribed code, or is damaged gives `None`, and the
//! caller decodes it with libbzip2, which has the last word. A `Some` is checked against
//! the block's CRC.

use crc::{Crc, Table, CRC_32_BZIP2};

/// Codes this long or shorter are decoded by one table lookup.
const LOOKUP_BITS: u32 = 10;
const MAX_CODE_LEN: u32 = 20;
const GROUP_SIZE: u32 = 50;
const MAX_GROUPS: usize = 6;
/// libbzip2 1.0.8 reads up to 32767 selectors and uses the first 18002.
const MAX_SELECTORS: usize = 18002;
const RUN_A: u16 = 0;
const RUN_B: u16 = 1;

static BLOCK_CRC: Crc<u32, Table<16>> = Crc::<u32, Table<16>>::new(&CRC_32_BZIP2);

/// Buffers of one decoding thread, kept between blocks: at `-9` the vector 3.6 MB, the runs
/// 0.9 MB on RDF text (3.6 MB at most), the text 0.9 MB, the lanes about 1.2 MB touched.
#[derive(Default)]
pub(crate) struct Scratch {
    /// The block's bytes before the inverse BWT (the BWT's last column, libbzip2's `ll`) as
    /// runs, `(length << 8) | byte`; neighbours differ in their byte.
    runs: Vec<u32>,
    /// `(psi(i) << 8) | first_column[i]` (and a mark in the top bit): libbzip2's `tt` with
    /// the byte of the first column, which is the bucket the position falls in, so the
    /// text is the bytes of the cycle from `orig_ptr` on, and building it needs no reads.
    forward: Vec<u32>,
    /// Bytes walked by the lanes of [`rebuild_text`], a region each.
    lanes: Vec<u8>,
    /// The text before the initial run-length coding is undone.
    text: Vec<u8>,
}

/// Reads bits most significant first from a byte slice; past its end, zeros (the caller
/// checks how many bits were used).
struct Bits<'a> {
    data: &'a [u8],
    next: usize,
    /// Unread bits, left-aligned; the top `have` are valid.
    buf: u64,
    have: u32,
}

impl<'a> Bits<'a> {
    fn new(data: &'a [u8], start_bit: u64) -> Bits<'a> {
        let mut b = Bits { data, next: (start_bit / 8) as usize, buf: 0, have: 0 };
        b.refill();
        b.consume((start_bit % 8) as u32);
        b
    }

    /// At least 56 valid bits afterwards.
    #[inline(always)]
    fn refill(&mut self) {
        if let Some(w) = self.data.get(self.next..self.next + 8) {
            // Bytes past the counted ones land where the next refill puts them again.
            self.buf |= u64::from_be_bytes(w.try_into().expect("8 bytes")) >> self.have;
            let bytes = (63 - self.have) / 8;
            self.next += bytes as usize;
            self.have += bytes * 8;
        } else {
            while self.have <= 56 {
                let b = self.data.get(self.next).copied().unwrap_or(0);
                self.buf |= u64::from(b) << (56 - self.have);
                self.next += 1;
                self.have += 8;
            }
        }
    }

    #[inline(always)]
    fn peek(&self, n: u32) -> u32 {
        (self.buf >> (64 - n)) as u32
    }

    #[inline(always)]
    fn consume(&mut self, n: u32) {
        self.buf <<= n;
        self.have -= n;
    }

    /// `n` (1..=32) bits.
    #[inline(always)]
    fn take(&mut self, n: u32) -> u32 {
        if self.have < n {
            self.refill();
        }
        let v = self.peek(n);
        self.consume(n);
        v
    }

    fn bit(&mut self) -> bool {
        self.take(1) == 1
    }

    /// Bits consumed since the start of `data`.
    fn position(&self) -> u64 {
        self.next as u64 * 8 - u64::from(self.have)
    }
}

/// A canonical Huffman code as bzip2 assigns it: by length, then by symbol.
struct Code {
    /// `(length << 9) | symbol` for every `LOOKUP_BITS`-bit prefix that starts a code of at
    /// most `LOOKUP_BITS` bits; 0 otherwise.
    fast: [u16; 1 << LOOKUP_BITS],
    /// Per length: the first code, how many codes, and where their symbols start in `symbols`.
    first: [u32; MAX_CODE_LEN as usize + 1],
    count: [u32; MAX_CODE_LEN as usize + 1],
    offset: [u32; MAX_CODE_LEN as usize + 1],
    symbols: [u16; 258],
    max_len: u32,
}

impl Code {
    /// None for an oversubscribed code (not prefix-free).
    fn new(lengths: &[u8]) -> Option<Box<Code>> {
        let mut c = Box::new(Code {
            fast: [0; 1 << LOOKUP_BITS],
            first: [0; MAX_CODE_LEN as usize + 1],
            count: [0; MAX_CODE_LEN as usize + 1],
            offset: [0; MAX_CODE_LEN as usize + 1],
            symbols: [0; 258],
            max_len: 0,
        });
        for &l in lengths {
            c.count[l as usize] += 1;
            c.max_len = c.max_len.max(u32::from(l));
        }
        let (mut code, mut at) = (0u32, 0u32);
        for len in 1..=MAX_CODE_LEN as usize {
            c.first[len] = code;
            c.offset[len] = at;
            code += c.count[len];
            at += c.count[len];
            if code > 1 << len {
                return None;
            }
            code <<= 1;
        }
        let mut next = c.first;
        let mut fill = c.offset;
        for (sym, &l) in lengths.iter().enumerate() {
            let len = l as usize;
            c.symbols[fill[len] as usize] = sym as u16;
            fill[len] += 1;
            let code = next[len];
            next[len] += 1;
            if len as u32 <= LOOKUP_BITS {
                let shift = LOOKUP_BITS - len as u32;
                let entry = ((len as u16) << 9) | sym as u16;
                let start = (code << shift) as usize;
                c.fast[start..start + (1 << shift)].fill(entry);
            }
        }
        Some(c)
    }

    /// The next symbol; None where no code matches (an incomplete code). Needs 20 bits.
    #[inline(always)]
    fn decode(&self, bits: &mut Bits) -> Option<u16> {
        let e = self.fast[bits.peek(LOOKUP_BITS) as usize];
        if e != 0 {
            bits.consume(u32::from(e >> 9));
            return Some(e & 0x1ff);
        }
        for len in LOOKUP_BITS + 1..=self.max_len {
            let v = bits.peek(len);
            let l = len as usize;
            if v.wrapping_sub(self.first[l]) < self.count[l] {
                bits.consume(len);
                return Some(self.symbols[(self.offset[l] + v - self.first[l]) as usize]);
            }
        }
        None
    }
}

/// Decodes the block whose magic starts at bit `start_bit` of `data` and ends before bit
/// `end_bit`, appending its bytes to `out`. `max_block` is the stream's block size (100k ×
/// level). None when the block needs libbzip2 (see module docs); `out` is then unchanged.
pub(crate) fn decode(
    data: &[u8],
    start_bit: u64,
    end_bit: u64,
    max_block: usize,
    scratch: &mut Scratch,
    out: &mut Vec<u8>,
) -> Option<()> {
    let mut bits = Bits::new(data, start_bit);
    bits.take(24);
    bits.take(24); // the block magic
    let stored_crc = bits.take(32);
    if bits.bit() {
        return None; // randomised
    }
    let orig_ptr = bits.take(24) as usize;

    let (mut mtf, in_use) = read_bytes_used(&mut bits)?;
    let alpha_size = in_use + 2;
    let selectors = read_selectors(&mut bits)?;
    let codes = read_codes(&mut bits, selectors.groups, alpha_size)?;
    let selectors = selectors.list;

    // Symbols: MTF positions and runs of the front byte, to the end-of-block symbol.
    let runs = &mut scratch.runs;
    runs.clear();
    let mut counts = [0u32; 256];
    let mut n = 0usize;
    let eob = (alpha_size - 1) as u16;
    let (mut run, mut run_shift) = (0usize, 0u32);
    let mut selector = 0usize;
    let mut group_left = 0u32;
    let mut code = &codes[0];
    loop {
        if group_left == 0 {
            code = &codes[*selectors.get(selector)? as usize];
            selector += 1;
            group_left = GROUP_SIZE;
        }
        group_left -= 1;
        if bits.have < MAX_CODE_LEN {
            bits.refill();
        }
        let sym = code.decode(&mut bits)?;
        if sym <= RUN_B {
            if run_shift > 20 {
                return None;
            }
            run += (usize::from(sym - RUN_A) + 1) << run_shift;
            run_shift += 1;
            continue;
        }
        if run > 0 {
            if run > max_block - n {
                return None;
            }
            // The front byte is the one before (if any): a run of it goes on.
            let b = mtf[0];
            match runs.last_mut() {
                Some(last) if *last as u8 == b => *last += (run as u32) << 8,
                _ => runs.push(((run as u32) << 8) | u32::from(b)),
            }
            counts[b as usize] += run as u32;
            n += run;
            (run, run_shift) = (0, 0);
        }
        if sym == eob {
            break;
        }
        if sym > eob || n == max_block {
            return None;
        }
        let b = move_to_front(&mut mtf, usize::from(sym - 1));
        runs.push((1 << 8) | u32::from(b));
        counts[b as usize] += 1;
        n += 1;
    }
    if bits.position() > end_bit || orig_ptr >= n {
        return None;
    }

    // The inverse BWT: libbzip2's vector, then its cycle walked in segments.
    let fwd = &mut scratch.forward;
    forward_vector(runs, &counts, n, fwd);
    let text = &mut scratch.text;
    grow(text, n);
    let text = &mut text[..n];
    rebuild_text(&mut fwd[..n + 1], orig_ptr, text, &mut scratch.lanes)?;

    let start = out.len();
    undo_initial_runs(text, out);
    if BLOCK_CRC.checksum(&out[start..]) != stored_crc {
        out.truncate(start);
        return None;
    }
    Some(())
}

/// The bytes the block uses, as a 16 × 16 bitmap: the MTF list they start (in order) and
/// how many there are (None: none).
fn read_bytes_used(bits: &mut Bits<'_>) -> Option<([u8; 256], usize)> {
    let used16 = bits.take(16);
    let mut mtf = [0u8; 256];
    let mut in_use = 0usize;
    for hi in 0..16 {
        if used16 & (0x8000 >> hi) != 0 {
            let lo_bits = bits.take(16);
            for lo in 0..16 {
                if lo_bits & (0x8000 >> lo) != 0 {
                    mtf[in_use] = (hi * 16 + lo) as u8;
                    in_use += 1;
                }
            }
        }
    }
    if in_use == 0 {
        return None;
    }
    Some((mtf, in_use))
}

/// The Huffman tables' count and which table codes each group of symbols.
struct Selectors {
    groups: usize,
    /// At most `MAX_SELECTORS` (libbzip2 ignores the ones after).
    list: Vec<u8>,
}

/// The selectors, MTF-coded in unary.
fn read_selectors(bits: &mut Bits<'_>) -> Option<Selectors> {
    let groups = bits.take(3) as usize;
    let selector_count = bits.take(15) as usize;
    if !(2..=MAX_GROUPS).contains(&groups) || selector_count == 0 {
        return None;
    }
    let mut selector_mtf: Vec<u8> = (0..groups as u8).collect();
    let mut selectors = Vec::with_capacity(selector_count.min(MAX_SELECTORS));
    for _ in 0..selector_count {
        let mut j = 0;
        while bits.bit() {
            j += 1;
            if j >= groups {
                return None;
            }
        }
        let g = selector_mtf.remove(j);
        selector_mtf.insert(0, g);
        if selectors.len() < MAX_SELECTORS {
            selectors.push(g);
        }
    }
    Some(Selectors { groups, list: selectors })
}

/// The `groups` Huffman tables, their code lengths delta-coded.
fn read_codes(bits: &mut Bits<'_>, groups: usize, alpha_size: usize) -> Option<Vec<Code>> {
    let mut codes = Vec::with_capacity(groups);
    let mut lengths = [0u8; 258];
    for _ in 0..groups {
        let mut len = bits.take(5);
        for l in lengths.iter_mut().take(alpha_size) {
            loop {
                if !(1..=MAX_CODE_LEN).contains(&len) {
                    return None;
                }
                if !bits.bit() {
                    break;
                }
                if bits.bit() {
                    len -= 1;
                } else {
                    len += 1;
                }
            }
            *l = len as u8;
        }
        codes.push(*Code::new(&lengths[..alpha_size])?);
    }
    Some(codes)
}

/// libbzip2's vector of the inverse BWT (`fwd[..n]`, entries `(index << 8) | byte`) from the
/// block's runs and byte counts.
fn forward_vector(runs: &[u32], counts: &[u32; 256], n: usize, fwd: &mut Vec<u32>) {
    let mut next = [0u32; 256];
    let mut sum = 0u32;
    for (c, &k) in next.iter_mut().zip(counts) {
        *c = sum;
        sum += k;
    }
    // Buffers keep their length between blocks: every entry read later is written first.
    grow(fwd, n + 1);
    // By runs: a byte's counter is not read right after it was written.
    let mut i = 0u32;
    for &r in runs.iter() {
        let (b, len) = (r & 0xff, r >> 8);
        let pos = next[b as usize] as usize;
        next[b as usize] += len;
        if len == 1 {
            fwd[pos] = (i << 8) | b;
        } else {
            for (k, e) in fwd[pos..pos + len as usize].iter_mut().enumerate() {
                *e = ((i + k as u32) << 8) | b;
            }
        }
        i += len;
    }
}

/// Chains walked at once: each step of a chain is a cache miss that depends on the one
/// before, so one chain is latency-bound (15 ns a step here, random order); 16 overlap their
/// misses (1.2 ns a step; 8 gave 2.1).
const LANES: usize = 16;
/// Segments the cycle is cut into, so that lanes stay busy to the end.
const SEGMENTS: usize = 16 * LANES;
/// Marks the entry of a position where a segment starts.
const MARK: u32 = 1 << 31;
const INDEX_MASK: u32 = (1 << 23) - 1;

/// The text of a block: the cycle `first, psi(first), ...` of `fwd[..n]` (whose last entry is
/// spare), emitting each position's byte. The cycle is cut at `first` and at positions spread
/// over the vector; lanes walk the pieces at once, each until it meets the start of another,
/// and the pieces are then put in order. None if the vector is not one cycle.
fn rebuild_text(fwd: &mut [u32], first: usize, text: &mut [u8], lanes: &mut Vec<u8>) -> Option<()> {
    let n = text.len();
    let mut starts: Vec<u32> = (0..SEGMENTS).map(|k| (k * n / SEGMENTS) as u32).collect();
    starts.push(first as u32);
    starts.sort_unstable();
    starts.dedup();
    for &s in &starts {
        fwd[s as usize] |= MARK;
    }
    // Where idle lanes wait: a marked entry pointing to itself.
    fwd[n] = MARK | ((n as u32) << 8);
    let segments = starts.len();
    let mut walk = Walk {
        starts: &starts,
        from: vec![0; segments],
        len: vec![0; segments],
        end: vec![u32::MAX; segments],
        walking: [usize::MAX; LANES],
        queued: 0,
        active: 0,
        idle: n,
    };
    // A lane writes a byte per round at most, and there are at most n + segments rounds:
    // a region of this size cannot overflow. Allocated zeroed (untouched pages stay free).
    let region = n + SEGMENTS + 2;
    if lanes.len() < LANES * region {
        *lanes = vec![0; LANES * region];
    }
    let region = lanes.len() / LANES;
    let bufs = &mut lanes[..];
    let mut pos = [n; LANES];
    let mut len: [usize; LANES] = std::array::from_fn(|l| l * region);
    for l in 0..LANES {
        walk.next_segment(l, fwd, &mut pos, &mut len, bufs)?;
    }
    let mut budget = n + segments;
    while walk.active > 0 {
        budget = budget.checked_sub(1)?;
        for l in 0..LANES {
            let v = fwd[pos[l]];
            if v & MARK != 0 {
                walk.next_segment(l, fwd, &mut pos, &mut len, bufs)?;
                continue;
            }
            *bufs.get_mut(len[l])? = v as u8;
            len[l] += 1;
            pos[l] = ((v >> 8) & INDEX_MASK) as usize;
        }
    }
    // The pieces in text order, from the one starting at `first`.
    let mut seg = starts.binary_search(&(first as u32)).ok()?;
    let mut at = 0;
    for _ in 0..segments {
        let (from, len) = (walk.from[seg], walk.len[seg]);
        text.get_mut(at..at + len)?.copy_from_slice(&bufs[from..from + len]);
        at += len;
        seg = starts.binary_search(&walk.end[seg]).ok()?;
    }
    (at == n && starts[seg] == first as u32).then_some(())
}

/// The segments of [`rebuild_text`]: where each one's bytes are in the lanes' buffer, how
/// many, and the position where it met the next one.
struct Walk<'a> {
    starts: &'a [u32],
    from: Vec<usize>,
    len: Vec<usize>,
    end: Vec<u32>,
    /// The segment each lane walks (`usize::MAX`: none).
    walking: [usize; LANES],
    queued: usize,
    active: usize,
    idle: usize,
}

impl Walk<'_> {
    /// Lane `l` met a marked position: its segment ends there; it takes the next one or idles.
    #[cold]
    #[inline(never)]
    fn next_segment(
        &mut self,
        l: usize,
        fwd: &[u32],
        pos: &mut [usize; LANES],
        len: &mut [usize; LANES],
        bufs: &mut [u8],
    ) -> Option<()> {
        let seg = self.walking[l];
        if seg != usize::MAX {
            self.len[seg] = len[l] - self.from[seg];
            self.end[seg] = pos[l] as u32;
        }
        if self.queued < self.starts.len() {
            let next = self.queued;
            self.queued += 1;
            if seg == usize::MAX {
                self.active += 1;
            }
            (self.walking[l], self.from[next]) = (next, len[l]);
            let v = fwd[self.starts[next] as usize];
            *bufs.get_mut(len[l])? = v as u8;
            len[l] += 1;
            pos[l] = ((v >> 8) & INDEX_MASK) as usize;
        } else if seg != usize::MAX {
            self.walking[l] = usize::MAX;
            pos[l] = self.idle;
            self.active -= 1;
        }
        Some(())
    }
}

fn grow<T: Copy + Default>(v: &mut Vec<T>, len: usize) {
    if v.len() < len {
        v.resize(len, T::default());
    }
}

/// Moves the byte at `pos` of the list to its front and returns it.
#[inline(always)]
fn move_to_front(list: &mut [u8; 256], pos: usize) -> u8 {
    let b = list[pos];
    if pos < 16 {
        // The first 16 bytes as one integer: shift bytes 0..pos up by one.
        let v = u128::from_le_bytes(list[..16].try_into().expect("16 bytes"));
        let moved = u128::MAX >> (120 - 8 * pos as u32);
        let v = ((v << 8) & moved) | (v & !moved) | u128::from(b);
        list[..16].copy_from_slice(&v.to_le_bytes());
    } else {
        list.copy_within(0..pos, 1);
        list[0] = b;
    }
    b
}

/// Where the first four equal bytes at or after `from` start.
#[inline]
fn four_equal(text: &[u8], from: usize) -> Option<usize> {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    let mut j = from;
    // Eight bytes at a time: byte k of `same` is zero where text[k] == text[k + 1]; a run
    // starting at k needs zeros at k, k + 1, k + 2, which bytes 0..5 can be told from.
    while let Some(w) = text.get(j..j + 8) {
        let w = u64::from_le_bytes(w.try_into().expect("8 bytes"));
        let same = w ^ (w >> 8);
        let zero = !(((same & LOW7) + LOW7) | same | LOW7);
        let run = zero & (zero >> 8) & (zero >> 16) & 0x0000_0080_8080_8080;
        if run != 0 {
            return Some(j + run.trailing_zeros() as usize / 8);
        }
        j += 5;
    }
    (j..text.len().saturating_sub(3))
        .find(|&k| text[k] == text[k + 1] && text[k] == text[k + 2] && text[k] == text[k + 3])
}

/// bzip2's first stage: four equal bytes are followed by a count (0-255) of more of them.
fn undo_initial_runs(text: &[u8], out: &mut Vec<u8>) {
    out.reserve(text.len());
    let n = text.len();
    let mut i = 0;
    while i < n {
        let found = four_equal(text, i);
        match found {
            None => {
                out.extend_from_slice(&text[i..]);
                return;
            }
            Some(j) => {
                out.extend_from_slice(&text[i..j + 4]);
                match text.get(j + 4) {
                    Some(&more) => out.resize(out.len() + usize::from(more), text[j]),
                    None => return,
                }
                i = j + 5;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parallel_bzip2::find_magics;
    use crate::parallel_bzip2::tests::{compress, sample};
    use std::io::Read;

    /// The blocks of a one-stream file as bit ranges `[magic, next magic)`.
    fn blocks(bz: &[u8]) -> Vec<(u64, u64)> {
        let magics = find_magics(bz);
        assert!(magics.last().is_some_and(|m| !m.1), "ends with the end marker");
        magics.windows(2).map(|w| (w[0].0, w[1].0)).collect()
    }

    /// Every block decoded here (never handed to libbzip2), together equal to libbzip2's output.
    fn decodes_here(data: &[u8], level: u32) {
        let bz = compress(data, level);
        let mut want = Vec::new();
        bzip2::read::BzDecoder::new(&bz[..]).read_to_end(&mut want).unwrap();
        assert!(want == data);
        let mut scratch = Scratch::default();
        let mut out = Vec::new();
        for (from, to) in blocks(&bz) {
            let before = out.len();
            let got = decode(&bz, from, to, level as usize * 100_000, &mut scratch, &mut out);
            assert!(got.is_some(), "block at bit {from} of {} bytes (level {level}) declined", data.len());
            assert!(out.len() > before);
        }
        assert!(out == want, "{} bytes at level {level}", data.len());
    }

    fn xorshift(seed: u64) -> impl FnMut() -> u64 {
        let mut x = seed;
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        }
    }

    #[test]
    fn blocks_decode_here_as_libbzip2_does() {
        let mut r = xorshift(7);
        let random: Vec<u8> = (0..300_000).map(|_| r() as u8).collect();
        // Runs of every length around the first stage's 4 + count (0-255), of many bytes.
        let mut runs = Vec::new();
        for len in (1..600).chain([1000, 5000, 70_000]) {
            runs.extend(std::iter::repeat_n((len % 251) as u8, len));
        }
        let all_bytes: Vec<u8> = (0..=255u8).cycle().take(100_000).collect();
        let few_symbols: Vec<u8> = (0..200_000).map(|_| b"ab"[(r() % 2) as usize]).collect();
        for level in [1, 9] {
            decodes_here(&sample(2_500_000, 1), level);
            decodes_here(&random, level);
            decodes_here(&runs, level);
            decodes_here(&all_bytes, level);
            decodes_here(&few_symbols, level);
        }
        // Tiny blocks: fewer positions than the walk's segments; a run at the very end.
        for tiny in [&b"a"[..], b"ab", b"aaaa", b"aaaaa", b"abcabcabc", b"xyzzzzzzzzz"] {
            decodes_here(tiny, 9);
        }
    }

    #[test]
    fn damage_is_declined_never_decoded_wrong() {
        let data = sample(150_000, 3);
        let bz = compress(&data, 1);
        let mut scratch = Scratch::default();
        let ranges = blocks(&bz);
        let (from, to) = ranges[0];
        let mut expect = Vec::new();
        decode(&bz, from, to, 100_000, &mut scratch, &mut expect).unwrap();
        assert!(expect == data[..expect.len()]);
        let mut declined = 0;
        for bit in (from + 48..to).step_by(97) {
            let mut bad = bz.clone();
            bad[(bit / 8) as usize] ^= 0x80 >> (bit % 8);
            let mut out = vec![1, 2, 3];
            match decode(&bad, from, to, 100_000, &mut scratch, &mut out) {
                None => {
                    assert_eq!(out, [1, 2, 3], "declined blocks leave the output alone");
                    declined += 1;
                }
                Some(()) => assert!(out[3..] == expect[..], "bit {bit} decoded to other bytes"),
            }
        }
        assert!(declined > 50, "{declined} flips declined");
        // Random bytes overwritten anywhere in the block: never a panic, never other bytes.
        let mut r = xorshift(11);
        for _ in 0..300 {
            let mut bad = bz.clone();
            for _ in 0..1 + r() % 8 {
                let at = (from / 8 + 6 + r() % ((to - from) / 8 - 6)) as usize;
                bad[at] = r() as u8;
            }
            let mut out = Vec::new();
            if decode(&bad, from, to, 100_000, &mut scratch, &mut out).is_some() {
                assert!(out == expect);
            }
        }
        // The randomised flag (bzip2 0.9.0) is left to libbzip2.
        let flag = from + 48 + 32;
        let mut randomised = bz.clone();
        randomised[(flag / 8) as usize] ^= 0x80 >> (flag % 8);
        assert!(decode(&randomised, from, to, 100_000, &mut scratch, &mut Vec::new()).is_none());
        // Cut short: declined.
        assert!(decode(&bz, from, (from + to) / 2, 100_000, &mut scratch, &mut Vec::new()).is_none());
    }

    #[test]
    fn a_vector_of_two_cycles_is_refused() {
        // psi = (0 1 2)(3 4): bytes 'a'..'e'.
        let psi = [1u32, 2, 0, 4, 3];
        let mut fwd: Vec<u32> = psi.iter().enumerate().map(|(i, &p)| (p << 8) | u32::from(b'a' + i as u8)).collect();
        fwd.push(0);
        let mut lanes = Default::default();
        let mut text = [0u8; 5];
        assert!(rebuild_text(&mut fwd.clone(), 0, &mut text, &mut lanes).is_none());
        // One cycle (0 1 2 3 4): the text from position 0 on.
        let one: Vec<u32> = (0..5u32).map(|i| (((i + 1) % 5) << 8) | u32::from(b'a' + i as u8)).chain([0]).collect();
        rebuild_text(&mut one.clone(), 2, &mut text, &mut lanes).unwrap();
        assert_eq!(&text, b"cdeab");
    }
}
