//! The prompt of `input-required-result-non-tool-request`: input-required is not only for tools.

use crate::Interactive;
use crate::exports::warden::plugin::prompts::Guest;
use crate::requests;
use crate::rounds::{Lack, Reply, Step, round};
use crate::warden::plugin::types::{
    Content, Error, InputAnswers, Prompt, PromptMessage, PromptReply, PromptResult, Role,
};

const PROMPT: &str = "test_input_required_result_prompt";
const USER_CONTEXT: &str = "user_context";

fn user_text(text: String) -> PromptResult {
    PromptResult {
        description: None,
        messages: vec![PromptMessage {
            role: Role::User,
            content: Content::Text(text),
        }],
    }
}

/// One user message: `Use this context: <context>`.
fn context_prompt(input: Option<InputAnswers>) -> Reply<PromptResult> {
    round(PROMPT, &[USER_CONTEXT], input, |answers| {
        match answers.form_string(USER_CONTEXT, "context") {
            Ok(context) => Step::Done(user_text(format!("Use this context: {context}"))),
            Err(Lack::Without(why)) => Step::Done(user_text(format!("No context was given ({why})."))),
            Err(Lack::Ask) => Step::Ask(vec![requests::form_field(
                USER_CONTEXT,
                "What context should the prompt use?",
                "context",
                "string",
            )]),
        }
    })
}

impl Guest for Interactive {
    fn list_prompts() -> Vec<Prompt> {
        vec![Prompt {
            name: PROMPT.to_string(),
            title: None,
            description: Some("Asks the user what context to use, then puts it in a user message.".to_string()),
            arguments: Vec::new(),
        }]
    }

    fn get_prompt(
        name: String,
        _arguments: Vec<(String, String)>,
        input: Option<InputAnswers>,
    ) -> Result<PromptReply, Error> {
        if name != PROMPT {
            return Err(Error::NotFound(name));
        }
        Ok(match context_prompt(input) {
            Reply::Done(result) => PromptReply::Done(result),
            Reply::InputRequired(input) => PromptReply::InputRequired(input),
        })
    }
}
