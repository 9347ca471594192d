//! `warden dev` for a Python project: every save is copied into a new
//! private folder, which the development component (`project::python_dev`)
//! imports the project from at each call, mounted read-only at `/0`. A save
//! is staged as a new manifest naming the new copy, after a trial load
//! shows the copy lists its tools: the reconciler then reloads the plugin
//! with its compiled code reused, and a save that breaks the plugin leaves
//! the last good copy serving. Only a save that imports a module the
//! component was not built with builds the component again.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, bail};

use crate::project::{self, Project, python_dev};
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
        let root = std::env::temp_dir().join(format!("warden-dev-{}-{name}-sources", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let mut builder = std::fs::DirBuilder::new();
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder
            .create(&root)
            .with_context(|| format!("cannot create the folder for copies of the sources {}", root.display()))?;
        Ok(Self {
            root: warden_plugins::watcher::canonical(&root),
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
        project.copy_sources(&copy)?;
        let manifest = self.root.join(format!("{made}.toml"));
        std::fs::write(&manifest, dev_manifest(project, &copy)?)
            .with_context(|| format!("writing {}", manifest.display()))?;
        let name = &project.name;
        let component = staging.join(format!("{name}.wasm"));
        let staged_manifest = staging.join(format!("{name}.toml"));
        // The staged component, else one an earlier `warden dev` built.
        let candidate = match self.serving {
            Some(_) => Some(component.clone()),
            None => python_dev::previous(project).await,
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
                Err(error) if self.serving.is_some() && !python_dev::needs_rebuild(&error) => return Err(error),
                Err(_) => {}
            }
        }
        let built = python_dev::build(project, &copy).await?;
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
    let mut table = match std::fs::read_to_string(&path) {
        Ok(text) => text
            .parse::<toml::Table>()
            .with_context(|| format!("{} is not valid TOML", path.display()))?,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => toml::Table::new(),
        Err(error) => return Err(error).with_context(|| format!("reading {}", path.display())),
    };
    let mounts = table
        .entry("filesystem")
        .or_insert_with(|| toml::Value::Table(toml::Table::new()))
        .as_table_mut()
        .with_context(|| format!("{}: `filesystem` is not a table", path.display()))?;
    let mount = python_dev::SOURCES_MOUNT;
    if mounts
        .values()
        .any(|value| value.get("mount").and_then(toml::Value::as_str) == Some(mount))
    {
        bail!(
            "{}: [filesystem] mounts a folder at `{mount}`, where `warden dev` mounts a Python plugin's \
             sources; choose another mount point",
            path.display()
        );
    }
    let mut entry = toml::Table::new();
    entry.insert("mount".into(), mount.into());
    mounts.insert(copy.display().to_string(), toml::Value::Table(entry));
    Ok(toml::to_string(&table)?)
}
