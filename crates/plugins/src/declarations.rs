//! What a plugin declares at load, validated once and turned into the MCP
//! shapes clients see. A malformed declaration refuses the whole plugin with
//! an error that names the item and the field.

use std::collections::HashSet;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use rmcp::model::{JsonObject, Prompt, PromptArgument, Resource, ResourceTemplate, Tool, ToolAnnotations};
use serde_json::Value;

use crate::param_headers;
use crate::schema_budget::{self, SchemaCost};
use crate::schema_validation::CompiledSchema;
use crate::uri_template::UriTemplate;
use warden_runtime::contract::types;
use warden_runtime::naming;
use warden_runtime::task_policy::TaskSupport;

/// Everything a plugin declares at load, as it answered.
#[derive(Default)]
pub struct Declared {
    pub tools: Vec<types::Tool>,
    /// How tools may run (contract 0.3.0's `list-tool-execution`).
    pub executions: Vec<types::ToolExecution>,
    pub resources: Vec<types::ResourceInfo>,
    pub templates: Vec<types::ResourceTemplate>,
    pub prompts: Vec<types::Prompt>,
}

/// A tool as Warden serves it: the MCP declaration plus compiled validators,
/// so a call never re-parses a schema.
pub struct ToolDecl {
    /// What clients see. Its `annotations` are set by `annotations::serve`
    /// from `claimed` and the plugin's grants.
    pub tool: Tool,
    /// The annotations the plugin declared — its author's claims, kept for
    /// `warden check`; `None` when it declared none.
    pub claimed: Option<ToolAnnotations>,
    pub input: Arc<CompiledSchema>,
    pub output: Option<Arc<CompiledSchema>>,
    /// Whether the plugin declared that the tool may or must run as a
    /// task; the manifest's `[tasks]` decides over it (`TaskPolicy::decide`).
    pub task: Option<TaskSupport>,
    /// Whether `tool`'s title or description is the manifest's
    /// (`[tools.NAME]`) rather than the plugin's.
    pub text_by_manifest: bool,
    /// Whether the input schema says `x-mcp-header` anywhere, even as data:
    /// calls to such a tool over HTTP must carry `Mcp-Param-*` headers, and
    /// only rmcp's HTTP service checks them.
    pub param_headers: bool,
}

impl std::fmt::Debug for ToolDecl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolDecl")
            .field("name", &self.tool.name)
            .finish_non_exhaustive()
    }
}

/// What all of one plugin's compiled schemas may cost together: each tool
/// has its own bound (`schema_budget`), and so does their sum, which is what
/// the plugin keeps in Warden's memory.
pub const MAX_PLUGIN_SCHEMA_UNITS: u64 = 500_000;
pub const MAX_PLUGIN_PATTERNS: u64 = 1_000;
/// Bytes of schema locations all of one plugin's compiled schemas may keep
/// (see `schema_budget::MAX_LOCATION_BYTES`).
pub const MAX_PLUGIN_LOCATION_BYTES: u64 = 64 << 20;

/// Validates a plugin's tool list — names, descriptions, schemas,
/// uniqueness — and its task declarations (`executions`: each for a
/// declared tool, at most one per tool).
pub fn tools(declared: Vec<types::Tool>, executions: Vec<types::ToolExecution>) -> Result<Vec<ToolDecl>> {
    let mut seen = HashSet::new();
    let mut tools = Vec::with_capacity(declared.len());
    let mut total = SchemaCost::default();
    for tool in declared {
        let name = tool.name.clone();
        if !seen.insert(name.clone()) {
            bail!("tool {name:?} is declared twice");
        }
        let (decl, cost) = tool_decl(tool).with_context(|| format!("tool {name:?}"))?;
        total.expanded += cost.expanded;
        total.patterns += cost.patterns;
        total.locations += cost.locations;
        if total.expanded > MAX_PLUGIN_SCHEMA_UNITS || total.patterns > MAX_PLUGIN_PATTERNS {
            bail!(
                "the schemas of its tools up to {name:?} compile to {} cost units and {} patterns, \
                 more than the {MAX_PLUGIN_SCHEMA_UNITS} units and {MAX_PLUGIN_PATTERNS} patterns a plugin may have",
                total.expanded,
                total.patterns
            );
        }
        if total.locations > MAX_PLUGIN_LOCATION_BYTES {
            bail!(
                "the schemas of its tools up to {name:?} would keep {} bytes of schema locations, \
                 more than the {} MiB a plugin may have",
                total.locations,
                MAX_PLUGIN_LOCATION_BYTES >> 20
            );
        }
        tools.push(decl);
    }
    tools.sort_by(|a, b| a.tool.name.cmp(&b.tool.name));
    for execution in executions {
        let name = execution.tool.as_str();
        // A name no tool has may be anything the plugin wrote: quote its start only.
        let shown = || name.chars().take(64).collect::<String>();
        let Ok(index) = tools.binary_search_by(|t| t.tool.name.as_ref().cmp(name)) else {
            bail!(
                "its `list-tool-execution` names tool {:?}, which its `list-tools` does not declare",
                shown()
            );
        };
        let decl = &mut tools[index];
        if decl.task.is_some() {
            bail!("its `list-tool-execution` names tool {name:?} twice");
        }
        decl.task = Some(match execution.task_support {
            types::TaskSupport::Forbidden => TaskSupport::Forbidden,
            types::TaskSupport::Optional => TaskSupport::Optional,
            types::TaskSupport::Required => TaskSupport::Required,
        });
    }
    Ok(tools)
}

