//! The compiled-code cache: native code for a component, kept on disk so a
//! restart or a reload of unchanged bytes does not pay for compilation again.
//!
//! An entry is `<dir>/<sha256 of the component>-<engine compatibility hash>.cwasm`.
//! The second half of the name changes with anything that makes compiled
//! code incompatible (the wasmtime version, the engine's settings, fuel
//! metering on or off), so the two engines of a `Runtime` never share an
//! entry. Entries are memory-mapped when loaded, so they are never rewritten
//! in place: a new entry is written to a temporary file and renamed, which
//! leaves any mapping of an older file intact.
//!
//! Entries are native code that runs as Warden, so nothing is loaded from a
//! folder or a file someone else could have written: the folder must be
//! Warden's user's own, not writable by group or others, and not a symlink
//! (checked once, when the cache is opened; every entry is then reached
//! through the folder's handle); each entry must be a regular file, the
//! user's own, not writable by group or others — checked on the opened file
//! that is then mapped, so it cannot be swapped in between.

use std::fs::{File, Metadata};
use std::hash::{Hash, Hasher};
use std::io::Write as _;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result, anyhow};
use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

use crate::bounded_file::{self, ReadError};
use crate::pinned::{self, PinnedDir};

/// Entries kept after pruning: plenty for every plugin of a few engines and
/// versions, small enough that the folder never grows without bound.
pub const MAX_ENTRIES: usize = 256;

/// Temporary files older than this are leftovers of a crash, not a write
/// still in progress.
const STALE_TEMPORARY: Duration = Duration::from_secs(3600);

/// Where a component's compiled code came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CodeOrigin {
    /// Compiled now (and written to the cache, when there is one).
    Compiled,
    /// Loaded from the on-disk cache.
    Cache,
    /// Taken from an already loaded plugin with the same bytes and engine.
    Reused,
    /// Compiled now by the baseline compiler (Winch), not cached: optimised
    /// code replaces it once compiled (see the loader's tiering).
    Baseline,
}

impl CodeOrigin {
    pub fn as_str(self) -> &'static str {
        match self {
            CodeOrigin::Compiled => "compiled",
            CodeOrigin::Cache => "cache",
            CodeOrigin::Reused => "reused",
            CodeOrigin::Baseline => "baseline",
        }
    }
}

/// The on-disk cache of compiled components.
#[derive(Debug, Clone)]
pub struct CodeCache {
    /// The folder as named, for messages.
    dir: PathBuf,
    /// The folder as checked when opened; every entry is reached through it.
    pinned: Arc<PinnedDir>,
    /// The last write failed (a full or read-only folder), and that was said.
    write_failing: Arc<AtomicBool>,
}

impl CodeCache {
    /// Opens (and creates, private to the user) the cache folder. A folder
    /// that someone other than Warden's user could write to is refused.
    pub fn open(dir: &Path) -> Result<Self> {
        create_private_dir(dir).with_context(|| format!("cannot create the cache folder {}", dir.display()))?;
        let pinned = PinnedDir::open(dir).map_err(|error| {
            if dir.is_symlink() {
                anyhow!(
                    "the compiled-code cache folder {} is a symlink; point --cache-dir at the folder itself",
                    dir.display()
                )
            } else {
                anyhow!("cannot open the compiled-code cache folder {}: {error}", dir.display())
            }
        })?;
        let metadata = pinned
            .metadata()
            .with_context(|| format!("cannot read the compiled-code cache folder {}", dir.display()))?;
        if let Some(reason) = untrusted(&metadata) {
            anyhow::bail!(
                "the compiled-code cache folder {} {reason}: whoever can write there can run code as Warden; \
                 make it private (`chown` it to Warden's user, `chmod 700`), or choose another --cache-dir",
                dir.display()
            );
        }
        Ok(Self {
            dir: dir.to_path_buf(),
            pinned: Arc::new(pinned),
            write_failing: Arc::default(),
        })
    }

