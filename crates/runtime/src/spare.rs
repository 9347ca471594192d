//! A plugin's next sandbox, instantiated before its next call arrives.
//!
//! Instantiating a component is part of every call's cost: ≈ 14 µs for a
//! small Rust plugin, ≈ 0.2–0.3 ms for CPython's component (wasmtime fills
//! the ≈ 5 000 entries of the function table its libraries share, every
//! time).
//! After a client's call succeeds, and when no other call of the plugin is
//! running (overlapping calls keep the cores busy; a spare would only add
//! its task's cost to theirs), Warden instantiates the plugin's next sandbox
//! on another task, so the next call starts on an instance that is already
//! built. It is still fresh — it has run no call, and serves exactly
//! one — and it is built under the plugin's own limits, as the call's own
//! instantiation would be.
//!
//! What a spare may hold while it waits is bounded: one per plugin version,
//! at most `MAX_SPARES` in the process, each holding a pool slot, no OS
//! handle (one whose start code left a resource open is not kept; the
//! plugin's `[limits] handles` are reserved from the process's budget while
//! it is instantiated, as for a call) and at most `MAX_SPARE_MEMORY`; none
//! is made when the pool or the budget is short.
//! Its instantiation runs under the plugin's time limit, memory limit and
//! fuel, like a call's, and only after a call that succeeded, so a plugin
//! whose instantiation fails or runs long is not instantiated again behind
//! its client's back.
//!
//! A finished call's sandbox is wiped (`retire`) before its slot serves
//! again, and, when the plugin's wipes are long, after its answer has gone:
//! its slot and handles stay counted until then.

use futures_util::FutureExt;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use wasmtime::Store;
use wasmtime::component::{Instance, InstancePre};

use crate::handles::HandleBudget;
use crate::memory_reset::MemoryReset;
use crate::sandbox::{CallContext, Sandbox, SandboxSettings};

/// Spares that may wait at once across all plugins: a small part of the
/// pool (`MAX_INSTANCES`, 256), so calls never wait for a slot a spare holds
/// unless ≈ 240 of them run at once.
pub const MAX_SPARES: usize = 16;

/// The most linear memory and table space a spare may hold while it waits.
/// Its start code could otherwise keep up to the plugin's memory limit
/// resident at rest, where a call holds it only while it runs; CPython's and
/// StarlingMonkey's components start at 13 and 9 MiB.
pub const MAX_SPARE_MEMORY: usize = 32 << 20;

/// The slots and budgets every call draws from, shared with the tasks that
/// make spares.
pub struct Pool {
    /// The pooling allocator's instance slots (`MAX_INSTANCES`).
    pub instances: Arc<Semaphore>,
    /// OS handles all running calls, and all spares, may hold together.
    pub handles: HandleBudget,
    /// `MAX_SPARES`.
    pub spares: Arc<Semaphore>,
    pub memory_reset: MemoryReset,
    /// Whether instances come from the pooling allocator (its slots are wiped
    /// by `memory_reset`'s way, so a wipe is checked after the store goes).
    pub pooling: bool,
}

impl Pool {
    /// After a slot was wiped: notices swap that appeared meanwhile, so the
    /// next call is refused rather than handed a slot that may not be clean.
    pub fn check_wiped(&self) {
        if self.pooling {
            let _ = self.memory_reset.check();
        }
    }
}

/// A sandbox instantiated ahead of its call, with what it holds.
pub struct Spare {
    // Field order is drop order: the store (and its pooled slot) goes
    // before the permits that let another call take a slot.
    pub store: Store<Sandbox>,
    pub instance: Instance,
    /// How long its instantiation took (off the call's path).
    pub instantiate: Duration,
    pub slot: OwnedSemaphorePermit,
    _counted: OwnedSemaphorePermit,
}

