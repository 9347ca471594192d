//! `warden serve`: load the plugins folder, keep it loaded as it changes,
//! and serve it.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use tokio::sync::mpsc;

use anyhow::{Context, Result};
use rmcp::ServiceExt;
use rmcp::service::ServerInitializeError;

use crate::cli::{CacheArgs, ServeArgs};
use crate::hangup::{self, Reload};
use warden_mcp::access::AccessPolicy;
use warden_mcp::interaction::UsedStates;
use warden_mcp::tasks::Tasks;
use warden_mcp::tasks::redis_store::RedisStore;
use warden_mcp::tasks::store::{Bounds, TaskStore};
use warden_mcp::{InFlight, Notifier, Shared, SubscriptionLimits, WardenServer};
use warden_origin::Trust;
use warden_plugins::catalog::{CatalogHandle, ListChanges};
use warden_plugins::loader::Loader;
use warden_plugins::reconciler::Reconciler;
use warden_plugins::watcher::{self, Batch, Watcher};
use warden_runtime::Runtime;
use warden_runtime::audit_log::AuditLog;
use warden_runtime::cache::{self, CodeCache};
use warden_runtime::incremental_cache::IncrementalCache;
use warden_runtime::secrets::SecretAddress;
use warden_transport::ConnectionLimits;
use warden_transport::auth::oauth::{self, OAuth, OAuthSettings};
use warden_transport::auth::policy_file;
use warden_transport::http::{self, HttpOptions};
use warden_transport::stdio::StdioTransport;

/// Everything that runs while serving: the shared state every connection
/// uses. (The watcher lives in the reconciler's task.)
pub struct Host {
    pub shared: Arc<Shared>,
    /// Asks the reconciler to look at every plugins folder again.
    pub plugins_rescan: Arc<tokio::sync::Notify>,
    /// Loads plugins; holds the trust policy in force.
    pub loader: Arc<Loader>,
}

/// The first load of the plugins folders, which `Host::start` prepares and
/// the caller runs: before listening on HTTP (a replica is not ready until
/// its plugins are), or beside a stdio session (whose handshake should not
/// wait for compiling; requests that read the catalog wait for the load).
pub struct FirstLoad {
    started: Instant,
    roots: Vec<PathBuf>,
    watch: bool,
    reconciler: Reconciler,
    loader: Arc<Loader>,
    catalog: CatalogHandle,
    watching: Option<(Watcher, mpsc::UnboundedReceiver<Batch>)>,
}

/// What `Host::start` needs.
pub struct HostConfig {
    /// The plugins folders served together.
    pub roots: Vec<PathBuf>,
    pub watch: bool,
    /// `--poll`: find changes by polling rather than by events.
    pub poll: bool,
    pub cache: CacheArgs,
    pub audit_log: Option<PathBuf>,
    /// `--audit-required`: refuse invocations while records cannot be written.
    pub audit_required: bool,
    pub subscriptions: SubscriptionLimits,
    /// The key that seals 2026-07-28 `requestState`s; a key of this
    /// process's own when `None`.
    pub state_key: Option<PathBuf>,
    /// Which pulled components may be served.
    pub trust: Trust,
    /// `--task-store`: a shared store's URL; this process's memory when `None`.
    pub task_store: Option<SecretAddress>,
    /// The name task records give this replica.
    pub replica: String,
    /// Where the compiler keeps each function's code, so a changed component
    /// recompiles only what changed (`warden dev`).
    pub incremental_cache: Option<Arc<IncrementalCache>>,
}

