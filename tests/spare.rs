//! A plugin's next sandbox, instantiated ahead of its call (`spare.rs`): it
//! serves the next call, fresh, and what a plugin's start code can make the
//! host spend that way is bounded — memory held at rest, and start code that
//! never ends, which is not run again behind the client's back.

#![allow(clippy::disallowed_methods)] // tests read fixtures freely; bounded_file is for what Warden serves

mod support;

use std::time::Duration;

use serde_json::{Value, json};
use support::attacks::audit_lines;
use support::{Era, PluginDir, Server, text};

/// What a test component's core module runs when it is instantiated.
enum Start {
    Nothing,
    /// Grows its memory by this many 64 KiB pages.
    Grow(i32),
    /// `loop br 0 end`.
    Forever,
}

/// A plain component exporting `ok() -> u8` (7) whose core module has a
/// memory of one page and runs `start` when it is instantiated.
fn component(start: Start) -> Vec<u8> {
    use wasm_encoder::{
        BlockType, CodeSection, ExportKind, ExportSection, Function, FunctionSection, Instruction, Module,
        StartSection, TypeSection, ValType,
    };
    let mut module = Module::new();
    let mut types = TypeSection::new();
    types.ty().function([], [ValType::I32]);
    types.ty().function([], []);
    module.section(&types);
    let mut functions = FunctionSection::new();
    functions.function(0);
    functions.function(1);
    module.section(&functions);
    module.section(&support::components::memory(1));
    let mut exports = ExportSection::new();
    exports.export("ok", ExportKind::Func, 0);
    module.section(&exports);
    if !matches!(start, Start::Nothing) {
        module.section(&StartSection { function_index: 1 });
    }
    let mut code = CodeSection::new();
    let mut ok = Function::new([]);
    ok.instruction(&Instruction::I32Const(7)).instruction(&Instruction::End);
    code.function(&ok);
    let mut on_start = Function::new([]);
    match start {
        Start::Nothing => {}
        Start::Grow(pages) => {
            on_start
                .instruction(&Instruction::I32Const(pages))
                .instruction(&Instruction::MemoryGrow(0))
                .instruction(&Instruction::Drop);
        }
        Start::Forever => {
            on_start
                .instruction(&Instruction::Loop(BlockType::Empty))
                .instruction(&Instruction::Br(0))
                .instruction(&Instruction::End);
        }
    }
    on_start.instruction(&Instruction::End);
    code.function(&on_start);
    module.section(&code);

    support::components::exporting_ok(&module)
}

/// Serves `start`'s component as `starts.wasm` with `manifest`, logging at
/// debug level (where a spare not kept is said) and auditing every call.
async fn serve_component(start: Start, manifest: &str) -> (PluginDir, Server, std::path::PathBuf) {
    let dir = PluginDir::new();
    dir.write("starts.wasm", component(start));
    dir.write("starts.toml", manifest);
    let mut command = support::warden();
    command.env("RUST_LOG", "warden=info,warden_runtime=debug");
    let (server, audit) = support::components::serve_audited(&dir, command).await;
    (dir, server, audit)
}

/// The `timing` of each audited call of `ok`.
fn timings(audit: &std::path::Path) -> Vec<Value> {
    audit_lines(audit)
        .into_iter()
        .filter(|record| record["tool"] == "ok")
        .map(|record| record["timing"].clone())
        .collect()
}

#[tokio::test]
async fn the_next_call_starts_on_a_sandbox_instantiated_ahead_of_it() {
    let (_dir, server, audit) = serve_component(Start::Nothing, "").await;
    // Each call gives the sandbox after it time to be made; some call soon
    // finds one ready (the first never can).
    let mut ahead = None;
    for _ in 0..100 {
        assert_eq!(text(&server.call("ok", json!({})).await), "7");
        let calls = timings(&audit);
        if let Some(timing) = calls.iter().find(|t| t.get("instantiated_ahead_us").is_some()) {
            ahead = Some((calls.clone(), timing.clone()));
            break;
        }
    }
    let (calls, timing) = ahead.expect("no call was served by a sandbox instantiated ahead of it");
    assert!(
        calls[0].get("instantiated_ahead_us").is_none() && calls[0]["instantiate_us"].as_u64().is_some(),
        "the first call instantiates its own sandbox: {}",
        calls[0]
    );
    assert_eq!(
        timing["instantiate_us"], 0,
        "a call served ahead instantiates nothing itself: {timing}"
    );
    // That each sandbox serves one call, sequential or concurrent, is what
    // `nothing_a_call_leaves_in_memory_reaches_the_next_call` (tests/stdio.rs)
    // checks: its client's calls after the first run on sandboxes made ahead.
    server.stop().await;
}

#[tokio::test]
async fn a_sandbox_that_would_hold_much_memory_while_it_waits_is_not_kept() {
    // 40 MiB at start: within the plugin's memory limit (64 MiB by
    // default), beyond what a waiting sandbox may hold (32 MiB).
    let (_dir, server, audit) = serve_component(Start::Grow(640), "").await;
    assert_eq!(text(&server.call("ok", json!({})).await), "7");
    server
        .wait_for_log("not instantiated ahead of its next call: it holds 40 MiB of memory")
        .await;
    assert_eq!(text(&server.call("ok", json!({})).await), "7");
    for timing in timings(&audit) {
        assert!(
            timing.get("instantiated_ahead_us").is_none(),
            "a call was served by a sandbox holding 40 MiB: {timing}"
        );
    }
    server.stop().await;
}

