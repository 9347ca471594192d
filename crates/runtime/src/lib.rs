//! The wasm runtime: one `Engine` and `Linker` for the process, and the
//! machinery that runs one call in a fresh, limited sandbox.

pub mod audit;
pub mod audit_log;
/// The one way an operator's file is read; in warden-origin, the lowest
/// crate, so the origin record is read the same way.
pub use warden_origin::bounded_file;
pub mod cache;
pub mod call_failure;
pub mod component_shape;
mod engine;
pub mod grants;
pub mod manifest;
pub mod metrics;
pub mod naming;
pub mod pinned;
pub mod printable;
pub mod proposals;
pub mod secrets;
pub mod task_policy;
pub mod tool_overrides;

pub mod config_store;
pub mod contract;
pub mod denials;
pub mod egress;
pub mod event_budget;
pub mod handles;
pub mod incremental_cache;
pub mod memory_reset;
pub mod mounts;
pub mod output;
pub mod sandbox;
pub mod spare;
pub mod tls;
pub mod wasi_stubs;

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use futures_util::FutureExt;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, SemaphorePermit};
use wasmtime::component::ResourceTableError;
use wasmtime::component::{Component, Instance, InstancePre, Linker};
use wasmtime::{Engine, Store, Trap};

pub use call_failure::{CallFailure, hostcall_fuel};
pub use grants::Asks;
use handles::HandleBudget;
use incremental_cache::IncrementalCache;
use memory_reset::{MemoryReset, ResetMode};
pub use sandbox::{CallContext, GuestEvent, Sandbox, SandboxSettings};
use spare::{Pool, SpareSlot};

use engine::{MAX_INSTANCES, engine_config, spawn_epoch_ticker};

/// A call waits for a free slot of its plugin at most half its time limit
/// (leaving the other half to run), and never longer than this.
const BUSY_WAIT: Duration = Duration::from_secs(10);

/// After a client cancels, the guest gets this long to notice
/// `host.cancelled()` and return before it is interrupted.
const CANCEL_GRACE: Duration = Duration::from_millis(250);

pub struct Runtime {
    standard: Backend,
    metered: OnceLock<Backend>,
    /// Winch engines (without and with fuel), made when first needed; `None`
    /// where Winch cannot run (not x86-64).
    baseline: [OnceLock<Option<Backend>>; 2],
    /// Instance slots, handles, spares, the memory reset's check.
    pool: Arc<Pool>,
    incremental: Option<Arc<IncrementalCache>>,
}

/// Which compiler made a component's code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tier {
    /// Cranelift, optimising: what every plugin runs on once it is ready.
    Optimised,
    /// Winch, single-pass: serves a large component within a second or two
    /// of loading while Cranelift compiles it (`Loader`'s tiering).
    Baseline,
}

/// What a plugin needs at call time: its prepared component and policy.
pub struct Prepared {
    pub pre: InstancePre<Sandbox>,
    pub settings: Arc<SandboxSettings>,
    pub concurrency: Semaphore,
    /// Its next sandbox, when one was instantiated ahead (see `spare.rs`).
    pub spare: Arc<SpareSlot>,
    /// The WASI functions the component stubbed out itself, to name the
    /// one a crash happened in (see `wasi_stubs.rs`).
    pub wasi_stubs: wasi_stubs::WasiStubs,
}

impl Prepared {
    pub fn new(pre: InstancePre<Sandbox>, settings: SandboxSettings) -> Self {
        let concurrency = Semaphore::new(settings.limits.concurrency as usize);
        Self {
            pre,
            settings: Arc::new(settings),
            concurrency,
            spare: Arc::default(),
            wasi_stubs: wasi_stubs::WasiStubs::default(),
        }
    }

    /// The same, knowing the component's own WASI stubs (`WasiStubs::of` its bytes).
    pub fn with_wasi_stubs(mut self, stubs: wasi_stubs::WasiStubs) -> Self {
        self.wasi_stubs = stubs;
        self
    }
}