impl Host {
    /// Sets up everything but the plugins, which the returned `FirstLoad`
    /// loads (in parallel); when watching, it then keeps the catalog in step
    /// with the folders.
    pub async fn start(config: HostConfig) -> Result<(Self, FirstLoad)> {
        let started = Instant::now();
        let runtime = Runtime::with_incremental_cache(config.incremental_cache)?;
        if !runtime.pooling() {
            tracing::info!("instances are allocated on demand");
        }
        let audit = config
            .audit_log
            .as_deref()
            .map(|path| AuditLog::open(path, config.audit_required))
            .transpose()?
            .map(Arc::new);
        let tasks = match &config.task_store {
            Some(url) => {
                let store = RedisStore::connect(url, Bounds::default()).await?;
                tracing::info!("task records are kept in {url}");
                Tasks::new(TaskStore::Redis(store), config.replica.clone(), audit.clone())
            }
            None => Tasks::in_memory(config.replica.clone(), audit.clone()),
        };
        let supported = if config.watch {
            ListChanges::ALL
        } else {
            ListChanges::NONE
        };
        let catalog = CatalogHandle::loading();
        let notifier = Arc::new(Notifier::new(supported, catalog.clone(), config.subscriptions));
        for root in &config.roots {
            std::fs::read_dir(root).with_context(|| format!("cannot read the plugins folder {}", root.display()))?;
        }
        let loader = Loader::new(
            runtime.clone(),
            open_cache(&config.cache),
            &config.roots,
            config.trust.clone(),
        );
        let reconciler = Reconciler::new(&config.roots, loader.clone(), catalog.clone());
        let roots = reconciler.roots().to_vec();
        // Watch before loading, so nothing that changes meanwhile is missed.
        let watching = if config.watch {
            Some(watcher::watch_with(
                &reconciler.watch_targets(),
                watcher::DEBOUNCE,
                config.poll,
            )?)
        } else {
            None
        };
        let tasks = Arc::new(tasks);
        Tasks::spawn_sweeper(&tasks);
        let used_states = UsedStates::default();
        if tasks.is_shared() {
            used_states.share_with(tasks.clone());
        }
        let state_codec = match &config.state_key {
            Some(path) => warden_mcp::interaction::codec_with_key(warden_mcp::state_key::load(path)?)?,
            None => warden_mcp::interaction::process_codec()?,
        };
        let plugins_rescan = reconciler.rescan_handle();
        let host = Self {
            plugins_rescan,
            loader: loader.clone(),
            shared: Arc::new(Shared {
                catalog: catalog.clone(),
                runtime,
                audit,
                notifier,
                in_flight: InFlight::default(),
                state_codec,
                used_states,
                tasks,
            }),
        };
        let first_load = FirstLoad {
            started,
            roots,
            watch: config.watch,
            reconciler,
            loader,
            catalog,
            watching,
        };
        Ok((host, first_load))
    }

    /// Serves one MCP client on stdin/stdout until it leaves or a signal
    /// arrives.
    pub async fn serve_stdio(&self) -> Result<()> {
        serve_stdio(self.shared.clone()).await
    }
}

