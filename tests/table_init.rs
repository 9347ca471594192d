//! A table filled at instantiation by another module's element segment, as a
//! dynamically linked toolchain (componentize-py's CPython) builds its
//! function table, calls every function it was given, in every fresh
//! instance, sequential, concurrent and on sandboxes made ahead.

#![allow(clippy::disallowed_methods)] // tests read fixtures freely; bounded_file is for what Warden serves

mod support;

use serde_json::json;
use support::attacks::audit_lines;
use support::{PluginDir, text};

/// Functions the second module puts into the first one's table.
const LINKED: u32 = 40;
/// Where they start: the first module's exported global, as `__table_base`.
const BASE: i32 = 8;
/// The first module's own functions, placed at 0 by a constant segment.
const OWN: u32 = 4;

/// `i32.const value; end`: a function of type 0 answering `value`.
fn answering(value: i32) -> wasm_encoder::Function {
    let mut function = wasm_encoder::Function::new([]);
    function
        .instruction(&wasm_encoder::Instruction::I32Const(value))
        .instruction(&wasm_encoder::Instruction::End);
    function
}

/// The module that owns the table: its own functions at 0..OWN answer
/// 100 + i; `ok` calls every entry through the table, those and the linked
/// module's at BASE.. (answering 3i + 1), and answers 7 when each gave
/// what it should, 0 otherwise.
fn owner() -> wasm_encoder::Module {
    use wasm_encoder::{
        BlockType, CodeSection, ConstExpr, ElementSection, Elements, ExportKind, ExportSection, Function,
        FunctionSection, GlobalSection, GlobalType, Instruction, Module, RefType, TableSection, TableType, TypeSection,
        ValType,
    };
    let mut module = Module::new();
    let mut types = TypeSection::new();
    types.ty().function([], [ValType::I32]);
    module.section(&types);
    let mut functions = FunctionSection::new();
    for _ in 0..=OWN {
        functions.function(0);
    }
    module.section(&functions);
    let mut tables = TableSection::new();
    tables.table(TableType {
        element_type: RefType::FUNCREF,
        table64: false,
        minimum: 64,
        maximum: None,
        shared: false,
    });
    module.section(&tables);
    let mut globals = GlobalSection::new();
    globals.global(
        GlobalType {
            val_type: ValType::I32,
            mutable: false,
            shared: false,
        },
        &ConstExpr::i32_const(BASE),
    );
    module.section(&globals);
    let mut exports = ExportSection::new();
    exports.export("table", ExportKind::Table, 0);
    exports.export("base", ExportKind::Global, 0);
    exports.export("ok", ExportKind::Func, OWN);
    module.section(&exports);
    let mut elements = ElementSection::new();
    let own: Vec<u32> = (0..OWN).collect();
    elements.active(None, &ConstExpr::i32_const(0), Elements::Functions(own.into()));
    module.section(&elements);

    // Locals: 0 = i, 1 = a wrong answer was seen.
    let (i, wrong) = (0, 1);
    let call = Instruction::CallIndirect {
        type_index: 0,
        table_index: 0,
    };
    let mut ok = Function::new([(2, ValType::I32)]);
    // One loop per range: slot(i) and expected(i) as instructions on `i`.
    let mut check = |count: u32, slot: &[Instruction], expected: &[Instruction]| {
        ok.instruction(&Instruction::I32Const(0))
            .instruction(&Instruction::LocalSet(i))
            .instruction(&Instruction::Block(BlockType::Empty))
            .instruction(&Instruction::Loop(BlockType::Empty));
        for instruction in slot {
            ok.instruction(instruction);
        }
        ok.instruction(&call);
        for instruction in expected {
            ok.instruction(instruction);
        }
        ok.instruction(&Instruction::I32Ne)
            .instruction(&Instruction::LocalGet(wrong))
            .instruction(&Instruction::I32Or)
            .instruction(&Instruction::LocalSet(wrong))
            .instruction(&Instruction::LocalGet(i))
            .instruction(&Instruction::I32Const(1))
            .instruction(&Instruction::I32Add)
            .instruction(&Instruction::LocalTee(i))
            .instruction(&Instruction::I32Const(count as i32))
            .instruction(&Instruction::I32LtU)
            .instruction(&Instruction::BrIf(0))
            .instruction(&Instruction::End)
            .instruction(&Instruction::End);
    };
    check(
        OWN,
        &[Instruction::LocalGet(i)],
        &[
            Instruction::LocalGet(i),
            Instruction::I32Const(100),
            Instruction::I32Add,
        ],
    );
    check(
        LINKED,
        &[
            Instruction::LocalGet(i),
            Instruction::I32Const(BASE),
            Instruction::I32Add,
        ],
        &[
            Instruction::LocalGet(i),
            Instruction::I32Const(3),
            Instruction::I32Mul,
            Instruction::I32Const(1),
            Instruction::I32Add,
        ],
    );
    ok.instruction(&Instruction::I32Const(0))
        .instruction(&Instruction::I32Const(7))
        .instruction(&Instruction::LocalGet(wrong))
        .instruction(&Instruction::Select)
        .instruction(&Instruction::End);

    let mut code = CodeSection::new();
    for own in 0..OWN {
        code.function(&answering(100 + own as i32));
    }
    code.function(&ok);
    module.section(&code);
    module
}

