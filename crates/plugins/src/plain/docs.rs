//! The WIT doc comments a component carries.
//!
//! The component binary format has no place for documentation; the
//! convention of the Bytecode Alliance tools is a `package-docs` custom
//! section, which `wit-parser` reads back onto the component's decoded world.
//! It documents only the package `wit-parser` synthesizes for the component
//! (`root:component`): functions exported at world level and interfaces the
//! component defines inline. An interface from a named package (`export
//! acme:math/ops;`) belongs to another package of the decoded `Resolve`, which
//! that section has no place for (wit-parser 0.254 to 0.258 inject it into the
//! root package only). Warden therefore also reads `warden:package-docs`: a
//! version byte (1), then a JSON object from package name
//! (`acme:math@1.0.0`) to that package's docs in the `package-docs` format.
//!
//! Toolchains do not write either section by default yet; `embed` writes both
//! from the WIT a component was built from.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use anyhow::{Context, Result, bail};
use wasm_encoder::{ComponentSection as _, CustomSection, Encode as _};
use wasmparser::Payload;
use wit_parser::decoding::{DecodedWasm, decode};
use wit_parser::{
    Function, InterfaceId, PackageId, PackageMetadata, Resolve, Type, TypeDefKind, TypeId, WorldId, WorldItem,
};

use super::budget::{OverBudget, Text};
use super::wit_shape::{Shape, documented};

/// Warden's section for the docs of the component's other packages (see the
/// module's documentation).
pub const FOREIGN_SECTION_NAME: &str = "warden:package-docs";
/// The version byte `FOREIGN_SECTION_NAME` starts with.
const FOREIGN_SECTION_VERSION: u8 = 1;
/// The largest `FOREIGN_SECTION_NAME` section read: doc comments, not a
/// payload (the descriptions it yields are bounded by the load budget too).
pub const MAX_FOREIGN_SECTION_BYTES: usize = 1 << 20;

/// The component's decoded world, for the doc comments and WIT signatures
/// (with the component's own type names) of what it exports. Nothing is
/// rendered until asked for, and then under the component's budget: a
/// signature names a type used a thousand times a thousand times.
#[derive(Default)]
pub struct Docs {
    resolve: Resolve,
    world: Option<WorldId>,
    /// The exported interfaces by the name functions are looked up with.
    interfaces: HashMap<String, InterfaceId>,
}

impl Docs {
    /// The docs `bytes` (a component) carries; none if it carries none or
    /// they cannot be read.
    pub fn read(bytes: &[u8]) -> Self {
        match decode(bytes) {
            Ok(DecodedWasm::Component(mut resolve, world)) => {
                if let Err(error) = inject_foreign(bytes, &mut resolve) {
                    tracing::debug!("cannot read the component's `{FOREIGN_SECTION_NAME}` section: {error:#}");
                }
                let interfaces = resolve.worlds[world]
                    .exports
                    .iter()
                    .filter_map(|(key, item)| match item {
                        WorldItem::Interface { id, .. } => Some((resolve.name_world_key(key), *id)),
                        _ => None,
                    })
                    .collect();
                Self {
                    resolve,
                    world: Some(world),
                    interfaces,
                }
            }
            Ok(DecodedWasm::WitPackage(..)) => Self::default(),
            Err(error) => {
                tracing::debug!("cannot read the component's WIT documentation: {error:#}");
                Self::default()
            }
        }
    }

    fn find(&self, interface: Option<&str>, function: &str) -> Option<&Function> {
        match interface {
            Some(interface) => self.resolve.interfaces[*self.interfaces.get(interface)?]
                .functions
                .get(function),
            None => self.resolve.worlds[self.world?]
                .exports
                .values()
                .find_map(|item| match item {
                    WorldItem::Function(f) if f.name == function => Some(f),
                    _ => None,
                }),
        }
    }

    /// Writes the signature of `function` as its WIT spells it, with type
    /// names, to `out`; `false` when the docs do not know the function.
    pub fn signature(&self, interface: Option<&str>, function: &str, out: &mut Text) -> Result<bool, OverBudget> {
        let Some(function) = self.find(interface, function) else {
            return Ok(false);
        };
        signature(&self.resolve, function, out)?;
        Ok(true)
    }