/// What the host saw of one call: timings (for benchmarks) and the
/// accesses it refused (for the audit log).
#[derive(Debug, Clone, Default)]
pub struct CallReport {
    pub setup: Duration,
    /// Instantiation on the call's path (zero when a spare served it).
    pub instantiate: Duration,
    /// The spare's instantiation, done before the call arrived.
    pub instantiated_ahead: Duration,
    pub run: Duration,
    /// The fuel the call used, for a plugin with a `[limits] fuel` budget:
    /// the guest's instructions (an instantiation on the call's path adds
    /// its start code's).
    pub fuel_used: Option<u64>,
    /// Linear memory and tables the instance held at the end (bytes).
    pub memory: usize,
    pub denials: Vec<String>,
    /// Every refused access, by kind (also those `denials` only counts).
    pub denied: crate::metrics::DenialCounts,
}

impl CallReport {
    /// Adds the interaction requests the manifest did not grant.
    pub fn add_interaction_denials(&mut self, denied: Vec<String>) {
        self.denied
            .add(crate::metrics::DenialKind::Interaction, denied.len() as u64);
        self.denials.extend(denied);
    }
}

/// The interfaces a component may import: what `Backend::new` links.
/// Versions are matched by wasmtime (any 0.2.x of WASI).
const PROVIDED_IMPORTS: [&str; 9] = [
    "wasi:cli/",
    "wasi:clocks/",
    "wasi:filesystem/",
    "wasi:io/",
    "wasi:random/",
    "wasi:sockets/",
    "wasi:http/",
    "wasi:config/store@",
    "warden:plugin/",
];

/// What to tell the author of a component that imports something else.
pub const PROVIDED_IMPORTS_HELP: &str = "Warden provides WASI 0.2 (cli, clocks, filesystem, io, random, sockets, \
     http — each governed by the manifest), `wasi:config/store` (values from the manifest's `[config]`) \
     and the `warden:plugin` host interface";

/// Whether Warden provides the import `name` (an interface name such as
/// `wasi:io/streams@0.2.6`).
pub fn provides(name: &str) -> bool {
    PROVIDED_IMPORTS.iter().any(|prefix| name.starts_with(prefix))
}

/// An engine and the linker that provides Warden's imports on it.
struct Backend {
    engine: Engine,
    linker: Linker<Sandbox>,
}

impl Backend {
    fn new(engine: Engine) -> Result<Self> {
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker)
            .map_err(anyhow::Error::from)
            .context("cannot link WASI")?;
        wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker)
            .map_err(anyhow::Error::from)
            .context("cannot link WASI HTTP")?;
        config_store::add_to_linker(&mut linker).context("cannot link WASI config")?;
        contract::add_to_linker(&mut linker)?;
        spawn_epoch_ticker(&engine);
        Ok(Self { engine, linker })
    }
}

impl Runtime {
    pub fn new() -> Result<Arc<Self>> {
        Self::with_incremental_cache(None)
    }

    /// `incremental`: where both engines keep each compiled function, so a
    /// changed component recompiles only the functions that changed.
    pub fn with_incremental_cache(incremental: Option<Arc<IncrementalCache>>) -> Result<Arc<Self>> {
        let memory_reset = MemoryReset::detect();
        let config = |reset, fuel| engine_config(reset, fuel, incremental.clone());
        let (engine, pooling) = match Engine::new(&config(Some(memory_reset.mode()), false)) {
            Ok(engine) => (engine, true),
            Err(error) => {
                tracing::warn!(
                    "the pooling allocator could not reserve its address space ({error:#}); \
                     falling back to on-demand allocation (slower per call)"
                );
                (Engine::new(&config(None, false))?, false)
            }
        };
        Ok(Arc::new(Self {
            standard: Backend::new(engine)?,
            metered: OnceLock::new(),
            baseline: [OnceLock::new(), OnceLock::new()],
            pool: Arc::new(Pool {
                instances: Arc::new(Semaphore::new(MAX_INSTANCES as usize)),
                handles: HandleBudget::from_process_limit(),
                spares: Arc::new(Semaphore::new(spare::MAX_SPARES)),
                memory_reset,
                pooling,
            }),
            incremental,
        }))
    }

    /// How pooled memory is wiped between calls.
    pub fn memory_reset(&self) -> ResetMode {
        self.pool.memory_reset.mode()
    }

    pub fn engine(&self) -> &Engine {
        &self.standard.engine
    }

