//! A plugin's answer to one round of a call, whatever version it speaks.

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

pub type ToolReply<A> = Result<Reply<types::CallResult, A>, types::Error>;
pub type ReadReply<A> = Result<Reply<Vec<types::ResourceContents>, A>, types::Error>;
pub type PromptReply<A> = Result<Reply<types::PromptResult, A>, types::Error>;
