//! Drives [`serve`] over in-memory pipes against a temporary project folder.

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};
use tokio::task::JoinHandle;

use super::serve;

struct Client {
    to_server: DuplexStream,
    from_server: Lines<BufReader<DuplexStream>>,
    server: JoinHandle<std::io::Result<()>>,
    next_id: u64,
}

impl Client {
    fn start(root: &Path) -> Self {
        let (to_server, server_in) = tokio::io::duplex(64 * 1024);
        let (server_out, from_server) = tokio::io::duplex(64 * 1024);
        let server = tokio::spawn(serve(root.to_path_buf(), server_in, server_out));
        Self {
            to_server,
            from_server: BufReader::new(from_server).lines(),
            server,
            next_id: 1,
        }
    }

    async fn send_line(&mut self, line: &str) {
        self.to_server
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
    }

    async fn recv(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(10), self.from_server.next_line())
            .await
            .expect("server did not answer in time")
            .unwrap()
            .expect("server closed its output");
        serde_json::from_str(&line).unwrap()
    }

    /// Sends a request and returns the whole response, checking its id.
    async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let message = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        self.send_line(&message.to_string()).await;
        let response = self.recv().await;
        assert_eq!(response["jsonrpc"], "2.0");
        assert_eq!(response["id"], id, "{response}");
        response
    }

    /// Calls a tool; returns `(isError, text)`.
    async fn call(&mut self, tool: &str, arguments: Value) -> (bool, String) {
        let response = self
            .request(
                "tools/call",
                json!({ "name": tool, "arguments": arguments }),
            )
            .await;
        let result = &response["result"];
        assert_eq!(result["content"][0]["type"], "text", "{response}");
        let text = result["content"][0]["text"].as_str().unwrap().to_owned();
        (result["isError"].as_bool().unwrap(), text)
    }

    /// Closes the input and checks the server ends cleanly.
    async fn finish(self) {
        drop(self.to_server);
        let outcome = tokio::time::timeout(Duration::from_secs(10), self.server).await;
        outcome
            .expect("server did not stop at EOF")
            .unwrap()
            .unwrap();
    }
}

/// A project folder with a few files, plus a separate folder outside it.
fn fixture() -> (tempfile::TempDir, tempfile::TempDir) {
    let project = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let root = project.path();
    std::fs::write(root.join("notes.txt"), "alpha\nbeta needle\ngamma\n").unwrap();
    std::fs::create_dir_all(root.join("src/deep")).unwrap();
    std::fs::write(root.join("src/lib.rs"), "// needle in lib\nfn main() {}\n").unwrap();
    std::fs::write(
        root.join("src/deep/more.rs"),
        "no match\r\nanother needle\r\n",
    )
    .unwrap();
    std::fs::write(root.join("image.bin"), b"needle\0\x01\x02binary").unwrap();
    for skipped in [".git", "node_modules", "target"] {
        std::fs::create_dir_all(root.join(skipped)).unwrap();
        std::fs::write(root.join(skipped).join("hidden.txt"), "needle\n").unwrap();
    }
    std::fs::write(outside.path().join("secret.txt"), "top secret\n").unwrap();
    (project, outside)
}

#[tokio::test]
async fn initialize_handshake_and_ping() {
    let (project, _outside) = fixture();
    let mut client = Client::start(project.path());
    let response = client
        .request(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": { "name": "t", "version": "0" },
            }),
        )
        .await;
    let result = &response["result"];
    assert_eq!(result["protocolVersion"], "2025-06-18");
    assert_eq!(result["capabilities"], json!({ "tools": {} }));
    assert_eq!(result["serverInfo"]["name"], "harness9");
    assert_eq!(result["serverInfo"]["version"], env!("CARGO_PKG_VERSION"));
    assert!(result["instructions"]
        .as_str()
        .unwrap()
        .contains("list_dir"));

    // Notifications get no answer: the next line read is the ping's response.
    client
        .send_line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .await;
    let response = client.request("ping", json!({})).await;
    assert_eq!(response["result"], json!({}));

    let response = client
        .request("initialize", json!({ "protocolVersion": "1999-01-01" }))
        .await;
    assert_eq!(response["result"]["protocolVersion"], "2025-11-25");
    let response = client.request("initialize", json!({})).await;
    assert_eq!(response["error"]["code"], -32602);
    client.finish().await;
}

#[tokio::test]
async fn tools_list_names_and_schemas() {
    let (project, _outside) = fixture();
    let mut client = Client::start(project.path());
    let response = client.request("tools/list", json!({})).await;
    let tools = response["result"]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["read_file", "list_dir", "search_text"]);
    for tool in tools {
        assert!(!tool["description"].as_str().unwrap().is_empty());
        assert_eq!(tool["inputSchema"]["type"], "object");
        assert!(tool["inputSchema"]["properties"].is_object());
        assert!(tool["inputSchema"]["required"].is_array());
        assert_eq!(tool["annotations"]["readOnlyHint"], true);
    }
    assert_eq!(tools[0]["inputSchema"]["required"], json!(["path"]));
    assert_eq!(tools[2]["inputSchema"]["required"], json!(["pattern"]));
    client.finish().await;
}

