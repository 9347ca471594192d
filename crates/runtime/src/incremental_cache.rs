//! Cranelift's incremental compilation cache, kept in memory: each function's
//! machine code, by a digest of the function's compiler input (its IR and the
//! target's settings, not its index or its callees' addresses). A rebuilt
//! component whose functions are mostly unchanged (a Python or JavaScript
//! plugin: the interpreter is the same build after build, only the snapshot
//! of the author's code differs) then compiles only what changed.
//!
//! In memory only, for the life of the process. A value is machine code that
//! Cranelift copies into the component without checking it (only its format
//! and Cranelift's version are checked), so a value someone else could have
//! written would run as Warden; a store only this process writes needs no
//! such checks. (The on-disk compiled-code cache, `cache.rs`, already skips
//! compiling bytes it has seen, across restarts.)
//!
//! Bounded by bytes, in two generations: new entries go into the current
//! one; when it is full it becomes the previous one and the old previous one
//! is dropped; a hit in the previous generation moves the entry back into
//! the current one. So what the latest compilations used survives, stale
//! code is dropped, and the whole never holds more than the cap.
//!
//! Not every unchanged function is found. In wasmtime 48 a function can
//! carry into its key state left by the function its compiler context
//! compiled before (an entry trampoline's exception table, which Cranelift's
//! `DataFlowGraph::clear` keeps), so which context compiles it decides its
//! key: about 5% of a Python component's 22 000 functions are compiled again
//! even when nothing changed (both variants are then kept, and found later).

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use wasmtime::CacheStore;

/// What `warden dev` keeps. A componentize-py component's functions take
/// 27 MiB here, a componentize-js one's 36 MiB, and each rebuild adds 3 to
/// 4 MiB (what changed, and the functions whose keys moved: see above); a
/// generation (half of this) must hold a whole component, with room for the
/// plugins served beside it, for its next build to find what did not change.
pub const DEV_CAP: usize = 256 << 20;

/// What an entry costs beyond its key's and value's bytes (the map's slot
/// and the two allocations' bookkeeping), so that many tiny entries are
/// bounded too.
const ENTRY_OVERHEAD: usize = 64;

#[derive(Debug)]
pub struct IncrementalCache {
    /// Each generation holds at most half of the cap.
    generation_cap: usize,
    generations: Mutex<Generations>,
    hits: AtomicU64,
    misses: AtomicU64,
    inserts: AtomicU64,
}

#[derive(Debug, Default)]
struct Generations {
    current: Generation,
    previous: Generation,
}

#[derive(Debug, Default)]
struct Generation {
    entries: HashMap<Box<[u8]>, Box<[u8]>>,
    bytes: usize,
}

impl Generation {
    fn put(&mut self, key: Box<[u8]>, value: Box<[u8]>) {
        let key_len = key.len();
        self.bytes += cost(key_len, value.len());
        if let Some(old) = self.entries.insert(key, value) {
            self.bytes -= cost(key_len, old.len());
        }
    }
}

fn cost(key: usize, value: usize) -> usize {
    key + value + ENTRY_OVERHEAD
}

/// Counts since the cache was made, for tests and measurements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stats {
    /// Functions whose code was found.
    pub hits: u64,
    /// Functions that were looked up and compiled.
    pub misses: u64,
    /// Entries stored (a miss whose entry was too big for the cap is not).
    pub inserts: u64,
    /// What the entries held now cost, counted against the cap.
    pub bytes: usize,
}

impl IncrementalCache {
    /// A cache that never holds more than `cap` bytes.
    pub fn new(cap: usize) -> Self {
        Self {
            generation_cap: cap / 2,
            generations: Mutex::default(),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            inserts: AtomicU64::new(0),
        }
    }

