//! What a project's sources hold now, as one fingerprint: `warden dev`
//! builds again only when it differs from what the last build started
//! from, so an editor's save that reaches the watcher as several batches
//! (a write, then its rename or a metadata change), or a batch queued while
//! a build ran, costs one build, not two.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use super::Project;

/// Past these, the sources are not fingerprinted and every change builds.
const MAX_FILES: usize = 10_000;
const MAX_BYTES: u64 = 64 * 1024 * 1024;

/// A fingerprint of every source file's path and contents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sources(u64);

impl Project {
    /// The sources as they are now; `None` when there are too many to read
    /// (or a folder cannot be read), which means "build".
    pub fn sources(&self) -> Option<Sources> {
        let files = self.source_files()?;
        let mut hasher = DefaultHasher::new();
        let mut bytes = 0;
        for file in &files {
            let contents = std::fs::read(file).ok();
            bytes += contents.as_ref().map_or(0, |c| c.len() as u64);
            if bytes > MAX_BYTES {
                return None;
            }
            file.hash(&mut hasher);
            contents.hash(&mut hasher);
        }
        Some(Sources(hasher.finish()))
    }

    /// Every source file, sorted; `None` when there are too many (or a
    /// folder cannot be read).
    fn source_files(&self) -> Option<Vec<PathBuf>> {
        let mut files = Vec::new();
        self.collect(&self.dir, &mut files)?;
        files.sort();
        Some(files)
    }

    /// Copies every source file to the same place under `to` (which must
    /// not exist): what `warden dev` mounts for a Python plugin's loader.
    pub fn copy_sources(&self, to: &Path) -> Result<()> {
        let files = self.source_files().with_context(|| {
            format!(
                "{}: more than {MAX_FILES} source files, or a folder that cannot be read",
                self.dir.display()
            )
        })?;
        let mut bytes = 0;
        for file in files {
            let relative = file.strip_prefix(&self.dir).expect("collected under the project");
            let copy = to.join(relative);
            if let Some(parent) = copy.parent() {
                std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
            }
            bytes += match std::fs::copy(&file, &copy) {
                Ok(copied) => copied,
                // Gone since it was listed (an editor's temporary file renamed
                // over another): the next save's copy is the one that counts.
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => 0,
                Err(error) => {
                    return Err(error).with_context(|| format!("copying {} to {}", file.display(), copy.display()));
                }
            };
            if bytes > MAX_BYTES {
                bail!("{}: the sources hold more than {MAX_BYTES} bytes", self.dir.display());
            }
        }
        Ok(())
    }

    fn collect(&self, dir: &Path, files: &mut Vec<PathBuf>) -> Option<()> {
        for entry in std::fs::read_dir(dir).ok()? {
            let path = entry.ok()?.path();
            if path.is_dir() {
                let relative = path.strip_prefix(&self.dir).ok()?;
                let name = path.file_name()?.to_string_lossy();
                let top = relative.components().count() == 1;
                if super::is_ignored(&name) || (top && !self.is_source_dir(&name)) {
                    continue;
                }
                self.collect(&path, files)?;
            } else if self.is_source(&path) {
                files.push(path);
                if files.len() > MAX_FILES {
                    return None;
                }
            }
        }
        Some(())
    }
}
