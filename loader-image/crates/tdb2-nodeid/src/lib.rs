//! TDB2 NodeIds and Jena 5.6.0's exact inline-literal rule.
//!
//! A TDB2 NodeId is 64 bits, written big-endian in index records (docs/tdb2-format.md §2):
//!
//! ```text
//! bit 63 = 0              PTR: bits 0..62 = byte offset of the term in nodes-data.obj
//! bit 63 = 1, bit 62 = 1  xsd:double, 62-bit packed (§2, doubles)
//! bit 63 = 1, bit 62 = 0  bits 56..61 = type code, bits 0..55 = value
//! ```
//!
//! [`inline_literal`] decides, for a typed literal as read from N-Triples, whether Jena
//! (`NodeIdInline.inline`, used by tdbloader, xloader and for every SPARQL constant) stores it
//! inline, and with which bits. It must agree with Jena bit for bit: a literal inlined by one side
//! and stored in the node table by the other is invisible to SPARQL constants. Jena's quirks are
//! reproduced on purpose; each is described where it is implemented. The test
//! `tests/jena_differential.rs` checks this function against Jena itself.
//!
//! The hot path ([`inline_literal`]) does not allocate and uses no regular expressions.

#![forbid(unsafe_code)]

use std::fmt::Write as _;

mod readable;
pub use readable::{jena_readable, Unreadable, XML_LITERAL_MAX_DEPTH};

/// The XML Schema namespace; the datatype IRIs handled here are `XSD` + local name.
pub const XSD: &str = "http://www.w3.org/2001/XMLSchema#";

/// A TDB2 NodeId (64 bits, written big-endian in records).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(pub u64);

impl NodeId {
    /// A pointer NodeId: the byte offset of a term in `nodes-data.obj` (must be < 2^63).
    pub const fn ptr(offset: u64) -> NodeId {
        assert!(offset >> 63 == 0, "node table offset does not fit in 63 bits");
        NodeId(offset)
    }

    /// True for inline values (bit 63 set), false for node-table pointers.
    pub fn is_inline(self) -> bool {
        self.0 >> 63 == 1
    }

    /// The on-disk form (big-endian).
    pub const fn to_be_bytes(self) -> [u8; 8] {
        self.0.to_be_bytes()
    }

    /// From the on-disk form (big-endian).
    pub const fn from_be_bytes(b: [u8; 8]) -> NodeId {
        NodeId(u64::from_be_bytes(b))
    }
}

/// Type codes (bits 56..61) of inline NodeIds whose bit 62 is 0 (`NodeIdType` in Jena).
pub mod code {
    pub const INTEGER: u8 = 1;
    pub const DECIMAL: u8 = 2;
    pub const FLOAT: u8 = 3;
    pub const DATETIME: u8 = 5;
    pub const DATETIMESTAMP: u8 = 6;
    pub const DATE: u8 = 7;
    pub const BOOLEAN: u8 = 8;
    /// Defined by Jena, never produced.
    pub const SHORT_STRING: u8 = 9;
    pub const POSITIVE_INTEGER: u8 = 10;
    pub const NEGATIVE_INTEGER: u8 = 11;
    pub const NON_NEGATIVE_INTEGER: u8 = 12;
    pub const NON_POSITIVE_INTEGER: u8 = 13;
    pub const LONG: u8 = 14;
    pub const INT: u8 = 15;
    pub const SHORT: u8 = 16;
    pub const BYTE: u8 = 17;
    pub const UNSIGNED_LONG: u8 = 18;
    pub const UNSIGNED_INT: u8 = 19;
    pub const UNSIGNED_SHORT: u8 = 20;
    pub const UNSIGNED_BYTE: u8 = 21;
}

const VALUE_BIT: u64 = 1 << 63;
const DOUBLE_BITS: u64 = 0b11 << 62;
const MASK56: u64 = (1 << 56) - 1;

#[inline]
fn typed(code: u8, value56: u64) -> NodeId {
    NodeId(VALUE_BIT | (code as u64) << 56 | (value56 & MASK56))
}

/// The Jena release whose inline rules a database follows. Jena 5.6.0 and 6.2.0 write the same
/// TDB2 layout and inline every datatype alike except `xsd:decimal`, which Jena 6 canonicalises
/// before packing (docs/tdb2-format.md §12). A database must be served by the Jena it was built
/// for: the other one encodes some decimal query constants differently and misses them.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum JenaVersion {
    /// Jena 5.6.0 (and the 5.x line it ends): decimals packed as read.
    #[default]
    V5,
    /// Jena 6 (checked: 6.2.0): decimals canonicalised (`XSDNumUtils.canonicalDecimal`) first.
    V6,
}