    pub fn pooling(&self) -> bool {
        self.pool.pooling
    }

    /// Plugins with a `[limits] fuel` budget run on a second engine that
    /// counts fuel: instrumenting every plugin would slow them all down.
    fn backend(&self, metered: bool) -> Result<&Backend> {
        if !metered {
            return Ok(&self.standard);
        }
        if let Some(backend) = self.metered.get() {
            return Ok(backend);
        }
        let backend = Backend::new(Engine::new(&engine_config(None, true, self.incremental.clone()))?)?;
        Ok(self.metered.get_or_init(|| backend))
    }

    /// The Winch engine for plugins with or without fuel, or `None` where
    /// Winch cannot run. It allocates on demand: its plugins run on it only
    /// until their optimised code is ready, not worth a second pool.
    fn baseline_backend(&self, metered: bool) -> Option<&Backend> {
        self.baseline[usize::from(metered)]
            .get_or_init(|| {
                let mut config = engine_config(None, metered, None);
                config.strategy(wasmtime::Strategy::Winch);
                match Engine::new(&config).map_err(anyhow::Error::from).and_then(Backend::new) {
                    Ok(backend) => Some(backend),
                    Err(error) => {
                        tracing::info!("no baseline compiler here ({error:#}); large components wait for Cranelift");
                        None
                    }
                }
            })
            .as_ref()
    }

    /// The engine a plugin runs on: the fuel-metering one for plugins with a
    /// `[limits] fuel` budget. Compiled code is specific to it.
    pub fn engine_for(&self, metered: bool) -> Result<&Engine> {
        Ok(&self.backend(metered)?.engine)
    }

    /// The baseline (Winch) engine for a plugin, where there is one: it
    /// compiles several times faster than Cranelift into slower code.
    pub fn baseline_engine_for(&self, metered: bool) -> Option<&Engine> {
        Some(&self.baseline_backend(metered)?.engine)
    }

    /// Which compiler made a component's code.
    pub fn tier_of(&self, component: &Component) -> Tier {
        let baseline = self.baseline.iter().filter_map(|b| b.get()?.as_ref());
        match baseline
            .into_iter()
            .any(|b| Engine::same(&b.engine, component.engine()))
        {
            true => Tier::Baseline,
            false => Tier::Optimised,
        }
    }

    /// Compiles a component with Cranelift. CPU-heavy: call it from a
    /// blocking thread.
    pub fn compile(&self, bytes: &[u8], metered: bool) -> Result<Component> {
        Component::new(&self.backend(metered)?.engine, bytes).map_err(|e| proposals::refusal(bytes, &e))
    }

    /// Resolves a component's imports against what Warden provides, on the
    /// engine that compiled it.
    pub fn prepare(&self, component: &Component) -> Result<InstancePre<Sandbox>> {
        let engine = component.engine();
        let backend = [Some(&self.standard), self.metered.get()]
            .into_iter()
            .chain(self.baseline.iter().map(|b| b.get().and_then(Option::as_ref)))
            .flatten()
            .find(|backend| Engine::same(&backend.engine, engine))
            .context("the component was compiled by an engine of another runtime")?;
        Ok(backend.linker.instantiate_pre(component)?)
    }