impl FirstLoad {
    /// Loads every folder, marks the catalog loaded, and (when watching)
    /// hands the reconciler the watcher.
    pub async fn run(self) -> Result<()> {
        let Self {
            started,
            roots,
            watch,
            mut reconciler,
            loader,
            catalog,
            watching,
        } = self;
        let summary = reconciler.load_all().await?;
        catalog.mark_loaded();
        let snapshot = catalog.snapshot();
        tracing::info!(
            plugins = snapshot.plugins().len(),
            tools = snapshot.tools().len(),
            skipped = summary.failed,
            compiled = summary.compiled,
            from_cache = summary.from_cache,
            reused = summary.reused,
            baseline = summary.baseline,
            elapsed_ms = started.elapsed().as_millis() as u64,
            watching = watch,
            "loaded {}",
            roots
                .iter()
                .map(|r| r.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
        if let Some(cache) = loader.cache().cloned() {
            // Off the critical path: startup does not wait for pruning.
            tokio::task::spawn_blocking(move || match cache.prune(cache::MAX_ENTRIES) {
                Ok(0) => {}
                Ok(removed) => tracing::debug!("pruned {removed} old entries from {}", cache.dir().display()),
                Err(error) => tracing::warn!("cannot prune the compiled-code cache: {error:#}"),
            });
        }
        match watching {
            Some((watcher, batches)) => tokio::spawn(reconciler.run(watcher, batches)),
            // Still there for a SIGHUP.
            None => tokio::spawn(reconciler.run_unwatched()),
        };
        Ok(())
    }
}

/// Serves `serving` (a stdio session) while `first_load` runs: a load that
/// fails ends it with the load's error; a client that leaves first ends it
/// without waiting for the load.
pub async fn serve_while_loading(first_load: FirstLoad, serving: impl Future<Output = Result<()>>) -> Result<()> {
    tokio::pin!(serving);
    tokio::select! {
        loaded = first_load.run() => {
            loaded?;
            serving.await
        }
        served = &mut serving => served,
    }
}

/// Serves one MCP client on stdin/stdout until it leaves or a signal arrives.
pub async fn serve_stdio(shared: Arc<Shared>) -> Result<()> {
    let server = WardenServer::new(shared);
    let service = match server.serve(StdioTransport::stdio()).await {
        Ok(service) => service,
        // The client went away before the handshake: nothing to serve.
        Err(ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
        Err(error) => return Err(error).context("the MCP session could not start"),
    };
    tokio::select! {
        result = service.waiting() => { result.context("the MCP session failed")?; }
        _ = shutdown_signal() => tracing::info!("shutting down on signal"),
    }
    Ok(())
}

/// The compiled-code cache the flags ask for. A cache that cannot be
/// created, or a folder that others could write to, is not fatal: plugins
/// are compiled instead, and nothing is read from or written to it. (The
/// cache only saves time; refusing to start would trade availability for
/// nothing, since nothing from the folder is trusted either way.)
pub fn open_cache(args: &CacheArgs) -> Option<CodeCache> {
    if args.no_cache {
        return None;
    }
    let Some(dir) = args.cache_dir.clone().or_else(CodeCache::default_dir) else {
        tracing::warn!("no cache folder (neither XDG_CACHE_HOME nor HOME is set); compiling without a cache");
        return None;
    };
    match CodeCache::open(&dir) {
        Ok(cache) => Some(cache),
        Err(error) => {
            tracing::warn!("{error:#}; compiling without a cache (nothing is read from or written to it)");
            None
        }
    }
}

pub async fn run(args: ServeArgs) -> Result<()> {
    // Before anything that takes time: a SIGHUP never ends the server.
    let hangups = hangup::listen()?;
    let mut http = args.http.map(|addr| http_options(&args, addr)).transpose()?;
    if let Some(options) = &mut http {
        // Fail before loading anything when the configuration is unsafe,
        // or the authorization server cannot be reached.
        options.oauth = oauth(&args).await?;
        options.check()?;
    }
    let serves_stdio = http.is_none() || args.stdio;
    if serves_stdio && std::io::stdin().is_terminal() {
        // Not `eprintln!`, which panics when stderr cannot be written.
        let _ = writeln!(
            crate::log_writer::LossyStderr,
            "warden is waiting for an MCP client on stdin/stdout (JSON-RPC, one message per line).\n\
             Start it from a client instead: e.g. `npx @modelcontextprotocol/inspector --cli warden serve --plugins {}` \
             or a Claude Desktop `mcpServers` entry (see the README). Press Ctrl-D to quit.",
            args.plugins.display()
        );
    }
    if let Some(addr) = args.metrics {
        // Before loading, so the first loads are counted.
        warden_runtime::metrics::serve(addr).await?;
    }
    let (host, first_load) = Host::start(HostConfig {
        roots: vec![args.plugins.clone()],
        watch: !args.no_watch,
        poll: args.poll,
        cache: args.cache.clone(),
        audit_log: args.audit_log.clone(),
        audit_required: args.audit_required,
        subscriptions: SubscriptionLimits {
            per_client: args.max_subscriptions.max(1),
        },
        state_key: args.state_key_file.clone(),
        trust: args.trust.load()?,
        task_store: args.task_store.clone(),
        replica: args.replica_id.clone().unwrap_or_else(replica_name),
        // Not when serving: the cache would hold tens of MiB per plugin for
        // the life of the server, to speed up only the rare reload of a
        // changed component (an unchanged one is in the compiled-code cache).
        incremental_cache: None,
    })
    .await?;
    let reload = Reload {
        audit: host.shared.audit.clone(),
        loader: host.loader.clone(),
        trust: args.trust.clone(),
        access: None,
        plugins_rescan: host.plugins_rescan.clone(),
    };
    let Some(options) = http else {
        reload.spawn(hangups);
        return serve_while_loading(first_load, host.serve_stdio()).await;
    };
    first_load.run().await?;
    // Lives as long as the server: the policy is reloaded when its file changes.
    let mut _policy_watch = None;
    if let (Some(oauth), Some(access)) = (options.oauth.as_ref(), &args.access) {
        _policy_watch = Some(policy_file::watch(access, oauth.clone())?);
        let unmatched = oauth.policy().unmatched(&host.shared.catalog.snapshot());
        if !unmatched.is_empty() {
            tracing::warn!(
                "the access policy grants what no loaded plugin serves (a typo, or a plugin not loaded yet): {}",
                unmatched.join(", ")
            );
        }
    }
    Reload {
        access: options
            .oauth
            .clone()
            .zip(args.access.clone())
            .map(|(oauth, path)| (path, oauth)),
        ..reload
    }
    .spawn(hangups);
    if args.stdio {
        let shared = host.shared.clone();
        tokio::spawn(async move {
            match serve_stdio(shared).await {
                Ok(()) => tracing::info!("the stdio client disconnected; still serving HTTP"),
                Err(error) => tracing::error!("stdio: {error:#}"),
            }
        });
    }
    http::serve(host.shared.clone(), options, shutdown_signal()).await
}

/// OAuth mode's settings, checked, and the authorization server's metadata
/// and keys, fetched.
async fn oauth(args: &ServeArgs) -> Result<Option<Arc<OAuth>>> {
    let (Some(issuer), Some(resource), Some(access)) = (&args.oauth_issuer, &args.resource, &args.access) else {
        return Ok(None);
    };
    let settings = OAuthSettings {
        issuer: issuer.clone(),
        resource: resource.clone(),
        algorithms: oauth::parse_algorithms(&args.oauth_algorithms)?,
        policy: AccessPolicy::load(access)?,
    };
    let oauth = OAuth::discover(settings).await.with_context(|| {
        format!(
            "OAuth mode: cannot use the authorization server {}",
            warden_runtime::secrets::SecretAddress::new(issuer.as_str())
        )
    })?;
    Ok(Some(Arc::new(oauth)))
}

/// The longest `--token-file` read: a token, not a document.
const MAX_TOKEN_FILE_BYTES: u64 = 64 * 1024;

fn http_options(args: &ServeArgs, addr: std::net::SocketAddr) -> Result<HttpOptions> {
    let token = match (&args.token_file, &args.token_env) {
        (Some(path), _) => Some(
            warden_runtime::bounded_file::read_text(path, MAX_TOKEN_FILE_BYTES, "the token file")?
                .trim()
                .to_string(),
        ),
        (None, Some(name)) => Some(
            std::env::var(name)
                .with_context(|| format!("--token-env names {name}, which is not set"))?
                .trim()
                .to_string(),
        ),
        (None, None) => None,
    };
    Ok(HttpOptions {
        addr,
        token,
        oauth: None,
        insecure_no_auth: args.insecure_no_auth,
        allowed_hosts: args.allowed_hosts.clone(),
        allowed_origins: args.allowed_origins.clone(),
        max_body_bytes: usize::try_from(args.max_body).unwrap_or(usize::MAX),
        max_concurrent_requests: args.max_concurrent_requests.max(1),
        sse_keep_alive: args.sse_keep_alive,
        shutdown_grace: args.shutdown_grace,
        connections: ConnectionLimits {
            max_connections: args.max_connections.max(1),
            max_connections_per_peer: args.max_connections_per_peer,
            header_timeout: args.header_timeout,
            write_timeout: args.write_timeout,
        },
        body_timeout: args.body_timeout,
        max_sessions: args.max_sessions.max(1),
        session_idle_timeout: args.session_idle_timeout,
        public_readiness_details: args.public_readyz,
        replica_id: args.replica_id.clone(),
    })
}

/// This replica's name in task records when `--replica-id` is not given:
/// the host name (a pod's name in Kubernetes), else `warden`.
fn replica_name() -> String {
    // The kernel's own file, not a path anyone configures.
    #[allow(clippy::disallowed_methods)]
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname");
    name.ok()
        .map(|name| {
            name.trim()
                .chars()
                .filter(|c| c.is_ascii_graphic())
                .take(64)
                .collect::<String>()
        })
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "warden".into())
}

/// A store URL as the log shows it: without its password.
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = signal(SignalKind::terminate()).expect("cannot listen for SIGTERM");
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
