//! The prompts of the conformance suites, and the completions for their arguments.

use crate::Conformance;
use crate::exports::warden::plugin::completions::{self, Reference};
use crate::exports::warden::plugin::prompts::Guest;
use crate::media::PNG;
use crate::resources::TEMPLATE;
use crate::tools::DYNAMIC_PROMPT;
use crate::warden::plugin::types::{
    Blob, Content, Error, Prompt, PromptArgument, PromptMessage, PromptResult, ResourceBody, ResourceContents, Role,
};

/// Suggestions for `arg1` of `test_prompt_with_arguments`.
const ARG1_VALUES: [&str; 3] = ["paris", "park", "party"];
/// Suggestions for `{id}` of the resource template.
const TEMPLATE_IDS: [&str; 4] = ["1", "2", "3", "123"];

/// The text of `test_prompt_with_arguments`.
fn arguments_text(arg1: &str, arg2: &str) -> String {
    format!("Prompt with arguments: arg1='{arg1}', arg2='{arg2}'")
}

/// The value of a required argument, or an error that names it.
fn required<'a>(prompt: &str, arguments: &'a [(String, String)], name: &str) -> Result<&'a str, Error> {
    arguments
        .iter()
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.as_str())
        .ok_or_else(|| Error::InvalidArguments(format!("the prompt {prompt} needs the argument `{name}`")))
}

/// Case-insensitive prefix match.
fn matching(candidates: &[&str], value: &str) -> Vec<String> {
    let prefix = value.to_lowercase();
    candidates
        .iter()
        .filter(|candidate| candidate.to_lowercase().starts_with(&prefix))
        .map(|candidate| candidate.to_string())
        .collect()
}

fn prompt(name: &str, description: &str, arguments: &[(&str, &str)]) -> Prompt {
    Prompt {
        name: name.to_string(),
        title: None,
        description: Some(description.to_string()),
        arguments: arguments
            .iter()
            .map(|(name, description)| PromptArgument {
                name: name.to_string(),
                description: Some(description.to_string()),
                required: true,
            })
            .collect(),
    }
}

fn user(content: Content) -> PromptMessage {
    PromptMessage {
        role: Role::User,
        content,
    }
}

fn user_text(text: impl Into<String>) -> PromptMessage {
    user(Content::Text(text.into()))
}

impl Guest for Conformance {
    fn list_prompts() -> Vec<Prompt> {
        let mut prompts = vec![
            prompt("test_simple_prompt", "A simple prompt without arguments.", &[]),
            prompt(
                "test_prompt_with_arguments",
                "A prompt that puts its two arguments in its text.",
                &[("arg1", "The first argument."), ("arg2", "The second argument.")],
            ),
            prompt(
                "test_prompt_with_embedded_resource",
                "A prompt with an embedded resource.",
                &[("resourceUri", "The URI of the embedded resource.")],
            ),
            prompt("test_prompt_with_image", "A prompt with an image.", &[]),
        ];
        if crate::state::present(DYNAMIC_PROMPT) {
            prompts.push(prompt(DYNAMIC_PROMPT, "Listed after test_trigger_prompt_change.", &[]));
        }
        prompts
    }

    fn get_prompt(name: String, arguments: Vec<(String, String)>) -> Result<PromptResult, Error> {
        let messages = match name.as_str() {
            "test_simple_prompt" => vec![user_text("This is a simple prompt for testing.")],
            DYNAMIC_PROMPT => vec![user_text("This prompt was added at run time.")],
            "test_prompt_with_arguments" => {
                let arg1 = required(&name, &arguments, "arg1")?;
                let arg2 = required(&name, &arguments, "arg2")?;
                vec![user_text(arguments_text(arg1, arg2))]
            }
            "test_prompt_with_embedded_resource" => {
                let uri = required(&name, &arguments, "resourceUri")?;
                vec![
                    user(Content::EmbeddedResource(ResourceContents {
                        uri: uri.to_string(),
                        mime_type: Some("text/plain".to_string()),
                        body: ResourceBody::Text("Embedded resource content for testing.".to_string()),
                    })),
                    user_text("Please process the embedded resource above."),
                ]
            }
            "test_prompt_with_image" => vec![
                user(Content::Image(Blob {
                    data: PNG.to_vec(),
                    mime_type: "image/png".to_string(),
                })),
                user_text("Please analyze the image above."),
            ],
            _ => return Err(Error::NotFound(name)),
        };
        Ok(PromptResult {
            description: None,
            messages,
        })
    }
}

impl completions::Guest for Conformance {
    fn complete(reference: Reference, argument: String, value: String) -> Vec<String> {
        match (&reference, argument.as_str()) {
            (Reference::Prompt(prompt), "arg1") if prompt == "test_prompt_with_arguments" => {
                matching(&ARG1_VALUES, &value)
            }
            (Reference::ResourceTemplate(template), "id") if template == TEMPLATE => matching(&TEMPLATE_IDS, &value),
            _ => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_text_is_exact() {
        assert_eq!(
            arguments_text("hello", "world"),
            "Prompt with arguments: arg1='hello', arg2='world'"
        );
    }

    #[test]
    fn required_arguments_are_found_or_named() {
        let arguments = vec![("arg1".to_string(), "hello".to_string())];
        assert_eq!(required("p", &arguments, "arg1").ok(), Some("hello"));
        match required("p", &arguments, "arg2") {
            Err(Error::InvalidArguments(message)) => assert!(message.contains("arg2"), "{message}"),
            _ => panic!("a missing argument must be invalid-arguments"),
        }
    }

    #[test]
    fn completions_filter_by_prefix() {
        assert_eq!(matching(&ARG1_VALUES, "par"), ["paris", "park", "party"]);
        assert_eq!(matching(&ARG1_VALUES, "PARK"), ["park"]);
        assert_eq!(matching(&TEMPLATE_IDS, "1"), ["1", "123"]);
        assert_eq!(matching(&TEMPLATE_IDS, ""), ["1", "2", "3", "123"]);
        assert!(matching(&TEMPLATE_IDS, "x").is_empty());
    }
}
