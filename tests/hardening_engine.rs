//! The engine as a hostile plugin author meets it: only the WebAssembly
//! proposals Warden enables are accepted (crates/runtime/src/proposals.rs),
//! on every compiler and from the compiled-code cache, each refusal names the
//! proposal, and no plugin's call takes the server down. And, under memory
//! compaction, no call finds a byte its predecessor wrote.

#![allow(clippy::disallowed_methods)] // tests read fixtures freely; bounded_file is for what Warden serves

mod support;

use std::path::Path;

use serde_json::json;
use support::{Era, PluginDir, is_error, serve, serve_command, text};
use warden_plugins::tiering::BASELINE_FROM;

/// A component around one core module `$m` that exports `ok: () -> i32`,
/// exported as the tool `ok() -> u8`.
fn component(core_module: &str) -> Vec<u8> {
    component_serving(core_module, "ok")
}

/// The same, with the tool named `tool`.
fn component_serving(core_module: &str, tool: &str) -> Vec<u8> {
    let text = format!(
        "(component
           (core module $m {core_module})
           (core instance $i (instantiate $m))
           (func (export \"{tool}\") (result u8) (canon lift (core func $i \"ok\"))))"
    );
    wat::parse_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// The same component grown past the size served on Winch first.
fn large(bytes: Vec<u8>) -> Vec<u8> {
    support::components::padded(bytes, BASELINE_FROM)
}

/// A plugin that answers 7, to show the server goes on serving.
const GOOD: &str = "(func (export \"ok\") (result i32) i32.const 7)";

/// CVE-2026-140416: a non-final function type, functions of it and of a
/// subtype in a table, and each way of testing a reference against it.
/// Wasmtime 48.0.8 without its `gc` feature accepted these on Cranelift and
/// aborted the process on the first call.
const NON_FINAL: [(&str, &str); 5] = [
    (
        "call-indirect",
        "(func (export \"ok\") (result i32) (call_indirect (type $t) (i32.const 1)))",
    ),
    (
        "return-call-indirect",
        "(func (export \"ok\") (result i32) (return_call_indirect (type $t) (i32.const 1)))",
    ),
    (
        "ref-test",
        "(func (export \"ok\") (result i32) (ref.test (ref $t) (table.get (i32.const 1))))",
    ),
    (
        "ref-cast",
        "(func (export \"ok\") (result i32) (call_ref $t (ref.cast (ref $t) (table.get (i32.const 1)))))",
    ),
    (
        "br-on-cast",
        "(func (export \"ok\") (result i32)
           (block $hit (result (ref $t))
             (br_on_cast $hit funcref (ref $t) (table.get (i32.const 1)))
             (return (i32.const 0)))
           (call_ref $t))",
    ),
];

fn non_final(body: &str) -> Vec<u8> {
    component(&format!(
        "(type $final (func (result i32)))
         (type $t (sub (func (result i32))))
         (type $u (sub $t (func (result i32))))
         (func $a (type $t) i32.const 1)
         (func $b (type $u) i32.const 2)
         (table 2 2 funcref)
         (elem (i32.const 0) func $a $b)
         {body}"
    ))
}

/// `warden check PATH`: whether it passed, and its report (stdout).
async fn check(path: &Path) -> (bool, String) {
    let output = support::warden().arg("check").arg(path).output().await.unwrap();
    (output.status.success(), String::from_utf8(output.stdout).unwrap())
}

#[tokio::test]
async fn non_final_function_types_are_refused_on_every_tier_and_the_server_serves_on() {
    let dir = PluginDir::new();
    dir.write("good.wasm", component(GOOD));
    for (name, body) in NON_FINAL {
        // Cranelift (small), Winch first (large), and the fuel-metered engine.
        dir.write(&format!("{name}.wasm"), non_final(body));
        dir.write(&format!("{name}-large.wasm"), large(non_final(body)));
        dir.write(&format!("{name}-fuel.wasm"), non_final(body));
        dir.write(&format!("{name}-fuel.toml"), "[limits]\nfuel = 100000000\n");
    }
    let (ok, report) = check(dir.path()).await;
    assert!(!ok, "{report}");
    assert!(report.ends_with("1 plugin(s) valid, 15 invalid\n"), "{report}");
    for (name, _) in NON_FINAL {
        for file in [name.to_string(), format!("{name}-large"), format!("{name}-fuel")] {
            let line = report
                .lines()
                .find(|line| line.contains(&format!("{file}.wasm")))
                .unwrap_or_else(|| panic!("no line for {file}:\n{report}"));
            assert!(
                line.contains("`gc`") && line.contains("which Warden's engine does not enable"),
                "{line}"
            );
        }
    }

    // `warden call` compiles with Cranelift into the compiled-code cache
    // (48.0.8 wrote such code there, and `serve` then skipped Winch and
    // aborted): refused, and nothing is cached for `serve` to pick up.
    let cache = tempfile::tempdir().unwrap();
    let cache_dir = cache.path().join("cache");
    for file in ["call-indirect.wasm", "call-indirect-large.wasm"] {
        let output = support::warden()
            .args(["call", "--cache-dir"])
            .arg(&cache_dir)
            .arg(dir.path().join(file))
            .arg("ok")
            .output()
            .await
            .unwrap();
        let said = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{said}");
        assert!(said.contains("`gc`") && said.contains("does not enable"), "{said}");
    }
    let cached = std::fs::read_dir(&cache_dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|e| e.path().extension().is_some_and(|x| x == "cwasm"))
                .count()
        })
        .unwrap_or(0);
    assert_eq!(cached, 0, "a refused component left compiled code in the cache");

    let cache_arg = cache_dir.to_str().unwrap();
    let server = serve(dir.path(), Era::Handshake, &["--no-watch", "--cache-dir", cache_arg]).await;
    assert_eq!(server.tool_names().await, ["ok"]);
    for _ in 0..3 {
        assert_eq!(text(&server.call("ok", json!({})).await), "7");
    }
    let log = server.stop().await;
    for (name, _) in NON_FINAL {
        assert!(log.contains(&format!("{name}-large.wasm")), "{log}");
    }
    assert!(
        log.contains("`gc` proposal") && log.contains("which Warden's engine does not enable"),
        "{log}"
    );
}

