//! Literals that Jena 5.6.0 cannot read back.
//!
//! Jena builds a typed literal's value as soon as it makes the term (`LiteralLabel`, eager
//! mode): the RIOT parser when it loads a dump, and TDB2's node table every time a query reads
//! a stored term back. A lexical form the datatype's checker (Jena's copy of Xerces) rejects
//! gives a DatatypeFormatException, which Jena catches: the literal is *ill-formed*, stored and
//! read back as such ("abc"^^xsd:integer). But a few forms pass Xerces' check and then make
//! Jena's own second parse (`parseValidated`) or its XML parser throw something else. Jena's
//! loaders abort the whole load on them; a database holding one fails every query that reads
//! the term (an exception in the log, HTTP 500 from Fuseki). [`jena_readable`] finds exactly
//! these forms, so that the loader refuses them as bad input instead of storing them.
//!
//! The classes, from Jena's source and checked against Jena itself by
//! `tests/jena_readable.rs` (which asks `jena-oracle/ReadBackOracle.java`):
//!
//! * `xsd:dateTime`, `xsd:dateTimeStamp`, `xsd:time`: the fraction of a second, trailing zeros
//!   removed, read as an `int` (`XSDAbstractDateTimeType.getTime` → `parseInt`): more than
//!   2147483647 throws NumberFormatException. ".12345678901" does, ".1234567890" does not.
//! * `xsd:duration` (not its subtypes `dayTimeDuration`/`yearMonthDuration`, whose values Jena
//!   does not re-parse): Xerces reads the seconds as a double, Jena's `XSDDurationType` as
//!   `int`s: seconds with no digit before the point ("PT.5S"), an integer part over 2147483647
//!   ("PT2147483648S") or a fraction over 2147483647 without its trailing zeros
//!   ("PT0.12345678901S") throw NumberFormatException.
//! * `rdf:XMLLiteral`: Jena parses the fragment into a DOM and normalises it recursively; deep
//!   element nesting overflows the thread's stack (StackOverflowError). Where depends on the
//!   JVM and its stack size (measured with Java 17, default stack): the oracle reads 1500 levels
//!   back and fails at 2000; `tdb2.tdbloader` and `tdb2.tdbquery` read 3000 and fail at 10000
//!   (the loader then hangs). We refuse well-formed fragments nested deeper than
//!   [`XML_LITERAL_MAX_DEPTH`] levels, below every limit seen: a fragment between that and the
//!   JVM's limit is refused although some JVMs read it.
//!
//! Everything else Jena reads back: ill-formed literals of every datatype, numbers of any size,
//! years out of any range Xerces accepts, hexBinary/base64Binary, rdf:HTML, rdf:JSON, and
//! unknown datatypes.

use crate::{fraction_fits_int, xerces_date_time, XSD};

/// Deepest element nesting of an `rdf:XMLLiteral` the loader accepts (see the module docs).
pub const XML_LITERAL_MAX_DEPTH: usize = 1000;

const RDF_XML_LITERAL: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#XMLLiteral";

/// Why Jena 5.6.0 cannot read a literal back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unreadable {
    /// The datatype, abbreviated (`xsd:dateTime`, `rdf:XMLLiteral`).
    pub datatype: &'static str,
    /// What in the lexical form makes Jena throw.
    pub reason: String,
}

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} lexical form Jena 5.6.0 cannot read back: {}", self.datatype, self.reason)
    }
}

/// Ok unless Jena 5.6.0 throws (other than by calling the literal ill-formed) when it builds the
/// typed literal `lexical`^^`datatype` (full IRI): on load, and every time it reads it back from
/// a TDB2 node table. Cheap for every datatype but the four it checks.
pub fn jena_readable(lexical: &str, datatype: &str) -> Result<(), Unreadable> {
    if let Some(local) = datatype.strip_prefix(XSD) {
        return match local {
            "dateTime" => date_time(lexical, "xsd:dateTime", false),
            "dateTimeStamp" => date_time(lexical, "xsd:dateTimeStamp", false),
            "time" => date_time(lexical, "xsd:time", true),
            "duration" => duration(lexical),
            _ => Ok(()),
        };
    }
    if datatype == RDF_XML_LITERAL {
        return xml_literal(lexical);
    }
    Ok(())
}

