//! Compilations in flight, shared: identical components loaded at once (a
//! hundred copies of one file, one component under two names) are compiled
//! — or read from the compiled-code cache — once, and the others take that
//! code instead of compiling it again beside it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use anyhow::{Result, anyhow};
use tokio::sync::{OnceCell, Semaphore};
use warden_runtime::Tier;
use warden_runtime::cache::CodeOrigin;
use wasmtime::component::Component;

/// A component's digest, whether it runs on the fuel-counting engine, and
/// which compiler makes its code.
type Key = (String, bool, Tier);

/// The result is shared as text: an error cannot be cloned.
type Shared = OnceCell<Result<(Component, CodeOrigin), String>>;

pub struct Compilations {
    /// Held while some load waits on it or a batch that made it runs (see
    /// `batches`): done ones then drop out.
    in_flight: Mutex<HashMap<Key, Weak<Shared>>>,
    /// Batches of loads running, and what their loads compiled (or read from
    /// the cache), kept until the last of them ends: a batch's identical
    /// components then share one copy of their code, however their loads
    /// interleave — not one copy per group of loads that happened to
    /// overlap (read from a warm cache, 20 copies loaded together made 2–3).
    batches: Mutex<(usize, Vec<Arc<Shared>>)>,
    /// Compilations (and cache reads) running at once: one per core. Each
    /// holds a component's IR and code while it compiles — hundreds of MiB
    /// for a large one — and Cranelift spreads one compilation over every
    /// core already, so a folder of 100 distinct components is compiled a
    /// few at a time, not all at once.
    slots: Semaphore,
}

impl Default for Compilations {
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Self {
            in_flight: Mutex::default(),
            batches: Mutex::default(),
            slots: Semaphore::new(cores),
        }
    }
}

/// A batch of loads running (`Compilations::batch`); ends when dropped.
pub struct Batch<'a>(&'a Compilations);

impl Drop for Batch<'_> {
    fn drop(&mut self) {
        let mut batches = self.0.batches.lock().unwrap_or_else(|p| p.into_inner());
        batches.0 -= 1;
        if batches.0 == 0 {
            batches.1.clear();
        }
    }
}

impl Compilations {
    /// Starts a batch of loads: until it ends, every compilation a load
    /// makes is shared with the loads after it.
    pub fn batch(&self) -> Batch<'_> {
        self.batches.lock().unwrap_or_else(|p| p.into_inner()).0 += 1;
        Batch(self)
    }

    /// Runs `compile` for the first of the loads of `sha256` on one engine
    /// that overlap; the others wait for its result, and their code is
    /// `Reused`.
    pub async fn compile_once(
        &self,
        sha256: &str,
        metered: bool,
        tier: Tier,
        compile: impl AsyncFnOnce() -> Result<(Component, CodeOrigin)>,
    ) -> Result<(Component, CodeOrigin)> {
        let shared = {
            let mut in_flight = self.in_flight.lock().unwrap_or_else(|p| p.into_inner());
            in_flight.retain(|_, shared| shared.strong_count() > 0);
            let key = (sha256.to_string(), metered, tier);
            match in_flight.get(&key).and_then(Weak::upgrade) {
                Some(shared) => shared,
                None => {
                    let shared = Arc::new(Shared::new());
                    in_flight.insert(key, Arc::downgrade(&shared));
                    let mut batches = self.batches.lock().unwrap_or_else(|p| p.into_inner());
                    if batches.0 > 0 {
                        batches.1.push(shared.clone());
                    }
                    shared
                }
            }
        };
        let mut ran = false;
        let result = shared
            .get_or_init(async || {
                ran = true;
                let _slot = self.slots.acquire().await.expect("the slots are never closed");
                compile().await.map_err(|error| format!("{error:#}"))
            })
            .await;
        match result {
            Ok((component, origin)) => Ok((component.clone(), if ran { *origin } else { CodeOrigin::Reused })),
            Err(error) => Err(anyhow!("{error}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use wasmtime::Engine;

    use super::*;

    /// The empty component.
    const EMPTY: &[u8] = b"\0asm\x0d\0\x01\0";

    async fn load(compilations: &Compilations, engine: &Engine, compiles: &AtomicUsize) -> CodeOrigin {
        let compile = async || {
            compiles.fetch_add(1, Ordering::Relaxed);
            let component = Component::new(engine, EMPTY).map_err(|e| anyhow!("{e:#}"))?;
            Ok((component, CodeOrigin::Cache))
        };
        compilations
            .compile_once("digest", false, Tier::Optimised, compile)
            .await
            .unwrap()
            .1
    }

    #[tokio::test]
    async fn a_batch_shares_its_code_with_its_later_loads() {
        let (compilations, engine, compiles) = (Compilations::default(), Engine::default(), AtomicUsize::new(0));
        // One after the other with no batch: nothing in flight to share.
        assert_eq!(load(&compilations, &engine, &compiles).await, CodeOrigin::Cache);
        assert_eq!(load(&compilations, &engine, &compiles).await, CodeOrigin::Cache);
        assert_eq!(compiles.load(Ordering::Relaxed), 2);
        // In a batch, the second takes the first's code.
        let batch = compilations.batch();
        assert_eq!(load(&compilations, &engine, &compiles).await, CodeOrigin::Cache);
        assert_eq!(load(&compilations, &engine, &compiles).await, CodeOrigin::Reused);
        assert_eq!(compiles.load(Ordering::Relaxed), 3);
        // Once the batch is over, its code is no longer held.
        drop(batch);
        assert_eq!(load(&compilations, &engine, &compiles).await, CodeOrigin::Cache);
        assert_eq!(compiles.load(Ordering::Relaxed), 4);
    }

    /// Distinct components loaded at once compile at most one per core at a
    /// time: what they hold while compiling is bounded.
    #[tokio::test]
    async fn distinct_components_compile_a_few_at_a_time() {
        let compilations = Arc::new(Compilations::default());
        let engine = Engine::default();
        let (running, most) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let mut loads = tokio::task::JoinSet::new();
        for digest in 0..16 {
            let (compilations, engine) = (compilations.clone(), engine.clone());
            let (running, most) = (running.clone(), most.clone());
            loads.spawn(async move {
                let compile = async || {
                    let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    // Stands for the seconds a compilation takes.
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                    running.fetch_sub(1, Ordering::SeqCst);
                    let component = Component::new(&engine, EMPTY).map_err(|e| anyhow!("{e:#}"))?;
                    Ok((component, CodeOrigin::Compiled))
                };
                let digest = digest.to_string();
                compilations
                    .compile_once(&digest, false, Tier::Optimised, compile)
                    .await
                    .unwrap();
            });
        }
        while loads.join_next().await.is_some() {}
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert_eq!(most.load(Ordering::SeqCst), cores.min(16));
    }
}