/// A core module using each proposal Warden turns off, by its name in the
/// refusal.
const DISABLED: [(&str, &str); 10] = [
    (
        "tail-call",
        "(func $seven (result i32) i32.const 7) (func (export \"ok\") (result i32) return_call $seven)",
    ),
    (
        "simd",
        "(func (export \"ok\") (result i32) (i32x4.extract_lane 0 (v128.const i32x4 7 7 7 7)))",
    ),
    (
        "memory64",
        "(memory i64 1) (func (export \"ok\") (result i32) (i32.load (i64.const 0)))",
    ),
    (
        "threads",
        "(memory 1 1 shared) (func (export \"ok\") (result i32) (i32.atomic.load (i32.const 0)))",
    ),
    (
        "exceptions",
        "(tag $oops) (func (export \"ok\") (result i32) throw $oops)",
    ),
    (
        "function-references",
        "(type $f (func (result i32))) (func $seven (type $f) i32.const 7) (elem declare func $seven)
         (func (export \"ok\") (result i32) (call_ref $f (ref.func $seven)))",
    ),
    (
        "gc",
        "(type $point (struct (field i32))) (func (export \"ok\") (result i32)
           (struct.get $point 0 (struct.new $point (i32.const 7))))",
    ),
    (
        "relaxed-simd",
        "(func (export \"ok\") (result i32)
           (i32x4.extract_lane 0 (i32x4.relaxed_trunc_f32x4_s (v128.const f32x4 7 7 7 7))))",
    ),
    (
        "wide-arithmetic",
        "(func (export \"ok\") (result i32)
           (i64.add128 (i64.const 7) (i64.const 0) (i64.const 0) (i64.const 0)) drop i32.wrap_i64)",
    ),
    (
        "custom-page-sizes",
        "(memory 1 (pagesize 1)) (func (export \"ok\") (result i32) i32.const 7)",
    ),
];

#[tokio::test]
async fn a_component_using_a_disabled_proposal_is_refused_naming_it() {
    let dir = PluginDir::new();
    for (proposal, module) in DISABLED {
        dir.write(&format!("{proposal}.wasm"), component(module));
    }
    let (ok, report) = check(dir.path()).await;
    assert!(!ok, "{report}");
    for (proposal, _) in DISABLED {
        let line = report
            .lines()
            .find(|line| line.contains(&format!("{proposal}.wasm")))
            .unwrap_or_else(|| panic!("no line for {proposal}:\n{report}"));
        assert!(
            line.contains(&format!("`{proposal}`")) && line.contains("which Warden's engine does not enable"),
            "{line}"
        );
    }
    assert!(
        report.ends_with(&format!("0 plugin(s) valid, {} invalid\n", DISABLED.len())),
        "{report}"
    );
}

