//! `warden inspect PLUGIN`: one component as Warden sees it.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Result;
use serde_json::Value;

use crate::check::describe;
use crate::plugin_at::{UNUSABLE, plugin_source};
use warden_plugins::loader::{LoadError, Loader};
use warden_runtime::Runtime;
use warden_runtime::component_shape;
use warden_runtime::grants::Grants;

/// `warden inspect`: what one component exports (the contract or plain
/// functions) with every schema, and each interface it imports next to what
/// its manifest grants for it. Exit 0, or 2 when it cannot be loaded.
pub async fn run(target: &Path) -> Result<std::process::ExitCode> {
    let (source, root) = plugin_source(target)?;
    let loader = Loader::new(Runtime::new()?, None, &[root], Default::default());
    let plugin = match loader.load(&source, &[]).await {
        Ok(plugin) => plugin,
        Err(error) => {
            crate::log_writer::print_report(&format!(
                "✗ {}\n",
                LoadError {
                    path: source.component,
                    error
                }
            ));
            return Ok(std::process::ExitCode::from(UNUSABLE));
        }
    };
    let mut out = String::new();
    describe(&mut out, &plugin);
    out.pop();
    if plugin.plain.is_none() {
        for decl in &plugin.tools {
            let _ = writeln!(out, "  schemas of `{}`", decl.tool.name);
            let _ = writeln!(
                out,
                "    input        {}",
                Value::Object((*decl.tool.input_schema).clone())
            );
            if let Some(output) = &decl.tool.output_schema {
                let _ = writeln!(out, "    output       {}", Value::Object((**output).clone()));
            }
        }
    }
    let shape = &plugin.shape;
    let _ = writeln!(
        out,
        "  instance pool  {} of {} core instances, {} of {} memories, {} of {} tables, largest table {} of {} elements",
        shape.core_instances,
        component_shape::MAX_CORE_INSTANCES,
        shape.memories,
        component_shape::MAX_MEMORIES,
        shape.tables,
        component_shape::MAX_TABLES,
        shape.largest_table,
        component_shape::MAX_TABLE_ELEMENTS
    );
    let _ = writeln!(
        out,
        "  imports (what the component asks for → what the manifest grants)"
    );
    let engine = plugin.component.engine();
    let grants = &plugin.prepared.settings.grants;
    for (name, _) in plugin.component.component_type().imports(engine) {
        let _ = writeln!(out, "    {name:<44} → {}", granted_for(name, grants));
    }
    suggested_manifest(&mut out, &plugin);
    // What the plugin declared is shown, and may quote a secret it was given.
    crate::log_writer::print_report(&plugin.redactor().redact(&out));
    Ok(std::process::ExitCode::SUCCESS)
}

/// What the manifest grants for an imported interface, in words.
fn granted_for(interface: &str, grants: &Grants) -> String {
    let package = interface.split('@').next().unwrap_or(interface);
    let none = |what: &str| format!("nothing: {what}");
    let listed = |items: Vec<String>, what: &str| {
        if items.is_empty() { none(what) } else { items.join(", ") }
    };
    match package {
        "wasi:filesystem/preopens" | "wasi:filesystem/types" => listed(
            grants
                .mounts
                .iter()
                .map(|m| format!("{} ({})", m.guest, m.access.as_str()))
                .collect(),
            "it sees no files ([filesystem])",
        ),
        "wasi:http/outgoing-handler" | "wasi:http/types" => listed(
            grants.http.rules.iter().map(|r| r.to_string()).collect(),
            "every HTTP request is refused ([network] allow)",
        ),
        "wasi:sockets/tcp" | "wasi:sockets/tcp-create-socket" => listed(
            grants.sockets.tcp.iter().map(|a| format!("tcp {a}")).collect(),
            "no TCP socket can be created ([network] tcp)",
        ),
        "wasi:sockets/udp" | "wasi:sockets/udp-create-socket" => listed(
            grants.sockets.udp.iter().map(|a| format!("udp {a}")).collect(),
            "no UDP socket can be created ([network] udp)",
        ),
        "wasi:sockets/ip-name-lookup" => {
            if grants.sockets.dns {
                "name lookups".into()
            } else {
                none("lookups are refused ([network] dns)")
            }
        }
        "wasi:cli/environment" => listed(
            grants.env.iter().map(|(name, value)| value.shown(name)).collect(),
            "no variables, no arguments ([environment])",
        ),
        "wasi:config/store" => listed(
            grants.config.iter().map(|(key, value)| value.shown(key)).collect(),
            "an empty store ([config])",
        ),
        "wasi:cli/stdin" => "a closed stdin".into(),
        "wasi:cli/stdout" | "wasi:cli/stderr" => "captured into Warden's log ([limits] log-output)".into(),
        "wasi:random/random" | "wasi:random/insecure" | "wasi:random/insecure-seed" => {
            "random bytes (no capability needed)".into()
        }
        other if other.starts_with("wasi:clocks/") => "the time (no capability needed)".into(),
        other if other.starts_with("wasi:io/") => "streams and polling (no capability needed)".into(),
        other if other.starts_with("wasi:cli/") => "terminal and exit interfaces (no capability needed)".into(),
        other if other.starts_with("wasi:sockets/") => "socket types (each use needs [network] tcp or udp)".into(),
        other if other.starts_with("warden:plugin/") => {
            "the warden:plugin contract (types; host: log, progress, cancelled)".into()
        }
        _ => "—".into(),
    }
}

/// An author's suggested capability manifest, carried in a pulled artifact:
/// shown beside the operator's for comparison, never applied. Its text is
/// the author's, so control characters are shown escaped, not sent to the
/// terminal.
fn suggested_manifest(out: &mut String, plugin: &warden_plugins::plugin::Plugin) {
    let Ok(Some(record)) = warden_origin::OriginRecord::read_beside(&plugin.component_path) else {
        return;
    };
    let Some(suggested) = record
        .manifest()
        .ok()
        .and_then(|m| m.suggested_manifest().map(str::to_string))
    else {
        return;
    };
    let operator = plugin
        .manifest_path
        .as_ref()
        .map_or("none".to_string(), |p| p.display().to_string());
    let _ = writeln!(
        out,
        "  suggested manifest (the author's, from {}; never applied — the operator's: {operator})",
        record.reference
    );
    for line in suggested.lines() {
        let shown: String = line
            .chars()
            .flat_map(|c| {
                if c.is_control() && c != '\t' {
                    c.escape_default().collect::<Vec<_>>()
                } else {
                    vec![c]
                }
            })
            .collect();
        let _ = writeln!(out, "    {shown}");
    }
}
