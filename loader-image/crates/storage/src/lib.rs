//! What a load stores: the bulk-load dictionary (`dict`) and the encoding of parsed terms
//! and statements into it (`encode`, `rdf12`, with the term checks of `warnings` and
//! `unreadable`), the spilled statement tuples (`tuples`), and the durable checkpoints
//! (`checkpoint`) that let a rerun resume. The crash points of the kill tests
//! (`failpoint`) live here because the dictionary and the checkpoints have them; the
//! crates above use the same ones.
//!
//! Knows nothing of the phases that drive it (bulkload-pipeline) or of progress
//! reporting (bulkload-monitor).

pub mod checkpoint;
pub mod dict;
pub mod encode;
pub mod failpoint;
pub mod rdf12;
pub mod tuples;
pub mod unreadable;
pub mod warnings;
