//! The reconciler: the one task that owns the set of loaded plugins.
//!
//! It loads the plugins folders at start, then applies batches of changes
//! from the watcher, one batch at a time, so a plugin is never loaded and
//! unloaded at once. For each changed plugin it loads the new version; when
//! that fails (a file still being written, a broken component or manifest)
//! the previous version keeps serving and the reason is logged once. Then it
//! builds a new catalog, swaps it in (calls in flight keep the snapshot they
//! started with) and publishes the swap; it never waits for a client (the
//! MCP layer delivers notifications in tasks of its own).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::Result;
use tokio::sync::{Notify, mpsc};

use crate::catalog::{Catalog, CatalogHandle};
pub use crate::load_summary::Summary;
use crate::loader::{self, Discovered, LoadError, Loader, PluginSource};
use crate::plugin::Plugin;
use crate::root_folder::{FOLLOW_EVERY, Followed, RootFolder};
use crate::watcher::{Batch, PluginChanges, PluginKey, Watcher, plugin_changes};
use notify::RecursiveMode;
use warden_runtime::Tier;
use warden_runtime::cache::CodeOrigin;
use warden_runtime::metrics::{self, LoadEvent};

pub struct Reconciler {
    /// The plugins folders as resolved now, as the watcher reports paths in them.
    roots: Vec<PathBuf>,
    /// The same folders as the operator named them, followed (`root_folder`).
    folders: Vec<RootFolder>,
    loader: Arc<Loader>,
    catalog: CatalogHandle,
    loaded: BTreeMap<PluginKey, Arc<Plugin>>,
    /// The last failure logged for each plugin, so each is logged once.
    failures: HashMap<PluginKey, String>,
    /// Plugins the last catalog refused (name or tool clashes), logged once.
    refused: BTreeSet<String>,
    /// Manifests without a component, logged once each.
    orphans: BTreeSet<PathBuf>,
    /// Asks `run` to look at every folder again (SIGHUP).
    rescan: Arc<Notify>,
    /// The next pass loads every plugin it looks at again, changed or not
    /// (SIGHUP: mounts are opened anew, secrets read again).
    force: bool,
    /// Plugins were unloaded outside `apply` (refused by a new trust
    /// policy): its next pass swaps in a catalog even if it loads nothing.
    dirty: bool,
    /// Rings when a large component's optimised code is ready (`tiering`).
    tier_up: Arc<Notify>,
    /// Plugins on baseline code whose optimised code is ready: the next pass
    /// loads them again, unchanged as they are.
    upgrade: BTreeSet<PluginKey>,
}

/// What the plugins folders hold, by plugin.
#[derive(Default)]
struct Scan {
    present: BTreeMap<PluginKey, PluginSource>,
    /// Plugins that cannot even be found whole (a folder plugin without a
    /// component, two files claiming one name).
    broken: BTreeMap<PluginKey, LoadError>,
    /// Folders that could not be read this time.
    unreadable: BTreeSet<usize>,
}

impl Reconciler {
    /// `named` are the plugins folders as the operator named them.
    pub fn new(named: &[PathBuf], loader: Arc<Loader>, catalog: CatalogHandle) -> Self {
        let folders: Vec<RootFolder> = named.iter().map(|n| RootFolder::new(n)).collect();
        let tier_up = loader.enable_tiering();
        Self {
            roots: folders.iter().map(|f| f.resolved().to_path_buf()).collect(),
            folders,
            loader,
            catalog,
            loaded: BTreeMap::new(),
            failures: HashMap::new(),
            refused: BTreeSet::new(),
            orphans: BTreeSet::new(),
            rescan: Arc::default(),
            dirty: false,
            force: false,
            tier_up,
            upgrade: BTreeSet::new(),
        }
    }

    /// What asks the running reconciler to look at every folder again, as
    /// if each had been replaced (`notify_one`; SIGHUP does).
    pub fn rescan_handle(&self) -> Arc<Notify> {
        self.rescan.clone()
    }

