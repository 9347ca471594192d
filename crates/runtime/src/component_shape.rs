//! What a component asks of the engine's instance pool — core instances,
//! linear memories, tables and table elements — read from its bytes before
//! anything is compiled, and checked against the pool's limits here, in one
//! place: wasmtime checks the same counts only after compiling (7 to 14 s
//! for a Python or JavaScript component), and its message names no fix.
//!
//! The limits are sized by what real toolchains emit (measured in
//! `docs/security.md`, "What a component may ask of the instance pool"):
//! componentize-py's stub mode instantiates about 41 core modules, and
//! interpreters carry function tables of thousands of entries.

use anyhow::{Result, bail};
use wasmparser::{
    CanonicalFunction, CanonicalOption, ComponentAlias, ComponentExternalKind, ComponentInstance,
    ComponentOuterAliasKind, ComponentTypeRef, Encoding, Instance, Parser, Payload,
};

/// The largest component file read: the host holds it whole while it
/// compiles it (measured: an 18 MiB componentize-py component, 12 MiB
/// componentize-js).
pub const MAX_COMPONENT_BYTES: u64 = 256 << 20;
/// Core module instances one component may create (wasmtime's
/// `max_core_instances_per_component`).
pub const MAX_CORE_INSTANCES: u32 = 128;
/// Linear memories defined by the core instances of one component.
pub const MAX_MEMORIES: u32 = 8;
/// Tables defined by the core instances of one component.
pub const MAX_TABLES: u32 = 64;
/// Elements of one table, at its initial size (wasmtime's `table_elements`).
pub const MAX_TABLE_ELEMENTS: u64 = 100_000;
/// Tables and memories one core module may define (wasmtime's
/// `max_tables_per_module` and `max_memories_per_module`; no toolchain
/// measured defines more than one of each).
pub const MAX_TABLES_PER_MODULE: u32 = 1;
pub const MAX_MEMORIES_PER_MODULE: u32 = 1;

/// What one component instantiates, over all its nested components.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ComponentShape {
    pub core_instances: u32,
    pub memories: u32,
    pub tables: u32,
    /// The largest initial table size of any instantiated module.
    pub largest_table: u64,
    /// The most tables, and memories, one instantiated module defines.
    pub module_tables: u32,
    pub module_memories: u32,
    /// The first built-in of the component model's async ABI it uses
    /// (`task.return`, an `async` lift…): Warden's engine does not run that
    /// ABI, and wasmtime would say so only after compiling, in its own words.
    pub async_abi: Option<&'static str>,
}

