//! Watching folders: file-system events, debounced into batches of changed
//! paths, and the mapping from a changed path to the plugin it belongs to.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use notify::RecursiveMode;
use notify::event::{AccessKind, AccessMode, EventKind};
use notify_debouncer_full::{DebounceEventResult, Debouncer, RecommendedCache, new_debouncer};
use tokio::sync::mpsc;

/// How long a path must stay quiet before its change is reported: long
/// enough for a write-then-rename or an editor's save to settle, short
/// enough to feel instant.
pub const DEBOUNCE: Duration = Duration::from_millis(50);

/// Paths that changed, after debouncing.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Batch {
    pub paths: BTreeSet<PathBuf>,
    /// The watcher lost events (say, its queue overflowed): the receiver
    /// should look at everything again.
    pub rescan: bool,
}

/// Watches while it lives.
pub struct Watcher {
    _debouncer: Debouncer<notify::RecommendedWatcher, RecommendedCache>,
}

/// Starts watching `targets` (each a folder, recursively or not). Batches
/// arrive on the receiver; it ends when the `Watcher` is dropped.
pub fn watch(
    targets: &[(PathBuf, RecursiveMode)],
    debounce: Duration,
) -> Result<(Watcher, mpsc::UnboundedReceiver<Batch>)> {
    let (sender, receiver) = mpsc::unbounded_channel();
    let mut debouncer = new_debouncer(debounce, None, move |result: DebounceEventResult| {
        let batch = match result {
            Ok(events) => {
                let mut batch = Batch::default();
                for event in events {
                    batch.rescan |= event.need_rescan();
                    if changes_content(&event.kind) {
                        batch.paths.extend(event.event.paths.iter().cloned());
                    }
                }
                batch
            }
            Err(errors) => {
                for error in errors {
                    tracing::warn!("file watcher: {error}");
                }
                Batch {
                    rescan: true,
                    ..Batch::default()
                }
            }
        };
        if !batch.paths.is_empty() || batch.rescan {
            let _ = sender.send(batch);
        }
    })
    .context("cannot start the file watcher")?;
    for (path, mode) in targets {
        debouncer
            .watch(path, *mode)
            .with_context(|| format!("cannot watch {}", path.display()))?;
    }
    Ok((Watcher { _debouncer: debouncer }, receiver))
}

/// Whether an event can mean different content. Opening and reading a file
/// is an event too (inotify reports it), and Warden reads every plugin it
/// loads: counting reads would make each load trigger another.
fn changes_content(kind: &EventKind) -> bool {
    match kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) => false,
        _ => true,
    }
}

/// One plugin's identity on disk: which plugins folder (an index into the
/// served folders) and its stem there — `notes` for `notes.wasm`,
/// `notes.toml` and the folder plugin `notes/`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PluginKey {
    pub root: usize,
    pub stem: String,
}

/// What a batch means for the plugins in `roots`.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct PluginChanges {
    pub keys: BTreeSet<PluginKey>,
    /// Folders to look at whole: the folder itself changed, or events were lost.
    pub rescan: BTreeSet<usize>,
}

/// The symlink through which Kubernetes serves a mounted ConfigMap or
/// Secret. The kubelet updates such a volume by writing a new hidden
/// timestamped folder and renaming a new `..data` symlink over the old one;
/// the visible names (`name.toml -> ..data/name.toml`) are not touched, so
/// their plugins get no event of their own.
const KUBERNETES_DATA: &str = "..data";

/// Maps changed paths to the plugins they may belong to. Hidden files (a
/// writer's temporary file before its rename) are ignored, except a
/// Kubernetes `..data` swap, anywhere in the folder (the folder itself is a
/// ConfigMap volume, or one is mounted in a hidden subfolder its symlinks
/// point into): any plugin may now read different files, so the whole folder
/// is looked at again.
pub fn plugin_changes(roots: &[PathBuf], batch: &Batch) -> PluginChanges {
    let mut changes = PluginChanges::default();
    if batch.rescan {
        changes.rescan.extend(0..roots.len());
    }
    for path in &batch.paths {
        for (index, root) in roots.iter().enumerate() {
            let Ok(relative) = path.strip_prefix(root) else {
                continue;
            };
            if relative.components().any(|c| c.as_os_str() == KUBERNETES_DATA) {
                changes.rescan.insert(index);
                continue;
            }
            let mut components = relative.components();
            let Some(first) = components.next() else {
                changes.rescan.insert(index);
                continue;
            };
            let Some(name) = first.as_os_str().to_str() else {
                continue;
            };
            if name.starts_with('.') {
                continue;
            }
            let inside_folder = components.next().is_some();
            let stem = if inside_folder {
                Some(name)
            } else {
                // Anything else may be a folder plugin appearing or going;
                // the reconciler finds out which.
                Some(
                    name.strip_suffix(".wasm")
                        .or_else(|| name.strip_suffix(".origin.json"))
                        .or_else(|| name.strip_suffix(".toml"))
                        .unwrap_or(name),
                )
            };
            if let Some(stem) = stem {
                changes.keys.insert(PluginKey {
                    root: index,
                    stem: stem.to_string(),
                });
            }
        }
    }
    changes
}

