//! `conformance-client URL`: the client command the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`) runs once per client scenario, with the mock
//! server's URL as the last argument and the scenario in `MCP_CONFORMANCE_SCENARIO`.
//!
//! Built on the library exactly as the app uses it: the Streamable HTTP transport (with its
//! legacy fallback) and the MCP client. It connects, lists the tools and calls what the
//! scenario expects, then closes the session. Exit code 0 when every step worked; 1 with
//! the reason on stderr otherwise. `scripts/conformance.sh` runs the suite with it.
//!
//! Authorization scenarios (`auth/*`) are handled by the library's OAuth flow with a
//! headless browser: the authorization URL is fetched without following redirects and
//! its `Location` is delivered to the loopback redirect listener with a plain GET.
//! Client credentials given in `MCP_CONFORMANCE_CONTEXT` (`client_id`, `client_secret`)
//! are used as a pre-registered client.
//!
//! The protocol era follows `MCP_CONFORMANCE_PROTOCOL_VERSION` (set by the suite's newer
//! releases): 2026-07-28 and later probe for the modern era exactly as the app does
//! (`"protocolEra": "auto"`); older revisions, or none, speak the legacy era. The tool calls
//! are the scenario's own `toolCalls` from `MCP_CONFORMANCE_CONTEXT` when it gives some.

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use harness9::config::ProtocolEra;
use harness9::mcp::auth::{
    AuthContext, AuthSettings, Authorizer, CredentialStore, OAuthConfig, Opener,
};
use harness9::mcp::client::ConnectOptions;
use harness9::mcp::era::Era;
use harness9::mcp::transport::http::{self, HttpSpec};
use harness9::mcp::{Client, RequestOptions, ServerLog};
use serde_json::{json, Value};

fn main() {
    let url = match std::env::args().skip(1).last() {
        Some(u) => u,
        None => {
            eprintln!(
                "usage: conformance-client URL (MCP_CONFORMANCE_SCENARIO names the scenario)"
            );
            std::process::exit(2);
        }
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let code = match rt.block_on(run(&url, &scenario)) {
        Ok(()) => {
            eprintln!("conformance-client: {scenario}: done");
            0
        }
        Err(e) => {
            eprintln!("conformance-client: {scenario}: {e}");
            1
        }
    };
    std::process::exit(code);
}

/// The Client ID Metadata Document URL the suite's authorization server accepts.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// A pre-registered client from `MCP_CONFORMANCE_CONTEXT`, when it names one.
fn oauth_from_context() -> Option<OAuthConfig> {
    let raw = std::env::var("MCP_CONFORMANCE_CONTEXT").ok()?;
    let v: Value = serde_json::from_str(&raw).ok()?;
    let id = v.get("client_id")?.as_str()?.to_string();
    Some(OAuthConfig {
        client_id: Some(id),
        client_secret: v
            .get("client_secret")
            .and_then(Value::as_str)
            .map(str::to_string),
        ..Default::default()
    })
}

/// Plays the browser: GETs the authorization URL without following its redirect, then
/// GETs the `Location` (our loopback listener) like a browser coming back would.
struct HeadlessOpener;

impl Opener for HeadlessOpener {
    fn open(&self, url: &str) -> BoxFuture<'static, Result<(), String>> {
        let url = url.to_string();
        Box::pin(async move {
            let http = reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .timeout(Duration::from_secs(20))
                .build()
                .map_err(|e| e.to_string())?;
            let resp = http
                .get(&url)
                .send()
                .await
                .map_err(|e| format!("GET authorization URL: {e}"))?;
            let location = resp
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
                .ok_or_else(|| {
                    format!(
                        "the authorization endpoint answered HTTP {} without a redirect",
                        resp.status()
                    )
                })?;
            let back = reqwest::Url::parse(&url)
                .and_then(|u| u.join(&location))
                .map_err(|e| format!("invalid redirect {location}: {e}"))?;
            let page = http
                .get(back)
                .send()
                .await
                .map_err(|e| format!("GET redirect: {e}"))?;
            let _ = page.bytes().await;
            Ok(())
        })
    }
}

fn opts() -> RequestOptions {
    RequestOptions {
        timeout: Some(Duration::from_secs(20)),
        ..Default::default()
    }
}

