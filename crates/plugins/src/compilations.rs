//! Compilations in flight, shared: identical components loaded at once (a
//! hundred copies of one file, one component under two names) are compiled
//! — or read from the compiled-code cache — once, and the others take that
//! code instead of compiling it again beside it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use anyhow::{Result, anyhow};
use tokio::sync::OnceCell;
use warden_runtime::Tier;
use warden_runtime::cache::CodeOrigin;
use wasmtime::component::Component;

/// A component's digest, whether it runs on the fuel-counting engine, and
/// which compiler makes its code.
type Key = (String, bool, Tier);

/// The result is shared as text: an error cannot be cloned.
type Shared = OnceCell<Result<(Component, CodeOrigin), String>>;

#[derive(Default)]
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
}
