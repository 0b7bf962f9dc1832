//! Why a load failed, and the process exit code of each kind (docs/exit-codes.md is the
//! contract: crates/cli/tests/exit_codes.rs checks [`ExitCode::ALL`] against it).

use std::io;
use std::path::PathBuf;

use bulkload_monitor::metrics::CannotListen;

use crate::budget::BudgetTooSmall;

/// The loader's process exit codes, defined here only.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum ExitCode {
    Ok = 0,
    Usage = 2,
    BadInput = 3,
    InputMissing = 4,
    Resources = 5,
    Interrupted = 6,
    Internal = 70,
    Transient = 75,
}

impl ExitCode {
    /// Every code the loader exits with.
    pub const ALL: [ExitCode; 8] = [
        ExitCode::Ok,
        ExitCode::Usage,
        ExitCode::BadInput,
        ExitCode::InputMissing,
        ExitCode::Resources,
        ExitCode::Interrupted,
        ExitCode::Internal,
        ExitCode::Transient,
    ];

    pub fn code(self) -> u8 {
        self as u8
    }

    /// The name docs/exit-codes.md gives the code.
    pub fn name(self) -> &'static str {
        match self {
            ExitCode::Ok => "ok",
            ExitCode::Usage => "usage",
            ExitCode::BadInput => "bad-input",
            ExitCode::InputMissing => "input-missing",
            ExitCode::Resources => "resources",
            ExitCode::Interrupted => "interrupted",
            ExitCode::Internal => "internal",
            ExitCode::Transient => "transient",
        }
    }
}

/// How an I/O error on the output side (database, work directory, reports) ends a load.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IoClass {
    /// Disk full or quota exceeded: free space (or give more), then rerun (exit 5).
    NoSpace,
    /// Out of another resource: memory, file descriptors, a file size limit (exit 5).
    OtherResource,
    /// Not allowed, or not possible where the flags point (permission denied, read-only
    /// filesystem, not a directory, name too long): retrying cannot help (exit 2).
    Refused,
    /// May pass by itself (a timeout, a busy or stale network filesystem, EIO on network
    /// storage): worth a retry from the checkpoint (exit 75).
    Transient,
    /// None of these: a bug or something unforeseen; a retry would repeat it (exit 70).
    Unexpected,
}

impl IoClass {
    /// Classifies by errno where there is one (the precise answer), else by kind.
    pub(crate) fn of(e: &io::Error) -> IoClass {
        if let Some(errno) = e.raw_os_error() {
            return match errno {
                libc::ENOSPC | libc::EDQUOT => IoClass::NoSpace,
                libc::ENOMEM | libc::EMFILE | libc::ENFILE | libc::EFBIG => IoClass::OtherResource,
                libc::EACCES
                | libc::EPERM
                | libc::EROFS
                | libc::ENOTDIR
                | libc::EISDIR
                | libc::ENAMETOOLONG
                | libc::ELOOP
                | libc::EXDEV
                | libc::ENOENT => IoClass::Refused,
                // EIO: on the network storage a cluster's volumes live on, a lost
                // connection shows as EIO; a bad local disk repeats it, and the retries
                // are bounded by the workflow's limit.
                libc::EIO
                | libc::EAGAIN
                | libc::EINTR
                | libc::ETIMEDOUT
                | libc::EBUSY
                | libc::ESTALE
                | libc::ENOLCK
                | libc::ECONNRESET
                | libc::ECONNABORTED
                | libc::ENETDOWN
                | libc::ENETUNREACH
                | libc::EHOSTUNREACH => IoClass::Transient,
                _ => IoClass::Unexpected,
            };
        }
        use io::ErrorKind as K;
        match e.kind() {
            K::StorageFull | K::QuotaExceeded => IoClass::NoSpace,
            K::OutOfMemory | K::FileTooLarge => IoClass::OtherResource,
            K::PermissionDenied
            | K::ReadOnlyFilesystem
            | K::NotADirectory
            | K::IsADirectory
            | K::InvalidFilename
            | K::NotFound => IoClass::Refused,
            K::TimedOut | K::Interrupted | K::WouldBlock | K::ResourceBusy | K::StaleNetworkFileHandle => {
                IoClass::Transient
            }
            _ => IoClass::Unexpected,
        }
    }

    pub(crate) fn exit_code(self) -> ExitCode {
        match self {
            IoClass::NoSpace | IoClass::OtherResource => ExitCode::Resources,
            IoClass::Refused => ExitCode::Usage,
            IoClass::Transient => ExitCode::Transient,
            IoClass::Unexpected => ExitCode::Internal,
        }
    }
}

/// The message of an output I/O error: "out of resources" for a full disk, as the table
/// says; "I/O error" for a transient or unforeseen one.
fn output_message(context: &str, e: &io::Error) -> String {
    match (IoClass::of(e), e.raw_os_error()) {
        (IoClass::NoSpace, Some(libc::EDQUOT)) => format!("out of resources: {context}: disk quota exceeded"),
        (IoClass::NoSpace, _) => format!("out of resources: {context}: no space left on device"),
        (IoClass::OtherResource, _) => format!("out of resources: {context}: {e}"),
        (IoClass::Refused, _) => format!("{context}: {e}"),
        (IoClass::Transient | IoClass::Unexpected, _) => format!("I/O error: {context}: {e}"),
    }
}

