//! The phases of a build, in order; each ends with its checkpoint (bulkload_storage::checkpoint), so
//! that a rerun resumes after the last one completed.

pub(crate) mod finish;
pub(crate) mod indexes;
pub(crate) mod nodes;
pub(crate) mod parse;
pub(crate) mod prepare;
