//! Remote servers against our HTTP fixture (`mcp-http-fixture`): the Streamable HTTP session
//! (headers, 202, session expiry, a cut stream resumed with `Last-Event-ID`, server messages
//! on the stream, timeouts and cancellation, huge events), the legacy HTTP+SSE transport, the
//! fallback, and the status messages of servers that cannot be used.

use std::time::{Duration, Instant};

use harness9::manager::{ApprovalPolicy, ServerState};
use harness9::mcp::{Client, ClientError, ClientEvent, RequestOptions};
use serde_json::{json, Value};

use super::support::client::opts;
use super::support::http::{connect_http, Fixture};
use super::support::wait::{poll_for_async, wait_for_log};
use super::support::{state_of, Project};

async fn call_text(c: &Client, tool: &str, args: Value) -> String {
    let r = c
        .call_tool(tool, Some(args), opts())
        .await
        .unwrap_or_else(|e| panic!("{tool}: {e}"));
    assert!(!r.is_error, "{tool}: {}", r.to_text());
    r.to_text()
}

fn posts<'a>(j: &'a [Value], path: &str) -> Vec<&'a Value> {
    j.iter()
        .filter(|e| e["method"] == "POST" && e["path"] == path)
        .collect()
}

fn rpc_method(e: &Value) -> &str {
    e["body"]["method"].as_str().unwrap_or("")
}

#[tokio::test]
async fn streamable_http_headers_session_202_and_delete() {
    let f = Fixture::start().await;
    let secret = "s3cr3t-value-never-shown";
    let (c, log, kind) = connect_http(&f.url("/json"), &[("X-Api-Key", secret)], false)
        .await
        .unwrap();
    assert_eq!(kind.get(), "http");
    assert_eq!(c.protocol_version(), "2025-11-25");
    assert_eq!(c.server_info().name, "mcp-http-fixture");
    let tools = c.list_tools(None).await.unwrap();
    assert!(tools.iter().any(|t| t.name == "echo"));
    assert_eq!(
        call_text(&c, "echo", json!({"text": "héllo"})).await,
        "héllo"
    );
    c.close().await;

    let j = f.journal().await;
    let p = posts(&j, "/json");
    assert_eq!(rpc_method(p[0]), "initialize");
    assert!(p[0]["headers"].get("mcp-session-id").is_none());
    assert!(p[0]["headers"].get("mcp-protocol-version").is_none());
    assert_eq!(rpc_method(p[1]), "notifications/initialized");
    for e in &p {
        assert_eq!(
            e["headers"]["accept"],
            "application/json, text/event-stream"
        );
        assert_eq!(e["headers"]["content-type"], "application/json");
    }
    for e in &p[1..] {
        assert_eq!(e["headers"]["mcp-session-id"], "sess-1", "{e}");
        assert_eq!(e["headers"]["mcp-protocol-version"], "2025-11-25", "{e}");
    }
    // Every request of any method carries the configured header.
    for e in j.iter().filter(|e| e.get("method").is_some()) {
        assert_eq!(e["headers"]["x-api-key"], secret, "{e}");
    }
    // The optional GET stream was tried (405 here) and the session ended with DELETE.
    assert!(j
        .iter()
        .any(|e| e["method"] == "GET" && e["path"] == "/json"));
    let delete = j
        .iter()
        .find(|e| e["method"] == "DELETE")
        .expect("a DELETE");
    assert_eq!(delete["headers"]["mcp-session-id"], "sess-1");
    assert!(!format!("{:?}", log.tail(100)).contains(secret));
}

#[tokio::test]
async fn stateless_server_gets_no_session_header() {
    let f = Fixture::start().await;
    let (c, _, _) = connect_http(&f.url("/stateless"), &[], false)
        .await
        .unwrap();
    assert_eq!(call_text(&c, "echo", json!({"text": "x"})).await, "x");
    c.close().await;
    let j = f.journal().await;
    for e in posts(&j, "/stateless") {
        assert!(e["headers"].get("mcp-session-id").is_none(), "{e}");
    }
    // No session: no DELETE.
    assert!(!j.iter().any(|e| e["method"] == "DELETE"));
}

