//! Real MCP servers over stdio: `@modelcontextprotocol/server-everything` (npm) and a server
//! written with the official Python SDK (`mcp`, PyPI), both installed by the test command.

use harness9::mcp::{Client, Content, RequestOptions, ServerLog};
use serde_json::json;
use std::sync::Arc;

use super::support::bins::{everything_bin, python_server};
use super::support::client::{opts, spawn_client};

async fn everything() -> Option<(Client, Arc<ServerLog>)> {
    let bin = everything_bin()?;
    Some(
        spawn_client(bin.to_str().unwrap(), &["stdio"], &[])
            .await
            .expect("server-everything connects"),
    )
}

async fn python() -> Option<(Client, Arc<ServerLog>)> {
    let (py, script) = python_server()?;
    Some(
        spawn_client(
            py.to_str().unwrap(),
            &[script.to_str().unwrap(), "stdio"],
            &[],
        )
        .await
        .expect("python server connects"),
    )
}

#[tokio::test]
async fn everything_handshake_list_and_calls() {
    let Some((c, _)) = everything().await else {
        return;
    };
    assert_eq!(c.protocol_version(), "2025-11-25");
    assert!(!c.server_info().name.is_empty());
    let tools = c.list_tools(None).await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    for t in [
        "echo",
        "get-sum",
        "get-tiny-image",
        "get-structured-content",
        "trigger-long-running-operation",
    ] {
        assert!(names.contains(&t), "{t} not in {names:?}");
    }
    let r = c
        .call_tool("echo", Some(json!({"message": "hi there"})), opts())
        .await
        .unwrap();
    assert_eq!(r.to_text(), "Echo: hi there");
    let r = c
        .call_tool("get-sum", Some(json!({"a": 2, "b": 3})), opts())
        .await
        .unwrap();
    assert_eq!(r.to_text(), "The sum of 2 and 3 is 5.");
    c.close().await;
}

#[tokio::test]
async fn everything_structured_image_progress_and_errors() {
    let Some((c, _)) = everything().await else {
        return;
    };
    let r = c
        .call_tool(
            "get-structured-content",
            Some(json!({"location": "Chicago"})),
            opts(),
        )
        .await
        .unwrap();
    let s = r.structured_content.expect("structured content");
    assert!(
        s["temperature"].is_number() && s["conditions"].is_string(),
        "{s}"
    );

    let r = c
        .call_tool("get-tiny-image", Some(json!({})), opts())
        .await
        .unwrap();
    let img = r.content.iter().find_map(|c| match c {
        Content::Image { data, mime_type } => Some((data.clone(), mime_type.clone())),
        Content::Text { .. }
        | Content::Audio { .. }
        | Content::ResourceLink { .. }
        | Content::Resource { .. }
        | Content::Unknown(_) => None,
    });
    let (data, mime) = img.expect("an image block");
    assert_eq!(mime, "image/png");
    assert!(data.starts_with("iVBORw0KGgo"), "PNG base64");

    let (tx, mut rx) = harness9::mcp::client::progress_channel();
    let o = RequestOptions {
        progress: Some(tx),
        ..opts()
    };
    let r = c
        .call_tool(
            "trigger-long-running-operation",
            Some(json!({"duration": 1, "steps": 3})),
            o,
        )
        .await
        .unwrap();
    assert!(
        r.to_text().starts_with("Long running operation completed."),
        "{}",
        r.to_text()
    );
    let mut steps = Vec::new();
    while let Ok(p) = rx.try_recv() {
        steps.push((p.progress, p.total));
    }
    assert_eq!(
        steps,
        vec![(1.0, Some(3.0)), (2.0, Some(3.0)), (3.0, Some(3.0))]
    );

    let r = c
        .call_tool("no-such-tool", Some(json!({})), opts())
        .await
        .unwrap();
    assert!(r.is_error);
    assert!(r.to_text().contains("not found"), "{}", r.to_text());
    c.close().await;
}

#[tokio::test]
async fn python_sdk_handshake_list_and_calls() {
    let Some((c, _)) = python().await else { return };
    assert_eq!(c.protocol_version(), "2025-11-25");
    assert_eq!(c.server_info().name, "h9-py-server");
    let tools = c.list_tools(None).await.unwrap();
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    names.sort();
    assert_eq!(
        names,
        vec![
            "add",
            "ask_client",
            "boom",
            "echo",
            "grow",
            "image",
            "notify_and_ask",
            "plan",
            "resolve_ask",
            "resolve_twice",
            "slow_count",
            "touch",
            "weather"
        ]
    );
    let r = c
        .call_tool("echo", Some(json!({"text": "π ≈ 3.14"})), opts())
        .await
        .unwrap();
    assert_eq!(r.to_text(), "π ≈ 3.14");
    c.close().await;
}

#[tokio::test]
async fn python_sdk_structured_image_progress_errors_and_logs() {
    let Some((c, log)) = python().await else {
        return;
    };
    let r = c
        .call_tool("add", Some(json!({"a": 2, "b": 3})), opts())
        .await
        .unwrap();
    assert_eq!(r.structured_content, Some(json!({"result": 5})));
    assert_eq!(r.to_text(), "5");
    let r = c
        .call_tool("weather", Some(json!({"city": "Paris"})), opts())
        .await
        .unwrap();
    assert_eq!(
        r.structured_content,
        Some(json!({"city": "Paris", "temperature": 21.5, "conditions": "sunny"}))
    );
    let tools = c.list_tools(None).await.unwrap();
    let weather = tools.iter().find(|t| t.name == "weather").unwrap();
    assert!(weather.output_schema.is_some());

    let r = c.call_tool("image", None, opts()).await.unwrap();
    assert!(
        matches!(&r.content[0], Content::Image { mime_type, .. } if mime_type == "image/png"),
        "{r:?}"
    );

    let (tx, mut rx) = harness9::mcp::client::progress_channel();
    let o = RequestOptions {
        progress: Some(tx),
        ..opts()
    };
    let r = c
        .call_tool("slow_count", Some(json!({"steps": 3})), o)
        .await
        .unwrap();
    assert_eq!(r.to_text(), "counted 3");
    let mut got = Vec::new();
    while let Ok(p) = rx.try_recv() {
        got.push((p.progress, p.message));
    }
    assert_eq!(
        got,
        vec![
            (1.0, Some("step 1/3".into())),
            (2.0, Some("step 2/3".into())),
            (3.0, Some("step 3/3".into()))
        ]
    );

    let r = c
        .call_tool("boom", Some(json!({"kind": "tool_error"})), opts())
        .await
        .unwrap();
    assert!(r.is_error);
    assert_eq!(
        r.to_text(),
        "Error executing tool boom: boom: this tool always fails"
    );
    let err = c
        .call_tool("boom", Some(json!({"kind": "protocol_error"})), opts())
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "the server answered tools/call with error -32000: boom: protocol error"
    );

    let r = c.call_tool("notify_and_ask", None, opts()).await.unwrap();
    assert_eq!(r.to_text(), "done");
    assert!(
        log.tail(50)
            .iter()
            .any(|l| l.text.contains("hello from the python server")),
        "{:?}",
        log.tail(50)
    );

    // A server request we did not declare support for is refused with -32601.
    let r = c
        .call_tool("ask_client", Some(json!({"kind": "sample"})), opts())
        .await
        .unwrap();
    assert_eq!(
        r.to_text(),
        "error: harness9 does not support \"sampling/createMessage\""
    );
    c.close().await;
}
