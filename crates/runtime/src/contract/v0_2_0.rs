//! `warden:plugin@0.2.0` (`wit/v0.2.0/plugin.wit`): 0.1.0 plus interaction —
//! a call may answer `input-required` and is called again with the answers.

pub const VERSION: &str = "0.2.0";

wasmtime::component::bindgen!({
    path: "../../wit/v0.2.0",
    world: "warden:plugin/plugin",
    exports: { default: async },
});

pub use exports::warden::plugin::{completions, prompts, resources, tools};
