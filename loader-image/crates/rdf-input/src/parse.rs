use std::io::{self, BufRead, Read};

use oxrdf::{GraphName, Quad};
use oxttl::{NQuadsParser, NTriplesParser, TurtleSyntaxError};

use crate::detect::{DocumentSyntax, Split, Syntax};
use crate::rejected::{Position, Rejected};
use crate::substitute::Substitutions;

/// Parses newline-aligned N-Triples/N-Quads text line by line. The statements of a line go
/// to `on_quad` (triples in the default graph) only if the whole line is valid; a bad line
/// goes to `on_reject`, with its absolute position, and none of its statements is kept (the
/// parser may have read a statement before finding junk after it, as in `<s> <p> <o> <g> <x> .`).
/// One bad line (an unterminated string, say, which the lexer would run on past the
/// newline) rejects exactly that line. Either callback may stop the parse with an error.
pub fn parse_line_chunk<E>(
    syntax: Syntax,
    data: &[u8],
    first_line: u64,
    mut on_quad: impl FnMut(Quad) -> Result<(), E>,
    mut on_reject: impl FnMut(Rejected) -> Result<(), E>,
) -> Result<(), E> {
    let mut pending = Vec::new();
    for (index, line) in data.split(|&b| b == b'\n').enumerate() {
        let mut subs = Substitutions::default();
        let mut text = std::borrow::Cow::Borrowed(line);
        let error = loop {
            pending.clear();
            let error = parse_slice(syntax, &text, &mut |q| {
                pending.push(q);
                Ok::<(), std::convert::Infallible>(())
            });
            // A term Jena keeps with a warning: parsed again in its placeholder's place.
            if let Ok(Some(e)) = &error {
                let at = e.location().start.offset as usize;
                if let Some(next) = subs.rewrite(line, &text, at, e.message()) {
                    text = std::borrow::Cow::Owned(next);
                    continue;
                }
            }
            break error;
        };
        match error {
            Ok(Some(e)) => on_reject(Rejected {
                position: Position {
                    line: first_line + index as u64,
                    column: column_at(line, subs.original_offset(e.location().start.offset as usize)),
                },
                start_line: first_line + index as u64,
                end_line: first_line + index as u64,
                message: e.message().to_string(),
                text: String::from_utf8_lossy(line).trim_end_matches('\r').to_string(),
            })?,
            Ok(None) => {
                for q in pending.drain(..) {
                    on_quad(subs.restore(q))?;
                }
            }
            Err(never) => match never {},
        }
    }
    Ok(())
}

/// 1-based column (in code points) of byte `offset` of `line`.
fn column_at(line: &[u8], offset: usize) -> u64 {
    1 + line[..offset.min(line.len())].iter().filter(|&&b| b & 0xC0 != 0x80).count() as u64
}

/// Parses statements until the end or the first syntax error, which it returns. N-Quads is
/// N-Triples with a graph term: [`Syntax::has_graphs`] picks the parser.
fn parse_slice<E>(
    syntax: Syntax,
    data: &[u8],
    on_quad: &mut impl FnMut(Quad) -> Result<(), E>,
) -> Result<Option<TurtleSyntaxError>, E> {
    if syntax.has_graphs() {
        for r in NQuadsParser::new().for_slice(data) {
            match r {
                Ok(q) => on_quad(q)?,
                Err(e) => return Ok(Some(e)),
            }
        }
    } else {
        for r in NTriplesParser::new().for_slice(data) {
            match r {
                Ok(t) => on_quad(t.in_graph(GraphName::DefaultGraph))?,
                Err(e) => return Ok(Some(e)),
            }
        }
    }
    Ok(None)
}

/// Parses a whole file sequentially, by the parser entry of its split kind ([`Syntax::split`]):
/// what the loader does with a file it does not cut. Returns every prefix declaration
/// accepted, in input order, for the prefix tables (none for N-Triples/N-Quads). An I/O
/// error (e.g. corrupt compression) is returned as `Err(Ok(io))`, a callback's error as
/// `Err(Err(e))`.
pub fn parse_file<E>(
    syntax: Syntax,
    reader: impl Read,
    base: Option<&str>,
    on_quad: impl FnMut(Quad) -> Result<(), E>,
    on_reject: impl FnMut(Rejected) -> Result<(), E>,
) -> Result<Vec<(String, String)>, Result<io::Error, E>> {
    match syntax.split() {
        Split::Lines => parse_lines(syntax, reader, on_quad, on_reject),
        Split::Statements => parse_terse(syntax, reader, base, on_quad, on_reject),
        Split::Whole(document) => parse_document(document, reader, base, on_quad, on_reject),
    }
}

