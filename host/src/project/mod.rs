//! A plugin project: the source folder of one plugin in Rust, Python or
//! JavaScript, as `warden new` creates it and `warden build` / `warden dev`
//! build it. The language is read from the folder's files; each language's
//! toolchain lives in its own module.

mod dev_build;
mod js;
mod js_dev;
mod python;
mod python_dev;
mod rust;
pub mod scaffold;
mod sources;
mod vendored;

pub use dev_build::SOURCES_MOUNT;
pub use sources::Sources;

use std::path::{Component, Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use notify::RecursiveMode;

use warden_plugins::watcher;
use warden_runtime::bounded_file::{self, ReadError};
use warden_runtime::component_shape::MAX_COMPONENT_BYTES;

/// Where `warden build` leaves what an operator deploys: `NAME.wasm` and,
/// when the project has a `warden.toml`, `NAME.toml` beside it.
pub const OUTPUT_DIR: &str = "build";

/// The project's manifest (capability grants), copied beside the component.
pub const MANIFEST: &str = "warden.toml";

/// The most read of a project's own small files: `warden.toml`,
/// `pyproject.toml`, `package.json`.
pub(crate) const MAX_PROJECT_FILE_BYTES: u64 = 1 << 20;

/// The text of the project file `what` at `path`, read the one way (a
/// regular file only, never waited on, at most `MAX_PROJECT_FILE_BYTES`);
/// `None` when there is none.
pub(crate) fn read_project_file(path: &Path, what: &str) -> Result<Option<String>> {
    match bounded_file::read(path, MAX_PROJECT_FILE_BYTES) {
        Ok(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| anyhow::anyhow!("{what} {} is not UTF-8 text", path.display())),
        Err(ReadError::Io(error)) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => bail!("{}", error.describe(what, path)),
    }
}

/// Folders never part of a project's sources: dependencies, build outputs,
/// virtual environments, caches. A change under them triggers no rebuild.
const IGNORED_DIRS: &[&str] = &[
    OUTPUT_DIR,
    "target",
    "node_modules",
    "dist",
    "__pycache__",
    ".venv",
    "venv",
    ".git",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Language {
    Rust,
    Python,
    #[value(alias = "javascript")]
    Js,
}

impl Language {
    pub fn label(self) -> &'static str {
        match self {
            Language::Rust => "Rust",
            Language::Python => "Python",
            Language::Js => "JavaScript",
        }
    }
}

pub struct Project {
    pub dir: PathBuf,
    pub language: Language,
    /// The name the plugin is served under.
    pub name: String,
    /// Cargo's package id (Rust only): picks the package's artifact out of
    /// cargo's messages.
    package_id: Option<String>,
}

/// What a build may be told from the command line.
#[derive(Debug, Default, Clone)]
pub struct BuildOptions {
    /// Cargo's target folder (Rust).
    pub target_dir: Option<PathBuf>,
    /// For `warden dev`: Rust builds with a profile that compiles edits fast.
    pub dev: bool,
}

impl Project {
    /// The project in `dir`, its language told by its files: `Cargo.toml`
    /// (Rust), `package.json` (JavaScript), `pyproject.toml` or `app.py`
    /// (Python).
    pub fn open(dir: &Path) -> Result<Self> {
        let dir = watcher::canonical(dir);
        if !dir.is_dir() {
            bail!("{} is not a folder; give the plugin project's folder", dir.display());
        }
        let (language, name, package_id) = if dir.join("Cargo.toml").is_file() {
            let package = rust::Package::read(&dir)?;
            (Language::Rust, package.name, Some(package.id))
        } else if dir.join("package.json").is_file() {
            (Language::Js, js::package_name(&dir)?, None)
        } else if dir.join("pyproject.toml").is_file() || dir.join("app.py").is_file() {
            (Language::Python, python::project_name(&dir)?, None)
        } else {
            bail!(
                "{} is not a plugin project: it has no Cargo.toml (Rust), package.json (JavaScript) \
                 or pyproject.toml / app.py (Python); `warden new NAME --lang rust|python|js` creates one",
                dir.display()
            );
        };
        Ok(Self {
            name: plugin_name(&name),
            dir,
            language,
            package_id,
        })
    }

    /// Builds the component; returns its path. The toolchain's progress and
    /// errors go to stderr (stdout may be the protocol).
    pub async fn build(&self, options: &BuildOptions) -> Result<PathBuf> {
        match self.language {
            Language::Rust => rust::build(self, options).await,
            Language::Python => python::build(self).await,
            Language::Js => js::build(self).await,
        }
    }

    /// The folder `warden build` writes to.
    pub fn output_dir(&self) -> PathBuf {
        self.dir.join(OUTPUT_DIR)
    }

    /// What to watch for edits: the project folder itself (its own files)
    /// and each of its source folders, recursively.
    pub fn watch_targets(&self) -> Vec<(PathBuf, RecursiveMode)> {
        let mut targets = vec![(self.dir.clone(), RecursiveMode::NonRecursive)];
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return targets;
        };
        let mut folders: Vec<PathBuf> = entries
            .filter_map(|entry| entry.ok())
            .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_dir()))
            .filter(|entry| self.is_source_dir(&entry.file_name().to_string_lossy()))
            .map(|entry| entry.path())
            .collect();
        folders.sort();
        targets.extend(folders.into_iter().map(|dir| (dir, RecursiveMode::Recursive)));
        targets
    }

    /// Whether a change at `path` means a rebuild: a file of the project
    /// that is not an output, a dependency, a cache or an editor's scratch file.
    pub fn is_source(&self, path: &Path) -> bool {
        let Ok(relative) = path.strip_prefix(&self.dir) else {
            return false;
        };
        let parts: Vec<String> = relative
            .components()
            .filter_map(|part| match part {
                Component::Normal(name) => Some(name.to_string_lossy().into_owned()),
                _ => None,
            })
            .collect();
        let Some(file) = parts.last() else {
            return false;
        };
        if parts.iter().any(|part| is_ignored(part)) {
            return false;
        }
        if let [dir, _, ..] = parts.as_slice()
            && !self.is_source_dir(dir)
        {
            return false;
        }
        match self.language {
            // Cargo decides what a crate's sources are; these are the usual places.
            Language::Rust => parts.len() > 1 || ["Cargo.toml", "build.rs", MANIFEST].contains(&file.as_str()),
            Language::Python => !file.ends_with(".pyc"),
            Language::Js => file != "package-lock.json",
        }
    }

    /// Whether a folder at the project's top level holds sources.
    fn is_source_dir(&self, name: &str) -> bool {
        !is_ignored(name)
            && match self.language {
                Language::Rust => RUST_SOURCE_DIRS.contains(&name),
                Language::Python | Language::Js => true,
            }
    }
}