fn tool_decl(tool: types::Tool) -> Result<(ToolDecl, SchemaCost)> {
    naming::check_item_name(&tool.name).context("field `name`")?;
    if tool.description.trim().is_empty() {
        bail!("field `description` is empty; clients and models need to know what the tool does");
    }
    let (input_schema, input, mut cost) = schema(&tool.input_schema).context("field `input-schema`")?;
    param_headers::check(&input_schema).context("field `input-schema`")?;
    let param_headers = param_headers::mentioned(&input_schema);
    let (output_schema, output) = match &tool.output_schema {
        Some(text) => {
            let (schema, validator, output_cost) = schema(text).context("field `output-schema`")?;
            cost.expanded += output_cost.expanded;
            cost.patterns += output_cost.patterns;
            cost.locations += output_cost.locations;
            (Some(Arc::new(schema)), Some(validator))
        }
        None => (None, None),
    };
    let mut mcp = Tool::new(tool.name, tool.description, Arc::new(input_schema));
    if let Some(title) = tool.title {
        mcp = mcp.with_title(title);
    }
    if let Some(schema) = output_schema {
        mcp = mcp.with_raw_output_schema(schema);
    }
    let claimed = tool.annotations.map(|a| {
        ToolAnnotations::from_raw(
            a.title,
            a.read_only_hint,
            a.destructive_hint,
            a.idempotent_hint,
            a.open_world_hint,
        )
    });
    Ok((
        ToolDecl {
            tool: mcp,
            claimed,
            input,
            output,
            task: None,
            text_by_manifest: false,
            param_headers,
        },
        cost,
    ))
}

/// Parses, bounds and compiles one schema.
fn schema(text: &str) -> Result<(JsonObject, Arc<CompiledSchema>, SchemaCost)> {
    schema_budget::check_text(text)?;
    let object = object_schema(text)?;
    let compiled = CompiledSchema::compile(&Value::Object(object.clone()))?;
    let cost = compiled.cost();
    Ok((object, Arc::new(compiled), cost))
}

/// A concrete resource as Warden serves it.
#[derive(Debug)]
pub struct ResourceDecl {
    pub resource: Resource,
}

/// A resource template, with its matcher.
#[derive(Debug)]
pub struct TemplateDecl {
    pub template: ResourceTemplate,
    pub matcher: UriTemplate,
}

/// A prompt, with the arguments it requires.
#[derive(Debug)]
pub struct PromptDecl {
    pub prompt: Prompt,
}

impl PromptDecl {
    /// Why `arguments` cannot be passed to this prompt, if they cannot.
    pub fn check_arguments<'a>(&self, mut given: impl Iterator<Item = &'a str> + Clone) -> Result<(), String> {
        let declared = self.prompt.arguments.as_deref().unwrap_or_default();
        let missing: Vec<&str> = declared
            .iter()
            .filter(|a| a.required == Some(true) && !given.clone().any(|g| g == a.name))
            .map(|a| a.name.as_str())
            .collect();
        if !missing.is_empty() {
            return Err(format!(
                "prompt `{}` needs the argument{} {}",
                self.prompt.name,
                if missing.len() == 1 { "" } else { "s" },
                quoted(&missing)
            ));
        }
        if let Some(unknown) = given.find(|g| !declared.iter().any(|a| a.name == *g)) {
            let names: Vec<&str> = declared.iter().map(|a| a.name.as_str()).collect();
            return Err(format!(
                "prompt `{}` has no argument `{unknown}`; its arguments are {}",
                self.prompt.name,
                if names.is_empty() {
                    "none".to_string()
                } else {
                    quoted(&names)
                }
            ));
        }
        Ok(())
    }
}

fn quoted(names: &[&str]) -> String {
    names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
}

