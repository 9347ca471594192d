//! Components built in the tests from raw core modules, as an outside
//! toolchain would emit them.

use wasm_encoder::{
    Alias, CanonicalFunctionSection, Component, ComponentAliasSection, ComponentExportKind, ComponentExportSection,
    ComponentTypeSection, ComponentValType, ExportKind, InstanceSection, Module, ModuleSection, PrimitiveValType,
};

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
