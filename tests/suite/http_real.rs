//! Real MCP servers over HTTP: `@modelcontextprotocol/server-everything` (`streamableHttp`
//! and `sse`) and the Python SDK server (`streamable-http` and `sse`), each started on a free
//! port of 127.0.0.1 (server-everything is forced onto loopback by
//! `tests/servers/bind-loopback.cjs`).

use std::sync::Arc;
use std::time::Duration;

use harness9::mcp::{Client, RequestOptions, ServerLog};
use serde_json::json;

use super::support::bins::{everything_bin, python_server, servers_dir};
use super::support::client::opts;
use super::support::era::{call, listen_checks, Answers};
use super::support::http::connect_http;
use super::support::server::{free_port, LoopbackServer};
use super::support::wait::wait_for_log;

fn everything(mode: &str) -> Option<LoopbackServer> {
    let bin = everything_bin()?;
    let preload = servers_dir().join("bind-loopback.cjs");
    let port = free_port();
    let mut cmd = std::process::Command::new(bin);
    cmd.arg(mode)
        .env("PORT", port.to_string())
        .env("NODE_OPTIONS", format!("--require {}", preload.display()));
    Some(LoopbackServer::start(cmd, port))
}

fn python(mode: &str) -> Option<LoopbackServer> {
    let (py, script) = python_server()?;
    let port = free_port();
    let mut cmd = std::process::Command::new(py);
    cmd.arg(script).args([mode, "--port", &port.to_string()]);
    Some(LoopbackServer::start(cmd, port))
}

async fn connect(
    s: &LoopbackServer,
    path: &str,
    legacy: bool,
) -> (Client, Arc<ServerLog>, &'static str) {
    let url = s.url(path);
    let (c, log, kind) = connect_http(&url, &[], legacy)
        .await
        .unwrap_or_else(|e| panic!("{url}: {e}"));
    (c, log, kind.get())
}

async fn progress_steps(c: &Client, tool: &str, args: serde_json::Value) -> (String, Vec<f64>) {
    let (tx, mut rx) = harness9::mcp::client::progress_channel();
    let r = c
        .call_tool(
            tool,
            Some(args),
            RequestOptions {
                progress: Some(tx),
                ..opts()
            },
        )
        .await
        .unwrap();
    let mut steps = Vec::new();
    while let Ok(p) = rx.try_recv() {
        steps.push(p.progress);
    }
    (r.to_text(), steps)
}

async fn everything_checks(c: &Client, log: &ServerLog, expect_log: bool) {
    assert_eq!(c.protocol_version(), "2025-11-25");
    let tools = c.list_tools(None).await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    for t in ["echo", "get-sum", "trigger-long-running-operation"] {
        assert!(names.contains(&t), "{t} not in {names:?}");
    }
    let r = c
        .call_tool("echo", Some(json!({"message": "over http"})), opts())
        .await
        .unwrap();
    assert_eq!(r.to_text(), "Echo: over http");
    let r = c
        .call_tool("get-sum", Some(json!({"a": 2, "b": 40})), opts())
        .await
        .unwrap();
    assert_eq!(r.to_text(), "The sum of 2 and 40 is 42.");
    // Progress notifications arrive on the request's SSE stream before the result.
    let (text, steps) = progress_steps(
        c,
        "trigger-long-running-operation",
        json!({"duration": 0.3, "steps": 3}),
    )
    .await;
    assert!(
        text.starts_with("Long running operation completed."),
        "{text}"
    );
    assert_eq!(steps, vec![1.0, 2.0, 3.0]);
    if expect_log {
        // Server-initiated log notifications (every 5 s) arrive outside any request.
        let r = c
            .call_tool("toggle-simulated-logging", Some(json!({})), opts())
            .await
            .unwrap();
        assert!(
            r.to_text().starts_with("Started simulated"),
            "{}",
            r.to_text()
        );
        wait_for_log(log, "a simulated log message", |l| {
            l.text.contains("-level message") || l.text.contains("level-message")
        })
        .await;
    }
}

