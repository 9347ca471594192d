//! Which WebAssembly proposals Warden's engines accept: the one list, the
//! same for Cranelift and Winch, for `serve`, `call`, `check` and `dev`.
//!
//! Every proposal wasmparser knows is named here, on or off, so nothing is
//! left to a default that may change with a Wasmtime release or differ
//! between compilers (48.x enabled function references, GC types and tail
//! calls on Cranelift but not on Winch). What is on is what the components
//! Warden's supported toolchains produce use, measured with
//! `cargo run -p warden-runtime --example proposals -- FILE.wasm …`
//! (docs/engine.md lists what it found); the rest is refused at load, with
//! its name. Less that a guest can reach is less engine that can be wrong:
//! CVE-2026-140416 was a non-final function type, a GC-proposal feature no
//! supported toolchain emits.

use wasmparser::{Validator, WasmFeatures};

/// One proposal (or wasmparser's pseudo-feature) and whether Warden enables it.
pub struct Proposal {
    pub flag: WasmFeatures,
    /// As the proposal calls itself (and `wasm-tools --features` spells it).
    pub name: &'static str,
    pub enabled: bool,
}

const fn on(flag: WasmFeatures, name: &'static str) -> Proposal {
    Proposal {
        flag,
        name,
        enabled: true,
    }
}

const fn off(flag: WasmFeatures, name: &'static str) -> Proposal {
    Proposal {
        flag,
        name,
        enabled: false,
    }
}

/// Every feature wasmparser 0.254 knows, each decided.
pub const PROPOSALS: &[Proposal] = &[
    // WebAssembly 1.0 and 2.0 but SIMD: what the toolchains emit, or enable
    // by default (LLVM's `generic` CPU: multi-value too, unseen so far).
    on(WasmFeatures::FLOATS, "floats"),
    on(WasmFeatures::MUTABLE_GLOBAL, "mutable-global"),
    on(WasmFeatures::SATURATING_FLOAT_TO_INT, "saturating-float-to-int"),
    on(WasmFeatures::SIGN_EXTENSION, "sign-extension"),
    on(WasmFeatures::MULTI_VALUE, "multi-value"),
    on(WasmFeatures::BULK_MEMORY, "bulk-memory"),
    on(WasmFeatures::BULK_MEMORY_OPT, "bulk-memory-opt"),
    on(WasmFeatures::REFERENCE_TYPES, "reference-types"),
    on(WasmFeatures::CALL_INDIRECT_OVERLONG, "call-indirect-overlong"),
    // CPython as componentize-py (wasi-sdk) builds it.
    on(WasmFeatures::EXTENDED_CONST, "extended-const"),
    // The adapter modules Wasmtime itself generates between a component's
    // core instances (each with its own memory) use several memories; a
    // component's own module may still define only one (component_shape).
    on(WasmFeatures::MULTI_MEMORY, "multi-memory"),
    // The component model itself, without its newer parts.
    on(WasmFeatures::COMPONENT_MODEL, "component-model"),
    // Used by none of the measured toolchains' output, and in none of their
    // default target features. Those a hostile module combines (GC's family,
    // tail calls) first and together: naming a refusal tests them in groups.
    off(WasmFeatures::GC, "gc"),
    off(WasmFeatures::GC_TYPES, "gc-types"),
    off(WasmFeatures::FUNCTION_REFERENCES, "function-references"),
    off(WasmFeatures::TAIL_CALL, "tail-call"),
    off(WasmFeatures::EXCEPTIONS, "exceptions"),
    off(WasmFeatures::LEGACY_EXCEPTIONS, "legacy-exceptions"),
    off(WasmFeatures::STACK_SWITCHING, "stack-switching"),
    off(WasmFeatures::SIMD, "simd"),
    off(WasmFeatures::RELAXED_SIMD, "relaxed-simd"),
    off(WasmFeatures::MEMORY64, "memory64"),
    off(WasmFeatures::THREADS, "threads"),
    off(WasmFeatures::SHARED_EVERYTHING_THREADS, "shared-everything-threads"),
    off(WasmFeatures::CUSTOM_PAGE_SIZES, "custom-page-sizes"),
    off(WasmFeatures::MEMORY_CONTROL, "memory-control"),
    off(WasmFeatures::WIDE_ARITHMETIC, "wide-arithmetic"),
    off(WasmFeatures::CUSTOM_DESCRIPTORS, "custom-descriptors"),
    off(WasmFeatures::COMPACT_IMPORTS, "compact-imports"),
    off(WasmFeatures::CM_VALUES, "component-model-values"),
    off(WasmFeatures::CM_NESTED_NAMES, "component-model-nested-names"),
    off(WasmFeatures::CM_ASYNC, "component-model-async"),
    off(WasmFeatures::CM_ASYNC_STACKFUL, "component-model-async-stackful"),
    off(
        WasmFeatures::CM_MORE_ASYNC_BUILTINS,
        "component-model-more-async-builtins",
    ),
    off(WasmFeatures::CM_THREADING, "component-model-threading"),
    off(WasmFeatures::CM_ERROR_CONTEXT, "component-model-error-context"),
    off(
        WasmFeatures::CM_FIXED_LENGTH_LISTS,
        "component-model-fixed-length-lists",
    ),
    off(WasmFeatures::CM_GC, "component-model-gc"),
    off(WasmFeatures::CM_MAP, "component-model-map"),
    off(WasmFeatures::CM64, "component-model-memory64"),
    off(WasmFeatures::CM_IMPLEMENTS, "component-model-implements"),
    off(WasmFeatures::CM_CANON_NAMES, "component-model-canon-names"),
];