impl JenaVersion {
    /// The release checked against, as the build report names it (`jena_compat`).
    pub fn release(self) -> &'static str {
        match self {
            JenaVersion::V5 => "5.6.0",
            JenaVersion::V6 => "6.2.0",
        }
    }

    /// Whether an `xsd:decimal` is canonicalised before it is packed: trailing zeros of the
    /// fraction removed, a whole number given scale 1 ("12.50" → (125, 1), "1" → (10, 1)).
    pub fn canonicalises_decimals(self) -> bool {
        match self {
            JenaVersion::V5 => false,
            JenaVersion::V6 => true,
        }
    }

    /// This version's exact inline rule: Some(id) iff that Jena inlines the literal with this
    /// lexical form and datatype IRI (full IRI, e.g. "http://www.w3.org/2001/XMLSchema#integer").
    /// None means: store in the node table.
    ///
    /// `lexical` is the literal's lexical form exactly as parsed (escapes decoded, no whitespace
    /// removed). A `None` is also returned for the few forms on which Jena's own parser throws
    /// (dateTime fractions whose digits, trailing zeros removed, exceed 2^31-1): Jena cannot load
    /// those at all.
    pub fn inline_literal(self, lexical: &str, datatype: &str) -> Option<NodeId> {
        inline_literal_as(self, lexical, datatype)
    }
}

/// Jena 5.6.0's exact inline rule ([`JenaVersion::inline_literal`] of [`JenaVersion::V5`]).
pub fn inline_literal(lexical: &str, datatype: &str) -> Option<NodeId> {
    inline_literal_as(JenaVersion::V5, lexical, datatype)
}

#[inline]
fn inline_literal_as(jena: JenaVersion, lexical: &str, datatype: &str) -> Option<NodeId> {
    let local = datatype.strip_prefix(XSD)?;
    let (lo, hi, code): (i128, i128, u8) = match local {
        "integer" => (i128::MIN, i128::MAX, code::INTEGER),
        "decimal" => return decimal(lexical, jena.canonicalises_decimals()),
        "double" => return double(lexical),
        "float" => return float(lexical),
        "boolean" => return boolean(lexical),
        "dateTime" => return date_time(lexical, DtKind::DateTime),
        "dateTimeStamp" => return date_time(lexical, DtKind::DateTimeStamp),
        "date" => return date_time(lexical, DtKind::Date),
        "positiveInteger" => (1, i128::MAX, code::POSITIVE_INTEGER),
        "negativeInteger" => (i128::MIN, -1, code::NEGATIVE_INTEGER),
        "nonNegativeInteger" => (0, i128::MAX, code::NON_NEGATIVE_INTEGER),
        "nonPositiveInteger" => (i128::MIN, 0, code::NON_POSITIVE_INTEGER),
        "long" => (i64::MIN as i128, i64::MAX as i128, code::LONG),
        "int" => (i32::MIN as i128, i32::MAX as i128, code::INT),
        "short" => (i16::MIN as i128, i16::MAX as i128, code::SHORT),
        "byte" => (i8::MIN as i128, i8::MAX as i128, code::BYTE),
        "unsignedLong" => (0, u64::MAX as i128, code::UNSIGNED_LONG),
        "unsignedInt" => (0, u32::MAX as i128, code::UNSIGNED_INT),
        "unsignedShort" => (0, u16::MAX as i128, code::UNSIGNED_SHORT),
        "unsignedByte" => (0, u8::MAX as i128, code::UNSIGNED_BYTE),
        _ => return None,
    };
    integer_family(lexical, lo, hi, code)
}

// ---------------------------------------------------------------------------------------------
// Lexical helpers

/// XML whitespace (`XMLChar.isSpace`): the only characters the XSD whitespace facet removes.
#[inline]
fn is_xml_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

/// Xerces' `NORMALIZE_TRIM` for these built-in types: strip leading and trailing XML whitespace.
/// (Internal whitespace is then simply invalid for every inlinable type, so this is equivalent
/// to the `collapse` facet.)
#[inline]
fn trim_xml(s: &str) -> &str {
    s.trim_matches(is_xml_space)
}

#[inline]
fn digit(b: u8) -> Option<u32> {
    let d = b.wrapping_sub(b'0');
    (d <= 9).then_some(d as u32)
}

#[inline]
fn split_sign(t: &[u8]) -> (bool, &[u8]) {
    match t.first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    }
}

// ---------------------------------------------------------------------------------------------
// Integer family (xsd:integer and its 12 built-in subtypes)

/// Jena: `XSDinteger.isValidLiteral` (lexical valid as xsd:integer: `[+-]?[0-9]+` after trimming)
/// then `lexicalForm.length() > 19` (the RAW form, whitespace included) rejects, then
/// `lit.getValue()` throws unless the literal is valid for its declared subtype (Xerces facets),
/// then `IntegerNode.pack56` needs the value in [-2^55, 2^55-1]. The type code keeps the
/// declared datatype.
fn integer_family(lex: &str, lo: i128, hi: i128, code: u8) -> Option<NodeId> {
    // Java's String.length() counts UTF-16 units; a valid form is ASCII, so bytes == chars, and a
    // non-ASCII form is invalid anyway.
    if lex.len() > 19 {
        return None;
    }
    let (neg, digits) = split_sign(trim_xml(lex).as_bytes());
    if digits.is_empty() {
        return None;
    }
    let mut mag: u64 = 0;
    for &b in digits {
        // At most 19 digits: < 10^19 < 2^64, no overflow.
        mag = mag * 10 + digit(b)? as u64;
    }
    let v = if neg { -(mag as i128) } else { mag as i128 };
    if !(lo..=hi).contains(&v) || !(-(1i128 << 55)..(1i128 << 55)).contains(&v) {
        return None;
    }
    Some(typed(code, v as i64 as u64))
}