    pub fn stats(&self) -> Stats {
        let generations = self.lock();
        Stats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            inserts: self.inserts.load(Ordering::Relaxed),
            bytes: generations.current.bytes + generations.previous.bytes,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Generations> {
        // Nothing panics while holding it (running out of memory aborts).
        self.generations
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Puts an entry into the current generation, first retiring it if the
    /// entry would not fit.
    fn put_current(&self, generations: &mut Generations, key: Box<[u8]>, value: Box<[u8]>) {
        if generations.current.bytes + cost(key.len(), value.len()) > self.generation_cap {
            generations.previous = std::mem::take(&mut generations.current);
        }
        generations.current.put(key, value);
    }
}

impl CacheStore for IncrementalCache {
    fn get(&self, key: &[u8]) -> Option<Cow<'_, [u8]>> {
        let mut generations = self.lock();
        // Copied out: the lock cannot be held while Cranelift reads it. A
        // copy of a function's code is cheap beside compiling it.
        let found = match generations.current.entries.get(key) {
            Some(value) => Some(value.to_vec()),
            None => match generations.previous.entries.remove_entry(key) {
                Some((key, value)) => {
                    generations.previous.bytes -= cost(key.len(), value.len());
                    let copy = value.to_vec();
                    self.put_current(&mut generations, key, value);
                    Some(copy)
                }
                None => None,
            },
        };
        let counter = if found.is_some() { &self.hits } else { &self.misses };
        counter.fetch_add(1, Ordering::Relaxed);
        found.map(Cow::Owned)
    }

    fn insert(&self, key: &[u8], value: Vec<u8>) -> bool {
        if cost(key.len(), value.len()) > self.generation_cap {
            return false;
        }
        let mut generations = self.lock();
        self.put_current(&mut generations, key.into(), value.into_boxed_slice());
        self.inserts.fetch_add(1, Ordering::Relaxed);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use wasm_encoder::{CodeSection, ExportKind, ExportSection, Function, FunctionSection, TypeSection, ValType};

    /// A core module of functions `(i32) -> i32`, the i-th returning
    /// `x * factors[i] + i`, and a last one, exported as `run` when asked,
    /// that returns the sum of them all applied to its argument.
    fn module(factors: &[i32], export: bool) -> wasm_encoder::Module {
        let mut types = TypeSection::new();
        types.ty().function([ValType::I32], [ValType::I32]);
        let mut functions = FunctionSection::new();
        let mut code = CodeSection::new();
        for (i, factor) in factors.iter().enumerate() {
            functions.function(0);
            let mut body = Function::new([]);
            body.instructions()
                .local_get(0)
                .i32_const(*factor)
                .i32_mul()
                .i32_const(i as i32)
                .i32_add()
                .end();
            code.function(&body);
        }
        functions.function(0);
        let mut run = Function::new([]);
        let mut sink = run.instructions();
        sink.i32_const(0);
        for i in 0..factors.len() {
            sink.local_get(0).call(i as u32).i32_add();
        }
        sink.end();
        code.function(&run);
        let mut module = wasm_encoder::Module::new();
        module.section(&types).section(&functions);
        if export {
            let mut exports = ExportSection::new();
            exports.export("run", ExportKind::Func, factors.len() as u32);

            module.section(&exports);
        }
        module.section(&code);
        module
    }

    /// The module in a component, without exports: the functions are all
    /// that is compiled (exports add trampolines, which wasmtime 48 compiles
    /// in a way that changes some functions' keys from one compilation to
    /// the next).
    fn component(factors: &[i32]) -> Vec<u8> {
        let mut component = wasm_encoder::Component::new();
        component.section(&wasm_encoder::ModuleSection(&module(factors, false)));
        component.finish()
    }

    fn factors() -> Vec<i32> {
        (1..=40).collect()
    }

    #[test]
    fn a_rebuild_compiles_only_the_function_that_changed() {
        let cache = Arc::new(IncrementalCache::new(DEV_CAP));
        let runtime = crate::Runtime::with_incremental_cache(Some(cache.clone())).unwrap();
        let mut factors = factors();
        runtime.compile(&component(&factors), false).unwrap();
        // Each function, and a trampoline for calls to the host of each
        // type: nothing found yet.
        let first = cache.stats();
        assert_eq!((first.hits, first.misses, first.inserts), (0, 43, 43));

        factors[17] = 1000;
        runtime.compile(&component(&factors), false).unwrap();
        // All found but the function that changed.
        let second = cache.stats();
        assert_eq!((second.hits, second.misses, second.inserts), (42, 44, 44));

        // The fuel-counting engine keeps its functions there too (under
        // other keys: its code counts fuel).
        runtime.compile(&component(&factors), true).unwrap();
        let metered = cache.stats();
        assert_eq!(
            (metered.hits, metered.misses),
            (44, 86),
            "only the trampolines count no fuel"
        );
        runtime.compile(&component(&factors), true).unwrap();
        assert_eq!((cache.stats().hits, cache.stats().misses), (88, 86));
    }

    #[test]
    fn code_from_the_cache_calls_the_right_functions() {
        let cache = Arc::new(IncrementalCache::new(DEV_CAP));
        let mut config = wasmtime::Config::new();
        config.enable_incremental_compilation(cache.clone()).unwrap();
        // One compiler context, in one order: with parallel compilation,
        // which context compiles what after `run`'s trampoline depends on
        // the scheduler, and under a loaded test run fewer functions hit.
        config.parallel_compilation(false);
        let engine = wasmtime::Engine::new(&config).unwrap();
        let run = |factors: &[i32]| {
            let module = wasmtime::Module::new(&engine, module(factors, true).finish()).unwrap();
            let mut store = wasmtime::Store::new(&engine, ());
            let instance = wasmtime::Instance::new(&mut store, &module, &[]).unwrap();
            let run = instance.get_typed_func::<i32, i32>(&mut store, "run").unwrap();
            run.call(&mut store, 2).unwrap()
        };
        // Σ (2·i + (i − 1)) for i in 1..=40 = 3·820 − 40.
        let mut factors = factors();
        assert_eq!(run(&factors), 2420);
        let hits = cache.stats().hits;
        factors[17] = 1000;
        assert_eq!(run(&factors), 2420 + 2 * (1000 - 18));
        // Most of the 41 functions were found. (Not necessarily all: `run`'s
        // entry trampoline leaves state in the compiler context that enters
        // the key of whichever function that context compiles next.)
        assert!(cache.stats().hits >= hits + 30, "{:?}", cache.stats());
    }

    #[test]
    fn a_value_that_does_not_decode_is_compiled_again() {
        let cache = Arc::new(IncrementalCache::new(DEV_CAP));
        let runtime = crate::Runtime::with_incremental_cache(Some(cache.clone())).unwrap();
        runtime.compile(&component(&factors()), false).unwrap();
        for value in cache.lock().current.entries.values_mut() {
            *value = b"not Cranelift's".to_vec().into_boxed_slice();
        }
        runtime.compile(&component(&factors()), false).unwrap();
        let stats = cache.stats();
        assert_eq!(
            (stats.hits, stats.inserts),
            (43, 86),
            "found, refused, compiled and stored again"
        );
    }

    /// An entry of `ENTRY_OVERHEAD + 64` bytes.
    fn entry(name: u8) -> (Vec<u8>, Vec<u8>) {
        (vec![name; 4], vec![name; 60])
    }

    #[test]
    fn the_cap_bounds_what_is_kept_and_recent_entries_stay() {
        let size = ENTRY_OVERHEAD + 64;
        // Two entries per generation.
        let cache = IncrementalCache::new(4 * size);
        for name in [b'a', b'b', b'c'] {
            let (key, value) = entry(name);
            assert!(cache.insert(&key, value));
        }
        // `c` retired the generation of `a` and `b`; finding `a` brings it back.
        assert_eq!(cache.get(&entry(b'a').0).as_deref(), Some(&entry(b'a').1[..]));
        let (key, value) = entry(b'd');
        assert!(cache.insert(&key, value));
        // `d` retired `c` and `a`; `b`, not used since, is gone.
        assert_eq!(cache.get(&entry(b'b').0), None);
        assert!(cache.get(&entry(b'c').0).is_some());
        assert!(cache.get(&entry(b'd').0).is_some());
        assert!(cache.stats().bytes <= 4 * size, "{:?}", cache.stats());

        // An entry bigger than a generation is not kept.
        assert!(!cache.insert(b"big", vec![0; 2 * size]));
        assert_eq!(cache.stats().inserts, 4);
    }

    #[test]
    fn a_cap_too_small_for_any_function_leaves_compiling_as_it_was() {
        let cache = Arc::new(IncrementalCache::new(ENTRY_OVERHEAD));
        let runtime = crate::Runtime::with_incremental_cache(Some(cache.clone())).unwrap();
        runtime.compile(&component(&factors()), false).unwrap();
        let stats = cache.stats();
        assert_eq!((stats.misses, stats.inserts, stats.bytes), (43, 0, 0));
    }

    #[test]
    fn a_component_bigger_than_the_cap_never_takes_more() {
        let unbounded = Arc::new(IncrementalCache::new(DEV_CAP));
        crate::Runtime::with_incremental_cache(Some(unbounded.clone()))
            .unwrap()
            .compile(&component(&factors()), false)
            .unwrap();
        let cap = unbounded.stats().bytes / 3;
        let cache = Arc::new(IncrementalCache::new(cap));
        let runtime = crate::Runtime::with_incremental_cache(Some(cache.clone())).unwrap();
        for _ in 0..3 {
            runtime.compile(&component(&factors()), false).unwrap();
            assert!(cache.stats().bytes <= cap, "{:?} (cap {cap})", cache.stats());
        }
        assert!(cache.stats().inserts > 43, "{:?}", cache.stats());
    }
}
