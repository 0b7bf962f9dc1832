//! Sizes as Kubernetes quantities, meaning what they mean in a pod spec: a plain number is
//! bytes; `k`, `M`, `G`, `T`, `P`, `E` are powers of 1000 (also `kB`, `MB`, `GB`, `TB`);
//! `Ki`, `Mi`, `Gi`, `Ti`, `Pi`, `Ei` powers of 1024 (also `KiB`, `MiB`, `GiB`, `TiB`); a
//! decimal fraction is allowed (`1.5Gi`). The fetch step reads the same grammar.

/// The suffixes and their multipliers.
const SUFFIXES: [(&str, u128); 22] = [
    ("", 1),
    ("k", 1_000),
    ("kB", 1_000),
    ("M", 1_000_000),
    ("MB", 1_000_000),
    ("G", 1_000_000_000),
    ("GB", 1_000_000_000),
    ("T", 1_000_000_000_000),
    ("TB", 1_000_000_000_000),
    ("P", 1_000_000_000_000_000),
    ("E", 1_000_000_000_000_000_000),
    ("Ki", 1 << 10),
    ("KiB", 1 << 10),
    ("Mi", 1 << 20),
    ("MiB", 1 << 20),
    ("Gi", 1 << 30),
    ("GiB", 1 << 30),
    ("Ti", 1 << 40),
    ("TiB", 1 << 40),
    ("Pi", 1 << 50),
    ("Ei", 1 << 60),
    ("PB", 1_000_000_000_000_000),
];

/// Parses a quantity of bytes (a fraction of a byte rounds up, as Kubernetes does).
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let invalid = || {
        format!(
            "{s:?} is not a size: a number of bytes, or with a suffix k, M, G, T, P, E (powers of 1000; also kB, MB, \
             GB, TB) or Ki, Mi, Gi, Ti, Pi, Ei (powers of 1024; also KiB, MiB, GiB, TiB), e.g. 512Mi, 1.5Gi, 800M"
        )
    };
    let number_end = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
    let (number, suffix) = s.split_at(number_end);
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() || (number.contains('.') && fraction.is_empty()) || fraction.contains('.') {
        return Err(invalid());
    }
    let multiplier = SUFFIXES.iter().find(|(name, _)| *name == suffix).map(|(_, m)| *m).ok_or_else(invalid)?;
    let too_large = || format!("{s:?} is too large a size");
    let digits: u128 = format!("{whole}{fraction}").parse().map_err(|_| too_large())?;
    let scale = 10u128.checked_pow(fraction.len() as u32).ok_or_else(too_large)?;
    let bytes = digits.checked_mul(multiplier).ok_or_else(too_large)?.div_ceil(scale);
    u64::try_from(bytes).map_err(|_| too_large())
}

#[cfg(test)]
mod tests {
    use super::parse_bytes;

    #[test]
    fn decimal_suffixes_are_powers_of_1000() {
        assert_eq!(parse_bytes("64M"), Ok(64_000_000));
        assert_eq!(parse_bytes("64MB"), Ok(64_000_000));
        assert_eq!(parse_bytes("2k"), Ok(2_000));
        assert_eq!(parse_bytes("2kB"), Ok(2_000));
        assert_eq!(parse_bytes("3G"), Ok(3 * 10u64.pow(9)));
        assert_eq!(parse_bytes("1T"), Ok(10u64.pow(12)));
        assert_eq!(parse_bytes("1P"), Ok(10u64.pow(15)));
        assert_eq!(parse_bytes("1E"), Ok(10u64.pow(18)));
    }

    #[test]
    fn binary_suffixes_are_powers_of_1024() {
        assert_eq!(parse_bytes("64Mi"), Ok(64 << 20));
        assert_eq!(parse_bytes("64MiB"), Ok(64 << 20));
        assert_eq!(parse_bytes("4Ki"), Ok(4 << 10));
        assert_eq!(parse_bytes("4GiB"), Ok(4 << 30));
        assert_eq!(parse_bytes("2Ti"), Ok(2 << 40));
        assert_eq!(parse_bytes("1Pi"), Ok(1 << 50));
        assert_eq!(parse_bytes("1Ei"), Ok(1 << 60));
    }

    #[test]
    fn plain_numbers_are_bytes_and_fractions_are_exact() {
        assert_eq!(parse_bytes("1000000"), Ok(1_000_000));
        assert_eq!(parse_bytes("1.5Gi"), Ok(3 << 29));
        assert_eq!(parse_bytes("0.5M"), Ok(500_000));
        assert_eq!(parse_bytes("1.0000001"), Ok(2), "a fraction of a byte rounds up");
    }

    #[test]
    fn anything_else_is_refused() {
        for bad in
            ["", "M", "12 parsecs", "64m", "64K", "64mb", "64 Mi", " 64Mi", "1.5.1G", "1.G", ".5G", "-1", "1e3", "64B"]
        {
            assert!(parse_bytes(bad).is_err(), "{bad:?} accepted");
        }
        assert!(parse_bytes("19E").is_err(), "beyond u64");
        assert_eq!(parse_bytes("18E"), Ok(18 * 10u64.pow(18)));
    }
}
