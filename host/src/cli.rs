//! The command line.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(
    name = "warden",
    version,
    about = "An MCP server whose tools live in sandboxed WebAssembly components"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Serve the plugins in a folder to an MCP client over stdio.
    // Boxed: its many HTTP flags make it far larger than the others.
    Serve(Box<ServeArgs>),
    /// Validate plugins and manifests without serving, and print what each
    /// plugin is granted. Exits non-zero when anything is invalid.
    Check(CheckArgs),
    /// Develop a plugin: build its project (Rust, Python or JavaScript),
    /// serve it over stdio, and rebuild and hot-reload it whenever its
    /// sources change.
    Dev(DevArgs),
    /// Write the doc comments of the WIT a plain component was built from
    /// into the component (its `package-docs` section, and
    /// `warden:package-docs` for interfaces of named packages), so its tools
    /// are described by them. Today's toolchains do not do this themselves.
    EmbedDocs(EmbedDocsArgs),
    /// Run one tool of a plugin without a client, under its manifest, and
    /// print the MCP result as JSON. Exits 0 on success, 1 on an `isError`
    /// result, 2 when the plugin cannot be loaded or the arguments are malformed.
    Call(CallArgs),
    /// Show what a component exports (the contract or plain functions) with
    /// every schema, and what it imports next to what its manifest grants.
    Inspect(InspectArgs),
    /// Create a plugin project in Rust, Python or JavaScript that builds
    /// from the public registries alone.
    New(NewArgs),
    /// Build a plugin project into `build/NAME.wasm` (and its manifest,
    /// `build/NAME.toml`), and print the component's path and size.
    Build(BuildArgs),
    /// Install a component from an OCI registry into the plugins folder,
    /// checking its digests and its signature against the trust policy.
    /// Writes `NAME.wasm` and `NAME.origin.json`, or nothing at all.
    Pull(PullArgs),
    /// Push a component to an OCI registry in the CNCF Wasm OCI layout, and
    /// print its manifest digest.
    Publish(PublishArgs),
}

#[derive(Args, Debug, Clone, Default)]
pub struct TrustArgs {
    /// The trust policy: which signers are trusted for which repositories
    /// (README: "Installing tools from a registry").
    #[arg(long, value_name = "FILE")]
    pub trust: Option<PathBuf>,

    /// Serve only components signed by a signer the trust policy names for
    /// their repository (and components it lists under `local`).
    #[arg(long, requires = "trust")]
    pub require_signature: bool,
}

impl TrustArgs {
    pub fn load(&self) -> anyhow::Result<warden_origin::Trust> {
        let policy = self
            .trust
            .as_deref()
            .map(warden_origin::TrustPolicy::load)
            .transpose()?;
        warden_origin::Trust::new(policy, self.require_signature)
    }
}

#[derive(Args, Debug, Clone)]
pub struct RegistryArgs {
    /// A Docker `config.json` with the registries' credentials (`auths`)
    /// [default: $REGISTRY_AUTH_FILE, $DOCKER_CONFIG/config.json, ~/.docker/config.json].
    #[arg(long, value_name = "FILE")]
    pub registry_config: Option<PathBuf>,

    /// Speak plain HTTP to this registry (`HOST:PORT`; for a registry on
    /// loopback). Repeatable. Every other registry is HTTPS only.
    #[arg(long, value_name = "HOST:PORT")]
    pub insecure_registry: Vec<String>,

    /// The largest component pulled, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = 256 * 1024 * 1024)]
    pub max_size: u64,

    /// Seconds for each request to the registry (connect, send, answer).
    #[arg(long, value_name = "SECS", default_value_t = 30)]
    pub timeout: u64,
}

#[derive(Args, Debug, Clone)]
pub struct PullArgs {
    /// `oci://REGISTRY/REPOSITORY:TAG` or `oci://REGISTRY/REPOSITORY@sha256:DIGEST`.
    #[arg(value_name = "REFERENCE", required_unless_present = "from", conflicts_with = "from")]
    pub reference: Option<String>,

    /// Pull every component a sources file lists, recording each tag's
    /// digest in the lock beside it (`FILE` with the extension `.lock`).
    #[arg(long, value_name = "FILE")]
    pub from: Option<PathBuf>,

    /// The plugins folder to install into.
    #[arg(long, value_name = "DIR", default_value = "plugins")]
    pub plugins: PathBuf,

    /// The plugin's name (default: the repository's last segment).
    #[arg(long, value_name = "NAME", conflicts_with = "from")]
    pub name: Option<String>,