// ---------------------------------------------------------------------------------------------
// xsd:decimal

/// Jena: `XSDdecimal.isValidLiteral` (Xerces `DecimalDV`: `[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)`
/// after trimming; no exponent), then `new BigDecimal(lex.trim())`: unscaled value = all the
/// digits, scale = number of fraction digits (trailing zeros count: "1.50" is (150, 2)). Inlined
/// iff unscaled in [-2^47, 2^47-1] and scale in [-128, 127] (a plain decimal has scale >= 0).
/// Layout: bits 48..55 scale (signed 8 bit), bits 0..47 unscaled (signed 48 bit).
///
/// `canonical` (Jena 6, `XSDNumUtils.canonicalDecimal` before packing, docs/tdb2-format.md §12):
/// the fraction's trailing zeros are dropped and a whole number gets scale 1 (unscaled × 10),
/// then the same range check. Without allocating: zeros of the fraction are counted as pending
/// and multiplied in only when a non-zero digit follows them.
fn decimal(lex: &str, canonical: bool) -> Option<NodeId> {
    const LIMIT: u64 = 1 << 47;
    let (neg, body) = split_sign(trim_xml(lex).as_bytes());
    let mut unscaled: u64 = 0;
    let mut ndigits = 0usize;
    let mut scale = 0usize;
    // Canonical only: fraction zeros not (yet) followed by a non-zero digit.
    let mut pending = 0usize;
    let mut dot = false;
    for &b in body {
        if b == b'.' {
            if dot {
                return None;
            }
            dot = true;
            continue;
        }
        let d = digit(b)?;
        ndigits += 1;
        if canonical && dot {
            if d == 0 {
                pending += 1;
                continue;
            }
            if unscaled != 0 {
                for _ in 0..pending {
                    unscaled *= 10;
                    if unscaled > LIMIT {
                        return None;
                    }
                }
            }
            scale += pending;
            pending = 0;
        }
        unscaled = unscaled * 10 + d as u64;
        if unscaled > LIMIT {
            return None; // out of range whatever follows (and None if the rest is invalid too)
        }
        scale += dot as usize;
    }
    if ndigits == 0 {
        return None;
    }
    if canonical && scale == 0 {
        // A whole number: BigDecimal.stripTrailingZeros then setScale(1).
        unscaled *= 10;
        scale = 1;
        if unscaled > LIMIT {
            return None;
        }
    }
    if scale > 127 {
        return None;
    }
    if !neg && unscaled == LIMIT {
        return None;
    }
    let v = if neg { (unscaled as i64).wrapping_neg() } else { unscaled as i64 };
    Some(typed(code::DECIMAL, (scale as u64) << 48 | (v as u64 & ((1 << 48) - 1))))
}

// ---------------------------------------------------------------------------------------------
// xsd:double, xsd:float

enum Fp<'a> {
    Inf,
    NegInf,
    NaN,
    Number(&'a str),
}

/// Xerces `DoubleDV`/`FloatDV` on the trimmed form: exactly `INF`, `+INF`, `-INF` or `NaN`;
/// otherwise every char must be in `[0-9.+\-eE]` and Java's `Double.parseDouble` /
/// `Float.parseFloat` must accept it, i.e. `[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?`.
/// (Rust's `str::parse` accepts more, e.g. "inf", "infinity", "nan", so it is only called on a
/// checked string; Java accepts "1d"/"1f" suffixes and hex, which the char set excludes.)
fn fp_lexical(lex: &str) -> Option<Fp<'_>> {
    let t = trim_xml(lex);
    match t {
        "INF" | "+INF" => return Some(Fp::Inf),
        "-INF" => return Some(Fp::NegInf),
        "NaN" => return Some(Fp::NaN),
        _ => {}
    }
    let b = t.as_bytes();
    let (_, body) = split_sign(b);
    let mut i = 0;
    let mut mant_digits = 0;
    let mut dot = false;
    while i < body.len() {
        match body[i] {
            b'0'..=b'9' => mant_digits += 1,
            b'.' if !dot => dot = true,
            _ => break,
        }
        i += 1;
    }
    if mant_digits == 0 {
        return None;
    }
    if i < body.len() {
        if !matches!(body[i], b'e' | b'E') {
            return None;
        }
        i += 1;
        if i < body.len() && matches!(body[i], b'+' | b'-') {
            i += 1;
        }
        let exp_start = i;
        while i < body.len() && body[i].is_ascii_digit() {
            i += 1;
        }
        if i == exp_start || i != body.len() {
            return None;
        }
    }
    Some(Fp::Number(t))
}