impl From<CannotListen> for LoadError {
    fn from(e: CannotListen) -> Self {
        LoadError::Usage(e.to_string())
    }
}

/// Why a load failed. Each kind has its own process exit code, so that a workflow can
/// tell what to retry (docs/exit-codes.md).
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
    #[error("{}: cannot read input: {source}", path.display())]
    InputMissing { path: PathBuf, source: io::Error },
    #[error("out of resources: {0}")]
    Resources(String),
    #[error("out of resources: {0}")]
    Budget(#[from] BudgetTooSmall),
    /// Writing the database, the work directory or a report failed; `source` says how,
    /// and decides the exit code ([`IoClass`]).
    #[error("{}", output_message(context, source))]
    Output { context: String, source: io::Error },
    #[error("another load of this database is running (it holds {}); try again when it has ended", lock.display())]
    Busy { lock: PathBuf },
    #[error("interrupted by a signal; nothing is at the target (run the same command again to resume)")]
    Interrupted,
    #[error("internal error: {0}")]
    Internal(String),
}

impl LoadError {
    /// The process exit code.
    pub fn exit_code(&self) -> ExitCode {
        match self {
            LoadError::Usage(_) => ExitCode::Usage,
            LoadError::BadInput { .. } | LoadError::CorruptInput { .. } | LoadError::TooManyRejects { .. } => {
                ExitCode::BadInput
            }
            LoadError::InputMissing { .. } => ExitCode::InputMissing,
            LoadError::Resources(_) | LoadError::Budget(_) => ExitCode::Resources,
            LoadError::Output { source, .. } => IoClass::of(source).exit_code(),
            LoadError::Busy { .. } => ExitCode::Transient,
            LoadError::Interrupted => ExitCode::Interrupted,
            LoadError::Internal(_) => ExitCode::Internal,
        }
    }

    /// A stop after which a rerun can resume from the checkpoint: a signal, a full disk, an
    /// output I/O error (once its cause is fixed). Anything else leaves no trace.
    pub(crate) fn keeps_checkpoint(&self) -> bool {
        matches!(
            self,
            LoadError::Interrupted | LoadError::Resources(_) | LoadError::Budget(_) | LoadError::Output { .. }
        )
    }

    /// An I/O error on the output or temp side, under what was being done.
    pub(crate) fn from_output_io(context: &str, e: io::Error) -> LoadError {
        if e.kind() == io::ErrorKind::Interrupted && e.raw_os_error().is_none() {
            LoadError::Interrupted // our own stop request, raised inside a phase
        } else {
            LoadError::Output { context: context.to_string(), source: e }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error;

    fn os(errno: i32) -> LoadError {
        LoadError::from_output_io("writing", io::Error::from_raw_os_error(errno))
    }

    #[test]
    fn full_disk_and_quota_are_out_of_resources() {
        for errno in [libc::ENOSPC, libc::EDQUOT] {
            let e = os(errno);
            assert_eq!(e.exit_code(), ExitCode::Resources, "{e}");
            assert!(e.to_string().starts_with("out of resources: writing: "), "{e}");
            assert!(e.keeps_checkpoint());
        }
        assert!(os(libc::ENOSPC).to_string().ends_with("no space left on device"));
        assert!(os(libc::EDQUOT).to_string().ends_with("disk quota exceeded"));
        assert_eq!(os(libc::EMFILE).exit_code(), ExitCode::Resources);
    }

    #[test]
    fn permission_and_read_only_are_final_usage_errors() {
        for errno in [libc::EACCES, libc::EPERM, libc::EROFS, libc::ENOTDIR] {
            assert_eq!(os(errno).exit_code(), ExitCode::Usage, "errno {errno}");
        }
        let kind = LoadError::from_output_io("x", io::Error::from(io::ErrorKind::PermissionDenied));
        assert_eq!(kind.exit_code(), ExitCode::Usage);
    }

    #[test]
    fn only_transient_errors_are_retried() {
        for errno in [libc::EIO, libc::EAGAIN, libc::ETIMEDOUT, libc::EINTR, libc::ESTALE] {
            assert_eq!(os(errno).exit_code(), ExitCode::Transient, "errno {errno}");
        }
        assert_eq!(os(libc::ENOEXEC).exit_code(), ExitCode::Internal, "unforeseen: not retried");
        let busy = LoadError::Busy { lock: "/tmp/.db.lock".into() };
        assert_eq!(busy.exit_code(), ExitCode::Transient);
    }

    #[test]
    fn our_own_stop_is_interrupted() {
        let e = LoadError::from_output_io("x", io::Error::new(io::ErrorKind::Interrupted, "interrupted"));
        assert!(matches!(e, LoadError::Interrupted));
        assert_eq!(e.exit_code(), ExitCode::Interrupted);
    }

    #[test]
    fn the_cause_is_kept() {
        let e = os(libc::EACCES);
        let cause = e.source().expect("source").downcast_ref::<io::Error>().expect("io::Error");
        assert_eq!(cause.raw_os_error(), Some(libc::EACCES));
        let missing = LoadError::InputMissing { path: "in.nt".into(), source: io::ErrorKind::NotFound.into() };
        assert!(missing.source().is_some());
    }
}
