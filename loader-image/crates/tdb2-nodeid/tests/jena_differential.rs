//! Differential test: `inline_literal` and `decode_inline` against unmodified Jena 5.6.0.
//!
//! A deterministic corpus of typed literals (boundaries, random values, whitespace, signs,
//! leading zeros, exponents, fractions, timezones and invalid forms for every inlinable XSD
//! datatype) is fed once to `jena-oracle/InlineOracle.java`, which builds each literal the way
//! RIOT's N-Triples parser does and asks `NodeIdInline.inline` (the function tdbloader, xloader
//! and the query engine use). Every answer must equal ours, and for inlined ids our decoding
//! must equal `NodeIdInline.extract`.
//!
//! Jena is found through `JENA_HOME`, else
//! `${RDF_BULKLOAD_CACHE:-$HOME/.cache/rdf-bulkload}/jena-5.6.0/apache-jena-5.6.0`
//! (installed by `hack/install-jena.sh`). Without Jena (or a JDK) the test fails when `CI=true`
//! and is skipped, with the reason printed, otherwise.
//!
//! `inline_literal_matches_jena_6_2_0` does the same for `JenaVersion::V6` against Jena 6.2.0
//! (`JENA_VERSION=6.2.0 hack/install-jena.sh`, in the same cache), compiled and run with a Java
//! 21+ JDK: `RDF_BULKLOAD_JAVA21_HOME`, else `/usr/lib/jvm/temurin-25-jdk-amd64`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use tdb2_nodeid::{decode_inline, JenaVersion, NodeId, XSD};

// ------------------------------------------------------------------------------- Jena plumbing

fn jena_home() -> Result<PathBuf, String> {
    let candidate = match std::env::var_os("JENA_HOME") {
        Some(h) => PathBuf::from(h),
        None => {
            let cache = match std::env::var_os("RDF_BULKLOAD_CACHE") {
                Some(c) => PathBuf::from(c),
                None => PathBuf::from(std::env::var_os("HOME").ok_or("HOME is not set")?).join(".cache/rdf-bulkload"),
            };
            cache.join("jena-5.6.0/apache-jena-5.6.0")
        }
    };
    if candidate.join("lib").is_dir() {
        Ok(candidate)
    } else {
        Err(format!("no Jena distribution at {} (run hack/install-jena.sh or set JENA_HOME)", candidate.display()))
    }
}

fn skip_or_fail(reason: &str) {
    if std::env::var("CI").map(|v| v == "true").unwrap_or(false) {
        panic!("jena_differential: {reason} (CI=true, so this is a failure)");
    }
    eprintln!("SKIPPED jena_differential: {reason}");
}

/// The cache's Jena 6.2.0 and a Java 21+ JDK home for it.
fn jena6_home() -> Result<(PathBuf, PathBuf), String> {
    let cache = match std::env::var_os("RDF_BULKLOAD_CACHE") {
        Some(c) => PathBuf::from(c),
        None => PathBuf::from(std::env::var_os("HOME").ok_or("HOME is not set")?).join(".cache/rdf-bulkload"),
    };
    let jena = cache.join("jena-6.2.0/apache-jena-6.2.0");
    if !jena.join("lib").is_dir() {
        return Err(format!("no Jena 6.2.0 at {} (run JENA_VERSION=6.2.0 hack/install-jena.sh)", jena.display()));
    }
    let jdk = std::env::var_os("RDF_BULKLOAD_JAVA21_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/lib/jvm/temurin-25-jdk-amd64"));
    if !jdk.join("bin/javac").exists() {
        return Err(format!("no Java 21+ JDK at {} (set RDF_BULKLOAD_JAVA21_HOME)", jdk.display()));
    }
    Ok((jena, jdk))
}

/// `java` or `javac` of `jdk`, else the one on PATH.
fn jdk_tool(jdk: Option<&Path>, tool: &str) -> PathBuf {
    jdk.map_or_else(|| PathBuf::from(tool), |j| j.join("bin").join(tool))
}