/// The top-level folders of a Rust crate whose files are its sources.
const RUST_SOURCE_DIRS: &[&str] = &["src", "wit", "vendor"];

/// An output, dependency or cache folder, a hidden file, or an editor's scratch file.
fn is_ignored(name: &str) -> bool {
    IGNORED_DIRS.contains(&name)
        || name.starts_with('.')
        || name.ends_with('~')
        || name.ends_with(".swp")
        || name.ends_with(".tmp")
}

/// `name` made a valid plugin name: characters other than letters, digits,
/// `-` and `_` become `_`, and it is cut to the longest name Warden serves.
fn plugin_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(warden_runtime::naming::MAX_NAME_LEN)
        .collect()
}

/// `warden build [PATH]`, with cargo's target folder `target_dir` if given.
pub async fn run_build(path: &Path, target_dir: Option<PathBuf>) -> Result<()> {
    let project = Project::open(path)?;
    let started = Instant::now();
    crate::log_writer::say(format_args!(
        "warden build: building {} ({})…",
        project.name,
        project.language.label()
    ));
    let options = BuildOptions { target_dir, dev: false };
    let component = project.build(&options).await?;
    let output = project.output_dir();
    std::fs::create_dir_all(&output).with_context(|| format!("creating {}", output.display()))?;
    let deployed = output.join(format!("{}.wasm", project.name));
    if component != deployed {
        install(&component, &deployed)?;
    }
    let manifest = project.dir.join(MANIFEST);
    let deployed_manifest = output.join(format!("{}.toml", project.name));
    if manifest.is_file() {
        install(&manifest, &deployed_manifest)?;
    } else if deployed_manifest.exists() {
        std::fs::remove_file(&deployed_manifest)
            .with_context(|| format!("removing {}", deployed_manifest.display()))?;
    }
    let size = std::fs::metadata(&deployed)
        .with_context(|| format!("reading {}", deployed.display()))?
        .len();
    let shown = |path: &Path| {
        std::env::current_dir()
            .ok()
            .and_then(|here| path.strip_prefix(watcher::canonical(&here)).ok().map(Path::to_path_buf))
            .unwrap_or_else(|| path.to_path_buf())
    };
    println!(
        "{} ({}) in {:.1}s",
        shown(&deployed).display(),
        human_size(size),
        started.elapsed().as_secs_f64()
    );
    if manifest.is_file() {
        println!(
            "{} (its manifest, from {MANIFEST})",
            shown(&deployed_manifest).display()
        );
    }
    Ok(())
}

fn human_size(bytes: u64) -> String {
    if bytes >= 1 << 20 {
        format!("{:.1} MiB", bytes as f64 / f64::from(1 << 20))
    } else {
        format!("{:.1} KiB", bytes as f64 / 1024.0)
    }
}

/// Copies `from` to `to` through a hidden temporary file and a rename, so
/// a server watching `to`'s folder never reads half a file; leaves `to`
/// alone when its content is already the same.
pub fn install(from: &Path, to: &Path) -> Result<()> {
    match prepare_install(from, to)? {
        Some(prepared) => prepared.commit(),
        None => Ok(()),
    }
}

/// A copy written beside its destination, not yet renamed into place.
pub struct Prepared {
    temporary: PathBuf,
    to: PathBuf,
}

