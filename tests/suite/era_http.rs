//! The modern era over Streamable HTTP against a small modern-only server written here
//! (no SDK serves the misbehaviours on demand): the headers of every POST, tools with
//! invalid `x-mcp-header` annotations left out, `Mcp-Param-*` values, no session, no GET
//! stream, a broken answer stream sent again with a new id, and a `HeaderMismatch` answered
//! by listing the tools again.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use harness9::config::ProtocolEra;
use harness9::mcp::client::ConnectOptions;
use harness9::mcp::era::Era;
use harness9::mcp::transport::http::{self, HttpSpec};
use harness9::mcp::{Client, RequestOptions, ServerLog};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

/// One request the server saw: the request line, its headers (names in lower case) and
/// its JSON body.
#[derive(Debug, Clone)]
struct Seen {
    line: String,
    headers: Vec<(String, String)>,
    body: Value,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

type Journal = Arc<Mutex<Vec<Seen>>>;

async fn serve(listener: TcpListener, journal: Journal) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            return;
        };
        tokio::spawn(connection(stream, journal.clone()));
    }
}

async fn connection(stream: TcpStream, journal: Journal) {
    let mut reader = BufReader::new(stream);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).await.unwrap_or(0) == 0 {
            return;
        }
        let mut headers = Vec::new();
        loop {
            let mut h = String::new();
            reader.read_line(&mut h).await.unwrap();
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            let (n, v) = h.split_once(':').unwrap();
            headers.push((n.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
        let length: usize = headers
            .iter()
            .find(|(n, _)| n == "content-length")
            .map_or(0, |(_, v)| v.parse().unwrap());
        let mut body = vec![0; length];
        reader.read_exact(&mut body).await.unwrap();
        let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let seen = Seen {
            line: line.trim_end().to_string(),
            headers,
            body: body.clone(),
        };
        let (flaky_before, lists_before) = {
            let mut j = journal.lock().unwrap();
            let n = j
                .iter()
                .filter(|s| s.body["params"]["name"] == "flaky")
                .count();
            let lists = j
                .iter()
                .filter(|s| s.body["method"] == "tools/list")
                .count();
            j.push(seen.clone());
            (n, lists)
        };
        let id = body["id"].clone();
        let result = match body["method"].as_str().unwrap_or("") {
            "server/discover" => {
                json!({"resultType": "complete", "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}},
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "tiny-modern", "version": "1"}}})
            }
            "tools/list" => json!({"tools": [
                {"name": "q", "inputSchema": {"type": "object", "properties": {
                    "region": {"type": "string", "x-mcp-header": "Region"}}}},
                {"name": "bad", "inputSchema": {"type": "object", "properties": {
                    "a": {"type": "number", "x-mcp-header": "A"}}}},
                {"name": "flaky", "inputSchema": {"type": "object"}},
                // Gains a mirrored parameter after the first listing.
                {"name": "moved", "inputSchema": {"type": "object", "properties": {
                    "zone": if lists_before == 0 { json!({"type": "string"}) }
                            else { json!({"type": "string", "x-mcp-header": "Zone"}) }}}}
            ]}),
            "tools/call" if body["params"]["name"] == "flaky" && flaky_before == 0 => {
                // An answer stream that ends before its response.
                let stream = reader.get_mut();
                let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n: working\n\n";
                let _ = stream.write_all(head.as_bytes()).await;
                let _ = stream.shutdown().await;
                return;
            }
            "tools/call"
                if body["params"]["name"] == "moved" && seen.header("mcp-param-zone").is_none() =>
            {
                let text = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32020,
                    "message": "Mcp-Param-Zone header missing"}})
                .to_string();
                respond(&mut reader, "400 Bad Request", &text).await;
                continue;
            }
            "tools/call" if body["params"]["name"] == "moved" => {
                let zone = seen.header("mcp-param-zone").unwrap_or("(none)");
                json!({"content": [{"type": "text", "text": format!("zone header: {zone}")}]})
            }
            "tools/call" => {
                let region = seen.header("mcp-param-region").unwrap_or("(none)");
                json!({"content": [{"type": "text", "text": format!("region header: {region}")}]})
            }
            _ => {
                let text = json!({"jsonrpc": "2.0", "id": id,
                    "error": {"code": -32601, "message": "no"}})
                .to_string();
                respond(&mut reader, "400 Bad Request", &text).await;
                continue;
            }
        };
        let text = json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
        respond(&mut reader, "200 OK", &text).await;
    }
}

