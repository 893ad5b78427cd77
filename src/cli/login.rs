//! `harness9 mcp login SERVER` and `harness9 mcp logout SERVER`: signing in to a remote
//! server and forgetting the sign-in. The authorization URL is always printed too (the
//! opener prints nothing), so a machine without a browser can finish in another one.
//! Tokens never reach the output, `--json` included.

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use harness9::host::signin::SignInError;
use harness9::manager::{ServerState, ServerStatus};
use harness9::mcp::auth::{BrowserError, Opener, SignedIn, SystemOpener};
use harness9::Harness;
use serde_json::json;

use super::{open, EXIT_FAILED, EXIT_USAGE};
use crate::ProjectArgs;

/// How long `mcp login` waits for the server to connect with its new tokens.
pub const LOGIN_CONNECT_WAIT: Duration = Duration::from_secs(30);

/// Prints the URL, then hands it to the system opener; a browser that cannot be started
/// is only a note (the URL is on the screen and the listener keeps waiting).
struct PrintingOpener;

impl Opener for PrintingOpener {
    fn open(&self, url: &str) -> BoxFuture<'static, Result<(), BrowserError>> {
        errln!(
            "Opening the sign-in page in your browser. If it does not open, visit:\n\n  {url}\n"
        );
        let opening = SystemOpener.open(url);
        Box::pin(async move {
            if let Err(e) = opening.await {
                errln!("harness9: {e}");
            }
            errln!("Waiting for you to finish signing in…");
            Ok(())
        })
    }
}

/// Checks that `server` is in `.mcp.json` before anything starts.
fn known_server(args: &ProjectArgs, server: &str) -> Result<(), i32> {
    let cfg = harness9::config::McpConfig::load_scoped(&args.project);
    if cfg.error.is_none() && !cfg.servers.contains_key(server) {
        let known: Vec<&String> = cfg.servers.keys().collect();
        let message =
            format!("no server named \"{server}\" in any config scope (servers: {known:?})");
        crate::cli::out::failure(args.json, "unknown-server", &message);
        return Err(EXIT_USAGE);
    }
    Ok(())
}

fn status_of(harness: &Harness, server: &str) -> Option<ServerStatus> {
    harness
        .manager()
        .snapshot()
        .servers
        .iter()
        .find(|s| s.name == server)
        .cloned()
}

/// What the server does after the sign-in, in words.
fn connection_line(status: Option<&ServerStatus>) -> (String, bool) {
    match status.map(|s| &s.state) {
        Some(ServerState::Connected { tools, .. }) => (format!("connected, {tools} tools"), true),
        Some(ServerState::Failed { reason, .. }) => (format!("failed: {reason}"), false),
        Some(ServerState::NeedsAuth { reason }) => {
            (format!("still needs sign-in: {reason}"), false)
        }
        Some(other) => (other.word().to_string(), false),
        None => ("not started".into(), false),
    }
}

/// The exit code of a failed sign-in or sign-out: 2 when the request itself was wrong
/// (an unknown or local server), else 1.
fn exit_code(e: &SignInError) -> i32 {
    match e {
        SignInError::UnknownServer(_)
        | SignInError::LocalSignIn(_)
        | SignInError::LocalSignOut(_) => EXIT_USAGE,
        SignInError::Unusable { .. }
        | SignInError::Disabled(_)
        | SignInError::OwnAuthorization(_)
        | SignInError::Pause(_)
        | SignInError::Auth(_) => EXIT_FAILED,
    }
}

fn scopes_text(s: &SignedIn) -> String {
    if s.scopes.is_empty() {
        "(none)".into()
    } else {
        s.scopes.join(" ")
    }
}

pub async fn login(args: ProjectArgs, server: String) -> i32 {
    if let Err(code) = known_server(&args, &server) {
        return code;
    }
    let only = [server.clone()];
    let harness = match open(&args, Some(&only)).await {
        Ok(h) => h,
        Err(code) => return code,
    };
    if let Some(ServerStatus {
        state: ServerState::AwaitingApproval,
        ..
    }) = status_of(&harness, &server)
    {
        let message = format!("server \"{server}\" is awaiting approval; run with --yes, or approve it when asked on a terminal");
        crate::cli::out::failure(args.json, "not-approved", &message);
        harness.shutdown().await;
        return EXIT_FAILED;
    }
    let outcome = harness.sign_in(&server, Arc::new(PrintingOpener)).await;
    let code = match outcome {
        Ok(signed_in) => {
            harness.manager().wait_settled(LOGIN_CONNECT_WAIT).await;
            let status = status_of(&harness, &server);
            let (connection, connected) = connection_line(status.as_ref());
            let location = harness.credentials_location();
            if args.json {
                let out = json!({
                    "server": server,
                    "signedIn": signed_in,
                    "credentials": location,
                    "status": status.as_ref().map(|s| s.state.word()),
                    "connection": connection,
                });
                crate::cli::out::json(&out);
            } else {
                outln!("Signed in to \"{server}\" with {}", signed_in.issuer);
                outln!("Scopes: {}", scopes_text(&signed_in));
                outln!("Tokens are kept in {location}");
                outln!("Server: {connection}");
            }
            if connected {
                0
            } else {
                EXIT_FAILED
            }
        }
        Err(e) => {
            let message = format!("signing in to \"{server}\" failed: {e}");
            crate::cli::out::failure(args.json, e.code(), &message);
            exit_code(&e)
        }
    };
    if let Some(w) = harness.signin().auth_context().store.warning() {
        errln!("harness9: warning: {w}");
    }
    harness.shutdown().await;
    code
}

pub async fn logout(args: ProjectArgs, server: String) -> i32 {
    if let Err(code) = known_server(&args, &server) {
        return code;
    }
    let only = [server.clone()];
    let harness = match open(&args, Some(&only)).await {
        Ok(h) => h,
        Err(code) => return code,
    };
    let code = match harness.sign_out(&server).await {
        Ok(forgot) => {
            harness.manager().wait_settled(LOGIN_CONNECT_WAIT).await;
            let status = status_of(&harness, &server);
            let location = harness.credentials_location();
            if args.json {
                let out = json!({
                    "server": server,
                    "signedOut": forgot,
                    "credentials": location,
                    "status": status.as_ref().map(|s| s.state.word()),
                });
                crate::cli::out::json(&out);
            } else if forgot {
                outln!("Signed out of \"{server}\"; its tokens were removed from {location}");
            } else {
                outln!("No sign-in was kept for \"{server}\"");
            }
            0
        }
        Err(e) => {
            let message = format!("signing out of \"{server}\" failed: {e}");
            crate::cli::out::failure(args.json, e.code(), &message);
            exit_code(&e)
        }
    };
    harness.shutdown().await;
    code
}
