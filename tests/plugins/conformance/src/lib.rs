//! The fixtures the official MCP conformance suite (`@modelcontextprotocol/conformance`, 0.1.16
//! for the 2025-11-25 wire and 0.2.0-alpha for 2026-07-28) expects a server to expose, with the
//! exact names and texts its checks compare (from the suite's `src/scenarios/server/*.ts` and
//! its reference `examples/servers/typescript/everything-server.ts`).
//!
//! Skipped, because a plugin cannot implement them through `warden:plugin@0.1.0`:
//!
//! - `test_sampling`, `test_elicitation`, `test_elicitation_sep1034_defaults`,
//!   `test_elicitation_sep1330_enums`, `test_missing_capability`: they send the client a request
//!   (sampling or elicitation) in the middle of a call, or depend on the client's capabilities;
//!   the contract has no way to ask the client anything. (`test_streaming_elicitation` is here,
//!   as a plain answer: its check is only that the response stream holds no server request.)
//! - The MRTR fixtures (`test_input_required_result_*` tools and the prompt
//!   `test_input_required_result_prompt`): they answer "input required" and resume with the
//!   client's answers and state, which the contract cannot express.
//! - `test_reconnection`: it is about the transport (SSE polling), not about a tool.
//!
//! `test_trigger_tool_change` and `test_trigger_prompt_change` change the lists at run time
//! through a reload (see `state.rs`).
//!
//! Everything else the suites check (setLevel, ping, subscribe, capabilities, DNS rebinding,
//! caching hints, removed methods) is the host's job, not a plugin's.

wit_bindgen::generate!({
    path: "../../../wit/v0.1.0",
    world: "warden:plugin/plugin",
});

mod media;
mod prompts;
mod resources;
mod state;
mod tools;

struct Conformance;

export!(Conformance);