async fn respond(reader: &mut BufReader<TcpStream>, status: &str, body: &str) {
    let head = format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    let stream = reader.get_mut();
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body.as_bytes()).await.unwrap();
}

#[tokio::test]
async fn modern_http_headers_invalid_tools_and_a_broken_stream() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let journal = Journal::default();
    tokio::spawn(serve(listener, journal.clone()));

    let log = Arc::new(ServerLog::default());
    let spec = HttpSpec {
        url: format!("http://127.0.0.1:{port}/mcp"),
        headers: Vec::new(),
        max_message_bytes: harness9::config::DEFAULT_MAX_MESSAGE_BYTES,
        auth: None,
    };
    let (conn, _) = http::connect(&spec, log.clone()).unwrap();
    let opts = ConnectOptions {
        era: ProtocolEra::Auto,
        probe_timeout: None,
        ..ConnectOptions::default()
    };
    let client = tokio::time::timeout(
        Duration::from_secs(10),
        Client::connect_opts(conn, "tiny", log.clone(), opts),
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(client.era(), Era::Modern);
    assert_eq!(client.server_info().name, "tiny-modern");

    let tools = client.list_tools(None).await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, vec!["q", "flaky", "moved"]);
    assert!(log.tail(20).iter().any(|l| l.text
        == "the tool \"bad\" is not offered: x-mcp-header \"A\" is on a parameter of type number"));

    let call = |tool: &'static str, args: Value| {
        let client = &client;
        async move {
            let opts = RequestOptions {
                timeout: Some(Duration::from_secs(10)),
                ..Default::default()
            };
            client
                .call_tool(tool, Some(args), opts)
                .await
                .unwrap()
                .to_text()
        }
    };
    assert_eq!(
        call("q", json!({"region": "Zürich"})).await,
        "region header: =?base64?WsO8cmljaA==?="
    );
    assert_eq!(
        call("q", json!({"region": "us-west1"})).await,
        "region header: us-west1"
    );
    assert_eq!(
        call("q", json!({"region": null})).await,
        "region header: (none)"
    );
    assert_eq!(call("flaky", json!({})).await, "region header: (none)");
    // HeaderMismatch: the tools are listed again, and the call retried with the header.
    let mut events = client.events();
    assert_eq!(
        call("moved", json!({"zone": "eu"})).await,
        "zone header: eu"
    );
    assert_eq!(
        events.try_recv().unwrap(),
        harness9::mcp::ClientEvent::ToolsChanged
    );
    client.close().await;

    let seen = journal.lock().unwrap().clone();
    for s in &seen {
        assert!(s.line.starts_with("POST /mcp "), "{}", s.line);
        assert_eq!(s.header("mcp-protocol-version"), Some("2026-07-28"));
        assert_eq!(s.header("mcp-method"), s.body["method"].as_str());
        assert_eq!(s.header("mcp-session-id"), None);
        let meta = &s.body["params"]["_meta"];
        assert_eq!(
            meta["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
        if s.body["method"] == "tools/call" {
            assert_eq!(s.header("mcp-name"), s.body["params"]["name"].as_str());
        } else {
            assert_eq!(s.header("mcp-name"), None);
        }
    }
    let methods: Vec<&str> = seen
        .iter()
        .map(|s| s.body["method"].as_str().unwrap())
        .collect();
    assert_eq!(
        methods,
        vec![
            "server/discover",
            "tools/list",
            "tools/call",
            "tools/call",
            "tools/call",
            "tools/call",
            "tools/call",
            "tools/call",
            "tools/list",
            "tools/call"
        ]
    );
    // The broken call was sent again, with a new id.
    let flaky: Vec<&Value> = seen
        .iter()
        .filter(|s| s.body["params"]["name"] == "flaky")
        .map(|s| &s.body["id"])
        .collect();
    assert_eq!(flaky.len(), 2);
    assert_ne!(flaky[0], flaky[1]);
}
