//! Turtle/TriG parsing statement by statement, so that a syntax error costs exactly the
//! statement it is in (skip mode's promise) and never moves a statement to another graph.
//!
//! A light scanner cuts the input at statement boundaries the way the grammar's tokens do
//! (strings, IRIs, comments, escapes, numbers and prefixed names with dots inside, `{|`/`|}`
//! annotations): a standalone `.`, the `}` that closes a TriG graph block, the `{` that opens
//! one, the end of a `PREFIX`/`BASE`/`VERSION` directive. Each unit is fed to one long-lived
//! oxttl parser; its quads are kept only when the unit parsed without error. After an error
//! the parser is replaced by a fresh one holding the prefixes and base in force (as the
//! accepted directives left them) and, inside a graph block, put back into that block. A
//! block whose opener fails (its graph name is bad) is skipped whole, as one reject.

use std::io::{self, Read};

use oxrdf::{GraphName, Quad};
use oxttl::{TriGParser, TurtleParser, TurtleSyntaxError};

use crate::parse::{Position, Rejected};

/// Longest `text` quoted in a reject (longer spans are cut, with their line range intact).
const MAX_REJECT_TEXT: usize = 1 << 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Ends with a standalone `.` (or is a directive).
    Statement,
    /// Ends with the `{` that opens a graph block (TriG, top level).
    Opener,
    /// Ends with the `}` that closes the graph block (TriG, inside a block).
    Closer,
    /// The input ended before a boundary (only whitespace and comments when `first` is None).
    Tail,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Directive {
    None,
    /// `@prefix`, `@base`, `@version`: ends with `.`.
    At {
        prefix: bool,
    },
    /// `PREFIX`, `BASE`: ends after the IRI; `VERSION`: after the string.
    Sparql {
        prefix: bool,
        version: bool,
    },
}

struct Unit {
    /// End of the unit in the buffer (after the boundary and the blanks that follow it).
    end: usize,
    /// The first and last byte of its tokens (no leading or trailing blanks), if any.
    first: Option<usize>,
    last_end: usize,
    kind: Kind,
    directive: Directive,
    /// The name a prefix directive declares (without the colon).
    prefix_name: Option<String>,
}

enum Scan {
    Need,
    Unit(Unit),
}