    /// Runs `body` against a fresh instance of `plugin`, under the plugin's
    /// limits, and classifies every way it can fail.
    pub async fn invoke<T>(
        &self,
        plugin: &Prepared,
        call: CallContext,
        body: impl AsyncFnOnce(&mut Store<Sandbox>, Instance) -> wasmtime::Result<T>,
    ) -> (Result<T, CallFailure>, CallReport) {
        let mut timings = CallReport::default();
        let limits = &plugin.settings.limits;
        if let Err(why) = self.pool.memory_reset.check() {
            return (Err(CallFailure::Unavailable(why)), timings);
        }
        let Some((_running, handles)) = self.admit(plugin).await else {
            return (
                Err(CallFailure::Busy {
                    concurrency: limits.concurrency,
                }),
                timings,
            );
        };
        let prepare_next = call.prepare_next;
        let cancel = call.cancel.clone();
        let plugin_name = call.plugin.clone();
        let timeout = call.timeout.unwrap_or(limits.timeout);
        let started = Instant::now();
        // Taken once the call may run: a sandbox instantiated ahead brings
        // its own pool slot.
        let (mut store, ready, slot) = match plugin.spare.take() {
            Some(spare) => {
                let mut store = spare.store;
                store.data_mut().call = call;
                spare::arm(&mut store, &plugin.settings);
                timings.instantiated_ahead = spare.instantiate;
                (store, Some(spare.instance), spare.slot)
            }
            None => {
                // The pool has a fixed number of slots: wait for one rather than fail.
                let Ok(slot) = self.pool.instances.clone().acquire_owned().await else {
                    unreachable!("the instance semaphore is never closed")
                };
                let sandbox = match Sandbox::new(&plugin.settings, call) {
                    Ok(sandbox) => sandbox,
                    Err(error) => return (Err(CallFailure::Unavailable(format!("{error:#}"))), timings),
                };
                (spare::new_store(&plugin.pre, sandbox, &plugin.settings), None, slot)
            }
        };
        timings.setup = started.elapsed();

        let run = async {
            let (instance, instantiate) = match ready {
                Some(instance) => (instance, Duration::ZERO),
                None => {
                    let instantiated = Instant::now();
                    let instance = plugin.pre.instantiate_async(&mut store).await?;
                    (instance, instantiated.elapsed())
                }
            };
            let value = body(&mut store, instance).await?;
            wasmtime::Result::Ok((value, instantiate))
        };
        // A panic in Warden's own code on the call's path (a host function,
        // the body) ends this call, not the server. One that Rust cannot
        // unwind (inside the engine's native frames) still aborts the
        // process: docs/security.md, "What a panic takes down".
        let run = async {
            match std::panic::AssertUnwindSafe(run).catch_unwind().await {
                Ok(result) => result,
                Err(panic) => Err(wasmtime::Error::new(call_failure::HostPanicked::from_payload(&*panic))),
            }
        };
        let mut timed = Box::pin(tokio::time::timeout(timeout, run));
        let ran = Instant::now();
        let result = tokio::select! {
            result = &mut timed => Some(result),
            () = cancel.cancelled() => None,
        };
        let result = match result {
            Some(result) => Some(result),
            // Cancelled: a cooperative guest sees `host.cancelled()` and returns.
            None => tokio::time::timeout(CANCEL_GRACE, &mut timed).await.ok(),
        };
        // Dropping the future drops the guest's stack: whatever it was doing
        // ends here.
        drop(timed);
        (timings.denials, timings.denied) = store.data().denials.take(&plugin_name);
        timings.memory = store.data().limiter.used();
        // What the budget `arm` set is down by (all of it when exhausted).
        timings.fuel_used = limits
            .fuel
            .map(|fuel| fuel.saturating_sub(store.get_fuel().unwrap_or(0)));
        let Some(result) = result else {
            store.data().finish(&plugin_name);
            drop(store);
            self.pool.check_wiped();
            return (Err(CallFailure::Cancelled), timings);
        };
        timings.run = ran.elapsed();
        let sandbox = store.data();
        let outcome = match result {
            Err(_elapsed) => Err(CallFailure::Timeout(timeout)),
            Ok(Ok((value, instantiate))) => {
                timings.instantiate = instantiate;
                timings.run = timings.run.saturating_sub(instantiate);
                Ok(value)
            }
            Ok(Err(_)) if sandbox.limiter.exceeded => Err(CallFailure::MemoryLimit(limits.memory)),
            Ok(Err(error)) if is_out_of_fuel(&error) => {
                Err(CallFailure::FuelExhausted(limits.fuel.unwrap_or_default()))
            }
            Ok(Err(error)) if is_table_full(&error) => Err(CallFailure::HandleLimit(limits.handles)),
            Ok(Err(error)) if error.downcast_ref::<call_failure::HostPanicked>().is_some() => {
                Err(CallFailure::HostPanic(format!("{error:#}")))
            }
            Ok(Err(error)) if is_hostcall_fuel_exhausted(&error) => {
                Err(CallFailure::TooMuchData { output: limits.output })
            }
            Ok(Err(error)) => Err(CallFailure::Trap {
                message: trap_message(&error, &sandbox.redactor, &plugin.wasi_stubs),
                stderr_tail: sandbox.stderr.crash_summary(&sandbox.redactor),
                // Recorded through the redactor already (`Denials::record`).
                refused: timings.denials.first().cloned(),
            }),
        };
        sandbox.finish(&plugin_name);
        let retired = spare::Retired { store, slot, handles };
        if outcome.is_err() {
            // The slot's memory is wiped when the store goes; a failed call's
            // handles are given back before its error is.
            drop(retired);
            self.pool.check_wiped();
            return (outcome, timings);
        }
        // Only after a call that worked: a plugin whose instantiation fails
        // or runs long is not instantiated again behind its client's back.
        // And only while no other call of the plugin runs: when calls
        // overlap, the cores are theirs, and a spare's task and wake-up
        // would only add to what each call costs.
        let alone = plugin.concurrency.available_permits() + 1 >= limits.concurrency as usize;
        let next = prepare_next && alone;
        spare::retire(
            &self.pool,
            retired,
            &plugin.pre,
            &plugin.settings,
            &plugin.spare,
            plugin_name,
            next,
        );
        (outcome, timings)
    }

