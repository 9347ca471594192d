//! A plugin that tries everything a sandbox must stop, one tool per attempt.
//!
//! Every tool reports what happened as text: the result when the attempt succeeded, or
//! `failed(<the error's text>)` when the sandbox refused it, so the host's tests can
//! assert on either. Only `spin`, `panic` and tools pushed past a limit (`alloc`,
//! `recurse`) end in a trap.

mod fs;
mod limits;
mod net;
mod process;

wit_bindgen::generate!({
    path: "../../../wit/v0.1.0",
    world: "warden:plugin/tool-plugin",
});

use exports::warden::plugin::tools::Guest;
use serde_json::{Map, Value, json};
use std::fmt::Display;
use warden::plugin::types::{CallResult, Content, Error, Tool};

struct Hostile;

/// What every tool returns: a text, or the error the attempt met.
pub(crate) type Outcome = Result<String, Error>;

pub(crate) fn failed(error: impl Display) -> Error {
    Error::Failed(error.to_string())
}

/// The arguments, as a JSON object.
pub(crate) struct Args(Map<String, Value>);

impl Args {
    fn parse(raw: &str) -> Result<Self, Error> {
        match serde_json::from_str(raw) {
            Ok(Value::Object(map)) => Ok(Self(map)),
            Ok(_) => Err(Error::InvalidArguments("the arguments must be a JSON object".into())),
            Err(e) => Err(Error::InvalidArguments(format!("the arguments are not JSON: {e}"))),
        }
    }

    pub(crate) fn str(&self, key: &str) -> Result<&str, Error> {
        self.0
            .get(key)
            .and_then(Value::as_str)
            .ok_or_else(|| Error::InvalidArguments(format!("`{key}` must be a string")))
    }

    pub(crate) fn u64(&self, key: &str) -> Result<u64, Error> {
        self.0
            .get(key)
            .and_then(Value::as_u64)
            .ok_or_else(|| Error::InvalidArguments(format!("`{key}` must be a non-negative integer")))
    }
}

/// An object schema whose listed properties are all required.
fn schema(properties: &[(&str, &str)]) -> Value {
    let props: Map<String, Value> = properties
        .iter()
        .map(|(name, kind)| {
            let schema = match *kind {
                "integer" => json!({ "type": "integer", "minimum": 0 }),
                kind => json!({ "type": kind }),
            };
            (name.to_string(), schema)
        })
        .collect();
    let required: Vec<&str> = properties.iter().map(|(name, _)| *name).collect();
    json!({ "type": "object", "properties": props, "required": required, "additionalProperties": false })
}

fn tool(name: &str, description: &str, properties: &[(&str, &str)]) -> Tool {
    Tool {
        name: name.to_string(),
        title: None,
        description: description.to_string(),
        input_schema: schema(properties).to_string(),
        output_schema: None,
        annotations: None,
    }
}

impl Guest for Hostile {
    fn list_tools() -> Vec<Tool> {
        const S: &str = "string";
        const I: &str = "integer";
        vec![
            tool(
                "read_file",
                "Reads the file at `path` and returns its contents.",
                &[("path", S)],
            ),
            tool(
                "write_file",
                "Writes `content` to the file at `path`, then returns \"written\".",
                &[("path", S), ("content", S)],
            ),
            tool(
                "list_dir",
                "Lists the directory at `path`: its entry names, sorted, one a line.",
                &[("path", S)],
            ),
            tool(
                "symlink",
                "Creates a symbolic link at `link` pointing to `target`, then returns \"linked\".",
                &[("target", S), ("link", S)],
            ),
            tool(
                "rename",
                "Renames the file or directory `from` to `to`, then returns \"renamed\".",
                &[("from", S), ("to", S)],
            ),
            tool(
                "remove_dir",
                "Removes the directory `path` and everything in it, then returns \"removed\".",
                &[("path", S)],
            ),
            tool(
                "hard_link",
                "Creates a hard link `new` to the file `existing`, then returns \"linked\".",
                &[("existing", S), ("new", S)],
            ),
            tool(
                "fetch",
                "Sends an HTTP GET to `url` over wasi:http; returns \"status <code>\" and the body.",
                &[("url", S)],
            ),
            tool(
                "connect",
                "Opens a TCP connection to `addr` (host:port), then returns \"connected\".",
                &[("addr", S)],
            ),
            tool(
                "resolve",
                "Looks up `host` in DNS; returns its addresses, one a line.",
                &[("host", S)],
            ),
            tool(
                "udp",
                "Binds a UDP socket and sends one byte to `addr` (host:port), then returns \"sent\".",
                &[("addr", S)],
            ),
            tool(
                "env",
                "Returns the value of the environment variable `name`.",
                &[("name", S)],
            ),
            tool(
                "env_all",
                "Returns every environment variable as NAME=value, sorted, one a line.",
                &[],
            ),
            tool("args", "Returns the process arguments, joined by spaces.", &[]),
            tool("stdin", "Reads stdin to its end; returns \"read N bytes\".", &[]),
            tool(
                "clock",
                "Returns the wall-clock time as seconds since the Unix epoch.",
                &[],
            ),
            tool("random", "Returns 16 random bytes, hex-encoded.", &[]),
            tool("spin", "Loops forever without calling the host.", &[]),
            tool(
                "alloc",
                "Allocates and touches `megabytes` MiB, 1 MiB at a time; returns \"allocated N MiB\".",
                &[("megabytes", I)],
            ),
            tool(
                "recurse",
                "Recurses `depth` calls deep (not a tail call); returns the depth reached.",
                &[("depth", I)],
            ),
            tool(
                "big_result",
                "Returns a text of `megabytes` MiB of 'x'.",
                &[("megabytes", I)],
            ),
            tool(
                "flood_stdout",
                "Prints `megabytes` MiB to stdout in 64 KiB chunks, then returns \"flooded\".",
                &[("megabytes", I)],
            ),
            tool(
                "panic",
                "Panics with the message \"hostile panic\" (the instance traps).",
                &[],
            ),
            tool(
                "fetch_then_panic",
                "Fetches `url`, then panics whatever happened (as a JavaScript component whose fetch \
                 was refused aborts).",
                &[("url", S)],
            ),
        ]
    }

    fn call_tool(name: String, raw: String) -> Result<CallResult, Error> {
        let args = Args::parse(&raw)?;
        let text = match name.as_str() {
            "read_file" => fs::read_file(&args),
            "write_file" => fs::write_file(&args),
            "list_dir" => fs::list_dir(&args),
            "symlink" => fs::symlink(&args),
            "rename" => fs::rename(&args),
            "remove_dir" => fs::remove_dir(&args),
            "hard_link" => fs::hard_link(&args),
            "fetch" => net::fetch(&args),
            "connect" => net::connect(&args),
            "resolve" => net::resolve(&args),
            "udp" => net::udp(&args),
            "env" => process::env(&args),
            "env_all" => process::env_all(),
            "args" => process::args(),
            "stdin" => process::stdin(),
            "clock" => process::clock(),
            "random" => process::random(),
            "spin" => limits::spin(),
            "alloc" => limits::alloc(&args),
            "recurse" => limits::recurse(&args),
            "big_result" => limits::big_result(&args),
            "flood_stdout" => limits::flood_stdout(&args),
            "panic" => panic!("hostile panic"),
            "fetch_then_panic" => {
                let _ = net::fetch(&args);
                panic!("the fetch did not give what was expected")
            }
            _ => return Err(Error::NotFound(name)),
        }?;
        Ok(CallResult {
            content: vec![Content::Text(text)],
            structured_content: None,
            is_error: false,
        })
    }
}

export!(Hostile);
