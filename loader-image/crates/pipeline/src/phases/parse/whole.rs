//! The parse job of a whole file: RDF/XML, or Turtle/TriG whose split was wrong.

use rdf_input::{parse_file, Rejected};

use bulkload_storage::encode::Encoder;
use bulkload_storage::unreadable;

use super::{blank_scope, file_base_iri, ParseShared, Stop, WorkerOutput};
use crate::input::{open_input, ReadAhead};
use crate::options::OnError;

/// Parses a file whole (RDF/XML, or Turtle/TriG whose split was wrong); whether it is done,
/// or `None` when it could not be opened (the phase fails).
pub(super) fn parse_whole_job(
    sh: &ParseShared<'_>,
    file: usize,
    out: &mut WorkerOutput,
    enc: &mut Encoder<'_>,
    on_reject: &mut dyn FnMut(Rejected) -> Result<(), Stop>,
) -> Option<bool> {
    let strict = sh.opts.on_error == OnError::Strict;
    let f = &sh.files[file];
    let reader = match open_input(f, sh.digests[file].clone(), sh.raw_bytes_read.clone(), sh.opts.threads) {
        Ok(r) => ReadAhead::spawn(r),
        Err(e) => {
            sh.fail(sh.input_error(file, e));
            return None;
        }
    };
    // A Turtle/TriG file parsed whole names its blank nodes as its chunks do.
    let mut scope = blank_scope(file, f);
    let base = sh.opts.base.clone().unwrap_or_else(|| file_base_iri(&f.path));
    let mut refused = Vec::new();
    let window = bulkload_storage::rdf12::ReadWindow::shared();
    let reader = bulkload_storage::rdf12::WindowTee { inner: reader, window: window.clone() };
    let on_reject = std::cell::RefCell::new(on_reject);
    let res = parse_file(
        f.syntax,
        reader,
        Some(&base),
        |q| {
            if sh.stopping() {
                return Err(Stop);
            }
            let locate = |suffix: &str| window.borrow_mut().locate(suffix);
            sh.store_parsed(&q, file, locate, enc, &mut scope, out)?.settle(
                &mut refused,
                strict,
                &mut **on_reject.borrow_mut(),
            )
        },
        |r| (on_reject.borrow_mut())(r),
    );
    // Refused literals become rejects once their positions are found.
    let res = match res {
        Err(Ok(e)) => Err(Ok(e)),
        res if !refused.is_empty() => match unreadable::locate(f, refused) {
            Err(e) => Err(Ok(e)),
            Ok(rejects) => match rejects.into_iter().try_for_each(|r| (on_reject.borrow_mut())(r)) {
                Err(Stop) => Err(Err(Stop)),
                Ok(()) => res,
            },
        },
        res => res,
    };
    Some(match res {
        Ok(prefixes) => {
            sh.prefixes.lock().expect("prefixes").push((file, prefixes));
            true
        }
        Err(Ok(e)) => {
            sh.fail(sh.input_error(file, e));
            false
        }
        Err(Err(Stop)) => false,
    })
}
