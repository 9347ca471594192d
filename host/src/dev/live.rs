//! `warden dev` for a Python or JavaScript project: every save is copied
//! (Python's sources, JavaScript's bundle) into a new private folder, which
//! the development component (`project::dev_build`) loads the project from
//! at each call, mounted read-only at `/0`. A save is staged as a new
//! manifest naming the new copy, after a trial load shows the copy lists its
//! tools: the reconciler then reloads the plugin with its compiled code
//! reused, and a save that breaks the plugin leaves the last good copy
//! serving. Only a Python save that imports a module the component was not
//! built with builds the component again.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, bail};

use crate::project::{self, Project};
use warden_plugins::discovery::PluginSource;
use warden_plugins::loader::Loader;
use warden_plugins::plugin::Plugin;

/// The copies of a project's sources, in a private folder removed on drop.
pub struct LiveSources {
    root: PathBuf,
    /// The number of the last copy made.
    made: u64,
    /// The copy the staged manifest names, and the one before it (calls
    /// that started before the reload may still read it).
    serving: Option<u64>,
    previous: Option<u64>,
    /// The last trial's plugin: its compiled code is reused by the next.
    last: Option<Arc<Plugin>>,
}

/// What staging a save did.
pub enum Staged {
    /// A new copy of the sources, served by the staged component.
    Sources,
    /// The component was built again (first save, or a new import).
    Component,
}

impl LiveSources {
    pub fn create(name: &str) -> Result<Self> {
        Ok(Self {
            root: super::private_folder(name, "-sources", "the folder for copies of the sources")?,
            made: 0,
            serving: None,
            previous: None,
            last: None,
        })
    }

    /// Copies the sources and stages them in `staging`: a new manifest
    /// when the staged component can serve them, else a new component too.
    pub async fn stage(&mut self, project: &Project, staging: &Path, loader: &Loader) -> Result<Staged> {
        self.made += 1;
        let made = self.made;
        let result = self.stage_copy(project, staging, loader, made).await;
        match &result {
            Ok(_) => {
                if let Some(old) = self.previous.take() {
                    self.remove(old);
                }
                self.previous = self.serving.replace(made);
            }
            Err(_) => self.remove(made),
        }
        result
    }

    async fn stage_copy(&mut self, project: &Project, staging: &Path, loader: &Loader, made: u64) -> Result<Staged> {
        let copy = self.root.join(made.to_string());
        project.dev_copy(&copy).await?;
        let manifest = self.root.join(format!("{made}.toml"));
        std::fs::write(&manifest, dev_manifest(project, &copy)?)
            .with_context(|| format!("writing {}", manifest.display()))?;
        let name = &project.name;
        let component = staging.join(format!("{name}.wasm"));
        let staged_manifest = staging.join(format!("{name}.toml"));
        // The staged component, else one an earlier `warden dev` built.
        let candidate = match self.serving {
            Some(_) => Some(component.clone()),
            None => project.dev_previous().await,
        };
        if let Some(candidate) = candidate {
            let trial = PluginSource {
                stem: name.clone(),
                component: candidate.clone(),
                manifest: Some(manifest.clone()),
                folder: None,
            };
            let reusable: Vec<Arc<Plugin>> = self.last.iter().cloned().collect();
            match loader.load(&trial, &reusable).await {
                Ok(plugin) => {
                    self.last = Some(Arc::new(plugin));
                    let prepared = project::prepare_install(&candidate, &component)?;
                    project::install(&manifest, &staged_manifest)?;
                    if let Some(prepared) = prepared {
                        prepared.commit()?;
                    }
                    return Ok(Staged::Sources);
                }
                Err(error) if self.serving.is_some() && !project.dev_needs_build(&error) => return Err(error),
                Err(_) => {}
            }
        }
        let built = project.dev_build(&copy).await?;
        self.last = None;
        // Both written first, then renamed into place back to back (the
        // manifest first), well within the watcher's debounce: one reload,
        // never the new manifest with the old component.
        let prepared = project::prepare_install(&built, &component)?;
        project::install(&manifest, &staged_manifest)?;
        if let Some(prepared) = prepared {
            prepared.commit()?;
        }
        Ok(Staged::Component)
    }

