//! The development build of a Python project (`warden dev`): a component
//! built once from a loader (`python_dev_loader.py`) that imports the
//! project's modules at every call from a read-only copy of its sources,
//! mounted at `/0`. A save then needs a new copy, not a new component:
//! componentize-py and the compile of the 18 MB interpreter stay out of the
//! loop. `warden build` still snapshots everything into the component.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use std::hash::{DefaultHasher, Hash, Hasher};

use super::{Project, python};

/// Where the loader finds the project's sources: componentize-py puts the
/// first `-p` folder there while building, and `warden dev` mounts the copy
/// there when serving, so modules keep the paths they were built with.
pub const SOURCES_MOUNT: &str = "/0";

const LOADER: &str = include_str!("python_dev_loader.py");
const LOADER_MODULE: &str = "warden_dev_loader";

/// Where the development component is built: the project's `build/dev/`.
fn output(project: &Project) -> PathBuf {
    project.output_dir().join("dev")
}

fn component_path(project: &Project) -> PathBuf {
    output(project).join(format!("{}.wasm", project.name))
}

/// What the development component is built from besides the sources: the
/// loader for the project's module, componentize-py's version and the SDK's
/// files. Recorded beside the component, so a later `warden dev` reuses it.
async fn inputs(project: &Project) -> Result<(String, PathBuf, String)> {
    let module = python::module(&project.dir)?;
    let sdk = python::sdk_path(&project.dir).await?;
    // A local record, compared only with itself: std's hasher will do.
    let mut hasher = DefaultHasher::new();
    python::COMPONENTIZE_PY.hash(&mut hasher);
    LOADER.replace("__WARDEN_MODULE__", &module).hash(&mut hasher);
    let mut files = Vec::new();
    collect_files(&sdk.join("warden_plugin"), &mut files);
    files.sort();
    for file in files {
        file.hash(&mut hasher);
        std::fs::read(&file).ok().hash(&mut hasher);
    }
    Ok((module, sdk, format!("{:016x}", hasher.finish())))
}

fn collect_files(dir: &Path, files: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            if path.file_name().is_some_and(|name| name != "__pycache__") {
                collect_files(&path, files);
            }
        } else {
            files.push(path);
        }
    }
}

/// The development component an earlier `warden dev` built, when it was
/// built from the same loader, componentize-py and SDK (whether it has
/// every module the sources import now, a trial load tells).
pub async fn previous(project: &Project) -> Option<PathBuf> {
    let component = component_path(project);
    let recorded = std::fs::read_to_string(component.with_extension("inputs")).ok()?;
    let (_, _, now) = inputs(project).await.ok()?;
    (recorded == now && component.is_file()).then_some(component)
}

/// Builds the loader component from `sources` (a copy of the project's
/// sources); returns its path, under the project's `build/dev/`.
pub async fn build(project: &Project, sources: &Path) -> Result<PathBuf> {
    let (module, sdk, digest) = inputs(project).await?;
    let componentize = python::componentize_py(&project.dir).await?;
    let output = output(project);
    let loader_dir = output.join("loader");
    std::fs::create_dir_all(&loader_dir).with_context(|| format!("creating {}", loader_dir.display()))?;
    let loader = loader_dir.join(format!("{LOADER_MODULE}.py"));
    std::fs::write(&loader, LOADER.replace("__WARDEN_MODULE__", &module))
        .with_context(|| format!("writing {}", loader.display()))?;
    let component = component_path(project);
    let record = component.with_extension("inputs");
    let _ = std::fs::remove_file(&record);
    let mut command = tokio::process::Command::new(&componentize);
    command
        .current_dir(sources)
        .arg("-d")
        .arg(sdk.join("warden_plugin").join("wit"))
        .args(["-w", "warden:plugin/plugin", "componentize", LOADER_MODULE, "-p"])
        .arg(sources)
        .arg("-p")
        .arg(&sdk)
        .arg("-p")
        .arg(&loader_dir)
        .arg("-o")
        .arg(&component);
    super::run_tool(command, "componentize-py").await?;
    std::fs::write(&record, digest).with_context(|| format!("writing {}", record.display()))?;
    Ok(component)
}

/// Whether a load of the development component failed because the
/// project now imports a module the component was not built with (only
/// what building imported is in it): then it is built again.
pub fn needs_rebuild(error: &anyhow::Error) -> bool {
    format!("{error:#}").contains("ModuleNotFoundError")
}
