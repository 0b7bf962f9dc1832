//! The readers: they decompress the inputs and cut them into the workers' jobs.

use std::io::{self, Read};
use std::sync::atomic::{AtomicUsize, Ordering};

use rdf_input::{LineChunker, Split, TerseSplitter};

use super::{file_base_iri, terse_chunk_bytes, Job, ParseShared};
use crate::budget::CHUNK_BYTES;
use crate::input::open_input;

/// Reads input files and cuts them into chunks by their syntax's split kind: line-based
/// files at newlines, Turtle/TriG files into chunks of whole statements (this thread does the
/// decompression); RDF/XML files are handed to a worker whole. Several producers share the
/// files.
pub(super) fn produce(sh: &ParseShared<'_>, tx: crossbeam_channel::Sender<Job>, next_file: &AtomicUsize) {
    loop {
        let file = next_file.fetch_add(1, Ordering::SeqCst);
        let Some(f) = sh.files.get(file) else { return };
        if sh.skipped(file, 0) {
            return;
        }
        let go_on = match f.syntax.split() {
            // A file whose cut went wrong in the run resumed is parsed whole.
            _ if sh.resumed.whole_files.contains(&file) => send_whole(sh, &tx, file),
            Split::Whole(_) => send_whole(sh, &tx, file),
            Split::Statements => send_statement_chunks(sh, &tx, file),
            Split::Lines => send_line_chunks(sh, &tx, file),
        };
        if !go_on {
            return;
        }
    }
}

/// Hands file `file` to a worker to parse whole, unless the run resumed had parsed it. False
/// when the producer is to stop.
fn send_whole(sh: &ParseShared<'_>, tx: &crossbeam_channel::Sender<Job>, file: usize) -> bool {
    if sh.resumed.files_done.contains_key(&file) {
        sh.raw_bytes_read.fetch_add(sh.files[file].size, Ordering::Relaxed); // parsed by the run resumed
        return true;
    }
    tx.send(Job::Whole { file }).is_ok()
}

/// Opens file `file` for a producer to cut; None when it cannot (the load has failed).
fn open_to_cut(sh: &ParseShared<'_>, file: usize) -> Option<Box<dyn Read + Send>> {
    match open_input(&sh.files[file], sh.digests[file].clone(), sh.raw_bytes_read.clone(), sh.opts.threads) {
        Ok(r) => Some(r),
        Err(e) => {
            sh.fail(sh.input_error(file, e));
            None
        }
    }
}

/// Cuts a Turtle/TriG file into chunks of whole statements for the workers. False when the
/// producer is to stop.
fn send_statement_chunks(sh: &ParseShared<'_>, tx: &crossbeam_channel::Sender<Job>, file: usize) -> bool {
    let f = &sh.files[file];
    let Some(reader) = open_to_cut(sh, file) else { return false };
    // The splitter applies the directives itself (the chunks resumed need no parse for the
    // state the next ones start in) and gives the file's prefix declarations.
    let base = sh.opts.base.clone().unwrap_or_else(|| file_base_iri(&f.path));
    let mut splitter = match TerseSplitter::new(f.syntax.has_graphs(), reader, Some(&base), terse_chunk_bytes()) {
        Ok(s) => s,
        Err(e) => {
            sh.fail(sh.input_error(file, e));
            return false;
        }
    };
    if !send_chunks(sh, tx, file, || splitter.next_chunk(), |c| c.seq, |chunk| Job::Terse { file, chunk }) {
        return false;
    }
    sh.prefixes.lock().expect("prefixes").push((file, splitter.declared().to_vec()));
    true
}

/// Cuts an N-Triples/N-Quads file into chunks at newlines for the workers. False when the
/// producer is to stop.
fn send_line_chunks(sh: &ParseShared<'_>, tx: &crossbeam_channel::Sender<Job>, file: usize) -> bool {
    let Some(reader) = open_to_cut(sh, file) else { return false };
    let mut chunker = LineChunker::new(reader, CHUNK_BYTES);
    send_chunks(sh, tx, file, || chunker.next_chunk(), |c| c.seq, |chunk| Job::Lines { file, chunk })
}

/// Hands one file's chunks to the workers, leaving out those the run resumed had parsed.
/// False when the producer is to stop: the load failed, or skip mode's limit cut it short.
fn send_chunks<C>(
    sh: &ParseShared<'_>,
    tx: &crossbeam_channel::Sender<Job>,
    file: usize,
    mut next: impl FnMut() -> io::Result<Option<C>>,
    seq: impl Fn(&C) -> u64,
    job: impl Fn(C) -> Job,
) -> bool {
    loop {
        match next() {
            Ok(Some(chunk)) => {
                let s = seq(&chunk);
                if sh.skipped(file, s) {
                    return false;
                }
                if sh.chunks_done.contains(&(file, s)) {
                    continue; // parsed by the run resumed
                }
                if tx.send(job(chunk)).is_err() {
                    return false;
                }
            }
            Ok(None) => return true,
            Err(e) => {
                sh.fail(sh.input_error(file, e));
                return false;
            }
        }
    }
}
