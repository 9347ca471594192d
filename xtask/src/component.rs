//! Hand-encoded plain components: exported functions of any WIT types over
//! a core module whose functions trap (or answer a constant), a few hundred
//! bytes however large the types they describe. The hostile components of
//! the tests and the fuzz target of plain-component type derivation are
//! built with it.
//!
//! Named types (records, variants, enums, flags) are defined and exported
//! once, in order, each using only earlier ones; structural types (lists,
//! options, results, tuples) are defined once per distinct shape, so a type
//! used a thousand times is encoded once.

use std::collections::HashMap;

use wasm_encoder::{
    Alias, CanonicalFunctionSection, CanonicalOption, CodeSection, Component, ComponentAliasSection,
    ComponentExportKind, ComponentExportSection, ComponentInstanceSection, ComponentTypeSection, ComponentValType,
    ExportKind, ExportSection, Function, FunctionSection, InstanceSection, Instruction, MemorySection, MemoryType,
    Module, ModuleSection, PrimitiveValType, TypeSection, ValType,
};

/// A WIT type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Ty {
    Bool,
    U8,
    U16,
    U32,
    U64,
    S8,
    S16,
    S32,
    S64,
    F32,
    F64,
    Char,
    String,
    List(Box<Ty>),
    Option(Box<Ty>),
    Result(Option<Box<Ty>>, Option<Box<Ty>>),
    Tuple(Vec<Ty>),
    /// The named type at this index of `Spec::types`.
    Named(usize),
}

/// A type with a name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Named {
    Record(Vec<(String, Ty)>),
    Variant(Vec<(String, Option<Ty>)>),
    Enum(Vec<String>),
    /// At most 32 flags.
    Flags(Vec<String>),
}

/// An exported function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Func {
    pub name: String,
    pub params: Vec<(String, Ty)>,
    pub result: Option<Ty>,
    /// What it returns when called, for a function whose result is one
    /// 32-bit integer; `None` makes it trap.
    pub answer: Option<i32>,
}

/// A component: its named types and its functions, exported at world level
/// (the types as type exports, under their names), or as one exported
/// interface (`ns:pkg/name`) holding both — the form WIT decoders read, so
/// that its signatures name the types.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Spec {
    pub types: Vec<(String, Named)>,
    pub functions: Vec<Func>,
    pub interface: Option<String>,
}

/// Core value types a component-level type flattens to (the canonical ABI).
fn flat(spec: &Spec, ty: &Ty, out: &mut Vec<ValType>) {
    match ty {
        Ty::Bool | Ty::U8 | Ty::U16 | Ty::U32 | Ty::S8 | Ty::S16 | Ty::S32 | Ty::Char => out.push(ValType::I32),
        Ty::U64 | Ty::S64 => out.push(ValType::I64),
        Ty::F32 => out.push(ValType::F32),
        Ty::F64 => out.push(ValType::F64),
        Ty::String | Ty::List(_) => out.extend([ValType::I32, ValType::I32]),
        Ty::Tuple(types) => types.iter().for_each(|t| flat(spec, t, out)),
        Ty::Option(some) => variant_flat(spec, [None, Some(&**some)], out),
        Ty::Result(ok, err) => variant_flat(spec, [ok.as_deref(), err.as_deref()], out),
        Ty::Named(index) => match &spec.types[*index].1 {
            Named::Record(fields) => fields.iter().for_each(|(_, t)| flat(spec, t, out)),
            Named::Variant(cases) => variant_flat(spec, cases.iter().map(|(_, t)| t.as_ref()), out),
            Named::Enum(_) | Named::Flags(_) => out.push(ValType::I32),
        },
    }
}

fn variant_flat<'a>(spec: &Spec, cases: impl IntoIterator<Item = Option<&'a Ty>>, out: &mut Vec<ValType>) {
    let mut joined: Vec<ValType> = Vec::new();
    for case in cases.into_iter().flatten() {
        let mut payload = Vec::new();
        flat(spec, case, &mut payload);
        for (i, ty) in payload.into_iter().enumerate() {
            match joined.get(i) {
                None => joined.push(ty),
                Some(&have) if have == ty => {}
                Some(&have) => {
                    let both_32 = matches!((have, ty), (ValType::I32, ValType::F32) | (ValType::F32, ValType::I32));
                    joined[i] = if both_32 { ValType::I32 } else { ValType::I64 };
                }
            }
        }
    }
    out.push(ValType::I32);
    out.extend(joined);
}

/// Component-level encoding state: type indices of what is defined so far.
struct Types {
    component: Component,
    section: ComponentTypeSection,
    next: u32,
    structural: HashMap<Ty, u32>,
    /// The exported index of each named type.
    named: Vec<u32>,
}

impl Types {
    fn flush(&mut self) {
        if !self.section.is_empty() {
            let section = std::mem::take(&mut self.section);
            self.component.section(&section);
        }
    }

