//! The JSON build report written beside `Data-0001`.

use serde::{Deserialize, Serialize};

use std::fs;

use bulkload_storage::checkpoint::BuildIdentity;

use crate::error::LoadError;
use crate::options::LoadOptions;
use rdf_input::InputFile;

/// Name of the build report inside the database directory (not `Data*`, so Jena ignores it).
pub(crate) const REPORT_FILE: &str = "bulkload-report.json";

#[derive(Debug, Serialize, Deserialize)]
pub struct InputReport {
    pub path: String,
    pub syntax: String,
    pub compression: String,
    pub bytes: u64,
    pub md5: Option<String>,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct PhaseReport {
    pub name: String,
    pub seconds: f64,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct Report {
    pub tool: String,
    pub version: String,
    pub format: String,
    /// The Jena version whose TDB2 layout and inline rules this database follows (`--jena`:
    /// 5.6.0 or 6.2.0; docs/tdb2-format.md §12): the Jena that serves it must be that one.
    pub jena_compat: String,
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
    /// Terms kept with a warning, per kind (docs/fidelity.md): one per statement and position
    /// holding a language tag that BCP 47 refuses or an IRI that RFC 3987 refuses.
    #[serde(default)]
    pub warnings: std::collections::BTreeMap<String, u64>,
    /// The first few occurrences of each kind of warning, in input order.
    #[serde(default)]
    pub warning_examples: Vec<bulkload_storage::warnings::WarningExample>,
    pub prefixes: u64,
    pub on_error: String,
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
    /// The checkpoint this run resumed after (`parse`, `nodes`, `indexes (…)`), if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resumed_after: Option<String>,
    /// What makes a rerun "the same load" (inputs and the options that change the
    /// database), as the checkpoint records it. Absent in reports of loaders before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<BuildIdentity>,
    /// True when this run found the same load already complete at `--loc` and did nothing:
    /// the figures are the earlier build's. Only in the `--report` copy and the returned
    /// report; the report inside the database is never rewritten.
    #[serde(default)]
    pub already_complete: bool,
}

impl Report {
    pub(crate) fn new(
        opts: &LoadOptions,
        files: &[InputFile],
        digests: &[Option<String>],
        identity: &BuildIdentity,
    ) -> Report {
        Report {
            tool: "rdf-bulkload".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            format: "tdb2".into(),
            jena_compat: opts.jena.release().into(),
            location: opts.loc.display().to_string(),
            inputs: files
                .iter()
                .zip(digests)
                .map(|(f, d)| InputReport {
                    path: f.path.display().to_string(),
                    syntax: f.syntax.name().into(),
                    compression: f.compression.name().into(),
                    bytes: f.size,
                    md5: d.clone(),
                })
                .collect(),
            source: None,
            statements: 0,
            triples: 0,
            quads: 0,
            distinct_terms: 0,
            rejects: 0,
            rejects_file: None,
            warnings: Default::default(),
            warning_examples: Vec::new(),
            prefixes: 0,
            on_error: opts.on_error.name().into(),
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
            resumed_after: None,
            identity: Some(identity.clone()),
            already_complete: false,
        }
    }
}

/// What the load step hands the operator (`--summary`, Argo's output parameter): the
/// figures it records and where the full report is. The full report lists every input and
/// fetched object and grows with the dump set; an output parameter is stored in the
/// Workflow object, which etcd caps at about 1.5 MiB, so it carries only this.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Summary {
    pub tool: String,
    pub version: String,
    pub triples: u64,
    pub quads: u64,
    pub rejects: u64,
    pub duration_seconds: f64,
    pub database_bytes: u64,
    pub already_complete: bool,
    /// The checkpoint this run resumed after, if it did (the report's `resumed_after`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resumed_after: Option<String>,
    /// The full report's copy (`--report`), when one was written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report: Option<String>,
}

impl Report {
    pub(crate) fn summary(&self, report_copy: Option<&std::path::Path>) -> Summary {
        Summary {
            tool: self.tool.clone(),
            version: self.version.clone(),
            triples: self.triples,
            quads: self.quads,
            rejects: self.rejects,
            duration_seconds: self.duration_seconds,
            database_bytes: self.database_bytes,
            already_complete: self.already_complete,
            resumed_after: self.resumed_after.clone(),
            report: report_copy.map(|p| p.display().to_string()),
        }
    }
}

/// Writes the report's copy (`--report`, as `json`) and the summary (`--summary`).
pub(crate) fn write_copies(opts: &LoadOptions, report: &Report, json: &str) -> Result<(), LoadError> {
    if let Some(extra) = &opts.report {
        fs::write(extra, json).map_err(|e| LoadError::from_output_io("writing --report", e))?;
    }
    if let Some(path) = &opts.summary {
        let summary = serde_json::to_string_pretty(&report.summary(opts.report.as_deref()))
            .map_err(|e| LoadError::Internal(e.to_string()))?;
        fs::write(path, summary).map_err(|e| LoadError::from_output_io("writing --summary", e))?;
    }
    Ok(())
}