/// Parses an N-Triples/N-Quads stream line by line, as [`parse_line_chunk`] parses a chunk.
fn parse_lines<E>(
    syntax: Syntax,
    reader: impl Read,
    mut on_quad: impl FnMut(Quad) -> Result<(), E>,
    mut on_reject: impl FnMut(Rejected) -> Result<(), E>,
) -> Result<Vec<(String, String)>, Result<io::Error, E>> {
    let mut reader = io::BufReader::new(reader);
    let mut line = Vec::new();
    let mut number = 1;
    while reader.read_until(b'\n', &mut line).map_err(Ok)? > 0 {
        parse_line_chunk(syntax, &line, number, &mut on_quad, &mut on_reject).map_err(Err)?;
        line.clear();
        number += 1;
    }
    Ok(Vec::new())
}

/// Parses a whole Turtle/TriG stream sequentially (the loader cuts Turtle/TriG into chunks,
/// see [`crate::parse_split`]), statement by statement (see `terse.rs`): a statement with a
/// syntax error is rejected whole, with its line range, and costs no other statement; none
/// changes graph. TriG is Turtle with graph blocks: [`Syntax::has_graphs`] says which.
/// Returns every prefix declaration accepted, in input order (a redefinition is a new
/// entry), for the prefix tables. An I/O error (e.g. corrupt compression) is returned as
/// `Err(Ok(io))`, a callback's error as `Err(Err(e))`.
pub fn parse_terse<E>(
    syntax: Syntax,
    reader: impl Read,
    base: Option<&str>,
    mut on_quad: impl FnMut(Quad) -> Result<(), E>,
    mut on_reject: impl FnMut(Rejected) -> Result<(), E>,
) -> Result<Vec<(String, String)>, Result<io::Error, E>> {
    let start = crate::terse::TerseStart::beginning(base);
    crate::terse::parse_units(syntax.has_graphs(), reader, &start, &mut on_quad, &mut on_reject)
}

/// Parses a Turtle/TriG stream sequentially from a chunk's start (`reader` positioned
/// there): what [`parse_terse`] gives for that part of the input. Returns the prefix
/// declarations accepted from there on.
pub fn parse_terse_from<E>(
    syntax: Syntax,
    reader: impl Read,
    start: &crate::terse::TerseStart,
    mut on_quad: impl FnMut(Quad) -> Result<(), E>,
    mut on_reject: impl FnMut(Rejected) -> Result<(), E>,
) -> Result<Vec<(String, String)>, Result<io::Error, E>> {
    crate::terse::parse_units(syntax.has_graphs(), reader, start, &mut on_quad, &mut on_reject)
}

