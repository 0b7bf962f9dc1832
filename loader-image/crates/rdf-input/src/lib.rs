//! Syntax input: which syntax and compression a file has (by name and by content),
//! decompression on its own thread, newline-aligned chunks of line-based files, and
//! parsing with oxttl (oxrdfxml for RDF/XML) into quads with exact positions.

mod bzip2_block;
mod chunks;
mod detect;
pub mod fastline;
pub mod fastterse;
pub mod parallel_bzip2;
mod parse;
mod rdfxml;
mod rejected;
pub mod sample;
mod substitute;
pub mod term_rules;
mod terse;
#[cfg(any(test, feature = "test-oracle"))]
#[doc(hidden)]
pub mod terse_check;

pub use chunks::{Chunk, LineChunker};
pub use detect::{
    decompress, decompress_threads, detect, open_decompressed, BlankLabels, Compression, DocumentSyntax, InputFile,
    Split, Syntax,
};
pub use oxrdf;
pub use parse::{parse_document, parse_file, parse_line_chunk, parse_terse, parse_terse_from};
pub use rdfxml::{jena_xml_literal, parse_rdfxml};
pub use rejected::{Position, Rejected};
pub use terse::{parse_chunk, parse_split, ChunkEnd, OnFast, TerseChunk, TerseSplitter, TerseStart, TerseState};
