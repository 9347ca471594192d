//! What a project's sources hold now, as one fingerprint: `warden dev`
//! builds again only when it differs from what the last build started
//! from, so an editor's save that reaches the watcher as several batches
//! (a write, then its rename or a metadata change), or a batch queued while
//! a build ran, costs one build, not two.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use warden_runtime::bounded_file::{self, ReadError};

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
            // The one opener: a file swapped for a FIFO since it was listed
            // is not waited on.
            let contents = bounded_file::read(file, MAX_BYTES).ok();
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
            // Not through a link put in its place since it was listed: the
            // copy never holds a file from outside the project.
            let source = match bounded_file::open_not_following(&file) {
                Ok((source, _)) => source,
                // Gone since it was listed (an editor's temporary file renamed
                // over another): the next save's copy is the one that counts.
                Err(ReadError::Io(error)) if error.kind() == std::io::ErrorKind::NotFound => continue,
                Err(error) => bail!(error.describe("the source file", &file)),
            };
            let mut target = std::fs::File::create(&copy).with_context(|| format!("creating {}", copy.display()))?;
            // At most what is left of the bound, however the file grows.
            let left = MAX_BYTES.saturating_sub(bytes) + 1;
            bytes += std::io::copy(&mut std::io::Read::take(source, left), &mut target)
                .with_context(|| format!("copying {} to {}", file.display(), copy.display()))?;
            if bytes > MAX_BYTES {
                bail!("{}: the sources hold more than {MAX_BYTES} bytes", self.dir.display());
            }
        }
        Ok(())
    }

    /// Symbolic links are not sources: a copy of the sources (`warden dev`'s
    /// mount) never holds a file from outside the project.
    fn collect(&self, dir: &Path, files: &mut Vec<PathBuf>) -> Option<()> {
        for entry in std::fs::read_dir(dir).ok()? {
            let entry = entry.ok()?;
            let kind = entry.file_type().ok()?;
            let path = entry.path();
            if kind.is_symlink() {
                continue;
            }
            if kind.is_dir() {
                let relative = path.strip_prefix(&self.dir).ok()?;
                let name = path.file_name()?.to_string_lossy();
                let top = relative.components().count() == 1;
                if super::is_ignored(&name) || (top && !self.is_source_dir(&name)) {
                    continue;
                }
                self.collect(&path, files)?;
            } else if kind.is_file() && self.is_source(&path) {
                // Regular files only: a FIFO, socket or device named like a
                // source is not one, and reading it could wait for ever.
                files.push(path);
                if files.len() > MAX_FILES {
                    return None;
                }
            }
        }
        Some(())
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests read their own fixtures freely
mod tests {
    use super::super::Project;

    #[test]
    fn a_copy_holds_the_sources_and_no_file_from_outside_nor_a_fifo() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "not the project's").unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("app.py"), "print('hi')\n").unwrap();
        std::fs::create_dir(dir.path().join("lib")).unwrap();
        std::fs::write(dir.path().join("lib/util.py"), "X = 1\n").unwrap();
        std::fs::create_dir(dir.path().join("__pycache__")).unwrap();
        std::fs::write(dir.path().join("__pycache__/app.pyc"), "cache").unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret"), dir.path().join("secret.py")).unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("linked")).unwrap();
        // A FIFO named like a source: neither read nor copied (it would wait).
        let fifo = std::ffi::CString::new(dir.path().join("pipe.py").as_os_str().as_encoded_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        let project = Project::open(dir.path()).unwrap();
        assert!(project.sources().is_some());
        let copy = tempfile::tempdir().unwrap();
        let to = copy.path().join("1");
        project.copy_sources(&to).unwrap();
        let mut copied: Vec<String> = walk(&to);
        copied.sort();
        assert_eq!(copied, ["app.py", "lib/util.py"]);
        assert_eq!(std::fs::read_to_string(to.join("lib/util.py")).unwrap(), "X = 1\n");
    }

    fn walk(dir: &std::path::Path) -> Vec<String> {
        let mut found = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                found.extend(walk(&path).into_iter().map(|f| format!("{name}/{f}")));
            } else {
                found.push(path.file_name().unwrap().to_string_lossy().into_owned());
            }
        }
        found
    }
}
