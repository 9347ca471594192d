//! The benchmark plugin: the two tools the native baseline server in
//! `bench/` implements identically — `echo` (the cost of a call itself) and
//! `hash` (SHA-256 over 64 KiB generated from a seed: CPU-bound work).

wit_bindgen::generate!({
    path: "../../../wit/v0.1.0",
    world: "warden:plugin/tool-plugin",
});

use exports::warden::plugin::tools::Guest;
use serde_json::Value;
use sha2::{Digest, Sha256};
use warden::plugin::types::{CallResult, Content, Error, Tool};

/// How many bytes `hash` digests.
const HASH_BYTES: usize = 64 * 1024;

struct Bench;

/// SHA-256 of `HASH_BYTES` bytes derived from `seed`, as hex. The native
/// baseline has the same function.
fn hash(seed: u64) -> String {
    let mut data = vec![0u8; HASH_BYTES];
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for byte in &mut data {
        // xorshift64: cheap, deterministic filler.
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        *byte = state as u8;
    }
    let digest = Sha256::digest(&data);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

impl Guest for Bench {
    fn list_tools() -> Vec<Tool> {
        vec![
            Tool {
                name: "echo".into(),
                title: None,
                description: "Returns `text` unchanged.".into(),
                input_schema: r#"{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}"#.into(),
                output_schema: None,
                annotations: None,
            },
            Tool {
                name: "hash".into(),
                title: None,
                description: "SHA-256, as hex, of 64 KiB of bytes generated from `seed`.".into(),
                input_schema:
                    r#"{"type":"object","properties":{"seed":{"type":"integer","minimum":0}},"required":["seed"]}"#
                        .into(),
                output_schema: None,
                annotations: None,
            },
        ]
    }

    fn call_tool(name: String, arguments: String) -> Result<CallResult, Error> {
        let arguments: Value =
            serde_json::from_str(&arguments).map_err(|e| Error::InvalidArguments(format!("not JSON: {e}")))?;
        let text = match name.as_str() {
            "echo" => arguments["text"].as_str().unwrap_or_default().to_string(),
            "hash" => hash(arguments["seed"].as_u64().unwrap_or_default()),
            other => return Err(Error::NotFound(other.to_string())),
        };
        Ok(CallResult {
            content: vec![Content::Text(text)],
            structured_content: None,
            is_error: false,
        })
    }
}

export!(Bench);
