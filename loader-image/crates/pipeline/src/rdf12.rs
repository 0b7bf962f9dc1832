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
pub(crate) fn owned_triple(t: &Triple, scope: &mut BlankScope) -> DecodedTerm {
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
pub(crate) fn directional_object(q: &Quad) -> Option<([u8; 16], BaseDirection, String)> {
    let RdfTerm::Literal(l) = &q.object else { return None };
    let (lang, dir) = (l.language()?, l.direction()?);
    let lang = lang_of(lang);
    let key = node_hash(&Term::DirLiteral { lex: l.value(), lang: &lang, dir: dir_str(dir) });
    let shown = format!("\"{}\"@{}--{}", l.value(), lang, dir_str(dir));
    Some((key, dir, shown))
}

/// Where a statement is: (file index, line, column).
pub(crate) type At = (usize, u64, u64);

/// One node key of a directional literal: the earliest position seen per direction, and
/// which direction was registered first (in processing order).
struct Seen {
    first: BaseDirection,
    ltr: Option<At>,
    rtl: Option<At>,
}

/// The directions seen per node key, shared by all parse workers.
#[derive(Default)]
pub(crate) struct Directions {
    seen: Mutex<HashMap<[u8; 16], Seen>>,
}

/// A statement whose directional literal Jena's node table cannot hold apart from another.
pub(crate) struct Conflict {
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
    pub(crate) fn observe(
        &self,
        key: [u8; 16],
        dir: BaseDirection,
        shown: &str,
        at: At,
        strict: bool,
    ) -> Option<Conflict> {
        let mut seen = self.seen.lock().expect("directions");
        let e = seen.entry(key).or_insert(Seen { first: dir, ltr: None, rtl: None });
        let (mine, other) = match dir {
            BaseDirection::Ltr => (&mut e.ltr, e.rtl),
            BaseDirection::Rtl => (&mut e.rtl, e.ltr),
        };
        if strict || e.first == dir {
            if mine.is_none_or(|m| at < m) {
                *mine = Some(at);
            }
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
pub(crate) fn column_in_line(line: &str, lang_and_dir: &str) -> u64 {
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
    fn column_points_at_the_literal() {
        assert_eq!(column_in_line("<http://a> <http://b> \"x\"@en--rtl .", "@en--rtl"), 23);
        assert_eq!(column_in_line("no such thing", "@en--rtl"), 1);
    }
}
