//! The client against our fixture server's misbehaviours.

use std::time::Duration;

use harness9::mcp::{ClientError, Content, RequestOptions};
use serde_json::json;

use super::support::client::{fixture_client, spawn_client};
use super::support::fixture_bin;
use super::support::wait::{poll_until_async, DEADLINE};

fn args(v: serde_json::Value) -> Option<serde_json::Value> {
    Some(v)
}

#[tokio::test]
async fn handshake_and_tools() {
    let (client, _) = fixture_client(&[]).await;
    assert_eq!(client.protocol_version(), "2025-11-25");
    assert_eq!(client.server_info().name, "mcp-fixture");
    let tools = client.list_tools(None).await.unwrap();
    let names: Vec<_> = tools.iter().map(|t| t.name.as_str()).collect();
    for expected in [
        "echo",
        "big",
        "sleep",
        "progress",
        "crash",
        "fail",
        "rich",
        "add_tool",
        "log",
        "server_request",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    let r = client
        .call_tool(
            "echo",
            args(json!({"text": "héllo\nworld"})),
            RequestOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(r.to_text(), "héllo\nworld");
    assert!(!r.is_error);
    client.close().await;
}

#[tokio::test]
async fn garbage_on_stdout_is_skipped_and_logged() {
    let (client, log) = fixture_client(&["--garbage"]).await;
    for i in 0..20 {
        let r = client
            .call_tool(
                "echo",
                args(json!({"text": format!("m{i}")})),
                RequestOptions::default(),
            )
            .await
            .unwrap();
        assert_eq!(r.to_text(), format!("m{i}"));
    }
    let lines = log.tail(1000);
    assert!(
        lines
            .iter()
            .any(|l| l.text == "skipped non-JSON stdout line: this is not json"),
        "{lines:?}"
    );
    client.close().await;
}

#[tokio::test]
async fn a_64_mib_result_arrives_intact() {
    let (client, _) = fixture_client(&[]).await;
    let n = 64 * 1024 * 1024;
    let r = client
        .call_tool("big", args(json!({"bytes": n})), RequestOptions::default())
        .await
        .unwrap();
    let text = r.to_text();
    assert_eq!(text.len(), n);
    assert!(
        text.starts_with("abcdefghij") && text.as_bytes().iter().all(|b| b.is_ascii_lowercase())
    );
    // And the other way: a 64 MiB argument echoed back.
    let big = "x".repeat(n);
    let r = client
        .call_tool(
            "echo",
            args(json!({"text": big})),
            RequestOptions::default(),
        )
        .await
        .unwrap();
    assert!(r.to_text() == big);
    client.close().await;
}

#[tokio::test]
async fn crash_mid_call_fails_pending_calls_with_status_and_stderr() {
    let (client, _) = fixture_client(&[]).await;
    // The sleep would answer in ten minutes: the calls end only if the crash fails them.
    let slow = client.call_tool(
        "sleep",
        args(json!({"ms": 600_000})),
        RequestOptions::default(),
    );
    let crash = client.call_tool("crash", None, RequestOptions::default());
    let (slow, crash) = tokio::time::timeout(DEADLINE, async { tokio::join!(slow, crash) })
        .await
        .expect("pending calls fail at once");
    for err in [slow.unwrap_err(), crash.unwrap_err()] {
        let msg = err.to_string();
        assert!(matches!(err, ClientError::Closed(_)), "{err:?}");
        assert!(msg.contains("exited with status 3"), "{msg}");
        assert!(msg.contains("fixture: crashing on purpose"), "{msg}");
    }
    // Later calls fail the same way, without waiting.
    let later = client
        .call_tool(
            "echo",
            args(json!({"text": "x"})),
            RequestOptions::default(),
        )
        .await
        .unwrap_err();
    assert!(later.to_string().contains("status 3"));
}

#[tokio::test]
async fn answers_out_of_order_reach_the_right_callers() {
    let (client, _) = fixture_client(&[]).await;
    // Polled first, the slow call is written first (a call is queued when first polled).
    let done = std::sync::Mutex::new(Vec::new());
    let slow = async {
        let r = client
            .call_tool("sleep", args(json!({"ms": 400})), RequestOptions::default())
            .await;
        done.lock().unwrap().push("slow");
        r
    };
    let fast = async {
        let r = client
            .call_tool(
                "echo",
                args(json!({"text": "fast"})),
                RequestOptions::default(),
            )
            .await;
        done.lock().unwrap().push("fast");
        r
    };
    let (slow, fast) = tokio::join!(slow, fast);
    assert_eq!(fast.unwrap().to_text(), "fast");
    assert_eq!(slow.unwrap().to_text(), "slept 400 ms");
    assert_eq!(
        *done.lock().unwrap(),
        ["fast", "slow"],
        "the fast answer came first"
    );
    client.close().await;
}

#[tokio::test]
async fn timeout_cancels_and_drops_the_late_answer() {
    let (client, _) = fixture_client(&[]).await;
    let opts = RequestOptions {
        timeout: Some(Duration::from_millis(200)),
        ..Default::default()
    };
    let err = client
        .call_tool("sleep", args(json!({"ms": 600})), opts)
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "the server did not answer tools/call within 200 ms; it was cancelled. Raise \"toolTimeoutSec\" in .mcp.json if the server needs longer"
    );
    // The late answer arrives and is dropped; the connection keeps working. The server
    // writes its answers in the order they are due: the answer to a sleep of a second,
    // asked for now, comes after the late one.
    let r = client
        .call_tool(
            "sleep",
            args(json!({"ms": 1000})),
            RequestOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(r.to_text(), "slept 1000 ms");
    let r = client
        .call_tool(
            "echo",
            args(json!({"text": "still here"})),
            RequestOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(r.to_text(), "still here");
    client.close().await;
}

#[tokio::test]
async fn progress_reaches_the_caller() {
    let (client, _) = fixture_client(&[]).await;
    let (tx, mut rx) = harness9::mcp::client::progress_channel();
    let opts = RequestOptions {
        progress: Some(tx),
        ..Default::default()
    };
    let r = client
        .call_tool("progress", args(json!({"steps": 3})), opts)
        .await
        .unwrap();
    assert_eq!(r.to_text(), "done");
    let mut got = Vec::new();
    while let Ok(p) = rx.try_recv() {
        got.push((p.progress, p.total, p.message));
    }
    assert_eq!(
        got,
        vec![
            (1.0, Some(3.0), Some("step 1 of 3".to_string())),
            (2.0, Some(3.0), Some("step 2 of 3".to_string())),
            (3.0, Some(3.0), Some("step 3 of 3".to_string())),
        ]
    );
    client.close().await;
}

#[tokio::test]
async fn server_requests_ping_answered_others_refused() {
    let (client, _) = fixture_client(&[]).await;
    let r = client
        .call_tool("server_request", None, RequestOptions::default())
        .await
        .unwrap();
    assert_eq!(r.to_text(), "ping: ok; sampling: error -32601");
    client.close().await;
}

#[tokio::test]
async fn log_notifications_go_to_the_server_log() {
    let (client, log) = fixture_client(&[]).await;
    let r = client
        .call_tool(
            "log",
            args(json!({"level": "warning", "message": "disk almost full"})),
            RequestOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(r.to_text(), "logged");
    let line = log
        .tail(10)
        .into_iter()
        .find(|l| l.text.contains("disk almost full"))
        .expect("log line");
    assert_eq!(line.level, "warning");
    assert_eq!(line.text, "[fixture] disk almost full");
    client.close().await;
}

#[tokio::test]
async fn every_content_type_is_kept() {
    let (client, _) = fixture_client(&[]).await;
    let r = client
        .call_tool("rich", None, RequestOptions::default())
        .await
        .unwrap();
    let kinds: Vec<&str> = r
        .content
        .iter()
        .map(|c| match c {
            Content::Text { .. } => "text",
            Content::Image { .. } => "image",
            Content::Audio { .. } => "audio",
            Content::ResourceLink { .. } => "resource_link",
            Content::Resource { .. } => "resource",
            Content::Unknown(_) => "unknown",
        })
        .collect();
    assert_eq!(
        kinds,
        vec!["text", "image", "audio", "resource_link", "resource"]
    );
    assert_eq!(r.structured_content, Some(json!({"answer": 42})));
    let text = r.to_text();
    assert!(text.contains("rich text part"), "{text}");
    assert!(text.contains("[image: image/png, "), "{text}");
    assert!(
        text.contains("[resource link: readme.txt <fixture://docs/readme.txt>]"),
        "{text}"
    );
    assert!(text.contains("embedded resource text"), "{text}");
    let failed = client
        .call_tool("fail", None, RequestOptions::default())
        .await
        .unwrap();
    assert!(failed.is_error);
    assert_eq!(failed.to_text(), "this tool failed");
    client.close().await;
}

#[tokio::test]
async fn pages_are_followed_and_a_repeated_cursor_stops() {
    let (whole, _) = fixture_client(&[]).await;
    let (paged, _) = fixture_client(&["--pages", "3"]).await;
    let a = whole.list_tools(None).await.unwrap();
    let b = paged.list_tools(None).await.unwrap();
    assert_eq!(a, b);
    let (bad, _) = fixture_client(&["--repeat-cursor"]).await;
    let err = bad.list_tools(None).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "the server repeated the tools/list cursor \"again\"; it is misbehaving (listing stopped)"
    );
    for c in [whole, paged, bad] {
        c.close().await;
    }
}

#[tokio::test]
async fn unsupported_protocol_versions_are_refused() {
    let err = spawn_client(fixture_bin(), &["--protocol-version", "1999-01-01"], &[])
        .await
        .err()
        .unwrap();
    assert_eq!(
        err.to_string(),
        "the server speaks MCP protocol version 1999-01-01, which harness9 does not support (it supports 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05); update the server or harness9"
    );
    let (old, _) = spawn_client(fixture_bin(), &["--protocol-version", "2024-11-05"], &[])
        .await
        .unwrap();
    assert_eq!(old.protocol_version(), "2024-11-05");
    old.close().await;
    let err = spawn_client(fixture_bin(), &["--init-error"], &[])
        .await
        .err()
        .unwrap();
    assert_eq!(
        err.to_string(),
        "the server answered initialize with error -32602: Unsupported protocol version (the server supports [\"2099-01-01\"]; harness9 supports 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05)"
    );
}

#[tokio::test]
async fn a_stderr_flood_neither_blocks_nor_grows_the_log() {
    let (client, log) = fixture_client(&["--stderr-flood", "20000000"]).await;
    for _ in 0..50 {
        let r = client
            .call_tool(
                "echo",
                args(json!({"text": "ok"})),
                RequestOptions::default(),
            )
            .await
            .unwrap();
        assert_eq!(r.to_text(), "ok");
    }
    // Once the drain has read the flood's last whole line, the buffer is still bounded.
    let last_line = {
        let (mut written, mut n) = (0u64, 0u64);
        loop {
            let len = format!("fixture: flood line {n}\n").len() as u64;
            if written + len > 20_000_000 {
                break format!("fixture: flood line {}", n - 1);
            }
            written += len;
            n += 1;
        }
    };
    poll_until_async("the flood's last line in the log", DEADLINE, || {
        log.tail(3).iter().any(|l| l.text == last_line)
    })
    .await;
    let kept: usize = log.tail(usize::MAX).iter().map(|l| l.text.len()).sum();
    assert!(kept <= harness9::mcp::log::LOG_CAPACITY_BYTES, "{kept}");
    assert!(log.tail(1)[0].text.starts_with("fixture: flood line"));
    client.close().await;
}