/// The folder as the watcher reports paths in it: canonical, so symlinked
/// or relative folder names still match event paths.
pub fn canonical(dir: &Path) -> PathBuf {
    dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(root: usize, stem: &str) -> PluginKey {
        PluginKey {
            root,
            stem: stem.into(),
        }
    }

    #[test]
    fn paths_map_to_plugin_keys() {
        let roots = [PathBuf::from("/p"), PathBuf::from("/dev")];
        let batch = Batch {
            paths: [
                "/p/notes.wasm",
                "/p/notes.toml",
                "/p/notes.origin.json",
                "/p/.notes.wasm.123.tmp",
                "/p/readme.txt",
                "/p/folder/plugin.toml",
                "/p/folder/sub/x.wasm",
                "/p/gone",
                "/dev/hello.wasm",
                "/elsewhere/x.wasm",
            ]
            .iter()
            .map(PathBuf::from)
            .collect(),
            rescan: false,
        };
        let changes = plugin_changes(&roots, &batch);
        assert_eq!(
            changes.keys.into_iter().collect::<Vec<_>>(),
            [
                key(0, "folder"),
                key(0, "gone"),
                key(0, "notes"),
                key(0, "readme.txt"),
                key(1, "hello")
            ]
        );
        assert!(changes.rescan.is_empty());
    }

    #[test]
    fn the_folder_itself_or_lost_events_mean_a_rescan() {
        let roots = [PathBuf::from("/p"), PathBuf::from("/q")];
        let batch = Batch {
            paths: [PathBuf::from("/q")].into(),
            rescan: false,
        };
        assert_eq!(plugin_changes(&roots, &batch).rescan, [1].into());
        let lost = Batch {
            paths: BTreeSet::new(),
            rescan: true,
        };
        assert_eq!(plugin_changes(&roots, &lost).rescan, [0, 1].into());
    }

    #[test]
    fn a_kubernetes_data_swap_means_a_rescan() {
        let roots = [PathBuf::from("/p"), PathBuf::from("/q"), PathBuf::from("/r")];
        let batch = Batch {
            paths: [
                // The ConfigMap is the plugins folder.
                "/p/..data",
                "/p/..data_tmp",
                "/p/..2024_01_01_00_00_00.123/notes.toml",
                // A ConfigMap mounted in a hidden subfolder.
                "/q/..manifests/..data",
                // Other hidden files are still ignored.
                "/r/.notes.wasm.tmp",
                "/r/..2024_01_01_00_00_00.123/notes.toml",
            ]
            .iter()
            .map(PathBuf::from)
            .collect(),
            rescan: false,
        };
        let changes = plugin_changes(&roots, &batch);
        assert_eq!(changes.rescan, [0, 1].into());
        assert!(changes.keys.is_empty(), "{:?}", changes.keys);
    }

    #[test]
    fn reads_are_not_changes() {
        assert!(!changes_content(&EventKind::Access(AccessKind::Open(AccessMode::Read))));
        assert!(!changes_content(&EventKind::Access(AccessKind::Close(
            AccessMode::Read
        ))));
        assert!(changes_content(&EventKind::Access(AccessKind::Close(
            AccessMode::Write
        ))));
        assert!(changes_content(&EventKind::Remove(notify::event::RemoveKind::File)));
    }

    #[tokio::test]
    async fn reports_a_write_then_rename_as_one_batch() {
        let dir = std::env::temp_dir().join(format!("warden-watch-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let dir = canonical(&dir);
        let (_watcher, mut batches) = watch(&[(dir.clone(), RecursiveMode::Recursive)], DEBOUNCE).unwrap();
        std::fs::write(dir.join(".a.wasm.tmp"), b"\0asm").unwrap();
        std::fs::rename(dir.join(".a.wasm.tmp"), dir.join("a.wasm")).unwrap();
        let mut keys = BTreeSet::new();
        while !keys.contains(&key(0, "a")) {
            let batch = tokio::time::timeout(Duration::from_secs(30), batches.recv())
                .await
                .expect("a batch within 30 s")
                .unwrap();
            keys.extend(plugin_changes(std::slice::from_ref(&dir), &batch).keys);
        }
        assert_eq!(keys, [key(0, "a")].into());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
