//! RDF 1.2 terms in the pipeline: triple terms (nested to any depth) and directional
//! language-tagged strings, encoded as Jena 5.6.0 stores them (`tdb2::rdf12`), and the
//! check that keeps two input terms apart that Jena's node table cannot: Jena's key of a
//! directional literal leaves the direction out, so `"x"@en--ltr` and `"x"@en--rtl` would
//! be one node (the first one stored). The loader refuses the statement that brings the
//! second direction of a key instead of merging it silently.

use std::collections::HashMap;
use std::io;
use std::sync::Mutex;

use rdf_input::oxrdf::{BaseDirection, Literal, NamedOrBlankNode, Quad, Term as RdfTerm, Triple};
use tdb2::term::{format_lang_tag, node_hash, DecodedTerm, Term, XSD_STRING};

use crate::encode::{BlankScope, Encoder};

fn dir_str(d: BaseDirection) -> &'static str {
    match d {
        BaseDirection::Ltr => "ltr",
        BaseDirection::Rtl => "rtl",
    }
}

fn lang_of(lang: &str) -> String {
    let mut s = String::new();
    format_lang_tag(lang, &mut s);
    s
}

/// A literal as stored (inside a triple term: never inlined, `xsd:string` folded).
fn owned_literal(l: &Literal) -> DecodedTerm {
    let lex = l.value().to_owned();
    match (l.language(), l.direction()) {
        (Some(lang), Some(dir)) => DecodedTerm::DirLiteral { lex, lang: lang_of(lang), dir: dir_str(dir).to_owned() },
        (Some(lang), None) => DecodedTerm::Literal { lex, lang: Some(lang_of(lang)), datatype: None },
        _ => {
            let dt = l.datatype().as_str();
            DecodedTerm::Literal { lex, lang: None, datatype: (dt != XSD_STRING).then(|| dt.to_owned()) }
        }
    }
}

/// A triple term with blank-node labels made as for top-level blank nodes of the same file.
pub fn owned_triple(t: &Triple, scope: &mut BlankScope) -> DecodedTerm {
    let mut label = String::new();
    let s = match &t.subject {
        NamedOrBlankNode::NamedNode(n) => DecodedTerm::Iri(n.as_str().to_owned()),
        NamedOrBlankNode::BlankNode(b) => {
            scope.label(b.as_str(), &mut label);
            DecodedTerm::Blank(label.clone())
        }
    };
    let p = DecodedTerm::Iri(t.predicate.as_str().to_owned());
    let o = match &t.object {
        RdfTerm::NamedNode(n) => DecodedTerm::Iri(n.as_str().to_owned()),
        RdfTerm::BlankNode(b) => {
            scope.label(b.as_str(), &mut label);
            DecodedTerm::Blank(label)
        }
        RdfTerm::Literal(l) => owned_literal(l),
        RdfTerm::Triple(inner) => owned_triple(inner, scope),
    };
    DecodedTerm::Triple(Box::new([s, p, o]))
}

impl Encoder<'_> {
    /// A triple term in the object position.
    pub(crate) fn triple_term(&mut self, t: &Triple, scope: &mut BlankScope) -> io::Result<u64> {
        let owned = owned_triple(t, scope);
        owned.with_term(&mut |term| self.intern(term))
    }

    /// A literal with a base direction (never inlined).
    pub(crate) fn directional(&mut self, lex: &str, lang: &str, dir: BaseDirection) -> io::Result<u64> {
        let lang = lang_of(lang);
        self.intern(Term::DirLiteral { lex, lang: &lang, dir: dir_str(dir) })
    }
}

/// The object of a statement if it is a directional literal: its node key and direction.
pub fn directional_object(q: &Quad) -> Option<([u8; 16], BaseDirection, String)> {
    let RdfTerm::Literal(l) = &q.object else { return None };
    let (lang, dir) = (l.language()?, l.direction()?);
    let lang = lang_of(lang);
    let key = node_hash(&Term::DirLiteral { lex: l.value(), lang: &lang, dir: dir_str(dir) });
    let shown = format!("\"{}\"@{}--{}", l.value(), lang, dir_str(dir));
    Some((key, dir, shown))
}

/// Where a statement is: (file index, line, column).
pub type At = (usize, u64, u64);

/// One node key of a directional literal: the earliest position seen per direction, and
/// which direction was registered first (in processing order).
struct Seen {
    first: BaseDirection,
    ltr: Option<At>,
    rtl: Option<At>,
}

/// The directions seen per node key, shared by all parse workers.
#[derive(Default)]
pub struct Directions {
    seen: Mutex<HashMap<[u8; 16], Seen>>,
}