    /// The WIT types of `function`'s parameters (by name) and of its result,
    /// for the descriptions in its schemas; `None` when the docs do not know
    /// the function.
    pub fn shapes(&self, interface: Option<&str>, function: &str) -> Option<FunctionShapes<'_>> {
        let function = self.find(interface, function)?;
        Some(FunctionShapes {
            params: function
                .params
                .iter()
                .map(|param| (param.name.as_str(), Shape::new(&self.resolve, param.ty)))
                .collect(),
            result: function.result.map(|ty| Shape::new(&self.resolve, ty)),
        })
    }

    /// The doc comment of `function` (in the exported `interface`, if any).
    pub fn function(&self, interface: Option<&str>, function: &str) -> Option<&str> {
        documented(&self.find(interface, function)?.docs)
    }

    /// The doc comment of `function` as the WIT wrote it (its lines' common
    /// indentation removed, nothing trimmed), for `param_docs`.
    pub fn comment(&self, interface: Option<&str>, function: &str) -> Option<&str> {
        self.find(interface, function)?.docs.contents.as_deref()
    }

    /// How many exported functions have a doc comment.
    pub fn documented(&self) -> usize {
        let Some(world) = self.world else { return 0 };
        self.resolve.worlds[world]
            .exports
            .values()
            .map(|item| match item {
                WorldItem::Function(f) => usize::from(documented(&f.docs).is_some()),
                WorldItem::Interface { id, .. } => self.resolve.interfaces[*id]
                    .functions
                    .values()
                    .filter(|f| documented(&f.docs).is_some())
                    .count(),
                WorldItem::Type { .. } => 0,
            })
            .sum()
    }
}

/// A function's parameter and result types in the component's WIT.
pub struct FunctionShapes<'r> {
    params: Vec<(&'r str, Shape<'r>)>,
    pub result: Option<Shape<'r>>,
}

impl<'r> FunctionShapes<'r> {
    /// The type of the parameter `name`.
    pub fn param(&self, name: &str) -> Option<Shape<'r>> {
        self.params.iter().find(|(n, _)| *n == name).map(|(_, shape)| *shape)
    }
}

/// `add(a: s64, b: s64) -> s64`, with named types by name.
fn signature(resolve: &Resolve, function: &Function, out: &mut Text) -> Result<(), OverBudget> {
    out.push(&function.name)?;
    out.push("(")?;
    for (n, param) in function.params.iter().enumerate() {
        out.push(if n > 0 { ", " } else { "" })?;
        out.push(&param.name)?;
        out.push(": ")?;
        type_name(resolve, &param.ty, 0, out)?;
    }
    out.push(")")?;
    if let Some(result) = &function.result {
        out.push(" -> ")?;
        type_name(resolve, result, 0, out)?;
    }
    Ok(())
}

/// Writes `ty` by name, or spelled out when it has none (`…` past
/// `MAX_DEPTH` levels); each type counts as one value, its name as written.
fn type_name(resolve: &Resolve, ty: &Type, depth: usize, out: &mut Text) -> Result<(), OverBudget> {
    out.values(1)?;
    let id = match ty {
        Type::Bool => return out.push("bool"),
        Type::U8 => return out.push("u8"),
        Type::U16 => return out.push("u16"),
        Type::U32 => return out.push("u32"),
        Type::U64 => return out.push("u64"),
        Type::S8 => return out.push("s8"),
        Type::S16 => return out.push("s16"),
        Type::S32 => return out.push("s32"),
        Type::S64 => return out.push("s64"),
        Type::F32 => return out.push("f32"),
        Type::F64 => return out.push("f64"),
        Type::Char => return out.push("char"),
        Type::String => return out.push("string"),
        Type::ErrorContext => return out.push("error-context"),
        Type::Id(id) => *id,
    };
    let def = &resolve.types[id];
    if let Some(name) = &def.name {
        return out.push(name);
    }
    if depth > super::schema::MAX_DEPTH {
        return out.push("…");
    }
    let below = depth + 1;
    let inner = |ty: &Type, out: &mut Text| type_name(resolve, ty, below, out);
    match &def.kind {
        TypeDefKind::List(ty) => {
            out.push("list<")?;
            inner(ty, out)?;
            out.push(">")
        }
        TypeDefKind::FixedLengthList(ty, n) => {
            out.push("list<")?;
            inner(ty, out)?;
            out.push(&format!(", {n}>"))
        }
        TypeDefKind::Map(k, v) => {
            out.push("map<")?;
            inner(k, out)?;
            out.push(", ")?;
            inner(v, out)?;
            out.push(">")
        }
        TypeDefKind::Option(ty) => {
            out.push("option<")?;
            inner(ty, out)?;
            out.push(">")
        }
        TypeDefKind::Result(r) => {
            if r.ok.is_none() && r.err.is_none() {
                return out.push("result");
            }
            out.push("result<")?;
            match &r.ok {
                Some(ok) => inner(ok, out)?,
                None => out.push("_")?,
            }
            if let Some(err) = &r.err {
                out.push(", ")?;
                inner(err, out)?;
            }
            out.push(">")
        }
        TypeDefKind::Tuple(t) => {
            out.push("tuple<")?;
            for (n, ty) in t.types.iter().enumerate() {
                out.push(if n > 0 { ", " } else { "" })?;
                inner(ty, out)?;
            }
            out.push(">")
        }
        TypeDefKind::Handle(wit_parser::Handle::Own(id)) => inner(&Type::Id(*id), out),
        TypeDefKind::Handle(wit_parser::Handle::Borrow(id)) => {
            out.push("borrow<")?;
            inner(&Type::Id(*id), out)?;
            out.push(">")
        }
        TypeDefKind::Future(ty) | TypeDefKind::Stream(ty) => {
            out.push(if matches!(def.kind, TypeDefKind::Future(_)) {
                "future"
            } else {
                "stream"
            })?;
            if let Some(ty) = ty {
                out.push("<")?;
                inner(ty, out)?;
                out.push(">")?;
            }
            Ok(())
        }
        TypeDefKind::Type(ty) => inner(ty, out),
        other => out.push(other.as_str()),
    }
}

