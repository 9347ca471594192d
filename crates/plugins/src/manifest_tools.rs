//! What the operator's manifest says about a plugin's tools by name —
//! `[tasks.tools]` and `[tools.NAME]` — checked against the tools the plugin
//! declares, and the titles and descriptions it writes applied to them.

use anyhow::{Result, bail};
use warden_runtime::manifest::Manifest;

use crate::declarations::ToolDecl;

/// Refuses a manifest that names a tool the plugin does not declare (a
/// misspelt name must not silently leave a tool as the plugin had it), then
/// serves the manifest's titles and descriptions.
pub fn apply(manifest: &Manifest, manifest_name: &str, tools: &mut [ToolDecl]) -> Result<()> {
    let named = manifest
        .tasks
        .tools
        .keys()
        .map(|name| (name, format!("tasks.tools.{name}")))
        .chain(manifest.tools.keys().map(|name| (name, format!("tools.{name}"))));
    for (name, key) in named {
        if !tools.iter().any(|tool| tool.tool.name.as_ref() == name.as_str()) {
            let declared: Vec<&str> = tools.iter().map(|tool| tool.tool.name.as_ref()).collect();
            bail!(
                "{manifest_name}: `{key}` names no tool of this plugin (its tools: {}); fix the name or remove it",
                declared.join(", ")
            );
        }
    }
    for decl in tools {
        let Some(text) = manifest.tools.get(decl.tool.name.as_ref()) else {
            continue;
        };
        if let Some(title) = &text.title {
            decl.tool.title = Some(title.clone());
        }
        if let Some(description) = &text.description {
            decl.tool.description = Some(description.clone().into());
        }
        decl.text_by_manifest = true;
    }
    Ok(())
}
