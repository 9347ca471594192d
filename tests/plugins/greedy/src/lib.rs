//! A plugin that tries to make the host spend on its behalf, outside its own
//! linear memory and its time limit: OS handles, host-side tables, the
//! server log, the client's stream. Every tool reports what it managed to do,
//! so the host's tests can assert on how far it got.

mod hoard;

wit_bindgen::generate!({
    path: "../../../wit/v0.1.0",
    world: "warden:plugin/plugin",
});

use exports::warden::plugin::{completions, prompts, resources, tools};
use serde_json::{Map, Value, json};
use warden::plugin::host::{self, LogLevel};
use warden::plugin::types::{
    CallResult, Content, Error, Prompt, PromptMessage, PromptResult, ResourceBody, ResourceContents, ResourceInfo,
    ResourceLink, ResourceTemplate, Role, Tool,
};

struct Greedy;

/// The arguments, as a JSON object.
pub(crate) struct Args(Map<String, Value>);

impl Args {
    fn parse(raw: &str) -> Result<Self, Error> {
        match serde_json::from_str(raw) {
            Ok(Value::Object(map)) => Ok(Self(map)),
            _ => Err(Error::InvalidArguments("the arguments must be a JSON object".into())),
        }
    }

    pub(crate) fn u64(&self, key: &str) -> u64 {
        self.0.get(key).and_then(Value::as_u64).unwrap_or(0)
    }

    pub(crate) fn str(&self, key: &str) -> &str {
        self.0.get(key).and_then(Value::as_str).unwrap_or_default()
    }
}

fn tool(name: &str, description: &str, properties: Value) -> Tool {
    Tool {
        name: name.into(),
        title: None,
        description: description.into(),
        input_schema: json!({ "type": "object", "properties": properties }).to_string(),
        output_schema: None,
        annotations: None,
    }
}

fn text(text: String) -> CallResult {
    CallResult {
        content: vec![Content::Text(text)],
        structured_content: None,
        is_error: false,
    }
}

/// `megabytes` MiB of one letter.
fn big(letter: &str, megabytes: u64) -> String {
    letter.repeat((megabytes << 20) as usize)
}

/// A line that, written raw to the server log, would pass for Warden's own.
const FORGED: &str =
    "fine\n2026-11-30T21:00:00.000000Z  WARN warden: plugin `notes` was granted read-write access to /\r\u{1b}[2K";

impl tools::Guest for Greedy {
    fn list_tools() -> Vec<Tool> {
        let int = json!({ "type": "integer", "minimum": 0 });
        vec![
            tool(
                "hoard_sockets",
                "Creates up to `count` sockets (`kind` tcp or udp) and holds them for `hold_ms`; returns how many it held.",
                json!({ "count": int, "kind": { "type": "string" }, "hold_ms": int }),
            ),
            tool(
                "hoard_headers",
                "Creates up to `count` HTTP header collections of `kilobytes` KiB each and holds them; returns how many.",
                json!({ "count": int, "kilobytes": int }),
            ),
            tool(
                "log_flood",
                "Sends `count` log messages of `bytes` bytes each through host.log.",
                json!({ "count": int, "bytes": int }),
            ),
            tool(
                "progress_flood",
                "Reports progress `count` times, each with a message of `bytes` bytes.",
                json!({ "count": int, "bytes": int }),
            ),
            tool(
                "forge_log",
                "Logs (host.log and stderr) a text with line breaks and terminal escapes that imitates the server's own log lines.",
                json!({}),
            ),
            tool(
                "huge_error",
                "Fails with an error text of `megabytes` MiB.",
                json!({ "megabytes": int }),
            ),
            tool(
                "many_items",
                "Returns `count` empty text content items.",
                json!({ "count": int }),
            ),
            tool(
                "big_link",
                "Returns one resource link whose URI is `megabytes` MiB long.",
                json!({ "megabytes": int }),
            ),
            tool(
                "deny_flood",
                "Sends `count` HTTP requests to a host no grant covers; returns how many were refused.",
                json!({ "count": int }),
            ),
        ]
    }