fn is_blank(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

fn is_word(b: u8) -> bool {
    !is_blank(b) && !b"<>\"'{}()[],;#^|~".contains(&b)
}

/// Finds the unit starting at `start`. `in_block`: inside a TriG graph block.
fn scan(buf: &[u8], start: usize, eof: bool, trig: bool, in_block: bool) -> Scan {
    let n = buf.len();
    let mut i = start;
    let mut first = None;
    let mut last_end = start;
    let mut depth = 0usize; // nested `{` inside a block unit (bad input)
    let mut tokens = 0usize;
    let mut directive = Directive::None;
    let mut prefix_name = None;
    macro_rules! need {
        () => {
            if !eof {
                return Scan::Need;
            }
        };
    }
    let finish = |mut end: usize, first, last_end, kind, directive, prefix_name| {
        // trailing blanks up to and including the first newline
        while end < n && matches!(buf[end], b' ' | b'\t' | b'\r') {
            end += 1;
        }
        if end < n && buf[end] == b'\n' {
            end += 1;
        }
        Scan::Unit(Unit { end, first, last_end, kind, directive, prefix_name })
    };
    loop {
        // blanks and comments
        while i < n {
            if is_blank(buf[i]) {
                i += 1;
            } else if buf[i] == b'#' {
                match memchr::memchr(b'\n', &buf[i..]) {
                    Some(p) => i += p + 1,
                    None => {
                        need!();
                        i = n;
                    }
                }
            } else {
                break;
            }
        }
        if i >= n {
            need!();
            return Scan::Unit(Unit { end: n, first, last_end, kind: Kind::Tail, directive, prefix_name });
        }
        let t = i;
        first.get_or_insert(t);
        tokens += 1;
        let c = buf[i];
        // what the token is, for directives
        let mut iri = false;
        let mut string = false;
        let mut word: Option<(usize, usize)> = None;
        match c {
            b'<' => {
                if i + 1 >= n {
                    need!();
                    i += 1;
                } else if buf[i + 1] == b'<' {
                    i += 2;
                } else {
                    let mut j = i + 1;
                    loop {
                        if j >= n {
                            need!();
                            i = n;
                            break;
                        }
                        // as oxttl reads an IRI: up to `>`, whatever comes before (a bad
                        // character is its error, in this unit)
                        match buf[j] {
                            b'>' => {
                                i = j + 1;
                                iri = true;
                                break;
                            }
                            b'\\' => j += 2,
                            _ => j += 1,
                        }
                    }
                }
            }
            b'"' | b'\'' => {
                string = true;
                if i + 2 >= n {
                    need!();
                }
                let long = i + 2 < n && buf[i + 1] == c && buf[i + 2] == c;
                if long {
                    let mut j = i + 3;
                    loop {
                        if j + 2 >= n {
                            need!();
                            i = n;
                            break;
                        }
                        if buf[j] == b'\\' {
                            j += 2;
                        } else if buf[j] == c && buf[j + 1] == c && buf[j + 2] == c {
                            // a long string may end with up to two more quotes: `""""x"""" `
                            let mut k = j + 3;
                            while k < n && buf[k] == c && k < j + 5 {
                                k += 1;
                            }
                            i = k;
                            break;
                        } else {
                            j += 1;
                        }
                    }
                } else {
                    let mut j = i + 1;
                    loop {
                        if j >= n {
                            need!();
                            i = n;
                            break;
                        }
                        // as oxttl reads a string: a line end inside is its error, but the
                        // token runs on to the closing quote
                        match buf[j] {
                            b'\\' => j += 2,
                            b if b == c => {
                                i = j + 1;
                                break;
                            }
                            _ => j += 1,
                        }
                    }
                }
            }
            b'{' if trig => {
                if i + 1 >= n {
                    need!();
                }
                if i + 1 < n && buf[i + 1] == b'|' {
                    i += 2;
                } else if !in_block {
                    i += 1;
                    return finish(i, first, i, Kind::Opener, directive, prefix_name);
                } else {
                    depth += 1;
                    i += 1;
                }
            }
            b'}' if trig => {
                i += 1;
                if in_block {
                    if depth == 0 {
                        return finish(i, first, i, Kind::Closer, directive, prefix_name);
                    }
                    depth -= 1;
                } else {
                    return finish(i, first, i, Kind::Statement, directive, prefix_name);
                }
            }
            b'|' => {
                if i + 1 >= n {
                    need!();
                }
                i += if i + 1 < n && buf[i + 1] == b'}' { 2 } else { 1 };
            }
            b'.' if !(i + 1 < n && buf[i + 1].is_ascii_digit()) => {
                if i + 1 >= n {
                    need!();
                }
                i += 1;
                if depth == 0 && !matches!(directive, Directive::Sparql { .. }) {
                    return finish(i, first, i, Kind::Statement, directive, prefix_name);
                }
                if matches!(directive, Directive::Sparql { .. }) {
                    // a SPARQL-style directive never has a dot: it ended before it
                    return finish(i, first, i, Kind::Statement, directive, prefix_name);
                }
            }
            b if is_word(b) => {
                let mut j = i;
                loop {
                    if j >= n {
                        need!();
                        break;
                    }
                    let b = buf[j];
                    if b == b'\\' {
                        j += 2;
                    } else if b == b'.' {
                        // dots inside a name or number: followed by more of the word
                        let k = j + buf[j..].iter().take_while(|&&c| c == b'.').count();
                        if k >= n {
                            need!();
                            break;
                        }
                        if is_word(buf[k]) {
                            j = k;
                        } else {
                            break;
                        }
                    } else if is_word(b) {
                        j += 1;
                    } else {
                        break;
                    }
                }
                i = j.min(n);
                word = Some((t, i));
            }
            _ => i += 1, // punctuation
        }
        last_end = i.min(n);
        i = i.min(n);
        if tokens == 1 {
            if let Some((a, b)) = word {
                let w = &buf[a..b];
                directive = match w {
                    b"@prefix" => Directive::At { prefix: true },
                    b"@base" | b"@version" => Directive::At { prefix: false },
                    _ if w.eq_ignore_ascii_case(b"PREFIX") => Directive::Sparql { prefix: true, version: false },
                    _ if w.eq_ignore_ascii_case(b"BASE") => Directive::Sparql { prefix: false, version: false },
                    _ if w.eq_ignore_ascii_case(b"VERSION") => Directive::Sparql { prefix: false, version: true },
                    _ => Directive::None,
                };
            }
        } else if tokens == 2 {
            if let (Some((a, b)), Directive::At { prefix: true } | Directive::Sparql { prefix: true, .. }) =
                (word, directive)
            {
                let w = &buf[a..b];
                if let Some(name) = w.strip_suffix(b":") {
                    prefix_name = Some(String::from_utf8_lossy(name).into_owned());
                }
            }
        }
        if let Directive::Sparql { version, .. } = directive {
            if (iri && !version) || (string && version) {
                return finish(i, first, last_end, Kind::Statement, directive, prefix_name);
            }
        }
    }
}

/// The oxttl parser behind the units (Turtle gives triples, TriG quads).
enum Low {
    Turtle(oxttl::turtle::LowLevelTurtleParser),
    TriG(oxttl::trig::LowLevelTriGParser),
}

impl Low {
    fn new(trig: bool, base: Option<&str>, prefixes: &[(String, String)]) -> Result<Self, String> {
        if trig {
            let mut p = TriGParser::new();
            if let Some(b) = base {
                p = p.with_base_iri(b).map_err(|e| e.to_string())?;
            }
            for (name, iri) in prefixes {
                p = p.with_prefix(name, iri).map_err(|e| e.to_string())?;
            }
            Ok(Low::TriG(p.low_level()))
        } else {
            let mut p = TurtleParser::new();
            if let Some(b) = base {
                p = p.with_base_iri(b).map_err(|e| e.to_string())?;
            }
            for (name, iri) in prefixes {
                p = p.with_prefix(name, iri).map_err(|e| e.to_string())?;
            }
            Ok(Low::Turtle(p.low_level()))
        }
    }
    fn extend(&mut self, data: &[u8]) {
        match self {
            Low::Turtle(p) => p.extend_from_slice(data),
            Low::TriG(p) => p.extend_from_slice(data),
        }
    }
    fn end(&mut self) {
        match self {
            Low::Turtle(p) => p.end(),
            Low::TriG(p) => p.end(),
        }
    }
    fn next(&mut self) -> Option<Result<Quad, TurtleSyntaxError>> {
        match self {
            Low::Turtle(p) => p.parse_next().map(|r| r.map(|t| t.in_graph(GraphName::DefaultGraph))),
            Low::TriG(p) => p.parse_next(),
        }
    }
    fn prefix(&self, name: &str) -> Option<String> {
        match self {
            Low::Turtle(p) => p.prefixes().find(|(n, _)| *n == name).map(|(_, i)| i.to_string()),
            Low::TriG(p) => p.prefixes().find(|(n, _)| *n == name).map(|(_, i)| i.to_string()),
        }
    }
    fn base(&self) -> Option<String> {
        match self {
            Low::Turtle(p) => p.base_iri().map(str::to_string),
            Low::TriG(p) => p.base_iri().map(str::to_string),
        }
    }
}

/// The open graph block.
struct Block {
    opener: Vec<u8>,
    /// Its graph, once a statement of the block gave a quad.
    graph: Option<GraphName>,
}

/// A graph block skipped whole because its opener failed.
struct Skipped {
    reject: Rejected,
}

struct Driver<'c, Q, R> {
    trig: bool,
    low: Low,
    /// Bytes fed to `low` so far (its offsets).
    fed: u64,
    prefixes: Vec<(String, String)>,
    /// Every accepted prefix declaration, in order (redefinitions included).
    declared: Vec<(String, String)>,
    base: Option<String>,
    block: Option<Block>,
    /// Quads of the block come from a synthetic `{` (default graph): give them the block's graph.
    remap: bool,
    skipped: Option<Skipped>,
    pending: Vec<Quad>,
    on_quad: &'c mut Q,
    on_reject: &'c mut R,
}