/// Jena: value = `Double.parseDouble` (correctly rounded; Rust's parser is too), then
/// `DoubleNode62.pack`: canonical NaN, and the 11-bit exponent must fit the 9-bit window
/// (unbiased -254..=255), with 0 (zero/subnormal) and 0x7FF (Inf/NaN) mapped to 0 and 0x1FF.
fn double(lex: &str) -> Option<NodeId> {
    let v = match fp_lexical(lex)? {
        Fp::Inf => f64::INFINITY,
        Fp::NegInf => f64::NEG_INFINITY,
        Fp::NaN => f64::NAN,
        Fp::Number(s) => s.parse::<f64>().ok()?,
    };
    pack_double(v)
}

/// `DoubleNode62.pack` plus the type bits.
pub fn pack_double(v: f64) -> Option<NodeId> {
    // Double.doubleToLongBits: every NaN becomes 0x7ff8000000000000.
    let x = if v.is_nan() { 0x7ff8_0000_0000_0000 } else { v.to_bits() };
    let sign = x >> 63;
    let e11 = (x >> 52) & 0x7ff;
    let mant = x & ((1 << 52) - 1);
    let e9 = match e11 {
        0 => 0,
        0x7ff => 0x1ff,
        _ => {
            let u = e11 as i64 - 1023;
            if !(-254..=255).contains(&u) {
                return None;
            }
            (u + 255) as u64
        }
    };
    Some(NodeId(DOUBLE_BITS | sign << 61 | e9 << 52 | mant))
}

/// Jena: value = `Float.parseFloat`, rounded directly from decimal to binary32 (not via double:
/// "1.00000017881393432617187499" is 0x3f800001). Always inlined; NaN canonical 0x7fc00000.
fn float(lex: &str) -> Option<NodeId> {
    let v = match fp_lexical(lex)? {
        Fp::Inf => f32::INFINITY,
        Fp::NegInf => f32::NEG_INFINITY,
        Fp::NaN => f32::NAN,
        Fp::Number(s) => s.parse::<f32>().ok()?,
    };
    let bits = if v.is_nan() { 0x7fc0_0000 } else { v.to_bits() };
    Some(typed(code::FLOAT, bits as u64))
}

// ---------------------------------------------------------------------------------------------
// xsd:boolean

/// Xerces `BooleanDV` on the trimmed form: "true"/"1" is 1, "false"/"0" is 0.
fn boolean(lex: &str) -> Option<NodeId> {
    match trim_xml(lex) {
        "true" | "1" => Some(typed(code::BOOLEAN, 1)),
        "false" | "0" => Some(typed(code::BOOLEAN, 0)),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------------
// xsd:dateTime, xsd:dateTimeStamp, xsd:date

#[derive(Copy, Clone, PartialEq, Eq)]
enum DtKind {
    DateTime,
    DateTimeStamp,
    Date,
}

#[derive(Copy, Clone, PartialEq, Eq)]
enum Tz {
    None,
    Z,
    /// Offset in minutes, signed.
    Minutes(i32),
}

pub(crate) struct DateTimeFields<'a> {
    /// The full year as Xerces reads it (fits an i32).
    year: i64,
    month: u32,
    day: u32,
    hour: u32,
    minute: u32,
    second: u32,
    /// The fraction of a second including its leading '.', e.g. ".120" (empty if none).
    frac: &'a str,
    tz: Tz,
}

#[inline]
fn two_digits(b: &[u8], at: usize) -> Option<u32> {
    Some(digit(*b.get(at)?)? * 10 + digit(*b.get(at + 1)?)?)
}

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        4 | 6 | 9 | 11 => 30,
        // Java's % keeps the sign, as Rust's does: same leap rule for negative years.
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        _ => 31,
    }
}

/// Timezone `[+-]hh:mm` at `b[at..]`, which must end the string (Xerces `getTimeZone`).
fn parse_offset(b: &[u8], at: usize) -> Option<Tz> {
    if b.len() != at + 6 || b[at + 3] != b':' {
        return None;
    }
    let hh = two_digits(b, at + 1)? as i32;
    let mm = two_digits(b, at + 4)? as i32;
    // validateDateTime: -14:00..+14:00, minutes 0..59.
    if hh > 14 || mm > 59 || (hh == 14 && mm != 0) {
        return None;
    }
    let m = hh * 60 + mm;
    Some(Tz::Minutes(if b[at] == b'-' { -m } else { m }))
}

