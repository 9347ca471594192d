//! Watching folders: file-system events, debounced into batches of changed
//! paths, and the mapping from a changed path to the plugin it belongs to.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use notify::RecursiveMode;
use notify::event::{AccessKind, AccessMode, EventKind};
use notify_debouncer_full::{DebounceEventResult, Debouncer, RecommendedCache, new_debouncer, new_debouncer_opt};
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
    /// The system's watch limit was reached (a folder created since could
    /// not be watched): the receiver should poll instead (`Watcher::poll`).
    pub watch_limit: bool,
}

/// How often a folder is polled when it cannot be watched (the inotify
/// watch limit reached, a file system without events).
pub const POLL_EVERY: Duration = Duration::from_secs(2);

/// Watches while it lives. A folder the system cannot watch is polled
/// instead, with a warning.
pub struct Watcher {
    native: Debouncer<notify::RecommendedWatcher, RecommendedCache>,
    /// Every folder is polled (`--poll`).
    poll_all: bool,
    polling: Option<Debouncer<notify::PollWatcher, RecommendedCache>>,
    sender: mpsc::UnboundedSender<Batch>,
    debounce: Duration,
}

/// Starts watching `targets` (each a folder, recursively or not). Batches
/// arrive on the receiver; it ends when the `Watcher` is dropped.
pub fn watch(
    targets: &[(PathBuf, RecursiveMode)],
    debounce: Duration,
) -> Result<(Watcher, mpsc::UnboundedReceiver<Batch>)> {
    watch_with(targets, debounce, false)
}

/// [`watch`], polling every folder when `poll_all`.
pub fn watch_with(
    targets: &[(PathBuf, RecursiveMode)],
    debounce: Duration,
    poll_all: bool,
) -> Result<(Watcher, mpsc::UnboundedReceiver<Batch>)> {
    let (sender, receiver) = mpsc::unbounded_channel();
    let native = new_debouncer(debounce, None, handler(sender.clone())).context("cannot start the file watcher")?;
    let mut watcher = Watcher {
        native,
        poll_all,
        polling: None,
        sender,
        debounce,
    };
    for (path, mode) in targets {
        watcher.add(path, *mode)?;
    }
    Ok((watcher, receiver))
}

impl Watcher {
    /// Watches `path` too; by polling every `POLL_EVERY` when the system
    /// will not watch it (the error is logged as a warning).
    pub fn add(&mut self, path: &Path, mode: RecursiveMode) -> Result<()> {
        if self.poll_all {
            tracing::info!("polling {} every {} s (--poll)", path.display(), POLL_EVERY.as_secs());
        } else if let Some(file_system) = without_events(path) {
            tracing::warn!(
                "{} is on {file_system}, which tells watchers of no changes made elsewhere: \
                 polling it every {} s instead",
                path.display(),
                POLL_EVERY.as_secs()
            );
        } else {
            let Err(error) = self.native.watch(path, mode) else {
                return Ok(());
            };
            if !path.exists() {
                return Err(error).with_context(|| format!("cannot watch {}", path.display()));
            }
            return self.poll(path, mode, &error.to_string());
        }
        self.start_polling(path, mode)
    }

    /// Polls `path` from now on, in place of watching it, saying why: the
    /// system would not watch it, or all of it (the watch limit reached).
    pub fn poll(&mut self, path: &Path, mode: RecursiveMode, why: &str) -> Result<()> {
        // A recursive watch that failed half-way holds some watches: give them back.
        let _ = self.native.unwatch(path);
        tracing::warn!(
            "cannot watch {} ({why}; on Linux, `sysctl fs.inotify.max_user_watches` may be too low): \
             polling it every {} s instead",
            path.display(),
            POLL_EVERY.as_secs()
        );
        self.start_polling(path, mode)
    }

