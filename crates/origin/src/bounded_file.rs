//! Reading a file that an operator's folder or configuration names — a
//! component, a manifest, a secret, a key, a policy, an origin record — the
//! one way: a
//! regular file only, opened without waiting (a FIFO in its place would hold
//! the load, and with it every plugin's, until someone wrote to it), and read
//! up to a bound that also holds if the file grows while it is read.
//!
//! It is the only opener: the workspace's `clippy.toml` refuses
//! `std::fs::File::open`, `std::fs::read`, `std::fs::read_to_string`,
//! `std::fs::OpenOptions::open` and their `tokio::fs` twins everywhere else
//! (docs/security.md, "One opener for the operator's files").

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Why a file was not read. Its `Display` names the file, and what it is
/// (`what`: "the component", "the access policy") comes first.
#[derive(Debug)]
pub enum ReadError {
    Io(std::io::Error),
    NotRegular,
    TooLarge { max: u64 },
}

impl ReadError {
    /// The message, for a file called `what` at `path`.
    pub fn describe(&self, what: &str, path: &Path) -> String {
        let shown = path.display();
        match self {
            Self::Io(error) => format!("cannot read {what} {shown}: {error}"),
            Self::NotRegular => format!(
                "{what} {shown} is not a regular file (a FIFO, socket or device in its place); \
                 put the file itself there"
            ),
            Self::TooLarge { max } => format!("{what} {shown} is larger than {}, the most read", size(*max)),
        }
    }
}

fn size(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} bytes"),
    }
}

/// The regular file at `path`, opened for reading without waiting (a FIFO
/// in its place is refused, not waited on), with its size; for a reader
/// that streams it and bounds what it reads itself.
pub fn open(path: &Path) -> Result<(std::fs::File, u64), ReadError> {
    open_with(path, 0)
}

/// [`open`], refusing a symbolic link at `path` itself (`ELOOP`, as an
/// error): for copying files that must come from inside one folder.
pub fn open_not_following(path: &Path) -> Result<(std::fs::File, u64), ReadError> {
    open_with(path, libc::O_NOFOLLOW)
}

// The one place a file is opened for reading: the lint that sends every
// other caller here cannot apply to the opener itself.
#[allow(clippy::disallowed_methods)]
fn open_with(path: &Path, flags: libc::c_int) -> Result<(std::fs::File, u64), ReadError> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC | flags)
        .open(path)
        .map_err(ReadError::Io)?;
    let metadata = file.metadata().map_err(ReadError::Io)?;
    if !metadata.is_file() {
        return Err(ReadError::NotRegular);
    }
    Ok((file, metadata.len()))
}

/// The bytes of the regular file at `path`, at most `max` of them.
pub fn read(path: &Path, max: u64) -> Result<Vec<u8>, ReadError> {
    let (file, len) = open(path)?;
    if len > max {
        return Err(ReadError::TooLarge { max });
    }
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(max.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > max {
        return Err(ReadError::TooLarge { max });
    }
    Ok(bytes)
}

/// [`read`], with the error as `anyhow`'s, described for `what`.
pub fn read_named(path: &Path, max: u64, what: &str) -> anyhow::Result<Vec<u8>> {
    read(path, max).map_err(|error| anyhow::anyhow!(error.describe(what, path)))
}

/// [`read_named`], as UTF-8 text.
pub fn read_text(path: &Path, max: u64, what: &str) -> anyhow::Result<String> {
    String::from_utf8(read_named(path, max, what)?)
        .map_err(|_| anyhow::anyhow!("{what} {} is not UTF-8 text", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_is_refused_without_waiting_for_a_writer() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("plugin.wasm");
        let name = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        let error = read(&fifo, 1 << 20).unwrap_err();
        assert!(matches!(error, ReadError::NotRegular), "{error:?}");
        let message = error.describe("the component", &fifo);
        assert!(message.contains("is not a regular file"), "{message}");
        let error = read(dir.path(), 1 << 20).unwrap_err();
        assert!(matches!(error, ReadError::NotRegular), "a folder: {error:?}");
    }

    #[test]
    fn a_file_over_the_bound_is_refused_and_one_at_it_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("manifest.toml");
        std::fs::write(&path, vec![b'a'; 1024]).unwrap();
        assert_eq!(read(&path, 1024).unwrap().len(), 1024);
        let error = read(&path, 1023).unwrap_err();
        assert_eq!(
            error.describe("the manifest", &path),
            format!(
                "the manifest {} is larger than 1023 bytes, the most read",
                path.display()
            )
        );
        assert!(matches!(read(&dir.path().join("missing"), 1), Err(ReadError::Io(_))));
    }
}