    /// `$XDG_CACHE_HOME/warden`, else `~/.cache/warden`.
    pub fn default_dir() -> Option<PathBuf> {
        let xdg = std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute());
        let base = xdg.or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))?;
        Some(base.join("warden"))
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The entry for a component (by the sha256 of its bytes) on an engine.
    pub fn entry_path(&self, engine: &Engine, sha256: &str) -> PathBuf {
        self.dir.join(entry_name(engine, sha256))
    }

    /// Whether the cache holds an entry for a component on an engine (which
    /// may still turn out unusable when loaded).
    pub fn contains(&self, engine: &Engine, sha256: &str) -> bool {
        matches!(
            open_entry(&self.pinned.by_handle().join(entry_name(engine, sha256))),
            Ok(Some(_))
        )
    }

    /// Loads a component's code from the cache, or compiles it and stores
    /// the result. CPU-heavy on a miss: call it from a blocking thread.
    pub fn load_or_compile(&self, engine: &Engine, sha256: &str, bytes: &[u8]) -> Result<(Component, CodeOrigin)> {
        let name = entry_name(engine, sha256);
        let path = self.dir.join(&name);
        let entry = self.pinned.by_handle().join(&name);
        match open_entry(&entry) {
            Ok(None) => {}
            Ok(Some(file)) => {
                // SAFETY: `deserialize_file` trusts the file to be code that
                // wasmtime produced for a compatible engine and maps it into
                // memory. That holds here: the file just opened (and mapped
                // through its handle) is a regular file of Warden's user that
                // no one else can write, in a folder no one else can write;
                // entries are written only by Warden, always complete
                // (temporary file + rename) and never modified afterwards.
                // wasmtime still checks the header, the version and the engine
                // settings, so a truncated, foreign or stale file is an error,
                // handled below.
                match unsafe { Component::deserialize_file(engine, pinned::by_handle(&file)) } {
                    Ok(component) => {
                        // Pruning reads the modification time as "last used".
                        let _ = file.set_modified(SystemTime::now());
                        return Ok((component, CodeOrigin::Cache));
                    }
                    Err(error) => {
                        tracing::warn!(
                            "compiled-code cache entry {} is unusable ({error:#}); recompiling",
                            path.display()
                        );
                        let _ = std::fs::remove_file(&entry);
                    }
                }
            }
            Err(reason) => {
                tracing::warn!(
                    "compiled-code cache entry {} is not loaded: {reason}; recompiling and replacing it",
                    path.display()
                );
                let _ = std::fs::remove_file(&entry);
            }
        }
        let code = engine
            .precompile_component(bytes)
            .map_err(|e| crate::proposals::refusal(bytes, &e))?;
        match write_atomically(&entry, &code).with_context(|| format!("writing {}", path.display())) {
            Ok(file) => {
                if self.write_failing.swap(false, Ordering::Relaxed) {
                    tracing::info!("the compiled-code cache {} can be written again", self.dir.display());
                }
                // SAFETY: as above; this is the file just written from `code`,
                // mapped through the handle it was written with.
                match unsafe { Component::deserialize_file(engine, pinned::by_handle(&file)) } {
                    Ok(component) => return Ok((component, CodeOrigin::Compiled)),
                    Err(error) => {
                        tracing::warn!("cannot load the cache entry {} just written: {error:#}", path.display())
                    }
                }
            }
            Err(error) => {
                // Said once until a write succeeds again, not once per plugin.
                if !self.write_failing.swap(true, Ordering::Relaxed) {
                    tracing::warn!(
                        "cannot write the compiled-code cache entry: {error:#}; compiling in memory \
                         (this is said once, until the cache can be written again)"
                    );
                } else {
                    tracing::debug!("cannot write the compiled-code cache entry: {error:#}");
                }
            }
        }
        // SAFETY: `code` was produced by `precompile_component` on this very
        // engine a moment ago.
        let component = unsafe { Component::deserialize(engine, &code) }
            .map_err(|e| anyhow::anyhow!("cannot load the compiled component: {e:#}"))?;
        Ok((component, CodeOrigin::Compiled))
    }

    /// Removes leftover temporary files and all but the `keep` most recently
    /// used entries (a hit refreshes an entry's modification time). Removing
    /// an entry that is mapped is safe: the mapping keeps the old file alive.
    pub fn prune(&self, keep: usize) -> Result<usize> {
        let mut entries = Vec::new();
        let mut removed = 0;
        let now = SystemTime::now();
        for entry in std::fs::read_dir(self.pinned.by_handle())
            .with_context(|| format!("cannot read the cache folder {}", self.dir.display()))?
        {
            let Ok(entry) = entry else { continue };
            let path = entry.path();
            let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
                continue;
            };
            let modified = entry
                .metadata()
                .and_then(|m| m.modified())
                .unwrap_or(SystemTime::UNIX_EPOCH);
            if name.starts_with('.') && name.ends_with(".tmp") {
                if now.duration_since(modified).unwrap_or_default() > STALE_TEMPORARY
                    && std::fs::remove_file(&path).is_ok()
                {
                    removed += 1;
                }
            } else if name.ends_with(".cwasm") {
                entries.push((modified, path));
            }
        }
        entries.sort_by_key(|(modified, _)| std::cmp::Reverse(*modified));
        for (_, path) in entries.into_iter().skip(keep) {
            if std::fs::remove_file(&path).is_ok() {
                removed += 1;
            }
        }
        Ok(removed)
    }
}