#[tokio::test]
async fn an_indirect_call_of_the_wrong_type_traps_said_once_and_the_server_goes_on() {
    let dir = PluginDir::new();
    dir.write("good.wasm", component(GOOD));
    dir.write(
        "mismatch.wasm",
        component_serving(
            "(type $t (func (result i32))) (type $other (func (param i32) (result i32)))
             (func $a (type $other) local.get 0)
             (table 1 1 funcref) (elem (i32.const 0) func $a)
             (func (export \"ok\") (result i32) (call_indirect (type $t) (i32.const 0)))",
            "mismatch",
        ),
    );
    let server = serve(dir.path(), Era::Handshake, &["--no-watch"]).await;
    let mut tools = server.tool_names().await;
    tools.sort();
    assert_eq!(tools, ["mismatch", "ok"]);
    for _ in 0..3 {
        let trapped = server.call("mismatch", json!({})).await;
        assert!(is_error(&trapped));
        let said = text(&trapped);
        assert!(said.contains("wasm trap: indirect call type mismatch"), "{said}");
        assert_eq!(said.matches("wasm trap").count(), 1, "{said}");
        assert_eq!(text(&server.call("ok", json!({})).await), "7");
    }
    server.stop().await;
}

/// componentize-py's `--stub-wasi` in miniature (finding 14): the WASI
/// function Python's `open()` calls first, `wasi:filesystem/preopens`'
/// `get-directories`, as wit-component builds it in stub mode — a module of
/// its own, named `wit-component:adapter:…`, whose body is `unreachable` —
/// called by the tool `{prefix}stubbed`; and the same function imported
/// from the host, called by `{prefix}asked`, which answers how many
/// preopened folders the host gave (none, with no grant: an answer, never
/// a trap).
fn wasi_stub_component(prefix: &str) -> Vec<u8> {
    let text = format!(
        r#"(component
          (import "wasi:filesystem/types@0.2.0" (instance $types
            (export "descriptor" (type (sub resource)))))
          (alias export $types "descriptor" (type $descriptor))
          (import "wasi:filesystem/preopens@0.2.0" (instance $preopens
            (alias outer 1 $descriptor (type $d))
            (export "descriptor" (type $d2 (eq $d)))
            (export "get-directories" (func (result (list (tuple (own $d2) string)))))))
          (core module $wit-component:adapter:wasi:filesystem/preopens@0.2.0
            (func (export "get-directories") (param i32) unreachable))
          (core module $libc
            (memory (export "memory") 1)
            (global $next (mut i32) (i32.const 1024))
            (func (export "realloc") (param i32 i32 i32 i32) (result i32)
              (local $at i32)
              (local.set $at (i32.and (i32.add (global.get $next) (i32.sub (local.get 2) (i32.const 1)))
                                      (i32.sub (i32.const 0) (local.get 2))))
              (global.set $next (i32.add (local.get $at) (local.get 3)))
              (local.get $at)))
          (core module $main
            (import "wasi:filesystem/preopens@0.2.0" "get-directories" (func $stubbed (param i32)))
            (import "host" "get-directories" (func $asked (param i32)))
            (import "libc" "memory" (memory 1))
            (func (export "stubbed") (result i32) (call $stubbed (i32.const 16)) (i32.load offset=4 (i32.const 16)))
            (func (export "asked") (result i32) (call $asked (i32.const 16)) (i32.load offset=4 (i32.const 16))))
          (core instance $libc (instantiate $libc))
          (core instance $stubs (instantiate $wit-component:adapter:wasi:filesystem/preopens@0.2.0))
          (alias export $preopens "get-directories" (func $get-directories))
          (core func $lowered (canon lower (func $get-directories)
            (memory (core memory $libc "memory")) (realloc (core func $libc "realloc"))))
          (core instance $host (export "get-directories" (func $lowered)))
          (core instance $main (instantiate $main
            (with "wasi:filesystem/preopens@0.2.0" (instance $stubs))
            (with "host" (instance $host))
            (with "libc" (instance $libc))))
          (func (export "{prefix}stubbed") (result u32) (canon lift (core func $main "stubbed")))
          (func (export "{prefix}asked") (result u32) (canon lift (core func $main "asked"))))"#
    );
    wat::parse_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

#[tokio::test]
async fn a_crash_in_the_components_own_wasi_stub_is_named_and_real_wasi_answers() {
    let dir = PluginDir::new();
    dir.write("stubbed.wasm", wasi_stub_component(""));
    // The same served on Winch first, as an 18 MiB Python component is.
    dir.write("stubbed-large.wasm", large(wasi_stub_component("large-")));
    let audit = dir.path().join("audit.jsonl");
    let server = serve(
        dir.path(),
        Era::Handshake,
        &["--no-watch", "--audit-log", audit.to_str().unwrap()],
    )
    .await;
    for (plugin, prefix) in [("stubbed", ""), ("stubbed-large", "large-")] {
        let crashed = server.call(&format!("{prefix}stubbed"), json!({})).await;
        assert!(is_error(&crashed));
        assert_eq!(
            text(&crashed),
            format!(
                "plugin `{plugin}` crashed while running `{prefix}stubbed`: the plugin panicked (wasm \
                 `unreachable` executed) in its own stub for `wasi:filesystem/preopens@0.2.0#get-directories`: \
                 it was built with WASI replaced by functions that only trap (e.g. `componentize-py \
                 --stub-wasi`), so the call never reached Warden and no grant changes that; built without \
                 stubbing WASI, the call reaches Warden and is answered (a path that is not granted gets \
                 an error: no such file or directory)"
            )
        );
        // Asked of Warden, with nothing granted: no folder, and no trap.
        let asked = server.call(&format!("{prefix}asked"), json!({})).await;
        assert!(!is_error(&asked), "{asked:?}");
        assert_eq!(text(&asked), "0");
    }
    server.stop().await;
    let records = std::fs::read_to_string(&audit).unwrap();
    let trap = records
        .lines()
        .find(|line| line.contains("\"outcome\":\"trap\""))
        .unwrap_or_else(|| panic!("no trap recorded:\n{records}"));
    assert!(
        trap.contains("its own stub for `wasi:filesystem/preopens@0.2.0#get-directories`"),
        "{trap}"
    );
}

/// The residue test: each call scans all of its memory for the marker the
/// previous call planted (in 192 separate runs of pages and in a static the
/// data segment initialises), then plants it again. Answers 7 when memory
/// was as new, 0 when any trace of the marker was left.
fn residue_component() -> Vec<u8> {
    component(
        "(memory 64)
         ;; A static: the data segment sets it to 42; a call overwrites it.
         (data (i32.const 2097152) \"\\2a\\00\\00\\00\\00\\00\\00\\00\")
         (func (export \"ok\") (result i32)
           (local $at i32) (local $stale i32) (local $run i32)
           ;; Scan every 8-byte word of the 4 MiB for the marker.
           (block $done (loop $scan
             (br_if $done (i32.ge_u (local.get $at) (i32.const 4194304)))
             (local.set $stale (i32.or (local.get $stale)
               (i64.eq (i64.load (local.get $at)) (i64.const 0x5eed_f00d_cafe_beef))))
             (local.set $at (i32.add (local.get $at) (i32.const 8)))
             (br $scan)))
           (local.set $stale (i32.or (local.get $stale)
             (i64.ne (i64.load (i32.const 2097152)) (i64.const 42))))
           ;; Plant it: two words at the start of every other 4 KiB page of
           ;; the first 1.5 MiB (192 separate runs), and in the static.
           (block $planted (loop $plant
             (br_if $planted (i32.ge_u (local.get $run) (i32.const 192)))
             (i64.store (i32.mul (local.get $run) (i32.const 8192)) (i64.const 0x5eed_f00d_cafe_beef))
             (i64.store offset=8 (i32.mul (local.get $run) (i32.const 8192)) (i64.const 0x5eed_f00d_cafe_beef))
             (local.set $run (i32.add (local.get $run) (i32.const 1)))
             (br $plant)))
           (i64.store (i32.const 2097152) (i64.const 0x5eed_f00d_cafe_beef))
           (select (i32.const 0) (i32.const 7) (local.get $stale)))",
    )
}

/// Asks the kernel to compact all memory, every `period`, until `stop`; and
/// churns memory meanwhile so there is something to move. `false` when this
/// process may not (not root, or no /proc/sys/vm/compact_memory).
fn compact_memory_meanwhile(
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> Option<Vec<std::thread::JoinHandle<()>>> {
    use std::sync::atomic::Ordering;
    std::fs::write("/proc/sys/vm/compact_memory", "1").ok()?;
    let compactor = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let _ = std::fs::write("/proc/sys/vm/compact_memory", "1");
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
        })
    };
    let churner = std::thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            // 64 MiB a page at a time, every other page freed first: holes
            // for the compactor to fill by moving pages, Warden's among them.
            let mut pages: Vec<Option<Box<[u8; 4096]>>> = (0..16384).map(|_| Some(Box::new([1u8; 4096]))).collect();
            pages.iter_mut().step_by(2).for_each(|page| *page = None);
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    });
    Some(vec![compactor, churner])
}

