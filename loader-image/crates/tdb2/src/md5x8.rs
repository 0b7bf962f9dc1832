//! MD5 of many short messages at once, eight at a time in the lanes of AVX2 registers: the
//! node table's key is an MD5 per distinct term (about 2.3 million of about 250 bytes for
//! BSBM x10), and one serial MD5 after another was a twentieth of a load's CPU. Without AVX2
//! (checked at run time), or on other CPUs, each message goes through the md-5 crate.

use md5::{Digest, Md5};

/// `out[i]` = MD5 of `messages[i]`.
pub fn md5_many(messages: &[&[u8]], out: &mut [[u8; 16]]) {
    assert_eq!(messages.len(), out.len(), "one digest per message");
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: AVX2 is present (checked just above).
        unsafe { x8::md5_many(messages, out) };
        return;
    }
    one_by_one(messages, out);
}

fn one_by_one(messages: &[&[u8]], out: &mut [[u8; 16]]) {
    for (m, o) in messages.iter().zip(out.iter_mut()) {
        *o = Md5::digest(m).into();
    }
}

#[cfg(target_arch = "x86_64")]
mod x8 {
    use std::arch::x86_64::*;

    const LANES: usize = 8;
    const IV: [u32; 4] = [0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476];

    /// Block `k` of `m` as MD5 pads it: the message, 0x80, zeros, and in the last block the
    /// length in bits (little-endian).
    fn padded_block(m: &[u8], k: usize, blocks: usize, out: &mut [u8; 64]) {
        let start = 64 * k;
        *out = [0; 64];
        if start < m.len() {
            let n = (m.len() - start).min(64);
            out[..n].copy_from_slice(&m[start..start + n]);
        }
        if (start..start + 64).contains(&m.len()) {
            out[m.len() - start] = 0x80;
        }
        if k + 1 == blocks {
            out[56..].copy_from_slice(&((m.len() as u64) * 8).to_le_bytes());
        }
    }

    /// A lane's message: its index, its block count, the next block.
    #[derive(Clone, Copy)]
    struct Lane {
        msg: usize,
        blocks: usize,
        next: usize,
    }

