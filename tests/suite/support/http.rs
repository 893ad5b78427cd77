//! Our HTTP fixture server (`mcp-http-fixture`) and a client of a server over HTTP.

use std::sync::Arc;
use std::time::Duration;

use harness9::mcp::auth::Authorizer;
use harness9::mcp::transport::http::{self, HttpSpec, TransportKind};
use harness9::mcp::{Client, ClientError, ServerLog};
use serde_json::Value;
use tokio::io::AsyncBufReadExt;

use super::bins::http_fixture_bin;
use super::wait::poll_for_async;

/// A running `mcp-http-fixture`, killed on drop.
pub struct Fixture {
    _child: tokio::process::Child,
    pub base: String,
}

impl Fixture {
    pub async fn start() -> Fixture {
        Fixture::start_with(&[]).await
    }

    pub async fn start_with(args: &[&str]) -> Fixture {
        let mut child = tokio::process::Command::new(http_fixture_bin())
            .args(args)
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn mcp-http-fixture");
        let stdout = child.stdout.take().unwrap();
        let mut lines = tokio::io::BufReader::new(stdout).lines();
        let base = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
            .await
            .expect("fixture prints its url")
            .unwrap()
            .expect("a url line");
        Fixture {
            _child: child,
            base,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Every request the fixture saw, in order (and its notes).
    pub async fn journal(&self) -> Vec<Value> {
        reqwest::get(self.url("/journal"))
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    /// Waits until some journal entry satisfies `f`.
    pub async fn wait_journal(&self, what: &str, f: impl Fn(&Value) -> bool) -> Vec<Value> {
        poll_for_async(
            &format!("the journal to show {what}"),
            Duration::from_secs(10),
            || async {
                let j = self.journal().await;
                if j.iter().any(&f) {
                    Ok(j)
                } else {
                    Err(format!("{j:#?}"))
                }
            },
        )
        .await
    }
}

/// A client of the server at `url` over Streamable HTTP (or the legacy HTTP+SSE transport).
pub async fn connect_http(
    url: &str,
    headers: &[(&str, &str)],
    legacy: bool,
) -> Result<(Client, Arc<ServerLog>, TransportKind), ClientError> {
    connect_http_auth(url, headers, None, legacy).await
}

/// [`connect_http`] with an authorizer for the transport.
pub async fn connect_http_auth(
    url: &str,
    headers: &[(&str, &str)],
    auth: Option<Arc<Authorizer>>,
    legacy: bool,
) -> Result<(Client, Arc<ServerLog>, TransportKind), ClientError> {
    let log = Arc::new(ServerLog::default());
    let spec = HttpSpec {
        url: url.into(),
        headers: headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        max_message_bytes: harness9::config::DEFAULT_MAX_MESSAGE_BYTES,
        auth,
    };
    let (conn, kind) = if legacy {
        http::connect_sse(&spec, log.clone())
    } else {
        http::connect(&spec, log.clone())
    }
    .expect("transport opens");
    let client = tokio::time::timeout(
        Duration::from_secs(20),
        Client::connect(conn, "test", log.clone()),
    )
    .await
    .expect("handshake within 20 s")?;
    Ok((client, log, kind))
}