    /// The plugins folders as resolved now.
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// What to watch: each folder, recursively, and the folder holding its
    /// name, not recursively (where a removal or a symlink swap shows).
    pub fn watch_targets(&self) -> Vec<(PathBuf, RecursiveMode)> {
        let mut targets: Vec<(PathBuf, RecursiveMode)> = self
            .roots
            .iter()
            .map(|r| (r.clone(), RecursiveMode::Recursive))
            .collect();
        for parent in self.folders.iter().filter_map(RootFolder::parent) {
            if !targets.iter().any(|(t, _)| *t == parent) {
                targets.push((parent, RecursiveMode::NonRecursive));
            }
        }
        targets
    }

    /// Loads every plugin of every folder, in parallel (at start). A folder
    /// that cannot be read is an error.
    pub async fn load_all(&mut self) -> Result<Summary> {
        for root in &self.roots {
            std::fs::read_dir(root)
                .map_err(|e| anyhow::anyhow!("cannot read the plugins folder {}: {e}", root.display()))?;
        }
        let changes = PluginChanges {
            keys: BTreeSet::new(),
            rescan: (0..self.roots.len()).collect(),
        };
        Ok(self.apply(&changes).await)
    }

    /// Applies the watcher's batches until it stops, following each folder's
    /// name on every batch and every `FOLLOW_EVERY`.
    pub async fn run(mut self, mut watcher: Watcher, mut batches: mpsc::UnboundedReceiver<Batch>) {
        let mut every = tokio::time::interval(FOLLOW_EVERY);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        // Once the watch limit is reached, folders are polled for good.
        let mut polling = false;
        loop {
            let mut renewed = BTreeSet::new();
            let mut asked = false;
            let mut optimised = false;
            let mut limit = false;
            let mut changes = tokio::select! {
                batch = batches.recv() => {
                    let Some(batch) = batch else { return };
                    let mut changes = PluginChanges::default();
                    // Whatever queued up meanwhile is handled in the same pass.
                    let mut next = Some(batch);
                    while let Some(batch) = next {
                        let more = plugin_changes(&self.roots, &batch);
                        changes.keys.extend(more.keys);
                        changes.rescan.extend(more.rescan);
                        limit |= batch.watch_limit;
                        renewed.extend(self.roots.iter().enumerate().filter(|(_, r)| batch.paths.contains(*r)).map(|(i, _)| i));
                        next = batches.try_recv().ok();
                    }
                    changes
                }
                _ = every.tick() => PluginChanges::default(),
                () = self.rescan.notified() => {
                    asked = true;
                    PluginChanges::default()
                }
                () = self.tier_up.notified() => {
                    optimised = true;
                    PluginChanges::default()
                }
            };
            if asked {
                renewed.extend(0..self.roots.len());
                changes = self.requested();
            }
            if optimised {
                changes.keys.extend(self.optimised());
            }
            if limit && !polling {
                polling = true;
                for root in &self.roots {
                    if let Err(error) = watcher.poll(root, RecursiveMode::Recursive, "the watch limit was reached") {
                        tracing::warn!("{error:#}; changes in it may go unnoticed until SIGHUP");
                    }
                }
            }
            changes.rescan.extend(self.follow(Some(&mut watcher), &renewed));
            if !changes.keys.is_empty() || !changes.rescan.is_empty() {
                self.apply(&changes).await;
            }
        }
    }

    /// Without a watcher (`--no-watch`): looks at every folder again each
    /// time it is asked to (SIGHUP), and at no other time.
    pub async fn run_unwatched(mut self) {
        loop {
            let asked = tokio::select! {
                () = self.rescan.notified() => true,
                () = self.tier_up.notified() => false,
            };
            let changes = match asked {
                true => self.requested(),
                false => PluginChanges {
                    keys: self.optimised(),
                    ..PluginChanges::default()
                },
            };
            // Follows each folder's name first: a swapped symlink counts too.
            self.follow(None, &changes.rescan);
            self.apply(&changes).await;
        }
    }

    /// The plugins on baseline code whose optimised code is ready; the next
    /// pass loads them again onto it.
    fn optimised(&mut self) -> BTreeSet<PluginKey> {
        let runtime = self.loader.runtime();
        let ready: BTreeSet<PluginKey> = self
            .loaded
            .iter()
            .filter(|(_, p)| runtime.tier_of(&p.component) == Tier::Baseline)
            .filter(|(_, p)| self.loader.optimised(&(p.sha256.clone(), p.metered())).is_some())
            .map(|(key, _)| key.clone())
            .collect();
        self.upgrade.extend(ready.iter().cloned());
        self.drop_unwanted_optimised(); // a version replaced while it compiled
        ready
    }

