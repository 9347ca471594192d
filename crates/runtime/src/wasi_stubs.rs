//! WASI functions a component replaced with its own stubs that only trap,
//! found in its bytes at load, so that a crash in one is told as what it
//! is.
//!
//! componentize-py's `--stub-wasi` (and wit-component's stub adapters in
//! general) build a component that imports no WASI at all: each WASI
//! function the code calls is a function of a small core module inside the
//! component whose whole body is `unreachable`. Python's `open()` then
//! crashes the call (its libc asks `wasi:filesystem/preopens` for the
//! preopened folders first) before anything reaches Warden, and the bare
//! "wasm `unreachable` executed" reads like a host fault or a refusal. A trap
//! whose innermost frame is such a stub is instead named: the WASI function
//! the component called, that it is the component's own stub, and that no
//! grant changes it.
//!
//! Everything here is read from the plugin's bytes: names are shown only
//! when they are short and spelled like WIT names (so they cannot forge a
//! sentence), and at most `MAX_FUNCTIONS` stub functions and exports, and
//! `MAX_KEPT_BYTES` of their names, are kept per component.

use wasmparser::{
    ComponentAlias, ComponentExternalKind, ComponentName, ComponentOuterAliasKind, ComponentTypeRef, Encoding,
    KnownCustom, Parser, Payload,
};

/// Stub functions and exports kept per component (componentize-py's stub
/// mode has about 100 of each); past this, further stub modules are not
/// recorded.
const MAX_FUNCTIONS: usize = 4096;
/// Bytes of export names kept per component.
const MAX_KEPT_BYTES: usize = 1 << 20;
/// A name longer than this is not shown.
const MAX_NAME: usize = 128;
/// A module with an export name longer than this is not taken for a stub
/// (its names are kept whole, to recognise it by).
const MAX_EXPORT_NAME: usize = 1024;
/// The prefix wit-component names its adapter and stub modules with in the
/// component's `component-name` section.
const ADAPTER_PREFIX: &str = "wit-component:adapter:";

/// The stub modules of one component.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WasiStubs {
    modules: Vec<StubModule>,
}

/// A core module that imports nothing and whose every function is only
/// `unreachable`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct StubModule {
    /// What the component's `component-name` section calls it, without
    /// wit-component's prefix (`wasi:filesystem/preopens@0.2.0`).
    interface: Option<String>,
    /// Its export names, in order: how a compiled module is recognised.
    exports: Vec<String>,
    /// The exported name of each function, by function index.
    functions: Vec<Option<String>>,
}

/// The stub a call trapped in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StubbedCall {
    /// `wasi:filesystem/preopens@0.2.0`, when the component names it.
    pub interface: Option<String>,
    /// `get-directories`, when the stub is exported under a WIT-like name.
    pub function: Option<String>,
}

impl StubbedCall {
    /// `interface#function`, or what of it is known.
    pub fn name(&self) -> String {
        match (&self.interface, &self.function) {
            (Some(interface), Some(function)) => format!("{interface}#{function}"),
            (Some(interface), None) => interface.clone(),
            (None, Some(function)) => function.clone(),
            (None, None) => "a function".into(),
        }
    }

    /// Why the call crashed, for the client and the audit log.
    pub fn describe(&self) -> String {
        let name = self.name();
        let wasi = self
            .interface
            .as_deref()
            .is_some_and(|i| i.starts_with("wasi:") || i == "wasi_snapshot_preview1");
        if !wasi {
            return format!(
                "the plugin panicked (wasm `unreachable` executed) in `{name}`, a function of its own \
                 that does nothing but trap (a stub it was built with); the call never reached Warden"
            );
        }
        let instead = if self
            .interface
            .as_deref()
            .is_some_and(|i| i.starts_with("wasi:filesystem/"))
        {
            " (a path that is not granted gets an error: no such file or directory)"
        } else {
            ""
        };
        format!(
            "the plugin panicked (wasm `unreachable` executed) in its own stub for `{name}`: it was built \
             with WASI replaced by functions that only trap (e.g. `componentize-py --stub-wasi`), so the \
             call never reached Warden and no grant changes that; built without stubbing WASI, the call \
             reaches Warden and is answered{instead}"
        )
    }
}

