//! MCP Apps against the official example servers over stdio (installed by the test
//! command): their views open from the server, and a view's calls reach its own server's
//! tools (the app-only poller of the system monitor) under the permission rules, never
//! another server's.

use std::time::Duration;

use harness9::engine::permissions::PermissionStore;
use harness9::engine::ToolPermission;
use harness9::host::apps::{ViewCall, ViewReply};
use harness9::host::asks::{AskAnswer, SamplingChoice};
use harness9::Harness;
use serde_json::{json, Value};

use super::support::bins::{apps_basic_bin, apps_monitor_bin};
use super::support::wait::next_ask;
use super::support::Project;

async fn message(h: &Harness, view: &str, method: &str, params: Value) -> Result<Value, String> {
    match h.view_message(view, method, Some(params)).await {
        Ok(ViewReply::Answer { result }) => Ok(result),
        Ok(other) => Ok(serde_json::to_value(other).unwrap()),
        Err(e) => Err(e.to_string()),
    }
}

async fn handshake(h: &Harness, view: &str) {
    let init = json!({"protocolVersion": "2026-01-26", "appInfo": {"name": "example", "version": "1"},
                      "appCapabilities": {}});
    message(h, view, "ui/initialize", init).await.unwrap();
    message(h, view, "ui/notifications/initialized", json!({}))
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_examples_views_open_and_call_their_own_servers_tools() {
    let (Some(basic), Some(monitor)) = (apps_basic_bin(), apps_monitor_bin()) else {
        return;
    };
    let p = Project::new(&json!({"mcpServers": {
        "basic": {"command": basic, "args": ["--stdio"]},
        "monitor": {"command": monitor, "args": ["--stdio"]},
    }}));
    let h = p
        .harness()
        .with_permission_store(PermissionStore::in_dir(p.data.path()));
    h.enable_apps();
    h.start(None).await;
    h.manager().wait_settled(Duration::from_secs(60)).await;

    // The poller is for views only; the tools with views say so.
    let entries = h.tool_entries();
    let entry = |t: &str| {
        entries
            .iter()
            .find(|e| e.tool == t)
            .unwrap_or_else(|| panic!("{t} in {entries:?}"))
            .clone()
    };
    assert!(entry("get-time").has_view);
    assert!(entry("get-system-info").has_view);
    assert!(entry("poll-system-stats").app_only);

    // The basic example: called by hand, its view opened with the result.
    let time = h
        .call_tool("basic", "get-time", json!({}), Default::default())
        .await
        .unwrap();
    let view = h
        .open_view(
            "basic",
            "get-time",
            ViewCall {
                conversation_id: None,
                call_id: "1".into(),
                arguments: json!({}),
                result: Some(time),
            },
        )
        .await
        .unwrap();
    assert_eq!(view.resource_uri, "ui://get-time/mcp-app.html");
    let basic_origin = view.origin.clone();
    let doc = h.view_document(&view.view_id).unwrap();
    assert!(
        doc.html.to_ascii_lowercase().contains("<html"),
        "an HTML document"
    );
    assert!(doc.csp.starts_with("default-src 'none'; "), "{}", doc.csp);
    assert!(doc.csp.ends_with("object-src 'none'"), "{}", doc.csp);
    handshake(&h, &view.view_id).await;
    // Its button calls get-time: asked about (the default), approved once.
    let mut asks = h.subscribe_asks();
    let call = message(
        &h,
        &view.view_id,
        "tools/call",
        json!({"name": "get-time", "arguments": {}}),
    );
    let answer = async {
        let ask = next_ask(&mut asks, |a| a.server == "basic").await;
        h.answer_ask(ask.id, AskAnswer::Approve(SamplingChoice::default()))
            .unwrap();
    };
    let (called, ()) = tokio::join!(call, answer);
    let called = called.unwrap();
    assert!(called["structuredContent"]["time"].is_string(), "{called}");
    drop(asks);

    // The system monitor: its view polls the app-only tool, allowed by the user's rule.
    let info = h
        .call_tool("monitor", "get-system-info", json!({}), Default::default())
        .await
        .unwrap();
    let view = h
        .open_view(
            "monitor",
            "get-system-info",
            ViewCall {
                conversation_id: None,
                call_id: "2".into(),
                arguments: json!({}),
                result: Some(info),
            },
        )
        .await
        .unwrap();
    // Each server's views have an origin of their own.
    assert_ne!(view.origin, basic_origin);
    handshake(&h, &view.view_id).await;
    h.set_permission(
        "mcp__monitor__poll-system-stats",
        Some(ToolPermission::Allow),
    )
    .await
    .unwrap();
    for _ in 0..3 {
        let stats = message(
            &h,
            &view.view_id,
            "tools/call",
            json!({"name": "poll-system-stats", "arguments": {}}),
        )
        .await
        .unwrap();
        assert!(stats["structuredContent"].is_object(), "{stats}");
    }
    // Never another server's tool.
    assert_eq!(
        message(&h, &view.view_id, "tools/call", json!({"name": "get-time"})).await,
        Err("server \"monitor\" has no tool \"get-time\" a view may call".into())
    );
    h.shutdown().await;
}
