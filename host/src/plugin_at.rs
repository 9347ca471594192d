//! The one plugin a command names (`warden call`, `check` and `inspect` on a
//! single plugin), found as serving its folder would find it.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use warden_plugins::loader::{self, PluginSource};

/// Exit code of a command that could run nothing: the plugin cannot be
/// loaded, it has no such tool, or the arguments are malformed.
pub const UNUSABLE: u8 = 2;

/// The plugin at `target` (a `.wasm` file or a folder plugin), found as
/// serving its folder would find it, and that folder (where its mounts are
/// checked against).
pub fn plugin_source(target: &Path) -> Result<(PluginSource, PathBuf)> {
    let target = target
        .canonicalize()
        .with_context(|| format!("cannot find {}", target.display()))?;
    let root = target.parent().unwrap_or(Path::new("/")).to_path_buf();
    Ok((single_source(&target)?, root))
}

/// The plugin at `target` (a canonical path).
fn single_source(target: &Path) -> Result<PluginSource> {
    let folder_plugin = target.is_dir();
    let dir = target.parent().unwrap_or(Path::new("/"));
    let found = loader::discover_all(dir)?;
    let wanted = |s: &PluginSource| {
        if folder_plugin {
            s.folder.as_deref() == Some(target)
        } else {
            s.component == target
        }
    };
    match found.sources.into_iter().find(wanted) {
        Some(source) => Ok(source),
        None => match found.errors.into_iter().find(|e| e.path == target) {
            Some(error) => Err(error.error),
            None => bail!(
                "{} is not a plugin: give a `.wasm` component or a folder with plugin.toml",
                target.display()
            ),
        },
    }
}