    fn call_tool(name: String, raw: String) -> Result<CallResult, Error> {
        let args = Args::parse(&raw)?;
        match name.as_str() {
            "hoard_sockets" => hoard::sockets(&args).map(text),
            "hoard_headers" => hoard::headers(&args).map(text),
            "log_flood" => {
                let message = "l".repeat(args.u64("bytes") as usize);
                for _ in 0..args.u64("count") {
                    host::log(LogLevel::Warning, &message);
                }
                Ok(text("logged".into()))
            }
            "progress_flood" => {
                let message = "p".repeat(args.u64("bytes") as usize);
                for i in 0..args.u64("count") {
                    host::progress(i as f64, None, Some(&message));
                }
                Ok(text("reported".into()))
            }
            "forge_log" => {
                host::log(LogLevel::Warning, FORGED);
                eprintln!("{FORGED}");
                Ok(text("forged".into()))
            }
            "huge_error" => Err(Error::Failed(big("e", args.u64("megabytes")))),
            "many_items" => Ok(CallResult {
                content: vec![Content::Text(String::new()); args.u64("count") as usize],
                structured_content: None,
                is_error: false,
            }),
            "big_link" => Ok(CallResult {
                content: vec![Content::ResourceLink(ResourceLink {
                    uri: format!("greedy://{}", big("a", args.u64("megabytes"))),
                    name: "link".into(),
                    description: None,
                    mime_type: None,
                })],
                structured_content: None,
                is_error: false,
            }),
            "deny_flood" => hoard::refused_requests(args.u64("count")).map(text),
            _ => Err(Error::NotFound(name)),
        }
    }
}

impl resources::Guest for Greedy {
    fn list_resources() -> Vec<ResourceInfo> {
        ["huge-error", "many", "big", "denied"]
            .iter()
            .map(|name| ResourceInfo {
                uri: format!("greedy://{name}"),
                name: name.to_string(),
                title: None,
                description: None,
                mime_type: None,
                size: None,
            })
            .collect()
    }

    fn list_resource_templates() -> Vec<ResourceTemplate> {
        Vec::new()
    }

    fn read_resource(uri: String) -> Result<Vec<ResourceContents>, Error> {
        let contents = |body: String| ResourceContents {
            uri: uri.clone(),
            mime_type: None,
            body: ResourceBody::Text(body),
        };
        match uri.trim_start_matches("greedy://") {
            "huge-error" => Err(Error::NotFound(big("e", 4))),
            "many" => Ok(vec![contents(String::new()); 200_000]),
            "big" => Ok(vec![contents(big("b", 4))]),
            "denied" => {
                let refused = hoard::refused_requests(3)?;
                Ok(vec![contents(refused)])
            }
            _ => Err(Error::NotFound(uri)),
        }
    }
}

impl prompts::Guest for Greedy {
    fn list_prompts() -> Vec<Prompt> {
        vec![Prompt {
            name: "greedy".into(),
            title: None,
            description: Some("Answers with too much: `mode` error or link.".into()),
            arguments: vec![warden::plugin::types::PromptArgument {
                name: "mode".into(),
                description: None,
                required: true,
            }],
        }]
    }

    fn get_prompt(_name: String, arguments: Vec<(String, String)>) -> Result<PromptResult, Error> {
        let mode = arguments.iter().find(|(k, _)| k == "mode").map(|(_, v)| v.as_str());
        match mode {
            Some("error") => Err(Error::Failed(big("e", 4))),
            _ => Ok(PromptResult {
                description: None,
                messages: vec![PromptMessage {
                    role: Role::User,
                    content: Content::ResourceLink(ResourceLink {
                        uri: "greedy://x".into(),
                        name: big("n", 4),
                        description: None,
                        mime_type: None,
                    }),
                }],
            }),
        }
    }
}

impl completions::Guest for Greedy {
    fn complete(_reference: completions::Reference, _argument: String, value: String) -> Vec<String> {
        // 100 values of 64 KiB: 6.4 MiB; or a million tiny ones.
        match value.as_str() {
            "many" => (0..1_000_000).map(|i| i.to_string()).collect(),
            _ => vec![big("c", 1)[..64 << 10].to_string(); 100],
        }
    }
}

export!(Greedy);
