//! The WIT doc comments a component carries.
//!
//! The component binary format has no place for documentation; the
//! convention of the Bytecode Alliance tools is a `package-docs` custom
//! section, which `wit-parser` reads back onto the component's decoded world.
//! It documents the component's own package: functions exported at world
//! level and interfaces the component defines inline. Functions of an
//! interface from a named package (`export acme:math/ops;`) cannot be
//! documented that way yet, so those tools are described by their signature.
//!
//! Toolchains do not write the section by default yet; `embed` writes it from
//! the WIT a component was built from.

use std::collections::HashMap;
use std::path::Path;

use anyhow::{Context, Result, bail};
use wasm_encoder::{ComponentSection as _, CustomSection, Encode as _};
use wasmparser::Payload;
use wit_parser::decoding::{DecodedWasm, decode};
use wit_parser::{Function, PackageMetadata, Resolve, Type, TypeDefKind, WorldId, WorldItem};

/// Doc comments and WIT signatures (with the component's own type names) by
/// (exported interface, function).
#[derive(Default)]
pub struct Docs {
    functions: HashMap<(Option<String>, String), String>,
    signatures: HashMap<(Option<String>, String), String>,
}

impl Docs {
    /// The docs `bytes` (a component) carries; none if it carries none or
    /// they cannot be read.
    pub fn read(bytes: &[u8]) -> Self {
        match decode(bytes) {
            Ok(DecodedWasm::Component(resolve, world)) => Self::of_world(&resolve, world),
            Ok(DecodedWasm::WitPackage(..)) => Self::default(),
            Err(error) => {
                tracing::debug!("cannot read the component's WIT documentation: {error:#}");
                Self::default()
            }
        }
    }

    fn of_world(resolve: &Resolve, world: WorldId) -> Self {
        let mut docs = Self::default();
        for (key, item) in &resolve.worlds[world].exports {
            match item {
                WorldItem::Function(function) => docs.add(resolve, None, function),
                WorldItem::Interface { id, .. } => {
                    let interface = resolve.name_world_key(key);
                    for function in resolve.interfaces[*id].functions.values() {
                        docs.add(resolve, Some(&interface), function);
                    }
                }
                WorldItem::Type { .. } => {}
            }
        }
        docs
    }

    fn add(&mut self, resolve: &Resolve, interface: Option<&str>, function: &Function) {
        let key = (interface.map(str::to_string), function.name.clone());
        self.signatures.insert(key.clone(), signature(resolve, function));
        if let Some(docs) = documented(&function.docs) {
            self.functions.insert(key, docs);
        }
    }

    /// The signature of `function` as its WIT spells it, with type names.
    pub fn signature(&self, interface: Option<&str>, function: &str) -> Option<&str> {
        self.signatures
            .get(&(interface.map(str::to_string), function.to_string()))
            .map(String::as_str)
    }

    /// The doc comment of `function` (in the exported `interface`, if any).
    pub fn function(&self, interface: Option<&str>, function: &str) -> Option<&str> {
        self.functions
            .get(&(interface.map(str::to_string), function.to_string()))
            .map(String::as_str)
    }
}

/// `add(a: s64, b: s64) -> s64`, with named types by name.
fn signature(resolve: &Resolve, function: &Function) -> String {
    let params: Vec<String> = function
        .params
        .iter()
        .map(|param| format!("{}: {}", param.name, type_name(resolve, &param.ty, 0)))
        .collect();
    let mut text = format!("{}({})", function.name, params.join(", "));
    if let Some(result) = &function.result {
        text.push_str(" -> ");
        text.push_str(&type_name(resolve, result, 0));
    }
    text
}

fn type_name(resolve: &Resolve, ty: &Type, depth: usize) -> String {
    let id = match ty {
        Type::Bool => return "bool".into(),
        Type::U8 => return "u8".into(),
        Type::U16 => return "u16".into(),
        Type::U32 => return "u32".into(),
        Type::U64 => return "u64".into(),
        Type::S8 => return "s8".into(),
        Type::S16 => return "s16".into(),
        Type::S32 => return "s32".into(),
        Type::S64 => return "s64".into(),
        Type::F32 => return "f32".into(),
        Type::F64 => return "f64".into(),
        Type::Char => return "char".into(),
        Type::String => return "string".into(),
        Type::ErrorContext => return "error-context".into(),
        Type::Id(id) => *id,
    };
    let def = &resolve.types[id];
    if let Some(name) = &def.name {
        return name.clone();
    }
    if depth > super::schema::MAX_DEPTH {
        return "…".into();
    }
    let inner = |ty: &Type| type_name(resolve, ty, depth + 1);
    let optional = |ty: &Option<Type>| ty.as_ref().map_or("_".to_string(), inner);
    match &def.kind {
        TypeDefKind::List(ty) => format!("list<{}>", inner(ty)),
        TypeDefKind::FixedLengthList(ty, n) => format!("list<{}, {n}>", inner(ty)),
        TypeDefKind::Map(k, v) => format!("map<{}, {}>", inner(k), inner(v)),
        TypeDefKind::Option(ty) => format!("option<{}>", inner(ty)),
        TypeDefKind::Result(r) => match (&r.ok, &r.err) {
            (None, None) => "result".into(),
            (ok, None) => format!("result<{}>", optional(ok)),
            (ok, err) => format!("result<{}, {}>", optional(ok), optional(err)),
        },
        TypeDefKind::Tuple(t) => format!("tuple<{}>", t.types.iter().map(inner).collect::<Vec<_>>().join(", ")),
        TypeDefKind::Handle(wit_parser::Handle::Own(id)) => type_name(resolve, &Type::Id(*id), depth + 1),
        TypeDefKind::Handle(wit_parser::Handle::Borrow(id)) => {
            format!("borrow<{}>", type_name(resolve, &Type::Id(*id), depth + 1))
        }
        TypeDefKind::Future(ty) => ty.as_ref().map_or("future".into(), |t| format!("future<{}>", inner(t))),
        TypeDefKind::Stream(ty) => ty.as_ref().map_or("stream".into(), |t| format!("stream<{}>", inner(t))),
        TypeDefKind::Type(ty) => inner(ty),
        other => other.as_str().to_string(),
    }
}

