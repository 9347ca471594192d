//! Plain components: components written for no particular host. Each
//! function they export (at world level or in an exported interface) is
//! served as a tool, with a schema derived from its WIT types (`schema.rs`),
//! its WIT doc comment as description where the binary carries one
//! (`docs.rs`), its parameters described from that doc comment
//! (`param_docs.rs`), and JSON converted to component values and back
//! (`values.rs`).

pub mod budget;
pub mod docs;
pub mod param_docs;
pub mod schema;
pub mod values;
pub mod wit_shape;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::types::{ComponentFunc, ComponentItem, Type};
use wasmtime::component::{Component, ComponentExportIndex, Val};

use budget::{LoadBudget, OverBudget, Text};
use docs::Docs;
use schema::{Property, Refusal};
use warden_runtime::contract::{Structured, ToolResult, types};
use warden_runtime::naming;

/// An export a toolchain adds to every component it builds, which is not the
/// author's function: where it is, its parameters' names (which tell it
/// from an author's function of the same name at world level), and why it
/// is not a tool.
struct ToolchainHook {
    interface: Option<&'static str>,
    function: &'static str,
    /// `None`: any parameters.
    params: Option<&'static [&'static str]>,
    why: &'static str,
}

const TOOLCHAIN_HOOKS: [ToolchainHook; 2] = [
    ToolchainHook {
        interface: Some("exports"),
        function: "init",
        params: None,
        why: "componentize-py's initialisation hook (it runs once, when the component is built)",
    },
    ToolchainHook {
        interface: None,
        function: "init",
        params: Some(&["shim", "script", "entry-path", "disable-gc"]),
        why: "componentize-qjs's initialisation hook (it runs once, when the component is built)",
    },
];

impl ToolchainHook {
    fn matches(&self, interface: Option<&str>, function: &str, func: &ComponentFunc) -> bool {
        self.interface == interface
            && self.function == function
            && self
                .params
                .is_none_or(|names| func.params().map(|(name, _)| name).eq(names.iter().copied()))
    }
}

/// One exported function served as a tool.
pub struct PlainFunction {
    /// The tool name (see `tool_name`).
    pub tool: String,
    /// Where it is in the component, as WIT names it: `add`, `ns:pkg/iface@1.0.0#add`.
    pub export_name: String,
    pub export: ComponentExportIndex,
    pub params: Vec<(String, Type)>,
    /// The declared result type, if the function returns anything.
    pub result: Option<Type>,
    /// The tool as the plugin would have declared it under the contract.
    pub declared: types::Tool,
}

/// A function that is not served, and why.
#[derive(Debug, Clone)]
pub struct Skipped {
    pub export_name: String,
    pub reason: String,
}

/// What a plain component offers.
#[derive(Default)]
pub struct PlainExports {
    pub functions: Vec<PlainFunction>,
    pub skipped: Vec<Skipped>,
}

impl PlainExports {
    pub fn function(&self, tool: &str) -> Option<&PlainFunction> {
        self.functions.iter().find(|f| f.tool == tool)
    }
}