    /// Drops background-compiled code no plugin on baseline code waits for.
    fn drop_unwanted_optimised(&self) {
        let runtime = self.loader.runtime();
        self.loader.retain_optimised(|(sha256, metered)| {
            self.loaded.values().any(|p| {
                p.sha256 == *sha256 && p.metered() == *metered && runtime.tier_of(&p.component) == Tier::Baseline
            })
        });
    }

    /// What a rescan on request (SIGHUP) looks at: every folder, whole, as
    /// a safety net for events that were lost; and first, when the trust
    /// policy was replaced, the loaded plugins, unloading those it refuses.
    fn requested(&mut self) -> PluginChanges {
        tracing::info!("looking at every plugins folder again, as asked");
        if self.loader.take_trust_changed() {
            let trust = self.loader.trust();
            let refused: Vec<PluginKey> = self
                .loaded
                .iter()
                .filter_map(|(key, plugin)| {
                    let error = trust
                        .check(&plugin.name, &plugin.component_path, &plugin.sha256)
                        .err()?;
                    tracing::warn!(
                        "unloaded plugin `{}`: the trust policy now in force refuses it: {error:#}",
                        plugin.name
                    );
                    Some(key.clone())
                })
                .collect();
            for key in refused {
                self.loaded.remove(&key);
                plugin_event(LoadEvent::Unloaded);
                self.dirty = true;
            }
        }
        self.force = true;
        PluginChanges {
            rescan: (0..self.roots.len()).collect(),
            ..PluginChanges::default()
        }
    }

    /// Resolves each folder's name again (`renewed`: folders an event says
    /// were created or removed themselves); returns the folders to look at
    /// whole (now another folder, or back).
    fn follow(&mut self, mut watcher: Option<&mut Watcher>, renewed: &BTreeSet<usize>) -> BTreeSet<usize> {
        let mut rescan = BTreeSet::new();
        for (index, folder) in self.folders.iter_mut().enumerate() {
            match folder.follow(renewed.contains(&index)) {
                Followed::Same | Followed::StillGone => {}
                Followed::Gone(why) => {
                    let kept = self.loaded.keys().filter(|k| k.root == index).count();
                    tracing::warn!(
                        "the plugins folder {} is gone ({why}); keeping the {kept} plugin(s) loaded from it \
                         until a folder is there again",
                        folder.named().display()
                    );
                }
                Followed::Moved { before, now } => {
                    if let Some(watcher) = watcher.as_deref_mut() {
                        watcher.remove(&before);
                        if let Err(error) = watcher.add(&now, RecursiveMode::Recursive) {
                            tracing::warn!("{error:#}; changes in it are found once a second only");
                        }
                    }
                    self.loader.protect_plugins_folder(&now);
                    if before == now {
                        tracing::info!(
                            "the plugins folder {} is another folder now; loading what it holds",
                            folder.named().display()
                        );
                    } else {
                        tracing::info!(
                            "the plugins folder {} is {} now (was {}); loading what it holds",
                            folder.named().display(),
                            now.display(),
                            before.display()
                        );
                    }
                    self.roots[index] = now;
                    rescan.insert(index);
                }
            }
        }
        rescan
    }

