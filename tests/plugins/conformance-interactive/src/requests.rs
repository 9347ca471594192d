//! The requests the fixtures put to the client.

use crate::warden::plugin::types::{
    Content, ElicitForm, InputRequest, KeyedRequest, Role, SamplingMessage, SamplingRequest,
};
use serde_json::{Value, json};

fn keyed(key: &str, request: InputRequest) -> KeyedRequest {
    KeyedRequest {
        key: key.to_string(),
        request,
    }
}

/// A form with `schema` as its requested schema.
pub fn form(key: &str, message: &str, schema: Value) -> KeyedRequest {
    keyed(
        key,
        InputRequest::ElicitForm(ElicitForm {
            message: message.to_string(),
            requested_schema: schema.to_string(),
        }),
    )
}

/// A form with one required field of `field_type`.
pub fn form_field(key: &str, message: &str, field: &str, field_type: &str) -> KeyedRequest {
    form(
        key,
        message,
        json!({
            "type": "object",
            "properties": { field: { "type": field_type } },
            "required": [field]
        }),
    )
}

/// One user text message for the client's model.
pub fn sample(key: &str, prompt: &str, max_tokens: u32) -> KeyedRequest {
    keyed(
        key,
        InputRequest::Sample(SamplingRequest {
            messages: vec![SamplingMessage {
                role: Role::User,
                content: Content::Text(prompt.to_string()),
            }],
            system_prompt: None,
            max_tokens,
            temperature: None,
            stop_sequences: Vec::new(),
            model_preferences: None,
            tools: None,
        }),
    )
}

pub fn list_roots(key: &str) -> KeyedRequest {
    keyed(key, InputRequest::ListRoots)
}