    /// Accept a tag that now points to another digest than when it was
    /// last pulled (or locked).
    #[arg(long, conflicts_with = "locked")]
    pub update: bool,

    /// With --from: pull exactly the digests the lock records, without
    /// asking the registry what the tags point to now, and never write the
    /// lock (for deployments whose lock is committed, e.g. a ConfigMap).
    #[arg(long, requires = "from")]
    pub locked: bool,

    #[command(flatten)]
    pub trust: TrustArgs,

    #[command(flatten)]
    pub registry: RegistryArgs,
}

#[derive(Args, Debug, Clone)]
pub struct PublishArgs {
    /// The component, e.g. `build/NAME.wasm`.
    #[arg(value_name = "FILE")]
    pub component: PathBuf,

    /// Where to push it: `oci://REGISTRY/REPOSITORY:TAG`.
    #[arg(value_name = "REFERENCE")]
    pub reference: String,

    /// A capability manifest to suggest to operators (shown by `warden
    /// inspect` beside theirs; never applied).
    #[arg(long, value_name = "FILE")]
    pub suggest_manifest: Option<PathBuf>,

    #[command(flatten)]
    pub registry: RegistryArgs,
}

#[derive(Args, Debug, Clone)]
pub struct CallArgs {
    /// A `.wasm` component (with its `name.toml` beside it, if any) or a folder plugin.
    #[arg(value_name = "PLUGIN")]
    pub plugin: PathBuf,

    /// The tool to call.
    #[arg(value_name = "TOOL")]
    pub tool: String,

    /// The arguments, a JSON object (default `{}`).
    #[arg(value_name = "JSON")]
    pub arguments: Option<String>,

    #[command(flatten)]
    pub cache: CacheArgs,
}

#[derive(Args, Debug, Clone)]
pub struct NewArgs {
    /// The plugin's name, and the project folder's.
    #[arg(value_name = "NAME")]
    pub name: String,

    /// The language to write it in.
    #[arg(long, value_name = "LANG")]
    pub lang: crate::project::Language,

    /// Where to create the project folder (default: the current folder).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

#[derive(Args, Debug, Clone)]
pub struct BuildArgs {
    /// The project folder.
    #[arg(value_name = "PATH", default_value = ".")]
    pub path: PathBuf,

    /// Cargo's target folder, for a Rust project (default: cargo's own).
    #[arg(long, value_name = "DIR")]
    pub target_dir: Option<PathBuf>,
}

#[derive(Args, Debug, Clone)]
pub struct InspectArgs {
    /// A `.wasm` component (with its `name.toml` beside it, if any) or a folder plugin.
    #[arg(value_name = "PLUGIN")]
    pub plugin: PathBuf,
}

#[derive(Args, Debug, Clone)]
pub struct EmbedDocsArgs {
    /// The component.
    #[arg(value_name = "COMPONENT")]
    pub component: PathBuf,

    /// The WIT folder it was built from.
    #[arg(long, value_name = "DIR")]
    pub wit: PathBuf,

    /// The world it was built for, when the folder has several.
    #[arg(long, value_name = "WORLD")]
    pub world: Option<String>,

    /// Where to write the documented component (default: over COMPONENT).
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Args, Debug, Clone)]
pub struct CheckArgs {
    /// The plugins folder to check.
    #[arg(long, value_name = "DIR", default_value = "plugins", conflicts_with = "plugin")]
    pub plugins: PathBuf,

    /// Check only this plugin: a `.wasm` file or a folder plugin.
    #[arg(value_name = "FILE")]
    pub plugin: Option<PathBuf>,

    #[command(flatten)]
    pub trust: TrustArgs,
}

#[derive(Args, Debug, Clone)]
pub struct ServeArgs {
    /// The plugins folder: `name.wasm` (+ optional `name.toml`) files and
    /// `name/plugin.toml` folders.
    #[arg(long, value_name = "DIR", default_value = "plugins")]
    pub plugins: PathBuf,

    /// Append one JSON line per plugin invocation to this file (reopened
    /// at its path on SIGHUP, or when it was moved or removed).
    #[arg(long, value_name = "FILE")]
    pub audit_log: Option<PathBuf>,

    /// Refuse every plugin invocation whose audit record cannot be written
    /// (a full disk): a record that it starts is written first. By default
    /// calls are served and the lost records counted.
    #[arg(long, requires = "audit_log")]
    pub audit_required: bool,

    /// Do not watch the plugins folder: serve what it holds at start.
    #[arg(long)]
    pub no_watch: bool,

    /// Find changes in the plugins folder by polling it every 2 s instead of
    /// by file-system events: for a file system whose changes no watcher hears
    /// of that Warden does not recognise (NFS, CIFS, SMB and 9P it does).
    #[arg(long, conflicts_with = "no_watch")]
    pub poll: bool,

