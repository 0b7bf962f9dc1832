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
//!
//! The same units make the parallel parse: [`TerseSplitter`] groups them into chunks, each
//! with the state it starts in ([`TerseState`]: prefixes, base, open block), and
//! [`parse_chunk`] parses a chunk with a parser seeded with it, checking at its end that the
//! cut was a statement boundary. Blank nodes oxttl invents are named after their unit's
//! offset, so that any cut gives the same labels.
//!
//! With a fast-path callback ([`OnFast`]), a statement unit that fastterse.rs reads whole
//! skips oxttl: its statements go to the callback, which may still hand the unit back.

use std::io::{self, Read};

use oxrdf::{GraphName, Quad};
use oxttl::{TriGParser, TurtleParser, TurtleSyntaxError};

use crate::fastline::{FastStatement, TermSlice};
use crate::fastterse::FastTerse;
use crate::rejected::{Position, Rejected};
use crate::substitute::Substitutions;

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

/// Bytes that end a word: blanks and Turtle's punctuation (a table: the scanner asks for
/// every byte of every name).
const NOT_WORD: [bool; 256] = {
    let mut t = [false; 256];
    let ends = b" \t\n\r<>\"'{}()[],;#^|~";
    let mut k = 0;
    while k < ends.len() {
        t[ends[k] as usize] = true;
        k += 1;
    }
    t
};

fn is_word(b: u8) -> bool {
    !NOT_WORD[b as usize]
}

/// The first of `a` or `b` at or after `from`, if any (`from` may be past the end).
fn find2(a: u8, b: u8, buf: &[u8], from: usize) -> Option<usize> {
    buf.get(from..).and_then(|rest| memchr::memchr2(a, b, rest)).map(|p| from + p)
}

/// The scanner ran out of buffer before it could tell where a token ends.
struct Need;

/// `Err(Need)` unless the buffer is the end of the input (then the token ends there).
fn need(eof: bool) -> Result<(), Need> {
    if eof {
        Ok(())
    } else {
        Err(Need)
    }
}

/// After the blanks that follow a unit's end, up to and including the first newline.
fn after_trailing_blanks(buf: &[u8], mut end: usize) -> usize {
    let n = buf.len();
    while end < n && matches!(buf[end], b' ' | b'\t' | b'\r') {
        end += 1;
    }
    if end < n && buf[end] == b'\n' {
        end += 1;
    }
    end
}

/// The first byte at or after `i` that is neither blank nor in a comment.
fn skip_blanks_and_comments(buf: &[u8], mut i: usize, eof: bool) -> Result<usize, Need> {
    let n = buf.len();
    while i < n {
        if is_blank(buf[i]) {
            i += 1;
        } else if buf[i] == b'#' {
            match memchr::memchr(b'\n', &buf[i..]) {
                Some(p) => i += p + 1,
                None => {
                    need(eof)?;
                    i = n;
                }
            }
        } else {
            break;
        }
    }
    Ok(i)
}

/// The end of the token at `i`, which starts with `<`: an IRI (then true) or `<<`.
fn scan_angle(buf: &[u8], i: usize, eof: bool) -> Result<(usize, bool), Need> {
    let n = buf.len();
    if i + 1 >= n {
        need(eof)?;
        return Ok((i + 1, false));
    }
    if buf[i + 1] == b'<' {
        return Ok((i + 2, false));
    }
    let mut j = i + 1;
    loop {
        // as oxttl reads an IRI: up to `>`, whatever comes before (a bad
        // character is its error, in this unit)
        let Some(k) = find2(b'>', b'\\', buf, j) else {
            need(eof)?;
            return Ok((n, false));
        };
        if buf[k] == b'>' {
            return Ok((k + 1, true));
        }
        j = k + 2;
    }
}