/// The features Warden's engines validate and compile with.
pub fn enabled() -> WasmFeatures {
    PROPOSALS
        .iter()
        .filter(|p| p.enabled)
        .fold(WasmFeatures::empty(), |all, p| all | p.flag)
}

/// Sets every proposal on `config` explicitly, on or off.
pub fn apply(config: &mut wasmtime::Config) {
    let enabled = enabled();
    let everything = PROPOSALS.iter().fold(WasmFeatures::empty(), |all, p| all | p.flag);
    // Off first: some flags share bits (reference types include the
    // overlong `call_indirect` encoding), and what is on must stay on.
    config.wasm_features(everything.difference(enabled), false);
    config.wasm_features(enabled, true);
}

fn validates(bytes: &[u8], features: WasmFeatures) -> bool {
    Validator::new_with_features(features).validate_all(bytes).is_ok()
}

/// How many times naming a refusal may validate the component: each pass
/// costs what the compiler's own validation did, so a hostile component
/// makes a refusal cost a few compiles' worth at most. Enough for any
/// one or two needed proposals, and three of the first twelve.
const NAMING_PASSES: usize = 24;

/// The proposals Warden does not enable that `bytes` needs, by name: a
/// minimal set of them that, added to Warden's, makes it valid. `Some(empty)`
/// when it is valid without them, or invalid even with every proposal on;
/// `None` when telling which would take more than `NAMING_PASSES`
/// validations. For explaining a refusal, not for every load.
pub fn disabled_used_by(bytes: &[u8]) -> Option<Vec<&'static str>> {
    let mut naming = Naming {
        bytes,
        passes: 0,
        enabled: enabled(),
        kept: PROPOSALS.iter().filter(|p| !p.enabled).collect(),
    };
    // Invalid for another reason: the compiler's own message says why.
    if !naming.valid_with(&naming.kept.clone())? {
        return Some(Vec::new());
    }
    let all = naming.kept.clone();
    naming.prune(&all)?;
    Some(naming.kept.iter().map(|p| p.name).collect())
}

/// Group testing: drops from `kept` every disabled proposal the component
/// can do without, half a group at a time, so one needed proposal among
/// thirty costs at most twelve validations rather than thirty.
struct Naming<'a> {
    bytes: &'a [u8],
    passes: usize,
    enabled: WasmFeatures,
    kept: Vec<&'static Proposal>,
}

impl Naming<'_> {
    fn valid_with(&mut self, proposals: &[&'static Proposal]) -> Option<bool> {
        if self.passes == NAMING_PASSES {
            return None;
        }
        self.passes += 1;
        let features = proposals.iter().fold(self.enabled, |all, p| all | p.flag);
        Some(validates(self.bytes, features))
    }

    fn prune(&mut self, group: &[&'static Proposal]) -> Option<()> {
        let without: Vec<_> = self
            .kept
            .iter()
            .copied()
            .filter(|p| !group.iter().any(|g| std::ptr::eq(*g, *p)))
            .collect();
        if self.valid_with(&without)? {
            self.kept = without;
        } else if group.len() > 1 {
            let (first, second) = group.split_at(group.len() / 2);
            self.prune(first)?;
            self.prune(second)?;
        }
        Some(())
    }
}

/// Every proposal beyond WebAssembly 1.0 that `bytes` uses, whether Warden
/// enables it or not: each one without which it no longer validates (with
/// every other feature on). For measuring toolchains' output.
pub fn used_by(bytes: &[u8]) -> Result<Vec<&'static str>, String> {
    let everything = PROPOSALS.iter().fold(WasmFeatures::empty(), |all, p| all | p.flag);
    Validator::new_with_features(everything)
        .validate_all(bytes)
        .map_err(|e| format!("not valid even with every proposal on: {e}"))?;
    let basic = WasmFeatures::FLOATS | WasmFeatures::MUTABLE_GLOBAL | WasmFeatures::COMPONENT_MODEL;
    Ok(PROPOSALS
        .iter()
        .filter(|p| !basic.contains(p.flag) && !validates(bytes, everything.difference(p.flag)))
        .map(|p| p.name)
        .collect())
}