fn documented(docs: &wit_parser::Docs) -> Option<String> {
    let text = docs.contents.as_deref()?.trim();
    (!text.is_empty()).then(|| text.to_string())
}

/// `warden embed-docs`: writes the documented component, replacing the file
/// only once the new one is complete.
pub fn run(args: &crate::cli::EmbedDocsArgs) -> Result<()> {
    let bytes = std::fs::read(&args.component).with_context(|| format!("cannot read {}", args.component.display()))?;
    let documented = embed(&bytes, &args.wit, args.world.as_deref())
        .with_context(|| format!("cannot document {}", args.component.display()))?;
    let output = args.output.as_ref().unwrap_or(&args.component);
    let partial = output.with_extension("wasm.partial");
    std::fs::write(&partial, &documented).with_context(|| format!("cannot write {}", partial.display()))?;
    std::fs::rename(&partial, output).with_context(|| format!("cannot write {}", output.display()))?;
    let documented = Docs::read(&documented).functions.len();
    eprintln!("{}: {documented} function(s) documented", output.display());
    Ok(())
}

/// Returns `component` with a `package-docs` section carrying the doc
/// comments of the WIT in `wit_dir` (the folder it was built from, world
/// `world` or the only one) for what the component exports.
pub fn embed(component: &[u8], wit_dir: &Path, world: Option<&str>) -> Result<Vec<u8>> {
    let DecodedWasm::Component(mut decoded, root) = decode(component).context("cannot decode the component")? else {
        bail!("not a component");
    };
    let mut source = Resolve::default();
    let (package, _) = source
        .push_dir(wit_dir)
        .with_context(|| format!("cannot read the WIT in {}", wit_dir.display()))?;
    let source_world = source.select_world(&[package], world)?;
    let documented: HashMap<String, &WorldItem> = source.worlds[source_world]
        .exports
        .iter()
        .map(|(key, item)| (source.name_world_key(key), item))
        .collect();
    let root_package = decoded.worlds[root]
        .package
        .context("the decoded world has no package")?;
    let exports: Vec<(String, WorldItem)> = decoded.worlds[root]
        .exports
        .iter()
        .map(|(key, item)| (decoded.name_world_key(key), item.clone()))
        .collect();
    let mut world_functions = Vec::new();
    for (name, item) in exports {
        match (item, documented.get(&name)) {
            (WorldItem::Function(_), Some(WorldItem::Function(from))) => {
                world_functions.push((from.name.clone(), from.docs.clone()));
            }
            (WorldItem::Interface { id, .. }, Some(WorldItem::Interface { id: from, .. })) => {
                // Only interfaces of the component's own package can carry docs.
                if decoded.interfaces[id].package != Some(root_package) {
                    continue;
                }
                let from = &source.interfaces[*from];
                decoded.interfaces[id].docs = from.docs.clone();
                for (function, target) in decoded.interfaces[id].functions.iter_mut() {
                    if let Some(from) = from.functions.get(function) {
                        target.docs = from.docs.clone();
                    }
                }
            }
            _ => {}
        }
    }
    let world = &mut decoded.worlds[root];
    for (function, docs) in world_functions {
        for (_, item) in world.exports.iter_mut() {
            if let WorldItem::Function(target) = item
                && target.name == function
            {
                target.docs = docs.clone();
            }
        }
    }
    let section = PackageMetadata::extract(&decoded, root_package).encode()?;
    // A component carries one such section: a previous one is replaced.
    let mut out = without_package_docs(component)?;
    // A custom section may follow all the others.
    CustomSection {
        name: PackageMetadata::SECTION_NAME.into(),
        data: section.into(),
    }
    .append_to_component(&mut out);
    Ok(out)
}

/// `component` without its top-level `package-docs` section(s).
fn without_package_docs(component: &[u8]) -> Result<Vec<u8>> {
    let mut cuts = Vec::new();
    let mut depth = 0usize;
    for payload in wasmparser::Parser::new(0).parse_all(component) {
        match payload.context("cannot parse the component")? {
            Payload::ModuleSection { .. } | Payload::ComponentSection { .. } => depth += 1,
            Payload::End(_) => depth = depth.saturating_sub(1),
            Payload::CustomSection(reader) if depth == 0 && reader.name() == PackageMetadata::SECTION_NAME => {
                // The section starts with its id (0) and its size in LEB128.
                let contents = reader.range();
                let mut header = vec![0];
                u32::try_from(contents.len())?.encode(&mut header);
                let start = contents.start.checked_sub(header.len());
                match start {
                    Some(start) if component[start..contents.start] == header[..] => cuts.push(start..contents.end),
                    _ => bail!("its `package-docs` section has an unusual header; strip it first"),
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::with_capacity(component.len());
    let mut at = 0;
    for cut in cuts {
        out.extend_from_slice(&component[at..cut.start]);
        at = cut.end;
    }
    out.extend_from_slice(&component[at..]);
    Ok(out)
}