impl ComponentShape {
    /// Reads `bytes` (a component; anything else is an empty shape, for the
    /// compiler to refuse with its own message).
    pub fn of(bytes: &[u8]) -> Result<Self> {
        let mut frames: Vec<Frame> = Vec::new();
        let mut root = None;
        for payload in Parser::new(0).parse_all(bytes) {
            match payload? {
                Payload::Version { encoding, .. } => frames.push(match encoding {
                    Encoding::Module => Frame::Module(ModuleShape::default()),
                    Encoding::Component => Frame::Component(ComponentFrame::default()),
                }),
                Payload::TableSection(reader) => {
                    if let Some(Frame::Module(module)) = frames.last_mut() {
                        for table in reader {
                            module.tables += 1;
                            module.largest_table = module.largest_table.max(table?.ty.initial);
                        }
                    }
                }
                Payload::MemorySection(reader) => {
                    if let Some(Frame::Module(module)) = frames.last_mut() {
                        module.memories += reader.count();
                    }
                }
                Payload::ComponentImportSection(reader) => {
                    let frame = component(&mut frames)?;
                    for import in reader {
                        match import?.ty {
                            ComponentTypeRef::Module(_) => frame.modules.push(ModuleShape::default()),
                            ComponentTypeRef::Component(_) => frame.components.push(ComponentShape::default()),
                            _ => {}
                        }
                    }
                }
                Payload::ComponentAliasSection(reader) => {
                    // Outer aliases are resolved against the enclosing frames as
                    // they are read (no copy of their index spaces per section,
                    // which many sections would make quadratic).
                    let mut modules = Vec::new();
                    let mut components = Vec::new();
                    for alias in reader {
                        match alias? {
                            ComponentAlias::InstanceExport {
                                kind: ComponentExternalKind::Module,
                                ..
                            } => modules.push(ModuleShape::default()),
                            ComponentAlias::InstanceExport {
                                kind: ComponentExternalKind::Component,
                                ..
                            } => components.push(ComponentShape::default()),
                            ComponentAlias::Outer { kind, count, index } => match kind {
                                ComponentOuterAliasKind::CoreModule => modules.push(
                                    outer(&frames, count)
                                        .and_then(|f| f.modules.get(index as usize).copied())
                                        .unwrap_or_default(),
                                ),
                                ComponentOuterAliasKind::Component => components.push(
                                    outer(&frames, count)
                                        .and_then(|f| f.components.get(index as usize).copied())
                                        .unwrap_or_default(),
                                ),
                                _ => {}
                            },
                            _ => {}
                        }
                    }
                    let frame = component(&mut frames)?;
                    frame.modules.extend(modules);
                    frame.components.extend(components);
                }
                Payload::InstanceSection(reader) => {
                    let frame = component(&mut frames)?;
                    for instance in reader {
                        if let Instance::Instantiate { module_index, .. } = instance? {
                            let module = frame.modules.get(module_index as usize).copied().unwrap_or_default();
                            frame.shape.add(&ComponentShape {
                                core_instances: 1,
                                memories: module.memories,
                                tables: module.tables,
                                largest_table: module.largest_table,
                                module_tables: module.tables,
                                module_memories: module.memories,
                                async_abi: None,
                            });
                        }
                    }
                }
                Payload::ComponentCanonicalSection(reader) => {
                    let frame = component(&mut frames)?;
                    for function in reader {
                        if frame.shape.async_abi.is_none() {
                            frame.shape.async_abi = async_abi(&function?);
                        }
                    }
                }
                Payload::ComponentInstanceSection(reader) => {
                    let frame = component(&mut frames)?;
                    for instance in reader {
                        if let ComponentInstance::Instantiate { component_index, .. } = instance? {
                            let nested = frame
                                .components
                                .get(component_index as usize)
                                .copied()
                                .unwrap_or_default();
                            frame.shape.add(&nested);
                        }
                    }
                }
                Payload::End(_) => match frames.pop() {
                    Some(Frame::Module(module)) => {
                        if let Some(Frame::Component(parent)) = frames.last_mut() {
                            parent.modules.push(module);
                        }
                    }
                    Some(Frame::Component(done)) => match frames.last_mut() {
                        Some(Frame::Component(parent)) => parent.components.push(done.shape),
                        _ => root = Some(done.shape),
                    },
                    None => {}
                },
                _ => {}
            }
        }
        Ok(root.unwrap_or_default())
    }

    fn add(&mut self, other: &ComponentShape) {
        self.core_instances = self.core_instances.saturating_add(other.core_instances);
        self.memories = self.memories.saturating_add(other.memories);
        self.tables = self.tables.saturating_add(other.tables);
        self.largest_table = self.largest_table.max(other.largest_table);
        self.module_tables = self.module_tables.max(other.module_tables);
        self.module_memories = self.module_memories.max(other.module_memories);
        self.async_abi = self.async_abi.or(other.async_abi);
    }