#[tokio::test]
async fn sse_answers_carry_progress_logs_and_server_requests() {
    let f = Fixture::start().await;
    let (c, log, _) = connect_http(&f.url("/stream"), &[], false).await.unwrap();
    let (tx, mut rx) = harness9::mcp::client::progress_channel();
    let r = c
        .call_tool(
            "progress",
            Some(json!({"steps": 3})),
            RequestOptions {
                progress: Some(tx),
                ..opts()
            },
        )
        .await
        .unwrap();
    assert_eq!(r.to_text(), "did 3 steps");
    let mut got = Vec::new();
    while let Ok(p) = rx.try_recv() {
        got.push((p.progress, p.total));
    }
    assert_eq!(
        got,
        vec![(1.0, Some(3.0)), (2.0, Some(3.0)), (3.0, Some(3.0))]
    );

    assert_eq!(call_text(&c, "notify", json!({})).await, "notified");
    assert!(
        log.tail(50)
            .iter()
            .any(|l| l.text.contains("notify: hello on the stream")),
        "{:?}",
        log.tail(50)
    );
    // A server request on the answer stream is answered by a POST.
    assert_eq!(call_text(&c, "ask", json!({})).await, "client answered: {}");
    assert_eq!(
        call_text(&c, "sample", json!({})).await,
        "client error: harness9 does not support \"sampling/createMessage\""
    );
    // The standalone GET stream delivers server-initiated messages.
    wait_for_log(&log, "the GET stream's message", |l| {
        l.text.contains("hello from the GET stream")
    })
    .await;
    c.close().await;
    let j = f.journal().await;
    let answers: Vec<&Value> = posts(&j, "/stream")
        .into_iter()
        .filter(|e| {
            e["body"]["id"]
                .as_str()
                .is_some_and(|i| i.starts_with("srv-"))
        })
        .collect();
    assert_eq!(answers.len(), 2, "{j:#?}");
    assert_eq!(answers[0]["body"]["result"], json!({}));
    assert_eq!(answers[1]["body"]["error"]["code"], -32601);
}

#[tokio::test]
async fn expired_session_is_initialized_again_and_the_request_repeated() {
    let f = Fixture::start().await;
    let (c, _, _) = connect_http(&f.url("/expire"), &[], false).await.unwrap();
    let listed = c.list_tools(None).await.unwrap();
    let mut events = c.events();
    assert_eq!(
        call_text(&c, "expire", json!({})).await,
        "the session ends now"
    );
    // The call succeeds, once, in a new session.
    assert_eq!(
        call_text(&c, "echo", json!({"text": "again"})).await,
        "again"
    );
    // The tools were listed again in the new session; the list did not change, so no
    // change is reported and the list is the same.
    f.wait_journal("tools/list in the new session", |e| {
        rpc_method(e) == "tools/list" && e["headers"]["mcp-session-id"] == "sess-2"
    })
    .await;
    assert_eq!(c.list_tools(None).await.unwrap(), listed);
    assert!(
        tokio::time::timeout(Duration::from_millis(300), events.recv())
            .await
            .is_err(),
        "no change was reported"
    );
    c.close().await;
    let j = f.journal().await;
    let p = posts(&j, "/expire");
    let inits: Vec<&&Value> = p.iter().filter(|e| rpc_method(e) == "initialize").collect();
    assert_eq!(inits.len(), 2, "{p:#?}");
    assert!(inits[1]["headers"].get("mcp-session-id").is_none());
    let echoes: Vec<&&Value> = p
        .iter()
        .filter(|e| e["body"]["params"]["name"] == "echo")
        .collect();
    assert_eq!(echoes.len(), 2);
    assert_eq!(echoes[0]["headers"]["mcp-session-id"], "sess-1");
    assert_eq!(echoes[1]["headers"]["mcp-session-id"], "sess-2");
    assert_eq!(echoes[0]["body"]["id"], echoes[1]["body"]["id"]);
    let i = p.iter().position(|e| std::ptr::eq(*e, *inits[1])).unwrap();
    assert_eq!(rpc_method(p[i + 1]), "notifications/initialized");
    assert_eq!(p[i + 1]["headers"]["mcp-session-id"], "sess-2");
    assert_eq!(p[i + 1]["headers"]["mcp-protocol-version"], "2025-11-25");
    // Nothing but the handshake went out between the new initialize and its end.
    assert_eq!(rpc_method(p[i + 2]), "tools/call");
}

