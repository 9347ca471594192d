//! `text`: text utilities for Warden — statistics, case conversion and URL slugs.
//!
//! Everything here is pure and deterministic; the plugin needs no capabilities.

mod case;
mod slug;
mod stats;

wit_bindgen::generate!({
    path: "../../wit",
    world: "warden:plugin/tool-plugin",
});

use exports::warden::plugin::tools::Guest;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use warden::plugin::types::{CallResult, Content, Error, Tool, ToolAnnotations};

struct Text;

impl Guest for Text {
    fn list_tools() -> Vec<Tool> {
        vec![
            tool(
                "text_stats",
                "Text statistics",
                "Counts the characters (Unicode scalar values), UTF-8 bytes, words \
                 (runs of non-whitespace), lines and sentences in a text. A sentence ends \
                 at `.`, `!`, `?` or `…` followed by whitespace or the end of the text, so \
                 abbreviations like \"Dr.\" count as a sentence end. Use it to check length \
                 limits or to describe a document.",
                json!({
                    "type": "object",
                    "properties": {
                        "text": { "type": "string", "description": "The text to measure." }
                    },
                    "required": ["text"],
                    "additionalProperties": false
                }),
                Some(json!({
                    "type": "object",
                    "properties": {
                        "characters": { "type": "integer", "minimum": 0, "description": "Unicode scalar values." },
                        "bytes": { "type": "integer", "minimum": 0, "description": "Length in UTF-8 bytes." },
                        "words": { "type": "integer", "minimum": 0 },
                        "lines": { "type": "integer", "minimum": 0 },
                        "sentences": { "type": "integer", "minimum": 0 }
                    },
                    "required": ["characters", "bytes", "words", "lines", "sentences"],
                    "additionalProperties": false
                })),
            ),
            tool(
                "change_case",
                "Change case",
                "Rewrites a text in another letter case. `upper` and `lower` change every \
                 letter and keep everything else. The other cases first split the text into \
                 words at spaces, punctuation and case changes (\"parseHTTPRequest\" is \
                 parse, HTTP, Request) and join them again: `title` gives \"Parse Http \
                 Request\", `snake` \"parse_http_request\", `kebab` \"parse-http-request\", \
                 `camel` \"parseHttpRequest\", `pascal` \"ParseHttpRequest\" and `constant` \
                 \"PARSE_HTTP_REQUEST\".",
                json!({
                    "type": "object",
                    "properties": {
                        "text": { "type": "string", "description": "The text to convert." },
                        "case": {
                            "type": "string",
                            "enum": case::CASES,
                            "description": "The case to convert to."
                        }
                    },
                    "required": ["text", "case"],
                    "additionalProperties": false
                }),
                None,
            ),
            tool(
                "slugify",
                "Slugify",
                "Turns a title or phrase into a URL slug: lowercase ASCII letters and digits \
                 joined by a separator, e.g. \"Crème Brûlée: A How-To!\" becomes \
                 \"creme-brulee-a-how-to\". Accented Latin letters are transliterated, \
                 apostrophes are dropped, other characters separate words. Letters with no \
                 ASCII form (e.g. Cyrillic, CJK) are dropped unless `allow_unicode` is true. \
                 `max_length` shortens the slug at a word boundary when it can.",
                json!({
                    "type": "object",
                    "properties": {
                        "text": { "type": "string", "description": "The text to turn into a slug." },
                        "separator": {
                            "type": "string",
                            "enum": ["-", "_"],
                            "default": "-",
                            "description": "What goes between words."
                        },
                        "max_length": {
                            "type": "integer",
                            "minimum": 1,
                            "maximum": 1000,
                            "description": "Longest slug wanted, in characters."
                        },
                        "allow_unicode": {
                            "type": "boolean",
                            "default": false,
                            "description": "Keep letters and digits that have no ASCII form (lowercased) instead of dropping them."
                        }
                    },
                    "required": ["text"],
                    "additionalProperties": false
                }),
                None,
            ),
        ]
    }

    fn call_tool(name: String, arguments: String) -> Result<CallResult, Error> {
        match name.as_str() {
            "text_stats" => {
                let args: TextArgs = parse(&arguments)?;
                let stats = stats::Stats::of(&args.text);
                Ok(structured(stats.describe(), stats.to_json()))
            }
            "change_case" => {
                let args: ChangeCaseArgs = parse(&arguments)?;
                let case = case::Case::from_name(&args.case).ok_or_else(|| {
                    Error::InvalidArguments(format!(
                        "`case` must be one of {}; got {:?}",
                        case::CASES.join(", "),
                        args.case
                    ))
                })?;
                case.convert(&args.text).map(plain).map_err(Error::InvalidArguments)
            }
            "slugify" => {
                let args: SlugifyArgs = parse(&arguments)?;
                let separator = match args.separator.as_deref() {
                    None | Some("-") => '-',
                    Some("_") => '_',
                    Some(other) => {
                        return Err(Error::InvalidArguments(format!(
                            "`separator` must be \"-\" or \"_\"; got {other:?}"
                        )));
                    }
                };
                let options = slug::Options {
                    separator,
                    max_length: args.max_length,
                    allow_unicode: args.allow_unicode.unwrap_or(false),
                };
                slug::slugify(&args.text, &options)
                    .map(plain)
                    .map_err(Error::InvalidArguments)
            }
            _ => Err(Error::NotFound(format!("the text plugin has no tool named {name:?}"))),
        }
    }
}

export!(Text);

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TextArgs {
    text: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ChangeCaseArgs {
    text: String,
    case: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SlugifyArgs {
    text: String,
    separator: Option<String>,
    max_length: Option<usize>,
    allow_unicode: Option<bool>,
}

/// The host checks arguments against the input schema before calling; this is the backstop.
fn parse<T: DeserializeOwned>(arguments: &str) -> Result<T, Error> {
    serde_json::from_str(arguments)
        .map_err(|e| Error::InvalidArguments(format!("the arguments do not match the tool's input schema: {e}")))
}

fn tool(name: &str, title: &str, description: &str, input: Value, output: Option<Value>) -> Tool {
    Tool {
        name: name.to_string(),
        title: Some(title.to_string()),
        description: description.to_string(),
        input_schema: input.to_string(),
        output_schema: output.map(|schema| schema.to_string()),
        annotations: Some(ToolAnnotations {
            title: Some(title.to_string()),
            read_only_hint: Some(true),
            destructive_hint: Some(false),
            idempotent_hint: Some(true),
            open_world_hint: Some(false),
        }),
    }
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