#[tokio::test]
async fn read_file_numbers_lines_and_pages() {
    let (project, _outside) = fixture();
    let mut client = Client::start(project.path());
    let (is_error, text) = client
        .call("read_file", json!({ "path": "notes.txt" }))
        .await;
    assert!(!is_error, "{text}");
    assert_eq!(text, "     1\talpha\n     2\tbeta needle\n     3\tgamma\n");

    let (is_error, text) = client
        .call(
            "read_file",
            json!({ "path": "./notes.txt", "offset": 2, "limit": 1 }),
        )
        .await;
    assert!(!is_error, "{text}");
    assert!(text.starts_with("     2\tbeta needle\n"), "{text}");
    assert!(text.contains("offset=3"), "{text}");

    let (is_error, text) = client
        .call("read_file", json!({ "path": "notes.txt", "offset": 9 }))
        .await;
    assert!(is_error && text.contains("past the end"), "{text}");
    let (is_error, text) = client
        .call("read_file", json!({ "path": "missing.txt" }))
        .await;
    assert!(is_error && text.contains("does not exist"), "{text}");
    let (is_error, text) = client
        .call("read_file", json!({ "path": "image.bin" }))
        .await;
    assert!(is_error && text.contains("binary"), "{text}");
    let (is_error, text) = client.call("read_file", json!({ "path": "src" })).await;
    assert!(is_error && text.contains("list_dir"), "{text}");
    let (is_error, text) = client.call("read_file", json!({})).await;
    assert!(is_error && text.contains("'path'"), "{text}");
    let (is_error, text) = client
        .call("read_file", json!({ "path": "notes.txt", "limit": 0 }))
        .await;
    assert!(is_error && text.contains("'limit'"), "{text}");
    client.finish().await;
}

#[tokio::test]
async fn read_file_refuses_paths_outside_root() {
    let (project, outside) = fixture();
    let mut client = Client::start(project.path());
    let (is_error, text) = client
        .call("read_file", json!({ "path": "../secret.txt" }))
        .await;
    assert!(is_error, "{text}");
    assert!(
        text.contains("path '../secret.txt' is outside the project folder"),
        "{text}"
    );

    let secret = outside.path().join("secret.txt");
    let (is_error, text) = client
        .call("read_file", json!({ "path": secret.to_str().unwrap() }))
        .await;
    assert!(
        is_error && text.contains("outside the project folder"),
        "{text}"
    );
    // Missing paths outside the root are still reported as outside.
    let (is_error, text) = client
        .call("list_dir", json!({ "path": "../../no/such/dir" }))
        .await;
    assert!(
        is_error && text.contains("outside the project folder"),
        "{text}"
    );

    // An absolute path inside the root is fine.
    let inside = project.path().join("notes.txt");
    let (is_error, text) = client
        .call("read_file", json!({ "path": inside.to_str().unwrap() }))
        .await;
    assert!(!is_error && text.contains("alpha"), "{text}");
    client.finish().await;
}

#[cfg(unix)]
#[tokio::test]
async fn symlinks_leading_outside_are_refused() {
    let (project, outside) = fixture();
    let root = project.path();
    std::os::unix::fs::symlink(outside.path().join("secret.txt"), root.join("link.txt")).unwrap();
    std::os::unix::fs::symlink(outside.path(), root.join("linkdir")).unwrap();
    std::os::unix::fs::symlink(root.join("notes.txt"), root.join("inside.txt")).unwrap();
    let mut client = Client::start(root);

    let (is_error, text) = client
        .call("read_file", json!({ "path": "link.txt" }))
        .await;
    assert!(
        is_error && text.contains("path 'link.txt' is outside the project folder"),
        "{text}"
    );
    assert!(!text.contains("top secret"));
    let (is_error, text) = client
        .call("read_file", json!({ "path": "linkdir/secret.txt" }))
        .await;
    assert!(
        is_error && text.contains("outside the project folder"),
        "{text}"
    );
    let (is_error, text) = client.call("list_dir", json!({ "path": "linkdir" })).await;
    assert!(
        is_error && text.contains("outside the project folder"),
        "{text}"
    );
    let (is_error, text) = client
        .call(
            "search_text",
            json!({ "pattern": "secret", "path": "linkdir" }),
        )
        .await;
    assert!(
        is_error && text.contains("outside the project folder"),
        "{text}"
    );
    // The walk does not follow symlinks, so the secret never shows up.
    let (is_error, text) = client
        .call("search_text", json!({ "pattern": "top secret" }))
        .await;
    assert!(!is_error && text.starts_with("No matches"), "{text}");

    let (is_error, text) = client
        .call("read_file", json!({ "path": "inside.txt" }))
        .await;
    assert!(!is_error && text.contains("alpha"), "{text}");
    client.finish().await;
}

