//! What a call leaves in its pooled slot's memory never reaches the next
//! call, however many separate places it wrote (memory_reset.rs): on the
//! default reset, which returns every page to the kernel, and on the fast
//! one an operator may choose. (Under memory compaction:
//! tests/hardening_engine.rs.)

#![allow(clippy::disallowed_methods)] // tests read fixtures freely; bounded_file is for what Warden serves

mod support;

use serde_json::json;
use support::attacks::audit_lines;
use support::{PluginDir, Server, text};

/// Separate places a call writes: more than Wasmtime 48's fast reset finds
/// in one scan (32 runs of dirty pages), fewer than it keeps resident (2 MiB).
const MARKS: i32 = 256;
/// Bytes between two marks: two host pages, so no two marks share a run.
const STRIDE: i32 = 8192;
/// Marks inside the memory's initial image (a data segment sets each to
/// 0x2A), so the reset must restore the image, not only zero pages.
const IMAGED: i32 = 64;

/// A plain component exporting `ok() -> u8`. Each call checks every mark:
/// the first `IMAGED` must hold 0x2A and the rest 0, as a fresh instance
/// has them. Then it overwrites them all with 0xFF. It answers 7 when every
/// mark was fresh, and 0 when any held what an earlier call wrote.
fn component() -> Vec<u8> {
    use wasm_encoder::{BlockType, ConstExpr, DataSection, Function, Instruction, MemArg, ValType};
    let byte = MemArg {
        offset: 0,
        align: 0,
        memory_index: 0,
    };
    // Locals: 0 = mark index, 1 = address, 2 = a stale mark was seen.
    let (index, address, stale) = (0, 1, 2);
    let mut ok = Function::new([(3, ValType::I32)]);
    ok.instruction(&Instruction::Block(BlockType::Empty))
        .instruction(&Instruction::Loop(BlockType::Empty))
        // address = index * STRIDE
        .instruction(&Instruction::LocalGet(index))
        .instruction(&Instruction::I32Const(STRIDE))
        .instruction(&Instruction::I32Mul)
        .instruction(&Instruction::LocalSet(address))
        // stale |= memory[address] != (index < IMAGED ? 0x2A : 0)
        .instruction(&Instruction::LocalGet(address))
        .instruction(&Instruction::I32Load8U(byte))
        .instruction(&Instruction::I32Const(0x2A))
        .instruction(&Instruction::I32Const(0))
        .instruction(&Instruction::LocalGet(index))
        .instruction(&Instruction::I32Const(IMAGED))
        .instruction(&Instruction::I32LtU)
        .instruction(&Instruction::Select)
        .instruction(&Instruction::I32Ne)
        .instruction(&Instruction::LocalGet(stale))
        .instruction(&Instruction::I32Or)
        .instruction(&Instruction::LocalSet(stale))
        // memory[address] = 0xFF
        .instruction(&Instruction::LocalGet(address))
        .instruction(&Instruction::I32Const(0xFF))
        .instruction(&Instruction::I32Store8(byte))
        // while ++index < MARKS
        .instruction(&Instruction::LocalGet(index))
        .instruction(&Instruction::I32Const(1))
        .instruction(&Instruction::I32Add)
        .instruction(&Instruction::LocalTee(index))
        .instruction(&Instruction::I32Const(MARKS))
        .instruction(&Instruction::I32LtU)
        .instruction(&Instruction::BrIf(0))
        .instruction(&Instruction::End)
        .instruction(&Instruction::End)
        // stale ? 0 : 7
        .instruction(&Instruction::I32Const(0))
        .instruction(&Instruction::I32Const(7))
        .instruction(&Instruction::LocalGet(stale))
        .instruction(&Instruction::Select)
        .instruction(&Instruction::End);
    let mut module = support::components::ok_module((MARKS * STRIDE / 65536 + 1) as u64, &ok);
    let mut data = DataSection::new();
    for mark in 0..IMAGED {
        data.active(0, &ConstExpr::i32_const(mark * STRIDE), [0x2A]);
    }
    module.section(&data);

    support::components::exporting_ok(&module)
}

async fn serve(reset: Option<&str>) -> (PluginDir, Server, std::path::PathBuf) {
    let dir = PluginDir::new();
    dir.write("marks.wasm", component());
    let mut command = support::warden();
    if let Some(reset) = reset {
        command.env("WARDEN_MEMORY_RESET", reset);
    }
    let (server, audit) = support::components::serve_audited(&dir, command).await;
    (dir, server, audit)
}

/// Calls `ok` one after another and many at once; every call must find
/// every mark as a fresh instance has it.
async fn assert_every_call_starts_fresh(server: &Server) {
    for round in 0..30 {
        assert_eq!(
            text(&server.call("ok", json!({})).await),
            "7",
            "sequential call {round} found a mark an earlier call wrote"
        );
    }
    for round in 0..4 {
        let call = || server.call("ok", json!({}));
        let (a, b, c, d, e, f) = tokio::join!(call(), call(), call(), call(), call(), call());
        for (i, result) in [a, b, c, d, e, f].iter().enumerate() {
            assert_eq!(
                text(result),
                "7",
                "round {round}, concurrent call {i} found an earlier call's mark"
            );
        }
    }
}

/// Minor page faults the process has taken so far.
fn minor_faults(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // After the command's name, in parentheses: minflt is the 10th field.
    let fields: Vec<&str> = stat.rsplit_once(')').unwrap().1.split_whitespace().collect();
    fields[7].parse().unwrap()
}

fn host_has_swap() -> bool {
    let swaps = std::fs::read_to_string("/proc/swaps").unwrap_or_default();
    swaps.lines().count() > 1
}

#[tokio::test]
async fn pages_dirtied_in_hundreds_of_places_are_all_reset() {
    let (_dir, server, audit) = serve(None).await;
    assert_every_call_starts_fresh(&server).await;
    let served_ahead = audit_lines(&audit)
        .iter()
        .filter(|record| record["timing"].get("instantiated_ahead_us").is_some())
        .count();
    assert!(
        served_ahead > 0,
        "no call ran on a sandbox made ahead, so this checked nothing of them"
    );
    // What the default reset costs the next call: every page it touches
    // faults in again (a figure for docs/engine.md, not a limit).
    const CALLS: u64 = 40;
    let before = minor_faults(server.pid);
    for _ in 0..CALLS {
        assert_eq!(text(&server.call("ok", json!({})).await), "7");
    }
    eprintln!("{} page faults a call", (minor_faults(server.pid) - before) / CALLS);
    server.stop().await;
}

#[tokio::test]
async fn pages_dirtied_in_hundreds_of_places_are_all_reset_when_rewritten_in_place() {
    let (_dir, server, _audit) = serve(Some("rewrite")).await;
    assert_every_call_starts_fresh(&server).await;
    server.stop().await;
}

#[tokio::test]
async fn pages_dirtied_in_hundreds_of_places_are_all_reset_on_the_fast_way_too() {
    if host_has_swap() {
        eprintln!("this host has swap: `dirty-pages` is refused and pooled memory decommitted, as tested above");
    }
    let (_dir, server, _audit) = serve(Some("dirty-pages")).await;
    assert_every_call_starts_fresh(&server).await;
    server.stop().await;
}
