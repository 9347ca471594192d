//! Why a plugin is not served: what the loader and the catalog report.

use std::path::PathBuf;

/// A plugin that could not be loaded, and why.
#[derive(Debug)]
pub struct LoadError {
    pub path: PathBuf,
    pub error: anyhow::Error,
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // One line per plugin in the log, whatever the error's own layout.
        let reason = format!("{:#}", self.error);
        let reason: Vec<&str> = reason.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
        write!(f, "{}: {}", self.path.display(), reason.join(" "))
    }
}
