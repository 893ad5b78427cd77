//! Signing in to a real server that requires it: the Python SDK's auth module
//! (`tests/servers/py_auth_server.py`: an authorization server that approves at once and
//! issues access tokens living a few seconds) on a free loopback port, driven through the
//! real CLI with a private data dir, the file credential backend and a `$BROWSER` that
//! follows the redirects back to harness9's loopback listener.

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};

use super::support::auth::{python_auth_server, redirect_browser, PY_TOKEN_TTL_SECS};
use super::support::server::free_port;
use super::support::wait::poll_until;
use super::support::{external, stderr, stdout, Project};

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn cli(project: &Project, python: &Path, args: &[&str]) -> Run {
    let args: Vec<&str> = args.iter().copied().chain(["--yes"]).collect();
    let out = project
        .command(&args)
        .env("BROWSER", redirect_browser(python))
        .output()
        .unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: stdout(&out),
        stderr: stderr(&out),
    }
}

fn count(events: &Path, what: &str) -> usize {
    std::fs::read_to_string(events)
        .unwrap_or_default()
        .lines()
        .filter(|l| *l == what)
        .count()
}

/// The access and refresh tokens in the credentials file.
fn kept_tokens(credentials: &Path) -> Vec<String> {
    let kept: Value = serde_json::from_str(&std::fs::read_to_string(credentials).unwrap()).unwrap();
    kept["tokens"]
        .as_object()
        .map(|m| m.values().cloned().collect::<Vec<_>>())
        .unwrap_or_default()
        .iter()
        .flat_map(|t| [t["accessToken"].clone(), t["refreshToken"].clone()])
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect()
}

/// When the kept access token expires, in seconds since the Unix epoch.
fn kept_expiry(credentials: &Path) -> u64 {
    let kept: Value = serde_json::from_str(&std::fs::read_to_string(credentials).unwrap()).unwrap();
    let tokens = kept["tokens"].as_object().expect("kept tokens");
    assert_eq!(tokens.len(), 1, "{kept}");
    let expiry = tokens.values().next().unwrap()["expiresAt"].as_u64();
    expiry.unwrap_or_else(|| panic!("no expiry kept: {kept}"))
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn status_of(run: &Run) -> Value {
    let rows: Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("mcp list --json printed JSON ({e}): {}", run.stdout));
    rows[0].clone()
}