/// Line and column (1-based, columns in code points) after `bytes`, starting from `from`.
fn advance(mut from: Position, bytes: &[u8]) -> Position {
    match memchr::memrchr(b'\n', bytes) {
        Some(p) => {
            from.line += memchr::memchr_iter(b'\n', bytes).count() as u64;
            from.column = 1 + bytes[p + 1..].iter().filter(|&&b| b & 0xC0 != 0x80).count() as u64;
        }
        None => from.column += bytes.iter().filter(|&&b| b & 0xC0 != 0x80).count() as u64,
    }
    from
}

fn quote(bytes: &[u8]) -> String {
    let cut = &bytes[..bytes.len().min(MAX_REJECT_TEXT)];
    let mut s = String::from_utf8_lossy(cut).into_owned();
    if cut.len() < bytes.len() {
        s.push('…');
    }
    s
}

impl<'c, E, Q: FnMut(Quad) -> Result<(), E>, R: FnMut(Rejected) -> Result<(), E>> Driver<'c, Q, R> {
    fn reset(&mut self) {
        // The prefixes and base came through the same constructors before: they parse.
        self.low = Low::new(self.trig, self.base.as_deref(), &self.prefixes).expect("prefixes and base in force");
        self.fed = 0;
        self.remap = false;
        if let Some(b) = &self.block {
            // back into the block: its graph as a quad gave it, else its opener once more
            // (a fresh `[]` then: no quad used the earlier one)
            let text: Vec<u8> = if b.graph.is_some() { b"{\n".to_vec() } else { b.opener.clone() };
            self.remap = b.graph.is_some();
            self.low.extend(&text);
            self.low.extend(b"\n");
            self.fed += text.len() as u64 + 1;
        }
    }

