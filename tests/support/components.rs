//! Components built in the tests from raw core modules, as an outside
//! toolchain would emit them.

use wasm_encoder::{
    Alias, CanonicalFunctionSection, Component, ComponentAliasSection, ComponentExportKind, ComponentExportSection,
    ComponentTypeSection, ComponentValType, ExportKind, InstanceSection, MemorySection, MemoryType, Module,
    ModuleSection, PrimitiveValType,
};

/// One 32-bit memory of `pages` 64 KiB pages, without a maximum.
pub fn memory(pages: u64) -> MemorySection {
    let mut memories = MemorySection::new();
    memories.memory(MemoryType {
        minimum: pages,
        maximum: None,
        memory64: false,
        shared: false,
        page_size_log2: None,
    });
    memories
}

/// Serves the folder over stdio (handshake era, no watcher) from `command`,
/// auditing every call into the folder's `audit.jsonl`, whose path it returns.
pub async fn serve_audited(
    dir: &super::PluginDir,
    command: tokio::process::Command,
) -> (super::Server, std::path::PathBuf) {
    let audit = dir.path().join("audit.jsonl");
    let server = super::serve_command(
        command,
        dir.path(),
        super::Era::Handshake,
        &["--no-watch", "--audit-log", audit.to_str().unwrap()],
        tempfile::NamedTempFile::new().unwrap(),
    )
    .await;
    (server, audit)
}

/// A core module of `pages` of memory whose one function, `ok` (`() -> i32`),
/// is `ok`, exported.
pub fn ok_module(pages: u64, ok: &wasm_encoder::Function) -> Module {
    use wasm_encoder::{CodeSection, ExportSection, FunctionSection, TypeSection, ValType};
    let mut module = Module::new();
    let mut types = TypeSection::new();
    types.ty().function([], [ValType::I32]);
    module.section(&types);
    let mut functions = FunctionSection::new();
    functions.function(0);
    module.section(&functions);
    module.section(&memory(pages));
    let mut exports = ExportSection::new();
    exports.export("ok", ExportKind::Func, 0);
    module.section(&exports);
    let mut code = CodeSection::new();
    code.function(ok);
    module.section(&code);
    module
}

/// A component that instantiates `module` once and exports its core
/// function `ok` (`() -> i32`) as `ok() -> u8`.
pub fn exporting_ok(module: &Module) -> Vec<u8> {
    let mut component = Component::new();
    component.section(&ModuleSection(module));
    let mut instances = InstanceSection::new();
    instances.instantiate(0, Vec::<(&str, wasm_encoder::ModuleArg)>::new());
    component.section(&instances);
    export_ok(&mut component);
    component.finish()
}

/// Exports core instance 0's function `ok` (`() -> i32`) as `ok() -> u8`.
pub fn export_ok(component: &mut Component) {
    let mut signature = ComponentTypeSection::new();
    signature
        .function()
        .params(Vec::<(&str, ComponentValType)>::new())
        .result(Some(ComponentValType::Primitive(PrimitiveValType::U8)));
    component.section(&signature);
    let mut aliases = ComponentAliasSection::new();
    aliases.alias(Alias::CoreInstanceExport {
        instance: 0,
        kind: ExportKind::Func,
        name: "ok",
    });
    component.section(&aliases);
    let mut canon = CanonicalFunctionSection::new();
    canon.lift(0, 0, []);
    component.section(&canon);
    let mut export = ComponentExportSection::new();
    export.export("ok", ComponentExportKind::Func, 0, None);
    component.section(&export);
}

/// `component` with a custom section of `size` bytes appended, code
/// unchanged: a component that large is served on Winch first, as a Python
/// or JavaScript runtime is.
pub fn padded(mut component: Vec<u8>, size: usize) -> Vec<u8> {
    let mut section = Component::new();
    section.section(&wasm_encoder::CustomSection {
        name: "padding".into(),
        data: vec![0x5a; size].into(),
    });
    // A custom section may follow any other: drop the new header, keep the section.
    component.extend_from_slice(&section.finish()[8..]);
    component
}
