//! `notes`: a library of Markdown notes for Warden.
//!
//! The notes are the `*.md` files in one folder, which the operator mounts into the
//! sandbox at `/notes`. Without that grant every tool says how to add it. Note names are
//! checked against a strict rule before any path is built from them, so a name can never
//! reach outside the folder.

mod library;

use library::{NAME_PATTERN, NoteInfo};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use warden_plugin::{Error, Structured, tool};

#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoteList {
    notes: Vec<NoteInfo>,
}

/// Lists the notes in the notes folder, sorted by name, with their sizes in bytes.
#[tool(title = "List notes", read_only, destructive = false, idempotent, open_world = false)]
fn list_notes() -> Result<Structured<NoteList>, Error> {
    let notes = library::list(&library::folder()?)?;
    let text = if notes.is_empty() {
        "There are no notes yet.".to_string()
    } else {
        let lines: Vec<String> = notes
            .iter()
            .map(|n| format!("{} ({} bytes)", n.name, n.bytes))
            .collect();
        lines.join("\n")
    };
    Ok(Structured::new(text, NoteList { notes }))
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NameArgs {
    /// The note's name, without `.md`: 1 to 64 characters, letters, digits, spaces, `_` and `-`, starting with a letter or digit.
    #[schemars(regex(pattern = NAME_PATTERN))]
    name: String,
}

/// Returns the Markdown text of the note `name` (its name without `.md`, as list_notes shows
/// it).
#[tool(
    title = "Read a note",
    read_only,
    destructive = false,
    idempotent,
    open_world = false
)]
fn read_note(args: NameArgs) -> Result<String, Error> {
    library::read(&library::folder()?, &args.name)
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct WriteArgs {
    /// The note's name, without `.md`: 1 to 64 characters, letters, digits, spaces, `_` and `-`, starting with a letter or digit.
    #[schemars(regex(pattern = NAME_PATTERN))]
    name: String,
    /// The note's full Markdown text.
    content: String,
}

/// Saves `content` as the note `name` (the file `<name>.md`), creating it, or replacing the
/// whole of an existing note with that name.
// Writing replaces a note's text: destructive, but the same write twice changes nothing more.
#[tool(
    title = "Write a note",
    read_only = false,
    destructive,
    idempotent,
    open_world = false
)]
fn write_note(args: WriteArgs) -> Result<String, Error> {
    let created = library::write(&library::folder()?, &args.name, &args.content)?;
    let verb = if created { "Created" } else { "Replaced" };
    Ok(format!("{verb} note {:?} ({} bytes).", args.name, args.content.len()))
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    /// The text to look for.
    #[schemars(length(min = 1))]
    query: String,
}

/// Finds the lines of all notes that contain `query`, ignoring case. Returns up to 50
/// matches as `name:line: text`, in name and line order.
#[tool(
    title = "Search notes",
    read_only,
    destructive = false,
    idempotent,
    open_world = false
)]
fn search_notes(args: SearchArgs) -> Result<Structured<library::Found>, Error> {
    let found = library::search(&library::folder()?, &args.query)?;
    let mut lines: Vec<String> = found
        .matches
        .iter()
        .map(|m| format!("{}:{}: {}", m.name, m.line, m.text))
        .collect();
    if lines.is_empty() {
        lines.push(format!("No note contains {:?}.", args.query));
    } else if found.truncated {
        lines.push(format!(
            "(only the first {} matches are shown; search for something more specific)",
            library::MAX_MATCHES
        ));
    }
    Ok(Structured::new(lines.join("\n"), found))
}

warden_plugin::export! { tools: [list_notes, read_note, write_note, search_notes] }
