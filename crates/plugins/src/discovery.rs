//! What a plugins folder holds: `name.wasm` files (with an optional
//! `name.toml` beside each) and folder plugins `name/` (a `plugin.toml` and
//! one component), found without reading any of them.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::load_error::LoadError;

/// Where one plugin lives on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginSource {
    /// The name from the file stem or folder name (a manifest may override it).
    pub stem: String,
    pub component: PathBuf,
    pub manifest: Option<PathBuf>,
    /// A folder plugin's own folder (`None` for a bare `name.wasm`): the
    /// only place inside a plugins folder its mounts may be.
    pub folder: Option<PathBuf>,
}

/// What a plugin's files are on disk now: for the component, the manifest
/// and the origin record of a pulled component, the device, inode, size and
/// change times (`None` for a missing one). Equal stamps mean neither was written, replaced or renamed over
/// since; a load takes its stamp before reading, so a write during the load
/// makes the next stamp differ.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FilesStamp([Option<[i64; 7]>; 3]);

impl PluginSource {
    pub fn stamp(&self) -> FilesStamp {
        use std::os::unix::fs::MetadataExt;
        let of = |path: &Path| {
            std::fs::metadata(path).ok().map(|m| {
                [
                    m.dev() as i64,
                    m.ino() as i64,
                    m.size() as i64,
                    m.mtime(),
                    m.mtime_nsec(),
                    m.ctime(),
                    m.ctime_nsec(),
                ]
            })
        };
        FilesStamp([
            of(&self.component),
            self.manifest.as_deref().and_then(of),
            of(&warden_origin::OriginRecord::path_for(&self.component)),
        ])
    }
}

/// Lists the plugins in `dir`: `name.wasm` (with an optional `name.toml`
/// beside it) and folders `name/` holding `plugin.toml` and one component.
/// A manifest with no component beside it is logged and ignored.
pub fn discover(dir: &Path) -> Result<(Vec<PluginSource>, Vec<LoadError>)> {
    let found = discover_all(dir)?;
    for orphan in &found.orphans {
        tracing::warn!("{}: a manifest with no component beside it; ignored", orphan.display());
    }
    Ok((found.sources, found.errors))
}

/// What a plugins folder holds.
pub struct Discovered {
    pub sources: Vec<PluginSource>,
    pub errors: Vec<LoadError>,
    /// Manifests with no component beside them.
    pub orphans: Vec<PathBuf>,
}

/// Like `discover`, returning orphan manifests instead of logging them.
pub fn discover_all(dir: &Path) -> Result<Discovered> {
    let entries =
        std::fs::read_dir(dir).with_context(|| format!("cannot read the plugins folder {}", dir.display()))?;
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    let mut sources = Vec::new();
    let mut errors = Vec::new();
    let mut orphans = Vec::new();
    for path in paths {
        let Some(file_name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if file_name.starts_with('.') {
            continue;
        }
        if path.is_dir() {
            if path.join("plugin.toml").is_file() {
                match folder_component(&path) {
                    Ok(component) => sources.push(PluginSource {
                        stem: file_name.to_string(),
                        component,
                        manifest: Some(path.join("plugin.toml")),
                        folder: Some(path.clone()),
                    }),
                    Err(error) => errors.push(LoadError { path, error }),
                }
            }
            continue;
        }
        match path.extension().and_then(|e| e.to_str()) {
            Some("wasm") => {
                let stem = file_name.trim_end_matches(".wasm").to_string();
                let manifest = path.with_extension("toml");
                sources.push(PluginSource {
                    stem,
                    component: path.clone(),
                    // Anything by that name is its manifest: one that is not a
                    // regular file is refused, never ignored (it may lower limits).
                    manifest: manifest.exists().then_some(manifest),
                    folder: None,
                });
            }
            Some("toml") if !path.with_extension("wasm").exists() => orphans.push(path),
            _ => {}
        }
    }
    Ok(Discovered {
        sources,
        errors,
        orphans,
    })
}

fn folder_component(dir: &Path) -> Result<PathBuf> {
    let preferred = dir.join("plugin.wasm");
    if preferred.is_file() {
        return Ok(preferred);
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "wasm"))
        .collect();
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => bail!("folder plugin has plugin.toml but no .wasm component"),
        _ => bail!("folder plugin has several .wasm files; name the one to load `plugin.wasm`"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discovers_bare_components_manifests_and_folders() {
        let dir = std::env::temp_dir().join(format!("warden-discover-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("folder")).unwrap();
        std::fs::create_dir_all(dir.join("not-a-plugin")).unwrap();
        for file in ["b.wasm", "a.wasm", "a.toml", "orphan.toml", ".hidden.wasm", "notes.txt"] {
            std::fs::write(dir.join(file), b"").unwrap();
        }
        std::fs::write(dir.join("folder/plugin.toml"), b"").unwrap();
        std::fs::write(dir.join("folder/thing.wasm"), b"").unwrap();
        let (sources, errors) = discover(&dir).unwrap();
        assert!(errors.is_empty());
        let summary: Vec<_> = sources
            .iter()
            .map(|s| (s.stem.as_str(), s.manifest.is_some()))
            .collect();
        assert_eq!(summary, [("a", true), ("b", false), ("folder", true)]);
        assert_eq!(sources[2].component, dir.join("folder/thing.wasm"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