/// The CPU time (user + system) the process has used.
fn cpu_time(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // After the command's name, in parentheses: utime and stime are the
    // 12th and 13th fields.
    let fields: Vec<&str> = stat.rsplit_once(')').unwrap().1.split_whitespace().collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    // SAFETY: sysconf only reads a configuration value.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as u64;
    Duration::from_millis(ticks * 1000 / per_second)
}

#[tokio::test]
async fn start_code_that_never_ends_is_not_run_again_behind_the_clients_back() {
    let (_dir, server, _audit) = serve_component(Start::Forever, "[limits]\ntimeout = \"1s\"\n").await;
    let spun = server.call("ok", json!({})).await;
    assert!(text(&spun).contains("exceeded its 1s time limit"), "{spun:?}");
    // The call failed, so no sandbox is instantiated ahead of the next: the
    // server stays idle instead of spinning another second in the background.
    let before = cpu_time(server.pid);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let spent = cpu_time(server.pid) - before;
    assert!(
        spent < Duration::from_millis(500),
        "the server spent {spent:?} of CPU in 1.5 s after the failed call"
    );
    server.stop().await;
}

/// A plain component exporting `ok() -> u8`: 1 when the first word of any
/// 64 KiB of its 16 MiB memory is not zero (every call sees a fresh memory:
/// 0), after which it fills all 16 MiB, dirtying 4 096 pages, so that
/// wiping its sandbox takes long enough to be done after the answer.
fn dirtying_component() -> Vec<u8> {
    use wasm_encoder::{BlockType, Function, Instruction, MemArg, ValType};
    const DIRTIED: i32 = 16 << 20;
    let word = MemArg {
        offset: 0,
        align: 2,
        memory_index: 0,
    };
    // Locals: 0 = address, 1 = what was found there, OR-ed.
    let mut ok = Function::new([(2, ValType::I32)]);
    ok.instruction(&Instruction::Loop(BlockType::Empty))
        .instruction(&Instruction::LocalGet(1))
        .instruction(&Instruction::LocalGet(0))
        .instruction(&Instruction::I32Load(word))
        .instruction(&Instruction::I32Or)
        .instruction(&Instruction::LocalSet(1))
        .instruction(&Instruction::LocalGet(0))
        .instruction(&Instruction::I32Const(64 << 10))
        .instruction(&Instruction::I32Add)
        .instruction(&Instruction::LocalTee(0))
        .instruction(&Instruction::I32Const(DIRTIED))
        .instruction(&Instruction::I32LtU)
        .instruction(&Instruction::BrIf(0))
        .instruction(&Instruction::End)
        .instruction(&Instruction::I32Const(0))
        .instruction(&Instruction::I32Const(0xAB))
        .instruction(&Instruction::I32Const(DIRTIED))
        .instruction(&Instruction::MemoryFill(0))
        .instruction(&Instruction::LocalGet(1))
        .instruction(&Instruction::I32Const(0))
        .instruction(&Instruction::I32Ne)
        .instruction(&Instruction::End);
    support::components::exporting_ok(&support::components::ok_module(256, &ok))
}

#[tokio::test]
async fn a_sandbox_wiped_after_its_answer_leaves_nothing_to_the_next_call() {
    let dir = PluginDir::new();
    dir.write("dirty.wasm", dirtying_component());
    let mut command = support::warden();
    command.env("RUST_LOG", "warden=info,warden_runtime=debug");
    let (server, audit) = support::components::serve_audited(&dir, command).await;
    // Filling 16 MiB makes the first wipe long; the calls after are answered
    // before their sandbox is wiped, and each finds its memory as new,
    // whether it was made ahead or on its own path, sequential or at once.
    for round in 0..20 {
        assert_eq!(text(&server.call("ok", json!({})).await), "0", "call {round}");
    }
    server.wait_for_log("the next is wiped after its answer").await;
    let server = std::sync::Arc::new(server);
    let mut together = tokio::task::JoinSet::new();
    for _ in 0..8 {
        let server = server.clone();
        together.spawn(async move { text(&server.call("ok", json!({})).await) });
    }
    for answer in together.join_all().await {
        assert_eq!(answer, "0", "a call made at once with others");
    }
    let server = std::sync::Arc::into_inner(server).unwrap();
    for round in 0..20 {
        assert_eq!(text(&server.call("ok", json!({})).await), "0", "call {round} after");
    }
    assert!(
        timings(&audit).iter().any(|t| t.get("instantiated_ahead_us").is_some()),
        "no call ran on a sandbox made ahead, so this checked nothing of them"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_sandbox_made_ahead_remembers_nothing_of_earlier_calls() {
    let dir = PluginDir::with(&["misbehave"]);
    let audit = dir.path().join("audit.jsonl");
    let server = support::serve(
        dir.path(),
        Era::Handshake,
        &["--no-watch", "--audit-log", audit.to_str().unwrap()],
    )
    .await;
    // Each call keeps a secret in a global and on the heap and answers what
    // its instance held before: a sandbox that served two calls would leak.
    support::attacks::assert_calls_remember_nothing(&server).await;
    let served_ahead = audit_lines(&audit)
        .iter()
        .filter(|record| record["tool"] == "remember" && record["timing"].get("instantiated_ahead_us").is_some())
        .count();
    assert!(
        served_ahead > 0,
        "no `remember` call ran on a sandbox made ahead, so this checked nothing of them"
    );
    server.stop().await;
}
