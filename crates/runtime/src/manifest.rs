//! The operator's capability manifest: `name.toml` beside `name.wasm`, or
//! `plugin.toml` inside a folder plugin.
//!
//! The manifest is the only source of grants; nothing a plugin or a model
//! says can add to it. Unknown keys are errors, so a typo never silently
//! leaves a limit at its default or a grant half-written.

use std::collections::BTreeMap;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde::Deserialize;

use crate::grants::{
    DEFAULT_MAX_RESPONSE, DEFAULT_MAX_ROUNDS, DEFAULT_MAX_TOKENS, Grants, HttpGrant, HttpRule, InteractionGrant, Mount,
    MountAccess, SocketGrant,
};
use crate::secrets::{self, Secret, Setting, Source};
use crate::task_policy::{self, TaskPolicy};
use crate::tool_overrides::{self, ToolOverride};

/// Per-plugin limits, with the defaults a bare component gets.
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    /// Linear memory plus table storage, in bytes.
    pub memory: u64,
    /// Wall-clock time one call may take.
    pub timeout: Duration,
    /// Calls of this plugin that may run at once.
    pub concurrency: u32,
    /// Bytes of content one call may return to the client.
    pub output: u64,
    /// Bytes of stdout and of stderr kept (and logged) per call.
    pub log_output: u64,
    /// Deterministic instruction budget per call, when set.
    pub fuel: Option<u64>,
    /// WASI resources (files, sockets, streams, HTTP requests and header
    /// collections, pollables) one call may hold at once. Each may pin an OS
    /// handle or host memory, so it is bounded like memory.
    pub handles: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            memory: 64 << 20,
            timeout: Duration::from_secs(30),
            concurrency: 16,
            output: 1 << 20,
            log_output: 64 << 10,
            fuel: None,
            handles: 256,
        }
    }
}

/// Fewer handles than this and a plugin cannot even print (its stdio
/// streams and preopens take handles too).
pub const MIN_HANDLES: u32 = 8;
/// Each handle may be an OS file descriptor: a plugin may not ask for more
/// than a sliver of the process's descriptors per call.
pub const MAX_HANDLES: u32 = 4096;

/// The longest `[limits] timeout`: a day, as for a task (`[tasks] timeout`).
/// Past about 292 billion years a deadline no longer fits an `Instant`.
pub const MAX_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(24 * 60 * 60);

