//! `--state-key-file`: the key that seals 2026-07-28 `requestState`s. Whoever
//! reads it can forge a state (answers to questions never asked), whoever
//! writes it can make every replica refuse the states in flight; so the file
//! is checked like the compiled-code cache's folder (`cache::untrusted`:
//! Warden's user's own, writable by nobody else) and, being a secret, must
//! not be readable by others either. A mounted secret (a Kubernetes Secret
//! volume: owned by root, group-readable for the pod's `fsGroup`) passes:
//! root may own it, and the group may read it when it is Warden's own group.
//!
//! The key is the file's text, trimmed. A key that is obviously weak is
//! refused: shorter than `MIN_BYTES`, fewer than `MIN_DISTINCT_BYTES`
//! different bytes (a letter repeated, a word typed twice), or a run of at
//! most `MAX_PERIOD` bytes repeated. `head -c 32 /dev/urandom | base64`
//! passes all three.

use std::collections::BTreeSet;
use std::fs::Metadata;
use std::io::Read as _;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use anyhow::{Context, Result, anyhow, bail};

use warden_runtime::bounded_file;
use warden_runtime::cache;

/// The shortest key accepted.
pub const MIN_BYTES: usize = 32;
/// The fewest different byte values a key may have (a hex key of 32 random
/// bytes has 16; base64, about 30).
pub const MIN_DISTINCT_BYTES: usize = 10;
/// A key made of one run of up to this many bytes repeated is refused.
pub const MAX_PERIOD: usize = 16;
/// The longest key file read.
const MAX_FILE_BYTES: u64 = 4096;

/// Reads and checks the key file at `path`.
pub fn load(path: &Path) -> Result<Vec<u8>> {
    let shown = path.display();
    // The one opener: a regular file only, never waiting on a FIFO planted
    // in its place.
    let (file, _) = bounded_file::open(path).map_err(|error| anyhow!(error.describe("the request-state key", path)))?;
    let metadata = file
        .metadata()
        .with_context(|| format!("cannot read the request-state key {shown}"))?;
    if let Some(why) = exposed(&metadata) {
        bail!(
            "the request-state key {shown} {why}: whoever can read it can forge requestStates, and whoever \
             can write it can break every call in flight; make it yours alone with `chmod 600 {shown}`"
        );
    }
    if metadata.len() > MAX_FILE_BYTES {
        bail!(
            "the request-state key {shown} is {} bytes; a key file holds one key (at most {MAX_FILE_BYTES} bytes)",
            metadata.len()
        );
    }
    let mut text = String::new();
    file.take(MAX_FILE_BYTES)
        .read_to_string(&mut text)
        .with_context(|| format!("cannot read the request-state key {shown} (it must be text, such as base64)"))?;
    let key = text.trim().as_bytes().to_vec();
    if let Some(why) = weakness(&key) {
        bail!(
            "the request-state key {shown} {why}; put a random key in it: \
             `head -c 32 /dev/urandom | base64 > {shown} && chmod 600 {shown}`"
        );
    }
    Ok(key)
}

/// Why the key file could be read or replaced by someone else, if it could.
fn exposed(metadata: &Metadata) -> Option<String> {
    let mode = metadata.mode();
    if metadata.uid() == 0 {
        // A mounted secret; only the write bits count (root reads anything).
        let writers = cache::writers(mode);
        if !writers.is_empty() {
            return Some(format!("is writable by {writers} (mode {:03o})", mode & 0o7777));
        }
    } else if let Some(why) = cache::untrusted(metadata) {
        return Some(why);
    }
    // SAFETY: getegid cannot fail and has no preconditions.
    let own_group = metadata.gid() == unsafe { libc::getegid() };
    let readers = match (mode & 0o040 != 0 && !own_group, mode & 0o004 != 0) {
        (true, true) => "its group and others",
        (true, false) => "its group",
        (false, true) => "others",
        (false, false) => return None,
    };
    Some(format!("is readable by {readers} (mode {:03o})", mode & 0o7777))
}

