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
use crate::mcp::{Shared, WardenServer};
use crate::runtime::Runtime;
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
    if std::io::stdin().is_terminal() {
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
    });
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
