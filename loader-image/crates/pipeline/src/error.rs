use std::path::PathBuf;

/// Why a load failed. Each kind has its own process exit code, so that a workflow can
/// tell what to retry (README: "Exit codes").
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{0}")]
    Usage(String),
    #[error("{file}:{line}:{column}: {message}")]
    BadInput { file: String, line: u64, column: u64, message: String },
    #[error("{file}: {message}")]
    CorruptInput { file: String, message: String },
    #[error("{rejected} statements rejected, more than --max-rejects {max} (see {rejects_file})")]
    TooManyRejects { rejected: u64, max: u64, rejects_file: String },
    #[error("{path}: cannot read input: {message}")]
    InputMissing { path: PathBuf, message: String },
    #[error("out of resources: {0}")]
    Resources(String),
    #[error("interrupted by a signal; nothing is at the target (run the same command again to resume)")]
    Interrupted,
    #[error("I/O error: {0}")]
    Transient(String),
    #[error("internal error: {0}")]
    Internal(String),
}

impl LoadError {
    /// Process exit code (documented in the README).
    pub fn exit_code(&self) -> i32 {
        match self {
            LoadError::Usage(_) => 2,
            LoadError::BadInput { .. } | LoadError::CorruptInput { .. } | LoadError::TooManyRejects { .. } => 3,
            LoadError::InputMissing { .. } => 4,
            LoadError::Resources(_) => 5,
            LoadError::Interrupted => 6,
            LoadError::Transient(_) => 75,
            LoadError::Internal(_) => 70,
        }
    }

    /// Classifies an I/O error on the output or temp side.
    pub fn from_output_io(context: &str, e: std::io::Error) -> LoadError {
        if e.kind() == std::io::ErrorKind::Interrupted && e.raw_os_error().is_none() {
            LoadError::Interrupted // our own stop request, raised inside a phase
        } else if e.raw_os_error() == Some(28) || e.kind() == std::io::ErrorKind::StorageFull {
            LoadError::Resources(format!("{context}: no space left on device"))
        } else if e.raw_os_error() == Some(122) {
            LoadError::Resources(format!("{context}: disk quota exceeded"))
        } else {
            LoadError::Transient(format!("{context}: {e}"))
        }
    }
}

impl From<crate::budget::BudgetTooSmall> for LoadError {
    fn from(e: crate::budget::BudgetTooSmall) -> LoadError {
        LoadError::Resources(e.to_string())
    }
}