    /// The digests, eight messages at a time; a lane that finishes its message takes the
    /// next one. Safety: the CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn md5_many(messages: &[&[u8]], out: &mut [[u8; 16]]) {
        let mut lanes: [Option<Lane>; LANES] = [None; LANES];
        let mut state = [[0u32; LANES]; 4];
        let mut words = [[0u32; LANES]; 16];
        let mut block = [0u8; 64];
        let mut next_msg = 0;
        loop {
            // Free lanes take the next messages, starting from the initial state.
            for (l, lane) in lanes.iter_mut().enumerate() {
                if lane.is_none() && next_msg < messages.len() {
                    *lane = Some(Lane { msg: next_msg, blocks: (messages[next_msg].len() + 8) / 64 + 1, next: 0 });
                    for (s, iv) in state.iter_mut().zip(IV) {
                        s[l] = iv;
                    }
                    next_msg += 1;
                }
            }
            if lanes.iter().all(Option::is_none) {
                return;
            }
            for (l, lane) in lanes.iter().enumerate() {
                match lane {
                    Some(ln) => padded_block(messages[ln.msg], ln.next, ln.blocks, &mut block),
                    None => block = [0; 64],
                }
                for (j, w) in words.iter_mut().enumerate() {
                    w[l] = u32::from_le_bytes(block[4 * j..4 * j + 4].try_into().expect("4 bytes"));
                }
            }
            // SAFETY: AVX2 is enabled for this function.
            unsafe { compress(&mut state, &words) };
            for (l, lane) in lanes.iter_mut().enumerate() {
                if let Some(ln) = lane {
                    ln.next += 1;
                    if ln.next == ln.blocks {
                        for (j, s) in state.iter().enumerate() {
                            out[ln.msg][4 * j..4 * j + 4].copy_from_slice(&s[l].to_le_bytes());
                        }
                        *lane = None;
                    }
                }
            }
        }
    }

    /// One block in each lane: the 64 steps of MD5 on eight states at once.
    #[target_feature(enable = "avx2")]
    unsafe fn compress(state: &mut [[u32; LANES]; 4], words: &[[u32; LANES]; 16]) {
        // SAFETY (every load and store below): the arrays are 32 bytes each, unaligned access.
        let load = |x: &[u32; LANES]| unsafe { _mm256_loadu_si256(x.as_ptr().cast()) };
        let m: [__m256i; 16] = std::array::from_fn(|j| load(&words[j]));
        let (a0, b0, c0, d0) = (load(&state[0]), load(&state[1]), load(&state[2]), load(&state[3]));
        let (mut a, mut b, mut c, mut d) = (a0, b0, c0, d0);
        macro_rules! f {
            ($b:expr, $c:expr, $d:expr) => {
                _mm256_xor_si256($d, _mm256_and_si256($b, _mm256_xor_si256($c, $d)))
            };
        }
        macro_rules! g {
            ($b:expr, $c:expr, $d:expr) => {
                _mm256_xor_si256($c, _mm256_and_si256($d, _mm256_xor_si256($b, $c)))
            };
        }
        macro_rules! h {
            ($b:expr, $c:expr, $d:expr) => {
                _mm256_xor_si256($b, _mm256_xor_si256($c, $d))
            };
        }
        macro_rules! i {
            ($b:expr, $c:expr, $d:expr) => {
                _mm256_xor_si256($c, _mm256_or_si256($b, _mm256_xor_si256($d, _mm256_set1_epi32(-1))))
            };
        }
        macro_rules! step {
            ($f:ident, $a:ident, $b:ident, $c:ident, $d:ident, $m:expr, $k:expr, $s:expr) => {
                let t = _mm256_add_epi32(
                    _mm256_add_epi32($a, $f!($b, $c, $d)),
                    _mm256_add_epi32($m, _mm256_set1_epi32($k as u32 as i32)),
                );
                $a = _mm256_add_epi32(
                    $b,
                    _mm256_or_si256(_mm256_slli_epi32::<$s>(t), _mm256_srli_epi32::<{ 32 - $s }>(t)),
                );
            };
        }
        step!(f, a, b, c, d, m[0], 0xd76aa478, 7);
        step!(f, d, a, b, c, m[1], 0xe8c7b756, 12);
        step!(f, c, d, a, b, m[2], 0x242070db, 17);
        step!(f, b, c, d, a, m[3], 0xc1bdceee, 22);
        step!(f, a, b, c, d, m[4], 0xf57c0faf, 7);
        step!(f, d, a, b, c, m[5], 0x4787c62a, 12);
        step!(f, c, d, a, b, m[6], 0xa8304613, 17);
        step!(f, b, c, d, a, m[7], 0xfd469501, 22);
        step!(f, a, b, c, d, m[8], 0x698098d8, 7);
        step!(f, d, a, b, c, m[9], 0x8b44f7af, 12);
        step!(f, c, d, a, b, m[10], 0xffff5bb1, 17);
        step!(f, b, c, d, a, m[11], 0x895cd7be, 22);
        step!(f, a, b, c, d, m[12], 0x6b901122, 7);
        step!(f, d, a, b, c, m[13], 0xfd987193, 12);
        step!(f, c, d, a, b, m[14], 0xa679438e, 17);
        step!(f, b, c, d, a, m[15], 0x49b40821, 22);
        step!(g, a, b, c, d, m[1], 0xf61e2562, 5);
        step!(g, d, a, b, c, m[6], 0xc040b340, 9);
        step!(g, c, d, a, b, m[11], 0x265e5a51, 14);
        step!(g, b, c, d, a, m[0], 0xe9b6c7aa, 20);
        step!(g, a, b, c, d, m[5], 0xd62f105d, 5);
        step!(g, d, a, b, c, m[10], 0x02441453, 9);
        step!(g, c, d, a, b, m[15], 0xd8a1e681, 14);
        step!(g, b, c, d, a, m[4], 0xe7d3fbc8, 20);
        step!(g, a, b, c, d, m[9], 0x21e1cde6, 5);
        step!(g, d, a, b, c, m[14], 0xc33707d6, 9);
        step!(g, c, d, a, b, m[3], 0xf4d50d87, 14);
        step!(g, b, c, d, a, m[8], 0x455a14ed, 20);
        step!(g, a, b, c, d, m[13], 0xa9e3e905, 5);
        step!(g, d, a, b, c, m[2], 0xfcefa3f8, 9);
        step!(g, c, d, a, b, m[7], 0x676f02d9, 14);
        step!(g, b, c, d, a, m[12], 0x8d2a4c8a, 20);
        step!(h, a, b, c, d, m[5], 0xfffa3942, 4);
        step!(h, d, a, b, c, m[8], 0x8771f681, 11);
        step!(h, c, d, a, b, m[11], 0x6d9d6122, 16);
        step!(h, b, c, d, a, m[14], 0xfde5380c, 23);
        step!(h, a, b, c, d, m[1], 0xa4beea44, 4);
        step!(h, d, a, b, c, m[4], 0x4bdecfa9, 11);
        step!(h, c, d, a, b, m[7], 0xf6bb4b60, 16);
        step!(h, b, c, d, a, m[10], 0xbebfbc70, 23);
        step!(h, a, b, c, d, m[13], 0x289b7ec6, 4);
        step!(h, d, a, b, c, m[0], 0xeaa127fa, 11);
        step!(h, c, d, a, b, m[3], 0xd4ef3085, 16);
        step!(h, b, c, d, a, m[6], 0x04881d05, 23);
        step!(h, a, b, c, d, m[9], 0xd9d4d039, 4);
        step!(h, d, a, b, c, m[12], 0xe6db99e5, 11);
        step!(h, c, d, a, b, m[15], 0x1fa27cf8, 16);
        step!(h, b, c, d, a, m[2], 0xc4ac5665, 23);
        step!(i, a, b, c, d, m[0], 0xf4292244, 6);
        step!(i, d, a, b, c, m[7], 0x432aff97, 10);
        step!(i, c, d, a, b, m[14], 0xab9423a7, 15);
        step!(i, b, c, d, a, m[5], 0xfc93a039, 21);
        step!(i, a, b, c, d, m[12], 0x655b59c3, 6);
        step!(i, d, a, b, c, m[3], 0x8f0ccc92, 10);
        step!(i, c, d, a, b, m[10], 0xffeff47d, 15);
        step!(i, b, c, d, a, m[1], 0x85845dd1, 21);
        step!(i, a, b, c, d, m[8], 0x6fa87e4f, 6);
        step!(i, d, a, b, c, m[15], 0xfe2ce6e0, 10);
        step!(i, c, d, a, b, m[6], 0xa3014314, 15);
        step!(i, b, c, d, a, m[13], 0x4e0811a1, 21);
        step!(i, a, b, c, d, m[4], 0xf7537e82, 6);
        step!(i, d, a, b, c, m[11], 0xbd3af235, 10);
        step!(i, c, d, a, b, m[2], 0x2ad7d2bb, 15);
        step!(i, b, c, d, a, m[9], 0xeb86d391, 21);
        let store = |x: &mut [u32; LANES], v: __m256i| unsafe { _mm256_storeu_si256(x.as_mut_ptr().cast(), v) };
        store(&mut state[0], _mm256_add_epi32(a, a0));
        store(&mut state[1], _mm256_add_epi32(b, b0));
        store(&mut state[2], _mm256_add_epi32(c, c0));
        store(&mut state[3], _mm256_add_epi32(d, d0));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every length around the block and padding boundaries, and long messages, in batches
    /// that are not a multiple of the lanes: the same digests as the md-5 crate.
    #[test]
    fn digests_equal_the_md5_crate() {
        let data: Vec<u8> = (0..3000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        let mut msgs: Vec<&[u8]> = (0..200).map(|n| &data[n..n + n]).collect();
        msgs.extend([
            &data[..1000],
            &data[7..2999],
            &data[..0],
            &data[..55],
            &data[..56],
            &data[..64],
            &data[..119],
            &data[..120],
        ]);
        for batch in [1, 7, 8, 9, msgs.len()] {
            let msgs = &msgs[..batch];
            let mut out = vec![[0u8; 16]; msgs.len()];
            md5_many(msgs, &mut out);
            let mut serial = vec![[0u8; 16]; msgs.len()];
            one_by_one(msgs, &mut serial);
            for ((m, o), s) in msgs.iter().zip(&out).zip(&serial) {
                assert_eq!(*o, <[u8; 16]>::from(Md5::digest(m)), "length {}", m.len());
                assert_eq!(*s, *o, "the fallback, length {}", m.len());
            }
        }
    }
}