/// Xerces normalises these types with the `collapse` facet; a valid form has no inner
/// whitespace, so trimming XML whitespace is enough.
fn trim_xml(s: &str) -> &str {
    s.trim_matches(|c| matches!(c, ' ' | '\t' | '\n' | '\r'))
}

fn date_time(lexical: &str, datatype: &'static str, time_only: bool) -> Result<(), Unreadable> {
    let t = trim_xml(lexical);
    if !t.contains('.') {
        return Ok(()); // no fraction
    }
    // Xerces' TimeDV reads a time as the time part of a dateTime on a fixed date, and Jena's
    // XSDTimeType re-parses it with the same getTime.
    let owned;
    let t = if time_only {
        owned = format!("2000-01-15T{t}");
        owned.as_str()
    } else {
        t
    };
    let Some(fields) = xerces_date_time(t, false) else {
        return Ok(()); // ill-formed: Jena stores and reads it as such
    };
    if fraction_fits_int(fields.frac) {
        return Ok(());
    }
    Err(Unreadable {
        datatype,
        reason: format!(
            "fraction of a second {} is over 2147483647 without its trailing zeros (Jena parses it as an int)",
            fields.frac
        ),
    })
}

/// The digits `b[start..end]` as Xerces' and Jena's `parseInt` read them (a do-while: an empty
/// range reads the character at `start`): None when they throw.
fn parse_int(b: &[u8], start: usize, end: usize) -> Option<u32> {
    let mut v: u64 = 0;
    let mut i = start;
    loop {
        let c = *b.get(i)?;
        if !c.is_ascii_digit() {
            return None;
        }
        v = v * 10 + (c - b'0') as u64;
        if v > i32::MAX as u64 {
            return None;
        }
        i += 1;
        if i >= end {
            return Some(v as u32);
        }
    }
}

fn index_of(b: &[u8], start: usize, end: usize, c: u8) -> Option<usize> {
    b.get(start..end)?.iter().position(|&x| x == c).map(|p| p + start)
}

/// Xerces `DurationDV.parseSecond`: digits and points, not ending in a point, a finite double.
fn xerces_second(b: &[u8], start: usize, end: usize) -> bool {
    let s = &b[start..end];
    if !s.iter().all(|&c| c.is_ascii_digit() || c == b'.') || s.last() == Some(&b'.') {
        return false;
    }
    // Java's Double.parseDouble on [0-9.]*: at most one point and at least one digit; Rust's
    // parser agrees on that alphabet and rounds the same way.
    let text = std::str::from_utf8(s).expect("ASCII");
    matches!(text.parse::<f64>(), Ok(v) if v.is_finite())
}

/// Xerces `DurationDV.parse` (is the form valid?), then Jena's `XSDDurationType.parseValidated`
/// on the seconds, which it reads as ints.
fn duration(lexical: &str) -> Result<(), Unreadable> {
    let b = trim_xml(lexical).as_bytes();
    let Some(seconds) = xerces_duration_seconds(b) else {
        return Ok(()); // ill-formed, or no seconds: readable
    };
    let (start, end) = seconds;
    let fail = |reason: String| Err(Unreadable { datatype: "xsd:duration", reason });
    let text = std::str::from_utf8(&b[start..end]).expect("ASCII");
    match index_of(b, start, end, b'.') {
        Some(dot) => {
            if dot == start {
                return fail(format!(
                    "seconds {text} have no digit before the point (Jena parses the whole seconds as an int)"
                ));
            }
            if parse_int(b, start, dot).is_none() {
                return fail(format!(
                    "whole seconds {} are over 2147483647 (Jena parses them as an int)",
                    &text[..dot - start]
                ));
            }
            let mut ms_end = end;
            while b[ms_end - 1] == b'0' {
                ms_end -= 1;
            }
            if parse_int(b, dot + 1, ms_end).is_none() {
                return fail(format!(
                    "fraction of a second {} is over 2147483647 without its trailing zeros (Jena parses it as an int)",
                    &text[dot - start..]
                ));
            }
            Ok(())
        }
        None => {
            if parse_int(b, start, end).is_none() {
                return fail(format!("seconds {text} are over 2147483647 (Jena parses them as an int)"));
            }
            Ok(())
        }
    }
}