/// Why `key` is obviously weak, if it is.
pub fn weakness(key: &[u8]) -> Option<String> {
    if key.len() < MIN_BYTES {
        return Some(format!("holds {} bytes; use at least {MIN_BYTES}", key.len()));
    }
    let distinct = key.iter().collect::<BTreeSet<_>>().len();
    if distinct < MIN_DISTINCT_BYTES {
        return Some(format!(
            "has only {distinct} different bytes; a key needs at least {MIN_DISTINCT_BYTES}"
        ));
    }
    if let Some(period) = (1..=MAX_PERIOD).find(|&p| key.iter().skip(p).zip(key).all(|(a, b)| a == b)) {
        return Some(format!("repeats the same {period} bytes"));
    }
    None
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    const GOOD: &str = "q8Jb0v2lX3m9ZcT1yR4kWn6sPfA7eDgH+uOiK5LtM=";

    fn key_file(text: &str, mode: u32) -> tempfile::NamedTempFile {
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), text).unwrap();
        std::fs::set_permissions(file.path(), std::fs::Permissions::from_mode(mode)).unwrap();
        file
    }

    #[test]
    fn obviously_weak_keys_are_refused() {
        assert_eq!(weakness(GOOD.as_bytes()), None);
        // A hex key of 32 random bytes.
        assert_eq!(
            weakness(b"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"),
            None
        );
        let short = weakness(b"q8Jb0v2lX3m9ZcT1").unwrap();
        assert_eq!(short, "holds 16 bytes; use at least 32");
        let letters = weakness("a".repeat(32).as_bytes()).unwrap();
        assert_eq!(letters, "has only 1 different bytes; a key needs at least 10");
        assert!(
            weakness(b"abcabcabcabcabcabcabcabcabcabcabcabc")
                .unwrap()
                .contains("only 3 different")
        );
        let typed_twice = weakness(b"0123456789abcdef0123456789abcdef").unwrap();
        assert_eq!(typed_twice, "repeats the same 16 bytes");
    }

    #[test]
    fn a_key_file_others_may_read_or_write_is_refused_with_the_fix() {
        let file = key_file(GOOD, 0o600);
        assert_eq!(load(file.path()).unwrap(), GOOD.as_bytes());
        let trimmed = key_file(&format!("{GOOD}\n"), 0o400);
        assert_eq!(load(trimmed.path()).unwrap(), GOOD.as_bytes());
        // SAFETY: getegid has no preconditions.
        let own_group = unsafe { libc::getegid() };
        assert_eq!(
            std::fs::metadata(file.path()).unwrap().gid(),
            own_group,
            "a new file gets the process's group"
        );
        // Warden's own group may read it (a mounted secret with fsGroup).
        let group = key_file(GOOD, 0o640);
        assert!(load(group.path()).is_ok());
        for (mode, why) in [
            (0o644, "is readable by others (mode 644)"),
            (0o604, "is readable by others (mode 604)"),
            (0o620, "is writable by its group (mode 620)"),
            (0o602, "is writable by others (mode 602)"),
        ] {
            let file = key_file(GOOD, mode);
            let error = format!("{:#}", load(file.path()).unwrap_err());
            let shown = file.path().display().to_string();
            assert!(
                error.contains(&format!("the request-state key {shown} {why}")),
                "{error}"
            );
            assert!(error.contains(&format!("`chmod 600 {shown}`")), "{error}");
        }
        let weak = key_file(&"x".repeat(32), 0o600);
        let error = format!("{:#}", load(weak.path()).unwrap_err());
        assert!(error.contains("has only 1 different bytes"), "{error}");
        assert!(error.contains("head -c 32 /dev/urandom | base64"), "{error}");
        let missing = format!("{:#}", load(Path::new("/nonexistent/state-key")).unwrap_err());
        assert!(
            missing.contains("cannot read the request-state key /nonexistent/state-key"),
            "{missing}"
        );
    }
}
