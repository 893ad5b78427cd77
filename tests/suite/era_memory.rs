//! The modern era against an in-memory peer, for the exact bytes: the probe's `_meta`, a
//! server slow to answer the probe, no fallback without a common version, and
//! `input_required` rounds (new ids, the byte-exact `requestState`, the bound on rounds).

use std::sync::Arc;

use harness9::config::ProtocolEra;
use harness9::mcp::client::ConnectOptions;
use harness9::mcp::era::Era;
use harness9::mcp::transport::memory;
use harness9::mcp::{Client, RequestOptions};
use serde_json::{json, Value};

use super::support::era::Answers;
use super::support::memory::{next_message, send_text};

async fn modern_memory() -> (Client, memory::MemoryPeer) {
    let (conn, mut peer) = memory::pair();
    let opts = ConnectOptions {
        handler: Some(Arc::new(Answers::default())),
        era: ProtocolEra::Auto,
        reopen: None,
        ..ConnectOptions::default()
    };
    let connect = tokio::spawn(Client::connect_opts(conn, "mem", Arc::default(), opts));
    let discover = next_message(&mut peer).await;
    assert_eq!(discover["method"], "server/discover");
    let meta = &discover["params"]["_meta"];
    assert_eq!(
        meta["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    assert_eq!(
        meta["io.modelcontextprotocol/clientCapabilities"],
        json!({"elicitation": {"form": {}}, "sampling": {}, "roots": {},
            "extensions": {"io.modelcontextprotocol/tasks": {}}})
    );
    assert_eq!(
        meta["io.modelcontextprotocol/clientInfo"]["name"],
        "harness9"
    );
    let id = &discover["id"];
    send_text(
        &peer,
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"supportedVersions":["2025-11-25","2026-07-28"],"capabilities":{{"tools":{{}}}},"_meta":{{"io.modelcontextprotocol/serverInfo":{{"name":"mem","version":"9"}}}}}}}}"#
        ),
    );
    let client = connect.await.unwrap().unwrap();
    (client, peer)
}

#[tokio::test]
async fn input_required_rounds_echo_the_exact_state_with_a_new_id() {
    let (client, mut peer) = modern_memory().await;
    assert_eq!(client.server_info().name, "mem");
    let call = client.call_tool("t", Some(json!({"x": 1})), RequestOptions::default());
    let serve = async {
        let first = next_message(&mut peer).await;
        assert_eq!(first["params"]["name"], "t");
        assert_eq!(
            first["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
        let id = &first["id"];
        // The state has escapes a re-serialization would change.
        send_text(
            &peer,
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"resultType":"input_required","inputRequests":{{"a":{{"method":"elicitation/create","params":{{"mode":"form","message":"Q?","requestedSchema":{{"type":"object","properties":{{"answer":{{"type":"string"}}}}}}}}}},"b":{{"method":"roots/list"}}}},"requestState":"s\u00e9\/1"}}}}"#
            ),
        );
        let bytes = peer.from_client.recv().await.expect("the retry");
        let text = String::from_utf8(bytes).unwrap();
        assert!(text.contains(r#""requestState":"s\u00e9\/1""#), "{text}");
        let retry: Value = serde_json::from_str(&text).unwrap();
        assert_ne!(retry["id"], first["id"]);
        assert_eq!(retry["params"]["arguments"], json!({"x": 1}));
        assert_eq!(
            retry["params"]["inputResponses"],
            json!({"a": {"action": "accept", "content": {"answer": "42"}},
                   "b": {"roots": [{"uri": "file:///srv/demo-project"}]}})
        );
        // A second round without inputRequests: the state alone.
        let id = &retry["id"];
        send_text(
            &peer,
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"resultType":"input_required","requestState":"two"}}}}"#
            ),
        );
        let third = next_message(&mut peer).await;
        assert_eq!(third["params"]["requestState"], "two");
        assert_eq!(third["params"].get("inputResponses"), None);
        let id = &third["id"];
        send_text(
            &peer,
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"done"}}]}}}}"#
            ),
        );
    };
    let (result, ()) = tokio::join!(call, serve);
    assert_eq!(result.unwrap().to_text(), "done");

    // An unknown resultType is an invalid answer.
    let call = client.call_tool("t", None, RequestOptions::default());
    let serve = async {
        let id = next_message(&mut peer).await["id"].clone();
        send_text(
            &peer,
            format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"resultType":"later"}}}}"#),
        );
    };
    let (result, ()) = tokio::join!(call, serve);
    assert_eq!(
        result.unwrap_err().to_string(),
        "the server sent an invalid answer to tools/call: unknown resultType \"later\""
    );

    // A server that never stops asking is given up on.
    let call = client.call_tool("t", None, RequestOptions::default());
    let serve = async {
        loop {
            let Some(bytes) = peer.from_client.recv().await else {
                break;
            };
            let v: Value = serde_json::from_slice(&bytes).unwrap();
            let id = &v["id"];
            send_text(
                &peer,
                format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"result":{{"resultType":"input_required","requestState":"again"}}}}"#
                ),
            );
        }
    };
    let result = tokio::select! {
        r = call => r,
        () = serve => unreachable!(),
    };
    assert_eq!(
        result.unwrap_err().to_string(),
        "the server sent an invalid answer to tools/call: the server still asked for input after 8 rounds; harness9 gave up"
    );
}

#[tokio::test]
async fn a_modern_server_slow_to_answer_the_probe_stays_modern() {
    let (conn, mut peer) = memory::pair();
    let connect = tokio::spawn(Client::connect_opts(
        conn,
        "mem",
        Arc::default(),
        ConnectOptions::default(),
    ));
    let discover = next_message(&mut peer).await;
    // The probe's wait ends: `initialize` comes…
    let init = next_message(&mut peer).await;
    assert_eq!(init["method"], "initialize");
    // …and the server, done starting, answers both in order, as a dual-era server does.
    let (d, i) = (&discover["id"], &init["id"]);
    send_text(
        &peer,
        format!(
            r#"{{"jsonrpc":"2.0","id":{d},"result":{{"supportedVersions":["2026-07-28"],"capabilities":{{}}}}}}"#
        ),
    );
    send_text(
        &peer,
        format!(
            r#"{{"jsonrpc":"2.0","id":{i},"error":{{"code":-32022,"message":"this connection speaks 2026-07-28"}}}}"#
        ),
    );
    let client = connect.await.unwrap().unwrap();
    assert_eq!(
        (client.era(), client.protocol_version()),
        (Era::Modern, "2026-07-28")
    );
}

#[tokio::test]
async fn a_modern_server_without_a_common_version_is_not_taken_for_legacy() {
    let (conn, mut peer) = memory::pair();
    let connect = tokio::spawn(Client::connect_opts(
        conn,
        "mem",
        Arc::default(),
        ConnectOptions::default(),
    ));
    let discover = next_message(&mut peer).await;
    let id = &discover["id"];
    send_text(
        &peer,
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32022,"message":"Unsupported protocol version","data":{{"supported":["2099-01-01"],"requested":"2026-07-28"}}}}}}"#
        ),
    );
    let err = connect.await.unwrap().err().expect("no common version");
    assert_eq!(
        err.to_string(),
        "the server speaks the modern protocol at 2099-01-01; harness9 speaks 2026-07-28. Update harness9 or the server, or set \"protocolEra\": \"legacy\" in .mcp.json if the server also speaks the legacy protocol"
    );
    // Nothing more was sent: no `initialize`.
    assert!(peer.from_client.try_recv().is_err());
}