    #[command(flatten)]
    pub cache: CacheArgs,

    #[command(flatten)]
    pub trust: TrustArgs,

    /// Log more (repeat for even more). `RUST_LOG` overrides this.
    #[arg(short, long, action = clap::ArgAction::Count)]
    pub verbose: u8,

    /// Serve Streamable HTTP at this address (e.g. 127.0.0.1:8080), endpoint `/mcp`,
    /// instead of stdio.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<std::net::SocketAddr>,

    /// With --http, serve stdio as well (one catalog, one audit log).
    #[arg(long, requires = "http")]
    pub stdio: bool,

    /// Serve Prometheus metrics at http://ADDR/metrics, on a listener of its
    /// own (with stdio or --http). It has no authentication: keep it on
    /// loopback or a network only the scraper reaches.
    #[arg(long, value_name = "ADDR")]
    pub metrics: Option<std::net::SocketAddr>,

    /// HTTP: read the bearer token clients must present from this file.
    #[arg(long, value_name = "FILE", requires = "http", conflicts_with = "token_env")]
    pub token_file: Option<PathBuf>,

    /// HTTP: read the bearer token from this environment variable.
    #[arg(long, value_name = "NAME", requires = "http")]
    pub token_env: Option<String>,

    /// HTTP, OAuth mode: accept access tokens (JWTs) from this authorization
    /// server, given as its issuer identifier; its metadata is found by RFC
    /// 8414 or OpenID discovery, and its keys from its `jwks_uri`.
    #[arg(long, value_name = "URL", requires_all = ["http", "resource", "access"], conflicts_with_all = ["token_file", "token_env"])]
    pub oauth_issuer: Option<String>,

    /// HTTP, OAuth mode: Warden's canonical resource URI (such as
    /// https://warden.example.com/mcp), the audience tokens must be issued
    /// for (RFC 8707).
    #[arg(long, value_name = "URL", requires = "oauth_issuer")]
    pub resource: Option<String>,

    /// HTTP, OAuth mode: the access policy (TOML) mapping token scopes or
    /// claims to the plugins, tools, resources and prompts each principal
    /// may use (see docs/security.md).
    #[arg(long, value_name = "FILE", requires = "oauth_issuer")]
    pub access: Option<PathBuf>,

    /// HTTP, OAuth mode: the signature algorithms accepted (comma-separated).
    #[arg(long, value_name = "LIST", default_value = warden_transport::auth::oauth::DEFAULT_ALGORITHMS, requires = "oauth_issuer")]
    pub oauth_algorithms: String,

    /// HTTP: allow listening on a non-loopback address without a token. Only for
    /// deployments where something in front of Warden authenticates every client.
    #[arg(long, requires = "http")]
    pub insecure_no_auth: bool,

    /// HTTP: a `Host` to accept besides localhost, 127.0.0.1 and ::1 (repeatable).
    #[arg(long = "allowed-host", value_name = "HOST", requires = "http")]
    pub allowed_hosts: Vec<String>,

    /// HTTP: a browser `Origin` to accept besides loopback ones, e.g.
    /// `https://app.example.com:443` (repeatable).
    #[arg(long = "allowed-origin", value_name = "ORIGIN", requires = "http")]
    pub allowed_origins: Vec<String>,

    /// HTTP: the largest request body accepted.
    #[arg(long, value_name = "SIZE", default_value = "4 MiB", value_parser = parse_size)]
    pub max_body: u64,

    /// HTTP: requests served at once; more get 503.
    #[arg(long, value_name = "N", default_value_t = 256)]
    pub max_concurrent_requests: usize,

    /// HTTP: how often idle SSE streams get a keep-alive.
    #[arg(long, value_name = "DURATION", default_value = "15s", value_parser = parse_duration)]
    pub sse_keep_alive: std::time::Duration,

    /// HTTP: connections open at once. Past it the oldest connection with no
    /// request in progress is closed to make room; when every one has a
    /// request in progress, new ones are answered 503 and closed.
    #[arg(long, value_name = "N", default_value_t = 512)]
    pub max_connections: usize,

    /// HTTP: connections one client address may hold; past it, that
    /// address's own oldest idle connection is closed to make room (or the
    /// new one refused), never another client's. 0 (the default): no cap of
    /// its own — behind a proxy, every client has the proxy's address.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub max_connections_per_peer: usize,

    /// HTTP: how long a connection with no request in progress (new, or idle
    /// between requests) may take to send a complete request head.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_duration)]
    pub header_timeout: std::time::Duration,

