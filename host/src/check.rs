//! `warden check`: validate plugins and manifests without serving, and show
//! what each plugin is granted, and the annotations its tools are served with.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;
use warden_runtime::printable::one_line;

use anyhow::{Context, Result};
use rmcp::model::ToolAnnotations;

use crate::plugin_at::plugin_source;
use serde_json::Value;
use warden_origin::Trust;
use warden_plugins::annotations::{self, Reach};
use warden_plugins::catalog::Catalog;
use warden_plugins::loader::{LoadError, Loader};
use warden_plugins::plain::PlainExports;
use warden_plugins::plugin::Plugin;
use warden_runtime::Runtime;
use warden_runtime::grants::Grants;
use warden_runtime::manifest::{Limits, format_size};

/// Checks a plugins folder, or one plugin (a `.wasm` file or a folder
/// plugin). Prints a report; returns whether everything is valid.
pub async fn run(target: &Path, trust: Trust) -> Result<bool> {
    let single = target.is_file() || target.join("plugin.toml").is_file();
    // No compiled-code cache: checking must not write to the user's cache.
    let (plugins, mut errors) = if single {
        let (source, root) = plugin_source(target)?;
        let loader = Loader::new(Runtime::new()?, None, &[root], trust);
        match loader.load(&source, &[]).await {
            Ok(plugin) => (vec![plugin], Vec::new()),
            Err(error) => (
                Vec::new(),
                vec![LoadError {
                    path: source.component,
                    error,
                }],
            ),
        }
    } else {
        // Mounts are checked against the folder the plugins are served from.
        let root = target
            .canonicalize()
            .with_context(|| format!("cannot find {}", target.display()))?;
        let loader = Loader::new(Runtime::new()?, None, std::slice::from_ref(&root), trust);
        loader.load_dir(&root).await?
    };
    let (catalog, rejected) = Catalog::build(plugins.into_iter().map(Arc::new).collect());
    errors.extend(rejected);
    let mut report = String::new();
    for plugin in catalog.plugins() {
        let mut described = String::new();
        describe(&mut described, plugin);
        // What a plugin declared is shown, and may quote a secret it was given.
        report.push_str(&plugin.redactor().redact(&described));
    }
    for error in &errors {
        let _ = writeln!(report, "✗ {error}\n");
    }
    let _ = writeln!(
        report,
        "{} plugin(s) valid, {} invalid",
        catalog.plugins().len(),
        errors.len()
    );
    crate::log_writer::print_report(&report);
    Ok(errors.is_empty())
}

/// Where a pulled component came from and who signed it, as this load checked.
fn origin(plugin: &Plugin) -> String {
    match &plugin.origin {
        None => "placed by hand (not pulled)".to_string(),
        Some(origin) => format!(
            "{} ({}), {}",
            origin.reference,
            origin.manifest_digest,
            match &origin.signer {
                Some(signer) => format!("signed by `{signer}`"),
                None => "not signed by a trusted signer".to_string(),
            }
        ),
    }
}

pub fn describe(out: &mut String, plugin: &Plugin) {
    let policy = &plugin.prepared.settings;
    let names = |items: Vec<&str>| {
        if items.is_empty() {
            "none".to_string()
        } else {
            items.join(", ")
        }
    };
    let tools = names(plugin.tools.iter().map(|t| t.tool.name.as_ref()).collect());
    let resources = names(
        plugin
            .resources
            .iter()
            .map(|r| r.resource.uri.as_str())
            .chain(plugin.templates.iter().map(|t| t.template.uri_template.as_str()))
            .collect(),
    );
    let prompts = names(plugin.prompts.iter().map(|p| p.prompt.name.as_str()).collect());
    let manifest = plugin
        .manifest_path
        .as_ref()
        .map_or("none (no capabilities, default limits)".to_string(), |p| {
            p.display().to_string()
        });
    let _ = writeln!(out, "✓ {}  ({})", plugin.name, plugin.component_path.display());
    let rows = [
        ("manifest", manifest),
        ("sha256", plugin.sha256.clone()),
        ("origin", origin(plugin)),
        (
            "exports",
            match &plugin.plain {
                Some(plain) => format!(
                    "plain component: {} function(s) served as tools, {} skipped",
                    plain.functions.len(),
                    plain.skipped.len()
                ),
                None => plugin.exports.names().join(", "),
            },
        ),
        ("tools", tools),
        ("resources", resources),
        ("prompts", prompts),
        ("limits", limits(&policy.limits)),
    ];
    for (key, value) in rows.into_iter().chain(grants(&policy.grants)) {
        let _ = writeln!(out, "  {key:<12} {value}");
    }
    tool_annotations(out, plugin);
    if let Some(plain) = &plugin.plain {
        describe_functions(out, plugin, plain);
    }
    out.push('\n');
}