#[tokio::test]
async fn list_dir_sorted_with_sizes() {
    let (project, _outside) = fixture();
    let mut client = Client::start(project.path());
    let (is_error, text) = client.call("list_dir", json!({})).await;
    assert!(!is_error, "{text}");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines,
        [
            "Folder '.' (6 entries):",
            ".git/",
            "image.bin  (15 bytes)",
            "node_modules/",
            "notes.txt  (24 bytes)",
            "src/",
            "target/",
        ]
    );
    let (is_error, text) = client.call("list_dir", json!({ "path": "src" })).await;
    assert!(!is_error, "{text}");
    assert_eq!(
        text,
        "Folder 'src' (2 entries):\ndeep/\nlib.rs  (30 bytes)\n"
    );
    let (is_error, text) = client
        .call("list_dir", json!({ "path": "notes.txt" }))
        .await;
    assert!(is_error && text.contains("read_file"), "{text}");
    client.finish().await;
}

#[tokio::test]
async fn search_text_finds_skips_and_caps() {
    let (project, _outside) = fixture();
    let mut client = Client::start(project.path());
    let (is_error, text) = client
        .call("search_text", json!({ "pattern": "needle" }))
        .await;
    assert!(!is_error, "{text}");
    assert_eq!(
        text,
        "notes.txt:2: beta needle\n\
         src/lib.rs:1: // needle in lib\n\
         src/deep/more.rs:2: another needle\n"
    );

    let (is_error, text) = client
        .call(
            "search_text",
            json!({ "pattern": "needle", "path": "src", "max_results": 1 }),
        )
        .await;
    assert!(!is_error, "{text}");
    assert!(
        text.starts_with("src/lib.rs:1: // needle in lib\n(stopped after 1 matches"),
        "{text}"
    );

    let (is_error, text) = client
        .call("search_text", json!({ "pattern": "NEEDLE" }))
        .await;
    assert!(!is_error && text.starts_with("No matches"), "{text}");
    // Naming a skipped folder explicitly searches it.
    let (is_error, text) = client
        .call(
            "search_text",
            json!({ "pattern": "needle", "path": "target" }),
        )
        .await;
    assert!(
        !is_error && text == "target/hidden.txt:1: needle\n",
        "{text}"
    );
    let (is_error, text) = client.call("search_text", json!({ "pattern": "" })).await;
    assert!(is_error, "{text}");
    let (is_error, text) = client
        .call("search_text", json!({ "pattern": "x", "regex": true }))
        .await;
    assert!(is_error && text.contains("'regex'"), "{text}");
    client.finish().await;
}

#[tokio::test]
async fn protocol_errors() {
    let (project, _outside) = fixture();
    let mut client = Client::start(project.path());
    let response = client
        .request(
            "tools/call",
            json!({ "name": "delete_everything", "arguments": {} }),
        )
        .await;
    assert_eq!(response["error"]["code"], -32602);
    assert!(response["error"]["message"]
        .as_str()
        .unwrap()
        .contains("delete_everything"));
    let response = client
        .request("tools/call", json!({ "arguments": {} }))
        .await;
    assert_eq!(response["error"]["code"], -32602);
    let response = client
        .request(
            "tools/call",
            json!({ "name": "read_file", "arguments": [1] }),
        )
        .await;
    assert_eq!(response["error"]["code"], -32602);
    let response = client.request("resources/list", json!({})).await;
    assert_eq!(response["error"]["code"], -32601);

    client.send_line("this is not json").await;
    let response = client.recv().await;
    assert_eq!(response["id"], Value::Null);
    assert_eq!(response["error"]["code"], -32700);
    client.send_line("[]").await;
    assert_eq!(client.recv().await["error"]["code"], -32600);
    client.send_line("").await; // blank lines are ignored
    let response = client.request("ping", Value::Null).await;
    assert_eq!(response["result"], json!({}));
    client.finish().await;
}

#[tokio::test]
async fn missing_root_is_an_error() {
    let project = tempfile::tempdir().unwrap();
    let missing = project.path().join("nope");
    let (_client, server_in) = tokio::io::duplex(64);
    let outcome = serve(missing, server_in, tokio::io::sink()).await;
    assert!(outcome.is_err());
}

#[tokio::test]
async fn large_files_need_offset_or_limit() {
    let project = tempfile::tempdir().unwrap();
    let line = "x".repeat(1023) + "\n";
    std::fs::write(project.path().join("big.txt"), line.repeat(11 * 1024)).unwrap();
    let mut client = Client::start(project.path());
    let (is_error, text) = client.call("read_file", json!({ "path": "big.txt" })).await;
    assert!(is_error && text.contains("offset and limit"), "{text}");
    let (is_error, text) = client
        .call(
            "read_file",
            json!({ "path": "big.txt", "offset": 11264, "limit": 5 }),
        )
        .await;
    assert!(!is_error && text.starts_with(" 11264\txxx"), "{text}");
    client.finish().await;
}
