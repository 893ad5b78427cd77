//! What a hostile or broken HTTP server cannot do to harness9, through the CLI: redirect
//! the configured headers to another origin, grow memory with one huge answer or SSE event
//! (`maxMessageBytes`), stall a call with a malformed error object, or make two tools share
//! a qualified name.

use std::process::{Command, Stdio};

use serde_json::{json, Value};

use super::support::http::Fixture;
use super::support::process::{cli_child, output_with_peak_rss, output_within};
use super::support::wait::DEADLINE;
use super::support::{stderr, stdout, Project};

/// Requests the fixture saw, without its own journal reads and notes.
async fn requests(f: &Fixture) -> Vec<Value> {
    f.journal()
        .await
        .into_iter()
        .filter(|e| e.get("method").is_some())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cross_origin_redirect_is_refused_and_the_headers_stay_home() {
    let home = Fixture::start().await;
    let elsewhere = Fixture::start().await;
    let p = Project::new(&json!({"mcpServers": {
        "away": {"type": "http", "url": home.url(&format!("/redirect?to={}", elsewhere.url("/json"))),
            "headers": {"X-Secret": "s3cret-value"}},
        "near": {"type": "http", "url": home.url("/redirect?to=/json"),
            "headers": {"X-Secret": "s3cret-value"}},
    }}));
    let o = tokio::task::spawn_blocking({
        let args = ["mcp", "tools", "away", "--yes", "--json"];
        let p_path = p.path().to_path_buf();
        let data = p.data.path().to_path_buf();
        move || {
            Command::new(super::support::harness9_bin())
                .args(args)
                .arg("--project")
                .arg(p_path)
                .env("HARNESS9_DATA_DIR", data)
                .stdin(Stdio::null())
                .output()
                .unwrap()
        }
    })
    .await
    .unwrap();
    assert_eq!(stdout(&o).trim(), "[]", "no tools from a failed server");
    let expected = format!(
        "the server redirected to {}; harness9 does not follow a redirect to another origin",
        elsewhere.base
    );
    assert!(stderr(&o).contains(&expected), "{}", stderr(&o));
    assert!(!stderr(&o).contains("s3cret-value"), "{}", stderr(&o));
    assert_eq!(requests(&elsewhere).await, Vec::<Value>::new());
    // A redirect within the origin is followed, headers and all.
    let o = tokio::task::spawn_blocking(move || {
        let o = p.cli(&["mcp", "tools", "near", "--yes", "--json"]);
        drop(p);
        o
    })
    .await
    .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let tools: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(tools
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["tool"] == "echo"));
    let seen = requests(&home).await;
    assert!(seen
        .iter()
        .any(|e| e["path"] == "/json" && e["headers"]["x-secret"] == "s3cret-value"));
}

fn limited_project(f: &Fixture) -> Project {
    Project::new(&json!({"mcpServers": {
        "j": {"type": "http", "url": f.url("/json"), "maxMessageBytes": 1_048_576},
        "s": {"type": "http", "url": f.url("/stream"), "maxMessageBytes": 1_048_576},
    }}))
}