/// Validity exactly as Jena sees it: Xerces `DateTimeDV`/`DateDV` on the trimmed form (with
/// XSD 1.1 rules: year 0000 allowed, 24:00:00 allowed), then Jena's own re-parse
/// (`XSDDateTimeType.parseValidated`), which throws (Jena aborts the load) when the fraction
/// digits, trailing zeros removed, exceed `Integer.MAX_VALUE`. Both failures give None.
fn parse_date_time(t: &str, is_date: bool) -> Option<DateTimeFields<'_>> {
    let fields = xerces_date_time(t, is_date)?;
    fraction_fits_int(fields.frac).then_some(fields)
}

/// Jena's re-parse (`XSDAbstractDateTimeType.getTime`): `parseInt` of the fraction digits
/// (`frac` with its '.', or empty) without trailing zeros; false when it throws
/// (NumberFormatException: the value exceeds `Integer.MAX_VALUE`).
pub(crate) fn fraction_fits_int(frac: &str) -> bool {
    let frac_digits = frac.as_bytes().get(1..).unwrap_or(&[]);
    let sig = frac_digits.iter().rposition(|&c| c != b'0').map_or(0, |p| p + 1);
    let mut v: u64 = 0;
    for &c in &frac_digits[..sig] {
        v = v * 10 + (c - b'0') as u64;
        if v > i32::MAX as u64 {
            return false;
        }
    }
    true
}

/// True when 59 + `frac` (".ddd") rounds to 60.0 as a double: the fraction is at least
/// 1 - 2^-48 (the midpoint between 60 and the largest double below it, whose ties go to 60),
/// compared digit by digit without allocating.
fn fraction_rounds_up_to_60(frac: &str) -> bool {
    const LIMIT: &[u8] = b"999999999999996447286321199499070644378662109375";
    let digits = frac.as_bytes().get(1..).unwrap_or(&[]);
    for (i, &l) in LIMIT.iter().enumerate() {
        let d = digits.get(i).copied().unwrap_or(b'0');
        if d != l {
            return d > l;
        }
    }
    true // equal to the limit (then any further digits only add)
}

/// Validity as Xerces `DateTimeDV`/`DateDV` sees it (see [`parse_date_time`]), without Jena's
/// re-parse of the fraction.
pub(crate) fn xerces_date_time(t: &str, is_date: bool) -> Option<DateTimeFields<'_>> {
    let b = t.as_bytes();
    let n = b.len();
    let neg = *b.first()? == b'-';
    let start = neg as usize;
    // dateTime: the date part ends at the first 'T'.
    let date_end = if is_date { n } else { b.iter().position(|&c| c == b'T')? };
    // Year: up to the first '-' after the optional sign; >= 4 digits, no leading zero if > 4.
    let sep = start + b.get(start..date_end)?.iter().position(|&c| c == b'-')?;
    let ylen = sep - start;
    if ylen < 4 || (ylen > 4 && b[start] == b'0') {
        return None;
    }
    let mut year: i64 = 0;
    for &c in &b[start..sep] {
        year = year * 10 + digit(c)? as i64;
        if year > i32::MAX as i64 + 1 {
            return None; // parseIntYear overflows an int
        }
    }
    if neg {
        year = -year;
    } else if year > i32::MAX as i64 {
        return None;
    }
    let month = two_digits(b, sep + 1)?;
    if b.get(sep + 3) != Some(&b'-') {
        return None;
    }
    let day = two_digits(b, sep + 4)?;
    let date_stop = sep + 6;
    let (mut hour, mut minute, mut second, mut frac) = (0, 0, 0, "");
    let tz;
    if is_date {
        tz = match b.get(date_stop) {
            None if date_stop == n => Tz::None,
            Some(b'Z') if n == date_stop + 1 => Tz::Z,
            Some(b'+' | b'-') => parse_offset(b, date_stop)?,
            _ => return None,
        };
    } else {
        if date_stop != date_end {
            return None;
        }
        let s = date_end + 1;
        hour = two_digits(b, s)?;
        if b.get(s + 2) != Some(&b':') {
            return None;
        }
        minute = two_digits(b, s + 3)?;
        if b.get(s + 5) != Some(&b':') {
            return None;
        }
        let sec_start = s + 6;
        // findUTCSign: the first Z, + or - after the minutes.
        let sign = b[sec_start..].iter().position(|&c| matches!(c, b'Z' | b'+' | b'-')).map(|p| p + sec_start);
        let sec_end = sign.unwrap_or(n);
        // parseSecond: "ss" or "ss.f+" (digits only).
        second = two_digits(b, sec_start)?;
        if sec_end != sec_start + 2 {
            if b[sec_start + 2] != b'.' || sec_end == sec_start + 3 {
                return None;
            }
            if !b[sec_start + 3..sec_end].iter().all(u8::is_ascii_digit) {
                return None;
            }
            frac = &t[sec_start + 2..sec_end];
        }
        tz = match sign {
            None => Tz::None,
            Some(p) if b[p] == b'Z' => {
                if n != p + 1 {
                    return None;
                }
                Tz::Z
            }
            Some(p) => parse_offset(b, p)?,
        };
    }
    // validateDateTime
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return None;
    }
    if minute > 59 || second > 59 {
        return None;
    }
    let frac_digits = frac.as_bytes().get(1..).unwrap_or(&[]);
    let frac_zero = frac_digits.iter().all(|&c| c == b'0');
    if hour > 24 || (hour == 24 && (minute != 0 || second != 0 || !frac_zero)) {
        // Xerces compares the seconds as a double (a fraction below ~1e-324 passes as 0), but
        // the XMLGregorianCalendar Jena packs with rejects any non-zero fraction at 24:00:00:
        // not inlined either way.
        return None;
    }
    // A seconds value that rounds to 60.0 as a double is invalid for Xerces (`second >= 60`):
    // "59.99999999999999999" is ill-formed. (Such a fraction has sub-millisecond digits and is
    // not inlined anyway, but whether it is ill-formed decides whether Jena re-parses it.)
    if second == 59 && fraction_rounds_up_to_60(frac) {
        return None;
    }
    Some(DateTimeFields { year, month, day, hour, minute, second, frac, tz })
}

