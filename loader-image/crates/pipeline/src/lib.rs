//! The load pipeline: parse and encode in parallel into a bulk-load dictionary, write the
//! node table in MD5 order, sort and pack every index, write statistics and the report,
//! and rename the finished database into place.
//!
//! `load` (the orchestrator) sets up a `build::Build` and runs `phases::{parse, nodes,
//! indexes, finish}` in order; `options` and `budget` are leaves every other module may
//! read; `progress` is plain state that `monitor`'s renderers (`progress_bar`,
//! `progress_json`, `metrics`) read.

mod budget;
mod build;
pub mod checkpoint;
pub mod dict;
pub mod encode;
mod error;
mod events;
pub mod failpoint;
mod input;
mod input_files;
pub mod load;
pub mod metrics;
mod monitor;
mod options;
mod phases;
pub mod plan;
pub mod progress;
mod progress_bar;
mod progress_json;
mod rdf12;
mod report;
mod rerun;
pub mod tuples;
mod unreadable;
pub mod warnings;
mod workdir;

pub use error::{ExitCode, IoClass, LoadError};
pub use load::load;
pub use options::{LoadOptions, MonitorOptions, OnError, ProgressStyle};
pub use report::{Report, REPORT_FILE};
pub use tdb2_nodeid::JenaVersion;
