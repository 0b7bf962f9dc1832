//! The Apache Jena TDB2 on-disk format, as written by a bulk loader: node table terms and
//! keys, packed B+Trees, the database directory, optimizer statistics.
//! `docs/tdb2-format.md` (in the repository root) describes the format as this crate writes it.

pub mod bptree;
pub mod db;
pub mod langtag;
pub mod md5x8;
pub mod outfile;
pub mod read;
pub mod stats;
pub mod term;

pub use bptree::{PackedTreeWriter, TreeParams, TreeSummary, BLOCK_SIZE};

/// Triple indexes: column order of each index over (S, P, O).
pub const TRIPLE_INDEXES: [(&str, [usize; 3]); 3] = [("SPO", [0, 1, 2]), ("POS", [1, 2, 0]), ("OSP", [2, 0, 1])];

/// Quad indexes: column order of each index over (G, S, P, O).
pub const QUAD_INDEXES: [(&str, [usize; 4]); 6] = [
    ("GSPO", [0, 1, 2, 3]),
    ("GPOS", [0, 2, 3, 1]),
    ("GOSP", [0, 3, 1, 2]),
    ("SPOG", [1, 2, 3, 0]),
    ("POSG", [2, 3, 1, 0]),
    ("OSPG", [3, 1, 2, 0]),
];

/// Name of the (only) generation directory a fresh database has.
pub const GENERATION_DIR: &str = "Data-0001";
