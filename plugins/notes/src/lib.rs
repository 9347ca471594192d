//! `notes`: a library of Markdown notes for Warden.
//!
//! The notes are the `*.md` files in one folder, which the operator mounts into the
//! sandbox at `/notes`. Without that grant every tool says how to add it. Note names are
//! checked against a strict rule before any path is built from them, so a name can never
//! reach outside the folder.
//!
//! Two tools ask the client for input (contract 0.2.0): `delete_note` asks the user to
//! confirm (a form with one boolean field), and `summarize_note` asks the client's model
//! for a summary (sampling). Each first checks that it may ask, and says so when it may not.

mod library;

use library::{NAME_PATTERN, NoteInfo};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use warden_plugin::{Error, Input, Interaction, SamplingRequest, Structured, can_ask, tool};

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

/// Deletes the note `name`, after the user confirms it in a form the client shows. Clients
/// that cannot show one (or a plugin not granted to ask) get a refusal instead: nothing is
/// deleted without the user's confirmation.
// Deleting twice leaves the folder as deleting once did (the second call says there is no
// such note).
#[tool(
    title = "Delete a note",
    read_only = false,
    destructive,
    idempotent,
    open_world = false
)]
fn delete_note(args: NameArgs, input: &mut Input) -> Result<String, Error> {
    let folder = library::folder()?;
    library::check_exists(&folder, &args.name)?;
    if input.answer(CONFIRM).is_none() && !can_ask(Interaction::ElicitForm) {
        return Err(Error::Failed(format!(
            "did not delete the note {:?}: deleting needs the user's confirmation, and it cannot be \
             asked for here (the client does not support form elicitation, or the operator has not \
             granted `[interaction] elicit` to this plugin)",
            args.name
        )));
    }
    match input.confirm(CONFIRM, &format!("Delete note {}?", args.name))? {
        Ok(true) => {
            library::delete(&folder, &args.name)?;
            Ok(format!("Deleted note {:?}.", args.name))
        }
        Ok(false) => Ok(format!(
            "Did not delete note {:?}: the user did not confirm (declined, cancelled or left unchecked).",
            args.name
        )),
        Err(refused) => Err(Error::Failed(format!(
            "did not delete the note {:?}: the confirmation could not be asked ({})",
            args.name, refused.0
        ))),
    }
}

/// The key of `delete_note`'s confirmation.
const CONFIRM: &str = "confirm";

/// The key of `summarize_note`'s sampling request.
const SUMMARY: &str = "summary";

/// The most characters of a note sent to the client's model.
const MAX_SUMMARY_INPUT_CHARS: usize = 20_000;

/// Summarizes the note `name` in a few sentences, by asking the client's model (sampling, at
/// most 200 tokens). Needs a client that supports sampling.
#[tool(
    title = "Summarize a note",
    read_only,
    destructive = false,
    idempotent = false,
    open_world = false
)]
fn summarize_note(args: NameArgs, input: &mut Input) -> Result<String, Error> {
    let text = library::read(&library::folder()?, &args.name)?;
    if input.answer(SUMMARY).is_none() && !can_ask(Interaction::Sample) {
        return Err(Error::Failed(format!(
            "cannot summarize the note {:?}: the client does not support sampling (or the operator \
             has not granted `[interaction] sample` to this plugin); read_note returns its text",
            args.name
        )));
    }
    let mut excerpt: String = text.chars().take(MAX_SUMMARY_INPUT_CHARS).collect();
    if excerpt.len() < text.len() {
        excerpt.push_str("\n\n[… the rest of the note is left out]");
    }
    let request = SamplingRequest::new(200)
        .system("You summarize Markdown notes in a few plain sentences. Answer with the summary only.")
        .user(format!("Summarize the note {:?}:\n\n{excerpt}", args.name));
    let answer = input.sample(SUMMARY, request)?.map_err(|refused| {
        Error::Failed(format!(
            "could not summarize the note {:?}: the client's model was not asked ({})",
            args.name, refused.0
        ))
    })?;
    match answer.text {
        Some(summary) if !summary.trim().is_empty() => Ok(summary.trim().to_string()),
        _ => Err(Error::Failed(format!(
            "could not summarize the note {:?}: the client's model answered without text",
            args.name
        ))),
    }
}

warden_plugin::export! { tools: [list_notes, read_note, write_note, search_notes, delete_note, summarize_note] }