#[test]
fn login_call_reuse_refresh_and_logout_against_the_python_sdk() {
    let Some(python) = external("H9_PYTHON") else {
        return;
    };
    let port = free_port();
    let scratch = tempfile::tempdir().unwrap();
    let events = scratch.path().join("events.log");
    let _server = python_auth_server(&python, port, &events);
    let url = format!("http://127.0.0.1:{port}/mcp");
    let issuer = format!("http://127.0.0.1:{port}");
    let project = Project::new(&json!({"mcpServers": {"srv": {"type": "http", "url": url}}}));
    let credentials = project.data.path().join("credentials.json");
    let mut outputs = Vec::new();

    // Not signed in: the server waits for sign-in, and nothing opened a browser.
    let list = cli(&project, &python, &["mcp", "list", "--json"]);
    assert_eq!(list.code, 0, "{}", list.stderr);
    let row = status_of(&list);
    assert_eq!(row["status"], "needs-auth", "{row}");
    let error = row["error"].as_str().unwrap();
    assert!(
        error.ends_with("; sign in with: harness9 mcp login srv"),
        "{error}"
    );
    assert_eq!(count(&events, "authorize"), 0, "mcp list opened no browser");
    let table = cli(&project, &python, &["mcp", "list"]);
    assert!(table.stdout.contains("! needs-auth"), "{}", table.stdout);
    outputs.push(list);
    outputs.push(table);
    let call = cli(
        &project,
        &python,
        &["mcp", "call", "srv", "echo", r#"{"text": "x"}"#],
    );
    assert_eq!(call.code, 1);
    assert!(
        call.stderr.contains("run `harness9 mcp login srv`"),
        "{}",
        call.stderr
    );
    assert_eq!(count(&events, "authorize"), 0, "mcp call opened no browser");
    let tools = cli(&project, &python, &["mcp", "tools"]);
    assert_eq!(tools.code, 0);
    assert_eq!(
        tools.stderr,
        "harness9: server \"srv\" needs sign-in (not signed in); run `harness9 mcp login srv`\n"
    );
    assert_eq!(
        count(&events, "authorize"),
        0,
        "mcp tools opened no browser"
    );

    // Sign in: the URL is printed, the browser stand-in follows it, the tokens are kept.
    let login = cli(&project, &python, &["mcp", "login", "srv"]);
    assert_eq!(login.code, 0, "{}\n{}", login.stdout, login.stderr);
    assert!(
        login.stderr.contains(&format!("  {issuer}/authorize?")),
        "the authorization URL is printed: {}",
        login.stderr
    );
    assert_eq!(
        login.stdout,
        format!(
            "Signed in to \"srv\" with {issuer}\nScopes: mcp:tools\nTokens are kept in a file readable only by you: {}\nServer: connected, 2 tools\n",
            credentials.display()
        )
    );
    assert_eq!(count(&events, "authorization_code"), 1);
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&credentials)
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, 0o600, "the credentials file is private");
    }
    let mut secrets = kept_tokens(&credentials);
    assert_eq!(secrets.len(), 2, "an access and a refresh token");
    outputs.push(login);

    // A new process reuses the stored token: no second sign-in.
    let call = cli(
        &project,
        &python,
        &["mcp", "call", "srv", "echo", r#"{"text": "hello"}"#],
    );
    assert_eq!(
        (call.code, call.stdout.as_str()),
        (0, "hello\n"),
        "{}",
        call.stderr
    );
    let listed = cli(&project, &python, &["mcp", "list", "--json"]);
    let row = status_of(&listed);
    assert_eq!(row["status"], "connected", "{row}");
    assert_eq!(row["signedIn"]["issuer"], issuer.as_str(), "{row}");
    assert_eq!(count(&events, "authorization_code"), 1);
    outputs.push(call);
    outputs.push(listed);

    // After the access token expired, a call still works: it was refreshed.
    let expiry = kept_expiry(&credentials);
    poll_until(
        "the kept access token to expire",
        Duration::from_secs(PY_TOKEN_TTL_SECS + 10),
        || now_secs() > expiry,
    );
    let call = cli(
        &project,
        &python,
        &["mcp", "call", "srv", "echo", r#"{"text": "again"}"#],
    );
    assert_eq!(
        (call.code, call.stdout.as_str()),
        (0, "again\n"),
        "{}",
        call.stderr
    );
    assert!(count(&events, "refresh_token") >= 1, "a refresh happened");
    assert_eq!(count(&events, "authorization_code"), 1, "no new sign-in");
    secrets.extend(kept_tokens(&credentials));
    outputs.push(call);

    // Sign out: the tokens are gone and the server needs sign-in again.
    let logout = cli(&project, &python, &["mcp", "logout", "srv"]);
    assert_eq!(logout.code, 0, "{}", logout.stderr);
    assert_eq!(
        logout.stdout,
        format!(
            "Signed out of \"srv\"; its tokens were removed from a file readable only by you: {}\n",
            credentials.display()
        )
    );
    let list = cli(&project, &python, &["mcp", "list", "--json"]);
    assert_eq!(status_of(&list)["status"], "needs-auth");
    let text = std::fs::read_to_string(&credentials).unwrap();
    assert!(!text.contains("accessToken"), "{text}");
    outputs.push(logout);
    outputs.push(list);

    // Tokens never reach the output.
    for run in &outputs {
        for secret in &secrets {
            assert!(
                !run.stdout.contains(secret.as_str()),
                "a token in: {}",
                run.stdout
            );
            assert!(
                !run.stderr.contains(secret.as_str()),
                "a token in: {}",
                run.stderr
            );
        }
    }
}

#[test]
fn login_and_logout_are_for_remote_servers_only() {
    let project = Project::new(&json!({"mcpServers": {
        "local": {"command": super::support::fixture_bin()}
    }}));
    let login = project.cli(&["mcp", "login", "local", "--yes"]);
    assert_eq!(login.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&login.stderr),
        "harness9: signing in to \"local\" failed: server \"local\" is a local (stdio) server; signing in is for remote (http or sse) servers. Give it credentials through \"env\" in .mcp.json\n"
    );
    let logout = project.cli(&["mcp", "logout", "local", "--yes"]);
    assert_eq!(logout.status.code(), Some(2));
    let unknown = project.cli(&["mcp", "login", "nope", "--yes"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&unknown.stderr),
        "harness9: no server named \"nope\" in any config scope (servers: [\"local\"])\n"
    );
    // With --json, the same failures are also error objects with their codes.
    let logout = project.cli(&["mcp", "logout", "local", "--yes", "--json"]);
    assert_eq!(logout.status.code(), Some(2));
    assert_eq!(
        serde_json::from_slice::<serde_json::Value>(&logout.stdout).unwrap(),
        json!({"error": {"code": "local-server", "message": "signing out of \"local\" failed: server \"local\" is a local (stdio) server; there is no sign-in to forget"}})
    );
    let unknown = project.cli(&["mcp", "login", "nope", "--yes", "--json"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert_eq!(
        serde_json::from_slice::<serde_json::Value>(&unknown.stdout).unwrap()["error"]["code"],
        "unknown-server"
    );
}

/// Records the server's state when the page is opened, then follows the redirects like a
/// browser that is signed in already (or fails, as a machine without a browser would).
struct RecordingOpener {
    manager: harness9::manager::Manager,
    seen: std::sync::Arc<std::sync::Mutex<Option<harness9::manager::ServerState>>>,
    works: bool,
}

impl harness9::mcp::auth::Opener for RecordingOpener {
    fn open(
        &self,
        url: &str,
    ) -> futures::future::BoxFuture<'static, Result<(), harness9::mcp::auth::BrowserError>> {
        use harness9::mcp::auth::BrowserError;
        *self.seen.lock().unwrap() = Some(super::support::state_of(&self.manager, "srv"));
        let (url, works) = (url.to_string(), self.works);
        Box::pin(async move {
            if !works {
                return Err(BrowserError::NotShown("no browser here".into()));
            }
            let answer = reqwest::get(&url)
                .await
                .map_err(|e| BrowserError::NotShown(e.to_string()))?;
            assert!(answer.status().is_success(), "{}", answer.status());
            Ok(())
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_facade_signs_in_shows_the_account_and_signs_out() {
    use harness9::manager::ServerState;
    use harness9::manager::StartPhase;
    use harness9::mcp::auth::{AuthContext, AuthSettings, CredentialStore};
    use harness9::{Harness, HarnessOptions};
    use std::sync::{Arc, Mutex};

    let Some(python) = external("H9_PYTHON") else {
        return;
    };
    let port = free_port();
    let scratch = tempfile::tempdir().unwrap();
    let events = scratch.path().join("events.log");
    let _server = python_auth_server(&python, port, &events);
    let issuer = format!("http://127.0.0.1:{port}");
    let project = Project::new(&json!({"mcpServers": {
        "srv": {"type": "http", "url": format!("{issuer}/mcp")}
    }}));
    let h = Harness::open(
        project.path(),
        HarnessOptions {
            auth: Some(AuthContext {
                store: Arc::new(CredentialStore::file(
                    scratch.path().join("credentials.json"),
                )),
                settings: AuthSettings::default(),
            }),
            ..project.harness_options()
        },
    );
    h.start(None).await;
    h.manager().wait_settled(Duration::from_secs(20)).await;
    assert!(
        matches!(
            super::support::state_of(h.manager(), "srv"),
            ServerState::NeedsAuth { .. }
        ),
        "{:?}",
        h.status()
    );

    // A sign-in that cannot open the page leaves the server waiting, with the reason.
    let seen = Arc::new(Mutex::new(None));
    let failing = RecordingOpener {
        manager: h.manager().clone(),
        seen: seen.clone(),
        works: false,
    };
    let err = h.sign_in("srv", Arc::new(failing)).await.unwrap_err();
    assert!(err.to_string().contains("no browser here"), "{err}");
    assert!(
        matches!(super::support::state_of(h.manager(), "srv"), ServerState::NeedsAuth { ref reason } if reason.contains("no browser here")),
        "{:?}",
        h.status()
    );

    let opener = RecordingOpener {
        manager: h.manager().clone(),
        seen: seen.clone(),
        works: true,
    };
    let signed = h.sign_in("srv", Arc::new(opener)).await.unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        Some(ServerState::Starting {
            phase: StartPhase::SigningIn
        }),
        "the status showed the sign-in while the page was open"
    );
    assert_eq!(signed.issuer, issuer);
    assert_eq!(signed.scopes, vec!["mcp:tools".to_string()]);
    assert!(signed.refreshable);
    super::support::wait_until(h.manager(), "connected", |s| {
        matches!(s.servers[0].state, ServerState::Connected { .. })
    })
    .await;
    let shown = h.manager().snapshot().servers[0].signed_in.clone();
    assert_eq!(shown.map(|s| s.issuer), Some(issuer.clone()));
    let result = h
        .call_tool("srv", "echo", json!({"text": "hi"}), Default::default())
        .await
        .unwrap();
    assert_eq!(result.to_text(), "hi");

    assert_eq!(h.sign_out("srv").await, Ok(true));
    super::support::wait_until(h.manager(), "needs-auth", |s| {
        matches!(s.servers[0].state, ServerState::NeedsAuth { .. })
    })
    .await;
    assert_eq!(h.manager().snapshot().servers[0].signed_in, None);
    assert_eq!(h.sign_out("srv").await, Ok(false));
    h.shutdown().await;
}
