//! Where a load keeps its work: the build directory beside the target, the work (spill)
//! directory with the checkpoint, and the lock that keeps two loads of one database apart.

use std::fs::{self, File};
use std::path::{Path, PathBuf};

use tdb2::GENERATION_DIR;

use crate::error::LoadError;
use crate::options::LoadOptions;

/// `<parent>/.<name>.<suffix>`: a hidden sibling of the database directory, on its
/// filesystem so that renames between them are atomic.
pub(crate) fn sibling(loc: &Path, suffix: &str) -> PathBuf {
    let name = loc.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "db".into());
    let parent = loc.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    parent.join(format!(".{name}.{suffix}"))
}

/// Where a load keeps its work: the temporary database directory beside the target, and
/// the work (spill) directory with the checkpoint.
pub(crate) struct Places {
    pub(crate) building: PathBuf,
    pub(crate) gen_dir: PathBuf,
    pub(crate) work_parent: PathBuf,
    pub(crate) work_name: String,
}

impl Places {
    pub(crate) fn of(opts: &LoadOptions) -> Places {
        let building = sibling(&opts.loc, "building");
        let work_parent =
            opts.tmpdir.clone().unwrap_or_else(|| building.parent().unwrap_or(Path::new(".")).to_path_buf());
        let work_name = format!(
            ".{}.spill",
            opts.loc.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "db".into())
        );
        Places { gen_dir: building.join(GENERATION_DIR), building, work_parent, work_name }
    }
    pub(crate) fn work_dir(&self) -> PathBuf {
        self.work_parent.join(&self.work_name)
    }
}

/// An exclusive lock on `<work parent>/.<name>.lock`, held for the whole load: two loads of
/// one database (a retry started while the first attempt still runs) would share the work
/// and build directories. The file is removed when the load ends; a SIGKILL leaves it, and
/// the next load takes it over.
pub(crate) struct LoadLock {
    path: PathBuf,
    _file: File,
}

impl LoadLock {
    pub(crate) fn take(places: &Places) -> Result<LoadLock, LoadError> {
        use std::os::unix::fs::MetadataExt;
        let path = places.work_parent.join(format!("{}.lock", places.work_name.trim_end_matches(".spill")));
        let busy = || LoadError::Busy { lock: path.clone() };
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| LoadError::from_output_io("creating the lock file", e))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) => return Err(busy()),
            Err(fs::TryLockError::Error(e)) => return Err(LoadError::from_output_io("locking", e)),
        }
        // Locked a file that its holder removed in the meantime: the path is someone else's now.
        let same = fs::metadata(&path).and_then(|m| file.metadata().map(|f| f.ino() == m.ino())).unwrap_or(false);
        if !same {
            return Err(busy());
        }
        Ok(LoadLock { path, _file: file })
    }
}

impl Drop for LoadLock {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path); // still locked: nobody else can hold it now
    }
}