/// Compile the oracle into the cargo target dir; returns the class directory.
fn compile_oracle(jena: &Path, jdk: Option<&Path>, name: &str) -> Result<PathBuf, String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("jena-oracle/InlineOracle.java");
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::create_dir_all(&out).map_err(|e| e.to_string())?;
    let cp = format!("{}/lib/*", jena.display());
    let status = Command::new(jdk_tool(jdk, "javac"))
        .args(["-nowarn", "-d"])
        .arg(&out)
        .args(["-cp", &cp])
        .arg(&src)
        .status()
        .map_err(|e| format!("cannot run javac: {e}"))?;
    if !status.success() {
        return Err(format!("javac failed on {}", src.display()));
    }
    Ok(out)
}

fn escape(lex: &str) -> String {
    let mut s = String::with_capacity(lex.len());
    for c in lex.chars() {
        match c {
            '\t' => s.push_str("\\t"),
            '\n' => s.push_str("\\n"),
            '\r' => s.push_str("\\r"),
            '\\' => s.push_str("\\\\"),
            _ => s.push(c),
        }
    }
    s
}

fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match it.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('\\') => out.push('\\'),
            Some(o) => {
                out.push('\\');
                out.push(o)
            }
            None => out.push('\\'),
        }
    }
    out
}

#[derive(Debug, PartialEq)]
enum JenaAnswer {
    Inline(u64, String, String),
    NotInline,
    /// Building the literal threw: Jena's parser aborts on it.
    Abort,
}

fn run_oracle(jena: &Path, jdk: Option<&Path>, classes: &Path, cases: &[(String, String)]) -> Vec<JenaAnswer> {
    let input_path = classes.with_extension("input.tsv");
    let mut input = String::new();
    for (lex, dt) in cases {
        writeln!(input, "{}\t{}", escape(lex), dt).unwrap();
    }
    std::fs::write(&input_path, input).unwrap();
    let cp = format!("{}:{}/lib/*", classes.display(), jena.display());
    let out = Command::new(jdk_tool(jdk, "java"))
        .args(["-Xshare:auto", "-XX:TieredStopAtLevel=1", "-cp", &cp, "InlineOracle"])
        .stdin(std::fs::File::open(&input_path).unwrap())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped()) // NodeIdInline logs a warning per failed literal; not interesting
        .output()
        .expect("run java");
    assert!(out.status.success(), "oracle failed: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).expect("oracle output is UTF-8");
    let answers: Vec<JenaAnswer> = text
        .lines()
        .map(|l| match l {
            "-" => JenaAnswer::NotInline,
            "!" => JenaAnswer::Abort,
            _ => {
                let mut f = l.splitn(3, '\t');
                let hex = f.next().unwrap();
                let lex = unescape(f.next().expect("lexical"));
                let dt = f.next().expect("datatype").to_string();
                JenaAnswer::Inline(u64::from_str_radix(hex, 16).expect("hex"), lex, dt)
            }
        })
        .collect();
    assert_eq!(answers.len(), cases.len(), "oracle answered a different number of lines");
    answers
}

// ------------------------------------------------------------------------------- corpus

/// splitmix64: deterministic, dependency-free.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len() as u64) as usize]
    }
    fn digits(&mut self, n: usize) -> String {
        (0..n).map(|_| (b'0' + self.below(10) as u8) as char).collect()
    }
}

const WS: &[&str] = &["", " ", "  ", "\t", "\n", "\r", " \t\r\n", "\u{b}", "\u{a0}"];

struct Corpus {
    cases: Vec<(String, String)>,
    rng: Rng,
}

impl Corpus {
    fn add(&mut self, lex: impl Into<String>, local: &str) {
        self.cases.push((lex.into(), format!("{XSD}{local}")));
    }
    /// The form itself plus a few whitespace-wrapped variants.
    fn add_ws(&mut self, lex: &str, local: &str) {
        self.add(lex, local);
        for _ in 0..2 {
            let pre = *self.rng.pick(WS);
            let post = *self.rng.pick(WS);
            self.add(format!("{pre}{lex}{post}"), local);
        }
    }
}

const INT_TYPES: &[(&str, i128, i128)] = &[
    ("integer", i128::MIN, i128::MAX),
    ("positiveInteger", 1, i128::MAX),
    ("negativeInteger", i128::MIN, -1),
    ("nonNegativeInteger", 0, i128::MAX),
    ("nonPositiveInteger", i128::MIN, 0),
    ("long", i64::MIN as i128, i64::MAX as i128),
    ("int", i32::MIN as i128, i32::MAX as i128),
    ("short", i16::MIN as i128, i16::MAX as i128),
    ("byte", i8::MIN as i128, i8::MAX as i128),
    ("unsignedLong", 0, u64::MAX as i128),
    ("unsignedInt", 0, u32::MAX as i128),
    ("unsignedShort", 0, u16::MAX as i128),
    ("unsignedByte", 0, u8::MAX as i128),
];

