//! The client's side of server requests and of the features beyond tools, against a test
//! peer playing the server.

use parking_lot::Mutex;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::sync::oneshot;

use super::*;
use crate::handler::{ClientHandler, HandlerFuture, Handles};
use crate::protocol::requests::{ElicitRequest, ElicitResult, Root};
use crate::transport::memory::{self, MemoryPeer};

/// Answers elicitations when the test says so; roots at once.
struct Waiting {
    answer: Mutex<Option<oneshot::Receiver<ElicitResult>>>,
    completed: Mutex<Vec<String>>,
}

impl ClientHandler for Waiting {
    fn handles(&self) -> Handles {
        Handles {
            elicitation_form: true,
            roots: true,
            roots_list_changed: true,
            ..Handles::default()
        }
    }
    fn elicit(&self, _request: ElicitRequest) -> HandlerFuture<ElicitResult> {
        let rx = self.answer.lock().take().expect("one elicitation");
        Box::pin(async move { Ok(rx.await.unwrap_or_else(|_| ElicitResult::cancel())) })
    }
    fn list_roots(&self) -> HandlerFuture<Vec<Root>> {
        Box::pin(async { Ok(vec![Root::of_path(std::path::Path::new("/p"), None)]) })
    }
    fn elicitation_complete(&self, id: &str) {
        self.completed.lock().push(id.to_string());
    }
}

async fn recv(peer: &mut MemoryPeer) -> Value {
    let bytes = tokio::time::timeout(Duration::from_secs(5), peer.from_client.recv())
        .await
        .expect("the client sent something")
        .expect("open");
    serde_json::from_slice(&bytes).unwrap()
}

fn send(peer: &MemoryPeer, v: Value) {
    peer.to_client
        .send(Inbound::Message(v.to_string().into_bytes()))
        .unwrap();
}

async fn connect(
    handler: Option<Arc<dyn ClientHandler>>,
    caps: Value,
) -> (Client, MemoryPeer, Value) {
    let (conn, mut peer) = memory::pair();
    let connect = tokio::spawn(Client::connect_with(conn, "mem", Arc::default(), handler));
    let init = recv(&mut peer).await;
    send(
        &peer,
        json!({"jsonrpc": "2.0", "id": init["id"], "result": {"protocolVersion": "2025-11-25", "capabilities": caps}}),
    );
    let client = connect.await.unwrap().unwrap();
    recv(&mut peer).await; // initialized
    (client, peer, init)
}

#[tokio::test]
async fn a_handler_waiting_for_the_user_never_blocks_the_connection() {
    let (tx, rx) = oneshot::channel();
    let handler = Arc::new(Waiting {
        answer: Mutex::new(Some(rx)),
        completed: Mutex::default(),
    });
    let (client, mut peer, init) = connect(Some(handler.clone()), json!({})).await;
    assert_eq!(
        init["params"]["capabilities"],
        json!({"elicitation": {"form": {}}, "roots": {"listChanged": true}})
    );
    send(
        &peer,
        json!({"jsonrpc": "2.0", "id": "e1", "method": "elicitation/create", "params": {
            "message": "Name?", "requestedSchema": {"type": "object", "properties": {"n": {"type": "string", "default": "x"}}}
        }}),
    );
    // While the user thinks: roots, ping, refused methods and our own requests all go on.
    send(
        &peer,
        json!({"jsonrpc": "2.0", "id": 7, "method": "roots/list"}),
    );
    assert_eq!(
        recv(&mut peer).await,
        json!({"jsonrpc": "2.0", "id": 7, "result": {"roots": [{"uri": "file:///p"}]}})
    );
    send(
        &peer,
        json!({"jsonrpc": "2.0", "id": 8, "method": "sampling/createMessage", "params": {}}),
    );
    let refused = recv(&mut peer).await;
    assert_eq!(refused["error"]["code"], -32601);
    send(
        &peer,
        json!({"jsonrpc": "2.0", "id": 9, "method": "elicitation/create", "params": {
            "mode": "url", "message": "go", "url": "https://example.com", "elicitationId": "u"
        }}),
    );
    let refused = recv(&mut peer).await;
    assert_eq!(
        refused["error"],
        json!({"code": -32602, "message": "harness9 did not announce elicitation in url mode"})
    );
    client.notify_roots_changed().unwrap();
    assert_eq!(
        recv(&mut peer).await,
        json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"})
    );
    send(
        &peer,
        json!({"jsonrpc": "2.0", "method": "notifications/elicitation/complete", "params": {"elicitationId": "u"}}),
    );
    // The user answers; the answer goes out under the request's id.
    let schema = json!({"type": "object", "properties": {"n": {"type": "string", "default": "x"}}});
    tx.send(ElicitResult::accept_form(&schema, Default::default()))
        .unwrap();
    assert_eq!(
        recv(&mut peer).await,
        json!({"jsonrpc": "2.0", "id": "e1", "result": {"action": "accept", "content": {"n": "x"}}})
    );
    assert_eq!(*handler.completed.lock(), ["u"]);
}

