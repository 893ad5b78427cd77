//! Real MCP servers over HTTP: `@modelcontextprotocol/server-everything` (`streamableHttp`
//! and `sse`) and the Python SDK server (`streamable-http` and `sse`), each started on a free
//! port of 127.0.0.1 (server-everything is forced onto loopback by
//! `tests/servers/bind-loopback.cjs`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use harness9::mcp::{Client, RequestOptions, ServerLog};
use serde_json::json;

use super::external;
use super::http::connect_http;

/// A server process on a loopback port, killed (with its group) on drop.
struct Server {
    child: tokio::process::Child,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(pid) = self.child.id() {
            // SAFETY: signalling our own child's process group.
            unsafe {
                libc::killpg(pid as i32, libc::SIGKILL);
            }
        }
    }
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

async fn start(program: &str, args: &[&str], env: &[(&str, String)], port: u16) -> Server {
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .kill_on_drop(true);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let child = cmd.spawn().expect("start the server");
    let deadline = Instant::now() + Duration::from_secs(30);
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        assert!(
            Instant::now() < deadline,
            "{program} {args:?} did not listen on 127.0.0.1:{port} within 30 s"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Server { child, port }
}

async fn everything(mode: &str) -> Option<Server> {
    let bin = external("H9_EVERYTHING_BIN")?;
    let preload =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/servers/bind-loopback.cjs");
    let port = free_port();
    Some(
        start(
            bin.to_str().unwrap(),
            &[mode],
            &[
                ("PORT", port.to_string()),
                ("NODE_OPTIONS", format!("--require {}", preload.display())),
            ],
            port,
        )
        .await,
    )
}

async fn python(mode: &str) -> Option<Server> {
    let py = external("H9_PYTHON")?;
    let script = external("H9_PY_SERVER")?;
    let port = free_port();
    let port_s = port.to_string();
    Some(
        start(
            py.to_str().unwrap(),
            &[script.to_str().unwrap(), mode, "--port", &port_s],
            &[],
            port,
        )
        .await,
    )
}

fn opts() -> RequestOptions {
    RequestOptions {
        timeout: Some(Duration::from_secs(30)),
        ..Default::default()
    }
}

async fn connect(s: &Server, path: &str, legacy: bool) -> (Client, Arc<ServerLog>, &'static str) {
    let url = format!("http://127.0.0.1:{}{path}", s.port);
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
        let deadline = Instant::now() + Duration::from_secs(15);
        while !log
            .tail(100)
            .iter()
            .any(|l| l.text.contains("-level message") || l.text.contains("level-message"))
        {
            assert!(
                Instant::now() < deadline,
                "no simulated log arrived: {:?}",
                log.tail(100)
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

#[tokio::test]
async fn everything_over_streamable_http() {
    let Some(s) = everything("streamableHttp").await else {
        return;
    };
    let (c, log, kind) = connect(&s, "/mcp", false).await;
    assert_eq!(kind, "http");
    everything_checks(&c, &log, true).await;
    c.close().await;
}

#[tokio::test]
async fn everything_over_legacy_sse() {
    let Some(s) = everything("sse").await else {
        return;
    };
    let (c, log, kind) = connect(&s, "/sse", true).await;
    assert_eq!(kind, "sse");
    everything_checks(&c, &log, false).await;
    c.close().await;
}

#[tokio::test]
async fn everything_sse_url_as_http_falls_back() {
    let Some(s) = everything("sse").await else {
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
    let Some(s) = python("streamable-http").await else {
        return;
    };
    let (c, log, kind) = connect(&s, "/mcp", false).await;
    assert_eq!(kind, "http");
    python_checks(&c, &log).await;
    c.close().await;
}

#[tokio::test]
async fn python_sdk_over_legacy_sse() {
    let Some(s) = python("sse").await else {
        return;
    };
    let (c, log, kind) = connect(&s, "/sse", true).await;
    assert_eq!(kind, "sse");
    python_checks(&c, &log).await;
    c.close().await;
}

/// Connects over Streamable HTTP in `era`, probing without a time limit as the app does.
async fn connect_era(
    s: &Server,
    path: &str,
    era: harness9::config::ProtocolEra,
    handler: Option<Arc<super::era::Answers>>,
) -> (Client, Arc<ServerLog>, &'static str) {
    let log = Arc::new(ServerLog::default());
    let spec = harness9::mcp::transport::http::HttpSpec {
        url: format!("http://127.0.0.1:{}{path}", s.port),
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
    let Some(py) = python("streamable-http").await else {
        return;
    };
    let handler = Arc::new(super::era::Answers::default());
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
            super::era::call(&modern, tool, args.clone()).await,
            super::era::call(&legacy, tool, args).await,
            "{tool}"
        );
    }
    modern.close().await;
    legacy.close().await;

    // A fresh server: change notifications ride the listen request's answer stream.
    let Some(py) = python("streamable-http").await else {
        return;
    };
    let (modern, log, _) = connect_era(&py, "/mcp", ProtocolEra::Modern, None).await;
    super::era::listen_checks(&modern, &log).await;
    modern.close().await;

    // Legacy servers refuse the modern request with a body that is no modern error.
    let Some(streamable) = everything("streamableHttp").await else {
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
    let Some(sse) = everything("sse").await else {
        return;
    };
    let (c, _, kind) = connect_era(&sse, "/sse", ProtocolEra::Auto, None).await;
    assert_eq!((kind, c.era()), ("sse", Era::Legacy));
    c.close().await;
}

#[tokio::test]
async fn a_remote_servers_era_is_probed_once() {
    let Some(s) = everything("streamableHttp").await else {
        return;
    };
    let url = format!("http://127.0.0.1:{}/mcp", s.port);
    let project =
        super::Project::new(&json!({"mcpServers": {"remote": {"type": "http", "url": url}}}));
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