async fn run(url: &str, scenario: &str) -> Result<(), String> {
    let log = Arc::new(ServerLog::default());
    let ctx = AuthContext {
        store: Arc::new(CredentialStore::memory()),
        settings: AuthSettings {
            client_metadata_url: Some(CLIENT_METADATA_URL.to_string()),
        },
    };
    let auth = Authorizer::new(url, oauth_from_context(), ctx);
    auth.set_opener(Some(Arc::new(HeadlessOpener)));
    let spec = HttpSpec {
        url: url.to_string(),
        headers: Vec::new(),
        max_message_bytes: harness9::config::DEFAULT_MAX_MESSAGE_BYTES,
        auth: Some(auth),
    };
    let (conn, kind) = http::connect(&spec, log.clone())?;
    let client = tokio::time::timeout(
        Duration::from_secs(20),
        // Elicitation is answered as a user who accepts every form as offered: the
        // schema's defaults filled in (SEP-1034).
        Client::connect_opts(
            conn,
            "conformance",
            log.clone(),
            ConnectOptions {
                handler: Some(Arc::new(harness9::mcp::handler::AcceptDefaults)),
                era: wire_era(),
                reopen: None,
                probe_timeout: None,
            },
        ),
    )
    .await
    .map_err(|_| "initialize did not finish within 20 s".to_string())?
    .map_err(|e| e.to_string())?;
    eprintln!(
        "conformance-client: connected over {} (protocol {}, {} era)",
        kind.get(),
        client.protocol_version(),
        client.era().word()
    );
    let result = exercise(&client, scenario).await;
    client.close().await;
    for line in log.tail(50) {
        eprintln!("conformance-client: server log: {}", line.text);
    }
    result
}

async fn exercise(client: &Client, scenario: &str) -> Result<(), String> {
    let tools = client
        .list_tools(Some(Duration::from_secs(20)))
        .await
        .map_err(|e| e.to_string())?;
    eprintln!(
        "conformance-client: tools: {:?}",
        tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>()
    );
    if scenario == "json-schema-ref-no-deref" {
        // Only the listing is under test (its server answers nothing else).
        return Ok(());
    }
    let calls: Vec<(String, Value)> = match context_tool_calls() {
        Some(calls) => calls,
        None => tools
            .iter()
            .map(|t| {
                let args = arguments_for(scenario, &t.name, &t.input_schema.value());
                (t.name.clone(), args)
            })
            .collect(),
    };
    for (name, args) in calls {
        let r = client
            .call_tool(&name, Some(args), opts())
            .await
            .map_err(|e| format!("tools/call {name}: {e}"))?;
        eprintln!(
            "conformance-client: {} -> {}{}",
            name,
            if r.is_error { "error: " } else { "" },
            r.to_text()
        );
    }
    Ok(())
}

/// The era the suite's wire asks for (see the module docs).
fn wire_era() -> ProtocolEra {
    match std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION") {
        Ok(v) if Era::of_version(&v) == Era::Modern => ProtocolEra::Auto,
        _ => ProtocolEra::Legacy,
    }
}

/// `toolCalls: [{name, arguments}]` from `MCP_CONFORMANCE_CONTEXT`, when given.
fn context_tool_calls() -> Option<Vec<(String, Value)>> {
    let context: Value =
        serde_json::from_str(&std::env::var("MCP_CONFORMANCE_CONTEXT").ok()?).ok()?;
    let calls = context.get("toolCalls")?.as_array()?;
    Some(
        calls
            .iter()
            .filter_map(|c| {
                let name = c.get("name")?.as_str()?.to_string();
                let args = c.get("arguments").cloned().unwrap_or_else(|| json!({}));
                Some((name, args))
            })
            .collect(),
    )
}

/// Arguments for a tool: the scenario's expected ones, else a value per required property.
fn arguments_for(scenario: &str, tool: &str, schema: &Value) -> Value {
    if scenario == "tools_call" && tool == "add_numbers" {
        return json!({"a": 5, "b": 3});
    }
    let mut args = serde_json::Map::new();
    let required = schema
        .get("required")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for name in required.iter().filter_map(Value::as_str) {
        let ty = schema
            .pointer(&format!("/properties/{name}/type"))
            .and_then(Value::as_str)
            .unwrap_or("string");
        let v = match ty {
            "number" | "integer" => json!(1),
            "boolean" => json!(true),
            "array" => json!([]),
            "object" => json!({}),
            _ => json!("test"),
        };
        args.insert(name.to_string(), v);
    }
    Value::Object(args)
}