#[tokio::test(flavor = "multi_thread")]
async fn an_answer_past_max_message_bytes_fails_its_call_without_growing_memory() {
    let f = Fixture::start().await;
    let p = limited_project(&f);
    let outcome = tokio::task::spawn_blocking(move || {
        let mut runs = Vec::new();
        for server in ["j", "s"] {
            // Under the limit: fine.
            let o = p.cli(&[
                "mcp",
                "call",
                server,
                "flood",
                r#"{"bytes": 500000}"#,
                "--yes",
            ]);
            assert_eq!(o.status.code(), Some(0), "{server}: {}", stderr(&o));
            // 400 MiB, streamed: the call fails naming the limit, memory stays flat.
            let (o, peak_kib) = output_with_peak_rss(cli_child(
                &p,
                &[
                    "mcp",
                    "call",
                    server,
                    "flood",
                    r#"{"bytes": 419430400}"#,
                    "--yes",
                ],
            ));
            runs.push((server, o, peak_kib));
        }
        runs
    })
    .await
    .unwrap();
    for (server, o, peak_kib) in outcome {
        assert_eq!(o.status.code(), Some(1), "{server}: {}", stdout(&o));
        assert!(
            stderr(&o).contains(
                "the server sent a message larger than the limit of 1 MiB (maxMessageBytes)"
            ),
            "{server}: {}",
            stderr(&o)
        );
        assert!(peak_kib < 100 * 1024, "{server}: peak RSS {peak_kib} KiB");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_malformed_error_object_fails_the_call_at_once() {
    let f = Fixture::start().await;
    let p = limited_project(&f);
    let runs = tokio::task::spawn_blocking(move || {
        ["code", "message", "string", "neither"]
            .map(|kind| {
                let args = format!(r#"{{"kind": "{kind}"}}"#);
                // Waiting for the call's time limit (a minute) would not end in time.
                let child = cli_child(&p, &["mcp", "call", "j", "bad_error", &args, "--yes"]);
                (kind, output_within(child, DEADLINE))
            })
            .to_vec()
    })
    .await
    .unwrap();
    for (kind, o) in runs {
        let expected = match kind {
            "code" => {
                r#"the server sent an invalid answer to tools/call: the error object's "code" is missing or not an integer: {"code":"oops","message":"the code is a string"}"#
            }
            "message" => {
                r#"the server sent an invalid answer to tools/call: the error object has no "message" string: {"code":-32000}"#
            }
            "string" => {
                r#"the server sent an invalid answer to tools/call: the error is not an object: "an error that is only a string""#
            }
            _ => {
                r#"the server sent an invalid answer to tools/call: the response has neither "result" nor "error""#
            }
        };
        assert_eq!(o.status.code(), Some(1), "{kind}: {}", stdout(&o));
        assert!(stderr(&o).contains(expected), "{kind}: {}", stderr(&o));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn repeated_and_colliding_tool_names_get_distinct_stable_names() {
    // The name `get weather` gets after cleaning; the fixture also lists a tool called that.
    let plain = harness9::tools::naming::assign_names(
        &[
            ("d".into(), "get weather".into()),
            ("d".into(), "get.weather".into()),
            ("d".into(), "get_weather".into()),
        ],
        &Default::default(),
    );
    let lookalike = plain[0].strip_prefix("mcp__d__").unwrap().to_string();
    let f = Fixture::start_with(&["--extra-tool", &lookalike]).await;
    let p = Project::new(&json!({"mcpServers": {"d": {"type": "http", "url": f.url("/dupes")}}}));
    let (a, b) = tokio::task::spawn_blocking(move || {
        let a = p.cli(&["mcp", "tools", "d", "--yes", "--json"]);
        let b = p.cli(&["mcp", "tools", "d", "--yes", "--json"]);
        (a, b)
    })
    .await
    .unwrap();
    assert_eq!(a.status.code(), Some(0), "{}", stderr(&a));
    assert_eq!(stdout(&a), stdout(&b), "the names are stable");
    let tools: Value = serde_json::from_str(&stdout(&a)).unwrap();
    let pairs: Vec<(String, String)> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_string(),
                t["tool"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let raw: Vec<&str> = pairs.iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(
        raw,
        vec![
            "echo",
            "get weather",
            "get.weather",
            "get_weather",
            lookalike.as_str()
        ],
        "the repeated echo is listed once"
    );
    let echo = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["tool"] == "echo")
        .unwrap();
    assert_eq!(
        echo["description"], "Return the text unchanged.",
        "the first echo wins"
    );
    let mut names: Vec<&str> = pairs.iter().map(|(n, _)| n.as_str()).collect();
    assert!(
        names
            .iter()
            .all(|n| n.len() <= 64 && n.starts_with("mcp__d__")),
        "{names:?}"
    );
    assert_eq!(names[3], "mcp__d__get_weather");
    names.sort();
    names.dedup();
    assert_eq!(names.len(), 5, "{pairs:?}");
}

#[tokio::test]
async fn a_progress_flood_is_dropped_past_the_queue_and_noted_once() {
    use harness9::mcp::transport::{memory, Inbound};
    use harness9::mcp::{Client, RequestOptions, ServerLog};
    let (conn, mut peer) = memory::pair();
    let log = std::sync::Arc::new(ServerLog::default());
    let connect = tokio::spawn(Client::connect(conn, "flood", log.clone()));
    let send = |v: Value| {
        peer.to_client
            .send(Inbound::Message(serde_json::to_vec(&v).unwrap()))
            .unwrap()
    };
    let init: Value = serde_json::from_slice(&peer.from_client.recv().await.unwrap()).unwrap();
    send(
        json!({"jsonrpc": "2.0", "id": init["id"], "result": {"protocolVersion": "2025-11-25",
        "capabilities": {"tools": {}}, "serverInfo": {"name": "flood", "version": "1"}}}),
    );
    let client = connect.await.unwrap().unwrap();
    let _initialized = peer.from_client.recv().await.unwrap();
    let (tx, mut rx) = harness9::mcp::client::progress_channel();
    let opts = RequestOptions {
        progress: Some(tx),
        ..Default::default()
    };
    let call = tokio::spawn(async move { client.call_tool("slow", None, opts).await });
    let req: Value = serde_json::from_slice(&peer.from_client.recv().await.unwrap()).unwrap();
    let token = req["params"]["_meta"]["progressToken"].clone();
    for i in 0..10_000 {
        send(json!({"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": token, "progress": i}}));
    }
    send(json!({"jsonrpc": "2.0", "id": req["id"], "result": {"content": []}}));
    call.await.unwrap().expect("the call still completes");
    let mut got = 0;
    while rx.try_recv().is_ok() {
        got += 1;
    }
    assert_eq!(got, harness9::mcp::client::PROGRESS_QUEUE);
    let notes: Vec<String> = log
        .tail(100)
        .into_iter()
        .map(|l| l.text)
        .filter(|t| t.contains("progress notifications"))
        .collect();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].contains("newer ones are dropped"), "{notes:?}");
}

#[tokio::test]
async fn a_repeated_tool_name_keeps_the_first_and_warns_in_the_server_log() {
    let f = Fixture::start().await;
    let (client, log, _) = super::support::http::connect_http(&f.url("/dupes"), &[], false)
        .await
        .unwrap();
    let tools = client.list_tools(None).await.unwrap();
    let echoes: Vec<_> = tools.iter().filter(|t| t.name == "echo").collect();
    assert_eq!(echoes.len(), 1);
    assert_eq!(
        echoes[0].description.as_deref(),
        Some("Return the text unchanged.")
    );
    let warnings: Vec<String> = log
        .tail(100)
        .into_iter()
        .map(|l| l.text)
        .filter(|t| t.contains("more than once"))
        .collect();
    assert_eq!(
        warnings,
        vec![
            "the server listed the tool \"echo\" more than once; only the first definition is used"
        ]
    );
    client.close().await;
}