/// Parses a document of a syntax the loader does not cut, by that syntax's parser (RDF/XML:
/// [`crate::parse_rdfxml`]), with [`parse_terse`]'s results.
pub fn parse_document<E>(
    document: DocumentSyntax,
    reader: impl Read,
    base: Option<&str>,
    on_quad: impl FnMut(Quad) -> Result<(), E>,
    on_reject: impl FnMut(Rejected) -> Result<(), E>,
) -> Result<Vec<(String, String)>, Result<io::Error, E>> {
    match document {
        DocumentSyntax::RdfXml => crate::rdfxml::parse_rdfxml(reader, base, on_quad, on_reject),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_errors_carry_absolute_positions_and_text() {
        let c = ("<http://a> <http://b> <http://c> .\n<http://a> <http://b> \"x .\n<http://a> <http://b> <http://d> .\n<http://a> <b> <http://d> .\n<http://a> <http://b> <http://e> .\n").as_bytes();
        let mut ok = 0;
        let mut bad = Vec::new();
        parse_line_chunk::<()>(
            Syntax::NTriples,
            c,
            41,
            |_| {
                ok += 1;
                Ok(())
            },
            |r| {
                bad.push(r);
                Ok(())
            },
        )
        .unwrap();
        assert_eq!((ok, bad.len()), (3, 2), "{bad:?}");
        assert_eq!(bad[0].position, Position { line: 42, column: 23 });
        assert_eq!(bad[1].position.line, 44);
        assert_eq!(bad[1].text, "<http://a> <b> <http://d> .");
        assert!(bad[0].position.column >= 1);
        assert_eq!(bad[0].text, "<http://a> <http://b> \"x .");
    }

    #[test]
    fn a_statement_followed_by_junk_on_its_line_is_not_kept() {
        let c = "<http://a/s> <http://a/p> \"q\" <http://a/g> <http://a/extra> .\n<http://a/s> <http://a/p> \"r\" <http://a/g> .\n";
        let mut ok = Vec::new();
        let mut bad = Vec::new();
        parse_line_chunk::<()>(
            Syntax::NQuads,
            c.as_bytes(),
            7,
            |q| {
                ok.push(q);
                Ok(())
            },
            |r| {
                bad.push(r);
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(ok.len(), 1);
        assert_eq!(bad.len(), 1);
        assert_eq!(bad[0].position.line, 7);
    }

    #[test]
    fn turtle_gives_prefixes_and_positions() {
        let ttl = "@prefix ex: <http://e/> .\nex:a ex:b ex:c .\nex:a ex:b .\nex:d ex:e \"f\"@EN-gb .\n";
        let mut quads = Vec::new();
        let mut bad = Vec::new();
        let prefixes = parse_terse::<()>(
            Syntax::Turtle,
            ttl.as_bytes(),
            None,
            |q| {
                quads.push(q);
                Ok(())
            },
            |r| {
                bad.push(r);
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(prefixes, vec![("ex".to_string(), "http://e/".to_string())]);
        assert_eq!(bad.len(), 1);
        assert_eq!(bad[0].position.line, 3);
        assert_eq!(bad[0].text, "ex:a ex:b .");
        assert!(!quads.is_empty());
    }

    /// What `parse_file` gives: statements in order (as N-Quads), rejects' lines, prefixes.
    fn parse_whole_file(syntax: Syntax, text: &str) -> (Vec<String>, Vec<u64>, Vec<(String, String)>) {
        let mut quads = Vec::new();
        let mut bad = Vec::new();
        let prefixes = parse_file::<()>(
            syntax,
            text.as_bytes(),
            Some("http://base/"),
            |q| {
                quads.push(q.to_string());
                Ok(())
            },
            |r| {
                bad.push(r.position.line);
                Ok(())
            },
        )
        .unwrap();
        (quads, bad, prefixes)
    }

    #[test]
    fn a_whole_file_goes_to_its_split_kinds_parser() {
        let nq =
            "<http://a> <http://b> <http://c> <http://g> .\n<http://a> <b> <http://c> .\n\n<http://a> <http://b> _:x .";
        let (quads, bad, prefixes) = parse_whole_file(Syntax::NQuads, nq);
        assert_eq!(quads, ["<http://a> <http://b> <http://c> <http://g>", "<http://a> <http://b> _:x"]);
        assert_eq!((bad, prefixes), (vec![2], vec![]));
        // A graph term is an error in N-Triples.
        assert_eq!(parse_whole_file(Syntax::NTriples, nq).1, [1, 2]);
        let trig = "@prefix ex: <http://e/> .\nex:g { ex:a ex:b ex:c }\n";
        let (quads, bad, prefixes) = parse_whole_file(Syntax::TriG, trig);
        assert_eq!((quads, bad), (vec!["<http://e/a> <http://e/b> <http://e/c> <http://e/g>".to_string()], vec![]));
        assert_eq!(prefixes, [("ex".to_string(), "http://e/".to_string())]);
        let xml = "<rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\" xmlns:ex=\"http://e/\">\n\
                   <rdf:Description rdf:about=\"a\"><ex:b>c</ex:b></rdf:Description></rdf:RDF>\n";
        let (quads, bad, _) = parse_whole_file(Syntax::RdfXml, xml);
        assert_eq!((quads, bad), (vec!["<http://base/a> <http://e/b> \"c\"".to_string()], vec![]));
    }
}