/// Where a plugin version keeps its spare.
#[derive(Default)]
pub struct SpareSlot {
    ready: Mutex<Option<Spare>>,
    /// A task is making one.
    making: AtomicBool,
    /// How long wiping its last call's sandbox took (µs; see `retire`).
    last_wipe_us: AtomicU32,
}

impl SpareSlot {
    /// The spare, if one is ready; the caller's call uses it.
    pub fn take(&self) -> Option<Spare> {
        self.ready
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take()
    }

    /// Whether a spare is ready (for tests and the benchmark's checks).
    pub fn is_ready(&self) -> bool {
        self.ready
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .is_some()
    }

    /// Claims the making of the next spare: false when one is ready or
    /// being made already.
    fn claim(&self) -> bool {
        !self.is_ready() && !self.making.swap(true, Ordering::AcqRel)
    }

    fn put(&self, spare: Option<Spare>) {
        *self.ready.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = spare;
        self.making.store(false, Ordering::Release);
    }
}

/// A finished call's sandbox, with what it holds until it is wiped.
pub struct Retired {
    // Field order is drop order: the store (its pooled slot, wiped as it
    // drops, and its OS handles) goes before the permits that count them.
    pub store: Store<Sandbox>,
    pub slot: OwnedSemaphorePermit,
    pub handles: OwnedSemaphorePermit,
}

/// A wipe longer than this (µs) is done on a task of its own. Handing it to
/// another task cost a small plugin's call ≈ 20 µs over stdio (its wipe is
/// ≈ 7 µs), and bought a JavaScript call nothing (≈ 60 µs), as two cores
/// then run it beside the client and the next call; CPython's component
/// dirties ≈ 300 pages a call, and restoring them is ≈ 0.27 ms, as much as
/// its guest's work.
pub const WIPE_OFF_PATH_US: u32 = 100;

/// Hands a successful call's sandbox back: wipes its slot, off the answer's
/// path when the plugin's last wipe took longer than `WIPE_OFF_PATH_US`;
/// then, given `next`, starts making its next spare in the slot just wiped
/// (the pool gives a slot back to the component it last held).
pub fn retire(
    pool: &Arc<Pool>,
    retired: Retired,
    pre: &InstancePre<Sandbox>,
    settings: &Arc<SandboxSettings>,
    slot: &Arc<SpareSlot>,
    plugin: Arc<str>,
    next: bool,
) {
    let wipe = |pool: &Pool, slot: &SpareSlot, plugin: &str| {
        let started = Instant::now();
        drop(retired);
        pool.check_wiped();
        let took = u32::try_from(started.elapsed().as_micros()).unwrap_or(u32::MAX);
        let before = slot.last_wipe_us.swap(took, Ordering::Relaxed);
        if (before > WIPE_OFF_PATH_US) != (took > WIPE_OFF_PATH_US) {
            let path = if took > WIPE_OFF_PATH_US { "after" } else { "before" };
            tracing::debug!(
                plugin,
                "a call's sandbox took {took} µs to wipe: the next is wiped {path} its answer"
            );
        }
    };
    if slot.last_wipe_us.load(Ordering::Relaxed) <= WIPE_OFF_PATH_US {
        wipe(pool, slot, &plugin);
        if next {
            prepare(pool, pre, settings, slot, plugin);
        }
        return;
    }
    let (pool, pre, settings, slot) = (pool.clone(), pre.clone(), settings.clone(), slot.clone());
    tokio::spawn(async move {
        wipe(&pool, &slot, &plugin);
        if next {
            prepare(&pool, &pre, &settings, &slot, plugin);
        }
    });
}

