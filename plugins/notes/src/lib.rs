//! `notes`: a library of Markdown notes for Warden.
//!
//! The notes are the `*.md` files in one folder, which the operator mounts into the
//! sandbox at `/notes`. Without that grant every tool says how to add it. Note names are
//! checked against a strict rule before any path is built from them, so a name can never
//! reach outside the folder.

mod library;

wit_bindgen::generate!({
    path: "../../wit",
    world: "warden:plugin/tool-plugin",
});

use exports::warden::plugin::tools::Guest;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use warden::plugin::types::{CallResult, Content, Error, Tool, ToolAnnotations};

struct Notes;

fn name_property() -> Value {
    json!({
        "type": "string",
        "pattern": library::NAME_PATTERN,
        "description": "The note's name, without `.md`: 1 to 64 characters, letters, digits, spaces, `_` and `-`, starting with a letter or digit."
    })
}

impl Guest for Notes {
    fn list_tools() -> Vec<Tool> {
        vec![
            tool(
                "list_notes",
                "List notes",
                "Lists the notes in the notes folder, sorted by name, with their sizes in bytes.",
                json!({ "type": "object", "properties": {}, "required": [], "additionalProperties": false }),
                Some(json!({
                    "type": "object",
                    "properties": {
                        "notes": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "properties": {
                                    "name": { "type": "string" },
                                    "bytes": { "type": "integer", "minimum": 0 }
                                },
                                "required": ["name", "bytes"],
                                "additionalProperties": false
                            }
                        }
                    },
                    "required": ["notes"],
                    "additionalProperties": false
                })),
                Hints::READ_ONLY,
            ),
            tool(
                "read_note",
                "Read a note",
                "Returns the Markdown text of the note `name` (its name without `.md`, as list_notes shows it).",
                json!({
                    "type": "object",
                    "properties": { "name": name_property() },
                    "required": ["name"],
                    "additionalProperties": false
                }),
                None,
                Hints::READ_ONLY,
            ),
            tool(
                "write_note",
                "Write a note",
                "Saves `content` as the note `name` (the file `<name>.md`), creating it, or replacing \
                 the whole of an existing note with that name.",
                json!({
                    "type": "object",
                    "properties": {
                        "name": name_property(),
                        "content": { "type": "string", "description": "The note's full Markdown text." }
                    },
                    "required": ["name", "content"],
                    "additionalProperties": false
                }),
                None,
                Hints::WRITE,
            ),
            tool(
                "search_notes",
                "Search notes",
                "Finds the lines of all notes that contain `query`, ignoring case. Returns up to 50 \
                 matches as `name:line: text`, in name and line order.",
                json!({
                    "type": "object",
                    "properties": {
                        "query": { "type": "string", "minLength": 1, "description": "The text to look for." }
                    },
                    "required": ["query"],
                    "additionalProperties": false
                }),
                Some(json!({
                    "type": "object",
                    "properties": {
                        "matches": {
                            "type": "array",
                            "maxItems": library::MAX_MATCHES,
                            "items": {
                                "type": "object",
                                "properties": {
                                    "name": { "type": "string" },
                                    "line": { "type": "integer", "minimum": 1 },
                                    "text": { "type": "string" }
                                },
                                "required": ["name", "line", "text"],
                                "additionalProperties": false
                            }
                        },
                        "truncated": {
                            "type": "boolean",
                            "description": "True when there were more matches than the 50 returned."
                        }
                    },
                    "required": ["matches", "truncated"],
                    "additionalProperties": false
                })),
                Hints::READ_ONLY,
            ),
        ]
    }

    fn call_tool(name: String, arguments: String) -> Result<CallResult, Error> {
        match name.as_str() {
            "list_notes" => {
                let _: NoArgs = parse(&arguments)?;
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
                let list: Vec<Value> = notes
                    .iter()
                    .map(|n| json!({ "name": n.name, "bytes": n.bytes }))
                    .collect();
                Ok(structured(text, json!({ "notes": list })))
            }
            "read_note" => {
                let args: NameArgs = parse(&arguments)?;
                let text = library::read(&library::folder()?, &args.name)?;
                Ok(plain(text))
            }
            "write_note" => {
                let args: WriteArgs = parse(&arguments)?;
                let created = library::write(&library::folder()?, &args.name, &args.content)?;
                let verb = if created { "Created" } else { "Replaced" };
                Ok(plain(format!(
                    "{verb} note {:?} ({} bytes).",
                    args.name,
                    args.content.len()
                )))
            }
            "search_notes" => {
                let args: SearchArgs = parse(&arguments)?;
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
                let matches: Vec<Value> = found
                    .matches
                    .iter()
                    .map(|m| json!({ "name": m.name, "line": m.line, "text": m.text }))
                    .collect();
                Ok(structured(
                    lines.join("\n"),
                    json!({ "matches": matches, "truncated": found.truncated }),
                ))
            }
            _ => Err(Error::NotFound(format!("the notes plugin has no tool named {name:?}"))),
        }
    }
}

export!(Notes);

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NameArgs {
    name: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WriteArgs {
    name: String,
    content: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    query: String,
}

/// The host checks arguments against the input schema before calling; this is the backstop.
fn parse<T: DeserializeOwned>(arguments: &str) -> Result<T, Error> {
    serde_json::from_str(arguments)
        .map_err(|e| Error::InvalidArguments(format!("the arguments do not match the tool's input schema: {e}")))
}

fn plain(text: String) -> CallResult {
    CallResult {
        content: vec![Content::Text(text)],
        structured_content: None,
        is_error: false,
    }
}

fn structured(text: String, value: Value) -> CallResult {
    CallResult {
        content: vec![Content::Text(text)],
        structured_content: Some(value.to_string()),
        is_error: false,
    }
}

struct Hints {
    read_only: bool,
    destructive: bool,
    idempotent: bool,
}

impl Hints {
    const READ_ONLY: Self = Self {
        read_only: true,
        destructive: false,
        idempotent: true,
    };
    /// Writing replaces a note's text: destructive, but the same write twice changes nothing more.
    const WRITE: Self = Self {
        read_only: false,
        destructive: true,
        idempotent: true,
    };
}

fn tool(name: &str, title: &str, description: &str, input: Value, output: Option<Value>, hints: Hints) -> Tool {
    Tool {
        name: name.to_string(),
        title: Some(title.to_string()),
        description: description.to_string(),
        input_schema: input.to_string(),
        output_schema: output.map(|schema| schema.to_string()),
        annotations: Some(ToolAnnotations {
            title: Some(title.to_string()),
            read_only_hint: Some(hints.read_only),
            destructive_hint: Some(hints.destructive),
            idempotent_hint: Some(hints.idempotent),
            open_world_hint: Some(false),
        }),
    }
}
