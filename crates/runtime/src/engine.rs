//! The one engine configuration every compiler and command uses: the
//! WebAssembly proposals (proposals.rs), fuel, epochs, and the instance pool
//! with its memory reset (memory_reset.rs).

use std::sync::Arc;
use std::time::Duration;

use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

use crate::incremental_cache::IncrementalCache;
use crate::memory_reset::ResetMode;
use crate::{component_shape, proposals};

/// How often the epoch advances. A running guest yields to the async runtime
/// at every tick, which is what lets timeouts and cancellation take effect
/// while it computes.
const EPOCH_TICK: Duration = Duration::from_millis(10);

/// Instances that may exist at once across all plugins (the pool's size).
pub(crate) const MAX_INSTANCES: u32 = 256;

/// Per pooled memory, how much may stay resident for the next call (reset
/// to its initial contents in place) instead of being returned to the
/// kernel: the first 2 MiB of its accessible bytes (`rewrite`), or that much
/// of what the call dirtied (`dirty-pages`).
const KEEP_RESIDENT: usize = 2 << 20;

/// `reset`: how pooled memory is wiped (`None`: no pooling).
pub(crate) fn engine_config(
    reset: Option<ResetMode>,
    fuel: bool,
    incremental: Option<Arc<IncrementalCache>>,
) -> Config {
    let mut config = Config::new();
    if let Some(cache) = incremental {
        config
            .enable_incremental_compilation(cache)
            .expect("the compiler is enabled");
    }
    config.consume_fuel(fuel);
    // The same proposals for every engine, whichever compiler it uses.
    proposals::apply(&mut config);
    config.epoch_interruption(true);
    // Hot paths compile once per plugin version; optimise them fully.
    config.cranelift_opt_level(wasmtime::OptLevel::Speed);
    if let Some(reset) = reset {
        let mut pool = PoolingAllocationConfig::new();
        pool.total_component_instances(MAX_INSTANCES)
            .total_core_instances(MAX_INSTANCES * 8)
            .total_memories(MAX_INSTANCES * 2)
            .total_tables(MAX_INSTANCES * 8)
            .total_stacks(MAX_INSTANCES)
            .max_core_instances_per_component(component_shape::MAX_CORE_INSTANCES)
            .max_memories_per_component(component_shape::MAX_MEMORIES)
            .max_tables_per_component(component_shape::MAX_TABLES)
            .table_elements(component_shape::MAX_TABLE_ELEMENTS as usize)
            .max_tables_per_module(component_shape::MAX_TABLES_PER_MODULE)
            .max_memories_per_module(component_shape::MAX_MEMORIES_PER_MODULE)
            .max_component_instance_size(1 << 20)
            .max_core_instance_size(1 << 20)
            // A slot's memory is reset between calls either way; rewriting
            // the start of it in place instead of `madvise` spares the next
            // call a page fault per page it touches there. Bounded per slot,
            // so a plugin that touched 64 MiB does not keep it all resident.
            // Which way, and why each is sound: memory_reset.rs.
            .pagemap_scan(reset.pagemap_scan())
            .linear_memory_keep_resident(reset.keep_resident(KEEP_RESIDENT))
            .table_keep_resident(reset.keep_resident(64 << 10));
        config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    }
    config
}

/// Advances the engine's epoch from a dedicated OS thread: a tokio task
/// could be starved by the very guest it is meant to interrupt.
pub(crate) fn spawn_epoch_ticker(engine: &Engine) {
    let engine = engine.weak();
    std::thread::Builder::new()
        .name("warden-epoch".into())
        .spawn(move || {
            while let Some(engine) = engine.upgrade() {
                engine.increment_epoch();
                drop(engine);
                std::thread::sleep(EPOCH_TICK);
            }
        })
        .expect("cannot start the epoch thread");
}
