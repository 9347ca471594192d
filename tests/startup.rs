//! Starting on stdio while large plugins compile: the handshake (and
//! `server/discover`) is answered at once — an official client gives up on
//! `server/discover` after 10 s and falls back to the older wire — and the
//! first list waits for the load, so it is never partial.

#![allow(clippy::disallowed_methods)] // tests read fixtures freely; bounded_file is for what Warden serves

mod support;

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::PluginDir;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// A plain component exporting `ok() -> u8` (7) whose module also holds
/// `filler` functions of `size` additions each: compiling it takes seconds,
/// as a large JavaScript or Python component does.
fn slow_to_compile(filler: u32, size: u32) -> Vec<u8> {
    use wasm_encoder::{
        CodeSection, ExportKind, ExportSection, Function, FunctionSection, Instruction, Module, TypeSection, ValType,
    };
    let mut module = Module::new();
    let mut types = TypeSection::new();
    types.ty().function([], [ValType::I32]);
    types.ty().function([ValType::I32], [ValType::I32]);
    module.section(&types);
    let mut functions = FunctionSection::new();
    functions.function(0);
    for _ in 0..filler {
        functions.function(1);
    }
    module.section(&functions);
    let mut exports = ExportSection::new();
    exports.export("ok", ExportKind::Func, 0);
    module.section(&exports);
    let mut code = CodeSection::new();
    let mut ok = Function::new([]);
    ok.instruction(&Instruction::I32Const(7)).instruction(&Instruction::End);
    code.function(&ok);
    for n in 0..filler {
        let mut body = Function::new([]);
        for k in 0..size {
            body.instruction(&Instruction::LocalGet(0))
                .instruction(&Instruction::I32Const((n ^ k) as i32))
                .instruction(&Instruction::I32Mul)
                .instruction(&Instruction::LocalSet(0));
        }
        body.instruction(&Instruction::LocalGet(0))
            .instruction(&Instruction::End);
        code.function(&body);
    }
    module.section(&code);

    support::components::exporting_ok(&module)
}

async fn read(stdout: &mut tokio::io::Lines<BufReader<tokio::process::ChildStdout>>) -> Value {
    let line = tokio::time::timeout(Duration::from_secs(120), stdout.next_line())
        .await
        .expect("a reply in time")
        .unwrap()
        .expect("a line");
    serde_json::from_str(&line).unwrap()
}

#[tokio::test]
async fn the_handshake_is_answered_while_plugins_compile_and_the_first_list_waits_for_them() {
    let dir = PluginDir::new();
    dir.write("slow.wasm", slow_to_compile(400, 2_000));
    let stderr = tempfile::NamedTempFile::new().unwrap();
    let mut child = support::warden()
        .args(["serve", "--no-cache", "--no-watch", "--plugins"])
        .arg(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(stderr.reopen().unwrap())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    let log = || std::fs::read_to_string(stderr.path()).unwrap();

    let started = Instant::now();
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "startup", "version": "1"}}});
    stdin.write_all(format!("{initialize}\n").as_bytes()).await.unwrap();
    let reply = read(&mut stdout).await;
    let answered = started.elapsed();
    assert_eq!(reply["result"]["serverInfo"]["name"], "warden", "{reply}");
    let log_at_handshake = log();
    assert!(
        !log_at_handshake.contains("loaded plugin `slow`"),
        "the handshake waited for compiling ({answered:?}):\n{log_at_handshake}"
    );

    stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}\n")
        .await
        .unwrap();
    let listed = read(&mut stdout).await;
    let listed_after = started.elapsed();
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{listed}"))
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["ok"], "the first list is the loaded one, not a partial one");
    assert!(log().contains("loaded plugin `slow`"), "{}", log());
    eprintln!("handshake answered after {answered:?}; the first tools/list after {listed_after:?}");

    stdin
        .write_all(
            b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"ok\",\"arguments\":{}}}\n",
        )
        .await
        .unwrap();
    let called = read(&mut stdout).await;
    assert_eq!(called["result"]["isError"], false, "{called}");
    assert_eq!(called["result"]["structuredContent"], json!({"result": 7}), "{called}");
}

#[tokio::test]
async fn a_client_that_leaves_during_the_first_load_ends_the_process_with_success() {
    let dir = PluginDir::new();
    dir.write("slow.wasm", slow_to_compile(400, 2_000));
    let mut child = support::warden()
        .args(["serve", "--no-cache", "--no-watch", "--plugins"])
        .arg(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    drop(child.stdin.take());
    let status = tokio::time::timeout(Duration::from_secs(120), child.wait())
        .await
        .expect("the process ends")
        .unwrap();
    assert!(status.success(), "{status}");
}

#[tokio::test]
async fn a_fifo_in_the_plugins_folder_is_refused_without_holding_the_load() {
    // A FIFO named like a component or a manifest (a half-set-up pipe, or a hostile
    // folder): reading it would wait for a writer, and hold the first load, and with
    // it every plugin, forever. It is refused as not a regular file; the rest serve.
    let dir = PluginDir::with(&["text", "misbehave"]);
    for name in ["stuck.wasm", "misbehave.toml"] {
        let path = std::ffi::CString::new(dir.path().join(name).as_os_str().as_encoded_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
    }
    let server = support::serve(dir.path(), support::Era::Handshake, &["--no-watch"]).await;
    let log = server.log();
    assert!(
        log.contains(&format!(
            "the component {} is not a regular file",
            dir.path().join("stuck.wasm").display()
        )),
        "{log}"
    );
    assert!(
        log.contains(&format!(
            "the manifest {} is not a regular file",
            dir.path().join("misbehave.toml").display()
        )),
        "{log}"
    );
    let names = server.tool_names().await;
    assert!(!names.is_empty(), "text serves");
    assert!(
        !names.iter().any(|name| name == "echo"),
        "misbehave's manifest cannot be read, so misbehave is not served: {names:?}"
    );
    server.stop().await;
}

#[tokio::test]
async fn identical_components_loaded_together_are_compiled_once() {
    // Forty copies of one component, each serving its own tool name (the
    // manifest sets the prefix), on an empty cache: one compile, the other
    // thirty-nine take its code. On the warm cache, one read of the cache
    // entry: however the loads interleave, the batch's later loads take the
    // code it read instead of mapping a copy of their own.
    let dir = PluginDir::new();
    for i in 0..40 {
        dir.add("prefixed", &format!("p{i}"));
        dir.write(
            &format!("p{i}.toml"),
            format!("[environment]\nset = {{ TOOL_PREFIX = \"p{i}\" }}\n"),
        );
    }
    let cache = tempfile::tempdir().unwrap();
    // Serves the 40 and returns the startup line's counts.
    let start = || async {
        let server = support::serve(
            dir.path(),
            support::Era::Handshake,
            &["--no-watch", "--cache-dir", cache.path().to_str().unwrap()],
        )
        .await;
        assert_eq!(server.tool_names().await.len(), 40);
        server.stop().await
    };
    let log = start().await;
    assert!(log.contains("compiled=1 from_cache=0 reused=39"), "{log}");
    let entries = std::fs::read_dir(cache.path()).unwrap().count();
    assert_eq!(entries, 1, "one cache entry");
    let log = start().await;
    assert!(log.contains("compiled=0 from_cache=1 reused=39"), "{log}");
}