#[tokio::test]
async fn everything_over_streamable_http() {
    let Some(s) = everything("streamableHttp") else {
        return;
    };
    let (c, log, kind) = connect(&s, "/mcp", false).await;
    assert_eq!(kind, "http");
    everything_checks(&c, &log, true).await;
    c.close().await;
}

#[tokio::test]
async fn everything_over_legacy_sse() {
    let Some(s) = everything("sse") else {
        return;
    };
    let (c, log, kind) = connect(&s, "/sse", true).await;
    assert_eq!(kind, "sse");
    everything_checks(&c, &log, false).await;
    c.close().await;
}

#[tokio::test]
async fn everything_sse_url_as_http_falls_back() {
    let Some(s) = everything("sse") else {
        return;
    };
    // `type: "http"` pointed at a legacy server: POST /sse is refused, GET works.
    let (c, _, kind) = connect(&s, "/sse", false).await;
    assert_eq!(kind, "sse");
    let r = c
        .call_tool("echo", Some(json!({"message": "fallback"})), opts())
        .await
        .unwrap();
    assert_eq!(r.to_text(), "Echo: fallback");
    c.close().await;
}

async fn python_checks(c: &Client, log: &ServerLog) {
    assert_eq!(c.protocol_version(), "2025-11-25");
    assert_eq!(c.server_info().name, "h9-py-server");
    let tools = c.list_tools(None).await.unwrap();
    assert_eq!(tools.len(), 13);
    let r = c
        .call_tool("echo", Some(json!({"text": "π over http"})), opts())
        .await
        .unwrap();
    assert_eq!(r.to_text(), "π over http");
    let r = c
        .call_tool("add", Some(json!({"a": 2, "b": 3})), opts())
        .await
        .unwrap();
    assert_eq!(r.structured_content, Some(json!({"result": 5})));
    let (text, steps) = progress_steps(c, "slow_count", json!({"steps": 3})).await;
    assert_eq!(text, "counted 3");
    assert_eq!(steps, vec![1.0, 2.0, 3.0]);
    // A log notification on the stream before the result.
    let r = c.call_tool("notify_and_ask", None, opts()).await.unwrap();
    assert_eq!(r.to_text(), "done");
    assert!(
        log.tail(50)
            .iter()
            .any(|l| l.text.contains("hello from the python server")),
        "{:?}",
        log.tail(50)
    );
    // A server request on the stream, answered (with -32601) by a POST.
    let r = c
        .call_tool("ask_client", Some(json!({"kind": "sample"})), opts())
        .await
        .unwrap();
    assert_eq!(
        r.to_text(),
        "error: harness9 does not support \"sampling/createMessage\""
    );
    let r = c
        .call_tool("boom", Some(json!({"kind": "tool_error"})), opts())
        .await
        .unwrap();
    assert!(r.is_error);
}

#[tokio::test]
async fn python_sdk_over_streamable_http() {
    let Some(s) = python("streamable-http") else {
        return;
    };
    let (c, log, kind) = connect(&s, "/mcp", false).await;
    assert_eq!(kind, "http");
    python_checks(&c, &log).await;
    c.close().await;
}

#[tokio::test]
async fn python_sdk_over_legacy_sse() {
    let Some(s) = python("sse") else {
        return;
    };
    let (c, log, kind) = connect(&s, "/sse", true).await;
    assert_eq!(kind, "sse");
    python_checks(&c, &log).await;
    c.close().await;
}

/// Connects over Streamable HTTP in `era`, probing without a time limit as the app does.
async fn connect_era(
    s: &LoopbackServer,
    path: &str,
    era: harness9::config::ProtocolEra,
    handler: Option<Arc<Answers>>,
) -> (Client, Arc<ServerLog>, &'static str) {
    let log = Arc::new(ServerLog::default());
    let spec = harness9::mcp::transport::http::HttpSpec {
        url: s.url(path),
        headers: Vec::new(),
        max_message_bytes: harness9::config::DEFAULT_MAX_MESSAGE_BYTES,
        auth: None,
    };
    let (conn, kind) = harness9::mcp::transport::http::connect(&spec, log.clone()).unwrap();
    let opts = harness9::mcp::client::ConnectOptions {
        handler: handler.map(|h| h as Arc<dyn harness9::mcp::handler::ClientHandler>),
        era,
        reopen: None,
        probe_timeout: None,
    };
    let c = tokio::time::timeout(
        Duration::from_secs(20),
        Client::connect_opts(conn, "test", log.clone(), opts),
    )
    .await
    .expect("connects within 20 s")
    .expect("connects");
    (c, log, kind.get())
}