#[tokio::test]
async fn requests_lost_with_a_session_start_one_new_session_and_each_succeeds() {
    let f = Fixture::start().await;
    let (c, _, _) = connect_http(&f.url("/expire-grows"), &[], false)
        .await
        .unwrap();
    let before = c.list_tools(None).await.unwrap();
    assert!(!before.iter().any(|t| t.name == "renewed"));
    let mut events = c.events();
    call_text(&c, "expire", json!({})).await;
    let calls = (0..5).map(|i| {
        let c = &c;
        async move { call_text(c, "echo", json!({ "text": format!("call {i}") })).await }
    });
    let answers = futures::future::join_all(calls).await;
    let expected: Vec<String> = (0..5).map(|i| format!("call {i}")).collect();
    assert_eq!(answers, expected);
    // The new session lists one tool more: that change, and only it, is reported.
    let ev = tokio::time::timeout(Duration::from_secs(5), events.recv())
        .await
        .expect("a change is reported")
        .unwrap();
    assert_eq!(ev, ClientEvent::ToolsChanged);
    let after = c.list_tools(None).await.unwrap();
    assert!(after.iter().any(|t| t.name == "renewed"));
    c.close().await;
    let j = f.journal().await;
    let p = posts(&j, "/expire-grows");
    let inits = p.iter().filter(|e| rpc_method(e) == "initialize").count();
    assert_eq!(
        inits, 2,
        "one new session for every request lost with the old one"
    );
    for i in 0..5 {
        let sent: Vec<&&Value> = p
            .iter()
            .filter(|e| e["body"]["params"]["arguments"]["text"] == format!("call {i}"))
            .collect();
        assert!(
            sent.iter()
                .filter(|e| e["headers"]["mcp-session-id"] == "sess-2")
                .count()
                == 1,
            "call {i} reached the new session once: {sent:#?}"
        );
    }
}

#[tokio::test]
async fn a_cut_answer_stream_is_resumed_with_last_event_id() {
    let f = Fixture::start().await;
    let (c, _, _) = connect_http(&f.url("/cut"), &[], false).await.unwrap();
    let start = Instant::now();
    assert_eq!(
        call_text(&c, "echo", json!({"text": "resumed"})).await,
        "resumed"
    );
    // The wait before resuming is the behaviour under test: a lower bound only.
    assert!(
        start.elapsed() >= Duration::from_millis(90),
        "retry: 100 was not honoured ({:?})",
        start.elapsed()
    );
    c.close().await;
    let j = f.journal().await;
    let resume = j
        .iter()
        .find(|e| e["method"] == "GET" && e["headers"].get("last-event-id").is_some())
        .expect("a resuming GET");
    assert_eq!(resume["headers"]["last-event-id"], "cut-1");
    assert_eq!(resume["headers"]["accept"], "text/event-stream");
    assert_eq!(resume["headers"]["mcp-session-id"], "sess-1");
}

