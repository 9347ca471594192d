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
use wasm_encoder::{ComponentSection as _, CustomSection};
use wit_parser::decoding::{DecodedWasm, decode};
use wit_parser::{PackageMetadata, Resolve, WorldId, WorldItem};

/// Doc comments by (exported interface, function).
#[derive(Default)]
pub struct Docs {
    functions: HashMap<(Option<String>, String), String>,
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
        let mut functions = HashMap::new();
        for (key, item) in &resolve.worlds[world].exports {
            match item {
                WorldItem::Function(function) => {
                    if let Some(docs) = documented(&function.docs) {
                        functions.insert((None, function.name.clone()), docs);
                    }
                }
                WorldItem::Interface { id, .. } => {
                    let interface = resolve.name_world_key(key);
                    for (name, function) in &resolve.interfaces[*id].functions {
                        if let Some(docs) = documented(&function.docs) {
                            functions.insert((Some(interface.clone()), name.clone()), docs);
                        }
                    }
                }
                WorldItem::Type { .. } => {}
            }
        }
        Self { functions }
    }

    /// The doc comment of `function` (in the exported `interface`, if any).
    pub fn function(&self, interface: Option<&str>, function: &str) -> Option<&str> {
        self.functions
            .get(&(interface.map(str::to_string), function.to_string()))
            .map(String::as_str)
    }
}

fn documented(docs: &wit_parser::Docs) -> Option<String> {
    let text = docs.contents.as_deref()?.trim();
    (!text.is_empty()).then(|| text.to_string())
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
    let mut out = component.to_vec();
    // A custom section may follow all the others.
    CustomSection {
        name: PackageMetadata::SECTION_NAME.into(),
        data: section.into(),
    }
    .append_to_component(&mut out);
    Ok(out)
}