/// `DateTimeNode.packDateTime`: re-parses with the Xerces `XMLGregorianCalendar`, then rejects
/// sub-millisecond fractions, years outside 0..7999 and offsets that are not whole quarter
/// hours. Returns the 56-bit value.
fn pack_date_time(f: &DateTimeFields<'_>) -> Option<u64> {
    // XMLGregorianCalendar keeps years of 10+ digits as eon + (year % 10^9) and getYear()
    // returns only the remainder (BigInteger.remainder: sign of the dividend). So Jena inlines
    // "1000000005-01-01" as 0005-01-01 (a Jena bug, reproduced).
    let y = f.year % 1_000_000_000;
    // Millisecond test: BigDecimal(fraction).doubleValue() != getMillisecond() / 1000.0, where
    // getMillisecond() truncates to 3 digits.
    let fb = f.frac.as_bytes();
    let mut ms: u32 = 0;
    for i in 1..4 {
        ms = ms * 10 + fb.get(i).map_or(0, |&c| (c - b'0') as u32);
    }
    if fb.len() > 4 && fb[4..].iter().any(|&c| c != b'0') {
        // Digits beyond the millisecond. Usually this differs; it can only compare equal when
        // the fraction underflows to 0.0 as a double (hundreds of leading zeros).
        let fs: f64 = f.frac.parse().ok()?;
        if fs != ms as f64 / 1000.0 {
            return None;
        }
    }
    if !(0..8000).contains(&y) {
        return None;
    }
    let tzq: u64 = match f.tz {
        Tz::Z => 0x7f,
        Tz::None => 0x7e,
        Tz::Minutes(m) => {
            if m % 15 != 0 {
                return None;
            }
            // Seven bits, two's complement: -00:15 becomes 0x7F ('Z') and -00:30 0x7E (no
            // timezone), a Jena bug reproduced on purpose.
            ((m / 15) as i64 as u64) & 0x7f
        }
    };
    Some(
        tzq << 49
            | (y as u64) << 36
            | (f.month as u64) << 32
            | (f.day as u64) << 27
            | (f.hour as u64) << 22
            | (f.minute as u64) << 16
            | (f.second * 1000 + ms) as u64,
    )
}

/// Jena's branches for the three date/time types:
/// * dateTimeStamp: if valid as dateTimeStamp (valid dateTime, and `XSDDateTimeStampType.parse`
///   finds a 'Z' anywhere in the RAW lexical form or a '+'/'-' at `length - 6` of the RAW form,
///   so trailing whitespace after an offset makes it invalid), packed with code 6 (or not
///   inlined). Otherwise, when valid as xsd:dateTime, packed with the dateTime code 5.
/// * dateTime: code 5; date: code 7 (time bits 0).
fn date_time(lex: &str, kind: DtKind) -> Option<NodeId> {
    let t = trim_xml(lex);
    let fields = parse_date_time(t, kind == DtKind::Date)?;
    let code = match kind {
        DtKind::Date => code::DATE,
        DtKind::DateTime => code::DATETIME,
        DtKind::DateTimeStamp => {
            let raw = lex.as_bytes();
            let stamp = raw.contains(&b'Z') || matches!(raw.len().checked_sub(6).map(|i| raw[i]), Some(b'+' | b'-'));
            if stamp {
                code::DATETIMESTAMP
            } else {
                code::DATETIME
            }
        }
    };
    Some(typed(code, pack_date_time(&fields)?))
}

// ---------------------------------------------------------------------------------------------
// Decoding (NodeIdInline.extract)

