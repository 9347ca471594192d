//! What a component may ask of the engine's instance pool (`component_shape`): a
//! component at every bound serves, and one past any bound is refused before it is
//! compiled, with a message that names the bound — not wasmtime's, which comes only
//! after compiling.

#![allow(clippy::disallowed_methods)] // tests read fixtures freely; bounded_file is for what Warden serves

mod support;

use serde_json::json;
use support::{ERAS, PluginDir, serve, text};
use warden_runtime::component_shape::{MAX_CORE_INSTANCES, MAX_MEMORIES, MAX_TABLE_ELEMENTS, MAX_TABLES};

/// A plain component exporting `ok() -> u8` (7), that instantiates `instances` core
/// modules in all: `memories` of them define one memory, `tables` one table of one
/// element, one of those a table of `big_table` elements instead.
fn pool_component(instances: u32, memories: u32, tables: u32, big_table: u64) -> Vec<u8> {
    pool_component_with(instances, memories, tables, big_table, 1)
}

/// As `pool_component`, the one-element tables defined `per_module` to a module.
fn pool_component_with(instances: u32, memories: u32, tables: u32, big_table: u64, per_module: u32) -> Vec<u8> {
    use wasm_encoder::{
        CodeSection, Component, ExportKind, ExportSection, Function, FunctionSection, InstanceSection, Instruction,
        MemorySection, MemoryType, Module, ModuleSection, RefType, TableSection, TableType, TypeSection, ValType,
    };
    let mut main = Module::new();
    let mut types = TypeSection::new();
    types.ty().function([], [ValType::I32]);
    main.section(&types);
    let mut functions = FunctionSection::new();
    functions.function(0);
    main.section(&functions);
    let mut exports = ExportSection::new();
    exports.export("ok", ExportKind::Func, 0);
    main.section(&exports);
    let mut code = CodeSection::new();
    let mut body = Function::new([]);
    body.instruction(&Instruction::I32Const(7))
        .instruction(&Instruction::End);
    code.function(&body);
    main.section(&code);

    let mut with_memory = Module::new();
    let mut memory = MemorySection::new();
    memory.memory(MemoryType {
        minimum: 0,
        maximum: Some(1),
        memory64: false,
        shared: false,
        page_size_log2: None,
    });
    with_memory.section(&memory);
    let table = |elements: u64, count: u32| {
        let mut module = Module::new();
        let mut table = TableSection::new();
        for _ in 0..count {
            table.table(TableType {
                element_type: RefType::FUNCREF,
                table64: false,
                minimum: elements,
                maximum: Some(elements),
                shared: false,
            });
        }
        module.section(&table);
        module
    };
    let empty = Module::new();

    let mut component = Component::new();
    for module in [&main, &with_memory, &table(1, per_module), &table(big_table, 1), &empty] {
        component.section(&ModuleSection(module));
    }
    let mut instantiated = InstanceSection::new();
    let none = Vec::<(&str, wasm_encoder::ModuleArg)>::new;
    instantiated.instantiate(0, none());
    for _ in 0..memories {
        instantiated.instantiate(1, none());
    }
    for n in 0..tables {
        instantiated.instantiate(if n == 0 { 3 } else { 2 }, none());
    }
    for _ in (1 + memories + tables)..instances {
        instantiated.instantiate(4, none());
    }
    component.section(&instantiated);
    support::components::export_ok(&mut component);
    component.finish()
}

#[tokio::test]
async fn a_component_at_every_pool_bound_serves_and_one_past_any_is_refused_before_compiling() {
    let dir = PluginDir::new();
    dir.write(
        "at-bounds.wasm",
        pool_component(MAX_CORE_INSTANCES, MAX_MEMORIES, MAX_TABLES, MAX_TABLE_ELEMENTS),
    );
    let past = [
        (
            "instances",
            pool_component(MAX_CORE_INSTANCES + 1, 1, 1, 1),
            format!(
                "the component instantiates {} core module instances, more than the {MAX_CORE_INSTANCES}",
                MAX_CORE_INSTANCES + 1
            ),
        ),
        (
            "memories",
            pool_component(MAX_MEMORIES + 2, MAX_MEMORIES + 1, 1, 1),
            format!(
                "the component instantiates {} linear memories, more than the {MAX_MEMORIES}",
                MAX_MEMORIES + 1
            ),
        ),
        (
            "tables",
            pool_component(MAX_TABLES + 2, 1, MAX_TABLES + 1, 1),
            format!(
                "the component instantiates {} tables, more than the {MAX_TABLES}",
                MAX_TABLES + 1
            ),
        ),
        (
            "big-table",
            pool_component(3, 1, 1, MAX_TABLE_ELEMENTS + 1),
            format!(
                "the component has a table of {} elements, more than the {MAX_TABLE_ELEMENTS}",
                MAX_TABLE_ELEMENTS + 1
            ),
        ),
        (
            "module-tables",
            pool_component_with(4, 1, 2, 1, 2),
            "one of the component's core modules defines 2 tables, more than the 1".to_string(),
        ),
    ];
    for (name, bytes, _) in &past {
        dir.write(&format!("past-{name}.wasm"), bytes);
    }

    let inspected = support::warden()
        .arg("inspect")
        .arg(dir.path().join("at-bounds.wasm"))
        .output()
        .await
        .unwrap();
    let report = String::from_utf8_lossy(&inspected.stdout);
    assert!(
        report.contains(&format!(
            "instance pool  {MAX_CORE_INSTANCES} of {MAX_CORE_INSTANCES} core instances, {MAX_MEMORIES} of \
             {MAX_MEMORIES} memories, {MAX_TABLES} of {MAX_TABLES} tables, largest table {MAX_TABLE_ELEMENTS} of \
             {MAX_TABLE_ELEMENTS} elements"
        )),
        "{report}"
    );

    for (name, _, want) in &past {
        let checked = support::warden()
            .arg("check")
            .arg(dir.path().join(format!("past-{name}.wasm")))
            .output()
            .await
            .unwrap();
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&checked.stdout),
            String::from_utf8_lossy(&checked.stderr)
        );
        assert!(!checked.status.success(), "{name}: {said}");
        assert!(said.contains(want.as_str()), "{name}: want {want:?} in:\n{said}");
        assert!(
            !said.contains("pooling allocator"),
            "{name}: refused by Warden before compiling, not by wasmtime after:\n{said}"
        );
    }

    for era in ERAS {
        let server = serve(dir.path(), era, &["--no-watch"]).await;
        let called = server.call("ok", json!({})).await;
        assert_eq!(text(&called), "7", "{era:?}");
        let log = server.stop().await;
        for (name, _, want) in &past {
            assert!(
                log.contains(&format!("past-{name}.wasm")) && log.contains(want.as_str()),
                "{name} is refused in the log:\n{log}"
            );
        }
    }
}