impl WasiStubs {
    /// Reads `bytes` (a component). Anything that does not parse yields
    /// what was found before it: this only ever adds to a crash's message.
    pub fn of(bytes: &[u8]) -> Self {
        let mut stubs = Self::default();
        let mut frames: Vec<Frame> = Vec::new();
        let (mut kept, mut kept_bytes) = (0usize, 0usize);
        for payload in Parser::new(0).parse_all(bytes) {
            let Ok(payload) = payload else { break };
            match payload {
                Payload::Version { encoding, .. } => frames.push(match encoding {
                    Encoding::Module => {
                        // Its index in the enclosing component's core module space,
                        // counted when its `ModuleSection` was read.
                        let index = match frames.last() {
                            Some(Frame::Component(c)) => c.modules.checked_sub(1),
                            _ => None,
                        };
                        Frame::Module(ModuleScan {
                            index,
                            ..ModuleScan::default()
                        })
                    }
                    Encoding::Component => Frame::Component(ComponentScan::default()),
                }),
                Payload::ModuleSection { .. } => {
                    if let Some(Frame::Component(c)) = frames.last_mut() {
                        c.modules += 1;
                    }
                }
                Payload::ComponentImportSection(reader) => {
                    if let Some(Frame::Component(c)) = frames.last_mut() {
                        for import in reader.into_iter().flatten() {
                            if matches!(import.ty, ComponentTypeRef::Module(_)) {
                                c.modules += 1;
                            }
                        }
                    }
                }
                Payload::ComponentExportSection(reader) => {
                    if let Some(Frame::Component(c)) = frames.last_mut() {
                        for export in reader.into_iter().flatten() {
                            if export.kind == ComponentExternalKind::Module {
                                c.modules += 1;
                            }
                        }
                    }
                }
                Payload::ComponentAliasSection(reader) => {
                    if let Some(Frame::Component(c)) = frames.last_mut() {
                        for alias in reader.into_iter().flatten() {
                            if matches!(
                                alias,
                                ComponentAlias::InstanceExport {
                                    kind: ComponentExternalKind::Module,
                                    ..
                                } | ComponentAlias::Outer {
                                    kind: ComponentOuterAliasKind::CoreModule,
                                    ..
                                }
                            ) {
                                c.modules += 1;
                            }
                        }
                    }
                }
                Payload::ImportSection(reader) => {
                    if let Some(Frame::Module(m)) = frames.last_mut()
                        && reader.count() > 0
                    {
                        m.not_a_stub();
                    }
                }
                Payload::ExportSection(reader) => {
                    // Kept only while the module may be a stub (imports come
                    // first), and only so many: a component's exports cost
                    // the host no more than its stubs' do.
                    if let Some(Frame::Module(m)) = frames.last_mut()
                        && m.candidate
                    {
                        if reader.count() as usize > MAX_FUNCTIONS {
                            m.not_a_stub();
                        }
                        for export in reader.into_iter().flatten() {
                            if !m.candidate || export.name.len() > MAX_EXPORT_NAME {
                                m.not_a_stub();
                                break;
                            }
                            m.exports.push((export.name.to_string(), export.kind, export.index));
                        }
                    }
                }
                Payload::CodeSectionEntry(body) => {
                    if let Some(Frame::Module(m)) = frames.last_mut()
                        && m.candidate
                    {
                        m.functions += 1;
                        // No locals, `unreachable`, `end`.
                        if body.as_bytes() != [0x00, 0x00, 0x0b] {
                            m.not_a_stub();
                        }
                    }
                }
                Payload::CustomSection(reader) => {
                    if let (KnownCustom::ComponentName(names), Some(Frame::Component(c))) =
                        (reader.as_known(), frames.last_mut())
                    {
                        for name in names.into_iter().flatten() {
                            if let ComponentName::CoreModules(map) = name {
                                // Only its stubs' names (`stubs` is in index
                                // order), the first for each, and only names shown.
                                for naming in map.into_iter().flatten() {
                                    let name = naming.name.strip_prefix(ADAPTER_PREFIX).unwrap_or(naming.name);
                                    if let Ok(at) = c.stubs.binary_search_by_key(&Some(naming.index), |s| s.0)
                                        && c.stubs[at].2.is_none()
                                        && wit_like(name)
                                    {
                                        c.stubs[at].2 = Some(name.to_string());
                                    }
                                }
                            }
                        }
                    }
                }
                Payload::End(_) => match frames.pop() {
                    Some(Frame::Module(module)) => {
                        if let Some(stub) = module.stub() {
                            let count = stub.functions.len().max(stub.exports.len());
                            let bytes: usize = stub.exports.iter().map(String::len).sum();
                            if kept + count <= MAX_FUNCTIONS && kept_bytes + bytes <= MAX_KEPT_BYTES {
                                kept += count;
                                kept_bytes += bytes;
                                if let Some(Frame::Component(c)) = frames.last_mut() {
                                    c.stubs.push((module.index, stubs.modules.len(), None));
                                }
                                stubs.modules.push(stub);
                            }
                        }
                    }
                    Some(Frame::Component(component)) => {
                        for (_, at, name) in component.stubs {
                            stubs.modules[at].interface = name;
                        }
                    }
                    None => {}
                },
                _ => {}
            }
        }
        stubs
    }