/// A statement whose directional literal Jena's node table cannot hold apart from another.
pub struct Conflict {
    /// Where to report it: for strict mode the later of this occurrence and the other
    /// direction's earliest one (the minimum over all reports is the first statement that
    /// brings the second direction, whichever order the workers ran in).
    pub at: At,
    pub message: String,
}

impl Directions {
    /// Records an occurrence and returns the conflict if Jena could not keep it apart.
    /// Strict mode: every statement that meets the other direction of its key reports (see
    /// [`Conflict::at`]). Skip mode: the direction recorded first keeps the key, and every
    /// statement with the other one is a conflict (and is not stored).
    pub fn observe(&self, key: [u8; 16], dir: BaseDirection, shown: &str, at: At, strict: bool) -> Option<Conflict> {
        let mut seen = self.seen.lock().expect("directions");
        let e = seen.entry(key).or_insert(Seen { first: dir, ltr: None, rtl: None });
        let (mine, other) = match dir {
            BaseDirection::Ltr => (&mut e.ltr, e.rtl),
            BaseDirection::Rtl => (&mut e.rtl, e.ltr),
        };
        if (strict || e.first == dir) && mine.is_none_or(|m| at < m) {
            *mine = Some(at);
        }
        let other = match other {
            Some(o) if strict || e.first != dir => o,
            _ => return None,
        };
        let other_dir = match dir {
            BaseDirection::Ltr => "rtl",
            BaseDirection::Rtl => "ltr",
        };
        Some(Conflict {
            at: if strict { at.max(other) } else { at },
            message: format!(
                "{shown}: Jena 5.6.0 stores a literal's base direction but leaves it out of the node \
                 table key, so this term and the same text and language tag with --{other_dir} \
                 (first at line {}) would become one term; only the first direction seen of a \
                 lexical form and language tag can be loaded",
                other.1
            ),
        })
    }
}

/// The 1-based column (in code points) of the directional suffix in a line, else 1.
pub fn column_in_line(line: &str, lang_and_dir: &str) -> u64 {
    let lower = line.to_ascii_lowercase();
    let needle = lang_and_dir.to_ascii_lowercase();
    match lower.find(&needle) {
        Some(i) => {
            // Back to the literal's opening quote if it is on this line.
            let start = lower[..i].rfind('"').map_or(i, |q| lower[..q].rfind('"').unwrap_or(q));
            line[..start].chars().count() as u64 + 1
        }
        None => 1,
    }
}

/// What a Turtle/TriG parser has read, to place a statement it returned (oxttl gives no
/// position for a good statement): the last bytes read and the lines before them. Every
/// directional literal the parser returns as an object is located, in order, as the next
/// occurrence of its `@lang--dir` after the previous one's.
pub struct ReadWindow {
    bytes: Vec<u8>,
    /// Newlines before `bytes`.
    lines_before: u64,
    /// Absolute offset of `bytes[0]`.
    start: u64,
    /// Absolute offset after the last occurrence located.
    cursor: u64,
    /// Column of `bytes[0]` while no byte was dropped (a chunk may start inside a line).
    first_column: u64,
}

const WINDOW_KEEP: usize = 64 << 10;
const READ_CAP: usize = 4096;

/// A reader that keeps a [`ReadWindow`] of what went through it.
pub struct WindowTee<R> {
    pub inner: R,
    pub window: std::rc::Rc<std::cell::RefCell<ReadWindow>>,
}

impl ReadWindow {
    pub fn shared() -> std::rc::Rc<std::cell::RefCell<ReadWindow>> {
        std::rc::Rc::new(std::cell::RefCell::new(ReadWindow {
            bytes: Vec::new(),
            lines_before: 0,
            start: 0,
            cursor: 0,
            first_column: 1,
        }))
    }

    /// A window over a whole chunk that starts at `at`, byte `offset` of the input.
    pub fn over(bytes: &[u8], at: rdf_input::Position, offset: u64) -> ReadWindow {
        ReadWindow {
            bytes: bytes.to_vec(),
            lines_before: at.line - 1,
            start: offset,
            cursor: offset,
            first_column: at.column,
        }
    }