#[tokio::test]
async fn the_probe_over_http_finds_each_servers_era() {
    use harness9::config::ProtocolEra;
    use harness9::mcp::era::Era;
    let Some(py) = python("streamable-http") else {
        return;
    };
    let handler = Arc::new(Answers::default());
    let (modern, _, kind) = connect_era(&py, "/mcp", ProtocolEra::Auto, Some(handler)).await;
    assert_eq!(kind, "http");
    assert_eq!(
        (modern.era(), modern.protocol_version()),
        (Era::Modern, "2026-07-28")
    );
    let (legacy, _, _) = connect_era(&py, "/mcp", ProtocolEra::Legacy, Some(Arc::default())).await;
    assert_eq!(legacy.era(), Era::Legacy);
    let tools = legacy.list_tools(None).await.unwrap();
    assert_eq!(modern.list_tools(None).await.unwrap(), tools);
    for (tool, args) in [
        ("echo", json!({"text": "π over http"})),
        ("weather", json!({"city": "Oslo"})),
        ("resolve_ask", json!({})),
        ("resolve_twice", json!({})),
    ] {
        assert_eq!(
            call(&modern, tool, args.clone()).await,
            call(&legacy, tool, args).await,
            "{tool}"
        );
    }
    modern.close().await;
    legacy.close().await;

    // A fresh server: change notifications ride the listen request's answer stream.
    let Some(py) = python("streamable-http") else {
        return;
    };
    let (modern, log, _) = connect_era(&py, "/mcp", ProtocolEra::Modern, None).await;
    listen_checks(&modern, &log).await;
    modern.close().await;

    // Legacy servers refuse the modern request with a body that is no modern error.
    let Some(streamable) = everything("streamableHttp") else {
        return;
    };
    let (c, log, kind) = connect_era(&streamable, "/mcp", ProtocolEra::Auto, None).await;
    assert_eq!(
        (kind, c.era(), c.protocol_version()),
        ("http", Era::Legacy, "2025-11-25")
    );
    assert!(log.tail(50).iter().any(|l| l
        .text
        .starts_with("speaking the legacy protocol (server/discover: error")));
    let r = c
        .call_tool("echo", Some(json!({"message": "auto"})), opts())
        .await
        .unwrap();
    assert_eq!(r.to_text(), "Echo: auto");
    c.close().await;
    let Some(sse) = everything("sse") else {
        return;
    };
    let (c, _, kind) = connect_era(&sse, "/sse", ProtocolEra::Auto, None).await;
    assert_eq!((kind, c.era()), ("sse", Era::Legacy));
    c.close().await;
}

#[tokio::test]
async fn a_remote_servers_era_is_probed_once() {
    let Some(s) = everything("streamableHttp") else {
        return;
    };
    let url = format!("http://127.0.0.1:{}/mcp", s.port);
    let project = super::support::Project::new(
        &json!({"mcpServers": {"remote": {"type": "http", "url": url}}}),
    );
    let h = project.started().await;
    let probes = || {
        h.server_log("remote", 200)
            .unwrap_or_default()
            .iter()
            .filter(|l| l.text.starts_with("speaking the legacy protocol"))
            .count()
    };
    assert_eq!(probes(), 1);
    // Started again: the era found is spoken at once, without the probe.
    h.restart_server("remote").await;
    h.manager().wait_settled(Duration::from_secs(30)).await;
    let st = h.status();
    let remote = st.servers.iter().find(|s| s.name == "remote").unwrap();
    assert_eq!(remote.state.word(), "connected", "{:?}", remote.state);
    assert_eq!(probes(), 1);
    h.shutdown().await;
}