fn integers(c: &mut Corpus) {
    let b55 = 1i128 << 55;
    let mut values: Vec<i128> = vec![0, 1, -1, 2, 42, 99, 100, 1000, b55 - 1, b55, b55 + 1, -b55, -b55 - 1, -b55 + 1];
    for &(_, lo, hi) in INT_TYPES {
        for v in [lo, hi] {
            if v.unsigned_abs() < 1u128 << 70 {
                values.extend([v - 1, v, v + 1]);
            }
        }
    }
    values.extend([
        9_999_999_999_999_999_999,
        -999_999_999_999_999_999,
        999_999_999_999_999_999,
        1_000_000_000_000_000_000,
    ]);
    for _ in 0..150 {
        let bits = c.rng.below(64) as u32;
        let v = (c.rng.next() >> (63 - bits.min(63))) as i128;
        values.push(if c.rng.below(2) == 0 { v } else { -v });
    }
    let fixed_invalid = [
        "", " ", "+", "-", "+-1", "--1", "1.0", "1.", ".1", "1e3", "abc", "0x10", "1 000", "1_000", "\u{ff11}", "١",
        "12a", "++1", "1-", "٣", "1\u{0}", "NaN", "INF",
    ];
    for &(t, _, _) in INT_TYPES {
        for &v in &values {
            let s = v.to_string();
            c.add_ws(&s, t);
            if v >= 0 {
                c.add(format!("+{s}"), t);
            }
            // Leading zeros: push the raw length across the 19-character limit.
            let zeros = c.rng.below(6) as usize;
            let z = "0".repeat(zeros);
            let (sign, mag) = if v < 0 { ("-", (-v).to_string()) } else { ("", s.clone()) };
            c.add(format!("{sign}{z}{mag}"), t);
            c.add(format!("+{z}{mag}"), t);
        }
        // Exactly 19 and 20 raw characters, with padding by zeros or whitespace.
        for width in [18usize, 19, 20, 21] {
            c.add(format!("{:0>width$}", 42), t);
            c.add(format!("+{:0>w$}", 42, w = width - 1), t);
            c.add(format!("-{:0>w$}", 42, w = width - 1), t);
            c.add(format!("{:>width$}", 42), t);
            c.add(format!("{:<width$}", 42), t);
            c.add(format!("{:0>width$}", 0), t);
        }
        for s in ["-0", "-00", "+0", "+00", "0", "00", "-1", "+1"] {
            c.add_ws(s, t);
        }
        for s in fixed_invalid {
            c.add(s, t);
        }
    }
}

