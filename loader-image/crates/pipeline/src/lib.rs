//! The load pipeline: parse and encode in parallel into a bulk-load dictionary, write the
//! node table in MD5 order, sort and pack every index, write statistics and the report,
//! and rename the finished database into place.

pub mod checkpoint;
pub mod dict;
pub mod encode;
mod error;
pub mod failpoint;
mod input;
pub mod load;
pub mod metrics;
mod parse;
pub mod plan;
pub mod progress;
mod progress_bar;
mod report;
pub mod tuples;
mod unreadable;

pub use error::LoadError;
pub use load::{load, LoadOptions, OnError, REPORT_FILE};
pub use progress::{MonitorOptions, ProgressStyle};
pub use report::Report;
