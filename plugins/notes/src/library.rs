//! The notes folder itself, free of any wasm or WIT types.

use crate::Error;
use schemars::JsonSchema;
use serde::Serialize;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

/// Where the operator mounts the notes folder inside the sandbox.
pub const FOLDER: &str = "/notes";

/// Note names; checked by `check_name` before any path is built from one.
pub const NAME_PATTERN: &str = "^[A-Za-z0-9][A-Za-z0-9 _-]{0,63}$";

/// The most matches `search` returns.
pub const MAX_MATCHES: usize = 50;

/// Matched lines longer than this are cut, so one huge line cannot flood the answer.
const MAX_LINE_CHARS: usize = 300;

#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoteInfo {
    pub name: String,
    pub bytes: u64,
}

#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Match {
    pub name: String,
    #[schemars(range(min = 1))]
    pub line: usize,
    pub text: String,
}

#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Found {
    #[schemars(length(max = MAX_MATCHES))]
    pub matches: Vec<Match>,
    /// True when there were more matches than the 50 returned.
    pub truncated: bool,
}

/// The notes folder, when the operator mounted one.
pub fn folder() -> Result<PathBuf, Error> {
    match std::fs::metadata(FOLDER) {
        Ok(meta) if meta.is_dir() => Ok(PathBuf::from(FOLDER)),
        _ => Err(Error::Failed(
            "no notes folder is mounted: the operator must grant one in notes.toml \
             ([filesystem] ... mount = \"/notes\")"
                .into(),
        )),
    }
}

fn is_valid_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    (1..=64).contains(&bytes.len())
        && bytes[0].is_ascii_alphanumeric()
        && bytes
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || b == b' ' || b == b'_' || b == b'-')
}

fn check_name(name: &str) -> Result<(), Error> {
    if is_valid_name(name) {
        return Ok(());
    }
    Err(Error::InvalidArguments(format!(
        "{name:?} is not a valid note name: a name is 1 to 64 characters from A-Z, a-z, 0-9, \
         space, `_` and `-`, and starts with a letter or digit (leave out the `.md`)"
    )))
}

/// The file of a note whose name has been checked.
fn note_path(folder: &Path, name: &str) -> Result<PathBuf, Error> {
    check_name(name)?;
    Ok(folder.join(format!("{name}.md")))
}

/// The notes: `.md` files whose names follow the rule, sorted by name.
pub fn list(folder: &Path) -> Result<Vec<NoteInfo>, Error> {
    let entries =
        std::fs::read_dir(folder).map_err(|e| Error::Failed(format!("could not list the notes folder: {e}")))?;
    let mut notes = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::Failed(format!("could not list the notes folder: {e}")))?;
        let file_name = entry.file_name();
        let Some(name) = file_name.to_str().and_then(|n| n.strip_suffix(".md")) else {
            continue;
        };
        if !is_valid_name(name) {
            continue;
        }
        match std::fs::metadata(entry.path()) {
            Ok(meta) if meta.is_file() => notes.push(NoteInfo {
                name: name.to_string(),
                bytes: meta.len(),
            }),
            _ => continue,
        }
    }
    notes.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(notes)
}

pub fn read(folder: &Path, name: &str) -> Result<String, Error> {
    let path = note_path(folder, name)?;
    std::fs::read_to_string(path).map_err(|e| match e.kind() {
        ErrorKind::NotFound => Error::Failed(format!(
            "there is no note named {name:?}; list_notes shows the notes there are"
        )),
        ErrorKind::InvalidData => Error::Failed(format!("the note {name:?} is not UTF-8 text")),
        _ => Error::Failed(format!("could not read the note {name:?}: {e}")),
    })
}

/// Writes the note; true when it did not exist before.
pub fn write(folder: &Path, name: &str, content: &str) -> Result<bool, Error> {
    let path = note_path(folder, name)?;
    let created = !path.exists();
    std::fs::write(&path, content).map_err(|e| {
        let hint = match e.kind() {
            ErrorKind::PermissionDenied | ErrorKind::ReadOnlyFilesystem => {
                " (the operator may have granted the notes folder read-only)"
            }
            _ => "",
        };
        Error::Failed(format!("could not write the note {name:?}: {e}{hint}"))
    })?;
    Ok(created)
}

/// Fails, saying so, unless the note `name` exists.
pub fn check_exists(folder: &Path, name: &str) -> Result<(), Error> {
    let path = note_path(folder, name)?;
    match std::fs::metadata(&path) {
        Ok(meta) if meta.is_file() => Ok(()),
        _ => Err(Error::Failed(format!(
            "there is no note named {name:?}; list_notes shows the notes there are"
        ))),
    }
}