/// A URI must be absolute (`scheme:rest`) to be routed.
fn check_uri(uri: &str) -> Result<()> {
    let scheme = uri.split_once(':').map(|(scheme, _)| scheme).unwrap_or_default();
    let valid_scheme = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
    if !valid_scheme {
        bail!("{uri:?} is not an absolute URI (`scheme:…`)");
    }
    if uri.chars().any(|c| c.is_whitespace() || c.is_control()) {
        bail!("{uri:?} contains whitespace or control characters");
    }
    Ok(())
}

fn non_empty(field: &str, value: &str) -> Result<()> {
    if value.trim().is_empty() {
        bail!("field `{field}` is empty");
    }
    Ok(())
}

/// Validates a plugin's resource list: absolute, unique URIs and names.
pub fn resources(declared: Vec<types::ResourceInfo>) -> Result<Vec<ResourceDecl>> {
    let mut seen = HashSet::new();
    let mut resources = Vec::with_capacity(declared.len());
    for info in declared {
        let uri = info.uri.clone();
        if !seen.insert(uri.clone()) {
            bail!("resource {uri:?} is declared twice");
        }
        let decl = (|| {
            check_uri(&info.uri).context("field `uri`")?;
            non_empty("name", &info.name)?;
            let mut resource = Resource::new(info.uri, info.name);
            if let Some(title) = info.title {
                resource = resource.with_title(title);
            }
            if let Some(description) = info.description {
                resource = resource.with_description(description);
            }
            if let Some(mime) = info.mime_type {
                resource = resource.with_mime_type(mime);
            }
            if let Some(size) = info.size {
                resource = resource.with_size(size);
            }
            Ok::<_, anyhow::Error>(ResourceDecl { resource })
        })()
        .with_context(|| format!("resource {uri:?}"))?;
        resources.push(decl);
    }
    resources.sort_by(|a, b| a.resource.uri.cmp(&b.resource.uri));
    Ok(resources)
}

/// Validates a plugin's resource templates: parseable RFC 6570, unique.
pub fn templates(declared: Vec<types::ResourceTemplate>) -> Result<Vec<TemplateDecl>> {
    let mut seen = HashSet::new();
    let mut templates = Vec::with_capacity(declared.len());
    for info in declared {
        let text = info.uri_template.clone();
        if !seen.insert(text.clone()) {
            bail!("resource template {text:?} is declared twice");
        }
        let decl = (|| {
            check_uri(&info.uri_template).context("field `uri-template`")?;
            let matcher = UriTemplate::parse(&info.uri_template).context("field `uri-template`")?;
            non_empty("name", &info.name)?;
            let mut template = ResourceTemplate::new(info.uri_template, info.name);
            if let Some(title) = info.title {
                template = template.with_title(title);
            }
            if let Some(description) = info.description {
                template = template.with_description(description);
            }
            if let Some(mime) = info.mime_type {
                template = template.with_mime_type(mime);
            }
            Ok::<_, anyhow::Error>(TemplateDecl { template, matcher })
        })()
        .with_context(|| format!("resource template {text:?}"))?;
        templates.push(decl);
    }
    templates.sort_by(|a, b| a.template.uri_template.cmp(&b.template.uri_template));
    Ok(templates)
}

/// Validates a plugin's prompts: names like tool names, described, unique
/// argument names.
pub fn prompts(declared: Vec<types::Prompt>) -> Result<Vec<PromptDecl>> {
    let mut seen = HashSet::new();
    let mut prompts = Vec::with_capacity(declared.len());
    for info in declared {
        let name = info.name.clone();
        if !seen.insert(name.clone()) {
            bail!("prompt {name:?} is declared twice");
        }
        let decl = (|| {
            naming::check_item_name(&info.name).context("field `name`")?;
            let mut argument_names = HashSet::new();
            let mut arguments = Vec::with_capacity(info.arguments.len());
            for argument in info.arguments {
                non_empty("arguments.name", &argument.name)?;
                if !argument_names.insert(argument.name.clone()) {
                    bail!("argument {:?} is declared twice", argument.name);
                }
                let mut mcp = PromptArgument::new(argument.name).with_required(argument.required);
                if let Some(description) = argument.description {
                    mcp = mcp.with_description(description);
                }
                arguments.push(mcp);
            }
            let description = info.description.filter(|d| !d.trim().is_empty()).unwrap_or_else(|| {
                // Clients list prompts by description; never leave it out.
                info.title.clone().unwrap_or_else(|| info.name.clone())
            });
            let mut prompt = Prompt::new(info.name, Some(description), Some(arguments));
            if let Some(title) = info.title {
                prompt = prompt.with_title(title);
            }
            Ok::<_, anyhow::Error>(PromptDecl { prompt })
        })()
        .with_context(|| format!("prompt {name:?}"))?;
        prompts.push(decl);
    }
    prompts.sort_by(|a, b| a.prompt.name.cmp(&b.prompt.name));
    Ok(prompts)
}

