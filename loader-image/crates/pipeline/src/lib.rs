//! The load pipeline: parse and encode in parallel into a bulk-load dictionary, write the
//! node table in MD5 order, sort and pack every index, write statistics and the report,
//! and rename the finished database into place.
//!
//! `load` (the orchestrator) sets up a `build::Build` and runs `phases::{parse, nodes,
//! indexes, finish}` in order; `options` and `budget` are leaves every other module may
//! read. What the phases store is bulkload-storage's; what the load shows while it runs
//! (`Progress`, the bars, JSON lines and metrics) is bulkload-monitor's. Both are below
//! this crate: neither knows of it.

mod budget;
mod build;
mod error;
mod input;
mod input_files;
mod load;
mod options;
mod phases;
mod plan;
mod report;
mod rerun;
mod workdir;

pub use bulkload_monitor::monitor::{MonitorOptions, ProgressStyle};
#[cfg(feature = "failpoints")]
pub use bulkload_storage::failpoint::setup as setup_failpoints;
pub use error::{ExitCode, LoadError};
pub use input_files::detect_inputs;
pub use load::load_then;
pub use options::{LoadOptions, OnError};
pub use plan::{plan, Plan, PlanRequest};
pub use report::Report;
pub use tdb2_nodeid::JenaVersion;