    /// Waits, at most half the call's time limit (leaving the other half to
    /// run) and only when it cannot start at once, for a slot of the plugin's
    /// `[limits] concurrency` and the call's handles together; `None`: busy.
    async fn admit<'a>(&self, plugin: &'a Prepared) -> Option<(SemaphorePermit<'a>, OwnedSemaphorePermit)> {
        let limits = &plugin.settings.limits;
        if let (Ok(running), Some(handles)) = (
            plugin.concurrency.try_acquire(),
            self.pool.handles.try_reserve(limits.handles),
        ) {
            return Some((running, handles));
        }
        let wait = async {
            let running = plugin.concurrency.acquire().await.ok()?;
            Some((running, self.pool.handles.reserve(limits.handles).await))
        };
        tokio::time::timeout(BUSY_WAIT.min(limits.timeout / 2), wait)
            .await
            .ok()
            .flatten()
    }
}

/// A full resource table: the guest held `[limits] handles` resources.
fn is_table_full(error: &wasmtime::Error) -> bool {
    error.chain().any(|cause| {
        matches!(
            cause.downcast_ref::<ResourceTableError>(),
            Some(ResourceTableError::Full)
        )
    })
}

/// The hostcall fuel ran out. wasmtime's error type for it is private, so
/// its message is what identifies it (`tests/sandbox.rs` and `tests/plain.rs`
/// fail if that message changes).
fn is_hostcall_fuel_exhausted(error: &wasmtime::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .to_string()
            .contains("fuel allocated for hostcalls has been exhausted")
    })
}

fn is_out_of_fuel(error: &wasmtime::Error) -> bool {
    error.downcast_ref::<Trap>() == Some(&Trap::OutOfFuel)
}

fn trap_message(error: &wasmtime::Error, redactor: &secrets::Redactor, stubs: &wasi_stubs::WasiStubs) -> String {
    // A WASI function the component replaced with a trap of its own: the
    // call never reached the host, and the bare trap would not say so.
    if let Some(stubbed) = stubs.trapped_in(error) {
        return stubbed.describe();
    }
    let header_limit = error.chain().any(|cause| {
        matches!(
            cause.downcast_ref::<wasmtime_wasi_http::FieldMapError>(),
            Some(wasmtime_wasi_http::FieldMapError::TotalSizeTooBig)
        )
    });
    if header_limit {
        return format!(
            "it grew an HTTP header collection past {} KiB, the most one may hold",
            sandbox::MAX_HEADER_BYTES >> 10
        );
    }
    match error.downcast_ref::<Trap>() {
        Some(Trap::UnreachableCodeReached) => "the plugin panicked (wasm `unreachable` executed)".into(),
        Some(Trap::StackOverflow) => "the plugin overflowed its stack".into(),
        // Its `Display` says "wasm trap: …" itself.
        Some(trap) => trap.to_string(),
        // A host error's text may carry what the guest passed in: its
        // secrets are redacted before it is escaped and shortened.
        None => crate::printable::one_line(&redactor.redact(&format!("{:#}", error.root_cause())))
            .chars()
            .take(1000)
            .collect(),
    }
}
