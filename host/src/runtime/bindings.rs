//! Host-side bindings for the `warden:plugin@0.1.0` contract in `wit/`.
//!
//! Imports (the `host` interface) are synchronous: they only hand events to
//! the call's context. Exports are async so that a call can yield at epoch
//! ticks, be timed out and be cancelled.

wasmtime::component::bindgen!({
    path: "../wit",
    world: "warden:plugin/plugin",
    exports: { default: async },
});

pub use self::warden::plugin::host::LogLevel;
pub use self::warden::plugin::types;
pub use exports::warden::plugin::{completions, prompts, resources, tools};