    /// Feeds one unit (`text`, starting at `at`) and returns the first error, with its
    /// position. `tail`: the input ends after it.
    fn feed(&mut self, text: &[u8], at: Position, tail: bool) -> Option<(Position, String)> {
        let start = self.fed;
        self.low.extend(text);
        self.fed += text.len() as u64;
        if text.last().is_some_and(|&b| !is_blank(b)) {
            self.low.extend(b" ");
            self.fed += 1;
        }
        if tail {
            self.low.end();
        }
        self.pending.clear();
        while let Some(r) = self.low.next() {
            match r {
                Ok(q) => self.pending.push(q),
                Err(e) => {
                    let off = e.location().start.offset.saturating_sub(start).min(text.len() as u64) as usize;
                    return Some((advance(at, &text[..off]), e.message().to_string()));
                }
            }
        }
        None
    }

    fn commit(&mut self) -> Result<(), E> {
        for mut q in self.pending.drain(..) {
            if let Some(b) = &mut self.block {
                if self.remap {
                    if let Some(g) = &b.graph {
                        q.graph_name = g.clone();
                    }
                } else if b.graph.is_none() {
                    b.graph = Some(q.graph_name.clone());
                }
            }
            (self.on_quad)(q)?;
        }
        Ok(())
    }

    /// One unit: `text` is all its bytes (from `at`), `span` its tokens (offsets in `text`).
    fn unit(&mut self, u: &Unit, text: &[u8], at: Position, span: (usize, usize)) -> Result<(), E> {
        let span_start = advance(at, &text[..span.0]);
        let span_text = &text[span.0..span.1];
        let span_end_line = advance(span_start, span_text).line;
        if let Some(s) = &mut self.skipped {
            if !span_text.is_empty() {
                s.reject.text.push('\n');
                s.reject.text.push_str(&quote(span_text));
                s.reject.end_line = span_end_line;
            }
            if u.kind == Kind::Closer || u.kind == Kind::Tail {
                let s = self.skipped.take().expect("skipped block");
                self.block = None;
                (self.on_reject)(s.reject)?;
            }
            return Ok(());
        }
        if u.first.is_none() {
            // only blanks and comments (the end of the input)
            if let Some((pos, msg)) = self.feed(text, at, true) {
                let msg = match &self.block {
                    Some(_) => format!("{msg} (a graph block is not closed)"),
                    None => msg,
                };
                let rej = Rejected {
                    position: pos,
                    message: msg,
                    text: String::new(),
                    start_line: pos.line,
                    end_line: pos.line,
                };
                (self.on_reject)(rej)?;
            }
            return Ok(());
        }
        match self.feed(text, at, u.kind == Kind::Tail) {
            None => {
                match u.kind {
                    Kind::Opener => self.block = Some(Block { opener: span_text.to_vec(), graph: None }),
                    Kind::Closer => {}
                    _ => {}
                }
                self.commit()?;
                if u.kind == Kind::Closer {
                    self.block = None;
                    self.remap = false;
                }
                if u.directive != Directive::None {
                    if let Some(name) = &u.prefix_name {
                        if let Some(iri) = self.low.prefix(name) {
                            self.prefixes.retain(|(n, _)| n != name);
                            self.prefixes.push((name.clone(), iri.clone()));
                            self.declared.push((name.clone(), iri));
                        }
                    }
                    self.base = self.low.base();
                }
                Ok(())
            }
            Some((pos, message)) => {
                self.pending.clear();
                let rej = Rejected {
                    position: pos,
                    message,
                    text: quote(span_text),
                    start_line: span_start.line,
                    end_line: span_end_line,
                };
                match u.kind {
                    Kind::Opener => {
                        // its graph is unknown: the block goes whole, as one reject
                        let mut rej = rej;
                        rej.message = format!("{}; the whole graph block is skipped", rej.message);
                        self.block = None;
                        self.reset();
                        self.skipped = Some(Skipped { reject: rej });
                        return Ok(());
                    }
                    Kind::Closer => self.block = None,
                    _ => {}
                }
                self.reset();
                (self.on_reject)(rej)
            }
        }
    }
}