/// The top-level custom sections of `component` named `name`: their
/// contents, and their ranges including the section header.
fn custom_sections<'a>(component: &'a [u8], name: &str) -> Result<Vec<(&'a [u8], std::ops::Range<usize>)>> {
    let mut found = Vec::new();
    let mut depth = 0usize;
    for payload in wasmparser::Parser::new(0).parse_all(component) {
        match payload.context("cannot parse the component")? {
            Payload::ModuleSection { .. } | Payload::ComponentSection { .. } => depth += 1,
            Payload::End(_) => depth = depth.saturating_sub(1),
            Payload::CustomSection(reader) if depth == 0 && reader.name() == name => {
                // The section starts with its id (0) and its size in LEB128.
                let contents = reader.range();
                let mut header = vec![0];
                u32::try_from(contents.len())?.encode(&mut header);
                let start = contents.start.checked_sub(header.len());
                match start {
                    Some(start) if component[start..contents.start] == header[..] => {
                        found.push((&component[reader.data_offset()..contents.end], start..contents.end));
                    }
                    _ => bail!("its `{name}` section has an unusual header; strip it first"),
                }
            }
            _ => {}
        }
    }
    Ok(found)
}

/// Puts the docs of `warden:package-docs` on the packages of `resolve` they
/// name; a package the component does not have is skipped.
fn inject_foreign(component: &[u8], resolve: &mut Resolve) -> Result<()> {
    let sections = custom_sections(component, FOREIGN_SECTION_NAME)?;
    let data = match sections.as_slice() {
        [] => return Ok(()),
        [(data, _)] => *data,
        _ => bail!("more than one `{FOREIGN_SECTION_NAME}` section"),
    };
    let packages = decode_foreign(data)?;
    for (name, metadata) in &packages {
        let Some(id) = resolve
            .packages
            .iter()
            .find_map(|(id, package)| (package.name.to_string() == *name).then_some(id))
        else {
            tracing::debug!("`{FOREIGN_SECTION_NAME}` documents package `{name}`, which the component does not have");
            continue;
        };
        metadata
            .inject(resolve, id)
            .with_context(|| format!("package `{name}`"))?;
    }
    Ok(())
}

fn decode_foreign(data: &[u8]) -> Result<BTreeMap<String, PackageMetadata>> {
    if data.len() > MAX_FOREIGN_SECTION_BYTES {
        bail!(
            "the `{FOREIGN_SECTION_NAME}` section is {} bytes, more than the {} read",
            data.len(),
            MAX_FOREIGN_SECTION_BYTES
        );
    }
    match data.split_first() {
        Some((&FOREIGN_SECTION_VERSION, json)) => Ok(serde_json::from_slice(json)?),
        version => bail!(
            "expected `{FOREIGN_SECTION_NAME}` version {FOREIGN_SECTION_VERSION}, got {:?}",
            version.map(|(v, _)| v)
        ),
    }
}

/// Copies the doc comments of interface `from` (in `source`) onto interface
/// `id` of `decoded`: the interface's, its functions', its types' and their
/// fields' and cases'. What the component does not have is left out.
fn copy_interface_docs(decoded: &mut Resolve, id: InterfaceId, source: &Resolve, from: InterfaceId) {
    let from = &source.interfaces[from];
    let interface = &mut decoded.interfaces[id];
    interface.docs = from.docs.clone();
    for (function, target) in interface.functions.iter_mut() {
        if let Some(from) = from.functions.get(function) {
            target.docs = from.docs.clone();
        }
    }
    let types: Vec<(TypeId, TypeId)> = interface
        .types
        .iter()
        .filter_map(|(name, id)| Some((*id, *from.types.get(name)?)))
        .collect();
    for (id, from) in types {
        copy_type_docs(decoded, id, source, from);
    }
}

