//! A plugin's mounts, pinned when it loads.
//!
//! Each granted folder is opened once, at load, and every call's preopen is
//! built from that handle rather than from the path. A plugin (or anyone)
//! that later renames the folder or swaps a symlink in at its path cannot
//! redirect the mount: the sandbox keeps reaching the folder that was there
//! when the operator's manifest was read.

use std::path::Path;

use anyhow::{Context, Result, bail};
use wasmtime_wasi::{FsPerms, WasiCtxBuilder};

use crate::grants::{Mount, MountAccess};
use crate::pinned::PinnedDir;

struct PinnedMount {
    dir: PinnedDir,
    guest: String,
    perms: FsPerms,
}

/// The mounts of one loaded plugin.
#[derive(Default)]
pub struct PinnedMounts(Vec<PinnedMount>);

impl PinnedMounts {
    /// Opens every mount's folder. A host path that is a symlink, or leads
    /// elsewhere through one (or through `..`), is refused: a mount names
    /// the folder itself, so nothing placed at its path can redirect it.
    pub fn pin(mounts: &[Mount]) -> Result<Self> {
        let mut pinned = Vec::with_capacity(mounts.len());
        for mount in mounts {
            let key = format!("filesystem.{:?}", mount.host.display().to_string());
            let dir = PinnedDir::open(&mount.host).map_err(|error| {
                if mount.host.is_symlink() {
                    anyhow::anyhow!(
                        "`{key}`: the host path is a symlink; a mount must name the folder itself \
                         (write its real path, if that folder is the one to grant)"
                    )
                } else {
                    anyhow::Error::new(error).context(format!("`{key}`: cannot open the host folder"))
                }
            })?;
            let real = dir
                .real_path()
                .with_context(|| format!("`{key}`: cannot tell where the host folder is"))?;
            if real != mount.host {
                bail!(
                    "`{key}`: the host path leads to {} through a symlink or `..`; a mount must name \
                     the folder itself (write its real path, if that folder is the one to grant)",
                    real.display()
                );
            }
            pinned.push(PinnedMount {
                dir,
                guest: mount.guest.clone(),
                perms: match mount.access {
                    MountAccess::ReadOnly => FsPerms::ReadOnly,
                    MountAccess::ReadWrite => FsPerms::ReadWrite,
                },
            });
        }
        Ok(Self(pinned))
    }

    /// Adds the pinned folders to one call's WASI context.
    pub fn preopen(&self, wasi: &mut WasiCtxBuilder) -> Result<()> {
        for mount in &self.0 {
            wasi.preopened_dir(mount.dir.by_handle(), &mount.guest, mount.perms)
                .map_err(anyhow::Error::from)
                .with_context(|| format!("cannot open the granted directory {}", mount.dir.path().display()))?;
        }
        Ok(())
    }

    /// The host folders, as the manifest named them.
    pub fn hosts(&self) -> impl Iterator<Item = &Path> {
        self.0.iter().map(|m| m.dir.path())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mount(host: &Path) -> Mount {
        Mount {
            host: host.to_path_buf(),
            guest: "/data".into(),
            access: MountAccess::ReadWrite,
        }
    }

    #[test]
    fn symlinks_and_dot_dot_in_the_host_path_are_refused() {
        let root = tempfile::tempdir().unwrap();
        let root_path = root.path().canonicalize().unwrap();
        std::fs::create_dir_all(root_path.join("real/sub")).unwrap();
        std::os::unix::fs::symlink("real", root_path.join("link")).unwrap();

        let err = format!(
            "{:#}",
            PinnedMounts::pin(&[mount(&root_path.join("link"))]).err().unwrap()
        );
        assert!(err.contains("the host path is a symlink"), "{err}");
        assert!(
            err.contains(&format!("`filesystem.\"{}\"`", root_path.join("link").display())),
            "{err}"
        );

        let err = format!(
            "{:#}",
            PinnedMounts::pin(&[mount(&root_path.join("link/sub"))]).err().unwrap()
        );
        assert!(
            err.contains(&format!(
                "leads to {} through a symlink",
                root_path.join("real/sub").display()
            )),
            "{err}"
        );
        let err = format!(
            "{:#}",
            PinnedMounts::pin(&[mount(&root_path.join("real/sub/.."))])
                .err()
                .unwrap()
        );
        assert!(err.contains("through a symlink or `..`"), "{err}");

        let pinned = PinnedMounts::pin(&[mount(&root_path.join("real/sub"))]).unwrap();
        assert_eq!(pinned.hosts().collect::<Vec<_>>(), [root_path.join("real/sub")]);
    }
}