fn decimals(c: &mut Corpus) {
    let t = "decimal";
    let b47 = 1i128 << 47;
    let fixed = [
        "0",
        "0.0",
        "-0.0",
        "-0",
        "+0",
        "1.",
        ".5",
        "+.5",
        "-.5",
        "-.0",
        ".",
        "+.",
        "-.",
        "+",
        "-",
        "",
        "1.50",
        "1.5",
        "-123.456",
        "00001.5000",
        "1.0e0",
        "1e2",
        "1,5",
        "1..5",
        "1.5.",
        " 1.5 ",
        "1 .5",
        "0.000",
        "000",
        ".000",
        "5.",
        "-5.",
        "+5.",
        "0.5",
        "INF",
        "NaN",
        "1.5d",
    ];
    for s in fixed {
        c.add_ws(s, t);
    }
    for v in [
        b47 - 2,
        b47 - 1,
        b47,
        b47 + 1,
        -b47 - 1,
        -b47,
        -b47 + 1,
        999_999_999_999_999,
        99_999_999_999_999,
        140_737_488_355_328,
    ] {
        for scale in [0usize, 1, 3, 10, 14, 15, 16, 20] {
            let s = v.unsigned_abs().to_string();
            let sign = if v < 0 { "-" } else { "" };
            let body = if scale == 0 {
                s.clone()
            } else if s.len() > scale {
                format!("{}.{}", &s[..s.len() - scale], &s[s.len() - scale..])
            } else {
                format!("0.{}{}", "0".repeat(scale - s.len()), s)
            };
            c.add(format!("{sign}{body}"), t);
        }
    }
    // Scale around the 127 limit.
    for scale in [125usize, 126, 127, 128, 129, 200] {
        c.add(format!("0.{}1", "0".repeat(scale - 1)), t);
        c.add(format!("1.{}", "0".repeat(scale)), t);
        c.add(format!("-.{}", "0".repeat(scale)), t);
        c.add(format!("{}.{}", "0".repeat(30), "0".repeat(scale)), t);
    }
    for _ in 0..1500 {
        let int_len = c.rng.below(12) as usize;
        let frac_len = c.rng.below(12) as usize;
        let mut s = String::new();
        match c.rng.below(4) {
            0 => s.push('-'),
            1 => s.push('+'),
            _ => {}
        }
        s.push_str(&c.rng.digits(int_len));
        if frac_len > 0 || c.rng.below(3) == 0 {
            s.push('.');
            s.push_str(&c.rng.digits(frac_len));
        }
        if c.rng.below(8) == 0 {
            s.push_str(&"0".repeat(c.rng.below(6) as usize));
        }
        if c.rng.below(20) == 0 {
            let suffix: &&str = c.rng.pick(&["e5", "E-1", "x", " ", "."]);
            s.push_str(suffix);
        }
        c.add_ws(&s, t);
    }
}

fn floating(c: &mut Corpus) {
    let specials = [
        "INF",
        "+INF",
        "-INF",
        "NaN",
        "inf",
        "-inf",
        "+inf",
        "Infinity",
        "-Infinity",
        "nan",
        "-NaN",
        "+NaN",
        "NAN",
        "infinity",
        "0",
        "-0",
        "+0",
        "0.0",
        "-0.0",
        "1",
        "1.",
        ".5",
        "+.5",
        "-.5",
        ".",
        "+.",
        "-",
        "+",
        "",
        "e1",
        ".e1",
        "1e",
        "1e+",
        "1e-",
        "1.e1",
        "1E1",
        "1e+1",
        "1e-1",
        "1e+-1",
        "1.5.5",
        "1..5",
        "1d",
        "1f",
        "1.0D",
        "0x1p3",
        "0x10",
        "1_0",
        "1 0",
        "1,5",
        "１",
        "1.0e0",
        "123.456e10",
        "1e100",
        "1e78",
        "1e-100",
        "1e40",
        "-1e40",
        "1e-50",
        "1e-46",
        "1.4e-45",
        "7e-46",
        "1e2147483648",
        "1e-2147483649",
        "0e99999999999",
        "1e99999999999999999999",
        "4.9E-324",
        "2.5e-324",
        "2.4703282292062328e-324",
        "1.7976931348623157e308",
        "1.7976931348623159e308",
        "3.4028235e38",
        "3.4028236e38",
        "3.40282357e38",
        "1.00000017881393432617187499",
        "1.000000178813934326171875",
        "1.00000017881393432617187501",
        "1.15e77",
        "1.16e77",
        "3.45e-77",
        "3.46e-77",
        "3.4544674e-77",
        "1.157920892373162e77",
        "1.1579208923731618e77",
        "1.1579208923731620e77",
        "1.2e77",
        "2e-323",
        "00012.5000e0003",
    ];
    for t in ["double", "float"] {
        for s in specials {
            c.add_ws(s, t);
        }
    }
    // Powers of two around the 9-bit exponent window and the float range, written exactly enough.
    for e in (-330i32..=-240).chain(-160..=-120).chain(120..=130).chain(250..=260) {
        let v = 2f64.powi(e);
        for s in [format!("{v:e}"), format!("{:e}", v * 1.5), format!("{:e}", v * 0.999_999_999)] {
            c.add(s.clone(), "double");
            c.add(s, "float");
        }
        let neg = format!("-{:e}", v);
        c.add(neg, "double");
    }
    // Random doubles: shortest form, longer and shorter digit strings, plain and exponent forms.
    for _ in 0..3000 {
        let bits = c.rng.next();
        let v = f64::from_bits(bits);
        if !v.is_finite() {
            continue;
        }
        let t = if c.rng.below(2) == 0 { "double" } else { "float" };
        let s = match c.rng.below(5) {
            0 => format!("{v:e}"),
            1 => format!("{v:.17e}"),
            2 => format!("{v:.5e}"),
            3 => format!("{:e}", (v as f32) as f64),
            _ => format!("{v:.25e}"),
        };
        let e = *c.rng.pick(&["e", "E"]);
        c.add(s.replace("e", e), t);
    }
    // Random decimal strings in the interesting magnitude ranges.
    for _ in 0..3000 {
        let t = if c.rng.below(2) == 0 { "double" } else { "float" };
        let nd = 1 + c.rng.below(25) as usize;
        let d = c.rng.digits(nd);
        let exp = c.rng.below(700) as i64 - 350;
        let sign = *c.rng.pick(&["", "-", "+"]);
        let s = match c.rng.below(4) {
            0 => format!("{sign}{}.{}e{exp}", &d[..1], &d[1..]),
            1 => format!("{sign}{d}E{exp}"),
            2 => format!("{sign}.{d}e+{}", exp.abs()),
            _ => format!("{sign}{d}"),
        };
        c.add_ws(&s, t);
    }
    // Float halfway cases: the exact midpoint between adjacent floats, and just above / below.
    for _ in 0..1500 {
        let fb = (c.rng.next() as u32) & 0x7fff_ffff;
        let x = f32::from_bits(fb);
        let y = f32::from_bits(fb + 1);
        if !x.is_finite() || !y.is_finite() {
            continue;
        }
        let mid = (x as f64 + y as f64) / 2.0; // exact in binary64
        let exact = format!("{mid:.120e}"); // exact decimal expansion (then zero padding)
        let (m, e) = exact.split_once('e').unwrap();
        let m = m.trim_end_matches('0');
        c.add(format!("{m}e{e}"), "float");
        c.add(format!("{m}000001e{e}"), "float");
        // just below: decrement the last digit
        let mut below = m.as_bytes().to_vec();
        let last = below.len() - 1;
        if below[last].is_ascii_digit() && below[last] > b'0' {
            below[last] -= 1;
            below.extend_from_slice(b"9999999");
            c.add(format!("{}e{e}", String::from_utf8(below).unwrap()), "float");
        }
    }
}

