//! `[filesystem]`: the host folders a plugin sees, and where they may be.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MountAccess {
    ReadOnly,
    ReadWrite,
}

impl MountAccess {
    pub fn as_str(self) -> &'static str {
        match self {
            MountAccess::ReadOnly => "read-only",
            MountAccess::ReadWrite => "read-write",
        }
    }
}

/// A host directory visible to the guest at `guest`.
#[derive(Debug, Clone, PartialEq)]
pub struct Mount {
    pub host: PathBuf,
    pub guest: String,
    pub access: MountAccess,
}

impl Mount {
    /// How the manifest names this mount: `filesystem."/srv/notes"`.
    pub fn key(&self) -> String {
        format!("filesystem.{:?}", self.host.display().to_string())
    }
}

/// Folders Warden reads code and grants from, which no mount may reach:
/// a plugin that could write there could give itself (or another plugin)
/// any grant, or have Warden run native code of its choosing.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProtectedFolders {
    /// The plugins folders (canonical paths).
    pub plugins: Vec<PathBuf>,
    /// The compiled-code cache folders in use or in use by default
    /// (canonical as far as they exist).
    pub caches: Vec<PathBuf>,
}

/// Where a plugin's mounts may be. `mounts` have canonical host paths (the
/// loader has pinned them, which refuses symlinks and `..`); `own_folder` is
/// the folder of a folder plugin (canonical), `None` for a bare `name.wasm`.
///
/// - A plugin's mounts are separate folders: none is inside another, so a
///   writable mount cannot replace the folder another mount names.
/// - No mount is, holds, or is inside a compiled-code cache folder.
/// - No mount is or holds a plugins folder; inside one, only a subfolder of
///   the plugin's own folder may be mounted (never the folder itself, which
///   holds its manifest and component).
pub fn check_mount_layout(mounts: &[Mount], own_folder: Option<&Path>, protected: &ProtectedFolders) -> Result<()> {
    for (index, mount) in mounts.iter().enumerate() {
        let (key, host) = (mount.key(), &mount.host);
        if let Some(outer) = mounts[..index]
            .iter()
            .find(|other| host.starts_with(&other.host) || other.host.starts_with(host))
        {
            bail!(
                "`{key}` and `{}` overlap (one folder is inside the other); a plugin's mounts must be \
                 separate folders — mount only the outer one, or two folders side by side",
                outer.key()
            );
        }
        if let Some(cache) = protected
            .caches
            .iter()
            .find(|c| c.starts_with(host) || host.starts_with(c))
        {
            bail!(
                "`{key}` overlaps the compiled-code cache folder {}, whose files Warden runs as native \
                 code; mount a folder outside it",
                cache.display()
            );
        }
        if let Some(root) = protected.plugins.iter().find(|root| root.starts_with(host)) {
            bail!(
                "`{key}` holds the plugins folder {}, where manifests and components are read from; \
                 mount a folder outside it",
                root.display()
            );
        }
        let strictly_in_own_folder = own_folder.is_some_and(|own| host.starts_with(own) && host != own);
        if let Some(root) = protected.plugins.iter().find(|root| host.starts_with(root))
            && !strictly_in_own_folder
        {
            bail!(
                "`{key}` is inside the plugins folder {}, where manifests and components are read from; \
                 mount a folder outside it (a folder plugin may mount a subfolder of its own folder, \
                 like `name/state`)",
                root.display()
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mounts(hosts: &[&str]) -> Vec<Mount> {
        hosts
            .iter()
            .enumerate()
            .map(|(i, host)| Mount {
                host: PathBuf::from(host),
                guest: format!("/m{i}"),
                access: MountAccess::ReadWrite,
            })
            .collect()
    }

    #[test]
    fn mounts_stay_apart_from_each_other_and_from_plugins_and_cached_code() {
        let protected = ProtectedFolders {
            plugins: vec![PathBuf::from("/srv/plugins")],
            caches: vec![PathBuf::from("/home/op/.cache/warden")],
        };
        let own = Some(Path::new("/srv/plugins/notes"));
        let layout = |hosts: &[&str], own| check_mount_layout(&mounts(hosts), own, &protected);
        let refused = |hosts: &[&str], own| format!("{:#}", layout(hosts, own).unwrap_err());

        assert!(layout(&["/srv/a", "/srv/b", "/srv/ab"], None).is_ok());
        assert!(layout(&["/srv/plugins/notes/state", "/srv/plugins/notes/cache"], own).is_ok());
        assert!(layout(&["/home/op/.cache/other"], None).is_ok());

        let nested = refused(&["/srv/a", "/srv/a/inner"], None);
        assert!(
            nested.contains("`filesystem.\"/srv/a/inner\"` and `filesystem.\"/srv/a\"` overlap"),
            "{nested}"
        );
        assert!(refused(&["/srv/a/inner", "/srv/a"], None).contains("overlap"));
        assert!(refused(&["/srv/a", "/srv/a"], None).contains("overlap"));

        for cache_overlap in [
            "/home/op/.cache/warden",
            "/home/op/.cache",
            "/home/op/.cache/warden/x",
            "/",
        ] {
            let err = refused(&[cache_overlap], None);
            assert!(
                err.contains("overlaps the compiled-code cache folder /home/op/.cache/warden"),
                "{cache_overlap}: {err}"
            );
        }
        for holder in ["/srv/plugins", "/srv"] {
            let err = refused(&[holder], own);
            assert!(err.contains("holds the plugins folder /srv/plugins"), "{holder}: {err}");
        }
        for inside in [
            "/srv/plugins/notes",
            "/srv/plugins/other/state",
            "/srv/plugins/loose-folder",
        ] {
            let err = refused(&[inside], own);
            assert!(
                err.contains("is inside the plugins folder /srv/plugins"),
                "{inside}: {err}"
            );
            assert!(err.contains("a subfolder of its own folder"), "{err}");
        }
        // A bare `name.wasm` has no folder of its own to mount from.
        assert!(refused(&["/srv/plugins/notes/state"], None).contains("inside the plugins folder"));
        // Prefixes are whole components: /srv/plugins-data is not inside /srv/plugins.
        assert!(layout(&["/srv/plugins-data"], None).is_ok());
    }
}
