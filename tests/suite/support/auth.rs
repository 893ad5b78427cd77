//! Signing in against the HTTP fixture's own authorization server, headless.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use futures::future::BoxFuture;
use harness9::mcp::auth::{
    AuthContext, AuthSettings, Authorizer, BrowserError, CredentialStore, Opener,
};
use harness9::mcp::Client;
use serde_json::json;

use super::bins::servers_dir;
use super::client::opts;
use super::http::{connect_http_auth, Fixture};
use super::server::LoopbackServer;

/// Follows the authorization endpoint's redirect to the loopback listener, like a browser
/// whose user approves at once.
pub struct Headless;

impl Opener for Headless {
    fn open(&self, url: &str) -> BoxFuture<'static, Result<(), BrowserError>> {
        let url = url.to_string();
        let failed = |e: String| BrowserError::NotShown(e);
        Box::pin(async move {
            let http = reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .map_err(|e| failed(e.to_string()))?;
            let resp = http
                .get(&url)
                .send()
                .await
                .map_err(|e| failed(e.to_string()))?;
            let to = resp
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .ok_or_else(|| failed("no redirect".into()))?
                .to_string();
            http.get(to)
                .send()
                .await
                .map_err(|e| failed(e.to_string()))?;
            Ok(())
        })
    }
}

/// Credentials kept in memory, default settings.
pub fn ctx() -> AuthContext {
    AuthContext {
        store: Arc::new(CredentialStore::memory()),
        settings: AuthSettings::default(),
    }
}

/// A client of `url` over Streamable HTTP, authorized by `auth`, with these headers.
pub async fn connect_authorized(
    url: &str,
    headers: &[(&str, &str)],
    auth: Arc<Authorizer>,
) -> Result<Client, String> {
    connect_http_auth(url, headers, Some(auth), false)
        .await
        .map(|(client, _, _)| client)
        .map_err(|e| e.to_string())
}

/// [`connect_authorized`] without headers.
pub async fn connect(url: &str, auth: Arc<Authorizer>) -> Result<Client, String> {
    connect_authorized(url, &[], auth).await
}

/// Calls the fixture's `echo` with "hi".
pub async fn echo(c: &Client) -> Result<String, String> {
    c.call_tool("echo", Some(json!({"text": "hi"})), opts())
        .await
        .map(|r| r.to_text())
        .map_err(|e| e.to_string())
}

/// The grant types of every token request the fixture saw.
pub async fn grants(fx: &Fixture) -> Vec<String> {
    fx.journal()
        .await
        .iter()
        .filter(|e| e["path"] == "/as/token")
        .filter_map(|e| e["body"].as_str())
        .filter_map(|b| {
            url::form_urlencoded::parse(b.as_bytes())
                .find(|(k, _)| k == "grant_type")
                .map(|(_, v)| v.into_owned())
        })
        .collect()
}

/// An empty POST to one of the fixture's control paths.
pub async fn post(fx: &Fixture, path: &str) {
    reqwest::Client::new()
        .post(fx.url(path))
        .send()
        .await
        .unwrap();
}

/// The access token lifetime the Python authorization server is given: short, so a test
/// sees a refresh.
pub const PY_TOKEN_TTL_SECS: u64 = 3;

/// The Python SDK's auth module (`tests/servers/py_auth_server.py`) on `port`: an
/// authorization server that approves at once, writing what it did to `events`.
pub fn python_auth_server(python: &Path, port: u16, events: &Path) -> LoopbackServer {
    let mut cmd = Command::new(python);
    cmd.arg(servers_dir().join("py_auth_server.py"))
        .args(["--port", &port.to_string()])
        .args(["--token-ttl", &PY_TOKEN_TTL_SECS.to_string()])
        .arg("--log")
        .arg(events);
    LoopbackServer::start(cmd, port)
}

/// `$BROWSER` for the tests: the redirect follower, run by the venv's python.
pub fn redirect_browser(python: &Path) -> String {
    format!(
        "'{}' '{}'",
        python.display(),
        servers_dir().join("follow-redirects.py").display()
    )
}