/// The end of the string token at `i` (its opening quote, short or long).
fn scan_string(buf: &[u8], i: usize, eof: bool) -> Result<usize, Need> {
    let n = buf.len();
    let c = buf[i];
    if i + 2 >= n {
        need(eof)?;
    }
    let long = i + 2 < n && buf[i + 1] == c && buf[i + 2] == c;
    if long {
        let mut j = i + 3;
        loop {
            // Only a quote or a backslash can end the string or skip a byte.
            j = find2(c, b'\\', buf, j).unwrap_or(n);
            if j + 2 >= n {
                need(eof)?;
                return Ok(n);
            }
            if buf[j] == b'\\' {
                j += 2;
            } else if buf[j] == c && buf[j + 1] == c && buf[j + 2] == c {
                // the first three quotes end it: its text cannot end with a
                // quote (`"""a""""` is a string and a stray quote, as oxttl reads it)
                return Ok(j + 3);
            } else {
                j += 1;
            }
        }
    } else {
        let mut j = i + 1;
        loop {
            // as oxttl reads a string: a line end inside is its error, but the
            // token runs on to the closing quote
            let Some(k) = find2(c, b'\\', buf, j) else {
                need(eof)?;
                return Ok(n);
            };
            if buf[k] == c {
                return Ok(k + 1);
            }
            j = k + 2;
        }
    }
}

