//! A plugins folder as the operator named it: the path, not the folder it
//! resolved to at start. Deploy scripts remove and recreate the folder, swap
//! a `current -> releases/r2` symlink, remount a volume; each leaves the old
//! folder (or nothing) behind the watch. So the path is resolved again on
//! every reconcile and once a second (`FOLLOW_EVERY`), and when it names
//! another folder than before — another path, or the same path with another
//! device and inode — the reconciler watches that one and loads what it holds.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How often the named paths are resolved again without an event: one
/// `canonicalize` and one `stat` per folder, nothing measurable at rest.
pub const FOLLOW_EVERY: Duration = Duration::from_secs(1);

/// One plugins folder: as named, and as resolved last.
#[derive(Debug)]
pub struct RootFolder {
    /// As the operator wrote it (made absolute).
    named: PathBuf,
    /// What it resolved to last: the path events are reported under.
    resolved: PathBuf,
    /// The resolved folder's device and inode; `None` while it is missing.
    identity: Option<(u64, u64)>,
}

/// What resolving a folder's name again found.
#[derive(Debug, PartialEq, Eq)]
pub enum Followed {
    /// The same folder as before.
    Same,
    /// Another folder (or the same one, back after it was missing): watch
    /// `now` instead of `before` and look at everything in it.
    Moved { before: PathBuf, now: PathBuf },
    /// The name resolves to no readable folder now (and did before).
    Gone(String),
    /// Still missing.
    StillGone,
}

impl RootFolder {
    pub fn new(named: &Path) -> Self {
        let named = std::path::absolute(named).unwrap_or_else(|_| named.to_path_buf());
        let (resolved, identity) = match resolve(&named) {
            Ok((resolved, identity)) => (resolved, Some(identity)),
            Err(_) => (named.clone(), None),
        };
        Self {
            named,
            resolved,
            identity,
        }
    }

    pub fn named(&self) -> &Path {
        &self.named
    }

    /// The folder the name resolved to last.
    pub fn resolved(&self) -> &Path {
        &self.resolved
    }

    /// The folder holding the name, watched (not recursively) so that a
    /// removal, a re-creation or a symlink swap there is seen at once.
    pub fn parent(&self) -> Option<PathBuf> {
        let parent = self.named.parent()?;
        Some(parent.canonicalize().unwrap_or_else(|_| parent.to_path_buf()))
    }

    /// Resolves the name again. `renewed`: an event said the folder itself
    /// was created or removed, so it is another folder even if it looks the
    /// same (a file system may give a new folder the inode number of the
    /// one just removed).
    pub fn follow(&mut self, renewed: bool) -> Followed {
        match resolve(&self.named) {
            Ok((now, identity)) => {
                if now == self.resolved && Some(identity) == self.identity && !renewed {
                    return Followed::Same;
                }
                let before = std::mem::replace(&mut self.resolved, now.clone());
                self.identity = Some(identity);
                Followed::Moved { before, now }
            }
            Err(why) => match self.identity.take() {
                Some(_) => Followed::Gone(why),
                None => Followed::StillGone,
            },
        }
    }
}

/// The folder `named` resolves to, with its device and inode.
fn resolve(named: &Path) -> Result<(PathBuf, (u64, u64)), String> {
    let resolved = named.canonicalize().map_err(|e| e.to_string())?;
    let metadata = std::fs::metadata(&resolved).map_err(|e| e.to_string())?;
    if !metadata.is_dir() {
        return Err("it is not a folder".into());
    }
    Ok((resolved, (metadata.dev(), metadata.ino())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recreated_folder_and_a_swapped_symlink_are_followed() {
        let base = std::env::temp_dir().join(format!("warden-root-folder-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(&base).unwrap();
        let base_path = base.canonicalize().unwrap();
        let plugins = base_path.join("plugins");
        std::fs::create_dir(&plugins).unwrap();
        let mut root = RootFolder::new(&plugins);
        assert_eq!(root.follow(false), Followed::Same);
        assert_eq!(
            root.follow(true),
            Followed::Moved {
                before: plugins.clone(),
                now: plugins.clone()
            },
            "an event said so"
        );

        std::fs::remove_dir(&plugins).unwrap();
        assert!(matches!(root.follow(false), Followed::Gone(_)));
        assert_eq!(root.follow(false), Followed::StillGone);
        std::fs::create_dir(&plugins).unwrap();
        assert_eq!(
            root.follow(false),
            Followed::Moved {
                before: plugins.clone(),
                now: plugins.clone()
            }
        );
        assert_eq!(root.follow(false), Followed::Same);

        // The release-folder layout: `current -> r1`, then `current -> r2` by rename.
        for release in ["r1", "r2"] {
            std::fs::create_dir(base_path.join(release)).unwrap();
        }
        let current = base_path.join("current");
        std::os::unix::fs::symlink("r1", &current).unwrap();
        let mut root = RootFolder::new(&current);
        assert_eq!(root.resolved(), base_path.join("r1"));
        std::os::unix::fs::symlink("r2", base_path.join("current.tmp")).unwrap();
        std::fs::rename(base_path.join("current.tmp"), &current).unwrap();
        assert_eq!(
            root.follow(false),
            Followed::Moved {
                before: base_path.join("r1"),
                now: base_path.join("r2")
            }
        );
        assert_eq!(root.parent().as_deref(), Some(base_path.as_path()));
        std::fs::remove_dir_all(&base).unwrap();
    }
}
