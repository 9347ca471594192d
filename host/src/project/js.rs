//! JavaScript projects: a module bundled with the JavaScript SDK and turned
//! into a component by its `warden-plugin build` (esbuild, then
//! componentize-js), run with the project's own `node_modules`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde_json::Value;

use super::Project;

/// The oldest Node the SDK's build runs on.
const MIN_NODE: u64 = 20;

/// The tools the SDK's build needs, as the project's devDependencies.
const BUILD_PACKAGES: &[&str] = &["warden-plugin", "esbuild", "@bytecodealliance/componentize-js"];

fn package_json(dir: &Path) -> Result<Value> {
    let path = dir.join("package.json");
    let text = super::read_project_file(&path, "the project file")?
        .with_context(|| format!("cannot read the project file {}: it does not exist", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{} is not valid JSON", path.display()))
}

/// `name` of `package.json` without its scope, else the folder's name.
pub fn package_name(dir: &Path) -> Result<String> {
    let package = package_json(dir)?;
    Ok(match package["name"].as_str() {
        Some(name) => name.rsplit('/').next().unwrap_or(name).to_string(),
        None => dir
            .file_name()
            .map_or_else(|| "plugin".to_string(), |name| name.to_string_lossy().into_owned()),
    })
}

/// The plugin's module: package.json's `main`, else index.js.
pub fn entry(project: &Project) -> Result<String> {
    let entry = package_json(&project.dir)?["main"]
        .as_str()
        .unwrap_or("index.js")
        .to_string();
    if !project.dir.join(&entry).is_file() {
        bail!(
            "{}: the plugin's module {entry} is missing (package.json's `main`, else index.js)",
            project.dir.display()
        );
    }
    Ok(entry)
}

/// Checks Node and the project's build packages; returns its node_modules.
pub async fn toolchain(project: &Project) -> Result<PathBuf> {
    check_node().await?;
    let modules = project.dir.join("node_modules");
    if let Some(missing) = BUILD_PACKAGES
        .iter()
        .find(|name| !modules.join(name).join("package.json").is_file())
    {
        bail!(
            "{} has no node_modules/{missing}: run `npm install` in {} (package.json lists warden-plugin, \
             esbuild 0.28.2 and @bytecodealliance/componentize-js 0.23.0 as devDependencies)",
            project.dir.display(),
            project.dir.display()
        );
    }
    Ok(modules)
}

/// `node node_modules/warden-plugin/bin/warden-plugin.js build MAIN -o build/NAME.wasm`.
pub async fn build(project: &Project) -> Result<PathBuf> {
    let entry = entry(project)?;
    let modules = toolchain(project).await?;
    let output = project.output_dir();
    std::fs::create_dir_all(&output).with_context(|| format!("creating {}", output.display()))?;
    let component = output.join(format!("{}.wasm", project.name));
    let mut command = tokio::process::Command::new("node");
    command
        .current_dir(&project.dir)
        .arg(modules.join("warden-plugin/bin/warden-plugin.js"))
        .arg("build")
        .arg(&entry)
        .arg("-o")
        .arg(&component);
    super::run_tool(command, "warden-plugin build (esbuild and componentize-js)").await?;
    Ok(component)
}

/// Node on `PATH`, at least `MIN_NODE`.
async fn check_node() -> Result<()> {
    let install = format!("install Node.js {MIN_NODE} or later (https://nodejs.org) and put `node` on PATH");
    let output = tokio::process::Command::new("node")
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .map_err(|_| anyhow::anyhow!("cannot run `node`: {install}"))?;
    let version = String::from_utf8_lossy(&output.stdout).trim().to_string();
    let major = version
        .trim_start_matches('v')
        .split('.')
        .next()
        .and_then(|major| major.parse::<u64>().ok());
    match major {
        Some(major) if major >= MIN_NODE => Ok(()),
        _ => bail!("`node --version` is `{version}`: {install}"),
    }
}