/// The end of the word (name, number, keyword) at `i` (may be past the buffer's end).
fn scan_word(buf: &[u8], i: usize, eof: bool) -> Result<usize, Need> {
    let n = buf.len();
    let mut j = i;
    loop {
        if j >= n {
            need(eof)?;
            break;
        }
        let b = buf[j];
        if b == b'\\' {
            j += 2;
        } else if b == b'.' {
            // dots inside a name or number: followed by more of the word
            let k = j + buf[j..].iter().take_while(|&&c| c == b'.').count();
            if k >= n {
                need(eof)?;
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
    Ok(j)
}

/// The directive a unit whose first token is the word `w` is.
fn directive_of(w: &[u8]) -> Directive {
    match w {
        b"@prefix" => Directive::At { prefix: true },
        b"@base" | b"@version" => Directive::At { prefix: false },
        _ if w.eq_ignore_ascii_case(b"PREFIX") => Directive::Sparql { prefix: true, version: false },
        _ if w.eq_ignore_ascii_case(b"BASE") => Directive::Sparql { prefix: false, version: false },
        _ if w.eq_ignore_ascii_case(b"VERSION") => Directive::Sparql { prefix: false, version: true },
        _ => Directive::None,
    }
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
    let finish = |end: usize, first, last_end, kind, directive, prefix_name| {
        Scan::Unit(Unit { end: after_trailing_blanks(buf, end), first, last_end, kind, directive, prefix_name })
    };
    loop {
        let Ok(next) = skip_blanks_and_comments(buf, i, eof) else { return Scan::Need };
        i = next;
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
                let Ok((end, is_iri)) = scan_angle(buf, i, eof) else { return Scan::Need };
                (i, iri) = (end, is_iri);
            }
            b'"' | b'\'' => {
                string = true;
                let Ok(end) = scan_string(buf, i, eof) else { return Scan::Need };
                i = end;
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
                let Ok(end) = scan_word(buf, i, eof) else { return Scan::Need };
                i = end.min(n);
                word = Some((t, i));
            }
            _ => i += 1, // punctuation
        }
        last_end = i.min(n);
        i = i.min(n);
        if tokens == 1 {
            if let Some((a, b)) = word {
                directive = directive_of(&buf[a..b]);
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

/// Takes the statements of a unit the fast path read; `Ok(false)` when a term fails the
/// caller's checks: the unit then goes to oxttl, and nothing of it may have been kept.
pub type OnFast<'c, E> = dyn FnMut(&[FastStatement<'_>]) -> Result<bool, E> + 'c;

struct Driver<'c, E, Q, R> {
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
    /// Absolute offset of the current unit's first token: names its anonymous blank nodes.
    unit_key: u64,
    /// Anonymous blank nodes of the current unit: oxttl's random label → ours.
    unit_blanks: Vec<(String, String)>,
    /// The anonymous graph of the open block (`[] {`): oxttl's label → ours.
    block_blank: Option<(String, String)>,
    on_quad: &'c mut Q,
    on_reject: &'c mut R,
    /// The fast path for common statements (fastterse.rs), when the caller takes its statements.
    fast: Option<(FastTerse, &'c mut OnFast<'c, E>)>,
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

impl<'c, E, Q: FnMut(Quad) -> Result<(), E>, R: FnMut(Rejected) -> Result<(), E>> Driver<'c, E, Q, R> {
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

    /// Feeds one unit (`text`) and returns the first error, with its byte offset in `text`.
    /// `tail`: the input ends after it.
    fn feed(&mut self, text: &[u8], tail: bool) -> Option<(usize, String)> {
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
                    return Some((off, e.message().to_string()));
                }
            }
        }
        None
    }

    /// Our label for a blank node oxttl gave: a label written in the unit (or in the block's
    /// opener) is document-scoped and kept; any other is one oxttl invented for `[]`, a
    /// collection or a reifier, and is named after the unit's offset and its order of first
    /// appearance in the unit, so that any cut of the file into chunks names it the same.
    fn blank(&mut self, b: &oxrdf::BlankNode, text: &[u8]) -> Option<oxrdf::BlankNode> {
        let raw = b.as_str();
        let mut written = Vec::with_capacity(raw.len() + 2);
        written.extend_from_slice(b"_:");
        written.extend_from_slice(raw.as_bytes());
        let opener = self.block.as_ref().map_or(&[][..], |b| &b.opener[..]);
        if memchr::memmem::find(text, &written).is_some() || memchr::memmem::find(opener, &written).is_some() {
            return None;
        }
        if let Some((from, to)) = &self.block_blank {
            if from == raw {
                return Some(oxrdf::BlankNode::new_unchecked(to.clone()));
            }
        }
        let n = match self.unit_blanks.iter().position(|(from, _)| from == raw) {
            Some(n) => n,
            None => {
                // A space cannot occur in a written label: no clash with one.
                let ours = format!("{} {}", self.unit_key, self.unit_blanks.len());
                self.unit_blanks.push((raw.to_string(), ours));
                self.unit_blanks.len() - 1
            }
        };
        Some(oxrdf::BlankNode::new_unchecked(self.unit_blanks[n].1.clone()))
    }

    fn relabel_term(&mut self, t: &mut oxrdf::Term, text: &[u8]) {
        match t {
            oxrdf::Term::BlankNode(b) => {
                if let Some(n) = self.blank(b, text) {
                    *b = n;
                }
            }
            oxrdf::Term::Triple(tr) => {
                if let oxrdf::NamedOrBlankNode::BlankNode(b) = &mut tr.subject {
                    if let Some(n) = self.blank(b, text) {
                        *b = n;
                    }
                }
                self.relabel_term(&mut tr.object, text);
            }
            _ => {}
        }
    }

    fn relabel(&mut self, q: &mut Quad, text: &[u8]) {
        if let oxrdf::NamedOrBlankNode::BlankNode(b) = &mut q.subject {
            if let Some(n) = self.blank(b, text) {
                *b = n;
            }
        }
        self.relabel_term(&mut q.object, text);
        if let GraphName::BlankNode(b) = &mut q.graph_name {
            if let Some(n) = self.blank(b, text) {
                if self.block.is_some() && self.block_blank.is_none() {
                    self.block_blank = Some((b.as_str().to_string(), n.as_str().to_string()));
                }
                *b = n;
            }
        }
    }

    fn commit(&mut self, text: &[u8]) -> Result<(), E> {
        self.unit_blanks.clear();
        let mut pending = std::mem::take(&mut self.pending);
        for q in pending.iter_mut() {
            self.relabel(q, text);
        }
        for mut q in pending.drain(..) {
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
        self.pending = pending;
        Ok(())
    }

    /// A statement unit the fast path reads and the caller takes (oxttl never sees it: a
    /// whole statement leaves its state as it was). Inside a graph block only once a quad
    /// of oxttl's named the block's graph.
    fn fast_unit(&mut self, span: &[u8]) -> Result<bool, E> {
        let Some((reader, on_fast)) = &mut self.fast else { return Ok(false) };
        let graph = match &self.block {
            None => None,
            Some(Block { graph: None, .. }) => return Ok(false),
            Some(Block { graph: Some(g), .. }) => match g {
                GraphName::DefaultGraph => None,
                GraphName::NamedNode(n) => Some(TermSlice::Iri(n.as_str())),
                GraphName::BlankNode(b) => Some(TermSlice::Blank(b.as_str())),
            },
        };
        let Ok(span) = std::str::from_utf8(span) else { return Ok(false) };
        if !reader.parse(span, &self.prefixes) {
            return Ok(false);
        }
        on_fast(&reader.statements(span, graph))
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
            if let Some((off, msg)) = self.feed(text, true) {
                let pos = advance(at, &text[..off]);
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
        if u.kind == Kind::Statement && u.directive == Directive::None && self.fast_unit(span_text)? {
            return Ok(());
        }
        // A term the strict parser refuses and Jena keeps (substitute.rs): the unit is
        // parsed again with a placeholder in its place, from the state it started in.
        let mut subs = Substitutions::default();
        let mut rewritten: Option<Vec<u8>> = None;
        let outcome = loop {
            let current = rewritten.as_deref().unwrap_or(text);
            match self.feed(current, u.kind == Kind::Tail) {
                None => break None,
                Some((off, msg)) => {
                    if u.directive == Directive::None && u.kind != Kind::Opener {
                        if let Some(next) = subs.rewrite(text, current, off, &msg) {
                            self.reset();
                            rewritten = Some(next);
                            continue;
                        }
                    }
                    let off = subs.original_offset(off).min(text.len());
                    break Some((advance(at, &text[..off]), msg));
                }
            }
        };
        if !subs.is_empty() {
            let pending = std::mem::take(&mut self.pending);
            self.pending = pending.into_iter().map(|q| subs.restore(q)).collect();
        }
        match outcome {
            None => {
                match u.kind {
                    Kind::Opener => self.block = Some(Block { opener: span_text.to_vec(), graph: None }),
                    Kind::Closer => {}
                    _ => {}
                }
                self.commit(text)?;
                if u.kind == Kind::Closer {
                    self.block = None;
                    self.block_blank = None;
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
                        self.block_blank = None;
                        self.reset();
                        self.skipped = Some(Skipped { reject: rej });
                        return Ok(());
                    }
                    Kind::Closer => {
                        self.block = None;
                        self.block_blank = None;
                    }
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

/// The parser state a point of a Turtle/TriG file is in, between two units: what the
/// accepted directives left, and the open graph block. Nothing else carries over from one
/// unit to the next (the scanner's boundaries end statements), so a parser seeded with it
/// parses what follows as the sequential parse does; [`parse_chunk`] checks that at every cut.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TerseState {
    pub prefixes: Vec<(String, String)>,
    pub base: Option<String>,
    /// Inside a TriG graph block whose opener parsed: the opener's text.
    pub block: Option<Vec<u8>>,
}

/// Where a chunk starts: its absolute byte offset and position, and the state there.
#[derive(Clone, Debug)]
pub struct TerseStart {
    pub offset: u64,
    /// Prefix declarations accepted before it.
    pub declared: usize,
    pub position: Position,
    pub state: TerseState,
}

impl TerseStart {
    /// The beginning of an input, with `base` (default: none).
    pub fn beginning(base: Option<&str>) -> TerseStart {
        TerseStart {
            offset: 0,
            declared: 0,
            position: Position { line: 1, column: 1 },
            state: TerseState { base: base.map(str::to_string), ..TerseState::default() },
        }
    }
}

/// Whole units of a Turtle/TriG file, to be parsed on their own ([`parse_chunk`]).
#[derive(Debug)]
pub struct TerseChunk {
    /// Sequence number within the file, from 0.
    pub seq: u64,
    pub start: TerseStart,
    /// The state after the chunk, as the splitter computed it (the next chunk's start).
    pub end: TerseState,
    pub data: Vec<u8>,
    /// The input ends with this chunk.
    pub last: bool,
}

/// How a chunk's parse ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChunkEnd {
    /// At a clean statement boundary, in the state the splitter gave the next chunk.
    Clean,
    /// The parser did not end the chunk where the splitter did: the cut was wrong (or an
    /// error of the input made it so), and what follows must be parsed sequentially.
    Dirty,
}

/// A fresh parser in `state` (back inside its block, as after an error), fed `text`;
/// `Some(parser)` when no error came.
fn probe(trig: bool, state: &TerseState, text: &[u8], tail: bool) -> Option<Low> {
    let mut low = Low::new(trig, state.base.as_deref(), &state.prefixes).ok()?;
    if let Some(opener) = &state.block {
        low.extend(opener);
        low.extend(b"\n");
    }
    low.extend(text);
    if text.last().is_some_and(|&b| !is_blank(b)) {
        low.extend(b" ");
    }
    if tail {
        low.end();
    }
    while let Some(r) = low.next() {
        r.ok()?;
    }
    Some(low)
}

/// Cuts a Turtle/TriG stream into chunks of whole units (about `target` bytes each), each
/// with the state it starts in. Only directives and graph-block openers are parsed here, as
/// the sequential parse applies them (a bad directive has no effect); the statements are
/// left to the workers. A chunk is cut at a line start (or, past four times the target, at
/// any unit end), never inside a graph block whose opener failed (skipped whole, as one
/// reject) or makes an anonymous graph (`[] {`, whose node the next chunk could not name).
pub struct TerseSplitter<R> {
    reader: R,
    trig: bool,
    target: usize,
    /// The input from the current chunk's start.
    buf: Vec<u8>,
    /// Start of the next unit in `buf`, and its position.
    pos: usize,
    at: Position,
    start: TerseStart,
    state: TerseState,
    /// Inside a graph block whose opener failed.
    skipped: bool,
    declared: Vec<(String, String)>,
    eof: bool,
    done: bool,
    seq: u64,
    want: usize,
}

impl<R: Read> TerseSplitter<R> {
    /// Fails when `base` is not an IRI.
    pub fn new(trig: bool, reader: R, base: Option<&str>, target: usize) -> io::Result<Self> {
        Low::new(trig, base, &[]).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        let start = TerseStart::beginning(base);
        Ok(TerseSplitter {
            reader,
            trig,
            target: target.max(1),
            buf: Vec::new(),
            pos: 0,
            at: start.position,
            state: start.state.clone(),
            start,
            skipped: false,
            declared: Vec::new(),
            eof: false,
            done: false,
            seq: 0,
            want: READ_BYTES,
        })
    }

    /// Every prefix declaration accepted so far, in input order (all of them once
    /// [`Self::next_chunk`] gave `None`).
    pub fn declared(&self) -> &[(String, String)] {
        &self.declared
    }

    /// What a unit does to the state, as [`Driver::unit`] does it.
    fn apply(&mut self, u: &Unit, text: &[u8], span: &[u8]) {
        if self.skipped {
            if matches!(u.kind, Kind::Closer | Kind::Tail) {
                self.skipped = false;
            }
            return;
        }
        if u.first.is_none() {
            return;
        }
        let probed = (u.kind == Kind::Opener || u.directive != Directive::None)
            .then(|| probe(self.trig, &self.state, text, u.kind == Kind::Tail));
        match u.kind {
            Kind::Opener => match &probed {
                Some(Some(_)) => self.state.block = Some(span.to_vec()),
                _ => self.skipped = true,
            },
            Kind::Closer => self.state.block = None,
            _ => {}
        }
        if let (Some(Some(low)), true) = (&probed, u.directive != Directive::None) {
            if let Some(name) = &u.prefix_name {
                if let Some(iri) = low.prefix(name) {
                    self.state.prefixes.retain(|(n, _)| n != name);
                    self.state.prefixes.push((name.clone(), iri.clone()));
                    self.declared.push((name.clone(), iri));
                }
            }
            self.state.base = low.base();
        }
    }

    fn can_cut(&self) -> bool {
        let block_ok = self.state.block.as_ref().is_none_or(|o| !o.contains(&b'['));
        self.pos >= self.target && !self.skipped && block_ok && (self.at.column == 1 || self.pos >= 4 * self.target)
    }

    /// The next chunk, or `None` after the last one. A read error ends the stream with it.
    pub fn next_chunk(&mut self) -> io::Result<Option<TerseChunk>> {
        if self.done {
            return Ok(None);
        }
        loop {
            let in_block = self.state.block.is_some() || self.skipped;
            match scan(&self.buf, self.pos, self.eof, self.trig, in_block) {
                Scan::Need => {
                    let old = self.buf.len();
                    self.buf.resize(old + self.want, 0);
                    let n = loop {
                        match self.reader.read(&mut self.buf[old..]) {
                            Ok(n) => break n,
                            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                            Err(e) => {
                                self.buf.truncate(old);
                                return Err(e);
                            }
                        }
                    };
                    self.buf.truncate(old + n);
                    self.eof = n == 0;
                    self.want = if self.buf.len() - self.pos > self.want { self.want * 2 } else { READ_BYTES };
                }
                Scan::Unit(u) => {
                    // Only directives and openers are parsed: their text is copied, no other.
                    let parsed = u.kind == Kind::Opener || u.directive != Directive::None;
                    let (text, span) = match (parsed, u.first) {
                        (true, Some(f)) => (self.buf[self.pos..u.end].to_vec(), self.buf[f..u.last_end].to_vec()),
                        _ => (Vec::new(), Vec::new()),
                    };
                    self.apply(&u, &text, &span);
                    self.at = advance(self.at, &self.buf[self.pos..u.end]);
                    self.pos = u.end;
                    let last = u.kind == Kind::Tail;
                    if last || self.can_cut() {
                        let rest = self.buf.split_off(self.pos);
                        let data = std::mem::replace(&mut self.buf, rest);
                        let next = TerseStart {
                            offset: self.start.offset + self.pos as u64,
                            declared: self.declared.len(),
                            position: self.at,
                            state: self.state.clone(),
                        };
                        let start = std::mem::replace(&mut self.start, next);
                        let chunk = TerseChunk { seq: self.seq, start, end: self.state.clone(), data, last };
                        self.seq += 1;
                        self.pos = 0;
                        self.done = last;
                        return Ok(Some(chunk));
                    }
                }
            }
        }
    }
}

impl<'c, E, Q: FnMut(Quad) -> Result<(), E>, R: FnMut(Rejected) -> Result<(), E>> Driver<'c, E, Q, R> {
    fn seeded(
        trig: bool,
        state: &TerseState,
        on_quad: &'c mut Q,
        on_reject: &'c mut R,
        on_fast: Option<&'c mut OnFast<'c, E>>,
    ) -> Result<Self, String> {
        let low = Low::new(trig, state.base.as_deref(), &state.prefixes)?;
        let mut d = Driver {
            trig,
            low,
            fed: 0,
            prefixes: state.prefixes.clone(),
            declared: Vec::new(),
            base: state.base.clone(),
            block: state.block.as_ref().map(|o| Block { opener: o.clone(), graph: None }),
            remap: false,
            skipped: None,
            pending: Vec::new(),
            unit_key: 0,
            unit_blanks: Vec::new(),
            block_blank: None,
            on_quad,
            on_reject,
            fast: on_fast.map(|f| (FastTerse::default(), f)),
        };
        if d.block.is_some() {
            d.reset(); // back into the block, as after an error in it
        }
        Ok(d)
    }

    fn scanned(&mut self, buf: &[u8], offset: u64, pos: usize, u: &Unit, at: Position) -> Result<(), E> {
        let text = &buf[pos..u.end];
        let span = match u.first {
            Some(f) => (f - pos, u.last_end - pos),
            None => (text.len(), text.len()),
        };
        self.unit_key = offset + pos as u64 + span.0 as u64;
        self.unit(u, text, at, span)
    }

    /// The state after the units fed, for comparison with the splitter's.
    fn state(&self) -> TerseState {
        TerseState {
            prefixes: self.prefixes.clone(),
            base: self.base.clone(),
            block: self.block.as_ref().map(|b| b.opener.clone()),
        }
    }
}

/// Parses a Turtle/TriG stream unit by unit (see the module's description) from `start`
/// (the beginning of the input, or a chunk's start with the reader there); returns every
/// prefix declaration accepted, in input order. `Err(Ok(io))` is an I/O error (e.g. corrupt
/// compression), `Err(Err(e))` a callback's error.
pub(crate) fn parse_units<E>(
    trig: bool,
    mut reader: impl Read,
    start: &TerseStart,
    on_quad: &mut impl FnMut(Quad) -> Result<(), E>,
    on_reject: &mut impl FnMut(Rejected) -> Result<(), E>,
) -> Result<Vec<(String, String)>, Result<io::Error, E>> {
    let mut d = Driver::seeded(trig, &start.state, on_quad, on_reject, None)
        .map_err(|e| Ok(io::Error::new(io::ErrorKind::InvalidInput, e)))?;
    let mut buf: Vec<u8> = Vec::new();
    let mut buf_offset = start.offset; // absolute offset of buf[0]
    let mut pos = 0usize; // start of the next unit in buf
    let mut at = start.position;
    let mut eof = false;
    let mut want = READ_BYTES;
    loop {
        let in_block = d.block.is_some() || d.skipped.is_some();
        match scan(&buf, pos, eof, trig, in_block) {
            Scan::Need => {
                if pos > 0 && pos >= buf.len() / 2 {
                    buf.drain(..pos);
                    buf_offset += pos as u64;
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
                d.scanned(&buf, buf_offset, pos, &u, at).map_err(Err)?;
                at = advance(at, &buf[pos..u.end]);
                pos = u.end;
                if u.kind == Kind::Tail {
                    break;
                }
            }
        }
    }
    Ok(d.declared)
}

/// Parses one chunk the way [`parse_units`] parses those units in the whole stream, seeded
/// with the state the splitter gave it. `Ok(ChunkEnd::Dirty)` when the parser did not end
/// the chunk at a statement boundary in the splitter's end state: its quads and rejects
/// must then be replaced by a sequential parse from the chunk's start. With `on_fast`, the
/// common statements the fast path reads go there instead of `on_quad` (see [`OnFast`]).
pub fn parse_chunk<E>(
    trig: bool,
    chunk: &TerseChunk,
    on_quad: &mut impl FnMut(Quad) -> Result<(), E>,
    on_reject: &mut impl FnMut(Rejected) -> Result<(), E>,
    on_fast: Option<&mut OnFast<'_, E>>,
) -> Result<ChunkEnd, E> {
    let on_fast = on_fast.map(|f| f as &mut OnFast<'_, E>);
    let Ok(mut d) = Driver::seeded(trig, &chunk.start.state, on_quad, on_reject, on_fast) else {
        return Ok(ChunkEnd::Dirty);
    };
    let buf = &chunk.data[..];
    let mut pos = 0usize;
    let mut at = chunk.start.position;
    loop {
        let in_block = d.block.is_some() || d.skipped.is_some();
        let Scan::Unit(u) = scan(buf, pos, true, trig, in_block) else { unreachable!("the whole chunk is there") };
        if u.kind == Kind::Tail && !chunk.last {
            // Where the splitter cut: only blanks may be left, the parser must be at a
            // statement boundary, in the state the next chunk starts in.
            if u.first.is_some() || d.skipped.is_some() || d.state() != chunk.end {
                return Ok(ChunkEnd::Dirty);
            }
            if d.block.is_some() {
                d.low.extend(b"}");
            }
            d.low.extend(b" ");
            d.low.end();
            if d.low.next().is_some() {
                return Ok(ChunkEnd::Dirty);
            }
            return Ok(ChunkEnd::Clean);
        }
        d.scanned(buf, chunk.start.offset, pos, &u, at)?;
        at = advance(at, &buf[pos..u.end]);
        pos = u.end;
        if u.kind == Kind::Tail {
            return Ok(ChunkEnd::Clean);
        }
    }
}

/// Parses a stream as the loader's workers do: cut by [`TerseSplitter`] into chunks of about
/// `target` bytes, each parsed on its own by [`parse_chunk`] (here one after the other; the
/// loader spreads them over its workers), and from a chunk that ends dirty on, sequentially
/// by [`parse_units`]. Gives what [`parse_units`] gives on the whole stream: the property
/// test and the `input_terse_split` fuzz target check that.
pub fn parse_split<E>(
    trig: bool,
    reader: impl Read,
    base: Option<&str>,
    target: usize,
    on_quad: &mut impl FnMut(Quad) -> Result<(), E>,
    on_reject: &mut impl FnMut(Rejected) -> Result<(), E>,
) -> Result<Vec<(String, String)>, Result<io::Error, E>> {
    split_with(trig, reader, base, target, None, on_quad, on_reject)
}

/// The quads of the statements the fast path read, `None` to leave them to oxttl: the
/// pipeline's term checks, as a model (terse_check.rs).
pub(crate) type FastModel<'m> = &'m dyn Fn(&[FastStatement<'_>]) -> Option<Vec<Quad>>;

/// [`parse_split`], with the chunks' fast path on when `fast` is given.
pub(crate) fn split_with<E>(
    trig: bool,
    reader: impl Read,
    base: Option<&str>,
    target: usize,
    fast: Option<FastModel<'_>>,
    on_quad: &mut impl FnMut(Quad) -> Result<(), E>,
    on_reject: &mut impl FnMut(Rejected) -> Result<(), E>,
) -> Result<Vec<(String, String)>, Result<io::Error, E>> {
    let mut splitter = TerseSplitter::new(trig, reader, base, target).map_err(Ok)?;
    // Chunks are kept until parsed clean, so that a dirty one can be parsed again with what follows.
    let mut chunks: Vec<TerseChunk> = Vec::new();
    while let Some(chunk) = splitter.next_chunk().map_err(Ok)? {
        chunks.push(chunk);
    }
    for (k, chunk) in chunks.iter().enumerate() {
        // Quads and rejects in the order the parse gave them.
        let events = std::cell::RefCell::new(Vec::new());
        let mut on_fast = |st: &[FastStatement<'_>]| -> Result<bool, ()> {
            let Some(quads) = fast.and_then(|model| model(st)) else { return Ok(false) };
            events.borrow_mut().extend(quads.into_iter().map(Ok));
            Ok(true)
        };
        let end = parse_chunk::<()>(
            trig,
            chunk,
            &mut |q| {
                events.borrow_mut().push(Ok(q));
                Ok(())
            },
            &mut |r| {
                events.borrow_mut().push(Err(r));
                Ok(())
            },
            fast.is_some().then_some(&mut on_fast as &mut OnFast<'_, ()>),
        )
        .unwrap_or_else(|()| unreachable!("the callbacks never stop"));
        if end == ChunkEnd::Dirty {
            let rest: Vec<u8> = chunks[k..].iter().flat_map(|c| c.data.iter().copied()).collect();
            let mut declared = splitter.declared()[..chunk.start.declared].to_vec();
            declared.extend(parse_units(trig, &rest[..], &chunk.start, on_quad, on_reject)?);
            return Ok(declared);
        }
        for e in events.into_inner() {
            match e {
                Ok(q) => on_quad(q).map_err(Err)?,
                Err(r) => on_reject(r).map_err(Err)?,
            }
        }
    }
    Ok(splitter.declared().to_vec())
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
            &TerseStart::beginning(None),
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
        declared.extend(
            parse_units::<()>(false, doc.as_bytes(), &TerseStart::beginning(None), &mut |_| Ok(()), &mut |_| Ok(()))
                .unwrap(),
        );
        let want = [("b", "http://b1/"), ("a", "http://a/"), ("b", "http://b2/"), ("", "http://base/rel/")];
        assert_eq!(declared, want.map(|(a, b)| (a.to_string(), b.to_string())));
    }
}
