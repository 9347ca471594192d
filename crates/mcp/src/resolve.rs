//! Which plugin a request invokes and what it would use: one resolver for
//! the HTTP pre-check (from the JSON-RPC method and params) and for the
//! handler (from rmcp's typed requests), so both audit and check the same
//! target. Names no plugin serves resolve to nothing.

use std::sync::Arc;

use serde_json::Value;

use crate::access::Target;
use warden_plugins::catalog::{Catalog, CatalogPrompt, CatalogResource, CatalogTemplate, CatalogTool};
use warden_plugins::plugin::{Plugin, Verified};
use warden_runtime::audit::InvocationKind;
use warden_runtime::secrets::Redactor;

/// What a request would invoke: its kind, plugin and target as audited.
pub struct PluginRequest {
    pub kind: InvocationKind,
    pub plugin: Arc<str>,
    /// The tool or prompt name, the URI read, or the completed template.
    pub target: String,
    /// For completions and templated reads: the template.
    template: Option<String>,
    /// For tools and prompts (also a prompt's completion): the name.
    name: Option<String>,
    /// A pulled plugin's origin, for the audit record.
    pub origin: Option<Arc<Verified>>,
    /// The plugin's secrets, redacted from its audit record.
    pub redactor: Arc<Redactor>,
}

impl PluginRequest {
    /// What the access policy is asked about.
    pub fn access_target(&self) -> Target<'_> {
        match (self.kind, &self.name) {
            (InvocationKind::ToolCall, Some(name)) => Target::Tool {
                plugin: &self.plugin,
                name,
            },
            (InvocationKind::PromptGet | InvocationKind::Completion, Some(name)) => Target::Prompt {
                plugin: &self.plugin,
                name,
            },
            _ => Target::Resource {
                plugin: &self.plugin,
                uri: &self.target,
                template: self.template.as_deref(),
            },
        }
    }

    /// What the target is, in a sentence: "tool", "prompt" or "resource".
    pub fn noun(&self) -> &'static str {
        match self.access_target() {
            Target::Tool { .. } => "tool",
            Target::Prompt { .. } => "prompt",
            Target::Resource { .. } => "resource",
        }
    }

    fn named(kind: InvocationKind, plugin: &Plugin, name: &str) -> Self {
        Self {
            kind,
            plugin: plugin.name.clone(),
            target: name.to_string(),
            template: None,
            name: Some(name.to_string()),
            origin: plugin.origin.clone(),
            redactor: plugin.redactor().clone(),
        }
    }
}

/// The tool `name`.
pub fn tool<'c>(catalog: &'c Catalog, name: &str) -> Option<(&'c CatalogTool, PluginRequest)> {
    let entry = catalog.tool(name)?;
    let request = PluginRequest::named(InvocationKind::ToolCall, &entry.plugin, &entry.decl().tool.name);
    Some((entry, request))
}

/// The prompt `name`, got (`PromptGet`) or completed (`Completion`).
pub fn prompt<'c>(
    catalog: &'c Catalog,
    name: &str,
    kind: InvocationKind,
) -> Option<(&'c CatalogPrompt, PluginRequest)> {
    let entry = catalog.prompt(name)?;
    let request = PluginRequest::named(kind, &entry.plugin, &entry.decl().prompt.name);
    Some((entry, request))
}

/// A read of `uri`, from the plugin that serves it.
pub fn read<'c>(catalog: &'c Catalog, uri: &str) -> Option<(&'c Arc<Plugin>, PluginRequest)> {
    let (plugin, template) = catalog.resource_source(uri)?;
    let request = PluginRequest {
        kind: InvocationKind::ResourceRead,
        plugin: plugin.name.clone(),
        target: uri.to_string(),
        template: template.map(str::to_string),
        name: None,
        origin: plugin.origin.clone(),
        redactor: plugin.redactor().clone(),
    };
    Some((plugin, request))
}

/// A completion of the resource template `uri_template`.
pub fn completed_template<'c>(
    catalog: &'c Catalog,
    uri_template: &str,
) -> Option<(&'c CatalogTemplate, PluginRequest)> {
    let entry = catalog.template(uri_template)?;
    let template = entry.decl().template.uri_template.clone();
    let request = PluginRequest {
        kind: InvocationKind::Completion,
        plugin: entry.plugin.name.clone(),
        target: template.clone(),
        template: Some(template),
        name: None,
        origin: entry.plugin.origin.clone(),
        redactor: entry.plugin.redactor().clone(),
    };
    Some((entry, request))
}

/// The plugin invocation a JSON-RPC request asks for; `None` for anything
/// else, and for names no plugin serves (the handler answers those).
pub fn request(catalog: &Catalog, method: &str, params: &Value) -> Option<PluginRequest> {
    let text = |key: &str| params.get(key).and_then(Value::as_str);
    match method {
        "tools/call" => tool(catalog, text("name")?).map(|(_, request)| request),
        "prompts/get" => prompt(catalog, text("name")?, InvocationKind::PromptGet).map(|(_, request)| request),
        // Not `resources/subscribe`: an ungranted URI is refused there as an
        // unknown one (`access::may_subscribe`), never with a `403` that
        // would confirm it exists.
        "resources/read" => read(catalog, text("uri")?).map(|(_, request)| request),
        "completion/complete" => {
            let reference = params.get("ref")?;
            let text = |key: &str| reference.get(key).and_then(Value::as_str);
            match text("type")? {
                "ref/prompt" => prompt(catalog, text("name")?, InvocationKind::Completion).map(|(_, request)| request),
                "ref/resource" => completed_template(catalog, text("uri")?).map(|(_, request)| request),
                _ => None,
            }
        }
        _ => None,
    }
}

/// A catalog entry, as the access policy sees it when it is listed.
pub(crate) trait Listed {
    fn access_target(&self) -> Target<'_>;
}

impl Listed for CatalogTool {
    fn access_target(&self) -> Target<'_> {
        Target::Tool {
            plugin: &self.plugin.name,
            name: &self.decl().tool.name,
        }
    }
}

impl Listed for CatalogPrompt {
    fn access_target(&self) -> Target<'_> {
        Target::Prompt {
            plugin: &self.plugin.name,
            name: &self.decl().prompt.name,
        }
    }
}

impl Listed for CatalogResource {
    fn access_target(&self) -> Target<'_> {
        Target::Resource {
            plugin: &self.plugin.name,
            uri: &self.decl().resource.uri,
            template: None,
        }
    }
}

impl Listed for CatalogTemplate {
    fn access_target(&self) -> Target<'_> {
        let template = self.decl().template.uri_template.as_str();
        Target::Resource {
            plugin: &self.plugin.name,
            uri: template,
            template: Some(template),
        }
    }
}
