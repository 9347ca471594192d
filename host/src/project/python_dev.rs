//! Python's development build (see `dev_build`): componentize-py builds the
//! component once from a loader (`python_dev_loader.py`) that imports the
//! project's modules at every call from the copy of its sources at `/0`.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::{Project, python};

const LOADER: &str = include_str!("python_dev_loader.py");
const LOADER_MODULE: &str = "warden_dev_loader";

/// The loader for the project's module.
fn loader(project: &Project) -> Result<String> {
    Ok(LOADER.replace("__WARDEN_MODULE__", &python::module(&project.dir)?))
}

/// Hashes the loader and componentize-py's version; returns the SDK's
/// folder, whose files count too.
pub async fn inputs(project: &Project, hasher: &mut impl Hasher) -> Result<PathBuf> {
    python::COMPONENTIZE_PY.hash(hasher);
    loader(project)?.hash(hasher);
    Ok(python::sdk_path(&project.dir).await?.join("warden_plugin"))
}

/// Builds the loader component from `sources` (a copy of the project's
/// sources, which it imports while building) into `component`.
pub async fn build(project: &Project, sources: &Path, component: &Path) -> Result<()> {
    let componentize = python::componentize_py(&project.dir).await?;
    let sdk = python::sdk_path(&project.dir).await?;
    let loader_dir = component.with_file_name("loader");
    std::fs::create_dir_all(&loader_dir).with_context(|| format!("creating {}", loader_dir.display()))?;
    let loader_file = loader_dir.join(format!("{LOADER_MODULE}.py"));
    std::fs::write(&loader_file, loader(project)?).with_context(|| format!("writing {}", loader_file.display()))?;
    let mut command = tokio::process::Command::new(&componentize);
    // The copy first: componentize-py puts it at `/0`, where it is mounted.
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
        .arg(component);
    super::run_tool(command, "componentize-py").await
}
