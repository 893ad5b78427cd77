use super::*;
use crate::protocol::types::Content;
use crate::transport::memory::{self, MemoryPeer};

async fn next_id(peer: &mut MemoryPeer) -> u64 {
    let bytes = peer.from_client.recv().await.expect("a request");
    let v: Value = serde_json::from_slice(&bytes).unwrap();
    v["id"].as_u64().expect("a request id")
}

fn send_raw(peer: &MemoryPeer, text: String) {
    peer.to_client
        .send(Inbound::Message(text.into_bytes()))
        .unwrap();
}

async fn connected() -> (Client, MemoryPeer) {
    let (conn, mut peer) = memory::pair();
    let connect = tokio::spawn(Client::connect(conn, "mem", Arc::default()));
    let id = next_id(&mut peer).await;
    send_raw(
        &peer,
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"protocolVersion":"2025-11-25","capabilities":{{"tools":{{}}}}}}}}"#
        ),
    );
    let client = connect.await.unwrap().unwrap();
    peer.from_client.recv().await.expect("initialized");
    (client, peer)
}

/// Calls `echo` and answers it with `answer(id)`.
async fn call_answered(
    client: &Client,
    peer: &mut MemoryPeer,
    answer: impl Fn(u64) -> String,
) -> Result<CallToolResult, ClientError> {
    let call = client.call_tool("echo", None, RequestOptions::default());
    let serve = async {
        let id = next_id(peer).await;
        send_raw(peer, answer(id));
    };
    let (result, ()) = tokio::join!(call, serve);
    result
}

const TEXT: &str = r#"{"content":[{"type":"text","text":"hi"}]}"#;

fn hi() -> CallToolResult {
    CallToolResult {
        content: vec![Content::Text { text: "hi".into() }],
        ..Default::default()
    }
}

#[tokio::test]
async fn answers_of_every_shape_reach_the_caller() {
    let (client, mut peer) = connected().await;
    let shapes: Vec<Box<dyn Fn(u64) -> String>> = vec![
        Box::new(|id| format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{TEXT}}}"#)),
        Box::new(|id| format!(r#"{{"result":{TEXT},"jsonrpc":"2.0","id":{id}}}"#)),
        Box::new(|id| format!(r#"  {{ "id": {id}, "jsonrpc": "2.0", "result": {TEXT} }} "#)),
        // Looks plain up to the result, but has a member after it.
        Box::new(|id| format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{TEXT},"x":1}}"#)),
        Box::new(|id| format!(r#"[{{"jsonrpc":"2.0","id":{id},"result":{TEXT}}}]"#)),
    ];
    for shape in shapes {
        let result = call_answered(&client, &mut peer, shape).await.unwrap();
        assert_eq!(result, hi());
    }
}

#[tokio::test]
async fn an_error_beside_a_result_wins() {
    let (client, mut peer) = connected().await;
    let err = call_answered(&client, &mut peer, |id| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{TEXT},"error":{{"code":-5,"message":"boom"}}}}"#
        )
    })
    .await
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "the server answered tools/call with error -5: boom"
    );
    let err = call_answered(&client, &mut peer, |id| {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":7}}}}"#)
    })
    .await
    .unwrap_err();
    assert!(matches!(err, ClientError::Invalid { .. }), "{err}");
}

#[tokio::test]
async fn raw_requests_get_exactly_the_result() {
    let (client, mut peer) = connected().await;
    for answer in [
        r#"{"jsonrpc":"2.0","id":ID,"result":{"a":[1, 2]}}"#,
        r#"{"jsonrpc":"2.0","id":ID,"result":{"a":[1, 2]},"z":null}"#,
    ] {
        let request = client.request("x/y", None, RequestOptions::default());
        let serve = async {
            let id = next_id(&mut peer).await;
            send_raw(&peer, answer.replace("ID", &id.to_string()));
        };
        let (raw, ()) = tokio::join!(request, serve);
        assert_eq!(raw.unwrap().get(), r#"{"a":[1, 2]}"#);
    }
}
