//! The parse job of a chunk of whole Turtle/TriG statements.

use std::io::{self, Read};
use std::sync::atomic::Ordering;

use rdf_input::fastline::FastStatement;
use rdf_input::{parse_chunk, parse_terse_from, ChunkEnd, Rejected, TerseChunk};

use bulkload_storage::encode::{Encoder, FastEncoder};
use bulkload_storage::unreadable;

use super::{blank_scope, ParseShared, Stop, WorkerOutput};
use crate::error::LoadError;
use crate::options::OnError;

/// Parses one chunk of a Turtle/TriG file; true when it is done. A chunk that the parser
/// does not end where the splitter cut it (`ChunkEnd::Dirty`) stops the phase: in strict
/// mode with the error a sequential parse from the chunk's start finds (exactly the error
/// of a sequential load); otherwise (skip mode, or no error there), as the chunks after it
/// may already be logged as parsed on their own, for [`super::run`] to start the phase over with
/// the file parsed whole (never a database of statements parsed wrongly).
pub(super) fn parse_terse_chunk(
    sh: &ParseShared<'_>,
    file: usize,
    chunk: &TerseChunk,
    out: &mut WorkerOutput,
    enc: &mut Encoder<'_>,
    fast: &mut FastEncoder<'_>,
    on_reject: &mut dyn FnMut(Rejected) -> Result<(), Stop>,
) -> bool {
    let f = &sh.files[file];
    let strict = sh.opts.on_error == OnError::Strict;
    // Shared by the statements oxttl gives and those the fast path reads.
    let out = std::cell::RefCell::new(out);
    let scope = std::cell::RefCell::new(blank_scope(file, f));
    let mut refused = Vec::new();
    let window = std::cell::RefCell::new(None);
    let on_reject = std::cell::RefCell::new(on_reject);
    let res = parse_chunk(
        f.syntax.has_graphs(),
        chunk,
        &mut |q| {
            if sh.stopping() {
                return Err(Stop);
            }
            let locate = |suffix: &str| {
                let mut w = window.borrow_mut();
                let w = w.get_or_insert_with(|| {
                    bulkload_storage::rdf12::ReadWindow::over(&chunk.data, chunk.start.position, chunk.start.offset)
                });
                w.locate(suffix)
            };
            let parsed = sh.store_parsed(&q, file, locate, enc, &mut scope.borrow_mut(), &mut out.borrow_mut())?;
            parsed.settle(&mut refused, strict, &mut **on_reject.borrow_mut())
        },
        &mut |r| (on_reject.borrow_mut())(r),
        Some(&mut |st: &[FastStatement<'_>]| {
            if sh.stopping() {
                return Err(Stop);
            }
            let encoded = match fast.statements(st, &mut scope.borrow_mut(), f.syntax.has_graphs()) {
                Ok(Some(encoded)) => encoded,
                Ok(None) => return Ok(false), // a new term fails its check: oxttl decides
                Err(e) => {
                    sh.fail(LoadError::from_output_io("spilling the dictionary", e));
                    return Err(Stop);
                }
            };
            for &e in encoded {
                out.borrow_mut().emit(Ok(e)).map_err(|e| {
                    sh.fail(LoadError::from_output_io("spilling tuples", e));
                    Stop
                })?;
            }
            Ok(true)
        }),
    );
    // Refused literals become rejects once their positions in the chunk are found.
    if !refused.is_empty() {
        let rejects = unreadable::locate_in(&chunk.data[..], chunk.start.position, refused);
        if rejects.into_iter().try_for_each(|r| (on_reject.borrow_mut())(r)).is_err() {
            return false;
        }
    }
    // Tests force a wrong cut (failpoint.rs): real input gives none to test with.
    let res = match res {
        Ok(ChunkEnd::Clean) if bulkload_storage::failpoint::forced("parse.terse_dirty", chunk.seq) => {
            Ok(ChunkEnd::Dirty)
        }
        res => res,
    };
    match res {
        Ok(ChunkEnd::Clean) => true,
        Err(Stop) => false,
        Ok(ChunkEnd::Dirty) => {
            if strict {
                // The error a sequential parse finds from the chunk's start is the
                // sequential load's.
                let reader = rdf_input::open_decompressed(&f.path, f.compression).and_then(|mut r| {
                    io::copy(&mut (&mut r).take(chunk.start.offset), &mut io::sink())?;
                    Ok(r)
                });
                let found = match reader {
                    Ok(r) => parse_terse_from(f.syntax, r, &chunk.start, |_| Ok(()), Err),
                    Err(e) => Err(Ok(e)),
                };
                match found {
                    Err(Err(r)) => {
                        let _ = (on_reject.borrow_mut())(r);
                        return false;
                    }
                    Err(Ok(e)) => {
                        sh.fail(sh.input_error(file, e));
                        return false;
                    }
                    Ok(_) => {}
                }
            }
            // Chunks after this one may already be logged as parsed on their own: `run`
            // starts the phase over with this file parsed whole.
            sh.split_wrong.lock().expect("split").get_or_insert((file, chunk.start.position.line));
            sh.cancelled.store(true, Ordering::SeqCst);
            false
        }
    }
}
