//! Messages about the load's own state (not progress), for the renderers.

use std::path::Path;

use crate::progress::Progress;

/// A message about the load's own state (not progress): a JSON line, or text on a terminal.
pub(crate) fn log_event(progress: &Progress, event: &str, path: &Path, message: &str) {
    let json = serde_json::json!({"event": event, "path": path.display().to_string(), "message": message}).to_string();
    progress.note(json, format!("{message} ({})", path.display()));
}