/// For a plain component: which function became which tool, with what
/// schemas, and which functions were skipped and why.
fn describe_functions(out: &mut String, plugin: &Plugin, plain: &PlainExports) {
    for function in &plain.functions {
        let _ = writeln!(out, "  function {} → tool `{}`", function.export_name, function.tool);
        let Some(decl) = plugin.tools.iter().find(|t| t.tool.name == function.tool) else {
            continue;
        };
        // A plain component's doc comment: the author's text, one line here.
        let _ = writeln!(
            out,
            "    description  {}",
            one_line(decl.tool.description.as_deref().unwrap_or(""))
        );
        let _ = writeln!(
            out,
            "    input        {}",
            Value::Object((*decl.tool.input_schema).clone())
        );
        if let Some(output) = &decl.tool.output_schema {
            let _ = writeln!(out, "    output       {}", Value::Object((**output).clone()));
        }
    }
    for skipped in &plain.skipped {
        let _ = writeln!(
            out,
            "  function {} skipped: {}",
            one_line(&skipped.export_name),
            one_line(&skipped.reason)
        );
    }
}

/// Each tool's annotations as served, what its author claimed, which
/// claims the grants corrected (see `annotations`), and whether its calls
/// may become tasks, decided by whom.
fn tool_annotations(out: &mut String, plugin: &Plugin) {
    let reach = Reach::of(&plugin.prepared.settings.grants);
    let json = |a: &ToolAnnotations| serde_json::to_string(a).unwrap_or_default();
    for decl in &plugin.tools {
        let served = decl.tool.annotations.clone().unwrap_or_default();
        let claimed = match &decl.claimed {
            None => "nothing (the plugin declares no annotations)".to_string(),
            Some(claimed) if *claimed == served => "the same".to_string(),
            Some(claimed) => json(claimed),
        };
        let _ = writeln!(out, "  {:<12} {}", "tool", decl.tool.name);
        if decl.text_by_manifest {
            let source = format!("(the manifest's [tools.{}])", decl.tool.name);
            if let Some(title) = &decl.tool.title {
                let _ = writeln!(out, "    {:<10} {} {source}", "title", one_line(title));
            }
            let description = one_line(decl.tool.description.as_deref().unwrap_or(""));
            let _ = writeln!(out, "    {:<10} {description} {source}", "described");
        }
        let _ = writeln!(out, "    {:<10} {}", "served", json(&served));
        let _ = writeln!(out, "    {:<10} {claimed}", "claimed");
        for correction in annotations::served(decl.claimed.as_ref(), &reach).1 {
            let _ = writeln!(out, "    {:<10} {correction}", "corrected");
        }
        let (support, source) = plugin.prepared.settings.tasks.decide(&decl.tool.name, decl.task);
        let _ = writeln!(out, "    {:<10} {} ({})", "task", support.as_str(), source.describe());
    }
}

fn limits(limits: &Limits) -> String {
    let mut text = format!(
        "memory {}, timeout {}, concurrency {}, output {}, log-output {}, handles {}",
        format_size(limits.memory),
        humantime::format_duration(limits.timeout),
        limits.concurrency,
        format_size(limits.output),
        format_size(limits.log_output),
        limits.handles
    );
    if let Some(fuel) = limits.fuel {
        text.push_str(&format!(", fuel {fuel}"));
    }
    text
}

fn grants(grants: &Grants) -> Vec<(&'static str, String)> {
    let none = || "none".to_string();
    let list = |items: Vec<String>| if items.is_empty() { none() } else { items.join(", ") };
    vec![
        (
            "filesystem",
            list(
                grants
                    .mounts
                    .iter()
                    .map(|m| format!("{} → {} ({})", m.host.display(), m.guest, m.access.as_str()))
                    .collect(),
            ),
        ),
        (
            "http",
            if grants.http.rules.is_empty() {
                none()
            } else {
                format!(
                    "{} (responses up to {})",
                    list(grants.http.rules.iter().map(|r| r.to_string()).collect()),
                    format_size(grants.http.max_response)
                )
            },
        ),
        (
            "sockets",
            list(
                grants
                    .sockets
                    .tcp
                    .iter()
                    .map(|a| format!("tcp {a}"))
                    .chain(grants.sockets.udp.iter().map(|a| format!("udp {a}")))
                    .chain(grants.sockets.dns.then(|| "dns lookups".to_string()))
                    .collect(),
            ),
        ),
        (
            "environment",
            // Names only, and where a secret came from: never a value.
            list(grants.env.iter().map(|(name, value)| value.shown(name)).collect()),
        ),
        (
            "config",
            // Keys only, like variables.
            list(grants.config.iter().map(|(key, value)| value.shown(key)).collect()),
        ),
        ("interaction", interaction(&grants.interaction)),
    ]
}

/// What the plugin may ask of the client, with the caps that apply.
fn interaction(grant: &warden_runtime::grants::InteractionGrant) -> String {
    let asks: Vec<String> = [
        grant.elicit.then(|| "elicitation".to_string()),
        grant
            .sample
            .then(|| format!("sampling (max-tokens {})", grant.max_tokens)),
        grant.roots.then(|| "roots".to_string()),
    ]
    .into_iter()
    .flatten()
    .collect();
    if asks.is_empty() {
        "none".into()
    } else {
        format!("{}; max-rounds {}", asks.join(", "), grant.max_rounds)
    }
}
