//! `warden serve`: load the plugins folder and serve it.

use std::io::IsTerminal;
use std::sync::Arc;

use anyhow::{Context, Result};
use rmcp::ServiceExt;
use rmcp::service::ServerInitializeError;

use crate::audit::AuditLog;
use crate::catalog::{Catalog, CatalogHandle};
use crate::cli::ServeArgs;
use crate::loader;
use crate::mcp::{InFlight, Shared, WardenServer};
use crate::runtime::Runtime;
use crate::transport::http::{self, HttpOptions};
use crate::transport::stdio::StdioTransport;

/// Loads every plugin in the folder and builds the first catalog. Plugins
/// that fail are logged, one line each, and skipped.
pub async fn load_catalog(runtime: &Arc<Runtime>, dir: &std::path::Path) -> Result<Catalog> {
    let started = std::time::Instant::now();
    let (plugins, mut errors) = loader::load_dir(runtime, dir).await?;
    let (catalog, rejected) = Catalog::build(plugins.into_iter().map(Arc::new).collect());
    errors.extend(rejected);
    for error in &errors {
        tracing::warn!("skipped plugin {error}");
    }
    tracing::info!(
        plugins = catalog.plugins().len(),
        tools = catalog.tools().len(),
        skipped = errors.len(),
        elapsed_ms = started.elapsed().as_millis() as u64,
        "loaded {}",
        dir.display()
    );
    Ok(catalog)
}

pub async fn run(args: ServeArgs) -> Result<()> {
    let http = args.http.map(|addr| http_options(&args, addr)).transpose()?;
    if let Some(options) = &http {
        // Fail before loading anything when the configuration is unsafe.
        options.check()?;
    }
    let serves_stdio = http.is_none() || args.stdio;
    if serves_stdio && std::io::stdin().is_terminal() {
        eprintln!(
            "warden is waiting for an MCP client on stdin/stdout (JSON-RPC, one message per line).\n\
             Start it from a client instead: e.g. `npx @modelcontextprotocol/inspector --cli warden serve --plugins {}` \
             or a Claude Desktop `mcpServers` entry (see the README). Press Ctrl-D to quit.",
            args.plugins.display()
        );
    }
    let runtime = Runtime::new()?;
    if !runtime.pooling() {
        tracing::info!("instances are allocated on demand");
    }
    let audit = args.audit_log.as_deref().map(AuditLog::open).transpose()?;
    let catalog = load_catalog(&runtime, &args.plugins).await?;
    let shared = Arc::new(Shared {
        catalog: CatalogHandle::new(catalog),
        runtime,
        audit,
        in_flight: InFlight::default(),
    });
    match http {
        None => {
            tokio::select! {
                result = serve_stdio(shared) => result,
                _ = shutdown_signal() => {
                    tracing::info!("shutting down on signal");
                    Ok(())
                }
            }
        }
        Some(options) => {
            if args.stdio {
                let shared = shared.clone();
                tokio::spawn(async move {
                    match serve_stdio(shared).await {
                        Ok(()) => tracing::info!("the stdio client disconnected; still serving HTTP"),
                        Err(error) => tracing::error!("stdio: {error:#}"),
                    }
                });
            }
            http::serve(shared, options, shutdown_signal()).await
        }
    }
}

/// Serves one client on stdin/stdout until it disconnects.
async fn serve_stdio(shared: Arc<Shared>) -> Result<()> {
    let server = WardenServer::new(shared);
    let service = match server.serve(StdioTransport::stdio()).await {
        Ok(service) => service,
        // The client went away before the handshake: nothing to serve.
        Err(ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
        Err(error) => return Err(error).context("the MCP session could not start"),
    };
    service.waiting().await.context("the MCP session failed")?;
    Ok(())
}

fn http_options(args: &ServeArgs, addr: std::net::SocketAddr) -> Result<HttpOptions> {
    let token = match (&args.token_file, &args.token_env) {
        (Some(path), _) => Some(
            std::fs::read_to_string(path)
                .with_context(|| format!("cannot read the token file {}", path.display()))?
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
        insecure_no_auth: args.insecure_no_auth,
        allowed_hosts: args.allowed_hosts.clone(),
        allowed_origins: args.allowed_origins.clone(),
        max_body_bytes: usize::try_from(args.max_body).unwrap_or(usize::MAX),
        max_concurrent_requests: args.max_concurrent_requests.max(1),
        sse_keep_alive: args.sse_keep_alive,
        shutdown_grace: args.shutdown_grace,
    })
}

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
