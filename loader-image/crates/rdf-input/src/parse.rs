use std::io::{self, Read};

use oxrdf::{GraphName, Quad};
use oxttl::{NQuadsParser, NTriplesParser, TurtleSyntaxError};

use crate::detect::Syntax;
use crate::substitute::Substitutions;

/// A 1-based line and column (columns count code points, as oxttl does).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Position {
    pub line: u64,
    pub column: u64,
}

/// A statement the parser rejected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejected {
    pub position: Position,
    pub message: String,
    /// The offending input text (the line, or the statement's bytes for Turtle/TriG).
    pub text: String,
    /// The lines `text` spans (both `position.line` for a line-based syntax).
    pub start_line: u64,
    pub end_line: u64,
}

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

/// Parses statements until the end or the first syntax error, which it returns.
fn parse_slice<E>(
    syntax: Syntax,
    data: &[u8],
    on_quad: &mut impl FnMut(Quad) -> Result<(), E>,
) -> Result<Option<TurtleSyntaxError>, E> {
    match syntax {
        Syntax::NTriples => {
            for r in NTriplesParser::new().for_slice(data) {
                match r {
                    Ok(t) => on_quad(t.in_graph(GraphName::DefaultGraph))?,
                    Err(e) => return Ok(Some(e)),
                }
            }
        }
        Syntax::NQuads => {
            for r in NQuadsParser::new().for_slice(data) {
                match r {
                    Ok(q) => on_quad(q)?,
                    Err(e) => return Ok(Some(e)),
                }
            }
        }
        Syntax::Turtle | Syntax::TriG | Syntax::RdfXml => unreachable!("only N-Triples/N-Quads are line-based"),
    }
    Ok(None)
}

/// Parses a whole Turtle/TriG (or RDF/XML, see [`crate::parse_rdfxml`]) stream sequentially
/// (the loader cuts Turtle/TriG into chunks, see [`crate::parse_split`]), Turtle/TriG statement by
/// statement (see `terse.rs`): a statement with a syntax error is rejected whole, with its
/// line range, and costs no other statement; none changes graph. Returns every prefix
/// declaration accepted, in input order (a redefinition is a new entry), for the prefix
/// tables. An I/O error (e.g. corrupt compression) is returned as `Err(Ok(io))`, a
/// callback's error as `Err(Err(e))`.
pub fn parse_terse<E>(
    syntax: Syntax,
    reader: impl Read,
    base: Option<&str>,
    mut on_quad: impl FnMut(Quad) -> Result<(), E>,
    mut on_reject: impl FnMut(Rejected) -> Result<(), E>,
) -> Result<Vec<(String, String)>, Result<io::Error, E>> {
    match syntax {
        Syntax::Turtle | Syntax::TriG => {
            let start = crate::terse::TerseStart::beginning(base);
            crate::terse::parse_units(syntax == Syntax::TriG, reader, &start, &mut on_quad, &mut on_reject)
        }
        Syntax::RdfXml => crate::rdfxml::parse_rdfxml(reader, base, on_quad, on_reject),
        _ => unreachable!("line-based syntaxes go through parse_line_chunk"),
    }
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
    crate::terse::parse_units(syntax == Syntax::TriG, reader, start, &mut on_quad, &mut on_reject)
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
}