    /// How many stub modules the component holds.
    pub fn len(&self) -> usize {
        self.modules.len()
    }

    pub fn is_empty(&self) -> bool {
        self.modules.is_empty()
    }

    /// The stub `error` (a call's failure) trapped in, if its innermost
    /// frame is one of this component's stubs.
    pub fn trapped_in(&self, error: &wasmtime::Error) -> Option<StubbedCall> {
        if self.modules.is_empty()
            || error.downcast_ref::<wasmtime::Trap>() != Some(&wasmtime::Trap::UnreachableCodeReached)
        {
            return None;
        }
        let frame = error.downcast_ref::<wasmtime::WasmBacktrace>()?.frames().first()?;
        let module = frame.module();
        if module.imports().len() != 0 {
            return None;
        }
        let exports: Vec<&str> = module.exports().map(|export| export.name()).collect();
        let mut matching = self
            .modules
            .iter()
            .filter(|stub| stub.exports.iter().map(String::as_str).eq(exports.iter().copied()));
        let first = matching.next()?;
        let function = first.functions.get(frame.func_index() as usize)?.clone();
        // Two stubs with the same exports: the function is known, the
        // interface only if they agree.
        let interface = match matching.all(|other| other.interface == first.interface) {
            true => first.interface.clone(),
            false => None,
        };
        Some(StubbedCall { interface, function })
    }
}

enum Frame {
    Module(ModuleScan),
    Component(ComponentScan),
}

#[derive(Default)]
struct ComponentScan {
    /// Entries of its core module index space so far.
    modules: u32,
    /// Its stubs, in index order: (core module index, index in
    /// `WasiStubs::modules`, the name its `component-name` section gives
    /// it without wit-component's prefix, if WIT-like).
    stubs: Vec<(Option<u32>, usize, Option<String>)>,
}

struct ModuleScan {
    index: Option<u32>,
    /// No import, no function that does more than trap, so far.
    candidate: bool,
    functions: u32,
    exports: Vec<(String, wasmparser::ExternalKind, u32)>,
}

impl Default for ModuleScan {
    fn default() -> Self {
        Self {
            index: None,
            candidate: true,
            functions: 0,
            exports: Vec::new(),
        }
    }
}

impl ModuleScan {
    fn not_a_stub(&mut self) {
        self.candidate = false;
        self.exports = Vec::new();
    }

    fn stub(&self) -> Option<StubModule> {
        if !self.candidate || self.functions == 0 || self.exports.is_empty() {
            return None;
        }
        let count = usize::try_from(self.functions).ok().filter(|&n| n <= MAX_FUNCTIONS)?;
        let mut functions = vec![None; count];
        for (name, kind, index) in &self.exports {
            if *kind == wasmparser::ExternalKind::Func
                && let Some(slot) = functions.get_mut(*index as usize)
                && slot.is_none()
                && wit_like(name)
            {
                *slot = Some(name.clone());
            }
        }
        Some(StubModule {
            interface: None,
            exports: self.exports.iter().map(|(name, ..)| name.clone()).collect(),
            functions,
        })
    }
}

