//! The fixtures of the official MCP conformance suites (`@modelcontextprotocol/conformance`,
//! 0.1.16 for the 2025-11-25 wire and 0.2.0-alpha.12 for 2026-07-28) that ask the client
//! something in the middle of a call: elicitation, sampling and roots, through the
//! `input-required` replies of contract 0.2.0, and the task fixtures, whose task support it
//! declares (contract 0.3.0's `list-tool-execution`). Served beside `tests/plugins/conformance` (0.1.0),
//! which holds every other fixture; no name here is one of its names.
//!
//! - `classic.rs`: the 2025-11-25 tools, which the suite answers as server-to-client requests
//!   (`test_sampling`, `test_elicitation`, `test_elicitation_sep1034_defaults`,
//!   `test_elicitation_sep1330_enums`), and `test_missing_capability`.
//! - `mrtr.rs`: the 2026-07-28 input-required tools (SEP-2322), `test_input_required_result_*`.
//! - `tasks.rs`: the task fixtures (SEP-2663, `tasks-*`).
//! - `prompts.rs`: the prompt `test_input_required_result_prompt`.
//! - `rounds.rs`: what every fixture shares: the answers gathered so far, carried from round to
//!   round in the plugin's state.
//! - `requests.rs`: the requests the fixtures put to the client.
//!
//! Resources and completions are exported empty: the world requires them.

wit_bindgen::generate!({
    path: "../../../wit/v0.3.0",
    world: "warden:plugin/plugin",
});

mod classic;
mod mrtr;
mod prompts;
mod requests;
mod rounds;
mod tasks;
mod tools;

use exports::warden::plugin::completions::{self, Reference};
use exports::warden::plugin::resources;
use warden::plugin::types::{Error, ReadReply, ResourceInfo, ResourceTemplate};

struct Interactive;

export!(Interactive);

impl resources::Guest for Interactive {
    fn list_resources() -> Vec<ResourceInfo> {
        Vec::new()
    }

    fn list_resource_templates() -> Vec<ResourceTemplate> {
        Vec::new()
    }

    fn read_resource(uri: String, _input: Option<warden::plugin::types::InputAnswers>) -> Result<ReadReply, Error> {
        Err(Error::NotFound(uri))
    }
}

impl completions::Guest for Interactive {
    fn complete(_reference: Reference, _argument: String, _value: String) -> Vec<String> {
        Vec::new()
    }
}