    fn val(&mut self, ty: &Ty) -> ComponentValType {
        let primitive = match ty {
            Ty::Bool => PrimitiveValType::Bool,
            Ty::U8 => PrimitiveValType::U8,
            Ty::U16 => PrimitiveValType::U16,
            Ty::U32 => PrimitiveValType::U32,
            Ty::U64 => PrimitiveValType::U64,
            Ty::S8 => PrimitiveValType::S8,
            Ty::S16 => PrimitiveValType::S16,
            Ty::S32 => PrimitiveValType::S32,
            Ty::S64 => PrimitiveValType::S64,
            Ty::F32 => PrimitiveValType::F32,
            Ty::F64 => PrimitiveValType::F64,
            Ty::Char => PrimitiveValType::Char,
            Ty::String => PrimitiveValType::String,
            Ty::Named(index) => return ComponentValType::Type(self.named[*index]),
            structural => return ComponentValType::Type(self.structural(structural)),
        };
        ComponentValType::Primitive(primitive)
    }

    fn structural(&mut self, ty: &Ty) -> u32 {
        if let Some(&index) = self.structural.get(ty) {
            return index;
        }
        match ty {
            Ty::List(element) => {
                let element = self.val(element);
                self.section.defined_type().list(element);
            }
            Ty::Option(some) => {
                let some = self.val(some);
                self.section.defined_type().option(some);
            }
            Ty::Result(ok, err) => {
                let ok = ok.as_deref().map(|t| self.val(t));
                let err = err.as_deref().map(|t| self.val(t));
                self.section.defined_type().result(ok, err);
            }
            Ty::Tuple(types) => {
                let types: Vec<ComponentValType> = types.iter().map(|t| self.val(t)).collect();
                self.section.defined_type().tuple(types);
            }
            _ => unreachable!("primitive and named types are not structural"),
        }
        let index = self.next;
        self.next += 1;
        self.structural.insert(ty.clone(), index);
        index
    }
}