#[tokio::test]
async fn a_cancelled_server_request_is_not_answered() {
    let (_tx, rx) = oneshot::channel::<ElicitResult>();
    let handler = Arc::new(Waiting {
        answer: Mutex::new(Some(rx)),
        completed: Mutex::default(),
    });
    let (_client, mut peer, _) = connect(Some(handler), json!({})).await;
    send(
        &peer,
        json!({"jsonrpc": "2.0", "id": 3, "method": "elicitation/create", "params": {
            "message": "?", "requestedSchema": {"type": "object"}
        }}),
    );
    send(
        &peer,
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}}),
    );
    send(&peer, json!({"jsonrpc": "2.0", "id": 4, "method": "ping"}));
    // The next thing the client says is the ping's answer, and nothing follows it.
    assert_eq!(
        recv(&mut peer).await,
        json!({"jsonrpc": "2.0", "id": 4, "result": {}})
    );
    let more = tokio::time::timeout(Duration::from_millis(100), peer.from_client.recv()).await;
    assert!(more.is_err(), "the cancelled request was answered");
}

#[tokio::test]
async fn without_a_handler_nothing_is_announced_and_all_is_refused() {
    let (client, mut peer, init) = connect(None, json!({})).await;
    assert_eq!(init["params"]["capabilities"], json!({}));
    for method in ["elicitation/create", "roots/list", "sampling/createMessage"] {
        send(
            &peer,
            json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": {}}),
        );
        assert_eq!(recv(&mut peer).await["error"]["code"], -32601);
    }
    // Nothing listed without the capabilities, and no request sent for it.
    assert_eq!(client.list_resources(None).await.unwrap(), vec![]);
    assert_eq!(client.list_prompts(None).await.unwrap(), vec![]);
    client.notify_roots_changed().unwrap();
    let more = tokio::time::timeout(Duration::from_millis(50), peer.from_client.recv()).await;
    assert!(more.is_err());
}

#[tokio::test]
async fn listings_follow_every_page_and_stop_on_a_repeated_cursor() {
    let (client, mut peer, _) = connect(None, json!({"resources": {}, "prompts": {}})).await;
    let serve = async {
        for (cursor, next) in [(None, Some("b")), (Some("b"), None)] {
            let req = recv(&mut peer).await;
            assert_eq!(req["method"], "resources/list");
            assert_eq!(req["params"]["cursor"].as_str(), cursor);
            let name = cursor.unwrap_or("a");
            let mut result =
                json!({"resources": [{"uri": format!("demo://{name}"), "name": name}]});
            if let Some(n) = next {
                result["nextCursor"] = json!(n);
            }
            send(
                &peer,
                json!({"jsonrpc": "2.0", "id": req["id"], "result": result}),
            );
        }
        for _ in 0..2 {
            let req = recv(&mut peer).await;
            assert_eq!(req["method"], "prompts/list");
            send(
                &peer,
                json!({"jsonrpc": "2.0", "id": req["id"], "result": {"prompts": [], "nextCursor": "same"}}),
            );
        }
    };
    let list = async {
        let resources = client.list_resources(None).await.unwrap();
        let prompts = client.list_prompts(None).await.unwrap_err();
        (resources, prompts)
    };
    let ((resources, err), ()) = tokio::join!(list, serve);
    let uris: Vec<&str> = resources.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(uris, ["demo://a", "demo://b"]);
    assert_eq!(
        err.to_string(),
        "the server repeated the prompts/list cursor \"same\"; it is misbehaving (listing stopped)"
    );
}

#[tokio::test]
async fn resource_events_reach_subscribers() {
    let (client, peer, _) = connect(None, json!({})).await;
    let mut events = client.events();
    send(
        &peer,
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "demo://x"}}),
    );
    send(
        &peer,
        json!({"jsonrpc": "2.0", "method": "notifications/resources/list_changed"}),
    );
    send(
        &peer,
        json!({"jsonrpc": "2.0", "method": "notifications/prompts/list_changed"}),
    );
    assert_eq!(
        events.recv().await.unwrap(),
        ClientEvent::ResourceUpdated {
            uri: "demo://x".into()
        }
    );
    assert_eq!(events.recv().await.unwrap(), ClientEvent::ResourcesChanged);
    assert_eq!(events.recv().await.unwrap(), ClientEvent::PromptsChanged);
}
