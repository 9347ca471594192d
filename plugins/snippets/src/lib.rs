//! `snippets`: a small built-in library of code snippets for Warden, offered through the
//! whole contract — a search tool, resources and a resource template, prompts, and
//! completions for their arguments.
//!
//! The snippets are compiled into the component; the plugin needs no capabilities.

mod library;

use library::{INDEX_URI, LANGUAGES, SCHEME, Snippet, TEMPLATE};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use warden_plugin::{
    Content, Error, PromptMessage, PromptResult, Reference, ResourceBody, ResourceContents, Role, Structured, prompt,
    resource, tool,
};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct FindArgs {
    /// Text to look for in the snippets' names, titles and code, ignoring case.
    query: String,
    /// Only search the snippets in this language.
    #[schemars(extend("enum" = LANGUAGES))]
    language: Option<String>,
}

#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Found {
    matches: Vec<Match>,
}

#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Match {
    /// Read it as a resource for the code.
    uri: String,
    #[schemars(extend("enum" = LANGUAGES))]
    language: &'static str,
    name: &'static str,
    title: &'static str,
}

/// Searches the built-in library of short code snippets (Python, Rust and shell) for
/// `query`, ignoring case, in each snippet's name, title and code; `language` keeps only
/// that language's snippets, and an empty query lists them all. Returns one
/// `snippets://<language>/<name> — <title>` line per match; read a URI as a resource for the
/// code, or use the `explain_snippet` prompt.
#[tool(
    title = "Find snippets",
    read_only,
    destructive = false,
    idempotent,
    open_world = false
)]
fn find_snippets(args: FindArgs) -> Result<Structured<Found>, Error> {
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
    let matches = found
        .iter()
        .map(|s| Match {
            uri: s.uri(),
            language: s.language,
            name: s.name,
            title: s.title,
        })
        .collect();
    Ok(Structured::new(text, Found { matches }))
}

/// Every snippet in the library, by language, with its title and URI (Markdown).
#[resource(uri = INDEX_URI, title = "Snippet index", mime_type = "text/markdown", size)]
fn index() -> String {
    library::index_markdown()
}

#[derive(Deserialize, JsonSchema)]
struct SnippetParams {
    language: String,
    name: String,
}

/// The code of one snippet, as plain text. `language` is one of python, rust, shell;
/// snippets://index lists the names.
#[resource(template = TEMPLATE, title = "Snippet", mime_type = "text/plain")]
fn snippet(params: SnippetParams) -> Result<Vec<ResourceContents>, Error> {
    match library::find(&params.language, &params.name) {
        Some(snippet) => Ok(vec![contents(snippet)]),
        None => Err(Error::NotFound(library::not_found_message(&format!(
            "{SCHEME}{}/{}",
            params.language, params.name
        )))),
    }
}

fn contents(snippet: &Snippet) -> ResourceContents {
    ResourceContents {
        uri: snippet.uri(),
        mime_type: Some("text/plain".to_string()),
        body: ResourceBody::Text(snippet.code.to_string()),
    }
}

#[derive(Deserialize, JsonSchema)]
struct ExplainArgs {
    /// One of python, rust, shell.
    language: String,
    /// The snippet's name, e.g. read_file.
    name: String,
}

/// Asks for a line-by-line explanation of one snippet from the library, with what could
/// fail.
#[prompt(title = "Explain a snippet")]
fn explain_snippet(args: ExplainArgs) -> Result<PromptResult, Error> {
    let snippet = library::lookup(&args.language, &args.name).map_err(Error::InvalidArguments)?;
    Ok(PromptResult {
        description: Some(format!("Explain the {} snippet {}", snippet.language, snippet.name)),
        messages: vec![
            PromptMessage {
                role: Role::User,
                content: Content::EmbeddedResource(contents(snippet)),
            },
            PromptMessage::user(library::explain_text(snippet.language)),
        ],
    })
}

#[derive(Deserialize, JsonSchema)]
struct ReviewArgs {
    /// The code to review.
    code: String,
    /// The code's language, e.g. python.
    language: Option<String>,
}

/// Asks for a review of some code: bugs, unclear names, missing error handling.
#[prompt(title = "Review code")]
fn review_code(args: ReviewArgs) -> PromptResult {
    PromptResult {
        description: Some("Review code".to_string()),
        messages: vec![PromptMessage::user(library::review_text(
            &args.code,
            args.language.as_deref(),
        ))],
    }
}

/// Languages and snippet names, for the prompt's and the template's arguments.
fn complete(reference: &Reference, argument: &str, value: &str) -> Vec<String> {
    match reference {
        Reference::Prompt(prompt) if prompt == "explain_snippet" => library::complete(argument, value),
        Reference::ResourceTemplate(template) if template == TEMPLATE => library::complete(argument, value),
        _ => Vec::new(),
    }
}

warden_plugin::export! {
    tools: [find_snippets],
    resources: [index, snippet],
    prompts: [explain_snippet, review_code],
    completions: complete,
}
