//! Tiered compilation: a large component (a Python or JavaScript runtime
//! with its program: 12–20 MB) takes Cranelift 10 s or more to compile on a
//! small machine. Such a component is first compiled by Winch, a single-pass
//! compiler several times faster, and served on that baseline code; Cranelift
//! compiles it meanwhile on a thread of its own, and once the optimised code
//! is ready the reconciler reloads the plugin onto it (`ready`). A component
//! whose optimised code is in the compiled-code cache skips the baseline.
//!
//! Only a loader whose plugins a reconciler reloads tiers (`Loader::enable_tiering`):
//! a one-shot `warden call` compiles once, optimised, and caches that.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use anyhow::Result;
use tokio::sync::{Notify, RwLock, RwLockReadGuard, Semaphore};
use wasmtime::component::Component;

/// Components of at least this many bytes are served on baseline code first:
/// below it Cranelift takes well under a second (the Rust examples, 0.1–2 MB).
pub const BASELINE_FROM: usize = 4 << 20;

/// A component's digest and whether it runs on the fuel-counting engine.
pub type Key = (String, bool);

pub struct Tiering {
    /// Optimised code compiled in the background, kept until no plugin on
    /// baseline code needs it (`retain`).
    ready: Mutex<HashMap<Key, Component>>,
    /// Background compilations running: one per component and engine,
    /// however many plugins share it; with the baseline code it replaces,
    /// for loads of the same bytes meanwhile (`warden dev`'s trial load,
    /// then the reconciler's).
    running: Mutex<HashMap<Key, Component>>,
    /// Rung each time optimised code is ready (the reconciler waits on it).
    signal: Arc<Notify>,
    /// Background compilations run one at a time (Cranelift spreads each
    /// over every core), beside the loads' own (`Compilations`): a reload
    /// never waits for a background one, and the memory they hold together
    /// stays bounded.
    background: Semaphore,
    /// Held (shared) while a batch of plugins loads: a background
    /// compilation starts only once no batch is loading, so that a cold
    /// start's baseline compiles and first listings have the cores to
    /// themselves (Cranelift would take both).
    loading: RwLock<()>,
}

impl Default for Tiering {
    fn default() -> Self {
        Self {
            ready: Mutex::default(),
            running: Mutex::default(),
            signal: Arc::default(),
            background: Semaphore::new(1),
            loading: RwLock::new(()),
        }
    }
}

impl Tiering {
    /// What rings when optimised code is ready.
    pub fn signal(&self) -> Arc<Notify> {
        self.signal.clone()
    }

    /// Held while a batch of plugins loads (see `loading`).
    pub async fn loading(&self) -> RwLockReadGuard<'_, ()> {
        self.loading.read().await
    }

    /// The optimised code of a component, once compiled in the background.
    pub fn ready(&self, key: &Key) -> Option<Component> {
        lock(&self.ready).get(key).cloned()
    }

    /// The baseline code of a component whose optimised code is compiling.
    pub fn baseline(&self, key: &Key) -> Option<Component> {
        lock(&self.running).get(key).cloned()
    }

    /// Starts compiling a component's optimised code on a blocking thread,
    /// unless that is already running or done; `baseline` serves meanwhile.
    /// `compile` writes the compiled-code cache, when there is one.
    pub fn optimise(
        self: &Arc<Self>,
        key: Key,
        plugin: &str,
        baseline: Component,
        compile: impl FnOnce() -> Result<Component> + Send + 'static,
    ) {
        if lock(&self.ready).contains_key(&key) {
            return;
        }
        {
            let mut running = lock(&self.running);
            if running.contains_key(&key) {
                return;
            }
            running.insert(key.clone(), baseline);
        }
        let (tiering, plugin) = (self.clone(), plugin.to_string());
        tokio::spawn(async move {
            let _turn = tiering.background.acquire().await.expect("never closed");
            // After the loads under way, whose listings run on baseline code.
            drop(tiering.loading.write().await);
            let started = std::time::Instant::now();
            let compiled = tokio::task::spawn_blocking(compile).await;
            match compiled {
                Ok(Ok(component)) => {
                    tracing::debug!(
                        "optimised code of plugin `{plugin}` compiled in {:.1}s",
                        started.elapsed().as_secs_f64()
                    );
                    lock(&tiering.ready).insert(key.clone(), component);
                    lock(&tiering.running).remove(&key);
                    tiering.signal.notify_one();
                }
                Ok(Err(error)) => {
                    lock(&tiering.running).remove(&key);
                    tracing::warn!(
                        "cannot compile optimised code for plugin `{plugin}` ({error:#}); it keeps running on \
                     baseline code"
                    )
                }
                Err(error) => {
                    lock(&tiering.running).remove(&key);
                    tracing::warn!(
                        "the compiler thread for plugin `{plugin}` panicked ({error}); it keeps running on baseline \
                         code"
                    )
                }
            }
        });
    }

    /// Drops the optimised code no longer wanted (every plugin that ran on
    /// the baseline code is on it now, or gone).
    pub fn retain(&self, wanted: impl Fn(&Key) -> bool) {
        lock(&self.ready).retain(|key, _| wanted(key));
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}