/// Bytes read at a time.
const READ_BYTES: usize = 1 << 20;

/// Parses a Turtle/TriG stream unit by unit (see the module's description); returns every
/// prefix declaration accepted, in input order. `Err(Ok(io))` is an I/O error (e.g. corrupt
/// compression), `Err(Err(e))` a callback's error.
pub(crate) fn parse_units<E>(
    trig: bool,
    mut reader: impl Read,
    base: Option<&str>,
    on_quad: &mut impl FnMut(Quad) -> Result<(), E>,
    on_reject: &mut impl FnMut(Rejected) -> Result<(), E>,
) -> Result<Vec<(String, String)>, Result<io::Error, E>> {
    let low = Low::new(trig, base, &[]).map_err(|e| Ok(io::Error::new(io::ErrorKind::InvalidInput, e)))?;
    let mut d = Driver {
        trig,
        low,
        fed: 0,
        prefixes: Vec::new(),
        declared: Vec::new(),
        base: base.map(str::to_string),
        block: None,
        remap: false,
        skipped: None,
        pending: Vec::new(),
        on_quad,
        on_reject,
    };
    let mut buf: Vec<u8> = Vec::new();
    let mut pos = 0usize; // start of the next unit in buf
    let mut at = Position { line: 1, column: 1 };
    let mut eof = false;
    let mut want = READ_BYTES;
    loop {
        let in_block = d.block.is_some() || d.skipped.is_some();
        match scan(&buf, pos, eof, trig, in_block) {
            Scan::Need => {
                if pos > 0 && pos >= buf.len() / 2 {
                    buf.drain(..pos);
                    pos = 0;
                }
                let old = buf.len();
                buf.resize(old + want, 0);
                let n = loop {
                    match reader.read(&mut buf[old..]) {
                        Ok(n) => break n,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                        Err(e) => return Err(Ok(e)),
                    }
                };
                buf.truncate(old + n);
                eof = n == 0;
                // a unit longer than what we read: read more next time (linear overall)
                want = if buf.len() - pos > want { want * 2 } else { READ_BYTES };
            }
            Scan::Unit(u) => {
                let text = &buf[pos..u.end];
                let span = match u.first {
                    Some(f) => (f - pos, u.last_end - pos),
                    None => (text.len(), text.len()),
                };
                d.unit(&u, text, at, span).map_err(Err)?;
                at = advance(at, text);
                pos = u.end;
                if u.kind == Kind::Tail {
                    break;
                }
            }
        }
    }
    Ok(d.declared)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn units(s: &str, trig: bool) -> Vec<String> {
        let b = s.as_bytes();
        let mut out = Vec::new();
        let mut pos = 0;
        let mut in_block = false;
        loop {
            match scan(b, pos, true, trig, in_block) {
                Scan::Need => unreachable!(),
                Scan::Unit(u) => {
                    if let Some(f) = u.first {
                        out.push(s[f..u.last_end].to_string());
                    }
                    match u.kind {
                        Kind::Opener => in_block = true,
                        Kind::Closer => in_block = false,
                        _ => {}
                    }
                    pos = u.end;
                    if u.kind == Kind::Tail {
                        return out;
                    }
                }
            }
        }
    }

    #[test]
    fn boundaries_follow_tokens() {
        assert_eq!(
            units("@prefix : <http://e/a.b> .\n:a :b \"x . y\" , 1.5, .5, 1.e3 ; :c :d.e .:f :g '''a.\n.''' .", false),
            vec!["@prefix : <http://e/a.b> .", ":a :b \"x . y\" , 1.5, .5, 1.e3 ; :c :d.e .", ":f :g '''a.\n.''' ."]
        );
        assert_eq!(
            units("PREFIX p: <http://p/>\nBASE <http://b/> :a :b :c . # x . y\n:a :b 1.\n", false),
            vec!["PREFIX p: <http://p/>", "BASE <http://b/>", ":a :b :c .", ":a :b 1."]
        );
        assert_eq!(
            units(":g { :a :b :c . :d :e :f } GRAPH :h { :x :y [ :z \"}\" ] } { :a :b :c {| :s :t |} }", true),
            vec![
                ":g {",
                ":a :b :c .",
                ":d :e :f }",
                "GRAPH :h {",
                ":x :y [ :z \"}\" ] }",
                "{",
                ":a :b :c {| :s :t |} }"
            ]
        );
        assert_eq!(units(":a :b :c ", false), vec![":a :b :c"]);
    }

    fn run(doc: &str, trig: bool) -> (Vec<String>, Vec<Rejected>) {
        let mut quads = Vec::new();
        let mut rejects = Vec::new();
        parse_units::<()>(
            trig,
            doc.as_bytes(),
            None,
            &mut |q| {
                quads.push(q.to_string());
                Ok(())
            },
            &mut |r| {
                rejects.push(r);
                Ok(())
            },
        )
        .unwrap();
        (quads, rejects)
    }

    #[test]
    fn an_error_inside_a_block_keeps_the_block_graph() {
        let (q, r) =
            run("@prefix : <http://ex/> .\n:g {\n  :a :p undefined:x .\n  :c :d :e .\n}\n:h { :x :y :z }\n", true);
        assert_eq!(
            q,
            vec![
                "<http://ex/c> <http://ex/d> <http://ex/e> <http://ex/g>",
                "<http://ex/x> <http://ex/y> <http://ex/z> <http://ex/h>"
            ]
        );
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!((r[0].start_line, r[0].position.line, r[0].end_line), (3, 3, 3));
        assert_eq!(r[0].text, ":a :p undefined:x .");
    }

    #[test]
    fn an_unbalanced_bracket_costs_its_statement_only() {
        let doc = "@prefix : <http://ex/> .\n:a :p [ :q :r :s ] ] .\n:b :created \"2014\" ;\n  a :E .\n";
        let (q, r) = run(doc, false);
        assert_eq!(q.len(), 2, "{q:?}");
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!((r[0].start_line, r[0].end_line), (2, 2));
        let (q, r) = run(&format!("{doc}:g {{ :x :y :z . }}\n"), true);
        assert_eq!(q.len(), 3, "{q:?}");
        assert_eq!(r.len(), 1, "{r:?}");
    }

    #[test]
    fn a_bad_graph_name_skips_its_block_as_one_reject() {
        let (q, r) = run("@prefix : <http://ex/> .\nbad:g {\n :a :b :c .\n :d :e :f .\n}\n:a :b :c .\n", true);
        assert_eq!(q, vec!["<http://ex/a> <http://ex/b> <http://ex/c>"]);
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!((r[0].start_line, r[0].end_line), (2, 5));
        assert!(r[0].message.contains("whole graph block"), "{}", r[0].message);
    }

    #[test]
    fn prefix_declarations_in_order_with_redefinitions() {
        let mut declared = Vec::new();
        let doc = "@prefix b: <http://b1/> .\nPREFIX a: <http://a/>\n@prefix b: <http://b2/> .\n@prefix c: <bad iri> .\n@base <http://base/> .\nPREFIX : <rel/>\n";
        declared.extend(parse_units::<()>(false, doc.as_bytes(), None, &mut |_| Ok(()), &mut |_| Ok(())).unwrap());
        let want = [("b", "http://b1/"), ("a", "http://a/"), ("b", "http://b2/"), ("", "http://base/rel/")];
        assert_eq!(declared, want.map(|(a, b)| (a.to_string(), b.to_string())));
    }
}