/// For a duration valid per Xerces, the byte range of its seconds number (before 'S'), if any.
fn xerces_duration_seconds(b: &[u8]) -> Option<(usize, usize)> {
    let len = b.len();
    let mut start = match b.first()? {
        b'P' => 1,
        b'-' if b.get(1) == Some(&b'P') => 2,
        _ => return None,
    };
    let end_date = index_of(b, start, len, b'T').unwrap_or(len);
    let mut designator = false;
    for d in [b'Y', b'M', b'D'] {
        if let Some(end) = index_of(b, start, end_date, d) {
            parse_int(b, start, end)?;
            start = end + 1;
            designator = true;
        }
    }
    if len == end_date && start != len {
        return None;
    }
    let mut seconds = None;
    if len != end_date {
        start += 1;
        for d in [b'H', b'M'] {
            if let Some(end) = index_of(b, start, len, d) {
                parse_int(b, start, end)?;
                start = end + 1;
                designator = true;
            }
        }
        if let Some(end) = index_of(b, start, len, b'S') {
            if !xerces_second(b, start, end) {
                return None;
            }
            seconds = Some((start, end));
            start = end + 1;
            designator = true;
        }
        if start != len || b[start - 1] == b'T' {
            return None;
        }
    }
    if !designator {
        return None;
    }
    seconds
}

/// Element nesting of a well-formed XML fragment; a fragment this scanner finds unbalanced is
/// ill-formed for Jena too, which stores it as such (no DOM is built for it).
fn xml_literal(lexical: &str) -> Result<(), Unreadable> {
    if lexical.len() < 2 * 3 * XML_LITERAL_MAX_DEPTH {
        return Ok(()); // too short to nest that deep ("<a>" + "</a>" per level at least)
    }
    match xml_depth(lexical.as_bytes()) {
        Some(depth) if depth > XML_LITERAL_MAX_DEPTH => Err(Unreadable {
            datatype: "rdf:XMLLiteral",
            reason: format!(
                "elements nested {depth} deep, over {XML_LITERAL_MAX_DEPTH} (Jena's XML normalisation recurses per level and overflows its stack)"
            ),
        }),
        _ => Ok(()),
    }
}

/// The maximum element depth of a balanced fragment (start and end tags matching by name),
/// skipping comments, CDATA sections, processing instructions and quoted attribute values;
/// None when the tags do not balance.
fn xml_depth(b: &[u8]) -> Option<usize> {
    let mut stack: Vec<&[u8]> = Vec::new();
    let mut max = 0;
    let mut i = 0;
    let find = |from: usize, pat: &[u8]| b.get(from..)?.windows(pat.len()).position(|w| w == pat).map(|p| p + from);
    while i < b.len() {
        if b[i] != b'<' {
            i += 1;
            continue;
        }
        let rest = &b[i..];
        if rest.starts_with(b"<!--") {
            i = find(i + 4, b"-->")? + 3;
        } else if rest.starts_with(b"<![CDATA[") {
            i = find(i + 9, b"]]>")? + 3;
        } else if rest.starts_with(b"<?") {
            i = find(i + 2, b"?>")? + 2;
        } else if rest.starts_with(b"</") {
            let end = find(i, b">")?;
            let name = b[i + 2..end].trim_ascii_end();
            if stack.pop()? != name {
                return None;
            }
            i = end + 1;
        } else {
            // A start tag: the name, then attributes until '>' outside quotes.
            let name_end = (i + 1..b.len()).find(|&j| matches!(b[j], b' ' | b'\t' | b'\n' | b'\r' | b'/' | b'>'))?;
            let name = &b[i + 1..name_end];
            if name.is_empty() {
                return None;
            }
            let mut j = name_end;
            let mut quote = 0u8;
            loop {
                let c = *b.get(j)?;
                if quote != 0 {
                    if c == quote {
                        quote = 0;
                    }
                } else if c == b'"' || c == b'\'' {
                    quote = c;
                } else if c == b'>' {
                    break;
                }
                j += 1;
            }
            if b[j - 1] != b'/' {
                stack.push(name);
                max = max.max(stack.len());
            }
            i = j + 1;
        }
    }
    stack.is_empty().then_some(max)
}
