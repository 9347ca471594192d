//! Folders pinned by handle: opened once, then reached only through that
//! handle, so renaming the path or swapping a symlink into it afterwards
//! cannot redirect what Warden reaches.
//!
//! wasmtime-wasi opens a preopened directory by path, and wasmtime maps a
//! compiled-code file by path. The path `/proc/self/fd/N` leads to exactly
//! the file or folder behind descriptor N, whatever happened to its name
//! since it was opened: that is how a pinned handle is handed to them.

use std::fs::{File, Metadata};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The folder behind descriptors, as paths (Linux's procfs; elsewhere the
/// `/dev/fd` of BSD and macOS).
#[cfg(target_os = "linux")]
const DESCRIPTORS: &str = "/proc/self/fd";
#[cfg(not(target_os = "linux"))]
const DESCRIPTORS: &str = "/dev/fd";

/// The path that leads to exactly what `file` has open.
pub fn by_handle(file: &impl AsRawFd) -> PathBuf {
    Path::new(DESCRIPTORS).join(file.as_raw_fd().to_string())
}

/// A folder opened once; later uses go through its handle.
#[derive(Debug)]
pub struct PinnedDir {
    handle: File,
    /// The path it was opened at, for messages.
    path: PathBuf,
    /// `by_handle(&handle)`, made once: calls use it.
    by_handle: PathBuf,
}

impl PinnedDir {
    /// Opens the folder at `path` itself: when the last component is a
    /// symlink, this fails (`ELOOP` or `ENOTDIR`) instead of following it.
    /// Symlinks in earlier components are followed; `real_path` tells.
    pub fn open(path: &Path) -> io::Result<Self> {
        let mut flags = libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        // A handle for paths only: it grants nothing by itself, and needs no
        // read permission on the folder.
        #[cfg(target_os = "linux")]
        {
            flags |= libc::O_PATH;
        }
        // A folder's handle (`O_DIRECTORY`), never a file's contents: the
        // one opener (`bounded_file`) is for regular files.
        #[allow(clippy::disallowed_methods)]
        let handle = std::fs::OpenOptions::new().read(true).custom_flags(flags).open(path)?;
        let by_handle = by_handle(&handle);
        // Without a mounted /proc, `by_handle` would lead nowhere (or, worse,
        // elsewhere): refuse rather than pin nothing.
        let (held, reached) = (handle.metadata()?, std::fs::metadata(&by_handle)?);
        if (held.dev(), held.ino()) != (reached.dev(), reached.ino()) {
            return Err(io::Error::other(format!(
                "{} does not lead to the folder Warden opened; is /proc mounted?",
                by_handle.display()
            )));
        }
        Ok(Self {
            handle,
            path: path.to_path_buf(),
            by_handle,
        })
    }

    /// The path it was opened at.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A path that leads to this very folder, for APIs that take paths.
    pub fn by_handle(&self) -> &Path {
        &self.by_handle
    }

    /// Where the folder is now, every symlink resolved, as the kernel sees it.
    pub fn real_path(&self) -> io::Result<PathBuf> {
        std::fs::read_link(&self.by_handle)
    }

    /// The folder's own metadata (of the handle, never of whatever the path
    /// holds now).
    pub fn metadata(&self) -> io::Result<Metadata> {
        self.handle.metadata()
    }
}

/// `path` with symlinks resolved as far as it exists; the components that do
/// not exist yet are appended unchanged. For comparing a folder that may not
/// exist yet (a default cache folder) with canonical paths.
pub fn canonical_as_far_as_exists(path: &Path) -> PathBuf {
    let mut existing = path;
    let mut missing = Vec::new();
    loop {
        if let Ok(canonical) = existing.canonicalize() {
            return missing.iter().rev().fold(canonical, |path, part| path.join(part));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                missing.push(name.to_owned());
                existing = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests read their own fixtures freely
mod tests {
    use super::*;

    #[test]
    fn a_pinned_folder_stays_the_same_folder_after_a_rename_and_a_symlink_swap() {
        let root = tempfile::tempdir().unwrap();
        let (inner, moved, secret) = (
            root.path().join("inner"),
            root.path().join("moved"),
            root.path().join("secret"),
        );
        std::fs::create_dir(&inner).unwrap();
        std::fs::create_dir(&secret).unwrap();
        std::fs::write(inner.join("mine.txt"), "mine").unwrap();
        std::fs::write(secret.join("secret.txt"), "secret").unwrap();
        let pinned = PinnedDir::open(&inner).unwrap();
        assert_eq!(pinned.real_path().unwrap(), inner.canonicalize().unwrap());

        std::fs::rename(&inner, &moved).unwrap();
        std::os::unix::fs::symlink("secret", &inner).unwrap();
        let seen = std::fs::read_to_string(pinned.by_handle().join("mine.txt")).unwrap();
        assert_eq!(seen, "mine");
        assert!(!pinned.by_handle().join("secret.txt").exists());
        assert_eq!(pinned.real_path().unwrap(), moved.canonicalize().unwrap());
    }

    #[test]
    fn a_symlink_is_not_opened_as_the_folder_it_points_to() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("real")).unwrap();
        std::os::unix::fs::symlink("real", root.path().join("link")).unwrap();
        assert!(PinnedDir::open(&root.path().join("link")).is_err());
        // A symlink earlier in the path is followed, and `real_path` shows it.
        std::fs::create_dir(root.path().join("real/sub")).unwrap();
        let through = PinnedDir::open(&root.path().join("link/sub")).unwrap();
        assert_eq!(
            through.real_path().unwrap(),
            root.path().canonicalize().unwrap().join("real/sub")
        );
    }

    #[test]
    fn canonical_as_far_as_exists_keeps_the_missing_tail() {
        let root = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(root.path(), root.path().join("link")).unwrap();
        let real = root.path().canonicalize().unwrap();
        assert_eq!(
            canonical_as_far_as_exists(&root.path().join("link/not/yet")),
            real.join("not/yet")
        );
        assert_eq!(canonical_as_far_as_exists(&root.path().join("link")), real);
    }
}
