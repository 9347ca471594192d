//! Turning a plugin's answers into MCP results — a tool call's
//! `CallToolResult`, a read's contents, a prompt's messages — checking them
//! against the declarations and the plugin's output limit on the way.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use rmcp::model::{CallToolResult, ContentBlock, GetPromptResult, PromptMessage, Resource, ResourceContents, Role};
use serde_json::Value;

use warden_plugins::declarations::{self, ToolDecl};
use warden_runtime::audit::Outcome;
use warden_runtime::contract::{Structured, ToolResult, types};
use warden_runtime::manifest::format_size;

/// Why a plugin's answer cannot be passed on as it is.
pub enum ContentError {
    /// The answer breaks the tool's own declaration.
    Malformed(String),
    /// The answer is larger than `[limits] output`.
    TooLarge { bytes: u64, limit: u64 },
}

impl ContentError {
    /// How the audit log records this refusal.
    pub fn outcome(&self) -> Outcome {
        match self {
            ContentError::Malformed(_) => Outcome::ToolError,
            ContentError::TooLarge { .. } => Outcome::OutputLimit,
        }
    }

    /// `what` names what was run, e.g. "`text_stats`" or "a read of `notes://a`".
    pub fn describe(&self, plugin: &str, manifest: &str, what: &str) -> String {
        match self {
            ContentError::Malformed(why) => {
                format!("plugin `{plugin}` returned a malformed result from {what}: {why}")
            }
            ContentError::TooLarge { bytes, limit } => format!(
                "plugin `{plugin}` returned {bytes} bytes from {what}, more than its output limit of {}; \
                 the operator can raise `[limits] output` in {manifest}",
                format_size(*limit)
            ),
        }
    }
}

/// What every item of an answer costs beyond its text: its JSON framing on
/// the wire. Counted so that half a million empty items are held to the
/// output limit like half a million bytes.
const ITEM_OVERHEAD: u64 = 32;

