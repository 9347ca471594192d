//! The large components: the Python and JavaScript SDKs' example plugins
//! (a CPython or StarlingMonkey runtime with its program), when their
//! interop scripts have built them. How long a cold and a warm start take
//! to list their tools, and what a trivial call costs in a fresh instance.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, ensure};
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};

use crate::stats::{Summary, human};
use crate::{Options, audit_records, connect_stdio, startup, warden_over};

/// One large component in a folder of its own (with its manifest), and a
/// compiled-code cache that holds its optimised code.
pub struct Large {
    pub label: String,
    name: String,
    folder: tempfile::TempDir,
    warm_cache: tempfile::TempDir,
    tools: usize,
}

/// Copies `component` and its manifest into a folder of their own, then
/// starts Warden on it once: that start counts the tools and, in the
/// background, compiles the optimised code into the warm cache, whose
/// entry is waited for.
pub async fn prepare(options: &Options, component: &Path) -> Result<Large> {
    let folder = tempfile::tempdir()?;
    let file = component.file_name().context("a component file")?;
    std::fs::copy(component, folder.path().join(file))?;
    let manifest = component.with_extension("toml");
    if manifest.exists() {
        std::fs::copy(&manifest, folder.path().join(file).with_extension("toml"))?;
    }
    let name = file.to_string_lossy().trim_end_matches(".wasm").to_string();
    let label = format!(
        "{} ({:.1} MB)",
        file.to_string_lossy(),
        std::fs::metadata(component)?.len() as f64 / 1e6
    );
    let warm_cache = tempfile::tempdir()?;
    let (client, _) = connect_stdio(warden_over(options, folder.path(), warm_cache.path())).await?;
    let tools = client.list_all_tools().await?.len();
    let deadline = Instant::now() + Duration::from_secs(600);
    let cached = || -> Result<bool> {
        let entries = std::fs::read_dir(warm_cache.path())?;
        Ok(entries
            .flatten()
            .any(|e| e.file_name().to_string_lossy().ends_with(".cwasm")))
    };
    while !cached()? {
        ensure!(
            Instant::now() < deadline,
            "no optimised code of {label} was cached within 10 minutes"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    client.cancel().await.ok();
    Ok(Large {
        label,
        name,
        folder,
        warm_cache,
        tools,
    })
}

impl Large {
    /// Cold and warm starts to the first `tools/list`.
    pub async fn startup(&self, options: &Options, repeats: usize) -> Result<(Summary, Summary)> {
        let (mut cold, mut warm) = (Vec::new(), Vec::new());
        for _ in 0..repeats {
            eprintln!("startup {}", self.label);
            let cold_cache = tempfile::tempdir()?;
            cold.push(startup(warden_over(options, self.folder.path(), cold_cache.path()), self.tools).await?);
        }
        for _ in 0..repeats {
            warm.push(
                startup(
                    warden_over(options, self.folder.path(), self.warm_cache.path()),
                    self.tools,
                )
                .await?,
            );
        }
        Ok((Summary::of(cold), Summary::of(warm)))
    }

    /// `calls` calls of the component's trivial tool on its optimised code
    /// (a warm start), each in a fresh instance: the sandbox's share of
    /// each (setup + instantiation + the guest's work) from the audit log,
    /// and the parts. `None` for a component this bench has no call for.
    /// `pause` between a call's answer and the next call: zero, back to back
    /// (the next call often arrives while its sandbox is still being made
    /// ahead), or as an agent's calls come, with a model's turn between them.
    pub async fn trivial_call(&self, options: &Options, calls: usize, pause: Duration) -> Result<Option<TrivialCall>> {
        let Some((tool, arguments, expected)) = trivial_tool(&self.name) else {
            return Ok(None);
        };
        let audit = tempfile::NamedTempFile::new()?;
        let mut command = warden_over(options, self.folder.path(), self.warm_cache.path());
        command.arg("--audit-log").arg(audit.path());
        let (client, _) = connect_stdio(command).await?;
        let warmup = (calls / 10).max(10);
        let mut round_trips = Vec::new();
        for n in 0..warmup + calls {
            let started = Instant::now();
            let result = client
                .call_tool(
                    CallToolRequestParams::new(tool).with_arguments(arguments.as_object().cloned().unwrap_or_default()),
                )
                .await?;
            if n >= warmup {
                round_trips.push(started.elapsed());
            }
            let text = result.content.first().and_then(|c| c.as_text()).map(|t| t.text.clone());
            ensure!(
                result.is_error != Some(true) && text.as_deref().is_some_and(|t| t.contains(expected)),
                "{}'s `{tool}` answered {result:?}",
                self.label
            );
            if !pause.is_zero() {
                tokio::time::sleep(pause).await;
            }
        }
        client.cancel().await.ok();
        let records = audit_records(audit.path(), warmup, calls)?;
        let micros = |record: &Value, key: &str| -> Result<u64> {
            record["timing"][key]
                .as_u64()
                .with_context(|| format!("no timing.{key} in {record}"))
        };
        let mut parts = [Vec::new(), Vec::new(), Vec::new()];
        let (mut sandbox, mut ahead) = (Vec::new(), Vec::new());
        for record in &records {
            let [setup, instantiate, guest] = ["setup_us", "instantiate_us", "guest_us"].map(|k| micros(record, k));
            let (setup, instantiate, guest) = (setup?, instantiate?, guest?);
            for (part, us) in parts.iter_mut().zip([setup, instantiate, guest]) {
                part.push(Duration::from_micros(us));
            }
            // On the call's path: instantiation counts only when the call did it.
            sandbox.push(Duration::from_micros(setup + instantiate + guest));
            if let Some(us) = record["timing"]["instantiated_ahead_us"].as_u64() {
                ahead.push(Duration::from_micros(us));
            }
        }
        let [setup, instantiate, guest] = parts.map(Summary::of);
        Ok(Some(TrivialCall {
            label: self.label.clone(),
            tool: tool.to_string(),
            pause,
            sandbox: Summary::of(sandbox),
            setup,
            instantiate,
            guest,
            ahead: Summary::of_any(ahead),
            round_trip: Summary::of(round_trips),
        }))
    }
}

/// A trivial call in a fresh instance of a large component.
pub struct TrivialCall {
    pub label: String,
    pub tool: String,
    /// Between an answer and the next call.
    pub pause: Duration,
    /// setup + instantiate + guest, per call
    pub sandbox: Summary,
    pub setup: Summary,
    pub instantiate: Summary,
    pub guest: Summary,
    /// The calls served by a sandbox instantiated ahead: that instantiation.
    pub ahead: Summary,
    /// From the client's request to its answer (over stdio).
    pub round_trip: Summary,
}

impl TrivialCall {
    pub fn to_json(&self) -> Value {
        json!({
            "component": self.label,
            "tool": self.tool,
            "pause_ms": self.pause.as_millis() as u64,
            "sandbox": self.sandbox.to_json(),
            "setup": self.setup.to_json(),
            "instantiate": self.instantiate.to_json(),
            "guest": self.guest.to_json(),
            "instantiated_ahead": self.ahead.to_json(),
            "round_trip": self.round_trip.to_json(),
        })
    }

    /// How the calls came: "back to back" or "10 ms apart".
    pub fn pace(&self) -> String {
        if self.pause.is_zero() {
            "back to back".into()
        } else {
            format!("{} ms apart", self.pause.as_millis())
        }
    }

    /// The report's table of these calls.
    pub fn table(calls: &[TrivialCall]) -> String {
        let both = |s: &Summary| format!("{} / {}", human(s.p50), human(s.p99));
        let mut out = String::from(
            "\n### A trivial call in a fresh instance of a large component (p50 / p99, from the audit log)\n\n\
             | component | tool | calls come | store + sandbox | instantiate (on the call's path) | guest | the three | calls | \
             served by a sandbox instantiated ahead (that instantiation) | round trip at the client |\n|---|---|---|---|---|---|---|---|---|---|\n",
        );
        for call in calls {
            out += &format!(
                "| {} | `{}` | {} | {} | {} | {} | {} | {} | {} ({}) | {} |\n",
                call.label,
                call.tool,
                call.pace(),
                both(&call.setup),
                both(&call.instantiate),
                both(&call.guest),
                both(&call.sandbox),
                call.sandbox.count,
                call.ahead.count,
                both(&call.ahead),
                both(&call.round_trip)
            );
        }
        out
    }
}

/// The trivial tool of each example this bench knows: its name, its
/// arguments and a piece of its answer.
fn trivial_tool(component: &str) -> Option<(&'static str, Value, &'static str)> {
    match component {
        // plugins-py/csvtools
        "csvtools" => Some(("csv_to_markdown", json!({"csv": "a,b\n1,2\n"}), "| 1 | 2 |")),
        // plugins-js/json-tools
        "json-tools" => Some(("json_format", json!({"text": "{\"a\":1}", "indent": 0}), "{\"a\":1}")),
        _ => None,
    }
}
