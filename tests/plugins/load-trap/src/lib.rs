//! Traps while the host lists its tools at load: the host must refuse the plugin and
//! keep serving the others.

wit_bindgen::generate!({
    path: "../../../wit/v0.1.0",
    world: "warden:plugin/tool-plugin",
});

use exports::warden::plugin::tools::Guest;
use warden::plugin::types::{CallResult, Error, Tool};

struct LoadTrap;

impl Guest for LoadTrap {
    fn list_tools() -> Vec<Tool> {
        panic!("load-trap: list-tools panics on purpose")
    }

    fn call_tool(_name: String, _arguments: String) -> Result<CallResult, Error> {
        panic!("load-trap: call-tool panics on purpose")
    }
}

export!(LoadTrap);