/// How many bytes a piece of content takes on the wire (blobs as base64),
/// every string the plugin chose included.
/// The size of structured content as the client will receive it; a value
/// the host built is measured by printing it into a counter, not a buffer.
fn structured_bytes(structured: &Structured) -> u64 {
    struct Counter(u64);
    impl std::io::Write for Counter {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len() as u64;
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    match structured {
        Structured::Text(text) => text.len() as u64,
        Structured::Value(value) => {
            let mut counter = Counter(0);
            // Writing into a counter cannot fail.
            let _ = serde_json::to_writer(&mut counter, value);
            counter.0
        }
    }
}

fn content_bytes(content: &types::Content) -> u64 {
    ITEM_OVERHEAD
        + match content {
            types::Content::Text(t) => t.len() as u64,
            types::Content::Image(b) | types::Content::Audio(b) => base64_len(b.data.len()) + b.mime_type.len() as u64,
            types::Content::EmbeddedResource(r) => contents_bytes(r),
            types::Content::ResourceLink(link) => {
                (link.uri.len() + link.name.len()) as u64
                    + optional_len(&link.description)
                    + optional_len(&link.mime_type)
            }
        }
}

fn contents_bytes(contents: &types::ResourceContents) -> u64 {
    ITEM_OVERHEAD + contents.uri.len() as u64 + optional_len(&contents.mime_type) + body_bytes(&contents.body)
}

fn optional_len(text: &Option<String>) -> u64 {
    text.as_ref().map_or(0, |t| t.len() as u64)
}

fn body_bytes(body: &types::ResourceBody) -> u64 {
    match body {
        types::ResourceBody::Text(t) => t.len() as u64,
        types::ResourceBody::Blob(b) => base64_len(b.len()),
    }
}

fn base64_len(bytes: usize) -> u64 {
    (bytes as u64).div_ceil(3) * 4
}

fn within_limit(bytes: u64, limit: u64) -> Result<(), ContentError> {
    if bytes > limit {
        return Err(ContentError::TooLarge { bytes, limit });
    }
    Ok(())
}

/// A message the plugin wrote for the client (its own error text), held to
/// the output limit like any answer.
pub fn plugin_text(text: String, output_limit: u64) -> Result<String, ContentError> {
    within_limit(text.len() as u64, output_limit)?;
    Ok(text)
}

/// Completion values as sent: at most `CompletionInfo::MAX_VALUES` of them,
/// held to the output limit. Returns the values, how many the plugin offered,
/// and whether there were more than are sent.
pub fn completion_values(
    mut values: Vec<String>,
    max_values: usize,
    output_limit: u64,
) -> Result<(Vec<String>, usize, bool), ContentError> {
    let total = values.len();
    values.truncate(max_values);
    within_limit(
        values.iter().map(|v| v.len() as u64 + ITEM_OVERHEAD).sum(),
        output_limit,
    )?;
    Ok((values, total, total > max_values))
}

/// Converts and checks a successful `read-resource` answer.
pub fn read_contents(
    contents: Vec<types::ResourceContents>,
    output_limit: u64,
) -> Result<Vec<ResourceContents>, ContentError> {
    within_limit(contents.iter().map(contents_bytes).sum(), output_limit)?;
    Ok(contents.into_iter().map(resource_contents).collect())
}

/// Converts and checks a successful `get-prompt` answer.
pub fn prompt_result(reply: types::PromptResult, output_limit: u64) -> Result<GetPromptResult, ContentError> {
    within_limit(
        reply.messages.iter().map(|m| content_bytes(&m.content)).sum::<u64>() + optional_len(&reply.description),
        output_limit,
    )?;
    let messages = reply
        .messages
        .into_iter()
        .map(|m| {
            let role = match m.role {
                types::Role::User => Role::User,
                types::Role::Assistant => Role::Assistant,
            };
            PromptMessage::new(role, content_block(m.content))
        })
        .collect();
    let mut result = GetPromptResult::new(messages);
    result.description = reply.description;
    Ok(result)
}

pub fn content_block(content: types::Content) -> ContentBlock {
    match content {
        types::Content::Text(text) => ContentBlock::text(text),
        types::Content::Image(blob) => ContentBlock::image(BASE64.encode(&blob.data), blob.mime_type),
        types::Content::Audio(blob) => ContentBlock::audio(BASE64.encode(&blob.data), blob.mime_type),
        types::Content::ResourceLink(link) => {
            let mut resource = Resource::new(link.uri, link.name);
            if let Some(description) = link.description {
                resource = resource.with_description(description);
            }
            if let Some(mime) = link.mime_type {
                resource = resource.with_mime_type(mime);
            }
            ContentBlock::resource_link(resource)
        }
        types::Content::EmbeddedResource(contents) => ContentBlock::resource(resource_contents(contents)),
    }
}

pub fn resource_contents(contents: types::ResourceContents) -> ResourceContents {
    let resource = match contents.body {
        types::ResourceBody::Text(text) => ResourceContents::TextResourceContents {
            uri: contents.uri,
            mime_type: None,
            text,
            meta: None,
        },
        types::ResourceBody::Blob(data) => ResourceContents::blob(BASE64.encode(&data), contents.uri),
    };
    match contents.mime_type {
        Some(mime) => resource.with_mime_type(mime),
        None => resource,
    }
}

/// Converts and checks a successful `call-tool` answer.
pub fn call_result(reply: ToolResult, decl: &ToolDecl, output_limit: u64) -> Result<CallToolResult, ContentError> {
    // Check the cheap bound before converting anything: a hostile plugin's
    // 100 MB answer must not be base64-encoded only to be refused.
    let raw_bytes: u64 =
        reply.content.iter().map(content_bytes).sum::<u64>() + reply.structured.as_ref().map_or(0, structured_bytes);
    within_limit(raw_bytes, output_limit)?;
    let structured = match reply.structured {
        Some(Structured::Text(text)) => Some(
            serde_json::from_str::<Value>(&text)
                .map_err(|e| ContentError::Malformed(format!("`structured-content` is not valid JSON ({e})")))?,
        ),
        Some(Structured::Value(value)) => Some(value),
        None => None,
    };
    if !reply.is_error
        && let Some(validator) = &decl.output
    {
        let Some(value) = &structured else {
            return Err(ContentError::Malformed(
                "the tool declares an `output-schema` but returned no `structured-content`".into(),
            ));
        };
        let violations = declarations::violations(validator, value);
        if !violations.is_empty() {
            return Err(ContentError::Malformed(format!(
                "`structured-content` does not match the tool's `output-schema`: {}",
                violations.join("; ")
            )));
        }
    }
    let mut content: Vec<ContentBlock> = reply.content.into_iter().map(content_block).collect();
    if content.is_empty()
        && let Some(value) = &structured
    {
        // Clients that predate structured output read the text content.
        content.push(ContentBlock::text(value.to_string()));
    }
    let mut result = if reply.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    result.structured_content = structured;
    Ok(result)
}

/// The text a plugin's own error becomes for the model, held to the
/// output limit.
pub fn tool_error(error: types::Error, output_limit: u64) -> Result<String, ContentError> {
    let text = match error {
        types::Error::NotFound(what) => format!("not found: {what}"),
        types::Error::InvalidArguments(why) => format!("invalid arguments: {why}"),
        types::Error::Failed(why) => why,
    };
    plugin_text(text, output_limit)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(t: &str) -> types::Content {
        types::Content::Text(t.into())
    }

    #[test]
    fn every_string_and_item_counts_against_the_limit() {
        let link = types::Content::ResourceLink(types::ResourceLink {
            uri: format!("x://{}", "a".repeat(2000)),
            name: "n".into(),
            description: Some("d".repeat(1000)),
            mime_type: None,
        });
        assert!(content_bytes(&link) > 3000);
        let many = vec![text(""); 100_000];
        let total: u64 = many.iter().map(content_bytes).sum();
        assert!(
            within_limit(total, 1 << 20).is_err(),
            "100 000 empty items are 3.2 MB of JSON"
        );
        let error = tool_error(types::Error::Failed("e".repeat(2 << 20)), 1 << 20);
        assert!(matches!(error, Err(ContentError::TooLarge { .. })));
        assert_eq!(
            tool_error(types::Error::NotFound("x".into()), 1 << 20).ok().unwrap(),
            "not found: x"
        );
    }

    #[test]
    fn completions_are_cut_to_the_maximum_then_held_to_the_limit() {
        let (values, total, more) = completion_values(vec!["v".into(); 150], 100, 1 << 20).ok().unwrap();
        assert_eq!((values.len(), total, more), (100, 150, true));
        assert!(completion_values(vec!["v".repeat(20_000); 100], 100, 1 << 20).is_err());
    }
}