#[tokio::test]
async fn a_server_that_never_answers_times_out_and_is_cancelled() {
    let f = Fixture::start().await;
    // `hang` sends nothing; `stall` stops in the middle of its answer (a JSON body short of
    // its length, an SSE event without its end).
    let mut notes: std::collections::HashMap<&str, usize> = Default::default();
    for (path, tool) in [
        ("/json", "hang"),
        ("/stream", "hang"),
        ("/json", "stall"),
        ("/stream", "stall"),
    ] {
        let (c, _, _) = connect_http(&f.url(path), &[], false).await.unwrap();
        let err = c
            .call_tool(
                tool,
                None,
                RequestOptions {
                    timeout: Some(Duration::from_millis(300)),
                    ..Default::default()
                },
            )
            .await
            .unwrap_err();
        assert!(matches!(err, ClientError::Timeout { .. }), "{tool}: {err}");
        // The call and its cancellation, in this connection's session.
        let cancelled = |e: &Value, j: &[Value]| {
            let call = rpc_method(e) == "tools/call" && e["body"]["params"]["name"] == tool;
            call && e["path"] == path
                && j.iter().any(|c| {
                    rpc_method(c) == "notifications/cancelled"
                        && c["headers"]["mcp-session-id"] == e["headers"]["mcp-session-id"]
                        && c["body"]["params"]["requestId"] == e["body"]["id"]
                })
        };
        poll_for_async(
            &format!("{tool} on {path} to be cancelled"),
            Duration::from_secs(10),
            || async {
                let j = f.journal().await;
                if j.iter().any(|e| cancelled(e, &j)) {
                    Ok(())
                } else {
                    Err(format!("{j:#?}"))
                }
            },
        )
        .await;
        // The HTTP exchange of the cancelled request is dropped too (its connection closed).
        let closed = format!("{tool}-closed");
        *notes.entry(tool).or_insert(0) += 1;
        let want = notes[tool];
        poll_for_async(
            &format!("{want} {closed}"),
            Duration::from_secs(10),
            || async {
                let n = f
                    .journal()
                    .await
                    .iter()
                    .filter(|e| e["note"] == closed.as_str())
                    .count();
                if n >= want {
                    Ok(())
                } else {
                    Err(format!("{n} of {want}"))
                }
            },
        )
        .await;
        // The connection still works.
        assert_eq!(call_text(&c, "echo", json!({"text": "ok"})).await, "ok");
        c.close().await;
    }
}

#[tokio::test]
async fn a_16_mib_sse_event_arrives_intact() {
    let f = Fixture::start().await;
    let (c, _, _) = connect_http(&f.url("/stream"), &[], false).await.unwrap();
    let n = 16 * 1024 * 1024;
    let r = c
        .call_tool("huge", Some(json!({"bytes": n})), opts())
        .await
        .unwrap();
    let text = r.to_text();
    assert_eq!(text.len(), n);
    assert!(text.bytes().all(|b| b == b'x'));
    c.close().await;
}

#[tokio::test]
async fn legacy_sse_transport() {
    let f = Fixture::start().await;
    let (c, log, kind) = connect_http(&f.url("/legacy/sse"), &[("X-Key", "v")], true)
        .await
        .unwrap();
    assert_eq!(kind.get(), "sse");
    assert!(c.list_tools(None).await.unwrap().len() >= 5);
    assert_eq!(call_text(&c, "echo", json!({"text": "old"})).await, "old");
    assert_eq!(call_text(&c, "notify", json!({})).await, "notified");
    assert!(log
        .tail(50)
        .iter()
        .any(|l| l.text.contains("notify: hello on the stream")));
    assert_eq!(call_text(&c, "ask", json!({})).await, "client answered: {}");
    c.close().await;
    let j = f.journal().await;
    let p = posts(&j, "/legacy/messages");
    assert_eq!(rpc_method(p[0]), "initialize");
    for e in &p {
        assert_eq!(e["query"], "session=legacy-1");
        assert_eq!(e["headers"]["x-key"], "v");
        assert!(e["headers"].get("mcp-session-id").is_none());
    }
}