    /// HTTP: a connection whose client reads nothing of what it is sent for
    /// this long is closed.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_duration)]
    pub write_timeout: std::time::Duration,

    /// HTTP: how long a request body may take to arrive; a late one gets 408.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_duration)]
    pub body_timeout: std::time::Duration,

    /// HTTP: live 2025-11-25 sessions at once; more `initialize` requests get 503.
    #[arg(long, value_name = "N", default_value_t = 256)]
    pub max_sessions: usize,

    /// HTTP: a 2025-11-25 session that sends no request for this long is ended.
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = parse_duration)]
    pub session_idle_timeout: std::time::Duration,

    /// Resource subscriptions one client may hold (`resources/subscribe` per
    /// session, `resourceSubscriptions` per `subscriptions/listen` stream).
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub max_subscriptions: usize,

    /// HTTP: let `GET /readyz` tell anyone how many plugins and tools are
    /// loaded (by default only authenticated callers learn it).
    #[arg(long, requires = "http")]
    pub public_readyz: bool,

    /// On SIGTERM or Ctrl-C, how long calls in flight may take to finish.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_duration)]
    pub shutdown_grace: std::time::Duration,

    /// A file holding the key (at least 32 bytes, 10 different, readable by
    /// Warden's user only) that signs the `requestState` of 2026-07-28
    /// input-required results. Give every replica behind one load balancer the
    /// same file, so any of them continues a call [default: a key of this
    /// process's own].
    #[arg(long, value_name = "FILE")]
    pub state_key_file: Option<PathBuf>,

    /// HTTP: this replica's name (a-z, 0-9, '-'; up to 32). Every 2025-11-25
    /// session id it makes starts with `NAME.`, so a proxy can send a session
    /// to the replica that holds it (README: "Replicas behind nginx").
    #[arg(long, value_name = "NAME", requires = "http", value_parser = warden_transport::replica::parse_replica_id)]
    pub replica_id: Option<String>,

    /// Where MCP task records live: `redis://HOST:PORT[/DB]` (or `rediss://`)
    /// for a store every replica shares, so any of them answers `tasks/get`
    /// and `tasks/cancel`, and an interactive `requestState` is accepted once
    /// across all of them [default: this process's memory, bounded].
    /// Its password, if the URL carries one, is never printed.
    #[arg(long, value_name = "URL")]
    pub task_store: Option<warden_runtime::secrets::SecretAddress>,
}

#[derive(Args, Debug, Clone)]
pub struct CacheArgs {
    /// Where compiled plugins are cached
    /// [default: $XDG_CACHE_HOME/warden, or ~/.cache/warden].
    #[arg(long, value_name = "DIR", conflicts_with = "no_cache")]
    pub cache_dir: Option<PathBuf>,

    /// Do not cache compiled plugins: compile at every load, write nothing.
    #[arg(long)]
    pub no_cache: bool,
}

#[derive(Args, Debug, Clone)]
pub struct DevArgs {
    /// The plugin's project folder: a Rust crate (crate-type `cdylib`), or a
    /// Python or JavaScript project as `warden new` creates them.
    #[arg(value_name = "PATH")]
    pub path: PathBuf,

    /// Serve the plugins in this folder as well.
    #[arg(long, value_name = "DIR")]
    pub plugins: Option<PathBuf>,

    /// Cargo's target folder for a Rust plugin's build [default: cargo's own].
    #[arg(long, value_name = "DIR")]
    pub target_dir: Option<PathBuf>,

    /// Append one JSON line per tool call to this file.
    #[arg(long, value_name = "FILE")]
    pub audit_log: Option<PathBuf>,

    #[command(flatten)]
    pub cache: CacheArgs,

    /// Log more (repeat for even more). `RUST_LOG` overrides this.
    #[arg(short, long, action = clap::ArgAction::Count)]
    pub verbose: u8,
}

fn parse_size(text: &str) -> Result<u64, String> {
    warden_runtime::manifest::parse_size(text).map_err(|e| format!("{e:#}"))
}

fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    warden_runtime::manifest::parse_duration(text).map_err(|e| format!("{e:#}"))
}

impl Cli {
    pub fn verbosity(&self) -> u8 {
        match &self.command {
            Command::Serve(args) => args.verbose,
            Command::Dev(args) => args.verbose,
            Command::Check(_)
            | Command::EmbedDocs(_)
            | Command::Call(_)
            | Command::Inspect(_)
            | Command::New(_)
            | Command::Build(_)
            | Command::Pull(_)
            | Command::Publish(_) => 0,
        }
    }
}