fn booleans(c: &mut Corpus) {
    for s in [
        "true",
        "false",
        "1",
        "0",
        "TRUE",
        "True",
        "FALSE",
        "yes",
        "no",
        "01",
        "00",
        "10",
        "+1",
        "-0",
        "",
        " ",
        "t",
        "f",
        "true false",
        "1.0",
    ] {
        c.add_ws(s, "boolean");
    }
}

fn dates(c: &mut Corpus) {
    let years = [
        "0000",
        "0001",
        "1969",
        "1970",
        "2000",
        "2020",
        "2024",
        "2100",
        "7999",
        "8000",
        "9999",
        "10000",
        "12345",
        "999",
        "00001",
        "-0001",
        "-0000",
        "-2020",
        "999999999",
        "1000000000",
        "1000000005",
        "1000007999",
        "1000008000",
        "2000000000",
        "2000000005",
        "2147483647",
        "2147483648",
        "99999999999",
        "-1000000000",
        "-1000000005",
        "-2147483648",
        "-2147483649",
        "+2020",
        "20a0",
    ];
    let tzs = [
        "", "Z", "+00:00", "-00:00", "-00:15", "-00:30", "-00:45", "+00:15", "+00:30", "-01:00", "+05:30", "+05:45",
        "-05:45", "+05:07", "-03:20", "+14:00", "-14:00", "+14:15", "+13:59", "+13:45", "-13:45", "+15:00", "+12:60",
        "+1:00", "+01:0", "+0100", "z", "UTC", "ZZ", "Z ",
    ];
    let fracs = [
        "",
        ".0",
        ".000",
        ".5",
        ".120",
        ".123",
        ".1234",
        ".1230",
        ".12300000",
        ".001",
        ".999",
        ".9995",
        ".123456789",
        ".1234567890",
        ".2147483647",
        ".2147483648",
        ".21474836470",
        ".12345678901",
        ".0000000000000000000001",
        ".",
        ".1a",
        "..1",
    ];
    let underflow = format!(".{}1", "0".repeat(400));
    for _ in 0..6000 {
        let y = *c.rng.pick(&years);
        let mo = c.rng.below(14);
        let d = c.rng.below(33);
        let h = if c.rng.below(6) == 0 { 24 } else { c.rng.below(26) };
        let mi = if c.rng.below(10) == 0 { 60 } else { c.rng.below(60) };
        let s = if c.rng.below(10) == 0 { 60 } else { c.rng.below(60) };
        // Mostly valid components, some invalid.
        let (mo, d) = if c.rng.below(3) == 0 { (mo, d) } else { (1 + c.rng.below(12), 1 + c.rng.below(28)) };
        let (h, mi, s) =
            if c.rng.below(3) == 0 { (h, mi, s) } else { (c.rng.below(24), c.rng.below(60), c.rng.below(60)) };
        let frac: String = if c.rng.below(100) == 0 { underflow.clone() } else { c.rng.pick(&fracs).to_string() };
        let tz = *c.rng.pick(&tzs);
        let date = format!("{y}-{mo:02}-{d:02}");
        let dt = format!("{date}T{h:02}:{mi:02}:{s:02}{frac}{tz}");
        let t = *c.rng.pick(&["dateTime", "dateTimeStamp", "date"]);
        let lex = if t == "date" { format!("{date}{tz}") } else { dt };
        let lex = match c.rng.below(12) {
            0 => format!("{}{lex}", c.rng.pick(WS)),
            1 => format!("{lex}{}", c.rng.pick(WS)),
            2 => {
                // structural mutation: drop or change one character
                let mut b: Vec<char> = lex.chars().collect();
                let i = c.rng.below(b.len() as u64) as usize;
                if c.rng.below(2) == 0 {
                    b.remove(i);
                } else {
                    b[i] = *c.rng.pick(&['T', 't', ' ', '-', ':', '.', 'Z', '+', '0', '9']);
                }
                b.into_iter().collect()
            }
            _ => lex,
        };
        c.add(lex, t);
    }
    // Mostly valid and inlinable: random 4-digit years, any day of the month, quarter-hour and
    // other offsets, fractions of 0..4 digits.
    let good_tz = [
        "", "Z", "+00:00", "-00:00", "-00:15", "-00:30", "+01:00", "-05:00", "+05:30", "-09:45", "+14:00", "-14:00",
        "+03:07",
    ];
    for _ in 0..4000 {
        let y = c.rng.below(8100);
        let mo = 1 + c.rng.below(12);
        let d = 1 + c.rng.below(31);
        let (h, mi, s) = (c.rng.below(25), c.rng.below(60), c.rng.below(60));
        let nfrac = c.rng.below(5) as usize;
        let frac = if nfrac == 0 { String::new() } else { format!(".{}", c.rng.digits(nfrac)) };
        let tz = *c.rng.pick(&good_tz);
        let t = *c.rng.pick(&["dateTime", "dateTimeStamp", "date"]);
        let lex = if t == "date" {
            format!("{y:04}-{mo:02}-{d:02}{tz}")
        } else {
            format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}{frac}{tz}")
        };
        c.add(lex, t);
    }
    // Fixed cases from the spec and the edges around them, for all three types.
    let fixed = [
        "2020-01-02",
        "2020-01-02T03:04:05Z",
        "2020-01-02T03:04:05",
        "2020-01-02T03:04:05.5-00:30",
        "2020-01-02T03:04:05.5-00:15",
        "2020-01-02T03:04:05+00:00",
        "2020-02-30T00:00:00",
        "2020-02-29T00:00:00",
        "2019-02-29T00:00:00",
        "1900-02-29",
        "2000-02-29",
        "2020-12-31T24:00:00",
        "2020-12-31T24:00:00Z",
        "2020-12-31T24:00:00.000",
        "2020-12-31T24:00:00.0001",
        "2020-12-31T24:00:01",
        "2020-12-31T24:01:00",
        "7999-12-31T24:00:00",
        "2020-01-02T03:04:05.000Z",
        "2020-01-02T03:04:05.123456789Z",
        "2020-01-02T03:04:05.1234567891Z",
        "2020-01-02T03:04:05.12345678912Z",
        "2020-01-02T03:04:05.1234567890123456789012Z",
        "2020-01-02T03:04:05+01:00 ",
        "2020-01-02T03:04:05+01:00\n",
        " 2020-01-02T03:04:05+01:00",
        "2020-01-02T03:04:05Z ",
        "2020-01-02T03:04:05-05:00\t\t",
        "2020-01-02T03:04:05       ",
        "2020-01-02Z",
        "2020-01-02+01:00",
        "2020-01-02-00:15",
        "2020-01-02T03:04:05.5",
        "2020-01-02T03:04:60",
        "2020-01-02T03:04:59.99999999999999999999",
        "2020-01-02T3:04:05",
        "2020-1-02T03:04:05",
        "2020-01-2T03:04:05",
        "2020-01-02 03:04:05",
        "2020-01-02t03:04:05",
        "2020-01-02T03:04",
        "2020-01-02T",
        "2020-01",
        "2020",
        "20-01-02",
        "+2020-01-02",
        "2020-01-02T03:04:05.Z",
        "2020-01-02T03:04:05..5",
        "2020-01-02T03:04:.5",
        "2020-01-02T03:04:05z",
        "2020-01-02T03:04:05+01",
        "2020-01-02T03:04:05+01:00:00",
        "--01-02",
        "2020-01-02T03:04:05-",
    ];
    for s in fixed {
        for t in ["dateTime", "dateTimeStamp", "date"] {
            c.add(s, t);
        }
    }
    let long_frac = format!("2020-01-02T03:04:05{underflow}Z");
    for t in ["dateTime", "dateTimeStamp"] {
        c.add(long_frac.clone(), t);
        c.add(format!("2020-01-02T24:00:00{underflow}"), t);
        c.add(format!("2020-01-02T03:04:05.{}", "0".repeat(40)), t);
    }
}