/// Deletes the note.
pub fn delete(folder: &Path, name: &str) -> Result<(), Error> {
    let path = note_path(folder, name)?;
    std::fs::remove_file(&path).map_err(|e| match e.kind() {
        ErrorKind::NotFound => Error::Failed(format!(
            "there is no note named {name:?}; list_notes shows the notes there are"
        )),
        ErrorKind::PermissionDenied | ErrorKind::ReadOnlyFilesystem => Error::Failed(format!(
            "could not delete the note {name:?}: {e} (the operator may have granted the notes folder read-only)"
        )),
        _ => Error::Failed(format!("could not delete the note {name:?}: {e}")),
    })
}

/// Lines containing `query`, ignoring case, in name and line order.
pub fn search(folder: &Path, query: &str) -> Result<Found, Error> {
    if query.is_empty() {
        return Err(Error::InvalidArguments("`query` must not be empty".into()));
    }
    let needle = query.to_lowercase();
    let mut found = Found {
        matches: Vec::new(),
        truncated: false,
    };
    for note in list(folder)? {
        // A note that vanished or cannot be read since listing is skipped, not fatal.
        let Ok(bytes) = std::fs::read(folder.join(format!("{}.md", note.name))) else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        for (index, line) in text.lines().enumerate() {
            if !line.to_lowercase().contains(&needle) {
                continue;
            }
            if found.matches.len() == MAX_MATCHES {
                found.truncated = true;
                return Ok(found);
            }
            let mut text: String = line.chars().take(MAX_LINE_CHARS).collect();
            if text.len() < line.len() {
                text.push('…');
            }
            found.matches.push(Match {
                name: note.name.clone(),
                line: index + 1,
                text,
            });
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(label: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("warden-notes-{label}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn message(error: Error) -> String {
        match error {
            Error::NotFound(m) | Error::InvalidArguments(m) | Error::Failed(m) => m,
        }
    }

    #[test]
    fn names() {
        for good in ["a", "Shopping list", "2024-06_plan", &"x".repeat(64)] {
            assert!(is_valid_name(good), "{good}");
        }
        for bad in [
            "",
            " a",
            "-a",
            "_a",
            "a.b",
            "../etc",
            "a/b",
            "a\\b",
            "é",
            &"x".repeat(65),
            "a\n",
        ] {
            assert!(!is_valid_name(bad), "{bad:?}");
            assert!(matches!(check_name(bad), Err(Error::InvalidArguments(_))));
        }
    }

    #[test]
    fn write_read_list_search() {
        let dir = scratch("cycle");
        assert!(write(&dir, "b", "Hello\nworld").unwrap());
        assert!(!write(&dir, "b", "Hello\nWorld, again\nbye").unwrap());
        assert!(write(&dir, "a", "nothing\nHELLO there").unwrap());
        std::fs::write(dir.join("skip.txt"), "hello").unwrap();
        std::fs::write(dir.join("not.valid.md"), "hello").unwrap();
        std::fs::create_dir(dir.join("folder.md")).unwrap();
        assert_eq!(read(&dir, "b").unwrap(), "Hello\nWorld, again\nbye");
        let names: Vec<(String, u64)> = list(&dir).unwrap().into_iter().map(|n| (n.name, n.bytes)).collect();
        assert_eq!(names, [("a".to_string(), 19), ("b".to_string(), 22)]);
        let found = search(&dir, "hello").unwrap();
        let lines: Vec<String> = found
            .matches
            .iter()
            .map(|m| format!("{}:{}: {}", m.name, m.line, m.text))
            .collect();
        assert_eq!(lines, ["a:2: HELLO there", "b:1: Hello"]);
        assert!(!found.truncated);
        assert!(message(read(&dir, "missing").err().unwrap()).starts_with("there is no note named \"missing\""));
        assert!(matches!(read(&dir, "../x"), Err(Error::InvalidArguments(_))));
        check_exists(&dir, "a").unwrap();
        delete(&dir, "a").unwrap();
        assert!(message(check_exists(&dir, "a").err().unwrap()).starts_with("there is no note named \"a\""));
        assert!(message(delete(&dir, "a").err().unwrap()).starts_with("there is no note named \"a\""));
        assert!(message(check_exists(&dir, "folder").err().unwrap()).starts_with("there is no note"));
        assert!(matches!(delete(&dir, "../b"), Err(Error::InvalidArguments(_))));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn search_stops_at_the_limit() {
        let dir = scratch("limit");
        write(&dir, "many", &"match\n".repeat(MAX_MATCHES + 1)).unwrap();
        let found = search(&dir, "MATCH").unwrap();
        assert_eq!(found.matches.len(), MAX_MATCHES);
        assert!(found.truncated);
        let exact = scratch("exact");
        write(&exact, "many", &"match\n".repeat(MAX_MATCHES)).unwrap();
        assert!(!search(&exact, "match").unwrap().truncated);
        std::fs::remove_dir_all(&dir).unwrap();
        std::fs::remove_dir_all(&exact).unwrap();
    }
}
