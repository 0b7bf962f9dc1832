//! The parse job of a chunk of N-Triples/N-Quads lines: the fast path where it can, the full
//! parser where it cannot.

use rdf_input::fastline::{parse_fast_line, FastLine};
use rdf_input::{parse_line_chunk, Chunk, Rejected};

use bulkload_storage::unreadable;
use bulkload_storage::warnings::Warnings;

use super::{blank_scope, place_in_line, Encoders, ParseShared, ParsedQuad, Stop, WorkerOutput};
use crate::error::LoadError;

/// Parses a chunk of N-Triples/N-Quads line by line, by the fast path where it can and by
/// the full parser where it cannot; true when it is done.
pub(super) fn parse_lines_job(
    sh: &ParseShared<'_>,
    file: usize,
    chunk: &Chunk,
    out: &mut WorkerOutput,
    encoders: &mut Encoders<'_>,
    job_warnings: &mut Warnings,
    on_reject: &mut dyn FnMut(Rejected) -> Result<(), Stop>,
) -> bool {
    let Encoders { full: enc, fast } = encoders;
    let mut scope = blank_scope(file, &sh.files[file]);
    let syntax = sh.files[file].syntax;
    let quads = syntax.has_graphs();
    // UTF-8 is checked once for the whole chunk; only a chunk that is not valid is
    // checked line by line.
    let whole_chunk_utf8 = std::str::from_utf8(&chunk.data).is_ok();
    for (this_line, line) in (chunk.first_line..).zip(lines(&chunk.data)) {
        let text = if whole_chunk_utf8 {
            // SAFETY: the chunk is valid UTF-8, and a newline (ASCII) is never part
            // of a multi-byte sequence, so each piece between two is valid too.
            Some(unsafe { std::str::from_utf8_unchecked(line) })
        } else {
            std::str::from_utf8(line).ok()
        };
        if let Some(text) = text {
            match parse_fast_line(text, quads) {
                FastLine::Empty => continue,
                FastLine::Statement(st) => match fast.statement(&st, &mut scope, quads) {
                    Ok(Some(e)) => {
                        if let Err(e) = out.emit(Ok(e)) {
                            sh.fail(LoadError::from_output_io("spilling tuples", e));
                            return false;
                        }
                        place_in_line(sh, file, &mut fast.tally, text, this_line, job_warnings);
                        continue;
                    }
                    Ok(None) => {}
                    Err(e) => {
                        sh.fail(LoadError::from_output_io("spilling the dictionary", e));
                        return false;
                    }
                },
                FastLine::Fallback => {}
            }
        }
        // The full parser decides this line: its statement or its error.
        let mut refused = None;
        let mut conflict = None;
        let res = parse_line_chunk(
            syntax,
            line,
            this_line,
            |q| {
                let locate = |suffix: &str| {
                    let text = String::from_utf8_lossy(line).trim_end_matches('\r').to_string();
                    (this_line, bulkload_storage::rdf12::column_in_line(&text, suffix), text)
                };
                match sh.store_parsed(&q, file, locate, enc, &mut scope, out)? {
                    ParsedQuad::Stored => {}
                    ParsedQuad::Refused(r) => refused = Some(r),
                    ParsedQuad::Conflict(r) => conflict = Some(r),
                }
                Ok(())
            },
            &mut *on_reject,
        );
        let res = match refused {
            Some(r) if res.is_ok() => on_reject(unreadable::line_reject(line, this_line, r)),
            _ => res,
        };
        let res = res.and_then(|()| conflict.take().map_or(Ok(()), &mut *on_reject));
        if res.is_err() {
            return false;
        }
        let text = String::from_utf8_lossy(line);
        place_in_line(sh, file, &mut enc.tally, &text, this_line, job_warnings);
    }
    true
}

/// The lines of a chunk, as `split(|&b| b == b'\n')` gives them (the piece after the last
/// newline included, empty when the chunk ends with one), found with `memchr`: the slice
/// split tests one byte at a time, which cost a worker ~4% of its time.
fn lines(data: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut start = 0;
    memchr::memchr_iter(b'\n', data).chain(std::iter::once(data.len())).map(move |end| {
        let line = &data[start..end];
        start = end + 1;
        line
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn lines_are_the_pieces_split_gives() {
        for data in [&b""[..], b"\n", b"a", b"a\n", b"\n\na", b"<s> <p> <o> .\n<s> <p> \"x\" .\r\n", b"x\n\ny\nz\n\n"] {
            let want: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
            assert_eq!(super::lines(data).collect::<Vec<_>>(), want, "{:?}", String::from_utf8_lossy(data));
        }
    }
}