fn other_types(c: &mut Corpus) {
    for (lex, dt) in [
        ("42", "http://www.w3.org/2001/XMLSchema#string"),
        ("42", "http://www.w3.org/2001/XMLSchema#time"),
        ("03:04:05", "http://www.w3.org/2001/XMLSchema#time"),
        ("2020", "http://www.w3.org/2001/XMLSchema#gYear"),
        ("P1D", "http://www.w3.org/2001/XMLSchema#duration"),
        ("42", "http://example/integer"),
        ("42", "http://www.w3.org/2001/XMLSchema#Integer"),
        ("42", "http://www.w3.org/2001/XMLSchema#int "),
        ("1", "http://www.w3.org/2001/XMLSchema#anyURI"),
        ("42", "http://www.w3.org/2001/XMLSchema"),
        ("42", "http://www.w3.org/2001/XMLSchema#"),
        ("true", "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"),
        ("1.5", "http://www.w3.org/2001/XMLSchema#precisionDecimal"),
    ] {
        c.cases.push((lex.to_string(), dt.to_string()));
    }
}

fn corpus() -> Vec<(String, String)> {
    let mut c = Corpus { cases: Vec::new(), rng: Rng(0x7db2_0001_5eed) };
    integers(&mut c);
    decimals(&mut c);
    floating(&mut c);
    booleans(&mut c);
    dates(&mut c);
    other_types(&mut c);
    // The oracle protocol is line based: no raw tab/newline survives escaping, but guard anyway.
    c.cases.retain(|(l, _)| !escape(l).contains('\n'));
    c.cases
}