    fn remove(&self, made: u64) {
        let _ = std::fs::remove_dir_all(self.root.join(made.to_string()));
        let _ = std::fs::remove_file(self.root.join(format!("{made}.toml")));
    }
}

impl Drop for LiveSources {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// The project's `warden.toml` with one more mount: the copy of the
/// sources, read-only, where the development component imports them from.
fn dev_manifest(project: &Project, copy: &Path) -> Result<String> {
    let path = project.dir.join(project::MANIFEST);
    let mut table = match project::read_project_file(&path, "the manifest")? {
        Some(text) => text
            .parse::<toml::Table>()
            .with_context(|| format!("{} is not valid TOML", path.display()))?,
        None => toml::Table::new(),
    };
    let mounts = table
        .entry("filesystem")
        .or_insert_with(|| toml::Value::Table(toml::Table::new()))
        .as_table_mut()
        .with_context(|| format!("{}: `filesystem` is not a table", path.display()))?;
    let mount = project::SOURCES_MOUNT;
    if mounts
        .values()
        .any(|value| value.get("mount").and_then(toml::Value::as_str) == Some(mount))
    {
        bail!(
            "{}: [filesystem] mounts a folder at `{mount}`, where `warden dev` mounts the plugin's \
             sources; choose another mount point",
            path.display()
        );
    }
    let mut entry = toml::Table::new();
    entry.insert("mount".into(), mount.into());
    mounts.insert(copy.display().to_string(), toml::Value::Table(entry));
    Ok(toml::to_string(&table)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn python_project(manifest: Option<&str>) -> (tempfile::TempDir, Project) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("app.py"), "").unwrap();
        if let Some(manifest) = manifest {
            std::fs::write(dir.path().join(project::MANIFEST), manifest).unwrap();
        }
        let project = Project::open(dir.path()).unwrap();
        (dir, project)
    }

    #[test]
    fn the_manifest_gains_exactly_the_read_only_copy() {
        let copy = Path::new("/tmp/copies/3");
        let (_dir, bare) = python_project(None);
        let table: toml::Table = dev_manifest(&bare, copy).unwrap().parse().unwrap();
        assert_eq!(table["filesystem"]["/tmp/copies/3"]["mount"].as_str(), Some("/0"));
        assert_eq!(
            table["filesystem"]["/tmp/copies/3"].as_table().unwrap().len(),
            1,
            "read-only"
        );

        let granted = "[limits]\nmemory = \"64 MiB\"\n\n[filesystem]\n\"/srv/notes\" = { mount = \"/notes\" }\n";
        let (_dir, project) = python_project(Some(granted));
        let table: toml::Table = dev_manifest(&project, copy).unwrap().parse().unwrap();
        assert_eq!(table["limits"]["memory"].as_str(), Some("64 MiB"));
        assert_eq!(table["filesystem"]["/srv/notes"]["mount"].as_str(), Some("/notes"));
        assert_eq!(table["filesystem"].as_table().unwrap().len(), 2);
    }

    #[test]
    fn a_manifest_that_mounts_at_the_sources_place_is_refused() {
        let (_dir, project) = python_project(Some("[filesystem]\n\"/srv\" = { mount = \"/0\" }\n"));
        let error = dev_manifest(&project, Path::new("/tmp/copies/1"))
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("warden.toml: [filesystem] mounts a folder at `/0`"),
            "{error}"
        );
        assert!(
            error.contains("where `warden dev` mounts the plugin's sources"),
            "{error}"
        );
        assert!(error.contains("choose another mount point"), "{error}");
    }
}