const DT_INTEGER: &str = "http://www.w3.org/2001/XMLSchema#integer";
const DT_DECIMAL: &str = "http://www.w3.org/2001/XMLSchema#decimal";
const DT_FLOAT: &str = "http://www.w3.org/2001/XMLSchema#float";
const DT_DOUBLE: &str = "http://www.w3.org/2001/XMLSchema#double";
const DT_DATETIME: &str = "http://www.w3.org/2001/XMLSchema#dateTime";
const DT_DATETIMESTAMP: &str = "http://www.w3.org/2001/XMLSchema#dateTimeStamp";
const DT_DATE: &str = "http://www.w3.org/2001/XMLSchema#date";
const DT_BOOLEAN: &str = "http://www.w3.org/2001/XMLSchema#boolean";

fn integer_datatype(c: u8) -> Option<&'static str> {
    Some(match c {
        code::INTEGER => DT_INTEGER,
        code::POSITIVE_INTEGER => "http://www.w3.org/2001/XMLSchema#positiveInteger",
        code::NEGATIVE_INTEGER => "http://www.w3.org/2001/XMLSchema#negativeInteger",
        code::NON_NEGATIVE_INTEGER => "http://www.w3.org/2001/XMLSchema#nonNegativeInteger",
        code::NON_POSITIVE_INTEGER => "http://www.w3.org/2001/XMLSchema#nonPositiveInteger",
        code::LONG => "http://www.w3.org/2001/XMLSchema#long",
        code::INT => "http://www.w3.org/2001/XMLSchema#int",
        code::SHORT => "http://www.w3.org/2001/XMLSchema#short",
        code::BYTE => "http://www.w3.org/2001/XMLSchema#byte",
        code::UNSIGNED_LONG => "http://www.w3.org/2001/XMLSchema#unsignedLong",
        code::UNSIGNED_INT => "http://www.w3.org/2001/XMLSchema#unsignedInt",
        code::UNSIGNED_SHORT => "http://www.w3.org/2001/XMLSchema#unsignedShort",
        code::UNSIGNED_BYTE => "http://www.w3.org/2001/XMLSchema#unsignedByte",
        _ => return None,
    })
}

/// The inverse, for tests and inspection: the canonical lexical form and datatype Jena prints for an inline id.
///
/// Follows `NodeIdInline.extract`: integers as `Long.toString`, decimals with at least one
/// fraction digit ("1.5", "10.0", "0.0"), doubles as `Double.toString` with "e0" appended when
/// it has no exponent ("1.0e0", "1.23456E12"), floats as `Float.toString`, date/times as
/// `DateTimeNode.unpack`. Double and float digits are the shortest round-trip digits (what
/// Java 19+ prints; Java 17's `Double.toString` occasionally prints one more digit).
/// Returns None for pointers and for bit patterns Jena never writes.
pub fn decode_inline(id: NodeId) -> Option<(String, &'static str)> {
    let x = id.0;
    if x >> 63 == 0 {
        return None;
    }
    if (x >> 62) & 1 == 1 {
        let sign = (x >> 61) & 1;
        let e9 = (x >> 52) & 0x1ff;
        let mant = x & ((1 << 52) - 1);
        let e11 = match e9 {
            0 => 0,
            0x1ff => 0x7ff,
            _ => e9 + (1023 - 255),
        };
        let d = f64::from_bits(sign << 63 | e11 << 52 | mant);
        let s = if d.is_infinite() {
            if d < 0.0 {
                "-INF".to_string()
            } else {
                "INF".to_string()
            }
        } else if d.is_nan() {
            "NaN".to_string()
        } else {
            let mut s = java_fp_string(
                d.is_sign_negative(),
                &format!("{:e}", d.abs()),
                &format!("{:.1e}", d.abs()),
                d == 0.0,
                d.abs() >= 1e-3 && d.abs() < 1e7,
            );
            if !s.contains('E') {
                s.push_str("e0");
            }
            s
        };
        return Some((s, DT_DOUBLE));
    }
    let c = ((x >> 56) & 0x3f) as u8;
    let v = x & MASK56;
    match c {
        code::DECIMAL => {
            let scale = ((v >> 48) & 0xff) as u8 as i8 as i32;
            let unscaled = ((v << 16) as i64) >> 16; // sign-extend 48 bits
            Some((decimal_string(unscaled, scale), DT_DECIMAL))
        }
        code::FLOAT => {
            let f = f32::from_bits(v as u32);
            let s = if f.is_infinite() {
                if f < 0.0 {
                    "-INF".to_string()
                } else {
                    "INF".to_string()
                }
            } else if f.is_nan() {
                "NaN".to_string()
            } else {
                java_fp_string(
                    f.is_sign_negative(),
                    &format!("{:e}", f.abs()),
                    &format!("{:.1e}", f.abs()),
                    f == 0.0,
                    f.abs() >= 1e-3 && f.abs() < 1e7,
                )
            };
            Some((s, DT_FLOAT))
        }
        code::DATETIME => Some((date_time_string(v, true), DT_DATETIME)),
        code::DATETIMESTAMP => Some((date_time_string(v, true), DT_DATETIMESTAMP)),
        code::DATE => Some((date_time_string(v, false), DT_DATE)),
        code::BOOLEAN => match v {
            0 => Some(("false".to_string(), DT_BOOLEAN)),
            1 => Some(("true".to_string(), DT_BOOLEAN)),
            _ => None,
        },
        _ => {
            let dt = integer_datatype(c)?;
            let n = ((v << 8) as i64) >> 8; // sign-extend 56 bits
            Some((n.to_string(), dt))
        }
    }
}