// ------------------------------------------------------------------------------- the test

fn fp_same_value(a: &str, b: &str, float: bool) -> bool {
    let norm = |s: &str| s.trim_end_matches("e0").replace("INF", "inf");
    if float {
        match (norm(a).parse::<f32>(), norm(b).parse::<f32>()) {
            (Ok(x), Ok(y)) => x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()),
            _ => false,
        }
    } else {
        match (norm(a).parse::<f64>(), norm(b).parse::<f64>()) {
            (Ok(x), Ok(y)) => x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()),
            _ => false,
        }
    }
}

#[test]
fn inline_literal_matches_jena_5_6_0() {
    let jena = match jena_home() {
        Ok(j) => j,
        Err(reason) => return skip_or_fail(&reason),
    };
    differential(JenaVersion::V5, &jena, None, "tdb2-nodeid-jena-oracle");
}

#[test]
fn inline_literal_matches_jena_6_2_0() {
    let (jena, jdk) = match jena6_home() {
        Ok(j) => j,
        Err(reason) => return skip_or_fail(&reason),
    };
    differential(JenaVersion::V6, &jena, Some(&jdk), "tdb2-nodeid-jena6-oracle");
}

fn differential(version: JenaVersion, jena: &Path, jdk: Option<&Path>, name: &str) {
    let classes = match compile_oracle(jena, jdk, name) {
        Ok(c) => c,
        Err(reason) => return skip_or_fail(&reason),
    };
    let cases = corpus();
    let answers = run_oracle(jena, jdk, &classes, &cases);

    #[derive(Default)]
    struct Stats {
        cases: usize,
        inlined: usize,
        not_inlined: usize,
        aborted: usize,
        mismatches: usize,
    }
    let mut stats: BTreeMap<String, Stats> = BTreeMap::new();
    let mut mismatches = Vec::new();
    let mut decode_mismatches = Vec::new();
    let mut fp_digit_differences = 0usize;
    for ((lex, dt), answer) in cases.iter().zip(&answers) {
        let local = dt.strip_prefix(XSD).unwrap_or("(other)").to_string();
        let st = stats.entry(local.clone()).or_default();
        st.cases += 1;
        let ours = version.inline_literal(lex, dt);
        let expected = match answer {
            JenaAnswer::Inline(bits, _, _) => {
                st.inlined += 1;
                Some(NodeId(*bits))
            }
            JenaAnswer::NotInline => {
                st.not_inlined += 1;
                None
            }
            JenaAnswer::Abort => {
                st.aborted += 1;
                None
            }
        };
        if ours != expected {
            st.mismatches += 1;
            if st.mismatches > 8 {
                mismatches.push(String::new()); // counted, not printed
                continue;
            }
            mismatches.push(format!(
                "{:?}^^{local}: jena {answer:?}, ours {:?}",
                lex,
                ours.map(|n| format!("{:016x}", n.0))
            ));
            continue;
        }
        if let JenaAnswer::Inline(bits, jlex, jdt) = answer {
            match decode_inline(NodeId(*bits)) {
                Some((l, d)) if l == *jlex && d == jdt => {}
                Some((l, d))
                    if d == jdt
                        && (d.ends_with("#double") || d.ends_with("#float"))
                        && l.len() <= jlex.len()
                        && fp_same_value(&l, jlex, d.ends_with("#float")) =>
                {
                    // Java's Double/Float.toString (17's; 25's picks other digits) is not always
                    // the shortest form, and between two equally short candidates the choice can
                    // differ: accept our string when it denotes the same value and is no longer
                    // than Java's.
                    if fp_digit_differences < 8 {
                        eprintln!("  fp decode differs only in digits: jena {jlex:?}, ours {l:?}");
                    }
                    fp_digit_differences += 1;
                }
                other => decode_mismatches.push(format!("{bits:016x}: jena ({jlex:?}, {jdt}), ours {other:?}")),
            }
        }
    }

    eprintln!("jena_differential: {} cases, {version:?} against {}", cases.len(), jena.display());
    for (t, s) in &stats {
        eprintln!(
            "  {t:<20} {:>6} cases {:>6} inlined {:>6} not inlined {:>4} abort {:>4} MISMATCHES",
            s.cases, s.inlined, s.not_inlined, s.aborted, s.mismatches
        );
    }
    eprintln!("  decode: {fp_digit_differences} double/float strings differ from Java's in digits only (same value, not longer)");
    for m in mismatches.iter().filter(|m| !m.is_empty()) {
        eprintln!("MISMATCH {m}");
    }
    for m in decode_mismatches.iter().take(30) {
        eprintln!("DECODE MISMATCH {m}");
    }
    assert!(mismatches.is_empty(), "{} of {} literals differ from Jena", mismatches.len(), cases.len());
    assert!(decode_mismatches.is_empty(), "{} decodings differ from Jena", decode_mismatches.len());

    // The corpus must exercise both outcomes for every inlinable datatype.
    for (t, s) in &stats {
        if t != "(other)"
            && !matches!(
                t.as_str(),
                "string" | "time" | "gYear" | "duration" | "anyURI" | "precisionDecimal" | "Integer" | "int " | ""
            )
        {
            assert!(s.inlined > 0 && s.not_inlined + s.aborted > 0, "corpus for {t} is one-sided");
        }
    }
    assert!(cases.len() > 20_000);
}
