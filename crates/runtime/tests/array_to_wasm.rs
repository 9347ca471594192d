//! Warden's Wasmtime compiles a component's core functions with a host entry
//! point (an array-to-wasm trampoline) only when they are exported from their
//! core module (vendor/README.md). These check both sides of that: a function
//! that only escapes into a table still runs when wasm calls it through the
//! table, and the host, should it ever get hold of it, gets a trap rather than
//! a jump into code that was never compiled. A core module compiled on its own
//! keeps Wasmtime's behaviour: every escaping function has its entry point.

use wasmtime::component::{Component, Linker};
use wasmtime::{Engine, Instance, Module, Store, Val};

/// A core module whose function 0 (answering 42) is in its exported table
/// but not exported itself, and whose exported `outer` calls it through the
/// table.
fn core_module() -> wasm_encoder::Module {
    use wasm_encoder::{
        CodeSection, ConstExpr, ElementSection, Elements, ExportKind, ExportSection, Function, FunctionSection,
        Instruction, Module, RefType, TableSection, TableType, TypeSection, ValType,
    };
    let mut module = Module::new();
    let mut types = TypeSection::new();
    types.ty().function([], [ValType::I32]);
    module.section(&types);
    let mut functions = FunctionSection::new();
    functions.function(0).function(0);
    module.section(&functions);
    let mut tables = TableSection::new();
    tables.table(TableType {
        element_type: RefType::FUNCREF,
        table64: false,
        minimum: 1,
        maximum: Some(1),
        shared: false,
    });
    module.section(&tables);
    let mut exports = ExportSection::new();
    exports
        .export("outer", ExportKind::Func, 1)
        .export("table", ExportKind::Table, 0);
    module.section(&exports);
    let mut elements = ElementSection::new();
    elements.active(
        Some(0),
        &ConstExpr::i32_const(0),
        Elements::Functions([0].as_slice().into()),
    );
    module.section(&elements);
    let mut code = CodeSection::new();
    let mut inner = Function::new([]);
    inner
        .instruction(&Instruction::I32Const(42))
        .instruction(&Instruction::End);
    code.function(&inner);
    let mut outer = Function::new([]);
    outer
        .instruction(&Instruction::I32Const(0))
        .instruction(&Instruction::CallIndirect {
            type_index: 0,
            table_index: 0,
        })
        .instruction(&Instruction::End);
    code.function(&outer);
    module.section(&code);
    module
}

/// A component that does nothing but export that core module, which is the
/// one way the host can take a component's core code out of it.
fn component() -> Vec<u8> {
    let mut component = wasm_encoder::Component::new();
    component.section(&wasm_encoder::ModuleSection(&core_module()));
    let mut exports = wasm_encoder::ComponentExportSection::new();
    exports.export("m", wasm_encoder::ComponentExportKind::Module, 0, None);
    component.section(&exports);
    component.finish()
}

/// Instantiates `module` on its own and answers what `outer` returns and what
/// calling the table's entry from the host gives.
fn run(engine: &Engine, module: &Module) -> (i32, wasmtime::Result<i32>) {
    let mut store = Store::new(engine, ());
    let instance = Instance::new(&mut store, module, &[]).unwrap();
    let outer = instance.get_typed_func::<(), i32>(&mut store, "outer").unwrap();
    let through_table = outer.call(&mut store, ()).unwrap();
    let table = instance.get_table(&mut store, "table").unwrap();
    let entry = table.get(&mut store, 0).unwrap();
    let inner = *entry.as_func().unwrap().unwrap();
    let mut results = [Val::I32(0)];
    let from_host = inner
        .call(&mut store, &[], &mut results)
        .map(|()| results[0].unwrap_i32());
    (through_table, from_host)
}

#[test]
fn a_component_function_without_a_host_entry_runs_from_its_table_and_traps_from_the_host() {
    let engine = Engine::default();
    let component = Component::new(&engine, component()).unwrap();
    let mut store = Store::new(&engine, ());
    let instance = Linker::<()>::new(&engine).instantiate(&mut store, &component).unwrap();
    let module = instance
        .get_module(&mut store, "m")
        .expect("the component exports its core module");

    let (through_table, from_host) = run(&engine, &module);
    assert_eq!(through_table, 42, "wasm's call through the table reaches the function");
    let error = from_host.expect_err("the host's call must not reach a function without a host entry");
    assert!(
        format!("{error:?}").contains("cannot be called from the host"),
        "the trap says why: {error:?}"
    );
    // The store is still usable after the trap.
    let instance = Instance::new(&mut Store::new(&engine, ()), &module, &[]);
    assert!(instance.is_ok());
}

#[test]
fn a_core_module_compiled_on_its_own_keeps_every_host_entry() {
    let engine = Engine::default();
    let module = Module::new(&engine, core_module().finish()).unwrap();
    let (through_table, from_host) = run(&engine, &module);
    assert_eq!(through_table, 42);
    assert_eq!(
        from_host.unwrap(),
        42,
        "a core module's table entry is callable from the host"
    );
}