/// `XSDNumUtils.canonicalDecimalStrWithDot(BigDecimal.valueOf(unscaled, scale))`.
fn decimal_string(mut unscaled: i64, mut scale: i32) -> String {
    if unscaled == 0 {
        return "0.0".to_string();
    }
    let mut s = String::new();
    if scale <= 0 {
        write!(s, "{unscaled}").unwrap();
        for _ in 0..-scale {
            s.push('0');
        }
        s.push_str(".0");
        return s;
    }
    while scale > 0 && unscaled % 10 == 0 {
        unscaled /= 10;
        scale -= 1;
    }
    if scale == 0 {
        write!(s, "{unscaled}.0").unwrap();
        return s;
    }
    if unscaled < 0 {
        s.push('-');
    }
    let digits = unscaled.unsigned_abs().to_string();
    let scale = scale as usize;
    if digits.len() > scale {
        let (i, f) = digits.split_at(digits.len() - scale);
        write!(s, "{i}.{f}").unwrap();
    } else {
        s.push_str("0.");
        for _ in 0..scale - digits.len() {
            s.push('0');
        }
        s.push_str(&digits);
    }
    s
}

/// Java `Double.toString`/`Float.toString` layout from Rust's shortest digits (`{:e}` of the
/// absolute value, e.g. "1.23456e12"): plain "ddd.ddd" for 1e-3 <= |x| < 1e7, otherwise
/// "d.dddE<exp>"; always at least one fraction digit.
fn java_fp_string(neg: bool, sci: &str, two_digits: &str, zero: bool, plain: bool) -> String {
    let mut s = String::new();
    if neg {
        s.push('-');
    }
    if zero {
        s.push_str("0.0");
        return s;
    }
    let (mut mant, mut exp) = sci.split_once('e').expect("{:e} output");
    if !mant.contains('.') {
        // One significant digit: Java picks, among decimals of 2 digits, the one closest to the
        // value (4.9E-324, not 5.0E-324; 9.8E-45, not 1.0E-44). `two_digits` is the value
        // correctly rounded to 2 digits; it can carry a different exponent.
        (mant, exp) = two_digits.split_once('e').expect("{:.1e} output");
    }
    let exp: i32 = exp.parse().expect("{:e} exponent");
    let mut digits: String = mant.chars().filter(|c| *c != '.').collect();
    while digits.len() > 1 && digits.ends_with('0') {
        digits.pop();
    }
    if plain {
        if exp >= 0 {
            let int_len = exp as usize + 1;
            if digits.len() <= int_len {
                s.push_str(&digits);
                for _ in digits.len()..int_len {
                    s.push('0');
                }
                s.push_str(".0");
            } else {
                write!(s, "{}.{}", &digits[..int_len], &digits[int_len..]).unwrap();
            }
        } else {
            s.push_str("0.");
            for _ in 0..(-exp - 1) {
                s.push('0');
            }
            s.push_str(&digits);
        }
    } else {
        let rest = if digits.len() > 1 { &digits[1..] } else { "0" };
        write!(s, "{}.{}E{}", &digits[..1], rest, exp).unwrap();
    }
    s
}

/// `DateTimeNode.unpack`.
fn date_time_string(v: u64, with_time: bool) -> String {
    let field = |lo: u32, len: u32| ((v >> lo) & ((1 << len) - 1)) as u32;
    let (year, month, day) = (field(36, 13), field(32, 4), field(27, 5));
    let (hour, minute, millis) = (field(22, 5), field(16, 6), field(0, 16));
    let tz = field(49, 7);
    let mut s = String::with_capacity(32);
    write!(s, "{year:04}-{month:02}-{day:02}").unwrap();
    if with_time {
        write!(s, "T{hour:02}:{minute:02}:{:02}", millis / 1000).unwrap();
        let f = millis % 1000;
        if f != 0 {
            if f % 100 == 0 {
                write!(s, ".{}", f / 100).unwrap();
            } else if f % 10 == 0 {
                write!(s, ".{:02}", f / 10).unwrap();
            } else {
                write!(s, ".{f:03}").unwrap();
            }
        }
    }
    match tz {
        0x7f => s.push('Z'),
        0x7e => {}
        _ => {
            let q = ((tz << 25) as i32) >> 25; // sign-extend 7 bits
            let a = q.unsigned_abs();
            write!(s, "{}{:02}:{:02}", if q < 0 { '-' } else { '+' }, a / 4, (a % 4) * 15).unwrap();
        }
    }
    s
}

#[cfg(test)]
mod tests;
