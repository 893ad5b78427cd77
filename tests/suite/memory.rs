//! The client against a scripted peer over the in-memory transport: exact bytes on the wire.

use std::time::Duration;

use harness9::mcp::transport::memory::{self, MemoryPeer};
use harness9::mcp::transport::Inbound;
use harness9::mcp::{Client, RequestOptions, ServerLog};
use serde_json::json;

use super::support::memory::{next_message, send};

/// Connects a client, playing the server's side of the handshake.
async fn connected() -> (Client, MemoryPeer) {
    let (conn, mut peer) = memory::pair();
    let connect = tokio::spawn(Client::connect(
        conn,
        "mem",
        std::sync::Arc::new(ServerLog::default()),
    ));
    let init = next_message(&mut peer).await;
    assert_eq!(init["method"], "initialize");
    assert_eq!(init["params"]["protocolVersion"], "2025-11-25");
    assert_eq!(init["params"]["clientInfo"]["name"], "harness9");
    assert!(init["params"]["clientInfo"]["version"].is_string());
    // A ping before the handshake completes is answered.
    send(
        &peer,
        json!({"jsonrpc": "2.0", "id": "early", "method": "ping"}),
    );
    assert_eq!(
        next_message(&mut peer).await,
        json!({"jsonrpc": "2.0", "id": "early", "result": {}})
    );
    send(
        &peer,
        json!({"result": {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "mem", "version": "1"}}, "jsonrpc": "2.0", "id": init["id"]}),
    );
    let client = connect.await.unwrap().unwrap();
    assert_eq!(
        next_message(&mut peer).await,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
    );
    (client, peer)
}

#[tokio::test]
async fn timeout_sends_cancelled_and_ignores_late_answer() {
    let (client, mut peer) = connected().await;
    let opts = RequestOptions {
        timeout: Some(Duration::from_millis(100)),
        ..Default::default()
    };
    let call = client.call_tool("slow", None, opts);
    let (result, req) = tokio::join!(call, next_message(&mut peer));
    assert!(result.is_err());
    assert_eq!(req["method"], "tools/call");
    let cancel = next_message(&mut peer).await;
    assert_eq!(
        cancel,
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": req["id"], "reason": "timed out"}})
    );
    // The late answer is dropped; the next request gets its own answer.
    send(
        &peer,
        json!({"jsonrpc": "2.0", "id": req["id"], "result": {"content": [{"type": "text", "text": "late"}]}}),
    );
    let call = client.call_tool("quick", None, RequestOptions::default());
    let answer = async {
        let req = next_message(&mut peer).await;
        send(
            &peer,
            json!({"jsonrpc": "2.0", "id": req["id"], "result": {"content": [{"type": "text", "text": "fresh"}]}}),
        );
    };
    let (r, ()) = tokio::join!(call, answer);
    assert_eq!(r.unwrap().to_text(), "fresh");
}

#[tokio::test]
async fn dropping_a_call_cancels_it() {
    let (client, mut peer) = connected().await;
    let call = client.call_tool("slow", None, RequestOptions::default());
    let req = tokio::select! {
        _ = call => unreachable!("never answered"),
        req = next_message(&mut peer) => req,
    };
    // `call` was dropped by select!: the server hears about it.
    let cancel = next_message(&mut peer).await;
    assert_eq!(cancel["method"], "notifications/cancelled");
    assert_eq!(cancel["params"]["requestId"], req["id"]);
    assert_eq!(cancel["params"]["reason"], "cancelled by the user");
}

#[tokio::test]
async fn unknown_server_requests_get_method_not_found_and_batches_are_read() {
    let (client, mut peer) = connected().await;
    send(
        &peer,
        json!({"jsonrpc": "2.0", "id": 7, "method": "roots/list"}),
    );
    let answer = next_message(&mut peer).await;
    assert_eq!(answer["id"], 7);
    assert_eq!(answer["error"]["code"], -32601);
    // A batch (2025-03-26 allowed them) holding two answers.
    let a = client.call_tool("a", None, RequestOptions::default());
    let b = client.call_tool("b", None, RequestOptions::default());
    let serve = async {
        let ra = next_message(&mut peer).await;
        let rb = next_message(&mut peer).await;
        send(
            &peer,
            json!([
                {"jsonrpc": "2.0", "id": rb["id"], "result": {"content": [{"type": "text", "text": "B"}]}},
                {"jsonrpc": "2.0", "id": ra["id"], "result": {"content": [{"type": "text", "text": "A"}], "isError": true}}
            ]),
        );
    };
    let (a, b, ()) = tokio::join!(a, b, serve);
    let a = a.unwrap();
    assert_eq!((a.to_text(), a.is_error), ("A".to_string(), true));
    assert_eq!(b.unwrap().to_text(), "B");
}

#[tokio::test]
async fn closing_fails_everything_pending_with_the_reason() {
    let (client, mut peer) = connected().await;
    let call = client.call_tool("x", None, RequestOptions::default());
    let close = async {
        next_message(&mut peer).await;
        peer.to_client
            .send(Inbound::Closed("the server exited with status 9".into()))
            .unwrap();
    };
    let (r, ()) = tokio::join!(call, close);
    assert_eq!(
        r.unwrap_err().to_string(),
        "the server exited with status 9"
    );
    assert_eq!(
        client.closed_reason().as_deref(),
        Some("the server exited with status 9")
    );
}

#[tokio::test]
async fn unknown_content_types_are_kept() {
    let (client, mut peer) = connected().await;
    let call = client.call_tool("x", None, RequestOptions::default());
    let serve = async {
        let r = next_message(&mut peer).await;
        send(
            &peer,
            json!({"jsonrpc": "2.0", "id": r["id"], "result": {"content": [{"type": "hologram", "frames": 3}, {"type": "text", "text": "t", "annotations": {"priority": 1}}]}}),
        );
    };
    let (r, ()) = tokio::join!(call, serve);
    let r = r.unwrap();
    assert_eq!(r.content.len(), 2);
    assert_eq!(r.to_text(), "{\"type\":\"hologram\",\"frames\":3}\nt");
}