#[tokio::test]
async fn no_call_finds_a_byte_its_predecessor_wrote_while_the_kernel_compacts_memory() {
    // The default reset, unless the environment names one (to measure another).
    residue_under_compaction(std::env::var("WARDEN_MEMORY_RESET").ok(), 3000).await;
}

#[tokio::test]
async fn no_call_finds_a_byte_its_predecessor_wrote_on_the_rewrite_reset_either() {
    residue_under_compaction(Some("rewrite".into()), 1500).await;
}

async fn residue_under_compaction(reset: Option<String>, calls: usize) {
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let Some(threads) = compact_memory_meanwhile(stop.clone()) else {
        eprintln!(
            "skipped: compacting memory needs root and /proc/sys/vm/compact_memory (CI runs as root; this process \
             cannot write it)"
        );
        return;
    };
    let dir = PluginDir::new();
    dir.write("residue.wasm", residue_component());
    let mut command = support::warden();
    if let Some(reset) = &reset {
        command.env("WARDEN_MEMORY_RESET", reset);
    }
    let (server, audit) = support::components::serve_audited(&dir, command).await;
    let mut found = 0;
    for _ in 0..calls {
        if text(&server.call("ok", json!({})).await) != "7" {
            found += 1;
        }
    }
    // And a few at once, each on its own slot.
    for _ in 0..50 {
        let call = || server.call("ok", json!({}));
        let (a, b, c, d) = tokio::join!(call(), call(), call(), call());
        found += [a, b, c, d].iter().filter(|r| text(r) != "7").count();
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for thread in threads {
        thread.join().unwrap();
    }
    let ahead = support::attacks::audit_lines(&audit)
        .iter()
        .filter(|record| record["timing"].get("instantiated_ahead_us").is_some())
        .count();
    server.stop().await;
    eprintln!(
        "{reset:?}: {found} of {} calls found a marker; {ahead} ran on sandboxes made ahead",
        calls + 200
    );
    assert_eq!(found, 0, "calls found what an earlier call left in memory");
    assert!(ahead > calls / 2, "only {ahead} calls ran on sandboxes made ahead");
}

#[tokio::test]
async fn a_refused_plugin_beside_a_good_one_over_stdio_keeps_the_fuel_engine_serving() {
    // The fuel-metered engine has the same proposals: a good plugin on it
    // answers while a refused one is named.
    let dir = PluginDir::new();
    dir.write("good.wasm", component(GOOD));
    dir.write("good.toml", "[limits]\nfuel = 100000000\n");
    dir.write("gc.wasm", non_final(NON_FINAL[0].1));
    dir.write("gc.toml", "[limits]\nfuel = 100000000\n");
    let stderr = tempfile::NamedTempFile::new().unwrap();
    let server = serve_command(support::warden(), dir.path(), Era::Handshake, &["--no-watch"], stderr).await;
    assert_eq!(server.tool_names().await, ["ok"]);
    assert_eq!(text(&server.call("ok", json!({})).await), "7");
    let log = server.stop().await;
    assert!(
        log.contains("gc.wasm: the component uses the WebAssembly `gc` proposal"),
        "{log}"
    );
}

#[tokio::test]
async fn a_panic_on_a_calls_path_ends_that_call_and_the_runtime_serves_on() {
    use warden_plugins::loader::{Loader, discover};
    use warden_runtime::{CallContext, CallFailure, Runtime};
    let dir = PluginDir::new();
    dir.write("good.wasm", component(GOOD));
    let runtime = Runtime::new().unwrap();
    let loader = Loader::new(runtime.clone(), None, &[dir.path().to_path_buf()], Default::default());
    let (sources, _) = discover(dir.path()).unwrap();
    let plugin = loader.load(&sources[0], &[]).await.unwrap();
    let context = || CallContext::detached(plugin.name.clone());
    for _ in 0..2 {
        let (panicked, _) = runtime
            .invoke(&plugin.prepared, context(), async |_, _| {
                if plugin.name.len() < usize::MAX {
                    panic!("a bug on the call's path");
                }
                Ok(())
            })
            .await;
        match panicked {
            Err(CallFailure::HostPanic(why)) => {
                assert!(
                    why.contains("a bug on the call's path") && why.contains("a bug in Warden"),
                    "{why}"
                )
            }
            other => panic!("{other:?}"),
        }
        let (answered, _) = runtime
            .invoke(&plugin.prepared, context(), async |store, instance| {
                let ok = instance.get_typed_func::<(), (u8,)>(&mut *store, "ok")?;
                ok.call_async(&mut *store, ()).await
            })
            .await;
        assert_eq!(answered.unwrap(), (7,));
    }
}