#[tokio::test]
async fn manager_statuses_for_remote_servers() {
    let f = Fixture::start().await;
    // A port nobody listens on.
    let closed_port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let tls_url = f.url("/json").replace("http://", "https://");
    let p = Project::new(&json!({"mcpServers": {
        "remote": {"type": "http", "url": f.url("/json"), "headers": {"Authorization": "Bearer ${H9_TEST_TOKEN:-tok-123456}"}},
        "fallback": {"type": "http", "url": f.url("/fallback")},
        "legacy": {"type": "sse", "url": f.url("/legacy/sse")},
        "unauth": {"type": "http", "url": f.url("/unauth")},
        "forbidden": {"url": f.url("/forbidden")},
        "broken": {"url": f.url("/broken")},
        "refused": {"url": format!("http://127.0.0.1:{closed_port}/mcp")},
        "tls": {"url": tls_url},
        "nothing": {"url": f.url("/nothing-here")}
    }}));
    let m = p.manager(ApprovalPolicy::AllowAll);
    m.reload(&p.config()).await;
    m.wait_settled(Duration::from_secs(20)).await;
    let snap = m.snapshot();
    let status = |n: &str| snap.servers.iter().find(|s| s.name == n).unwrap().clone();
    let reason = |n: &str| match state_of(&m, n) {
        ServerState::Failed { reason, .. } => reason,
        other @ (ServerState::Starting { .. }
        | ServerState::Connected { .. }
        | ServerState::Disabled
        | ServerState::AwaitingApproval
        | ServerState::NeedsAuth { .. }
        | ServerState::Stopped) => panic!("{n}: {other:?}"),
    };
    for n in ["remote", "fallback", "legacy"] {
        assert!(
            matches!(state_of(&m, n), ServerState::Connected { tools: 11, .. }),
            "{n}: {:?}",
            state_of(&m, n)
        );
    }
    assert_eq!(status("remote").transport, "http");
    assert_eq!(status("fallback").transport, "sse", "the fallback is shown");
    assert_eq!(status("legacy").transport, "sse");
    assert_eq!(status("unauth").transport, "http");
    // A server that asks for a Bearer token waits for sign-in; it has not failed.
    assert_eq!(
        state_of(&m, "unauth"),
        ServerState::NeedsAuth {
            reason: "not signed in".into()
        }
    );
    assert_eq!(
        reason("forbidden"),
        "the server refused access (HTTP 403 Forbidden): go away; check the credentials in \"headers\" in .mcp.json"
    );
    assert_eq!(
        reason("broken"),
        "the server failed (HTTP 500 Internal Server Error): database on fire"
    );
    let r = reason("refused");
    assert!(
        r.starts_with(&format!(
            "cannot connect to 127.0.0.1:{closed_port}: connection refused"
        )),
        "{r}"
    );
    let r = reason("tls");
    assert!(r.starts_with("TLS error talking to 127.0.0.1:"), "{r}");
    let r = reason("nothing");
    assert!(
        r.starts_with("the server has no MCP endpoint at this url (HTTP 404 Not Found)"),
        "{r}"
    );
    assert!(
        r.contains("the legacy HTTP+SSE transport did not work either"),
        "{r}"
    );
    // Tools of the fallback server are callable through the registry's client.
    let c = m.client("fallback").unwrap();
    assert_eq!(
        call_text(&c, "echo", json!({"text": "via sse"})).await,
        "via sse"
    );
    // Header values never appear in the status.
    let shown = serde_json::to_string(&*m.snapshot()).unwrap();
    assert!(!shown.contains("tok-123456"), "{shown}");
    m.shutdown().await;
    let j = f.journal().await;
    assert!(j
        .iter()
        .filter(|e| e["path"] == "/json")
        .all(|e| e["headers"]["authorization"] == "Bearer tok-123456"));
}

fn bench_opts(url: String, quick: bool) -> harness9::bench::http::HttpBenchOptions {
    harness9::bench::http::HttpBenchOptions {
        url,
        headers: Vec::new(),
        scenarios: None,
        quick,
    }
}

#[tokio::test]
async fn http_benchmark_scenarios_run_against_the_fixture() {
    let f = Fixture::start().await;
    let opts = bench_opts(f.url("/json"), true);
    for name in harness9::bench::http::HTTP_SCENARIOS {
        let o = harness9::bench::http::scenario(&opts, name).await;
        let figures = o.unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            figures["value"].as_f64().unwrap() > 0.0,
            "{name}: {figures:?}"
        );
    }
    let o = harness9::bench::http::scenario(&opts, "big_list").await;
    assert!(o
        .unwrap_err()
        .to_string()
        .contains("does not apply over HTTP"));
}

/// The figures quoted in the README: `cargo test --release --test all -- --ignored
/// http_benchmark_figures --nocapture` (JSON lines for the fixture's JSON and SSE answers).
#[tokio::test]
#[ignore]
async fn http_benchmark_figures() {
    let f = Fixture::start_with(&["--no-journal"]).await;
    for path in ["/json", "/stream"] {
        let opts = bench_opts(f.url(path), false);
        for name in ["seq_latency", "throughput"] {
            let o = harness9::bench::http::scenario(&opts, name).await;
            let mut line = harness9::bench::http::outcome_line(name, &o);
            line["path"] = json!(path);
            println!("{line}");
        }
    }
}