    /// Reloads what `changes` names, then swaps in and publishes a new
    /// catalog.
    pub async fn apply(&mut self, changes: &PluginChanges) -> Summary {
        let started = Instant::now();
        let mut summary = Summary::default();
        let Scan {
            mut present,
            mut broken,
            unreadable,
        } = self.scan();

        // Which plugins to (re)load and which to unload.
        let mut wanted: BTreeSet<PluginKey> = changes
            .keys
            .iter()
            .filter(|k| !unreadable.contains(&k.root))
            .cloned()
            .collect();
        for root in &changes.rescan {
            if unreadable.contains(root) {
                continue;
            }
            wanted.extend(self.loaded.keys().filter(|k| k.root == *root).cloned());
            wanted.extend(present.keys().filter(|k| k.root == *root).cloned());
            wanted.extend(broken.keys().filter(|k| k.root == *root).cloned());
        }
        // A plugin that appeared without an event of its own (say, while the
        // folder was being replaced) is loaded too.
        wanted.extend(
            present
                .keys()
                .filter(|k| !self.loaded.contains_key(k) && !self.failures.contains_key(k))
                .cloned(),
        );

        // Taken before unloading, so a renamed plugin keeps its compiled code.
        let reusable: Vec<Arc<Plugin>> = self.loaded.values().cloned().collect();
        let force = std::mem::take(&mut self.force);
        let upgrade = std::mem::take(&mut self.upgrade);
        let mut to_load = Vec::new();
        for key in &wanted {
            if let Some(source) = present.remove(key) {
                // A folder plugin is loaded again at any change in its folder:
                // what it declares may depend on the files it keeps there.
                let unchanged =
                    source.folder.is_none() && self.loaded.get(key).is_some_and(|p| p.files == source.stamp());
                if !force && unchanged && !upgrade.contains(key) {
                    continue;
                }
                to_load.push((key.clone(), source));
            } else if let Some(error) = broken.remove(key) {
                self.failed(key, &error.path, &error.error);
                summary.failed += 1;
                plugin_event(LoadEvent::Failed);
            } else {
                self.failures.remove(key);
                if let Some(plugin) = self.loaded.remove(key) {
                    tracing::info!(
                        "unloaded plugin `{}` ({} is gone)",
                        plugin.name,
                        plugin.component_path.display()
                    );
                    summary.unloaded += 1;
                    plugin_event(LoadEvent::Unloaded);
                }
            }
        }

        let mut changed = summary.unloaded > 0 || std::mem::take(&mut self.dirty);
        // "loaded" and "reloaded" are logged once the new catalog serves the
        // plugin: someone who reads the line and calls gets the new version.
        let mut served = Vec::new();
        if !to_load.is_empty() {
            let (keys, sources): (Vec<PluginKey>, Vec<PluginSource>) = to_load.into_iter().unzip();
            let by_component: HashMap<PathBuf, PluginKey> = sources
                .iter()
                .map(|s| s.component.clone())
                .zip(keys.iter().cloned())
                .collect();
            match self.loader.load_all(sources, &reusable).await {
                Ok((loaded, failed)) => {
                    for (source, plugin) in loaded {
                        let key = by_component[&source.component].clone();
                        summary.loaded += 1;
                        summary.count(plugin.code);
                        let (verb, event) = if self.loaded.contains_key(&key) {
                            ("reloaded", LoadEvent::Reloaded)
                        } else {
                            ("loaded", LoadEvent::Loaded)
                        };
                        plugin_event(event);
                        let line = match plugin.code {
                            // Not a reload of its files: a swap of its code.
                            CodeOrigin::Compiled if upgrade.contains(&key) => format!(
                                "plugin `{}` runs on optimised code now, compiled in the background ({} tools)",
                                plugin.name,
                                plugin.tools.len()
                            ),
                            origin => format!(
                                "{verb} plugin `{}` from {} (code: {}; {} tools)",
                                plugin.name,
                                source.component.display(),
                                match origin {
                                    CodeOrigin::Baseline => "baseline, optimised code follows",
                                    origin => origin.as_str(),
                                },
                                plugin.tools.len()
                            ),
                        };
                        served.push(line);
                        self.failures.remove(&key);
                        self.loaded.insert(key, Arc::new(plugin));
                        changed = true;
                    }
                    for (source, error) in failed {
                        let key = by_component[&source.component].clone();
                        self.failed(&key, &source.component, &error);
                        summary.failed += 1;
                        plugin_event(LoadEvent::Failed);
                    }
                }
                Err(error) => tracing::error!("{error:#}"),
            }
        }
        self.drop_unwanted_optimised();
        if !changed {
            return summary;
        }

        let (catalog, refused) = Catalog::build(self.loaded.values().cloned().collect());
        let refused: BTreeSet<String> = refused.iter().map(|e| format!("skipped plugin {e}")).collect();
        for message in refused.difference(&self.refused) {
            tracing::warn!("{message}");
        }
        self.refused = refused;
        let (plugins, tools) = (catalog.plugins().len(), catalog.tools().len());
        let visible = self.catalog.replace(Arc::new(catalog)).lists;
        tracing::debug!(
            plugins,
            tools,
            loaded = summary.loaded,
            unloaded = summary.unloaded,
            failed = summary.failed,
            tools_changed = visible.tools,
            resources_changed = visible.resources,
            prompts_changed = visible.prompts,
            elapsed_ms = started.elapsed().as_millis() as u64,
            "catalog swapped"
        );
        for line in served {
            tracing::info!("{line}");
        }
        return_freed_memory();
        summary
    }

