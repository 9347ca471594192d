//! The native baseline: an MCP server on the same rmcp stack as Warden,
//! offering the benchmark plugin's two tools (`tests/plugins/bench`)
//! implemented natively. It is what Warden would cost with no sandbox.
//!
//!     native-mcp                 # stdio, through rmcp's own stdio transport
//!     native-mcp --pipes         # stdio that must be pipes, read and written
//!                                # without blocking (as Warden's transport does)
//!     native-mcp --http ADDR     # Streamable HTTP at http://ADDR/mcp

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde::Deserialize;
use warden_bench::hash;

#[derive(Deserialize)]
struct EchoArgs {
    text: String,
}

#[derive(Deserialize)]
struct HashArgs {
    seed: u64,
}

#[derive(Clone)]
struct Native {
    tools: Arc<Vec<Tool>>,
}

fn schema(text: &str) -> Arc<rmcp::model::JsonObject> {
    Arc::new(serde_json::from_str(text).expect("a valid schema"))
}

impl Native {
    fn new() -> Self {
        let tools = vec![
            Tool::new(
                "echo",
                "Returns `text` unchanged.",
                schema(r#"{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}"#),
            ),
            Tool::new(
                "hash",
                "SHA-256, as hex, of 64 KiB of bytes generated from `seed`.",
                schema(r#"{"type":"object","properties":{"seed":{"type":"integer","minimum":0}},"required":["seed"]}"#),
            ),
        ];
        Self { tools: Arc::new(tools) }
    }
}

fn parse<T: for<'de> Deserialize<'de>>(request: &CallToolRequestParams) -> Result<T, McpError> {
    let arguments = serde_json::Value::Object(request.arguments.clone().unwrap_or_default());
    serde_json::from_value(arguments).map_err(|e| McpError::invalid_params(e.to_string(), None))
}

impl ServerHandler for Native {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("native-mcp", env!("CARGO_PKG_VERSION")))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools.to_vec()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let text = match request.name.as_ref() {
            "echo" => parse::<EchoArgs>(&request)?.text,
            "hash" => hash(parse::<HashArgs>(&request)?.seed),
            other => return Err(McpError::invalid_params(format!("unknown tool `{other}`"), None)),
        };
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => {
            let service = Native::new().serve(rmcp::transport::stdio()).await?;
            service.waiting().await?;
        }
        [flag] if flag == "--pipes" => {
            use std::os::fd::AsFd;
            use tokio::net::unix::pipe;
            let stdin = std::io::stdin().as_fd().try_clone_to_owned()?;
            let stdout = std::io::stdout().as_fd().try_clone_to_owned()?;
            let transport = (
                pipe::Receiver::from_owned_fd(stdin)?,
                pipe::Sender::from_owned_fd(stdout)?,
            );
            let service = Native::new().serve(transport).await?;
            service.waiting().await?;
        }
        [flag, address] if flag == "--http" => {
            let listener = tokio::net::TcpListener::bind(address).await?;
            let config = StreamableHttpServerConfig::default()
                .with_allowed_hosts(["127.0.0.1", "localhost"].map(String::from).to_vec());
            let native = Native::new();
            let service = StreamableHttpService::new(
                move || Ok(native.clone()),
                LocalSessionManager::default().into(),
                config,
            );
            let router = axum::Router::new().nest_service("/mcp", service);
            eprintln!("serving MCP over HTTP at http://{}/mcp", listener.local_addr()?);
            axum::serve(listener, router).await?;
        }
        _ => anyhow::bail!("usage: native-mcp [--pipes | --http ADDR]"),
    }
    Ok(())
}