/// A validated manifest.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Manifest {
    /// The plugin's name, when the manifest overrides the file stem.
    pub name: Option<String>,
    /// The sha256 the component's bytes must have, lowercase hex.
    pub sha256: Option<String>,
    pub limits: Limits,
    pub grants: Grants,
    /// `[tasks]`: which tools' calls become MCP tasks.
    pub tasks: TaskPolicy,
    /// `[tools.NAME]`: titles and descriptions served in place of the plugin's.
    pub tools: BTreeMap<String, ToolOverride>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    #[serde(default)]
    plugin: RawPlugin,
    #[serde(default)]
    limits: RawLimits,
    #[serde(default)]
    filesystem: BTreeMap<String, RawMount>,
    #[serde(default)]
    network: RawNetwork,
    #[serde(default)]
    environment: RawEnvironment,
    /// Settings a component reads through `wasi:config/store`: each written
    /// in clear, or `{ env = "VAR" }` / `{ file = "/path" }`.
    #[serde(default)]
    config: BTreeMap<String, toml::Value>,
    #[serde(default)]
    interaction: RawInteraction,
    #[serde(default)]
    tasks: task_policy::RawTasks,
    #[serde(default)]
    tools: BTreeMap<String, tool_overrides::RawToolOverride>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawInteraction {
    #[serde(default)]
    elicit: bool,
    #[serde(default)]
    sample: bool,
    #[serde(default)]
    roots: bool,
    #[serde(rename = "max-tokens")]
    max_tokens: Option<u32>,
    #[serde(rename = "max-rounds")]
    max_rounds: Option<u32>,
    #[serde(rename = "url-allow", default)]
    url_allow: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMount {
    mount: String,
    access: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawNetwork {
    #[serde(default)]
    allow: Vec<String>,
    #[serde(rename = "max-response")]
    max_response: Option<String>,
    #[serde(default)]
    tcp: Vec<String>,
    #[serde(default)]
    udp: Vec<String>,
    #[serde(default)]
    dns: bool,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawEnvironment {
    #[serde(default)]
    pass: Vec<String>,
    /// Each value written in clear, or `{ env = "VAR" }` / `{ file = "/path" }`.
    #[serde(default)]
    set: BTreeMap<String, toml::Value>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawPlugin {
    name: Option<String>,
    sha256: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawLimits {
    memory: Option<String>,
    timeout: Option<String>,
    concurrency: Option<u32>,
    output: Option<String>,
    #[serde(rename = "log-output")]
    log_output: Option<String>,
    fuel: Option<u64>,
    handles: Option<u32>,
}

/// The largest manifest read: grants and limits, not data.
pub const MAX_MANIFEST_BYTES: u64 = 1 << 20;

impl Manifest {
    /// Reads and validates the manifest at `path`. Errors name the file and
    /// the key.
    pub fn load(path: &Path) -> Result<Self> {
        let text = crate::bounded_file::read_text(path, MAX_MANIFEST_BYTES, "the manifest")?;
        Self::parse(&text).with_context(|| format!("invalid manifest {}", path.display()))
    }

    pub fn parse(text: &str) -> Result<Self> {
        let raw: RawManifest = toml::from_str(text).map_err(|e| {
            // toml's own Display draws a multi-line snippet; a log line wants one line.
            let at = e.span().map(|span| {
                let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
                format!("line {line}: ")
            });
            anyhow::anyhow!("{}{}", at.unwrap_or_default(), e.message().trim_end())
        })?;
        let defaults = Limits::default();
        let raw_timeout = raw.limits.timeout.clone().unwrap_or_default();
        let limits = Limits {
            memory: parse_optional(raw.limits.memory, "limits.memory", parse_size)?.unwrap_or(defaults.memory),
            timeout: parse_optional(raw.limits.timeout, "limits.timeout", parse_duration)?.unwrap_or(defaults.timeout),
            concurrency: match raw.limits.concurrency {
                Some(0) => bail!("`limits.concurrency` must be at least 1"),
                Some(n) => n,
                None => defaults.concurrency,
            },
            output: parse_optional(raw.limits.output, "limits.output", parse_size)?.unwrap_or(defaults.output),
            log_output: parse_optional(raw.limits.log_output, "limits.log-output", parse_size)?
                .unwrap_or(defaults.log_output),
            fuel: match raw.limits.fuel {
                Some(0) => bail!("`limits.fuel` must be at least 1"),
                fuel => fuel,
            },
            handles: match raw.limits.handles {
                Some(n) if !(MIN_HANDLES..=MAX_HANDLES).contains(&n) => {
                    bail!("`limits.handles` = {n} must be between {MIN_HANDLES} and {MAX_HANDLES}")
                }
                Some(n) => n,
                None => defaults.handles,
            },
        };
        if limits.timeout.is_zero() || limits.timeout > MAX_TIMEOUT {
            bail!(
                "`limits.timeout` = {:?} must be longer than zero and at most {}, like `timeout = \"30s\"`",
                raw_timeout,
                humantime::format_duration(MAX_TIMEOUT)
            );
        }
        let sha256 = match raw.plugin.sha256 {
            Some(pin) => {
                let pin = pin.trim().to_ascii_lowercase();
                if pin.len() != 64 || !pin.bytes().all(|b| b.is_ascii_hexdigit()) {
                    bail!("`plugin.sha256` must be 64 hexadecimal digits (the output of `sha256sum`)");
                }
                Some(pin)
            }
            None => None,
        };
        if let Some(name) = &raw.plugin.name {
            crate::naming::check_plugin_name(name).context("`plugin.name` is not a valid plugin name")?;
        }
        let grants = Grants {
            mounts: mounts(raw.filesystem)?,
            http: HttpGrant {
                rules: raw
                    .network
                    .allow
                    .iter()
                    .map(|entry| HttpRule::parse(entry).with_context(|| format!("`network.allow` entry {entry:?}")))
                    .collect::<Result<_>>()?,
                max_response: parse_optional(raw.network.max_response, "network.max-response", parse_size)?
                    .unwrap_or(DEFAULT_MAX_RESPONSE),
            },
            sockets: SocketGrant {
                tcp: socket_addrs(&raw.network.tcp, "network.tcp")?,
                udp: socket_addrs(&raw.network.udp, "network.udp")?,
                dns: raw.network.dns,
            },
            env: environment(raw.environment)?,
            config: config(raw.config)?,
            interaction: interaction(raw.interaction)?,
        };
        Ok(Self {
            name: raw.plugin.name,
            sha256,
            limits,
            grants,
            tasks: task_policy::parse(raw.tasks)?,
            tools: tool_overrides::parse(raw.tools)?,
        })
    }
}

fn mounts(raw: BTreeMap<String, RawMount>) -> Result<Vec<Mount>> {
    let mut mounts: Vec<Mount> = Vec::new();
    for (host, spec) in raw {
        let key = format!("filesystem.{host:?}");
        let host_path = PathBuf::from(&host);
        if !host_path.is_absolute() {
            bail!("`{key}`: the host path must be absolute");
        }
        let metadata = std::fs::metadata(&host_path).with_context(|| {
            format!("`{key}`: the host directory cannot be used (Warden never creates it; create it first)")
        })?;
        if !metadata.is_dir() {
            bail!("`{key}`: the host path is not a directory");
        }
        let guest = spec.mount;
        let guest_path = Path::new(&guest);
        let normal = guest_path
            .components()
            .skip(1)
            .all(|c| matches!(c, Component::Normal(_)));
        if !guest_path.is_absolute() || !normal || guest.contains('\\') {
            bail!("`{key}.mount` = {guest:?} must be an absolute guest path like \"/data\", without `..`");
        }
        if mounts.iter().any(|m| m.guest == guest) {
            bail!("`{key}.mount` = {guest:?} is mounted twice");
        }
        let access = match spec.access.as_deref() {
            None | Some("read-only") => MountAccess::ReadOnly,
            Some("read-write") => MountAccess::ReadWrite,
            Some(other) => bail!("`{key}.access` = {other:?} must be \"read-only\" or \"read-write\""),
        };
        mounts.push(Mount {
            host: host_path,
            guest,
            access,
        });
    }
    Ok(mounts)
}

/// `host:port` entries, resolved now: the sandbox checks exact addresses.
fn socket_addrs(entries: &[String], key: &str) -> Result<Vec<SocketAddr>> {
    let mut addrs = Vec::new();
    for entry in entries {
        let resolved: Vec<SocketAddr> = entry
            .to_socket_addrs()
            .with_context(|| format!("`{key}` entry {entry:?} must be `host:port` and resolve"))?
            .collect();
        addrs.extend(resolved);
    }
    Ok(addrs)
}

fn environment(raw: RawEnvironment) -> Result<Vec<(String, Setting)>> {
    let check = |name: &str, key: &str| -> Result<()> {
        if name.is_empty() || name.contains('=') || name.contains('\0') {
            bail!("`{key}`: {name:?} is not a variable name");
        }
        Ok(())
    };
    let mut env = Vec::new();
    for name in raw.pass {
        check(&name, "environment.pass")?;
        // Copied from Warden's environment: a secret, like `{ env = … }`.
        match std::env::var(&name) {
            Ok(value) => env.push((
                name.clone(),
                Setting::Secret {
                    value: Secret::new(value),
                    from: Source::Env(name),
                },
            )),
            Err(_) => tracing::warn!("`environment.pass` names {name}, which is not set in Warden's environment"),
        }
    }
    for (name, value) in raw.set {
        check(&name, "environment.set")?;
        let value = secrets::setting(&format!("environment.set.{name}"), value)?;
        env.retain(|(n, _)| *n != name);
        env.push((name, value));
    }
    Ok(env)
}

/// `[interaction]`: what a plugin may ask of the client, with its caps.
fn interaction(raw: RawInteraction) -> Result<InteractionGrant> {
    let max_tokens = raw.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
    if max_tokens == 0 {
        bail!("`interaction.max-tokens` must be at least 1 (leave `sample` out to grant no sampling)");
    }
    let max_rounds = raw.max_rounds.unwrap_or(DEFAULT_MAX_ROUNDS);
    if !(1..=MAX_ROUNDS).contains(&max_rounds) {
        bail!("`interaction.max-rounds` must be 1 to {MAX_ROUNDS}");
    }
    let mut url_allow = Vec::new();
    for entry in &raw.url_allow {
        let key = || format!("`interaction.url-allow` entry {entry:?}");
        let rule = HttpRule::parse(entry).with_context(key)?;
        if rule.is_plain_http_to_remote() {
            return Err(anyhow::anyhow!(
                "a URL elicitation may use http only to loopback; write `https://` or no scheme"
            ))
            .with_context(key);
        }
        url_allow.push(rule);
    }
    Ok(InteractionGrant {
        elicit: raw.elicit,
        sample: raw.sample,
        roots: raw.roots,
        max_tokens,
        max_rounds,
        url_allow,
    })
}

/// The most `input-required` rounds any manifest may allow one call.
const MAX_ROUNDS: u32 = 32;

/// `[config]`: text only, since that is all `wasi:config/store` returns.
fn config(raw: BTreeMap<String, toml::Value>) -> Result<Vec<(String, Setting)>> {
    raw.into_iter()
        .map(|(key, value)| Ok((key.clone(), secrets::setting(&format!("config.{key}"), value)?)))
        .collect()
}

fn parse_optional<T>(value: Option<String>, key: &str, parse: fn(&str) -> Result<T>) -> Result<Option<T>> {
    value
        .map(|v| parse(&v).with_context(|| format!("`{key}` = {v:?} is not valid")))
        .transpose()
}

/// Sizes such as `64 MiB`, `512KiB`, `1 GB` or a plain number of bytes.
pub fn parse_size(text: &str) -> Result<u64> {
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: u64 = number
        .parse()
        .context("expected a whole number followed by a unit such as `MiB`")?;
    let factor: u64 = match unit.trim() {
        "" | "B" => 1,
        "KB" | "kB" => 1_000,
        "KiB" => 1 << 10,
        "MB" => 1_000_000,
        "MiB" => 1 << 20,
        "GB" => 1_000_000_000,
        "GiB" => 1 << 30,
        other => bail!("unknown unit `{other}`; use B, KiB, MiB, GiB, KB, MB or GB"),
    };
    number.checked_mul(factor).context("size is too large")
}

/// Durations such as `30s`, `1500ms` or `2m`.
pub fn parse_duration(text: &str) -> Result<Duration> {
    humantime::parse_duration(text.trim()).map_err(|e| anyhow::anyhow!("{e}; write it like `30s` or `500ms`"))
}

/// Formats a size for messages and tables.
pub fn format_size(bytes: u64) -> String {
    const UNITS: [(&str, u64); 3] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)];
    for (unit, factor) in UNITS {
        if bytes >= factor && bytes.is_multiple_of(factor) {
            return format!("{} {unit}", bytes / factor);
        }
    }
    format!("{bytes} B")
}

#[cfg(test)]
mod tests;
