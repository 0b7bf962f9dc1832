//! What a running load shows: `progress` is plain state the phases update, and
//! `monitor` starts its renderers, which read it: bars on a terminal (`progress_bar`),
//! JSON lines otherwise (`progress_json`, in the envelopes of `events`), and the Prometheus
//! metrics server (`metrics`).
//!
//! Knows nothing of the phases that drive it (bulkload-pipeline); uses bulkload-storage
//! only for its warning kinds and crash points.

pub mod events;
pub mod metrics;
pub mod monitor;
pub mod progress;
mod progress_bar;
mod progress_json;
