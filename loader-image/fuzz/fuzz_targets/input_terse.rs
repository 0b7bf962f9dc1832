//! Turtle/TriG input through parse_terse, as the loader reads a terse file.
//!
//! Input: byte 0 = bit 0: TriG (else Turtle), bit 1: with a base IRI; the rest is the file.
//!
//! Properties:
//! - nothing panics, and reading a byte slice gives no I/O error: every problem is a reject;
//! - each reject carries a position inside the input (line 1..=lines, counted as Turtle
//!   does, column >= 1);
//! - the prefixes returned are valid IRIs;
//! - N-Triples is a subset of Turtle and N-Quads-free TriG: input that the N-Triples line
//!   parser takes whole gives the same triples through parse_terse (without a base), with
//!   no reject.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rdf_input::oxrdf::{GraphName, Quad};
use rdf_input::{parse_line_chunk, parse_terse, Rejected, Syntax};

const BASE: &str = "http://example.org/base/doc";

fuzz_target!(|input: &[u8]| {
    let Some((&flags, data)) = input.split_first() else { return };
    let syntax = if flags & 1 != 0 { Syntax::TriG } else { Syntax::Turtle };
    let base = (flags & 2 != 0).then_some(BASE);

    let (mut quads, mut rejects) = (Vec::<Quad>::new(), Vec::<Rejected>::new());
    let prefixes = match parse_terse::<()>(
        syntax,
        data,
        base,
        |q| {
            quads.push(q);
            Ok(())
        },
        |r| {
            rejects.push(r);
            Ok(())
        },
    ) {
        Ok(p) => p,
        Err(Ok(io)) => panic!("I/O error from a byte slice: {io}"),
        Err(Err(())) => unreachable!("the callbacks never stop the parse"),
    };

    // Lines as Turtle counts them: LF, CRLF or a lone CR ends one.
    let lines = 1 + data
        .iter()
        .enumerate()
        .filter(|&(i, &b)| b == b'\n' || b == b'\r' && data.get(i + 1) != Some(&b'\n'))
        .count() as u64;
    // (Not necessarily in input order: oxttl reports a string that runs past its line at
    // the string's start, after errors it met further on.)
    for r in &rejects {
        let p = r.position;
        assert!(p.line >= 1 && p.line <= lines && p.column >= 1, "position outside the input: {r:?}");
    }
    for (prefix, iri) in &prefixes {
        assert!(oxiri::Iri::parse(iri.as_str()).is_ok(), "prefix {prefix}: {iri:?} is not an IRI");
    }

    // The same bytes as N-Triples: where the line parser takes everything, so must Turtle
    // and TriG. Only without a base: resolving against one normalizes even absolute IRIs
    // (`http://a/b/../c` becomes `http://a/c`), as RFC 3986 says.
    if base.is_some() {
        return;
    }
    let (mut nt, mut nt_rejected) = (Vec::new(), false);
    parse_line_chunk::<()>(
        Syntax::NTriples,
        data,
        1,
        |q| {
            nt.push(q);
            Ok(())
        },
        |_| {
            nt_rejected = true;
            Ok(())
        },
    )
    .expect("the callbacks never stop the parse");
    if !nt_rejected {
        assert!(rejects.is_empty(), "valid N-Triples rejected as {syntax:?}: {rejects:?}");
        assert!(nt.iter().all(|q| q.graph_name == GraphName::DefaultGraph));
        assert_eq!(quads, nt, "valid N-Triples read differently as {syntax:?}");
    }
});
