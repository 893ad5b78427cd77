//! A client connected to one server over stdio.

use std::sync::Arc;
use std::time::Duration;

use harness9::mcp::handler::ClientHandler;
use harness9::mcp::transport::stdio::{self, StdioSpec};
use harness9::mcp::{Client, ClientError, RequestOptions, ServerLog};

use super::bins::fixture_bin;

/// How to start `command args` with these variables, as a server's `.mcp.json` entry would.
pub fn stdio_spec(command: &str, args: &[&str], env: &[(&str, &str)]) -> StdioSpec {
    StdioSpec {
        command: command.into(),
        args: args.iter().map(|s| s.to_string()).collect(),
        env: env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        cwd: None,
        path: None,
        max_message_bytes: harness9::config::DEFAULT_MAX_MESSAGE_BYTES,
    }
}

/// Spawns the fixture with flags and connects a client to it.
pub async fn fixture_client(flags: &[&str]) -> (Client, Arc<ServerLog>) {
    spawn_client(fixture_bin(), flags, &[])
        .await
        .expect("connect")
}

pub async fn spawn_client(
    command: &str,
    args: &[&str],
    env: &[(&str, &str)],
) -> Result<(Client, Arc<ServerLog>), ClientError> {
    spawn_client_handled(command, args, env, None).await
}

/// [`spawn_client`] with a handler for the server's requests.
pub async fn spawn_client_handled(
    command: &str,
    args: &[&str],
    env: &[(&str, &str)],
    handler: Option<Arc<dyn ClientHandler>>,
) -> Result<(Client, Arc<ServerLog>), ClientError> {
    let log = Arc::new(ServerLog::default());
    let conn = stdio::spawn(&stdio_spec(command, args, env), log.clone()).expect("spawn");
    let client = tokio::time::timeout(
        Duration::from_secs(20),
        Client::connect_with(conn, "test", log.clone(), handler),
    )
    .await
    .expect("handshake within 20 s")?;
    Ok((client, log))
}

/// Request options with a time limit far above what a passing run needs.
pub fn opts() -> RequestOptions {
    RequestOptions {
        timeout: Some(Duration::from_secs(30)),
        ..Default::default()
    }
}

/// Calls a tool through the façade on a task of its own (a server's request to the front
/// end arrives while it runs); the task gives the text of the result or of the error.
pub fn spawn_call(
    h: &Arc<harness9::Harness>,
    server: &str,
    tool: &str,
    args: serde_json::Value,
) -> tokio::task::JoinHandle<String> {
    let (h, server, tool) = (h.clone(), server.to_string(), tool.to_string());
    tokio::spawn(async move {
        match h.call_tool(&server, &tool, args, Default::default()).await {
            Ok(r) => r.to_text(),
            Err(e) => e.to_string(),
        }
    })
}
