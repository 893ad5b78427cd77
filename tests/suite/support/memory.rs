//! The server's side of the in-memory transport, played by the test: exact bytes on the wire.

use std::sync::Arc;

use harness9::mcp::transport::memory::{self, MemoryPeer};
use harness9::mcp::transport::Inbound;
use harness9::mcp::{Client, ServerLog};
use serde_json::{json, Value};

use super::wait::DEADLINE;

/// The next message the client sent, as JSON.
pub async fn next_message(peer: &mut MemoryPeer) -> Value {
    let bytes = tokio::time::timeout(DEADLINE, peer.from_client.recv())
        .await
        .expect("the client sent something")
        .expect("open");
    serde_json::from_slice(&bytes).unwrap()
}

/// Sends `v` to the client.
pub fn send(peer: &MemoryPeer, v: Value) {
    send_text(peer, serde_json::to_string(&v).unwrap());
}

/// Sends these exact bytes to the client.
pub fn send_text(peer: &MemoryPeer, text: String) {
    peer.to_client
        .send(Inbound::Message(text.into_bytes()))
        .unwrap();
}

/// A client connected to the test's in-memory server `mem` (legacy handshake, tools only).
pub async fn legacy_server() -> (Client, MemoryPeer) {
    let (conn, mut peer) = memory::pair();
    let connect = tokio::spawn(Client::connect(conn, "mem", Arc::new(ServerLog::default())));
    let init = next_message(&mut peer).await;
    send(
        &peer,
        json!({"jsonrpc": "2.0", "id": init["id"], "result": {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "mem", "version": "1"}}}),
    );
    let client = connect.await.unwrap().unwrap();
    let initialized = next_message(&mut peer).await;
    assert_eq!(initialized["method"], "notifications/initialized");
    (client, peer)
}