    /// Lists what every plugins folder holds now.
    fn scan(&mut self) -> Scan {
        let mut scan = Scan::default();
        for (root, dir) in self.roots.iter().enumerate() {
            match loader::discover_all(dir) {
                Ok(Discovered {
                    sources,
                    errors,
                    orphans,
                }) => {
                    for orphan in orphans {
                        if self.orphans.insert(orphan.clone()) {
                            tracing::warn!("{}: a manifest with no component beside it; ignored", orphan.display());
                        }
                    }
                    for source in sources {
                        let key = key_of(root, dir, &source.component);
                        if let Some(other) = scan.present.get(&key) {
                            scan.broken.insert(
                                key,
                                LoadError {
                                    path: source.component.clone(),
                                    error: anyhow::anyhow!(
                                        "both {} and {} claim the plugin `{}`; remove one",
                                        other.component.display(),
                                        source.component.display(),
                                        key_stem(&source.component, dir)
                                    ),
                                },
                            );
                        } else {
                            scan.present.insert(key, source);
                        }
                    }
                    for error in errors {
                        scan.broken.insert(key_of(root, dir, &error.path), error);
                    }
                }
                Err(error) => {
                    // Keep serving what is loaded: this may be fleeting.
                    tracing::warn!("{error:#}; keeping the plugins loaded from it");
                    scan.unreadable.insert(root);
                }
            }
        }
        scan
    }

    /// Logs a plugin that failed to load, once per distinct reason.
    fn failed(&mut self, key: &PluginKey, path: &Path, error: &anyhow::Error) {
        let reason = LoadError {
            path: path.to_path_buf(),
            error: anyhow::anyhow!("{error:#}"),
        }
        .to_string();
        if self.failures.get(key) == Some(&reason) {
            return;
        }
        match self.loaded.get(key) {
            Some(previous) => tracing::warn!(
                "cannot reload plugin `{}`: {reason}; the previous version keeps serving",
                previous.name
            ),
            None => tracing::warn!("skipped plugin {reason}"),
        }
        self.failures.insert(key.clone(), reason);
    }
}

/// The key of a source or error path found by discovering `dir`.
fn key_of(root: usize, dir: &Path, path: &Path) -> PluginKey {
    PluginKey {
        root,
        stem: key_stem(path, dir),
    }
}

/// `notes` for `dir/notes.wasm`, and for anything inside `dir/notes/`.
fn key_stem(path: &Path, dir: &Path) -> String {
    let first = path
        .strip_prefix(dir)
        .ok()
        .and_then(|relative| relative.components().next())
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .unwrap_or_default();
    let inside_folder = path.parent() != Some(dir);
    match first.strip_suffix(".wasm") {
        Some(stem) if !inside_folder => stem.to_string(),
        _ => first,
    }
}

fn plugin_event(event: LoadEvent) {
    if let Some(metrics) = metrics::get() {
        metrics.plugin_event(event);
    }
}

/// Loading takes far more memory than a loaded plugin keeps (compiling most
/// of all; reading, checking and asking each plugin for its declarations,
/// for all the plugins of a batch at once), and glibc's allocator holds on
/// to what was freed unless asked to give it back. Measured idle after
/// loading 20 small plugins: ≈ 86 MiB resident after a cold start without
/// this, against ≈ 31 MiB after a warm one; with 1 000 plugins on a warm
/// cache, 50–90 MiB (as the loads happened to interleave) against 41 MiB.
fn return_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory back to the kernel.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_of_bare_and_folder_plugins() {
        let dir = Path::new("/p");
        assert_eq!(key_stem(Path::new("/p/notes.wasm"), dir), "notes");
        assert_eq!(key_stem(Path::new("/p/notes/plugin.wasm"), dir), "notes");
        assert_eq!(key_stem(Path::new("/p/x.wasm/plugin.wasm"), dir), "x.wasm");
    }
}
