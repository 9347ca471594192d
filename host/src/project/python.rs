//! Python projects: a module built into a component with componentize-py
//! against the Python SDK's copy of the contract.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use super::Project;

/// The componentize-py the SDK is built and tested with.
pub const COMPONENTIZE_PY: &str = "0.25.1";

/// `[project] name` of `pyproject.toml`, else the folder's name.
pub fn project_name(dir: &Path) -> Result<String> {
    match pyproject(dir)? {
        Some(table) => match table.get("project").and_then(|p| p.get("name")) {
            Some(name) => name.as_str().map(str::to_string).with_context(|| {
                format!(
                    "{}: `[project] name` is not a string",
                    dir.join("pyproject.toml").display()
                )
            }),
            None => Ok(folder_name(dir)),
        },
        None => Ok(folder_name(dir)),
    }
}

/// The module componentize-py starts from: `[tool.warden] module`, else `app`.
pub(super) fn module(dir: &Path) -> Result<String> {
    let module = pyproject(dir)?
        .and_then(|table| {
            table
                .get("tool")?
                .get("warden")?
                .get("module")?
                .as_str()
                .map(str::to_string)
        })
        .unwrap_or_else(|| "app".to_string());
    let file = dir.join(format!("{}.py", module.replace('.', "/")));
    let package = dir.join(module.replace('.', "/")).join("__init__.py");
    if !file.is_file() && !package.is_file() {
        bail!(
            "{}: no module `{module}` ({} is missing); name the plugin's module with `[tool.warden] module = \"…\"` in pyproject.toml",
            dir.display(),
            file.display()
        );
    }
    Ok(module)
}

fn pyproject(dir: &Path) -> Result<Option<toml::Table>> {
    let path = dir.join("pyproject.toml");
    let Some(text) = super::read_project_file(&path, "the project file")? else {
        return Ok(None);
    };
    let table = text
        .parse::<toml::Table>()
        .with_context(|| format!("{} is not valid TOML", path.display()))?;
    Ok(Some(table))
}

fn folder_name(dir: &Path) -> String {
    dir.file_name()
        .map_or_else(|| "plugin".to_string(), |name| name.to_string_lossy().into_owned())
}

/// `componentize-py -d WIT -w warden:plugin/plugin componentize MODULE -p . -p SDK -o build/NAME.wasm`.
pub async fn build(project: &Project) -> Result<PathBuf> {
    let module = module(&project.dir)?;
    let componentize = componentize_py(&project.dir).await?;
    let sdk = sdk_path(&project.dir).await?;
    let output = project.output_dir();
    std::fs::create_dir_all(&output).with_context(|| format!("creating {}", output.display()))?;
    let component = output.join(format!("{}.wasm", project.name));
    let mut command = tokio::process::Command::new(&componentize);
    command
        .current_dir(&project.dir)
        .arg("-d")
        .arg(sdk.join("warden_plugin").join("wit"))
        .args(["-w", "warden:plugin/plugin", "componentize", &module, "-p", "."])
        .arg("-p")
        .arg(&sdk)
        .arg("-o")
        .arg(&component);
    super::run_tool(command, "componentize-py").await?;
    Ok(component)
}

/// componentize-py from the project's `.venv`, else from `PATH`, at the
/// version the SDK is built with.
pub(super) async fn componentize_py(dir: &Path) -> Result<PathBuf> {
    let install = format!(
        "install it in the project: `python3 -m venv .venv && .venv/bin/pip install componentize-py=={COMPONENTIZE_PY}` \
         (warden build looks in .venv/bin, then on PATH)"
    );
    let found = [dir.join(".venv/bin/componentize-py")]
        .into_iter()
        .chain(on_path("componentize-py"))
        .find(|path| path.is_file());
    let Some(path) = found else {
        bail!("componentize-py is not installed: {install}");
    };
    let version = tokio::process::Command::new(&path)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .with_context(|| format!("cannot run {}", path.display()))?;
    let version = String::from_utf8_lossy(&version.stdout).trim().to_string();
    if version != format!("componentize-py {COMPONENTIZE_PY}") {
        bail!(
            "{} is `{version}`; the SDK is built with componentize-py {COMPONENTIZE_PY}: {install}",
            path.display()
        );
    }
    Ok(path)
}

/// The folder that holds the `warden_plugin` package: the project's
/// `vendor/` (where `warden new` puts it), else wherever the project's
/// Python imports it from.
pub(super) async fn sdk_path(dir: &Path) -> Result<PathBuf> {
    let vendored = dir.join("vendor");
    if vendored.join("warden_plugin").join("__init__.py").is_file() {
        return Ok(vendored);
    }
    let python = [dir.join(".venv/bin/python")]
        .into_iter()
        .find(|path| path.is_file())
        .unwrap_or_else(|| PathBuf::from("python3"));
    let output = tokio::process::Command::new(&python)
        .current_dir(dir)
        .args(["-B", "-m", "warden_plugin", "path"])
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .with_context(|| format!("cannot run {}", python.display()))?;
    let path = PathBuf::from(String::from_utf8_lossy(&output.stdout).trim());
    if !output.status.success() || !path.join("warden_plugin").is_dir() {
        bail!(
            "cannot find the Python SDK (warden_plugin): neither {} nor `{} -m warden_plugin path` has it; \
             `warden new NAME --lang python` puts a copy in vendor/",
            vendored.display(),
            python.display()
        );
    }
    Ok(path)
}

/// `name` in each folder of `PATH`.
pub fn on_path(name: &str) -> Vec<PathBuf> {
    std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).map(|dir| dir.join(name)).collect())
        .unwrap_or_default()
}
