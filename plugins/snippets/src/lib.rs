//! `snippets`: a small built-in library of code snippets for Warden, offered through the
//! whole contract — a search tool, resources and a resource template, prompts, and
//! completions for their arguments.
//!
//! The snippets are compiled into the component; the plugin needs no capabilities.

mod library;

wit_bindgen::generate!({
    path: "../../wit",
    world: "warden:plugin/plugin",
});

use exports::warden::plugin::completions::{self, Reference};
use exports::warden::plugin::{prompts, resources, tools};
use library::{INDEX_URI, LANGUAGES, Snippet, TEMPLATE};
use serde::Deserialize;
use serde_json::{Value, json};
use warden::plugin::types::{
    CallResult, Content, Error, Prompt, PromptArgument, PromptMessage, PromptResult, ResourceBody, ResourceContents,
    ResourceInfo, ResourceTemplate, Role, Tool, ToolAnnotations,
};

struct Snippets;

impl tools::Guest for Snippets {
    fn list_tools() -> Vec<Tool> {
        vec![Tool {
            name: "find_snippets".to_string(),
            title: Some("Find snippets".to_string()),
            description: "Searches the built-in library of short code snippets (Python, Rust and shell) \
                          for `query`, ignoring case, in each snippet's name, title and code; `language` \
                          keeps only that language's snippets, and an empty query lists them all. Returns \
                          one `snippets://<language>/<name> — <title>` line per match; read a URI as a \
                          resource for the code, or use the `explain_snippet` prompt."
                .to_string(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "query": {
                        "type": "string",
                        "description": "Text to look for in the snippets' names, titles and code, ignoring case."
                    },
                    "language": {
                        "type": "string",
                        "enum": LANGUAGES,
                        "description": "Only search the snippets in this language."
                    }
                },
                "required": ["query"],
                "additionalProperties": false
            })
            .to_string(),
            output_schema: Some(
                json!({
                    "type": "object",
                    "properties": {
                        "matches": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "properties": {
                                    "uri": { "type": "string", "description": "Read it as a resource for the code." },
                                    "language": { "type": "string", "enum": LANGUAGES },
                                    "name": { "type": "string" },
                                    "title": { "type": "string" }
                                },
                                "required": ["uri", "language", "name", "title"],
                                "additionalProperties": false
                            }
                        }
                    },
                    "required": ["matches"],
                    "additionalProperties": false
                })
                .to_string(),
            ),
            annotations: Some(ToolAnnotations {
                title: Some("Find snippets".to_string()),
                read_only_hint: Some(true),
                destructive_hint: Some(false),
                idempotent_hint: Some(true),
                open_world_hint: Some(false),
            }),
        }]
    }

    fn call_tool(name: String, arguments: String) -> Result<CallResult, Error> {
        if name != "find_snippets" {
            return Err(Error::NotFound(format!(
                "the snippets plugin has no tool named {name:?}"
            )));
        }
        let args: FindArgs = serde_json::from_str(&arguments)
            .map_err(|e| Error::InvalidArguments(format!("the arguments do not match the tool's input schema: {e}")))?;
        if let Some(language) = args.language.as_deref()
            && !LANGUAGES.contains(&language)
        {
            return Err(Error::InvalidArguments(format!(
                "`language` must be one of {}; got {language:?}",
                LANGUAGES.join(", ")
            )));
        }
        let found = library::search(&args.query, args.language.as_deref());
        let text = if found.is_empty() {
            "no snippets match".to_string()
        } else {
            found
                .iter()
                .map(|s| format!("{} — {}", s.uri(), s.title))
                .collect::<Vec<_>>()
                .join("\n")
        };
        let matches: Vec<Value> = found
            .iter()
            .map(|s| json!({ "uri": s.uri(), "language": s.language, "name": s.name, "title": s.title }))
            .collect();
        Ok(CallResult {
            content: vec![Content::Text(text)],
            structured_content: Some(json!({ "matches": matches }).to_string()),
            is_error: false,
        })
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FindArgs {
    query: String,
    language: Option<String>,
}

impl resources::Guest for Snippets {
    fn list_resources() -> Vec<ResourceInfo> {
        vec![ResourceInfo {
            uri: INDEX_URI.to_string(),
            name: "index".to_string(),
            title: Some("Snippet index".to_string()),
            description: Some(
                "Every snippet in the library, by language, with its title and URI (Markdown).".to_string(),
            ),
            mime_type: Some("text/markdown".to_string()),
            size: Some(library::index_markdown().len() as u64),
        }]
    }

    fn list_resource_templates() -> Vec<ResourceTemplate> {
        vec![ResourceTemplate {
            uri_template: TEMPLATE.to_string(),
            name: "snippet".to_string(),
            title: Some("Snippet".to_string()),
            description: Some(format!(
                "The code of one snippet, as plain text. `language` is one of {}; {INDEX_URI} lists the names.",
                LANGUAGES.join(", ")
            )),
            mime_type: Some("text/plain".to_string()),
        }]
    }

    fn read_resource(uri: String) -> Result<Vec<ResourceContents>, Error> {
        if uri == INDEX_URI {
            return Ok(vec![ResourceContents {
                uri,
                mime_type: Some("text/markdown".to_string()),
                body: ResourceBody::Text(library::index_markdown()),
            }]);
        }
        match library::by_uri(&uri) {
            Some(snippet) => Ok(vec![contents(snippet)]),
            None => Err(Error::NotFound(library::not_found_message(&uri))),
        }
    }
}

fn contents(snippet: &Snippet) -> ResourceContents {
    ResourceContents {
        uri: snippet.uri(),
        mime_type: Some("text/plain".to_string()),
        body: ResourceBody::Text(snippet.code.to_string()),
    }
}

impl prompts::Guest for Snippets {
    fn list_prompts() -> Vec<Prompt> {
        vec![
            Prompt {
                name: "explain_snippet".to_string(),
                title: Some("Explain a snippet".to_string()),
                description: Some(
                    "Asks for a line-by-line explanation of one snippet from the library, with what could fail."
                        .to_string(),
                ),
                arguments: vec![
                    argument("language", &format!("One of {}.", LANGUAGES.join(", ")), true),
                    argument("name", "The snippet's name, e.g. read_file.", true),
                ],
            },
            Prompt {
                name: "review_code".to_string(),
                title: Some("Review code".to_string()),
                description: Some(
                    "Asks for a review of some code: bugs, unclear names, missing error handling.".to_string(),
                ),
                arguments: vec![
                    argument("code", "The code to review.", true),
                    argument("language", "The code's language, e.g. python.", false),
                ],
            },
        ]
    }

    fn get_prompt(name: String, arguments: Vec<(String, String)>) -> Result<PromptResult, Error> {
        let get = |key: &str| arguments.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str());
        let required = |key: &str| {
            get(key).ok_or_else(|| Error::InvalidArguments(format!("the {name} prompt needs the argument `{key}`")))
        };
        match name.as_str() {
            "explain_snippet" => {
                let language = required("language")?;
                let snippet_name = required("name")?;
                let snippet = library::lookup(language, snippet_name).map_err(Error::InvalidArguments)?;
                Ok(PromptResult {
                    description: Some(format!("Explain the {} snippet {}", snippet.language, snippet.name)),
                    messages: vec![
                        user(Content::EmbeddedResource(contents(snippet))),
                        user(Content::Text(library::explain_text(snippet.language))),
                    ],
                })
            }
            "review_code" => {
                let code = required("code")?;
                Ok(PromptResult {
                    description: Some("Review code".to_string()),
                    messages: vec![user(Content::Text(library::review_text(code, get("language"))))],
                })
            }
            _ => Err(Error::NotFound(format!(
                "the snippets plugin has no prompt named {name:?}; it has explain_snippet and review_code"
            ))),
        }
    }
}

fn argument(name: &str, description: &str, required: bool) -> PromptArgument {
    PromptArgument {
        name: name.to_string(),
        description: Some(description.to_string()),
        required,
    }
}

fn user(content: Content) -> PromptMessage {
    PromptMessage {
        role: Role::User,
        content,
    }
}

impl completions::Guest for Snippets {
    fn complete(reference: Reference, argument: String, value: String) -> Vec<String> {
        match &reference {
            Reference::Prompt(prompt) if prompt == "explain_snippet" => library::complete(&argument, &value),
            Reference::ResourceTemplate(template) if template == TEMPLATE => library::complete(&argument, &value),
            _ => Vec::new(),
        }
    }
}

export!(Snippets);
