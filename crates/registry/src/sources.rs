//! Declarative sources for fleets: a file naming the components a
//! deployment serves, and the lock beside it recording the digest each tag
//! resolved to. `warden pull --from FILE` makes the plugins folder match,
//! idempotently; a tag that has moved since the lock is refused until the
//! operator says `--update`.
//!
//! ```toml
//! # sources.toml
//! [components]
//! hello = "oci://ghcr.io/acme/hello:1.2"
//! notes = "oci://ghcr.io/acme/notes@sha256:…"
//! ```
//!
//! The lock (`sources.lock`, beside it) is written by Warden; commit it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use warden_origin::Reference;

const MAX_FILE_BYTES: u64 = 1024 * 1024;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SourcesFile {
    #[serde(default)]
    components: BTreeMap<String, String>,
}

#[derive(Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Lock {
    #[serde(default)]
    pub components: BTreeMap<String, Locked>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Locked {
    pub reference: String,
    pub digest: String,
}

/// The sources file, read and checked: every name and reference valid.
pub struct Sources {
    pub path: PathBuf,
    pub components: Vec<(String, Reference)>,
}

impl Sources {
    pub fn load(path: &Path) -> Result<Self> {
        if path.extension().is_some_and(|e| e == "lock" || e == "partial") {
            bail!(
                "{} looks like a lock Warden writes (`.lock`), not a sources file: name the sources file \
                 (e.g. sources.toml; its lock is written beside it)",
                path.display()
            );
        }
        let text = read_bounded(path, "the sources file")?;
        let file: SourcesFile =
            toml::from_str(&text).with_context(|| format!("{} is not a sources file", path.display()))?;
        let mut components = Vec::new();
        for (name, reference) in file.components {
            warden_runtime::naming::check_plugin_name(&name)
                .with_context(|| format!("{}: `components.{name}`", path.display()))?;
            let reference =
                Reference::parse(&reference).with_context(|| format!("{}: `components.{name}`", path.display()))?;
            components.push((name, reference));
        }
        if components.is_empty() {
            bail!("{} lists no `[components]`", path.display());
        }
        Ok(Sources {
            path: path.to_path_buf(),
            components,
        })
    }

    pub fn lock_path(&self) -> PathBuf {
        self.path.with_extension("lock")
    }
}

impl Lock {
    pub fn load(path: &Path) -> Result<Self> {
        if !path.exists() {
            return Ok(Lock::default());
        }
        let text = read_bounded(path, "the lock")?;
        let lock: Lock = toml::from_str(&text).with_context(|| {
            format!(
                "{} is not a lock Warden wrote; delete it to resolve every tag again",
                path.display()
            )
        })?;
        for (name, locked) in &lock.components {
            warden_origin::check_digest(&locked.digest)
                .with_context(|| format!("{}: `components.{name}.digest`", path.display()))?;
        }
        Ok(lock)
    }

    /// Writes the lock next to its sources, atomically.
    pub fn save(&self, path: &Path) -> Result<()> {
        let text = format!(
            "# Written by `warden pull --from`: the digest each source resolved to. Commit it.\n{}",
            toml::to_string(self)?
        );
        let partial = path.with_extension("lock.partial");
        // A new file of Warden's own: whatever was left at that name (a
        // FIFO, whose open would wait for a reader) is removed first, and
        // the file is created exclusively, never opened through.
        let _ = std::fs::remove_file(&partial);
        let mut file =
            std::fs::File::create_new(&partial).with_context(|| format!("cannot write {}", partial.display()))?;
        std::io::Write::write_all(&mut file, text.as_bytes())
            .and_then(|()| file.sync_all())
            .with_context(|| format!("cannot write {}", partial.display()))?;
        std::fs::rename(&partial, path).with_context(|| format!("cannot write {}", path.display()))
    }
}

fn read_bounded(path: &Path, what: &str) -> Result<String> {
    // Regular files only, never waiting on a FIFO.
    warden_runtime::bounded_file::read_text(path, MAX_FILE_BYTES, what)
}
