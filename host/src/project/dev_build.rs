//! The development build of a Python or JavaScript project (`warden dev`):
//! a component built once from a loader that, at every call, loads the
//! project from a read-only copy mounted at `/0` — for Python a copy of its
//! sources (`python_dev`), for JavaScript its bundle (`js_dev`). A save then
//! needs a new copy, not a new component: componentize-py/-js and the
//! compile of the 12–18 MB interpreter stay out of the loop. `warden build`
//! still puts everything into the component.
//!
//! The component is built under the project's `build/dev/`, with a record
//! of what it was built from besides the project (the loader, the SDK, the
//! toolchain's version), so a later `warden dev` reuses it.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::{Language, Project, js_dev, python_dev};
use warden_runtime::bounded_file;

/// The record of what the development component was built from: one
/// digest, in hex.
const MAX_INPUTS_BYTES: u64 = 64;
/// A file of the SDK's past which its contents no longer count (its path
/// still does).
const MAX_SDK_FILE_BYTES: u64 = 64 << 20;

/// Where the loader finds the project: the first `-p` folder componentize-py
/// builds with is there too, so Python modules keep the paths they were
/// built with.
pub const SOURCES_MOUNT: &str = "/0";

impl Project {
    /// Whether `warden dev` serves this project through a development build
    /// (else it runs the production build at every save).
    pub fn has_dev_build(&self) -> bool {
        match self.language {
            Language::Python => true,
            Language::Js => js_dev::sdk_has_loader(self),
            Language::Rust => false,
        }
    }

    /// Writes what the loader reads into `to` (a new, empty folder).
    pub async fn dev_copy(&self, to: &Path) -> Result<()> {
        match self.language {
            Language::Python => self.copy_sources(to),
            _ => js_dev::bundle(self, to).await,
        }
    }

    /// The development component a previous `warden dev` built, when it was
    /// built from what this one would build it from (whether it can serve
    /// the project as it is now, a trial load tells).
    pub async fn dev_previous(&self) -> Option<PathBuf> {
        let component = self.dev_component();
        let recorded = bounded_file::read(&component.with_extension("inputs"), MAX_INPUTS_BYTES).ok()?;
        (recorded == self.dev_inputs().await.ok()?.as_bytes() && component.is_file()).then_some(component)
    }

    /// Builds the development component (Python's from the copy `copy`,
    /// whose modules it imports while building); returns its path.
    pub async fn dev_build(&self, copy: &Path) -> Result<PathBuf> {
        let inputs = self.dev_inputs().await?;
        let component = self.dev_component();
        let record = component.with_extension("inputs");
        let _ = std::fs::remove_file(&record);
        let folder = component.parent().expect("under build/dev");
        std::fs::create_dir_all(folder).with_context(|| format!("creating {}", folder.display()))?;
        match self.language {
            Language::Python => python_dev::build(self, copy, &component).await?,
            _ => js_dev::build(self, &component).await?,
        }
        std::fs::write(&record, inputs).with_context(|| format!("writing {}", record.display()))?;
        Ok(component)
    }

    /// Whether a failed trial load of the staged development component
    /// calls for building it again: Python's holds only the modules that
    /// building it imported, so a save that imports another needs one.
    pub fn dev_needs_build(&self, error: &anyhow::Error) -> bool {
        self.language == Language::Python && format!("{error:#}").contains("ModuleNotFoundError")
    }

    fn dev_component(&self) -> PathBuf {
        self.output_dir().join("dev").join(format!("{}.wasm", self.name))
    }

    /// A digest of what the development component is built from besides
    /// the project. A local record compared only with itself: std's hasher
    /// will do.
    async fn dev_inputs(&self) -> Result<String> {
        let mut hasher = DefaultHasher::new();
        let sdk = match self.language {
            Language::Python => python_dev::inputs(self, &mut hasher).await?,
            _ => js_dev::inputs(self, &mut hasher).await?,
        };
        let mut files = Vec::new();
        collect_files(&sdk, &mut files);
        files.sort();
        for file in files {
            file.hash(&mut hasher);
            bounded_file::read(&file, MAX_SDK_FILE_BYTES).ok().hash(&mut hasher);
        }
        Ok(format!("{:016x}", hasher.finish()))
    }
}

/// Every file under `dir`, but caches and dependencies.
fn collect_files(dir: &Path, files: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            if path
                .file_name()
                .is_some_and(|name| name != "__pycache__" && name != "node_modules")
            {
                collect_files(&path, files);
            }
        } else {
            files.push(path);
        }
    }
}
