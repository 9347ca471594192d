//! `wasi:config/store`: the settings the operator wrote in the manifest's
//! `[config]`, read-only, for components that read their configuration the
//! standard way.
//!
//! Components in the wild import two versions of this interface with the
//! same shape — `0.2.0-draft` (Spin, wasmCloud) and `0.2.0-rc.1` (what
//! wasmtime's own crate serves) — and prerelease versions only match
//! exactly, so Warden serves both from one implementation.

use std::collections::BTreeMap;
use std::sync::Arc;

use anyhow::Result;
use wasmtime::component::{ComponentType, Linker, Lower};

use super::Sandbox;
use crate::secrets::Setting;

/// The versions served.
pub const VERSIONS: [&str; 2] = ["0.2.0-draft", "0.2.0-rc.1"];

/// A plugin's `[config]`, shared by all its calls; values read from the
/// environment or a file stay `Secret`s until the guest asks for them.
pub type ConfigValues = Arc<BTreeMap<String, Setting>>;

/// `error` of the interface. Reading from the manifest never fails; the
/// type is needed for the signature.
#[derive(ComponentType, Lower)]
#[component(variant)]
enum ConfigError {
    #[component(name = "upstream")]
    #[allow(dead_code)]
    Upstream(String),
    #[component(name = "io")]
    #[allow(dead_code)]
    Io(String),
}

pub fn add_to_linker(linker: &mut Linker<Sandbox>) -> Result<()> {
    for version in VERSIONS {
        let mut store = linker.instance(&format!("wasi:config/store@{version}"))?;
        store.func_wrap("get", |cx, (key,): (String,)| {
            let sandbox: &Sandbox = cx.data();
            let value = sandbox.config.get(&key).map(|setting| setting.value().to_string());
            Ok((Ok::<_, ConfigError>(value),))
        })?;
        store.func_wrap("get-all", |cx, (): ()| {
            let sandbox: &Sandbox = cx.data();
            let all: Vec<(String, String)> = sandbox
                .config
                .iter()
                .map(|(key, setting)| (key.clone(), setting.value().to_string()))
                .collect();
            Ok((Ok::<_, ConfigError>(all),))
        })?;
    }
    Ok(())
}
