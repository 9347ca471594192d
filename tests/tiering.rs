//! Tiered compilation: a large component is served on Winch's baseline code
//! within a second or two, and moved onto Cranelift's optimised code once
//! that is compiled — with the same limits on both, no call lost, and no
//! list change announced for what did not change.

#![allow(clippy::disallowed_methods)] // tests read fixtures freely; bounded_file is for what Warden serves

mod support;

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Value, json};
use support::{Era, PluginDir, guest, serve, text};
use warden_plugins::loader::{Loader, discover};
use warden_plugins::plugin::{Plugin, ToolArguments};
use warden_plugins::tiering::BASELINE_FROM;
use warden_runtime::cache::{CodeCache, CodeOrigin};
use warden_runtime::contract::Reply;
use warden_runtime::contract::types::InputRequired;
use warden_runtime::{CallContext, CallFailure, Runtime, Tier};

/// `name`'s component grown past the size served on Winch first.
fn large(name: &str) -> Vec<u8> {
    support::components::padded(std::fs::read(guest(name)).unwrap(), BASELINE_FROM)
}

async fn call(runtime: &Runtime, plugin: &Plugin, tool: &str, arguments: Value) -> Result<String, CallFailure> {
    let json = arguments.to_string();
    let arguments = ToolArguments {
        value: &arguments,
        json: &json,
        plain: None,
    };
    let context = CallContext::detached(plugin.name.clone());
    let identity = &std::convert::identity::<InputRequired>;
    let (result, _) = plugin
        .call_tool(runtime, tool, arguments, None, context, identity)
        .await;
    match result?.expect("the tool answers") {
        Reply::Done(done) => Ok(format!("{:?}", done.content)),
        Reply::InputRequired(_) => panic!("the tool asked for input"),
    }
}

/// The plugin loaded by a tiering loader, and the runtime it runs on.
async fn load(dir: &PluginDir) -> (Arc<Runtime>, Arc<Loader>, Plugin) {
    let runtime = Runtime::new().unwrap();
    let loader = Loader::new(runtime.clone(), None, &[PathBuf::from(dir.path())], Default::default());
    loader.enable_tiering();
    let (sources, _) = discover(dir.path()).unwrap();
    let plugin = loader.load(&sources[0], &[]).await.unwrap();
    (runtime, loader, plugin)
}

/// Every limit holds on baseline code as on optimised code: a guest compiled by
/// Winch is interrupted by its time limit (epoch checks), its fuel, its memory
/// limit and its stack, and the next call is served.
#[tokio::test]
async fn baseline_code_is_held_to_every_limit() {
    for (manifest, tool, arguments, expected) in [
        ("[limits]\ntimeout = \"300ms\"\n", "spin", json!({}), "timeout"),
        ("[limits]\nfuel = 5000000\n", "spin", json!({}), "fuel"),
        (
            "[limits]\nmemory = \"64 MiB\"\n",
            "alloc",
            json!({"megabytes": 1000}),
            "memory",
        ),
        ("", "recurse", json!({"depth": 100_000_000}), "stack"),
    ] {
        let dir = PluginDir::new();
        dir.write("hostile.wasm", large("hostile"))
            .write("hostile.toml", manifest);
        let (runtime, _loader, plugin) = load(&dir).await;
        assert_eq!(plugin.code, CodeOrigin::Baseline, "{manifest}");
        assert_eq!(runtime.tier_of(&plugin.component), Tier::Baseline);
        let failure = call(&runtime, &plugin, tool, arguments).await.unwrap_err();
        let kind = match &failure {
            CallFailure::Timeout(_) => "timeout",
            CallFailure::FuelExhausted(5_000_000) => "fuel",
            CallFailure::MemoryLimit(_) => "memory",
            CallFailure::Trap { message, .. } if message.contains("overflowed its stack") => "stack",
            _ => "other",
        };
        assert_eq!(kind, expected, "{manifest}: {failure:?}");
        // The sandbox is whole after the failure.
        let answer = call(&runtime, &plugin, "recurse", json!({"depth": 100})).await.unwrap();
        assert!(answer.contains("\"100\""), "{answer}");
    }
}

/// Through the binary: the large plugin is listed and called on baseline
/// code, moved onto optimised code without a list change, and the next start
/// reads the optimised code from the cache.
#[tokio::test]
async fn a_large_component_is_served_at_once_then_optimised() {
    let dir = PluginDir::with(&["text"]);
    dir.write("big.wasm", large("hostile"));
    let cache = tempfile::tempdir().unwrap();
    let args = ["--cache-dir", cache.path().to_str().unwrap()];
    let server = serve(dir.path(), Era::Handshake, &args).await;
    // Logged just after the catalog that serves them is swapped in.
    server.wait_for_log("loaded plugin `text`").await;
    server.wait_for_log("loaded plugin `big`").await;
    assert!(
        server.log().contains("(code: baseline, optimised code follows; "),
        "{}",
        server.log()
    );
    let seen = server.list_changes();
    assert_eq!(text(&server.call("recurse", json!({"depth": 7})).await), "7");
    server.wait_for_log("plugin `big` runs on optimised code now").await;
    assert_eq!(text(&server.call("recurse", json!({"depth": 8})).await), "8");
    assert_eq!(server.list_changes(), seen, "no list changed with the code");
    let log = server.stop().await;
    assert_eq!(log.matches("(code: baseline").count(), 1, "{log}");

    let server = serve(dir.path(), Era::Handshake, &args).await;
    server.wait_for_log("loaded plugin `big` from").await;
    assert!(!server.log().contains("(code: baseline"), "{}", server.log());
    assert_eq!(text(&server.call("recurse", json!({"depth": 9})).await), "9");
    server.stop().await;
}

/// A one-shot load (a loader without a reconciler) compiles once, optimised.
#[tokio::test]
async fn without_a_reconciler_nothing_is_tiered() {
    let dir = PluginDir::new();
    dir.write("hostile.wasm", large("hostile"));
    let runtime = Runtime::new().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let loader = Loader::new(
        runtime.clone(),
        Some(CodeCache::open(cache.path()).unwrap()),
        &[PathBuf::from(dir.path())],
        Default::default(),
    );
    let (sources, _) = discover(dir.path()).unwrap();
    let plugin = loader.load(&sources[0], &[]).await.unwrap();
    assert_eq!(plugin.code, CodeOrigin::Compiled);
    assert_eq!(runtime.tier_of(&plugin.component), Tier::Optimised);
}

/// A second load of the same bytes while the optimised code compiles (as
/// `warden dev`'s trial load is followed by the reconciler's) takes the
/// baseline code or, once done, the optimised code: Winch runs once.
#[tokio::test]
async fn the_same_bytes_are_compiled_by_winch_once() {
    let dir = PluginDir::new();
    dir.write("hostile.wasm", large("hostile"));
    let (runtime, loader, first) = load(&dir).await;
    assert_eq!(first.code, CodeOrigin::Baseline);
    let (sources, _) = discover(dir.path()).unwrap();
    let second = loader.load(&sources[0], &[]).await.unwrap();
    assert!(
        matches!(second.code, CodeOrigin::Reused | CodeOrigin::Compiled),
        "{:?}",
        second.code
    );
    let answer = call(&runtime, &second, "recurse", json!({"depth": 3})).await.unwrap();
    assert!(answer.contains("\"3\""), "{answer}");
}
