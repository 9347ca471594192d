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

impl Manifest {
    /// Reads and validates the manifest at `path`. Errors name the file and
    /// the key.
    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read manifest {}", path.display()))?;
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
        if limits.timeout.is_zero() {
            bail!("`limits.timeout` must be longer than zero");
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
mod tests {
    use super::*;

    #[test]
    fn an_empty_manifest_has_the_defaults() {
        assert_eq!(Manifest::parse("").unwrap(), Manifest::default());
    }

    #[test]
    fn reads_plugin_and_limits() {
        let m = Manifest::parse(
            r#"
            [plugin]
            name = "notes"
            sha256 = "AB00000000000000000000000000000000000000000000000000000000000000"
            [limits]
            memory = "32 MiB"
            timeout = "1500ms"
            concurrency = 2
            output = "10KiB"
            handles = 32
            "#,
        )
        .unwrap();
        assert_eq!(m.name.as_deref(), Some("notes"));
        assert_eq!(m.sha256.as_deref().unwrap()[..2], *"ab");
        assert_eq!(m.limits.memory, 32 << 20);
        assert_eq!(m.limits.timeout, Duration::from_millis(1500));
        assert_eq!(m.limits.concurrency, 2);
        assert_eq!(m.limits.output, 10 << 10);
        assert_eq!(m.limits.handles, 32);
        let err = format!("{:#}", Manifest::parse("[limits]\nhandles = 100000").unwrap_err());
        assert!(err.contains("`limits.handles` = 100000 must be between"), "{err}");
    }

    #[test]
    fn unknown_keys_are_errors_that_name_the_key() {
        let err = format!("{:#}", Manifest::parse("[limits]\nmemroy = \"1 MiB\"").unwrap_err());
        assert!(err.starts_with("line 2: unknown field `memroy`"), "{err}");
        assert!(!err.contains('\n'), "{err}");
        let err = format!("{:#}", Manifest::parse("[network]\nallowed = []").unwrap_err());
        assert!(err.contains("allowed"), "{err}");
        let err = format!("{:#}", Manifest::parse("[interaction]\nurl-hosts = []").unwrap_err());
        assert!(
            err.contains("unknown field `url-hosts`") && err.contains("`url-allow`"),
            "{err}"
        );
        let err = format!(
            "{:#}",
            Manifest::parse("[filesystem]\n\"/tmp\" = { mount = \"/t\", mode = \"rw\" }").unwrap_err()
        );
        assert!(err.contains("mode"), "{err}");
    }

    #[test]
    fn malformed_values_name_the_key() {
        let err = format!("{:#}", Manifest::parse("[limits]\nmemory = \"lots\"").unwrap_err());
        assert!(err.contains("limits.memory"), "{err}");
        let err = format!("{:#}", Manifest::parse("[limits]\ntimeout = \"soon\"").unwrap_err());
        assert!(err.contains("limits.timeout"), "{err}");
        let err = format!("{:#}", Manifest::parse("[plugin]\nsha256 = \"abc\"").unwrap_err());
        assert!(err.contains("plugin.sha256"), "{err}");
        assert!(Manifest::parse("[limits]\nconcurrency = 0").is_err());
    }

    #[test]
    fn reads_grants() {
        let dir = tempfile::tempdir().unwrap();
        let host = dir.path().display();
        // SAFETY: tests in this module do not read this variable concurrently.
        unsafe { std::env::set_var("WARDEN_MANIFEST_TEST_TOKEN", "s3cret") };
        let m = Manifest::parse(&format!(
            r#"
            [filesystem]
            "{host}" = {{ mount = "/data", access = "read-write" }}
            [network]
            allow = ["api.example.com", "127.0.0.1:8080"]
            max-response = "1 MiB"
            tcp = ["127.0.0.1:5432"]
            [environment]
            pass = ["WARDEN_MANIFEST_TEST_TOKEN", "WARDEN_SURELY_UNSET_VARIABLE"]
            set = {{ LANG = "C.UTF-8" }}
            "#
        ))
        .unwrap();
        let g = &m.grants;
        assert_eq!(g.mounts.len(), 1);
        assert_eq!(
            (g.mounts[0].guest.as_str(), g.mounts[0].access),
            ("/data", MountAccess::ReadWrite)
        );
        assert_eq!(g.http.rules.len(), 2);
        assert_eq!(g.http.max_response, 1 << 20);
        assert_eq!(g.sockets.tcp, vec!["127.0.0.1:5432".parse().unwrap()]);
        assert_eq!(
            g.env,
            vec![
                (
                    "WARDEN_MANIFEST_TEST_TOKEN".to_string(),
                    Setting::Secret {
                        value: Secret::new("s3cret"),
                        from: Source::Env("WARDEN_MANIFEST_TEST_TOKEN".into())
                    }
                ),
                ("LANG".to_string(), Setting::Plain("C.UTF-8".to_string()))
            ]
        );
    }

    #[test]
    fn config_and_set_values_come_from_the_manifest_the_environment_or_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let key_file = dir.path().join("api-key");
        std::fs::write(&key_file, "file-secret-91d2\n").unwrap();
        // SAFETY: no other test reads or writes this variable.
        unsafe { std::env::set_var("WARDEN_MANIFEST_TEST_API_KEY", "env-secret-7c3e") };
        let manifest = dir.path().join("notes.toml");
        std::fs::write(
            &manifest,
            format!(
                "[config]\napi-base = \"https://api.example.com\"\napi-key = {{ env = \"WARDEN_MANIFEST_TEST_API_KEY\" }}\n\
                 [environment]\nset = {{ LANG = \"C.UTF-8\", TOKEN = {{ file = \"{}\" }} }}\n",
                key_file.display()
            ),
        )
        .unwrap();
        let m = Manifest::load(&manifest).unwrap();
        assert_eq!(
            m.grants.config,
            vec![
                ("api-base".to_string(), Setting::Plain("https://api.example.com".into())),
                (
                    "api-key".to_string(),
                    Setting::Secret {
                        value: Secret::new("env-secret-7c3e"),
                        from: Source::Env("WARDEN_MANIFEST_TEST_API_KEY".into())
                    }
                ),
            ]
        );
        assert_eq!(
            m.grants.env,
            vec![
                ("LANG".to_string(), Setting::Plain("C.UTF-8".into())),
                (
                    "TOKEN".to_string(),
                    Setting::Secret {
                        value: Secret::new("file-secret-91d2"),
                        from: Source::File(key_file.clone())
                    }
                ),
            ]
        );
        let secrets: Vec<&str> = m.grants.secrets().map(Secret::expose).collect();
        assert_eq!(secrets, ["file-secret-91d2", "env-secret-7c3e"]);
        let debug = format!("{m:?}");
        assert!(
            !debug.contains("env-secret") && !debug.contains("file-secret"),
            "{debug}"
        );
        assert_eq!(
            m.grants
                .redactor()
                .unwrap()
                .redact("env-secret-7c3e and file-secret-91d2 and C.UTF-8"),
            "[redacted] and [redacted] and C.UTF-8"
        );

        // A missing variable or file refuses the manifest, naming it, the key and the source.
        std::fs::write(
            &manifest,
            "[config]\napi-key = { env = \"WARDEN_MANIFEST_TEST_SURELY_UNSET\" }\n",
        )
        .unwrap();
        let error = format!("{:#}", Manifest::load(&manifest).unwrap_err());
        assert!(
            error.starts_with(&format!(
                "invalid manifest {}: `config.api-key` = {{ env = \"WARDEN_MANIFEST_TEST_SURELY_UNSET\" }}: \
                 WARDEN_MANIFEST_TEST_SURELY_UNSET is not set in Warden's environment",
                manifest.display()
            )),
            "{error}"
        );
        std::fs::remove_file(&key_file).unwrap();
        std::fs::write(
            &manifest,
            format!(
                "[environment]\nset = {{ TOKEN = {{ file = \"{}\" }} }}\n",
                key_file.display()
            ),
        )
        .unwrap();
        let error = format!("{:#}", Manifest::load(&manifest).unwrap_err());
        assert!(
            error.starts_with(&format!(
                "invalid manifest {}: `environment.set.TOKEN` = {{ file = \"{1}\" }}: cannot read {1}: ",
                manifest.display(),
                key_file.display()
            )),
            "{error}"
        );
        let error = format!(
            "{:#}",
            Manifest::parse("[environment]\nset = { PORT = 8080 }").unwrap_err()
        );
        assert!(error.starts_with("`environment.set.PORT` must be a string"), "{error}");
    }

    #[test]
    fn bad_grants_are_load_errors_naming_the_key() {
        let dir = tempfile::tempdir().unwrap();
        let host = dir.path().display();
        let cases = [
            (
                r#"[filesystem]
"relative/dir" = { mount = "/x" }"#
                    .to_string(),
                "must be absolute",
            ),
            (
                r#"[filesystem]
"/surely/not/here/warden" = { mount = "/x" }"#
                    .to_string(),
                "never creates it",
            ),
            (
                format!("[filesystem]\n\"{host}\" = {{ mount = \"x\" }}"),
                "absolute guest path",
            ),
            (
                format!("[filesystem]\n\"{host}\" = {{ mount = \"/a/../b\" }}"),
                "without `..`",
            ),
            (
                format!("[filesystem]\n\"{host}\" = {{ mount = \"/a\", access = \"all\" }}"),
                "read-only",
            ),
            (
                "[network]\nallow = [\"https://x.example/path\"]".to_string(),
                "network.allow",
            ),
            ("[network]\ntcp = [\"nohost\"]".to_string(), "network.tcp"),
            (
                "[interaction]\nurl-allow = [\"https://x.example/login\"]".to_string(),
                "interaction.url-allow",
            ),
            (
                "[interaction]\nurl-allow = [\"http://x.example\"]".to_string(),
                "http only to loopback",
            ),
            ("[environment]\npass = [\"A=B\"]".to_string(), "environment.pass"),
        ];
        for (text, expected) in cases {
            let err = format!("{:#}", Manifest::parse(&text).unwrap_err());
            assert!(err.contains(expected), "{text}: {err}");
        }
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("64 MiB").unwrap(), 64 << 20);
        assert_eq!(parse_size("100").unwrap(), 100);
        assert_eq!(parse_size("1GB").unwrap(), 1_000_000_000);
        assert!(parse_size("12 parsecs").is_err());
        assert_eq!(format_size(64 << 20), "64 MiB");
        assert_eq!(format_size(1500), "1500 B");
    }
}