/// Reads the functions a component exports. `bytes` is the component's
/// binary, for the doc comments it may carry. Everything derived is written
/// under one `LoadBudget` for the component: a function over its own bounds
/// is skipped, and the component is refused when they all together pass the
/// component's budget (the error names the function and the bound).
pub fn discover(component: &Component, engine: &Engine, bytes: &[u8]) -> anyhow::Result<PlainExports> {
    let budget = LoadBudget::for_component(bytes.len());
    let docs = Docs::read(bytes);
    let mut found = PlainExports::default();
    for (name, item) in component.component_type().exports(engine) {
        match item.ty {
            ComponentItem::ComponentFunc(func) => {
                let index = component.get_export_index(None, name);
                consider(&mut found, &budget, &docs, None, name, &func, index)?;
            }
            ComponentItem::ComponentInstance(instance) => {
                if name.starts_with("wasi:") {
                    // `wasi:cli/run`, `wasi:http/incoming-handler`: entry
                    // points for other hosts, not tools.
                    skip(&mut found, &budget, name, "a WASI entry point, not a tool")?;
                    continue;
                }
                let instance_index = component.get_export_index(None, name);
                for (function, item) in instance.exports(engine) {
                    match item.ty {
                        ComponentItem::ComponentFunc(func) => {
                            let index = instance_index
                                .as_ref()
                                .and_then(|i| component.get_export_index(Some(i), function));
                            consider(&mut found, &budget, &docs, Some(name), function, &func, index)?;
                        }
                        ComponentItem::ComponentInstance(_) => {
                            let export_name = export_name(&budget, Some(name), function)?;
                            skip(
                                &mut found,
                                &budget,
                                &export_name,
                                "a nested instance; only functions of top-level exports are served",
                            )?;
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    found.functions.sort_by(|a, b| a.tool.cmp(&b.tool));
    tracing::debug!(
        "derived {} bytes and {} JSON values or types from a component of {} bytes (budget {} bytes)",
        budget.bytes(),
        budget.nodes(),
        bytes.len(),
        budget.max_bytes()
    );
    Ok(found)
}

/// `function`'s name in the component, written under the budget (a long
/// interface name is repeated for every function of the interface).
fn export_name(budget: &LoadBudget, interface: Option<&str>, function: &str) -> anyhow::Result<String> {
    let length = interface.map_or(0, |i| i.len() + 1) + function.len();
    budget
        .spend(length, 1)
        .map_err(|over| anyhow::anyhow!("function `{function}`: {over}"))?;
    Ok(match interface {
        Some(interface) => format!("{interface}#{function}"),
        None => function.to_string(),
    })
}

/// Records a function that is not served; its entry counts against the budget too.
fn skip(found: &mut PlainExports, budget: &LoadBudget, export_name: &str, reason: &str) -> anyhow::Result<()> {
    budget
        .spend(export_name.len() + reason.len(), 1)
        .map_err(|over| anyhow::anyhow!("function `{export_name}`: {over}"))?;
    found.skipped.push(Skipped {
        export_name: export_name.to_string(),
        reason: reason.to_string(),
    });
    Ok(())
}

fn consider(
    found: &mut PlainExports,
    budget: &LoadBudget,
    docs: &Docs,
    interface: Option<&str>,
    function: &str,
    func: &ComponentFunc,
    index: Option<ComponentExportIndex>,
) -> anyhow::Result<()> {
    let export_name = export_name(budget, interface, function)?;
    if let Some(hook) = TOOLCHAIN_HOOKS.iter().find(|h| h.matches(interface, function, func)) {
        return skip(found, budget, &export_name, hook.why);
    }
    if let Some(resource) = resource_of(function) {
        let why = format!("it belongs to resource `{resource}`, whose handles cannot cross as JSON");
        return skip(found, budget, &export_name, &why);
    }
    if func.async_() {
        return skip(
            found,
            budget,
            &export_name,
            "an async function; Warden calls synchronous exports only",
        );
    }
    let Some(index) = index else {
        return skip(found, budget, &export_name, "wasmtime cannot find its export index");
    };
    match declare(budget, interface, function, func, docs) {
        Ok((declared, params, result)) => found.functions.push(PlainFunction {
            tool: declared.name.clone(),
            export_name,
            export: index,
            params,
            result,
            declared,
        }),
        Err(Refusal::OverBudget(over)) if over.is_component_wide() => {
            anyhow::bail!("function `{export_name}`: {over}")
        }
        Err(refusal) => skip(found, budget, &export_name, &refusal.to_string())?,
    }
    Ok(())
}

type Declared = (types::Tool, Vec<(String, Type)>, Option<Type>);

/// The tool a function becomes, every text written under `budget`.
fn declare(
    budget: &LoadBudget,
    interface: Option<&str>,
    function: &str,
    func: &ComponentFunc,
    docs: &Docs,
) -> Result<Declared, Refusal> {
    // Names are kept twice (the tool's and the function's) and parameter names once.
    let name = tool_name(interface, function);
    budget.spend(2 * name.len(), 1)?;
    let mut params = Vec::with_capacity(func.params().len());
    for (param, ty) in func.params() {
        budget.spend(param.len(), 1)?;
        params.push((param.to_string(), ty));
    }
    let shapes = docs.shapes(interface, function);
    // A parameter's description from the function's doc comment, before its type's.
    let described = match docs.comment(interface, function) {
        Some(comment) => {
            let names: Vec<&str> = params.iter().map(|(name, _)| name.as_str()).collect();
            param_docs::describe(comment, &names, budget)?
        }
        None => Vec::new(),
    };
    let mut input = Text::new(budget, "input schema");
    schema::object(
        &mut input,
        || {
            params.iter().enumerate().map(|(n, (name, ty))| {
                let shape = shapes.as_ref().and_then(|s| s.param(name));
                Property {
                    description: described.get(n).and_then(Option::as_deref),
                    ..Property::new(name.as_str(), ty.clone(), shape)
                }
            })
        },
        Some("parameter"),
        None,
        0,
    )?;
    let results: Vec<Type> = func.results().collect();
    let result = match results.len() {
        0 => None,
        1 => Some(results[0].clone()),
        n => {
            return Err(Refusal::Unsupported(format!(
                "it returns {n} values; Warden serves functions returning one"
            )));
        }
    };
    // A top-level `result<T, E>` is success or a tool error: the output is `T`.
    let result_shape = shapes.as_ref().and_then(|s| s.result);
    let (output, output_shape, error_shape) = match &result {
        Some(Type::Result(outcome)) => {
            let (ok, err) = result_shape.and_then(|s| s.outcome()).unzip();
            (outcome.ok(), ok.flatten(), err.flatten())
        }
        other => (other.clone(), result_shape, None),
    };
    if let Some(Type::Result(outcome)) = &result
        && let Some(err) = outcome.err()
    {
        // Only to know the error can cross; the text is not kept (but counted).
        let mut error = Text::new(budget, "error type's schema");
        schema::schema(&err, error_shape, &mut error).map_err(|refusal| refusal.at("its error"))?;
    }
    let output_schema = output
        .map(|ty| {
            let mut output = Text::new(budget, "output schema");
            let result = Property {
                required: true,
                ..Property::new("result", ty.clone(), output_shape)
            };
            schema::object(&mut output, || std::iter::once(result.clone()), None, None, 0)
                .map_err(|refusal| refusal.at("its result"))?;
            Ok::<_, Refusal>(output.finish())
        })
        .transpose()?;
    let mut description = Text::new(budget, "description");
    match docs.function(interface, function) {
        Some(comment) => description.push(comment)?,
        None => {
            if !docs.signature(interface, function, &mut description)? {
                signature(function, &params, result.as_ref(), &mut description)?;
            }
        }
    }
    let declared = types::Tool {
        name,
        title: None,
        description: description.finish(),
        input_schema: input.finish(),
        output_schema,
        annotations: None,
    };
    Ok((declared, params, result))
}

/// `[method]counter.get` → `counter`.
fn resource_of(function: &str) -> Option<&str> {
    let rest = ["[constructor]", "[method]", "[static]"]
        .iter()
        .find_map(|prefix| function.strip_prefix(prefix))?;
    Some(rest.split('.').next().unwrap_or(rest))
}

/// Writes the WIT signature, e.g. `add(a: s64, b: s64) -> s64`.
pub fn signature(
    function: &str,
    params: &[(String, Type)],
    result: Option<&Type>,
    out: &mut Text,
) -> Result<(), OverBudget> {
    out.push(function)?;
    out.push("(")?;
    for (n, (name, ty)) in params.iter().enumerate() {
        out.push(if n > 0 { ", " } else { "" })?;
        out.push(name)?;
        out.push(": ")?;
        schema::wit_name(ty, out)?;
    }
    out.push(")")?;
    if let Some(result) = result {
        out.push(" -> ")?;
        schema::wit_name(result, out)?;
    }
    Ok(())
}

/// The tool name of a function: its WIT name at world level, and
/// `interface_function` for a function of an exported interface, where
/// `interface` is the interface's own name (`ns:pkg/files@1.0.0` → `files`).
/// WIT identifiers never contain `_`, so the two forms cannot collide. A name
/// past the 64-character limit keeps 55 characters and a hash of the rest.
pub fn tool_name(interface: Option<&str>, function: &str) -> String {
    let full = match interface {
        Some(interface) => {
            let short = interface.rsplit('/').next().unwrap_or(interface);
            let short = short.split('@').next().unwrap_or(short);
            format!("{short}_{function}")
        }
        None => function.to_string(),
    };
    if naming::check_item_name(&full).is_ok() {
        return full;
    }
    let digest = hex::encode(Sha256::digest(full.as_bytes()));
    let keep: String = full
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .take(55)
        .collect();
    format!("{keep}_{}", &digest[..8])
}

/// Converts validated JSON arguments into the function's parameters.
pub fn arguments(function: &PlainFunction, arguments: &Value) -> Result<Vec<Val>, String> {
    function
        .params
        .iter()
        .map(|(name, ty)| match arguments.get(name) {
            Some(value) => values::to_val(ty, value, name),
            None if matches!(ty, Type::Option(_)) => Ok(Val::Option(None)),
            None => Err(format!("{name}: missing")),
        })
        .collect()
}

/// What the function's return value becomes for the client.
pub fn reply(function: &PlainFunction, returned: Option<Val>) -> Result<ToolResult, types::Error> {
    let (ty, value) = match (&function.result, returned) {
        (Some(Type::Result(outcome)), Some(Val::Result(result))) => match result {
            Ok(payload) => (outcome.ok(), payload.map(|p| *p)),
            Err(payload) => {
                let text = match (outcome.err(), payload) {
                    (Some(ty), Some(payload)) => text_of(&values::to_json(&ty, &payload)),
                    _ => format!("`{}` returned an error", function.export_name),
                };
                return Err(types::Error::Failed(text));
            }
        },
        (ty, value) => (ty.clone(), value),
    };
    let (Some(ty), Some(value)) = (ty, value) else {
        return Ok(ToolResult {
            content: Vec::new(),
            structured: None,
            is_error: false,
        });
    };
    let json = values::to_json(&ty, &value);
    Ok(ToolResult {
        content: vec![types::Content::Text(text_of(&json))],
        structured: Some(Structured::Value(json!({ "result": json }))),
        is_error: false,
    })
}

/// A string as itself; anything else as JSON text.
fn text_of(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names_are_deterministic_and_valid() {
        assert_eq!(tool_name(None, "add"), "add");
        assert_eq!(tool_name(Some("acme:math/ops@1.2.0"), "add"), "ops_add");
        assert_eq!(tool_name(Some("local"), "add-all"), "local_add-all");
        let long = tool_name(Some("ns:p/a-very-long-interface-name-indeed"), &"f".repeat(60));
        assert_eq!(long.len(), 64);
        assert!(naming::check_item_name(&long).is_ok());
        assert_eq!(
            long,
            tool_name(Some("ns:p/a-very-long-interface-name-indeed"), &"f".repeat(60))
        );
        assert_eq!(resource_of("[method]counter.get"), Some("counter"));
        assert_eq!(resource_of("add"), None);
    }
}