/// The component's binary.
pub fn encode(spec: &Spec) -> Vec<u8> {
    // The core module: a realloc, a memory, and one function per export.
    let mut signatures: Vec<(Vec<ValType>, Vec<ValType>)> = Vec::new();
    let mut by_pointer = Vec::new();
    for func in &spec.functions {
        let mut params = Vec::new();
        func.params.iter().for_each(|(_, t)| flat(spec, t, &mut params));
        let mut results = Vec::new();
        if let Some(result) = &func.result {
            flat(spec, result, &mut results);
        }
        // More than 16 flat parameters, or more than one result, go through memory.
        let indirect = params.len() > 16 || results.len() > 1;
        if params.len() > 16 {
            params = vec![ValType::I32];
        }
        if results.len() > 1 {
            results = vec![ValType::I32];
        }
        by_pointer.push(indirect);
        signatures.push((params, results));
    }
    let mut module = Module::new();
    let mut types = TypeSection::new();
    types.ty().function([ValType::I32; 4], [ValType::I32]);
    for (params, results) in &signatures {
        types.ty().function(params.iter().copied(), results.iter().copied());
    }
    module.section(&types);
    let mut functions = FunctionSection::new();
    for index in 0..=spec.functions.len() as u32 {
        functions.function(index);
    }
    module.section(&functions);
    let mut memories = MemorySection::new();
    memories.memory(MemoryType {
        minimum: 1,
        maximum: Some(1),
        memory64: false,
        shared: false,
        page_size_log2: None,
    });
    module.section(&memories);
    let mut exports = ExportSection::new();
    exports.export("realloc", ExportKind::Func, 0);
    for index in 0..spec.functions.len() {
        exports.export(&format!("f{index}"), ExportKind::Func, index as u32 + 1);
    }
    exports.export("memory", ExportKind::Memory, 0);
    module.section(&exports);
    let mut code = CodeSection::new();
    let mut realloc = Function::new([]);
    realloc
        .instruction(&Instruction::I32Const(8))
        .instruction(&Instruction::End);
    code.function(&realloc);
    for func in &spec.functions {
        let mut body = Function::new([]);
        match func.answer {
            Some(answer) => body.instruction(&Instruction::I32Const(answer)),
            None => body.instruction(&Instruction::Unreachable),
        };
        body.instruction(&Instruction::End);
        code.function(&body);
    }
    module.section(&code);

    let mut component = Component::new();
    component.section(&ModuleSection(&module));
    let mut instances = InstanceSection::new();
    instances.instantiate(0, Vec::<(&str, wasm_encoder::ModuleArg)>::new());
    component.section(&instances);

    let mut state = Types {
        component,
        section: ComponentTypeSection::new(),
        next: 0,
        structural: HashMap::new(),
        named: Vec::new(),
    };
    for (name, named) in &spec.types {
        match named {
            Named::Record(fields) => {
                let fields: Vec<(&str, ComponentValType)> =
                    fields.iter().map(|(n, t)| (n.as_str(), state.val(t))).collect();
                state.section.defined_type().record(fields);
            }
            Named::Variant(cases) => {
                let cases: Vec<(&str, Option<ComponentValType>)> = cases
                    .iter()
                    .map(|(n, t)| (n.as_str(), t.as_ref().map(|t| state.val(t))))
                    .collect();
                state.section.defined_type().variant(cases);
            }
            Named::Enum(cases) => state.section.defined_type().enum_type(cases.iter().map(String::as_str)),
            Named::Flags(flags) => state.section.defined_type().flags(flags.iter().map(String::as_str)),
        }
        let defined = state.next;
        state.next += 1;
        if spec.interface.is_some() {
            // Exported with the interface, below.
            state.named.push(defined);
            continue;
        }
        state.flush();
        let mut export = ComponentExportSection::new();
        export.export(name, ComponentExportKind::Type, defined, None);
        state.component.section(&export);
        state.named.push(state.next);
        state.next += 1;
    }
    let mut function_types = Vec::new();
    for func in &spec.functions {
        let params: Vec<(&str, ComponentValType)> =
            func.params.iter().map(|(n, t)| (n.as_str(), state.val(t))).collect();
        let result = func.result.as_ref().map(|t| state.val(t));
        state.section.function().params(params).result(result);
        function_types.push(state.next);
        state.next += 1;
    }
    state.flush();
    let mut component = std::mem::take(&mut state.component);

    let mut aliases = ComponentAliasSection::new();
    aliases.alias(Alias::CoreInstanceExport {
        instance: 0,
        kind: ExportKind::Func,
        name: "realloc",
    });
    for index in 0..spec.functions.len() {
        aliases.alias(Alias::CoreInstanceExport {
            instance: 0,
            kind: ExportKind::Func,
            name: &format!("f{index}"),
        });
    }
    aliases.alias(Alias::CoreInstanceExport {
        instance: 0,
        kind: ExportKind::Memory,
        name: "memory",
    });
    component.section(&aliases);
    let mut canon = CanonicalFunctionSection::new();
    for (index, ty) in function_types.iter().enumerate() {
        let memory = by_pointer[index] || uses_memory(spec, &spec.functions[index]);
        let options = if memory {
            vec![
                CanonicalOption::Memory(0),
                CanonicalOption::Realloc(0),
                CanonicalOption::UTF8,
            ]
        } else {
            Vec::new()
        };
        canon.lift(index as u32 + 1, *ty, options);
    }
    component.section(&canon);
    let mut exports = ComponentExportSection::new();
    match &spec.interface {
        None => {
            for (index, func) in spec.functions.iter().enumerate() {
                exports.export(&func.name, ComponentExportKind::Func, index as u32, None);
            }
        }
        Some(interface) => {
            let types = spec
                .types
                .iter()
                .zip(&state.named)
                .map(|((name, _), index)| (name.as_str(), ComponentExportKind::Type, *index));
            let functions = spec
                .functions
                .iter()
                .enumerate()
                .map(|(index, func)| (func.name.as_str(), ComponentExportKind::Func, index as u32));
            let mut instances = ComponentInstanceSection::new();
            instances.export_items(types.chain(functions).collect::<Vec<_>>());
            component.section(&instances);
            exports.export(interface, ComponentExportKind::Instance, 0, None);
        }
    }
    component.section(&exports);
    component.finish()
}

/// Whether a function's types hold strings or lists (which cross through memory).
fn uses_memory(spec: &Spec, func: &Func) -> bool {
    fn holds(spec: &Spec, ty: &Ty, seen: &mut Vec<usize>) -> bool {
        match ty {
            Ty::String | Ty::List(_) => true,
            Ty::Option(t) => holds(spec, t, seen),
            Ty::Result(ok, err) => [ok, err].into_iter().flatten().any(|t| holds(spec, t, seen)),
            Ty::Tuple(types) => types.iter().any(|t| holds(spec, t, seen)),
            Ty::Named(index) => {
                if seen.contains(index) {
                    return false;
                }
                seen.push(*index);
                match &spec.types[*index].1 {
                    Named::Record(fields) => fields.iter().any(|(_, t)| holds(spec, t, seen)),
                    Named::Variant(cases) => cases
                        .iter()
                        .filter_map(|(_, t)| t.as_ref())
                        .any(|t| holds(spec, t, seen)),
                    Named::Enum(_) | Named::Flags(_) => false,
                }
            }
            _ => false,
        }
    }
    let mut seen = Vec::new();
    func.params
        .iter()
        .map(|(_, t)| t)
        .chain(&func.result)
        .any(|t| holds(spec, t, &mut seen))
}
