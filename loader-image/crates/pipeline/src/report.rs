//! The JSON build report written beside `Data-0001`.

use serde::Serialize;

use crate::input::RawDigest;
use crate::load::LoadOptions;
use rdf_input::InputFile;

#[derive(Debug, Serialize)]
pub struct InputReport {
    pub path: String,
    pub syntax: &'static str,
    pub compression: &'static str,
    pub bytes: u64,
    pub md5: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct PhaseReport {
    pub name: String,
    pub seconds: f64,
}

#[derive(Debug, Serialize)]
pub struct Report {
    pub tool: &'static str,
    pub version: &'static str,
    pub format: &'static str,
    /// The Jena version whose TDB2 layout and inline rules this database follows.
    pub jena_compat: &'static str,
    pub location: String,
    pub inputs: Vec<InputReport>,
    /// Where the inputs came from (`--source-report`, e.g. the fetch step's report).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<serde_json::Value>,
    /// Statements parsed (before duplicates collapse).
    pub statements: u64,
    /// Distinct triples in the default graph.
    pub triples: u64,
    /// Distinct quads in named graphs.
    pub quads: u64,
    pub distinct_terms: u64,
    pub rejects: u64,
    pub rejects_file: Option<String>,
    pub prefixes: u64,
    pub on_error: &'static str,
    pub threads: usize,
    pub memory_budget_bytes: u64,
    pub dictionary_bytes: u64,
    /// Dictionary entries written to spill runs (0 when the dictionary fit in memory).
    pub dictionary_spilled_terms: u64,
    pub node_table_bytes: u64,
    pub database_bytes: u64,
    pub temp_disk_peak_bytes: u64,
    pub peak_rss_bytes: u64,
    pub duration_seconds: f64,
    pub phases: Vec<PhaseReport>,
}

impl Report {
    pub(crate) fn new(opts: &LoadOptions, files: &[InputFile], digests: &[RawDigest]) -> Report {
        Report {
            tool: "rdf-bulkload",
            version: env!("CARGO_PKG_VERSION"),
            format: "tdb2",
            jena_compat: "5.6.0",
            location: opts.loc.display().to_string(),
            inputs: files
                .iter()
                .zip(digests)
                .map(|(f, d)| InputReport {
                    path: f.path.display().to_string(),
                    syntax: f.syntax.name(),
                    compression: f.compression.name(),
                    bytes: f.size,
                    md5: d.md5.clone(),
                })
                .collect(),
            source: None,
            statements: 0,
            triples: 0,
            quads: 0,
            distinct_terms: 0,
            rejects: 0,
            rejects_file: None,
            prefixes: 0,
            on_error: match opts.on_error {
                crate::load::OnError::Strict => "strict",
                crate::load::OnError::Skip => "skip",
            },
            threads: opts.threads,
            memory_budget_bytes: opts.memory,
            dictionary_bytes: 0,
            dictionary_spilled_terms: 0,
            node_table_bytes: 0,
            database_bytes: 0,
            temp_disk_peak_bytes: 0,
            peak_rss_bytes: 0,
            duration_seconds: 0.0,
            phases: Vec::new(),
        }
    }
}