    /// Refuses a shape the instance pool cannot hold, naming the bound, and
    /// a component that needs the async ABI.
    pub fn check(&self) -> Result<()> {
        if let Some(builtin) = self.async_abi {
            bail!(
                "the component uses the component model's async ABI (`{builtin}`), which Warden does not run; \
                 build it with synchronous exports (componentize-qjs: `--sync`; WIT: `func`, not `async func`)"
            );
        }
        for (what, count, limit) in [
            ("core module instances", self.core_instances, MAX_CORE_INSTANCES),
            ("linear memories", self.memories, MAX_MEMORIES),
            ("tables", self.tables, MAX_TABLES),
        ] {
            if count > limit {
                bail!(
                    "the component instantiates {count} {what}, more than the {limit} Warden's instance pool \
                     holds for one component; it cannot be served as it is"
                );
            }
        }
        for (what, count, limit) in [
            ("tables", self.module_tables, MAX_TABLES_PER_MODULE),
            ("linear memories", self.module_memories, MAX_MEMORIES_PER_MODULE),
        ] {
            if count > limit {
                bail!(
                    "one of the component's core modules defines {count} {what}, more than the {limit} Warden's \
                     instance pool holds for one module; it cannot be served as it is"
                );
            }
        }
        if self.largest_table > MAX_TABLE_ELEMENTS {
            bail!(
                "the component has a table of {} elements, more than the {MAX_TABLE_ELEMENTS} Warden's instance \
                 pool holds for one table; it cannot be served as it is",
                self.largest_table
            );
        }
        Ok(())
    }
}

