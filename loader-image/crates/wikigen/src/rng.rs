//! A small seeded generator (xoshiro256**) and a 128-bit content hash, both defined by integer
//! arithmetic only, so that the same seed gives the same bytes on every machine (no `powf`,
//! `ln` or other libm function, whose last bit may differ between platforms).

#[derive(Clone)]
pub struct Rng([u64; 4]);

fn splitmix(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Rng {
    /// A generator for one stream, e.g. (seed, segment number).
    pub fn new(seed: u64, stream: u64) -> Rng {
        let mut x = seed ^ stream.wrapping_mul(0xD605_BBB5_8C8A_BBFD);
        Rng([splitmix(&mut x), splitmix(&mut x), splitmix(&mut x), splitmix(&mut x)])
    }

    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.0;
        let result = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform in `0..n` (n > 0), by multiply-shift.
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }

    /// Uniform in `lo..=hi` (signed).
    pub fn irange(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo) as u64 + 1) as i64
    }

    /// True with probability `per_million` / 1,000,000.
    pub fn ppm(&mut self, per_million: u32) -> bool {
        self.below(1_000_000) < per_million as u64
    }

    /// True with probability `pct` / 100.
    pub fn pct(&mut self, pct: u32) -> bool {
        self.below(100) < pct as u64
    }

    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len() as u64) as usize]
    }

    pub fn pick_str(&mut self, xs: &[&'static str]) -> &'static str {
        xs[self.below(xs.len() as u64) as usize]
    }

    /// A count from a table of (weight, lo, hi) buckets: a bucket by weight, then uniform in it.
    /// Heavy tails are a few buckets with falling weights.
    pub fn tail(&mut self, table: &[(u32, u32, u32)]) -> u32 {
        let total: u64 = table.iter().map(|b| b.0 as u64).sum();
        let mut x = self.below(total);
        for &(w, lo, hi) in table {
            if x < w as u64 {
                return self.range(lo as u64, hi as u64) as u32;
            }
            x -= w as u64;
        }
        unreachable!("weights sum to total")
    }
}

/// Cumulative integer weights, sampled by binary search.
pub struct Weighted {
    cum: Vec<u64>,
}

impl Weighted {
    pub fn new(weights: impl IntoIterator<Item = u64>) -> Weighted {
        let mut acc = 0;
        let cum = weights
            .into_iter()
            .map(|w| {
                acc += w.max(1);
                acc
            })
            .collect();
        Weighted { cum }
    }

    pub fn sample(&self, rng: &mut Rng) -> usize {
        let x = rng.below(*self.cum.last().expect("non-empty"));
        self.cum.partition_point(|&c| c <= x)
    }
}

fn fmix(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    k ^= k >> 33;
    k = k.wrapping_mul(0xC4CE_B9FE_1A85_EC53);
    k ^ (k >> 33)
}

/// A 192-bit digest of bytes (three FNV-1a lanes, each finalised): the stand-in for the dump's
/// MD5 value-node and SHA-1 reference hashes, equal for equal content across the whole dump.
pub fn digest(bytes: &[u8]) -> [u64; 3] {
    let mut h = [0xCBF2_9CE4_8422_2325u64, 0x8422_2325_CBF2_9CE4, 0x1000_0000_01B3_5A5A];
    for &b in bytes {
        for (i, lane) in h.iter_mut().enumerate() {
            *lane = (*lane ^ b as u64).wrapping_mul(0x0000_0100_0000_01B3 + 2 * i as u64);
        }
    }
    let n = bytes.len() as u64;
    [fmix(h[0] ^ n), fmix(h[1] ^ h[0].rotate_left(17)), fmix(h[2] ^ h[1].rotate_left(29))]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_stream_gives_the_same_numbers() {
        let a: Vec<u64> = (0..5)
            .map({
                let mut r = Rng::new(42, 7);
                move |_| r.next_u64()
            })
            .collect();
        let mut r = Rng::new(42, 7);
        assert_eq!(a, (0..5).map(|_| r.next_u64()).collect::<Vec<_>>());
        let mut other = Rng::new(42, 8);
        assert_ne!(a[0], other.next_u64());
    }

    #[test]
    fn below_and_tail_stay_in_range() {
        let mut r = Rng::new(1, 1);
        for _ in 0..10_000 {
            assert!(r.below(7) < 7);
            let t = r.tail(&[(90, 1, 3), (10, 50, 60)]);
            assert!((1..=3).contains(&t) || (50..=60).contains(&t));
        }
        let w = Weighted::new([5, 0, 1]);
        for _ in 0..1000 {
            assert!(w.sample(&mut r) < 3);
        }
    }

    #[test]
    fn digest_depends_on_every_byte() {
        assert_ne!(digest(b"ab"), digest(b"ba"));
        assert_ne!(digest(b""), digest(b"\0"));
        assert_eq!(digest(b"x"), digest(b"x"));
    }
}
