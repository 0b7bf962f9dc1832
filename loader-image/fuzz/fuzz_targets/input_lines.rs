//! N-Triples/N-Quads input, as the loader reads it: arbitrary bytes cut by LineChunker and
//! parsed by parse_line_chunk, with the fast line scanner checked against the full parser.
//!
//! Input: byte 0 = bit 0: N-Quads (else N-Triples), bits 1-7: chunk target in bytes
//! (1 + value * 7, so chunks end mid-input); the rest is the file's content.
//!
//! Properties:
//! - nothing panics;
//! - chunks concatenate to the input, each ends at a newline (but the last), and their
//!   line numbers continue; parsing chunk by chunk gives the same quads and rejects, with
//!   the same positions, as parsing the whole input at once;
//! - each reject names a line of the input (its number and its text) and a column >= 1,
//!   and a rejected line contributes no quad;
//! - differential: where the fast path (parse_fast_line plus the pipeline's term checks)
//!   takes a line, oxttl takes it too and gives the same single quad; a line it calls empty
//!   gives oxttl nothing and no error; so wherever oxttl rejects, the fast path declines.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rdf_bulkload_fuzz::{fast_statement_quad, fast_statement_valid};
use rdf_input::fastline::{parse_fast_line, FastLine};
use rdf_input::oxrdf::Quad;
use rdf_input::{parse_line_chunk, LineChunker, Rejected, Syntax};

/// First line number given to the whole-input parse: not 1, so that an absolute/relative
/// mix-up shows.
const FIRST_LINE: u64 = 1000;

fn parse(syntax: Syntax, data: &[u8], first_line: u64) -> (Vec<Quad>, Vec<Rejected>) {
    let (mut quads, mut rejects) = (Vec::new(), Vec::new());
    parse_line_chunk::<()>(
        syntax,
        data,
        first_line,
        |q| {
            quads.push(q);
            Ok(())
        },
        |r| {
            rejects.push(r);
            Ok(())
        },
    )
    .expect("the callbacks never stop the parse");
    (quads, rejects)
}

fuzz_target!(|input: &[u8]| {
    let Some((&flags, data)) = input.split_first() else { return };
    let quads_syntax = flags & 1 != 0;
    let syntax = if quads_syntax { Syntax::NQuads } else { Syntax::NTriples };
    let target = 1 + usize::from(flags >> 1) * 7;

    let (all_quads, all_rejects) = parse(syntax, data, FIRST_LINE);

    // Chunked as the loader does.
    let mut chunker = LineChunker::new(data, target);
    let (mut joined, mut quads, mut rejects) = (Vec::new(), Vec::new(), Vec::new());
    let mut next_line = 1;
    while let Some(chunk) = chunker.next_chunk().expect("reading a slice cannot fail") {
        assert_eq!(chunk.first_line, next_line, "chunk line numbers continue");
        assert_eq!(chunk.offset, joined.len() as u64, "chunk offsets continue");
        joined.extend_from_slice(&chunk.data);
        if joined.len() < data.len() {
            assert!(chunk.data.ends_with(b"\n"), "only the last chunk may end without a newline");
        }
        next_line += chunk.data.iter().filter(|&&b| b == b'\n').count() as u64;
        let (q, r) = parse(syntax, &chunk.data, chunk.first_line + FIRST_LINE - 1);
        quads.extend(q);
        rejects.extend(r);
    }
    assert!(joined == data, "chunks concatenate to the input");
    assert!(quads == all_quads, "chunked parse gives other quads");
    assert!(rejects == all_rejects, "chunked parse gives other rejects");

    let lines: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
    for r in &all_rejects {
        assert!(r.position.line >= FIRST_LINE && r.position.column >= 1, "{r:?}");
        let line = lines.get((r.position.line - FIRST_LINE) as usize).expect("a reject names a line of the input");
        assert_eq!(r.text, String::from_utf8_lossy(line).trim_end_matches('\r'), "a reject quotes its line");
    }

    // Line by line: the fast path against the full parser.
    let mut expected_quads = 0;
    for (i, line) in lines.iter().enumerate() {
        let (q, r) = parse(syntax, line, FIRST_LINE + i as u64);
        assert!(r.len() <= 1 && (r.is_empty() || q.is_empty()), "a rejected line gives no quad");
        expected_quads += q.len();
        let Ok(text) = std::str::from_utf8(line) else { continue };
        match parse_fast_line(text, quads_syntax) {
            FastLine::Empty => {
                assert!(q.is_empty() && r.is_empty(), "fast path: empty line {text:?}; oxttl: {q:?} {r:?}");
            }
            FastLine::Statement(st) if fast_statement_valid(&st) => {
                assert!(r.is_empty(), "fast path took {text:?}, oxttl rejects it: {r:?}");
                assert_eq!(q, vec![fast_statement_quad(&st)], "fast path and oxttl read {text:?} differently");
            }
            FastLine::Statement(_) | FastLine::Fallback => {}
        }
    }
    assert_eq!(expected_quads, all_quads.len(), "line by line gives as many quads as the whole chunk");
});