/// The refusal of a component that does not compile: when it needs a
/// proposal Warden does not enable, says which, and what the author can
/// do; otherwise the compiler's own error.
pub fn refusal(bytes: &[u8], error: &wasmtime::Error) -> anyhow::Error {
    let needed = match disabled_used_by(bytes) {
        Some(needed) if needed.is_empty() => return anyhow::anyhow!("cannot compile the component: {error:#}"),
        Some(needed) => needed,
        None => {
            return anyhow::anyhow!(
                "the component uses WebAssembly that Warden's engine does not enable (docs/engine.md lists what \
                 it does; which proposal was not worked out, to keep a refusal cheap) — the compiler said: \
                 {error:#}"
            );
        }
    };
    let (noun, list) = match needed.as_slice() {
        [one] => ("proposal", format!("`{one}`")),
        many => (
            "proposals",
            many.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", "),
        ),
    };
    anyhow::anyhow!(
        "the component uses the WebAssembly {list} {noun}, which Warden's engine does not enable (docs/engine.md \
         lists what it does); build it without {} (for example with the toolchain's default target features) \
         — the compiler said: {error:#}",
        if needed.len() == 1 { "it" } else { "them" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_feature_wasmparser_knows_is_decided() {
        let decided = PROPOSALS.iter().fold(WasmFeatures::empty(), |all, p| all | p.flag);
        let undecided = WasmFeatures::all().difference(decided);
        assert!(
            undecided.is_empty(),
            "wasmparser knows features this list does not decide: {undecided:?}"
        );
    }

    #[test]
    fn both_compilers_accept_exactly_the_list() {
        for strategy in [wasmtime::Strategy::Cranelift, wasmtime::Strategy::Winch] {
            let mut config = wasmtime::Config::new();
            config.strategy(strategy);
            apply(&mut config);
            // Engine::new validates the set against what the compiler supports.
            if let Err(error) = wasmtime::Engine::new(&config) {
                assert!(
                    matches!(strategy, wasmtime::Strategy::Winch) && !cfg!(target_arch = "x86_64"),
                    "{strategy:?} refuses Warden's proposals: {error:#}"
                );
            }
        }
    }

    fn engine(widen: impl FnOnce(&mut wasmtime::Config)) -> wasmtime::Engine {
        let mut config = wasmtime::Config::new();
        apply(&mut config);
        widen(&mut config);
        wasmtime::Engine::new(&config).unwrap()
    }

    #[test]
    fn code_compiled_under_a_wider_configuration_is_never_loaded() {
        let bytes = wat::parse_str(
            "(component
               (core module $m
                 (func $seven (result i32) i32.const 7)
                 (func (export \"ok\") (result i32) return_call $seven))
               (core instance $i (instantiate $m))
               (func (export \"ok\") (result u8) (canon lift (core func $i \"ok\"))))",
        )
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let cache = crate::cache::CodeCache::open(&dir.path().join("cache")).unwrap();
        let wider = engine(|config| {
            config.wasm_tail_call(true);
        });
        let warden = engine(|_| {});
        cache.load_or_compile(&wider, "digest", &bytes).unwrap();
        assert!(cache.contains(&wider, "digest"));
        // Another configuration, another name: never looked up.
        assert!(!cache.contains(&warden, "digest"));
        // Planted under the name Warden's engine looks up, it is still not
        // loaded: Wasmtime checks the features it was compiled with.
        std::fs::copy(cache.entry_path(&wider, "digest"), cache.entry_path(&warden, "digest")).unwrap();
        let refused = cache
            .load_or_compile(&warden, "digest", &bytes)
            .unwrap_err()
            .to_string();
        assert!(
            refused.contains("the WebAssembly `tail-call` proposal, which Warden's engine does not enable"),
            "{refused}"
        );
        assert!(!cache.contains(&warden, "digest"), "the planted entry was removed");
    }

    #[test]
    fn one_needed_proposal_among_thirty_is_named_within_the_pass_budget() {
        let tail =
            wat::parse_str("(module (func $seven (result i32) i32.const 7) (func (result i32) return_call $seven))")
                .unwrap();
        assert_eq!(disabled_used_by(&tail), Some(vec!["tail-call"]));
        let threads =
            wat::parse_str("(module (memory 1 1 shared) (func (result i32) (i32.atomic.load (i32.const 0))))").unwrap();
        assert_eq!(disabled_used_by(&threads), Some(vec!["threads"]));
    }

    #[test]
    fn a_refusal_names_every_proposal_needed_together() {
        // Struct types need GC's proposal and its types together.
        let bytes = wat::parse_str("(module (type (struct (field i32))))").unwrap();
        let named = disabled_used_by(&bytes).unwrap();
        assert!(named.contains(&"gc"), "{named:?}");
        let plain = wat::parse_str("(module (func (result i32) i32.const 7))").unwrap();
        assert_eq!(disabled_used_by(&plain), Some(vec![]));
        // Invalid whatever is enabled: nothing to name, after one pass.
        let broken = wat::parse_str("(module (func (result i32) i64.const 7))").unwrap();
        assert_eq!(disabled_used_by(&broken), Some(vec![]));
        assert_eq!(used_by(&plain).unwrap(), Vec::<&str>::new());
    }
}
