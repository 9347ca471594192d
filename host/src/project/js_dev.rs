//! JavaScript's development build (see `dev_build`): the SDK's
//! `warden-plugin dev-loader` builds, once, a component holding the SDK and
//! a loader that runs the author's bundle from `/0` at every call; each save
//! is bundled by `warden-plugin dev-bundle` (esbuild, a fraction of a second).

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use anyhow::Result;

use super::{Project, js};
use warden_runtime::bounded_file;

/// The bundle's name in the copy, where the loader (`sdk/js/dev/loader.js`) reads it.
const BUNDLE: &str = "plugin.bundle.js";

fn sdk(project: &Project) -> PathBuf {
    project.dir.join("node_modules").join("warden-plugin")
}

/// Whether the project's SDK has the development loader (0.3.0 from this
/// repository on; an older copy is built with `warden build` at every save).
pub fn sdk_has_loader(project: &Project) -> bool {
    sdk(project).join("dev").join("loader.js").is_file()
}

/// Hashes the versions of esbuild and componentize-js; returns the SDK's
/// folder, whose files count too.
pub async fn inputs(project: &Project, hasher: &mut impl Hasher) -> Result<PathBuf> {
    let modules = js::toolchain(project).await?;
    for package in ["esbuild", "@bytecodealliance/componentize-js"] {
        bounded_file::read(
            &modules.join(package).join("package.json"),
            super::MAX_PROJECT_FILE_BYTES,
        )
        .ok()
        .hash(hasher);
    }
    Ok(sdk(project))
}

fn sdk_command(project: &Project) -> tokio::process::Command {
    let mut command = tokio::process::Command::new("node");
    command
        .current_dir(&project.dir)
        .arg(sdk(project).join("bin").join("warden-plugin.js"));
    command
}

/// `warden-plugin dev-loader -o COMPONENT`.
pub async fn build(project: &Project, component: &Path) -> Result<()> {
    js::toolchain(project).await?;
    let mut command = sdk_command(project);
    command.arg("dev-loader").arg("-o").arg(component);
    super::run_tool(command, "warden-plugin dev-loader (esbuild and componentize-js)").await
}

/// `warden-plugin dev-bundle MAIN -o COPY/plugin.bundle.js`.
pub async fn bundle(project: &Project, copy: &Path) -> Result<()> {
    let entry = js::entry(project)?;
    std::fs::create_dir_all(copy)?;
    let mut command = sdk_command(project);
    command.arg("dev-bundle").arg(&entry).arg("-o").arg(copy.join(BUNDLE));
    super::run_tool(command, "warden-plugin dev-bundle (esbuild)").await
}
