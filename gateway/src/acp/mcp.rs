//! The MCP server at `/mcp` (Streamable HTTP, JSON-RPC 2.0; the official
//! SDK, `rmcp`), stateless so that any gateway replica answers any call:
//! the tools of `tools`, each call made as its REST request through the
//! whole app in process, with the caller's `Authorization` and address.
//! A REST error is the binding's JSON-RPC error -32000 with the
//! protocol's error in `data`.

use std::sync::{Arc, OnceLock};

use axum::Router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Request, header, request::Parts};
use rmcp::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ErrorCode, ErrorData, Implementation,
    InitializeResult, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
    Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::Value;
use tower::ServiceExt;

use super::tools;
use crate::middleware::json_body::MAX_BODY_BYTES;

/// The whole app, set once it is built (the MCP route is part of it).
pub type AppHandle = Arc<OnceLock<Router>>;

#[derive(Clone)]
pub struct Mcp {
    app: AppHandle,
    tools: Arc<Vec<Tool>>,
}

/// The `/mcp` service; `hosts` the `Host` values it answers (besides
/// loopback), against DNS rebinding.
pub fn service(
    app: AppHandle,
    hosts: Vec<String>,
) -> StreamableHttpService<Mcp, LocalSessionManager> {
    let mcp = Mcp {
        app,
        tools: Arc::new(tools::all()),
    };
    let mut allowed = vec!["localhost".to_string(), "127.0.0.1".into(), "::1".into()];
    allowed.extend(hosts);
    let mut config = StreamableHttpServerConfig::default().with_allowed_hosts(allowed);
    config.legacy_session_mode = false;
    config.json_response = true;
    StreamableHttpService::new(
        move || Ok(mcp.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    )
}

fn failed(message: impl Into<String>, data: Option<Value>) -> ErrorData {
    ErrorData::new(ErrorCode(-32000), message.into(), data)
}

impl Mcp {
    /// The tool call as its REST request, with the MCP request's caller.
    fn request(
        &self,
        call: &tools::Call,
        outer: Option<&Parts>,
    ) -> Result<Request<Body>, ErrorData> {
        let mut request = Request::builder()
            .method(call.method.clone())
            .uri(&call.path);
        for (name, value) in &call.headers {
            request = request.header(*name, value);
        }
        if let Some(outer) = outer {
            for name in [
                header::AUTHORIZATION,
                header::HeaderName::from_static("x-forwarded-for"),
            ] {
                for value in outer.headers.get_all(&name) {
                    request = request.header(&name, value);
                }
            }
            if let Some(peer) = outer.extensions.get::<ConnectInfo<std::net::SocketAddr>>() {
                request = request.extension(*peer);
            }
        }
        let body = call.body.clone().map_or_else(Body::empty, Body::from);
        request
            .body(body)
            .map_err(|e| ErrorData::invalid_params(e.to_string(), None))
    }
}

impl ServerHandler for Mcp {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder().enable_tools().build();
        InitializeResult::new(capabilities)
            .with_server_info(Implementation::new("storefront-acp", env!("CARGO_PKG_VERSION")))
            .with_instructions("The shop's Agentic Commerce Protocol checkout (2026-04-17) as tools: find items with search_products or get_product, then create_checkout_session, update it, complete_checkout_session with a delegated payment token. Every call needs meta.api_version.")
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.to_vec()))
    }

    async fn call_tool(
        &self,
        params: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = params.arguments.unwrap_or_default();
        let call =
            tools::call(&params.name, &args).map_err(|m| ErrorData::invalid_params(m, None))?;
        let request = self.request(&call, context.extensions.get::<Parts>())?;
        let app = self
            .app
            .get()
            .cloned()
            .ok_or_else(|| failed("not ready", None))?;
        let response = app
            .oneshot(request)
            .await
            .map_err(|e| failed(e.to_string(), None))?;
        let status = response.status();
        let bytes = axum::body::to_bytes(response.into_body(), MAX_BODY_BYTES)
            .await
            .map_err(|e| failed(e.to_string(), None))?;
        let answer: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        if !status.is_success() {
            let message = answer["message"]
                .as_str()
                .unwrap_or("the call failed")
                .to_string();
            return Err(failed(message, Some(answer)));
        }
        let shown = match call.read {
            Some(compact) => compact(answer),
            None => answer,
        };
        Ok(CallToolResult::structured(shown).into())
    }
}
