//! `warden:plugin@0.1.0` (`wit/plugin.wit`): tools, resources, prompts and
//! completions, no interaction. Its types are the latest version's.

pub const VERSION: &str = "0.1.0";

wasmtime::component::bindgen!({
    path: "../../wit",
    world: "warden:plugin/plugin",
    exports: { default: async },
    with: {
        "warden:plugin/types": super::v0_2_0::warden::plugin::types,
    },
});

pub use exports::warden::plugin::{completions, prompts, resources, tools};