/// The doc comments of type `from` (and of its fields, cases or flags, by
/// name) onto type `id`.
fn copy_type_docs(decoded: &mut Resolve, id: TypeId, source: &Resolve, from: TypeId) {
    let from = &source.types[from];
    let target = &mut decoded.types[id];
    target.docs = from.docs.clone();
    // Fields, cases and flags all have a `name` and `docs`.
    macro_rules! items {
        ($targets:expr, $from:expr) => {
            for target in $targets.iter_mut() {
                if let Some(from) = $from.iter().find(|f| f.name == target.name) {
                    target.docs = from.docs.clone();
                }
            }
        };
    }
    match (&mut target.kind, &from.kind) {
        (TypeDefKind::Record(t), TypeDefKind::Record(f)) => items!(t.fields, f.fields),
        (TypeDefKind::Variant(t), TypeDefKind::Variant(f)) => items!(t.cases, f.cases),
        (TypeDefKind::Enum(t), TypeDefKind::Enum(f)) => items!(t.cases, f.cases),
        (TypeDefKind::Flags(t), TypeDefKind::Flags(f)) => items!(t.flags, f.flags),
        _ => {}
    }
}

/// Returns `component` with a `package-docs` section carrying the doc
/// comments of the WIT in `wit_dir` (the folder it was built from, world
/// `world` or the only one) for what the component exports, and a
/// `warden:package-docs` section for its interfaces from named packages.
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
    // The named packages the exported interfaces come from, in order.
    let mut foreign: Vec<PackageId> = Vec::new();
    for (name, item) in exports {
        match (item, documented.get(&name)) {
            (WorldItem::Function(_), Some(WorldItem::Function(from))) => {
                world_functions.push((from.name.clone(), from.docs.clone()));
            }
            (WorldItem::Interface { id, .. }, Some(WorldItem::Interface { id: from, .. })) => {
                copy_interface_docs(&mut decoded, id, &source, *from);
                if let Some(package) = decoded.interfaces[id].package
                    && package != root_package
                    && !foreign.contains(&package)
                {
                    foreign.push(package);
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
    let packages: BTreeMap<String, PackageMetadata> = foreign
        .into_iter()
        .map(|id| {
            (
                decoded.packages[id].name.to_string(),
                PackageMetadata::extract(&decoded, id),
            )
        })
        .collect();
    let mut foreign_section = vec![FOREIGN_SECTION_VERSION];
    serde_json::to_writer(&mut foreign_section, &packages)?;
    // A component carries one of each section: a previous one is replaced.
    let mut out = without_sections(component, &[PackageMetadata::SECTION_NAME, FOREIGN_SECTION_NAME])?;
    // A custom section may follow all the others.
    CustomSection {
        name: PackageMetadata::SECTION_NAME.into(),
        data: section.into(),
    }
    .append_to_component(&mut out);
    if !packages.is_empty() {
        CustomSection {
            name: FOREIGN_SECTION_NAME.into(),
            data: foreign_section.into(),
        }
        .append_to_component(&mut out);
    }
    Ok(out)
}

/// `component` without its top-level custom sections named `names`.
fn without_sections(component: &[u8], names: &[&str]) -> Result<Vec<u8>> {
    let mut cuts = Vec::new();
    for name in names {
        cuts.extend(custom_sections(component, name)?.into_iter().map(|(_, range)| range));
    }
    cuts.sort_by_key(|range| range.start);
    let mut out = Vec::with_capacity(component.len());
    let mut at = 0;
    for cut in cuts {
        out.extend_from_slice(&component[at..cut.start]);
        at = cut.end;
    }
    out.extend_from_slice(&component[at..]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_oversized_or_unknown_foreign_section_is_not_read() {
        let mut big = vec![FOREIGN_SECTION_VERSION];
        big.extend(std::iter::repeat_n(b' ', MAX_FOREIGN_SECTION_BYTES));
        big.extend_from_slice(b"{}");
        let Err(err) = decode_foreign(&big) else {
            panic!("an oversized section is read")
        };
        let err = err.to_string();
        assert!(err.contains("more than the 1048576 read"), "{err}");
        assert!(decode_foreign(b"\x07{}").is_err());
        assert!(decode_foreign(b"\x01{}").unwrap().is_empty());
    }
}
