//! A plugin's answer to one round of a call, whatever version it speaks.

use serde_json::Value;

use super::types;

/// A plugin's answer to one round of a call: done, or "I need input first"
/// (contract 0.2.0 and later). `A` is what the caller made of the requests
/// while the call still held its slot (see `Ask`).
#[derive(Debug)]
pub enum Reply<T, A = types::InputRequired> {
    Done(T),
    InputRequired(A),
}

/// Turns a plugin's "I need input first" into what the caller needs, inside
/// `Runtime::invoke`: while the call holds its concurrency slot and runs
/// under its time limit, so the host's work on the plugin's requests is
/// bounded like the plugin's own.
pub type Ask<'a, A> = &'a (dyn Fn(types::InputRequired) -> A + Sync);

pub type ToolReply<A> = Result<Reply<ToolResult, A>, types::Error>;

/// A tool's successful answer in the host's terms. A contract plugin's
/// structured content arrives as JSON text and is parsed once, by the
/// handler; a plain component's is a value the host built itself, so it is
/// carried as that value rather than printed only to be parsed again.
#[derive(Debug)]
pub struct ToolResult {
    pub content: Vec<types::Content>,
    pub structured: Option<Structured>,
    pub is_error: bool,
}

#[derive(Debug)]
pub enum Structured {
    /// The plugin's `structured-content`, not yet parsed.
    Text(String),
    /// Built by the host from a plain component's return value.
    Value(Value),
}

impl From<types::CallResult> for ToolResult {
    fn from(result: types::CallResult) -> Self {
        ToolResult {
            content: result.content,
            structured: result.structured_content.map(Structured::Text),
            is_error: result.is_error,
        }
    }
}
pub type ReadReply<A> = Result<Reply<Vec<types::ResourceContents>, A>, types::Error>;
pub type PromptReply<A> = Result<Reply<types::PromptResult, A>, types::Error>;
