//! Compilations in flight, shared: identical components loaded at once (a
//! hundred copies of one file, one component under two names) are compiled
//! — or read from the compiled-code cache — once, and the others take that
//! code instead of compiling it again beside it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use anyhow::{Result, anyhow};
use tokio::sync::OnceCell;
use warden_runtime::cache::CodeOrigin;
use wasmtime::component::Component;

/// A component's digest and whether it runs on the fuel-counting engine.
type Key = (String, bool);

/// The result is shared as text: an error cannot be cloned.
type Shared = OnceCell<Result<(Component, CodeOrigin), String>>;

#[derive(Default)]
pub struct Compilations {
    /// Held only while some load waits on it: done ones drop out.
    in_flight: Mutex<HashMap<Key, Weak<Shared>>>,
}

impl Compilations {
    /// Runs `compile` for the first of the loads of `sha256` on one engine
    /// that overlap; the others wait for its result, and their code is
    /// `Reused`.
    pub async fn compile_once(
        &self,
        sha256: &str,
        metered: bool,
        compile: impl AsyncFnOnce() -> Result<(Component, CodeOrigin)>,
    ) -> Result<(Component, CodeOrigin)> {
        let shared = {
            let mut in_flight = self.in_flight.lock().unwrap_or_else(|p| p.into_inner());
            in_flight.retain(|_, shared| shared.strong_count() > 0);
            let key = (sha256.to_string(), metered);
            match in_flight.get(&key).and_then(Weak::upgrade) {
                Some(shared) => shared,
                None => {
                    let shared = Arc::new(Shared::new());
                    in_flight.insert(key, Arc::downgrade(&shared));
                    shared
                }
            }
        };
        let mut ran = false;
        let result = shared
            .get_or_init(async || {
                ran = true;
                compile().await.map_err(|error| format!("{error:#}"))
            })
            .await;
        match result {
            Ok((component, origin)) => Ok((component.clone(), if ran { *origin } else { CodeOrigin::Reused })),
            Err(error) => Err(anyhow!("{error}")),
        }
    }
}