/// A stable rendering of the engine's compatibility hash: `Hash` only
/// promises a value for the process, so the hashed bytes go through sha256.
/// Wasmtime hashes its version, the compiler and its settings, the tunables
/// and the enabled WebAssembly proposals: code compiled by another release
/// or under another configuration (a wider set of proposals) has another
/// name, and is never looked up.
pub fn compatibility_hash(engine: &Engine) -> String {
    struct Sha(Sha256);
    impl Hasher for Sha {
        fn finish(&self) -> u64 {
            unreachable!("only the digest is read")
        }
        fn write(&mut self, bytes: &[u8]) {
            self.0.update(bytes);
        }
    }
    let mut hasher = Sha(Sha256::new());
    engine.precompile_compatibility_hash().hash(&mut hasher);
    hex::encode(&hasher.0.finalize()[..8])
}

fn entry_name(engine: &Engine, sha256: &str) -> String {
    format!("{sha256}-{}.cwasm", compatibility_hash(engine))
}

/// Who besides the owner may write to a file or folder of mode `mode`
/// ("" for nobody).
pub fn writers(mode: u32) -> &'static str {
    match (mode & 0o020 != 0, mode & 0o002 != 0) {
        (true, true) => "its group and others",
        (true, false) => "its group",
        (false, true) => "others",
        (false, false) => "",
    }
}

/// Why a file or folder cannot be trusted with native code (or, for
/// `state_key`, with a secret), if it cannot: someone other than Warden's
/// user owns it or may write to it.
pub fn untrusted(metadata: &Metadata) -> Option<String> {
    // SAFETY: geteuid cannot fail and has no preconditions.
    let user = unsafe { libc::geteuid() };
    let writers = writers(metadata.mode());
    if metadata.uid() != user {
        Some(format!(
            "is owned by uid {}, not by Warden's user (uid {user})",
            metadata.uid()
        ))
    } else if !writers.is_empty() {
        Some(format!(
            "is writable by {writers} (mode {:03o})",
            metadata.mode() & 0o7777
        ))
    } else {
        None
    }
}

/// Opens a cache entry for mapping, if there is one and it can be trusted:
/// `Ok(None)` when there is none, `Err` saying why it cannot be trusted.
fn open_entry(path: &Path) -> std::result::Result<Option<File>, String> {
    // The one opener, not through a symlink: a regular file only, never
    // waiting on a FIFO planted in its place. It is mapped, not read, so no
    // bound on its size here.
    let file = match bounded_file::open_not_following(path) {
        Ok((file, _)) => file,
        Err(ReadError::Io(error)) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(ReadError::Io(error)) if error.raw_os_error() == Some(libc::ELOOP) => {
            return Err("it is a symlink".into());
        }
        Err(ReadError::Io(error)) => return Err(format!("it cannot be opened ({error})")),
        Err(ReadError::NotRegular) => return Err("it is not a regular file".into()),
        Err(error @ ReadError::TooLarge { .. }) => return Err(error.describe("it", path)),
    };
    let metadata = file.metadata().map_err(|e| format!("it cannot be read ({e})"))?;
    match untrusted(&metadata) {
        Some(reason) => Err(format!("it {reason}")),
        None => Ok(Some(file)),
    }
}