/// Short and spelled like a WIT or WASI name (`wasi:filesystem/preopens@0.2.0`,
/// `[method]descriptor.open-at`, `fd_write`): safe to show as it is.
fn wit_like(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.:/@[]+".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// componentize-py's stub mode in miniature: a module of stubs named as
    /// wit-component names it, one that is not a stub, and a caller.
    const STUBBED: &str = r#"(component
      (core module $wit-component:adapter:wasi:filesystem/types@0.2.0
        (func (export "[method]descriptor.open-at") (param i32) unreachable)
        (func (export "[resource-drop]descriptor") (param i32) unreachable))
      (core module $wit-component:adapter:wasi:cli/environment@0.2.0
        (func (export "get-arguments") (param i32) unreachable)
        (func (export "not a WIT name") (param i32) unreachable))
      (core module $helper (func (export "get-directories") (param i32) i32.const 1 drop unreachable))
      (core module $main
        (import "wasi:filesystem/types@0.2.0" "[method]descriptor.open-at" (func (param i32)))))"#;

    #[test]
    fn stub_modules_are_found_with_their_interface_and_function_names() {
        let stubs = WasiStubs::of(&wat::parse_str(STUBBED).unwrap());
        assert_eq!(
            stubs.modules,
            [
                StubModule {
                    interface: Some("wasi:filesystem/types@0.2.0".into()),
                    exports: vec!["[method]descriptor.open-at".into(), "[resource-drop]descriptor".into()],
                    functions: vec![
                        Some("[method]descriptor.open-at".into()),
                        Some("[resource-drop]descriptor".into())
                    ],
                },
                StubModule {
                    interface: Some("wasi:cli/environment@0.2.0".into()),
                    exports: vec!["get-arguments".into(), "not a WIT name".into()],
                    functions: vec![Some("get-arguments".into()), None],
                },
            ]
        );
    }

    #[test]
    fn a_name_that_is_not_wit_like_is_not_shown() {
        let stubs = WasiStubs::of(
            &wat::parse_str(
                r#"(component (core module $"wasi:x, and grant /etc please"
                     (func (export "f") unreachable)))"#,
            )
            .unwrap(),
        );
        assert_eq!(stubs.len(), 1);
        assert_eq!(stubs.modules[0].interface, None);
        assert!(WasiStubs::of(b"not wasm").is_empty());
    }

    #[test]
    fn past_its_bounds_no_more_is_kept() {
        let modules: String = (0..MAX_FUNCTIONS + 100)
            .map(|i| format!("(core module $m{i} (func (export \"f\") unreachable))"))
            .collect();
        let stubs = WasiStubs::of(&wat::parse_str(format!("(component {modules})")).unwrap());
        assert_eq!(stubs.len(), MAX_FUNCTIONS);
        // One function exported under more names than are kept: not kept.
        let exports: String = (0..=MAX_FUNCTIONS)
            .map(|i| format!("(export \"e{i}\" (func 0))"))
            .collect();
        let many = format!("(component (core module (func unreachable) {exports}))");
        assert!(WasiStubs::of(&wat::parse_str(many).unwrap()).is_empty());
    }

    #[test]
    fn the_message_names_the_stub_and_says_no_grant_helps() {
        let call = StubbedCall {
            interface: Some("wasi:filesystem/preopens@0.2.0".into()),
            function: Some("get-directories".into()),
        };
        let said = call.describe();
        assert!(
            said.contains("its own stub for `wasi:filesystem/preopens@0.2.0#get-directories`"),
            "{said}"
        );
        assert!(
            said.contains("no grant changes that") && said.contains("no such file or directory"),
            "{said}"
        );
        let other = StubbedCall {
            interface: None,
            function: Some("f".into()),
        };
        assert!(
            other.describe().contains("in `f`, a function of its own"),
            "{}",
            other.describe()
        );
    }
}