/// MCP requires tool schemas to be JSON objects with `"type": "object"`.
fn object_schema(text: &str) -> Result<JsonObject> {
    let value: Value = serde_json::from_str(text).context("is not valid JSON")?;
    let Value::Object(schema) = value else {
        bail!("must be a JSON Schema object, found {}", kind(&value));
    };
    match schema.get("type") {
        Some(Value::String(t)) if t == "object" => Ok(schema),
        Some(other) => bail!("must have \"type\": \"object\", found \"type\": {other}"),
        None => bail!("must have \"type\": \"object\""),
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Every way `value` violates `schema`, one line each, with its JSON path
/// (bounded: see `schema_validation`).
pub fn violations(schema: &CompiledSchema, value: &Value) -> Vec<String> {
    schema.violations(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, schema: &str) -> types::Tool {
        types::Tool {
            name: name.into(),
            title: None,
            description: "does things".into(),
            input_schema: schema.into(),
            output_schema: None,
            annotations: None,
        }
    }

    const OBJECT: &str = r#"{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}"#;

    #[test]
    fn accepts_a_well_formed_tool_and_sorts() {
        let tools = tools(vec![tool("zeta", OBJECT), tool("alpha", OBJECT)], Vec::new()).unwrap();
        let names: Vec<_> = tools.iter().map(|t| t.tool.name.to_string()).collect();
        assert_eq!(names, ["alpha", "zeta"]);
    }

    #[test]
    fn refuses_malformed_declarations_naming_the_field() {
        let cases = [
            (vec![tool("bad name!", OBJECT)], "field `name`"),
            (
                vec![tool("ok", "[1,2]")],
                "must be a JSON Schema object, found an array",
            ),
            (vec![tool("ok", r#"{"type":"string"}"#)], "\"type\": \"object\""),
            (vec![tool("ok", "{not json")], "is not valid JSON"),
            (
                vec![tool("ok", r#"{"type":"object","minProperties":"x"}"#)],
                "not a valid JSON Schema",
            ),
            (vec![tool("twice", OBJECT), tool("twice", OBJECT)], "declared twice"),
        ];
        for (declared, expected) in cases {
            let err = format!("{:#}", tools(declared, Vec::new()).unwrap_err());
            assert!(err.contains(expected), "{err:?} should mention {expected:?}");
        }
        let mut no_description = tool("ok", OBJECT);
        no_description.description = " ".into();
        assert!(format!("{:#}", tools(vec![no_description], Vec::new()).unwrap_err()).contains("description"));
    }

    #[test]
    fn task_declarations_attach_to_their_tools_once() {
        let execution = |tool: &str, task_support| types::ToolExecution {
            tool: tool.to_string(),
            task_support,
        };
        let tools = tools(
            vec![tool("crawl", OBJECT), tool("ping", OBJECT)],
            vec![execution("crawl", types::TaskSupport::Required)],
        )
        .unwrap();
        assert_eq!(tools[0].task, Some(TaskSupport::Required));
        assert_eq!(tools[1].task, None);
        let unknown = tools_err(vec![execution("crawel", types::TaskSupport::Optional)]);
        assert!(
            unknown.contains("\"crawel\"") && unknown.contains("does not declare"),
            "{unknown}"
        );
        let twice = tools_err(vec![
            execution("crawl", types::TaskSupport::Optional),
            execution("crawl", types::TaskSupport::Forbidden),
        ]);
        assert!(twice.contains("twice"), "{twice}");
        let long = tools_err(vec![execution(&"x".repeat(100_000), types::TaskSupport::Optional)]);
        assert!(
            long.len() < 300,
            "the message quotes only the start: {} bytes",
            long.len()
        );
    }

    fn tools_err(executions: Vec<types::ToolExecution>) -> String {
        format!("{:#}", tools(vec![tool("crawl", OBJECT)], executions).unwrap_err())
    }

    #[test]
    fn violations_name_each_path() {
        let decl = tools(vec![tool("t", OBJECT)], Vec::new()).unwrap().remove(0);
        let found = violations(&decl.input, &serde_json::json!({"n": "seven"}));
        assert_eq!(found.len(), 1);
        assert!(found[0].starts_with("/n: "), "{found:?}");
        let found = violations(&decl.input, &serde_json::json!({}));
        assert!(
            found[0].starts_with("(root): ") && found[0].contains("\"n\""),
            "{found:?}"
        );
    }
}