/// Starts making `slot`'s next spare on a task of its own, unless one is
/// ready or being made, or the process holds `MAX_SPARES` already.
pub fn prepare(
    pool: &Arc<Pool>,
    pre: &InstancePre<Sandbox>,
    settings: &Arc<SandboxSettings>,
    slot: &Arc<SpareSlot>,
    plugin: Arc<str>,
) {
    if !slot.claim() {
        return;
    }
    let Ok(counted) = pool.spares.clone().try_acquire_owned() else {
        slot.put(None);
        return;
    };
    let (pool, pre, settings, slot) = (pool.clone(), pre.clone(), settings.clone(), slot.clone());
    tokio::spawn(async move {
        // A panic in Warden's code while the start code runs (its host
        // calls) must not leave the slot claimed for good.
        let made = std::panic::AssertUnwindSafe(make(&pool, &pre, &settings, plugin, counted))
            .catch_unwind()
            .await;
        let spare = made.unwrap_or_else(|_| {
            tracing::error!("Warden panicked making a sandbox ahead of a call (a bug in Warden); none is kept");
            None
        });
        // If the plugin was replaced meanwhile, this task holds the slot's
        // last reference, and the spare goes with it.
        slot.put(spare);
    });
}

async fn make(
    pool: &Pool,
    pre: &InstancePre<Sandbox>,
    settings: &SandboxSettings,
    plugin: Arc<str>,
    counted: OwnedSemaphorePermit,
) -> Option<Spare> {
    pool.memory_reset.check().ok()?;
    // Only from what is free now: a spare never makes a call wait.
    let slot = pool.instances.clone().try_acquire_owned().ok()?;
    // Counted while the start code runs, as a call's handles are; a spare
    // that still holds a resource afterwards is not kept, so a waiting one
    // holds no OS handle and reserves none.
    let handles = pool.handles.try_reserve(settings.limits.handles)?;
    let sandbox = Sandbox::new(settings, CallContext::detached(plugin.clone())).ok()?;
    let mut store = new_store(pre, sandbox, settings);
    let started = Instant::now();
    let instantiated = tokio::time::timeout(settings.limits.timeout, pre.instantiate_async(&mut store)).await;
    let why = match instantiated {
        Ok(Ok(_)) if store.data().limiter.used() > MAX_SPARE_MEMORY => format!(
            "it holds {} MiB of memory, more than a sandbox waiting for its call may ({} MiB)",
            store.data().limiter.used() >> 20,
            MAX_SPARE_MEMORY >> 20
        ),
        Ok(Ok(_)) if !store.data_mut().holds_no_resources() => {
            "its start code left resources (files, sockets, streams) open".to_string()
        }
        Ok(Ok(instance)) => {
            drop(handles);
            return Some(Spare {
                store,
                instance,
                instantiate: started.elapsed(),
                slot,
                _counted: counted,
            });
        }
        Ok(Err(error)) => format!("{error:#}"),
        Err(_) => format!("it did not finish within {:?}", settings.limits.timeout),
    };
    // The call that would have used it instantiates for itself, and reports
    // any failure to its client.
    tracing::debug!(plugin = &*plugin, "not instantiated ahead of its next call: {why}");
    store.data().finish(&plugin);
    drop(store);
    pool.check_wiped();
    None
}

/// A store for one call's sandbox, under the plugin's limits.
pub fn new_store(pre: &InstancePre<Sandbox>, sandbox: Sandbox, settings: &SandboxSettings) -> Store<Sandbox> {
    let mut store = Store::new(pre.engine(), sandbox);
    store.limiter(|sandbox| &mut sandbox.limiter);
    arm(&mut store, settings);
    store.epoch_deadline_async_yield_and_update(1);
    store
}

/// Sets what a call may spend afresh: at its instantiation, and again when
/// a spare made earlier starts its call.
pub fn arm(store: &mut Store<Sandbox>, settings: &SandboxSettings) {
    let limits = &settings.limits;
    // What one crossing (an answer, or data passed to a host function)
    // may make the host allocate to read it: a `list<string>` whose
    // items all point at the same bytes must not be copied without end.
    store.set_hostcall_fuel(crate::hostcall_fuel(limits.output));
    if let Some(fuel) = limits.fuel {
        store
            .set_fuel(fuel)
            .expect("metered plugins run on the fuel-counting engine");
    }
    store.set_epoch_deadline(1);
}
