//! The access policy file, reloaded when it changes: an operator's edit —
//! or Kubernetes swapping a mounted ConfigMap's `..data` link — takes effect
//! for the next request, with no restart and no dropped call. A file that
//! does not parse is reported and the policy in force stays, so a typo never
//! opens (or closes) the server.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use notify::RecursiveMode;

use super::oauth::OAuth;
use warden_mcp::access::{AccessPolicy, MAX_POLICY_BYTES};
use warden_plugins::watcher::{self, DEBOUNCE, Watcher};
use warden_runtime::bounded_file;

/// Watches `path`'s folder while the returned `Watcher` lives, putting each
/// new version of the policy in force.
pub fn watch(path: &Path, oauth: Arc<OAuth>) -> Result<Watcher> {
    let folder = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf();
    let (watcher, mut batches) = watcher::watch(&[(folder.clone(), RecursiveMode::NonRecursive)], DEBOUNCE)
        .with_context(|| format!("cannot watch {} for changes of the access policy", folder.display()))?;
    let path: PathBuf = path.to_path_buf();
    let mut current = bounded_file::read(&path, MAX_POLICY_BYTES).ok();
    tokio::spawn(async move {
        while batches.recv().await.is_some() {
            // Any change in the folder (the file, an editor's rename, a
            // ConfigMap's `..data` swap) may have changed what the path reads.
            // The one opener: a FIFO swapped in is refused, not waited on
            // (which would hold this watcher, and a runtime thread, for good).
            let text = match bounded_file::read(&path, MAX_POLICY_BYTES) {
                Ok(text) => text,
                Err(error) => {
                    tracing::error!(
                        "{}; the policy in force stays",
                        error.describe("the access policy", &path)
                    );
                    continue;
                }
            };
            if current.as_deref() == Some(text.as_slice()) {
                continue;
            }
            current = Some(text);
            reload(&path, &oauth);
        }
    });
    Ok(watcher)
}

/// Puts the policy `path` holds now in force (also on SIGHUP); one that
/// cannot be read or does not parse is reported, and the policy in force stays.
pub fn reload(path: &Path, oauth: &OAuth) {
    match AccessPolicy::load(path) {
        Ok(policy) => {
            tracing::info!("access policy {} reloaded", path.display());
            oauth.set_policy(policy);
        }
        Err(error) => tracing::error!("{error:#}; the policy in force stays"),
    }
}