/// Writes a new entry: a private temporary file, renamed into place.
/// Returns the file, to map what was written (not whatever the name holds).
fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<File> {
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::other("a cache entry without a file name"))?;
    // Unique per process and write: two loaders may store the same entry at once.
    static WRITES: AtomicU64 = AtomicU64::new(0);
    let temporary = path.with_file_name(format!(
        ".{}.{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id(),
        WRITES.fetch_add(1, Ordering::Relaxed)
    ));
    // Creates Warden's own new private file (`create_new`, never an existing
    // one, never through a symlink): not a file anyone else names.
    #[allow(clippy::disallowed_methods)]
    let written = (|| {
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&temporary)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&temporary, path)?;
        Ok(file)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)
    }
    #[cfg(not(unix))]
    {
        std::fs::create_dir_all(dir)
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests read their own fixtures freely
mod tests {
    use super::*;

    /// The smallest valid component: the header alone.
    const EMPTY_COMPONENT: &[u8] = b"\0asm\x0d\0\x01\0";

    fn engine(fuel: bool) -> Engine {
        let mut config = wasmtime::Config::new();
        config.consume_fuel(fuel);
        Engine::new(&config).unwrap()
    }

    fn scratch() -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "warden-cache-test-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn misses_compile_and_write_then_hits_load() {
        let dir = scratch();
        let cache = CodeCache::open(&dir).unwrap();
        let engine = engine(false);
        let (_, origin) = cache.load_or_compile(&engine, "abc", EMPTY_COMPONENT).unwrap();
        assert_eq!(origin, CodeOrigin::Compiled);
        assert!(cache.entry_path(&engine, "abc").is_file());
        let (_, origin) = cache.load_or_compile(&engine, "abc", EMPTY_COMPONENT).unwrap();
        assert_eq!(origin, CodeOrigin::Cache);
        // Nothing but the entry: no temporary file left behind.
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn engines_with_different_settings_use_different_entries() {
        let dir = scratch();
        let cache = CodeCache::open(&dir).unwrap();
        let (plain, metered) = (engine(false), engine(true));
        assert_ne!(compatibility_hash(&plain), compatibility_hash(&metered));
        assert_eq!(compatibility_hash(&plain), compatibility_hash(&engine(false)));
        cache.load_or_compile(&plain, "abc", EMPTY_COMPONENT).unwrap();
        let (_, origin) = cache.load_or_compile(&metered, "abc", EMPTY_COMPONENT).unwrap();
        assert_eq!(origin, CodeOrigin::Compiled);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn corrupt_and_truncated_entries_are_recompiled() {
        let dir = scratch();
        let cache = CodeCache::open(&dir).unwrap();
        let engine = engine(false);
        cache.load_or_compile(&engine, "abc", EMPTY_COMPONENT).unwrap();
        let path = cache.entry_path(&engine, "abc");
        let good = std::fs::read(&path).unwrap();
        for broken in [good[..good.len() / 2].to_vec(), b"garbage".to_vec(), Vec::new()] {
            std::fs::write(&path, &broken).unwrap();
            let (_, origin) = cache.load_or_compile(&engine, "abc", EMPTY_COMPONENT).unwrap();
            assert_eq!(origin, CodeOrigin::Compiled);
            assert_eq!(std::fs::read(&path).unwrap(), good);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn set_mode(path: &Path, mode: u32) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    /// Running as root, a test can give a file to another user.
    fn give_away(path: &Path) -> bool {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return false;
        }
        std::os::unix::fs::lchown(path, Some(65534), Some(65534)).unwrap();
        true
    }

    #[test]
    fn a_folder_others_could_write_to_is_not_used() {
        let dir = scratch();
        CodeCache::open(&dir).unwrap();
        for (mode, writers) in [(0o777, "its group and others"), (0o770, "its group"), (0o703, "others")] {
            set_mode(&dir, mode);
            let err = format!("{:#}", CodeCache::open(&dir).unwrap_err());
            assert!(
                err.contains(&format!("is writable by {writers} (mode {mode:03o})")),
                "{err}"
            );
            assert!(err.contains("choose another --cache-dir"), "{err}");
        }
        set_mode(&dir, 0o755);
        assert!(CodeCache::open(&dir).is_ok(), "readable by others is fine");

        let link = dir.with_extension("link");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&dir, &link).unwrap();
        let err = format!("{:#}", CodeCache::open(&link).unwrap_err());
        assert!(err.contains("is a symlink"), "{err}");
        std::fs::remove_file(&link).unwrap();

        if give_away(&dir) {
            let err = format!("{:#}", CodeCache::open(&dir).unwrap_err());
            assert!(
                err.contains("is owned by uid 65534, not by Warden's user (uid 0)"),
                "{err}"
            );
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_entry_others_could_have_written_is_recompiled_and_replaced() {
        let dir = scratch();
        let cache = CodeCache::open(&dir).unwrap();
        let engine = engine(false);
        cache.load_or_compile(&engine, "abc", EMPTY_COMPONENT).unwrap();
        let path = cache.entry_path(&engine, "abc");
        let good = std::fs::read(&path).unwrap();
        let replaced = |path: &Path| {
            let (_, origin) = cache.load_or_compile(&engine, "abc", EMPTY_COMPONENT).unwrap();
            assert_eq!(origin, CodeOrigin::Compiled);
            let metadata = std::fs::symlink_metadata(path).unwrap();
            assert!(metadata.is_file());
            assert_eq!(metadata.mode() & 0o777, 0o600);
            assert_eq!(std::fs::read(path).unwrap(), good);
            let (_, origin) = cache.load_or_compile(&engine, "abc", EMPTY_COMPONENT).unwrap();
            assert_eq!(origin, CodeOrigin::Cache, "the replacement is used");
        };

        // Group- or world-writable: someone else may have written it.
        for mode in [0o666, 0o620, 0o602] {
            set_mode(&path, mode);
            assert_eq!(
                open_entry(&path).unwrap_err(),
                format!(
                    "it is writable by {} (mode {mode:03o})",
                    match mode {
                        0o666 => "its group and others",
                        0o620 => "its group",
                        _ => "others",
                    }
                )
            );
            replaced(&path);
        }
        // A symlink to an entry elsewhere, even a good one.
        let elsewhere = dir.with_extension("elsewhere");
        std::fs::write(&elsewhere, &good).unwrap();
        std::fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &path).unwrap();
        assert_eq!(open_entry(&path).unwrap_err(), "it is a symlink");
        replaced(&path);
        std::fs::remove_file(&elsewhere).unwrap();
        // A FIFO is refused without waiting for a writer.
        std::fs::remove_file(&path).unwrap();
        let fifo = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: a valid, NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        assert_eq!(open_entry(&path).unwrap_err(), "it is not a regular file");
        replaced(&path);
        // Another user's file, however private.
        if give_away(&path) {
            assert!(open_entry(&path).unwrap_err().contains("is owned by uid 65534"));
            replaced(&path);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn prune_keeps_the_most_recently_used() {
        let dir = scratch();
        let cache = CodeCache::open(&dir).unwrap();
        let old = SystemTime::now() - Duration::from_secs(7200);
        for (i, name) in ["a.cwasm", "b.cwasm", "c.cwasm"].iter().enumerate() {
            let path = dir.join(name);
            std::fs::write(&path, b"x").unwrap();
            let file = std::fs::File::options().append(true).open(&path).unwrap();
            file.set_modified(old + Duration::from_secs(i as u64)).unwrap();
        }
        std::fs::write(dir.join(".x.cwasm.1.tmp"), b"x").unwrap();
        let file = std::fs::File::options()
            .append(true)
            .open(dir.join(".x.cwasm.1.tmp"))
            .unwrap();
        file.set_modified(old).unwrap();
        std::fs::write(dir.join(".y.cwasm.2.tmp"), b"fresh: a write in progress").unwrap();
        assert_eq!(cache.prune(2).unwrap(), 2);
        let mut left: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, [".y.cwasm.2.tmp", "b.cwasm", "c.cwasm"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