/// The linked module: imports the owner's table and base, and fills
/// BASE..BASE + LINKED with its functions (answering 3i + 1) by an active
/// segment whose offset is that imported global, so Wasmtime applies it at
/// every instantiation, one `ref.func` per entry.
fn linked() -> wasm_encoder::Module {
    use wasm_encoder::{
        CodeSection, ConstExpr, ElementSection, Elements, FunctionSection, GlobalType, ImportSection, Module, RefType,
        TableType, TypeSection, ValType,
    };
    let mut module = Module::new();
    let mut types = TypeSection::new();
    types.ty().function([], [ValType::I32]);
    module.section(&types);
    let mut imports = ImportSection::new();
    imports.import(
        "env",
        "table",
        TableType {
            element_type: RefType::FUNCREF,
            table64: false,
            minimum: 64,
            maximum: None,
            shared: false,
        },
    );
    imports.import(
        "env",
        "base",
        GlobalType {
            val_type: ValType::I32,
            mutable: false,
            shared: false,
        },
    );
    module.section(&imports);
    let mut functions = FunctionSection::new();
    for _ in 0..LINKED {
        functions.function(0);
    }
    module.section(&functions);
    let mut elements = ElementSection::new();
    let linked: Vec<u32> = (0..LINKED).collect();
    elements.active(None, &ConstExpr::global_get(0), Elements::Functions(linked.into()));
    module.section(&elements);
    let mut code = CodeSection::new();
    for i in 0..LINKED {
        code.function(&answering(3 * i as i32 + 1));
    }
    module.section(&code);
    module
}

/// The two modules in one component: the owner instantiated first, the
/// linked module given it as `env`; the owner's `ok` exported as
/// `ok() -> u8`.
fn component() -> Vec<u8> {
    use wasm_encoder::{Component, InstanceSection, ModuleArg, ModuleSection};
    let mut component = Component::new();
    component.section(&ModuleSection(&owner()));
    component.section(&ModuleSection(&linked()));
    let mut instances = InstanceSection::new();
    instances.instantiate(0, Vec::<(&str, ModuleArg)>::new());
    instances.instantiate(1, [("env", ModuleArg::Instance(0))]);
    component.section(&instances);
    support::components::export_ok(&mut component);
    component.finish()
}

#[tokio::test]
async fn every_function_a_linked_module_put_in_the_table_is_called_in_every_fresh_instance() {
    let dir = PluginDir::new();
    dir.write("linked.wasm", component());
    let (server, audit) = support::components::serve_audited(&dir, support::warden()).await;
    for round in 0..20 {
        assert_eq!(
            text(&server.call("ok", json!({})).await),
            "7",
            "sequential call {round}: a table entry called the wrong code"
        );
    }
    for round in 0..4 {
        let call = || server.call("ok", json!({}));
        let (a, b, c, d) = tokio::join!(call(), call(), call(), call());
        for (i, result) in [a, b, c, d].iter().enumerate() {
            assert_eq!(text(result), "7", "round {round}, concurrent call {i}");
        }
    }
    let served_ahead = audit_lines(&audit)
        .iter()
        .filter(|record| record["timing"].get("instantiated_ahead_us").is_some())
        .count();
    assert!(served_ahead > 0, "no call ran on a sandbox made ahead");
    server.stop().await;
}