    /// The line, column and text of the next occurrence of `needle` (ASCII case-insensitive)
    /// after the previous one located (else the last one read); line 0 when it is not there.
    pub fn locate(&mut self, needle: &str) -> (u64, u64, String) {
        let hay = self.bytes.to_ascii_lowercase();
        let needle = needle.to_ascii_lowercase();
        let from = (self.cursor.saturating_sub(self.start) as usize).min(hay.len());
        let found = memchr::memmem::find(&hay[from..], needle.as_bytes()).map(|i| from + i);
        let Some(i) = found.or_else(|| memchr::memmem::rfind(&hay, needle.as_bytes())) else {
            return (0, 0, String::new());
        };
        self.cursor = self.start + (i + needle.len()) as u64;
        let start = hay[..i].iter().rposition(|&c| c == b'\n').map_or(0, |p| p + 1);
        let end = hay[i..].iter().position(|&c| c == b'\n').map_or(hay.len(), |p| i + p);
        let line = self.lines_before + memchr::memchr_iter(b'\n', &hay[..start]).count() as u64 + 1;
        let text = String::from_utf8_lossy(&self.bytes[start..end]).trim_end_matches('\r').to_string();
        let mut column = column_in_line(&text, &needle);
        if start == 0 {
            column += self.first_column - 1;
        }
        (line, column, text)
    }
}

impl<R: io::Read> io::Read for WindowTee<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let cap = buf.len().min(READ_CAP);
        let n = self.inner.read(&mut buf[..cap])?;
        let mut w = self.window.borrow_mut();
        w.bytes.extend_from_slice(&buf[..n]);
        if w.bytes.len() > 2 * WINDOW_KEEP {
            let cut = w.bytes.len() - WINDOW_KEEP;
            w.lines_before += memchr::memchr_iter(b'\n', &w.bytes[..cut]).count() as u64;
            w.bytes.drain(..cut);
            w.start += cut as u64;
            w.first_column = 1;
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_reports_the_first_statement_of_the_second_direction_in_any_order() {
        let key = [7u8; 16];
        // Input order: ltr at line 5, rtl at lines 9 and 20; the chunk with line 20 ran first.
        let d = Directions::default();
        assert!(d.observe(key, BaseDirection::Rtl, "x", (0, 20, 1), true).is_none());
        let c = d.observe(key, BaseDirection::Ltr, "x", (0, 5, 1), true).expect("conflict");
        assert_eq!(c.at, (0, 20, 1));
        let c2 = d.observe(key, BaseDirection::Rtl, "x", (0, 9, 1), true).expect("conflict");
        assert_eq!(c2.at, (0, 9, 1), "the minimum over all reports is line 9");
    }

    #[test]
    fn skip_keeps_the_direction_seen_first() {
        let key = [1u8; 16];
        let d = Directions::default();
        assert!(d.observe(key, BaseDirection::Ltr, "x", (0, 1, 1), false).is_none());
        assert!(d.observe(key, BaseDirection::Ltr, "x", (0, 2, 1), false).is_none());
        let c = d.observe(key, BaseDirection::Rtl, "x", (0, 3, 1), false).expect("conflict");
        assert_eq!(c.at, (0, 3, 1));
        assert!(c.message.contains("--ltr (first at line 1)"), "{}", c.message);
        assert!(d.observe(key, BaseDirection::Rtl, "x", (0, 4, 1), false).is_some());
    }

    #[test]
    fn window_places_occurrences_in_order() {
        use std::io::Read;
        let text = "a\nb \"x\"@en--rtl .\n".repeat(20_000);
        let window = ReadWindow::shared();
        let mut tee = WindowTee { inner: text.as_bytes(), window: window.clone() };
        let mut sink = Vec::new();
        tee.read_to_end(&mut sink).unwrap();
        assert_eq!(sink.len(), text.len());
        // The first occurrence still held (the earlier ones were dropped), at its true line.
        let (line, column, shown) = window.borrow_mut().locate("@EN--rtl");
        assert!(line > 20_000, "{line}");
        assert_eq!(text.split('\n').nth(line as usize - 1), Some(shown.as_str()));
        assert_eq!(column, 3);
        assert_eq!(window.borrow_mut().locate("@en--rtl").0, line + 2, "the next one");
        let small = ReadWindow::shared();
        let mut tee =
            WindowTee { inner: "x\n\"a\"@en--rtl, \"b\"@en--rtl\n\"c\"@en--rtl".as_bytes(), window: small.clone() };
        tee.read_to_end(&mut sink).unwrap();
        let got: Vec<_> = (0..3).map(|_| small.borrow_mut().locate("@en--rtl")).map(|(l, c, _)| (l, c)).collect();
        assert_eq!(got, [(2, 1), (2, 1), (3, 1)], "in order, one occurrence each");
    }

    #[test]
    fn column_points_at_the_literal() {
        assert_eq!(column_in_line("<http://a> <http://b> \"x\"@en--rtl .", "@en--rtl"), 23);
        assert_eq!(column_in_line("no such thing", "@en--rtl"), 1);
    }
}