/// The async-ABI built-in `function` is or uses, if any.
fn async_abi(function: &CanonicalFunction) -> Option<&'static str> {
    let is_async = |options: &[CanonicalOption]| {
        options
            .iter()
            .any(|option| matches!(option, CanonicalOption::Async | CanonicalOption::Callback(_)))
    };
    match function {
        CanonicalFunction::Lift { options, .. } => is_async(options).then_some("async lift"),
        CanonicalFunction::Lower { options, .. } => is_async(options).then_some("async lower"),
        CanonicalFunction::ResourceNew { .. }
        | CanonicalFunction::ResourceDrop { .. }
        | CanonicalFunction::ResourceRep { .. }
        | CanonicalFunction::ThreadSpawnRef { .. }
        | CanonicalFunction::ThreadSpawnIndirect { .. }
        | CanonicalFunction::ThreadAvailableParallelism => None,
        CanonicalFunction::TaskReturn { .. } => Some("task.return"),
        CanonicalFunction::TaskCancel => Some("task.cancel"),
        CanonicalFunction::ContextGet { .. } => Some("context.get"),
        CanonicalFunction::ContextSet { .. } => Some("context.set"),
        CanonicalFunction::BackpressureInc | CanonicalFunction::BackpressureDec => Some("backpressure"),
        _ => Some("an async built-in (stream, future, waitable or subtask)"),
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct ModuleShape {
    memories: u32,
    tables: u32,
    largest_table: u64,
}

#[derive(Default)]
struct ComponentFrame {
    /// The core module index space, by what each instantiation costs.
    modules: Vec<ModuleShape>,
    /// The component index space, by what each instantiation costs.
    components: Vec<ComponentShape>,
    shape: ComponentShape,
}

enum Frame {
    Module(ModuleShape),
    Component(ComponentFrame),
}

fn component(frames: &mut [Frame]) -> Result<&mut ComponentFrame> {
    match frames.last_mut() {
        Some(Frame::Component(frame)) => Ok(frame),
        _ => bail!("a component section outside a component"),
    }
}

/// The component `count` levels out from the innermost (0 is the current
/// one), for an outer alias.
fn outer(frames: &[Frame], count: u32) -> Option<&ComponentFrame> {
    frames
        .iter()
        .rev()
        .filter_map(|frame| match frame {
            Frame::Component(frame) => Some(frame),
            Frame::Module(_) => None,
        })
        .nth(count as usize)
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_encoder::{
        Alias, Component, ComponentAliasSection, ComponentInstanceSection, ComponentOuterAliasKind as Kind,
        InstanceSection, MemorySection, MemoryType, Module, ModuleArg, ModuleSection, NestedComponentSection,
    };

    fn with_memory() -> Module {
        let mut module = Module::new();
        let mut memory = MemorySection::new();
        memory.memory(MemoryType {
            minimum: 0,
            maximum: None,
            memory64: false,
            shared: false,
            page_size_log2: None,
        });
        module.section(&memory);
        module
    }

    #[test]
    fn nested_components_count_once_per_instantiation_and_outer_aliases_count_their_module() {
        // The inner component instantiates the outer module twice (through an outer alias).
        let mut inner = Component::new();
        let mut alias = ComponentAliasSection::new();
        alias.alias(Alias::Outer {
            kind: Kind::CoreModule,
            count: 1,
            index: 0,
        });
        inner.section(&alias);
        let mut instances = InstanceSection::new();
        instances.instantiate(0, Vec::<(&str, ModuleArg)>::new());
        instances.instantiate(0, Vec::<(&str, ModuleArg)>::new());
        inner.section(&instances);

        let mut outer = Component::new();
        outer.section(&ModuleSection(&with_memory()));
        outer.section(&NestedComponentSection(&inner));
        let mut instances = InstanceSection::new();
        instances.instantiate(0, Vec::<(&str, ModuleArg)>::new());
        outer.section(&instances);
        let mut components = ComponentInstanceSection::new();
        components.instantiate(0, Vec::<(&str, wasm_encoder::ComponentExportKind, u32)>::new());
        components.instantiate(0, Vec::<(&str, wasm_encoder::ComponentExportKind, u32)>::new());
        outer.section(&components);

        let shape = ComponentShape::of(&outer.finish()).unwrap();
        assert_eq!(
            shape,
            ComponentShape {
                core_instances: 5,
                memories: 5,
                tables: 0,
                largest_table: 0,
                module_tables: 0,
                module_memories: 1,
                async_abi: None,
            }
        );
        assert!(shape.check().is_ok());
    }

    #[test]
    fn each_bound_is_named() {
        let over = |shape: ComponentShape| shape.check().unwrap_err().to_string();
        let base = ComponentShape::default();
        assert!(
            over(ComponentShape {
                core_instances: MAX_CORE_INSTANCES + 1,
                ..base
            })
            .contains("core module instances")
        );
        assert!(
            over(ComponentShape {
                memories: MAX_MEMORIES + 1,
                ..base
            })
            .contains("linear memories")
        );
        assert!(
            over(ComponentShape {
                tables: MAX_TABLES + 1,
                ..base
            })
            .contains("tables")
        );
        assert!(
            over(ComponentShape {
                largest_table: MAX_TABLE_ELEMENTS + 1,
                ..base
            })
            .contains("elements")
        );
        assert!(
            over(ComponentShape {
                module_tables: 2,
                ..base
            })
            .contains("core modules defines 2 tables")
        );
        assert!(
            over(ComponentShape {
                module_memories: 2,
                ..base
            })
            .contains("defines 2 linear memories")
        );
        assert!(ComponentShape::of(b"not wasm").is_err());
    }

    #[test]
    fn the_async_abi_is_named_before_compiling() {
        let mut canonicals = wasm_encoder::CanonicalFunctionSection::new();
        canonicals.task_cancel();
        let mut async_component = Component::new();
        async_component.section(&canonicals);
        let shape = ComponentShape::of(&async_component.clone().finish()).unwrap();
        assert_eq!(shape.async_abi, Some("task.cancel"));
        let refused = shape.check().unwrap_err().to_string();
        assert!(refused.contains("async ABI (`task.cancel`)"), "{refused}");
        assert!(refused.contains("--sync"), "{refused}");

        // Nested and instantiated: the outer component uses it too.
        let mut outer = Component::new();
        outer.section(&NestedComponentSection(&async_component));
        let mut instances = ComponentInstanceSection::new();
        instances.instantiate(0, Vec::<(&str, wasm_encoder::ComponentExportKind, u32)>::new());
        outer.section(&instances);
        assert_eq!(
            ComponentShape::of(&outer.finish()).unwrap().async_abi,
            Some("task.cancel")
        );

        // A synchronous component: none.
        assert_eq!(ComponentShape::of(&Component::new().finish()).unwrap().async_abi, None);
    }
}
