//! The input files of a load: directories expanded, syntax and compression detected.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use rdf_input::InputFile;

use crate::error::LoadError;

/// Input paths with directories replaced by the files below them (sorted, hidden files
/// and the fetch step's bookkeeping skipped), so a fetched dump set can be passed as is.
pub(crate) fn expand_inputs(inputs: &[PathBuf]) -> Result<Vec<PathBuf>, LoadError> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> io::Result<()> {
        let mut entries: Vec<_> = fs::read_dir(dir)?.collect::<Result<_, _>>()?;
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            if e.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            if e.file_type()?.is_dir() {
                walk(&e.path(), out)?;
            } else {
                out.push(e.path());
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    for p in inputs {
        if p.is_dir() {
            walk(p, &mut out).map_err(|e| LoadError::InputMissing { path: p.clone(), source: e })?;
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

/// The input files as `load` sees them: directories expanded, syntax and compression
/// detected.
pub fn detect_inputs(inputs: &[PathBuf]) -> Result<Vec<InputFile>, LoadError> {
    let mut files = Vec::new();
    for p in expand_inputs(inputs)? {
        files.push(rdf_input::detect(&p).map_err(|e| LoadError::InputMissing { path: p.clone(), source: e })?);
    }
    if files.is_empty() {
        return Err(LoadError::Usage("no input files".into()));
    }
    Ok(files)
}
