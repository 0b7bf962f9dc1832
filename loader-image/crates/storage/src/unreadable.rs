//! Literals Jena 5.6.0 cannot read back ([`tdb2_nodeid::jena_readable`]) are bad input: the
//! statement holding one is refused (strict: the load stops with `file:line:column: reason`;
//! skip: it goes to the rejects file) instead of putting a term into the node table that fails
//! every Jena query touching it.
//!
//! The fast N-Triples/N-Quads path never interns such a literal (its validity check asks
//! [`readable`]), so the full parser decides the line, and the worker asks [`check_quad`] for
//! every statement the full parser gives. Positions: for a line, the column of the literal's
//! opening quote; Turtle/TriG parsers give no position for a valid statement, so after the parse
//! [`locate`] reads the file again and finds each refused literal's quoted lexical form, in
//! order (the first line of a multi-line form).

use std::io::{self, BufRead, BufReader};

use rdf_input::oxrdf::{Quad, Term};
use rdf_input::{InputFile, Position, Rejected};
use tdb2_nodeid::{jena_readable, Unreadable};

/// True when Jena reads the typed literal back (the fast path's check of a new term).
pub(crate) fn readable(lexical: &str, datatype: &str) -> bool {
    jena_readable(lexical, datatype).is_ok()
}

/// A refused literal: its lexical form and why.
pub struct Refused {
    pub(crate) lexical: String,
    pub why: Unreadable,
}

/// The statement's literal that Jena cannot read back, if any.
pub fn check_quad(q: &Quad) -> Result<(), Refused> {
    check_term(&q.object)
}

/// Looks into triple terms too: Jena stores one whole and decodes its nested literals when it
/// reads the term back.
fn check_term(t: &Term) -> Result<(), Refused> {
    match t {
        Term::Literal(l) if l.language().is_none() => jena_readable(l.value(), l.datatype().as_str())
            .map_err(|why| Refused { lexical: l.value().to_string(), why }),
        Term::Triple(t) => check_term(&t.object),
        _ => Ok(()),
    }
}

/// Column (1-based, in characters) of the quote that opens `lexical` in `line`; 1 if not found.
fn quote_column(line: &str, lexical: &str) -> Option<u64> {
    let first = lexical.split(['\n', '\r']).next().unwrap_or("");
    let mut from = 0;
    while let Some(p) = line[from..].find(first).map(|p| p + from) {
        let before = line[..p].chars().next_back();
        if matches!(before, Some('"' | '\'')) {
            // The opening quote: the first of a run of quotes ("""...""" forms).
            let q = before.unwrap();
            let start = line[..p].trim_end_matches(q).len();
            return Some(line[..start].chars().count() as u64 + 1);
        }
        from = p + first.len().max(1);
        if from > line.len() {
            break;
        }
    }
    None
}

/// The reject of an N-Triples/N-Quads line whose statement holds a refused literal.
pub fn line_reject(line: &[u8], line_no: u64, refused: Refused) -> Rejected {
    let text = String::from_utf8_lossy(line).trim_end_matches('\r').to_string();
    let column = quote_column(&text, &refused.lexical).unwrap_or(1);
    Rejected {
        position: Position { line: line_no, column },
        message: refused.why.to_string(),
        text,
        start_line: line_no,
        end_line: line_no,
    }
}

/// Rejects for the refused literals of a Turtle/TriG file, in the order the parser gave them:
/// each is placed at the next occurrence of its quoted lexical form (at or after the previous
/// one's). One not found (written with escapes, say) is placed where the search stands.
pub fn locate(file: &InputFile, refused: Vec<Refused>) -> io::Result<Vec<Rejected>> {
    let reader = BufReader::with_capacity(1 << 20, rdf_input::open_decompressed(&file.path, file.compression)?);
    locate_from(reader, Position { line: 1, column: 1 }, refused)
}

/// [`locate`] in one chunk of a Turtle/TriG file, which starts at `at`.
pub fn locate_in(chunk: &[u8], at: Position, refused: Vec<Refused>) -> Vec<Rejected> {
    locate_from(chunk, at, refused).expect("reading a byte slice")
}

fn locate_from(mut reader: impl BufRead, first: Position, refused: Vec<Refused>) -> io::Result<Vec<Rejected>> {
    let mut out = Vec::with_capacity(refused.len());
    let mut buf = Vec::new();
    let mut line_no = first.line - 1;
    let mut text = String::new();
    // Where the previous literal was found: (line, byte offset in it).
    let mut at = 0usize;
    let mut have_line = false;
    for r in refused {
        let found = loop {
            if !have_line {
                buf.clear();
                if reader.read_until(b'\n', &mut buf)? == 0 {
                    break None;
                }
                line_no += 1;
                text = String::from_utf8_lossy(&buf).trim_end_matches(['\n', '\r']).to_string();
                at = 0;
                have_line = true;
            }
            let rest = text.get(at..).unwrap_or("");
            if let Some(c) = quote_column(rest, &r.lexical) {
                // the chunk's first line may start inside a line of the file
                let shift = if line_no == first.line { first.column - 1 } else { 0 };
                let prefix_chars = shift + text[..at].chars().count() as u64;
                let byte = rest.char_indices().nth((c - 1) as usize).map_or(rest.len(), |(b, _)| b);
                at += byte + 1;
                break Some(prefix_chars + c);
            }
            have_line = false;
        };
        let (line, column) = match found {
            Some(c) => (line_no, c),
            None => (line_no.max(1), 1),
        };
        out.push(Rejected {
            position: Position { line, column },
            message: r.why.to_string(),
            text: if found.is_some() { text.clone() } else { r.lexical.clone() },
            start_line: line,
            end_line: line,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quote_column_finds_the_opening_quote() {
        let l = "<http://s> <http://p> \"PT.5S\"^^<http://www.w3.org/2001/XMLSchema#duration> .";
        assert_eq!(quote_column(l, "PT.5S"), Some(23));
        assert_eq!(quote_column("ex:s ex:p \"\"\"x\ny\"\"\"^^rdf:XMLLiteral .", "x\ny"), Some(11));
        assert_eq!(quote_column("é \"a\"", "a"), Some(3));
        assert_eq!(quote_column("a \"b\"", "c"), None);
    }

    #[test]
    fn literals_inside_triple_terms_are_checked() {
        use rdf_input::oxrdf::{GraphName, Literal, NamedNode, Triple};
        let iri = |s: &str| NamedNode::new(s).unwrap();
        let duration = |lex: &str| Literal::new_typed_literal(lex, iri("http://www.w3.org/2001/XMLSchema#duration"));
        let nested = |o: Term| {
            let inner = Triple::new(iri("http://s"), iri("http://p"), o);
            let outer = Triple::new(iri("http://a"), iri("http://b"), Term::Triple(Box::new(inner)));
            Quad::new(iri("http://x"), iri("http://y"), Term::Triple(Box::new(outer)), GraphName::DefaultGraph)
        };
        assert!(check_quad(&nested(duration("PT5S").into())).is_ok());
        let refused = check_quad(&nested(duration("PT.5S").into())).expect_err("refused");
        assert_eq!(refused.lexical, "PT.5S");
    }
}