    fn start_polling(&mut self, path: &Path, mode: RecursiveMode) -> Result<()> {
        let polling = match &mut self.polling {
            Some(polling) => polling,
            None => self.polling.insert(
                new_debouncer_opt(
                    self.debounce,
                    None,
                    handler(self.sender.clone()),
                    RecommendedCache::new(),
                    notify::Config::default().with_poll_interval(POLL_EVERY),
                )
                .context("cannot start polling")?,
            ),
        };
        polling
            .watch(path, mode)
            .with_context(|| format!("cannot poll {}", path.display()))
    }

    /// Stops watching `path` (nothing if it was not watched).
    pub fn remove(&mut self, path: &Path) {
        let _ = self.native.unwatch(path);
        if let Some(polling) = &mut self.polling {
            let _ = polling.unwatch(path);
        }
    }
}

/// The network file system `path` is on, if it is one whose changes made by
/// other machines (or the server side) no watcher hears of.
fn without_events(path: &Path) -> Option<&'static str> {
    let name = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).ok()?;
    let mut stats = std::mem::MaybeUninit::<libc::statfs>::uninit();
    // SAFETY: `name` is a NUL-terminated path and `stats` is written by the call.
    if unsafe { libc::statfs(name.as_ptr(), stats.as_mut_ptr()) } != 0 {
        return None;
    }
    // SAFETY: statfs returned 0, so it filled `stats`.
    let kind = unsafe { stats.assume_init() }.f_type;
    // `f_type`'s width differs between platforms.
    #[allow(clippy::unnecessary_cast)]
    file_system_without_events(kind as i64)
}

/// `statfs`'s `f_type` of file systems that report no remote changes.
fn file_system_without_events(kind: i64) -> Option<&'static str> {
    match kind {
        0x6969 => Some("NFS"),
        0xFF53_4D42 => Some("CIFS"),
        0xFE53_4D42 => Some("SMB2"),
        0x517B => Some("SMB"),
        0x0102_1997 => Some("9P"),
        _ => None,
    }
}

/// Turns debounced events into batches on `sender`.
fn handler(sender: mpsc::UnboundedSender<Batch>) -> impl FnMut(DebounceEventResult) + Send + 'static {
    move |result: DebounceEventResult| {
        let batch = match result {
            Ok(events) => {
                let mut batch = Batch::default();
                for event in events {
                    if event.need_rescan() && !batch.rescan {
                        tracing::warn!(
                            "the file watcher lost events (its queue overflowed); looking at every plugins folder again"
                        );
                        batch.rescan = true;
                    }
                    if changes_content(&event.kind) {
                        batch.paths.extend(event.event.paths.iter().cloned());
                    }
                }
                batch
            }
            Err(errors) => {
                for error in &errors {
                    tracing::warn!("file watcher: {error}; looking at every plugins folder again");
                }
                Batch {
                    rescan: true,
                    watch_limit: errors
                        .iter()
                        .any(|e| matches!(e.kind, notify::ErrorKind::MaxFilesWatch)),
                    ..Batch::default()
                }
            }
        };
        if !batch.paths.is_empty() || batch.rescan {
            let _ = sender.send(batch);
        }
    }
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
            ..Batch::default()
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
            ..Batch::default()
        };
        assert_eq!(plugin_changes(&roots, &batch).rescan, [1].into());
        let lost = Batch {
            rescan: true,
            ..Batch::default()
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
            ..Batch::default()
        };
        let changes = plugin_changes(&roots, &batch);
        assert_eq!(changes.rescan, [0, 1].into());
        assert!(changes.keys.is_empty(), "{:?}", changes.keys);
    }

    #[test]
    fn network_file_systems_are_polled_and_local_ones_watched() {
        assert_eq!(file_system_without_events(0x6969), Some("NFS"));
        assert_eq!(file_system_without_events(0xFF53_4D42), Some("CIFS"));
        // ext4, tmpfs, overlayfs: inotify hears every change.
        for local in [0xEF53, 0x0102_1994, 0x794C_7630] {
            assert_eq!(file_system_without_events(local), None);
        }
        assert_eq!(without_events(&std::env::temp_dir()), None);
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