/// The first half of `install`: `None` when `to` already holds `from`'s
/// bytes. Lets two files be written first and renamed into place back to
/// back, so a watcher sees them change together.
pub fn prepare_install(from: &Path, to: &Path) -> Result<Option<Prepared>> {
    let bytes = bounded_file::read_named(from, MAX_COMPONENT_BYTES, "the file")?;
    if bounded_file::read(to, MAX_COMPONENT_BYTES).is_ok_and(|existing| existing == bytes) {
        return Ok(None);
    }
    let file_name = to.file_name().context("a destination without a file name")?;
    let temporary = to.with_file_name(format!(".{}.tmp", file_name.to_string_lossy()));
    std::fs::write(&temporary, &bytes).with_context(|| format!("writing {}", temporary.display()))?;
    Ok(Some(Prepared {
        temporary,
        to: to.to_path_buf(),
    }))
}

impl Prepared {
    pub fn commit(self) -> Result<()> {
        std::fs::rename(&self.temporary, &self.to).with_context(|| format!("renaming {} into place", self.to.display()))
    }
}

/// Runs a toolchain command with its output on stderr; fails naming the
/// command when it fails.
async fn run_tool(mut command: tokio::process::Command, what: &str) -> Result<()> {
    command
        .stdin(std::process::Stdio::null())
        // stdout may be the protocol (`warden dev`): the tool prints to stderr.
        .stdout(std::io::stderr())
        .stderr(std::process::Stdio::inherit())
        .kill_on_drop(true);
    let status = command.status().await.with_context(|| format!("cannot run {what}"))?;
    if !status.success() {
        bail!("{what} failed ({status})");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project(language: Language) -> Project {
        Project {
            dir: PathBuf::from("/p"),
            language,
            name: "hello".into(),
            package_id: None,
        }
    }

    #[test]
    fn rust_sources_are_cargo_files_src_wit_and_the_manifest() {
        let rust = project(Language::Rust);
        for source in [
            "/p/src/lib.rs",
            "/p/wit/plugin.wit",
            "/p/Cargo.toml",
            "/p/warden.toml",
            "/p/vendor/x/src/lib.rs",
        ] {
            assert!(rust.is_source(Path::new(source)), "{source}");
        }
        for other in [
            "/p/Cargo.lock",
            "/p/target/x",
            "/p/README.md",
            "/p/build/hello.wasm",
            "/elsewhere/src/x.rs",
            "/p/src/.lib.rs.swp",
        ] {
            assert!(!rust.is_source(Path::new(other)), "{other}");
        }
    }

    #[test]
    fn python_and_js_sources_skip_outputs_dependencies_and_caches() {
        let python = project(Language::Python);
        for source in [
            "/p/app.py",
            "/p/lib/util.py",
            "/p/warden.toml",
            "/p/pyproject.toml",
            "/p/data/table.csv",
        ] {
            assert!(python.is_source(Path::new(source)), "{source}");
        }
        for other in [
            "/p/__pycache__/app.cpython-311.pyc",
            "/p/lib/__pycache__/x.pyc",
            "/p/.venv/lib/x.py",
            "/p/build/hello.wasm",
            "/p/.app.py.swp",
            "/p/app.py~",
        ] {
            assert!(!python.is_source(Path::new(other)), "{other}");
        }
        let js = project(Language::Js);
        for source in ["/p/index.js", "/p/lib/hello.js", "/p/package.json"] {
            assert!(js.is_source(Path::new(source)), "{source}");
        }
        for other in [
            "/p/node_modules/esbuild/x.js",
            "/p/build/hello.bundle.js",
            "/p/package-lock.json",
            "/p/.git/index",
        ] {
            assert!(!js.is_source(Path::new(other)), "{other}");
        }
    }

    #[test]
    fn only_source_folders_are_watched() {
        let dir = tempfile::tempdir().unwrap();
        for sub in [
            "src",
            "wit",
            "target",
            "build",
            "node_modules",
            ".venv",
            "lib",
            "__pycache__",
        ] {
            std::fs::create_dir(dir.path().join(sub)).unwrap();
        }
        let watched = |language| {
            let project = Project {
                dir: dir.path().to_path_buf(),
                language,
                name: "hello".into(),
                package_id: None,
            };
            let targets = project.watch_targets();
            assert_eq!(targets[0], (dir.path().to_path_buf(), RecursiveMode::NonRecursive));
            targets[1..]
                .iter()
                .map(|(path, mode)| {
                    assert_eq!(*mode, RecursiveMode::Recursive);
                    path.file_name().unwrap().to_string_lossy().into_owned()
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(watched(Language::Rust), ["src", "wit"]);
        assert_eq!(watched(Language::Python), ["lib", "src", "wit"]);
        assert_eq!(watched(Language::Js), ["lib", "src", "wit"]);
    }

    #[test]
    fn plugin_names_are_made_valid() {
        assert_eq!(plugin_name("hello-world_2"), "hello-world_2");
        assert_eq!(plugin_name("my.plugin"), "my_plugin");
        assert_eq!(plugin_name(&"x".repeat(80)).len(), warden_runtime::naming::MAX_NAME_LEN);
    }
}
