//! `warden dev PATH`: the plugin development loop. Builds the plugin's
//! project (Rust, Python or JavaScript: see `project`), stages the component
//! in a private plugins folder, serves it (with `--plugins DIR` beside it)
//! over stdio, and rebuilds when its sources change; the watcher and
//! reconciler of `serve` do the rest. A failed build leaves the last good
//! component staged, so it keeps serving. Compiled functions are kept in
//! memory between builds, so a rebuilt component compiles only the
//! functions that changed (`incremental_cache`).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result};

use crate::cli::DevArgs;
use crate::project::{self, BuildOptions, Project};
use crate::serve::{Host, HostConfig, serve_while_loading};
use warden_plugins::loader::Loader;
use warden_plugins::watcher::{self, Batch};

mod live;
use live::{LiveSources, Staged};
use warden_runtime::incremental_cache::{self, IncrementalCache};

pub async fn run(args: DevArgs) -> Result<()> {
    let project = Project::open(&args.path)?;
    let staging = Staging::create(&project.name)?;

    // Watch the sources before the first build, so no edit is missed.
    let (_source_watcher, mut edits) = watcher::watch(&project.watch_targets(), watcher::DEBOUNCE)?;

    let mut roots = vec![staging.dir.clone()];
    roots.extend(args.plugins.clone());
    let (host, first_load) = Host::start(HostConfig {
        roots,
        watch: true,
        poll: false,
        cache: args.cache.clone(),
        audit_log: args.audit_log.clone(),
        audit_required: false,
        subscriptions: Default::default(),
        state_key: None,
        trust: Default::default(),
        task_store: None,
        replica: "warden-dev".into(),
        incremental_cache: Some(Arc::new(IncrementalCache::new(incremental_cache::DEV_CAP))),
    })
    .await?;

    let live = match project.has_dev_build() {
        true => Some(LiveSources::create(&project.name)?),
        false => None,
    };
    let mut build = Build {
        project,
        options: BuildOptions {
            target_dir: args.target_dir.clone(),
            dev: true,
        },
        staging: staging.dir.clone(),
        live,
        loader: host.loader.clone(),
    };

    // Builds run one at a time, in this task; edits made during a build are
    // picked up by the next one. The first build starts right away while
    // the client connects: the tool appears (with `list_changed`) when it is ready.
    // A batch whose files hold what the last build started from (an
    // editor's save seen twice, the build's own reads) builds nothing.
    let builder = tokio::spawn(async move {
        let mut built = build.project.sources();
        build.run().await;
        while let Some(batch) = edits.recv().await {
            let mut relevant = build.is_relevant(&batch);
            while let Ok(more) = edits.try_recv() {
                relevant |= build.is_relevant(&more);
            }
            if !relevant {
                continue;
            }
            let now = build.project.sources();
            if now.is_some() && now == built {
                continue;
            }
            built = now;
            build.run().await;
        }
    });
    let served = serve_while_loading(first_load, host.serve_stdio()).await;
    builder.abort();
    drop(staging);
    served
}

/// A private plugins folder for the built component, removed on exit.
struct Staging {
    dir: PathBuf,
}

impl Staging {
    fn create(name: &str) -> Result<Self> {
        Ok(Self {
            dir: private_folder(name, "", "the staging folder")?,
        })
    }
}

/// A new folder only this user may enter, `warden-dev-PID-NAME{suffix}` in
/// the temporary folder.
fn private_folder(name: &str, suffix: &str, what: &str) -> Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("warden-dev-{}-{name}{suffix}", std::process::id()));
    // A leftover of an earlier run with the same process id.
    let _ = std::fs::remove_dir_all(&dir);
    // Created fresh, never reused: a folder someone else made under this
    // name (or a symlink) is refused rather than served from.
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
        .create(&dir)
        .with_context(|| format!("cannot create {what} {}", dir.display()))?;
    Ok(watcher::canonical(&dir))
}

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

struct Build {
    project: Project,
    options: BuildOptions,
    staging: PathBuf,
    /// Python: the development component and copies of the sources.
    live: Option<LiveSources>,
    loader: Arc<Loader>,
}

impl Build {
    fn is_relevant(&self, batch: &Batch) -> bool {
        batch.rescan || batch.paths.iter().any(|path| self.project.is_source(path))
    }

    /// Builds and stages, with a progress line on stderr. Failures are
    /// reported there; the last good component stays staged.
    async fn run(&mut self) {
        let name = &self.project.name;
        let started = Instant::now();
        say(format_args!("warden dev: building {name}…"));
        let result = match &mut self.live {
            Some(live) => live
                .stage(&self.project, &self.staging, &self.loader)
                .await
                .map(|staged| match staged {
                    Staged::Sources => " (the sources only)",
                    Staged::Component => "",
                }),
            None => match self.project.build(&self.options).await {
                Ok(wasm) => self.stage(&wasm).map(|()| ""),
                Err(error) => Err(error),
            },
        };
        let elapsed = started.elapsed().as_secs_f64();
        match result {
            Ok(what) => say(format_args!("warden dev: building {name}… ok in {elapsed:.1}s{what}")),
            Err(error) => say(format_args!(
                "warden dev: building {name}… failed in {elapsed:.1}s: {error:#}; the last good build keeps serving"
            )),
        }
    }

    /// Copies the component (and the project's `warden.toml`, as its
    /// manifest) into the staging folder: manifest first, each through a
    /// temporary file and a rename, so the server never reads half a file.
    fn stage(&self, wasm: &Path) -> Result<()> {
        let name = &self.project.name;
        let manifest = self.project.dir.join(project::MANIFEST);
        let staged_manifest = self.staging.join(format!("{name}.toml"));
        if manifest.is_file() {
            project::install(&manifest, &staged_manifest)?;
        } else if staged_manifest.exists() {
            std::fs::remove_file(&staged_manifest)
                .with_context(|| format!("removing {}", staged_manifest.display()))?;
        }
        project::install(wasm, &self.staging.join(format!("{name}.wasm")))
    }
}

/// A progress line on stderr, escaped; dropped if stderr cannot be written
/// (as the server's log is: `eprintln!` would panic and end the session).
fn say(line: std::fmt::Arguments<'_>) {
    crate::log_writer::say(line);
}
