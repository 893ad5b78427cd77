//! Sign-in sessions of remote servers: the credential store every authorizer shares, one
//! [`Authorizer`] per start of an http/sse server (through the manager's
//! [`Authorizers`] hook), and [`SignIn::sign_in`] / [`SignIn::sign_out`].
//!
//! Starting a server never opens a browser: only [`SignIn::sign_in`] is given an
//! [`Opener`]. The sign-in itself may take minutes (the user is in the browser), so it runs
//! outside the start-up timeout and never under a lock; the manager shows the server as
//! signing in meanwhile, and a stop or reload in between wins (the finished sign-in then
//! restarts nothing).

pub use crate::mcp::auth::CLIENT_METADATA_URL_ENV;

use std::sync::Arc;

use crate::config::{ServerConfig, TransportConfig};
use crate::manager::{Authorizers, Manager, ServerState, StartPhase};
use crate::mcp::auth::{self, AuthContext, Authorizer, Opener, SignedIn};
use crate::mcp::log::LogSource;

/// The sign-in service of one project's servers.
pub struct SignIn {
    auth: AuthContext,
}

/// The URL of a remote entry; `None` for a local one.
fn remote_url(cfg: &ServerConfig) -> Option<&str> {
    match &cfg.transport {
        TransportConfig::Http { url, .. } | TransportConfig::Sse { url, .. } => Some(url),
        TransportConfig::Stdio { .. } => None,
    }
}

/// Whether the entry sends its own `Authorization` header (then OAuth stays out of it).
fn has_own_authorization(cfg: &ServerConfig) -> bool {
    match &cfg.transport {
        TransportConfig::Http { headers, .. } | TransportConfig::Sse { headers, .. } => headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("authorization")),
        TransportConfig::Stdio { .. } => false,
    }
}

/// The entry of `name`, or why there is none to use.
fn entry_of(manager: &Manager, name: &str) -> Result<ServerConfig, String> {
    match manager.entry(name) {
        None => Err(format!("no server named \"{name}\" in any config scope")),
        Some(Err(e)) => Err(format!("server \"{name}\" cannot be used: {}", e.message)),
        Some(Ok(cfg)) => Ok(cfg),
    }
}

impl Authorizers for SignIn {
    fn authorizer(&self, _server: &str, cfg: &ServerConfig) -> Option<Arc<Authorizer>> {
        let url = remote_url(cfg)?;
        if has_own_authorization(cfg) {
            return None;
        }
        Some(Authorizer::new(url, cfg.oauth.clone(), self.auth.clone()))
    }
}

impl SignIn {
    pub fn new(auth: AuthContext) -> SignIn {
        SignIn { auth }
    }

    /// Where sign-in tokens are kept, in words for the user.
    pub fn credentials_location(&self) -> String {
        self.auth.store.location()
    }

    /// The shared credential store and settings.
    pub fn auth_context(&self) -> &AuthContext {
        &self.auth
    }

    /// Signs in to a remote server: shows it as signing in, runs the authorization flow
    /// with `opener` showing the page (this may take minutes), keeps the tokens and
    /// restarts the server with them. On failure the server shows `needs-auth` with the
    /// error as its reason, and the error is returned.
    pub async fn sign_in(
        &self,
        manager: &Manager,
        name: &str,
        opener: Arc<dyn Opener>,
    ) -> Result<SignedIn, String> {
        let cfg = entry_of(manager, name)?;
        if remote_url(&cfg).is_none() {
            return Err(format!(
                "server \"{name}\" is a local (stdio) server; signing in is for remote (http or sse) servers. Give it credentials through \"env\" in .mcp.json"
            ));
        }
        if cfg.disabled {
            return Err(format!(
                "server \"{name}\" is disabled; enable it in .mcp.json first"
            ));
        }
        if has_own_authorization(&cfg) {
            return Err(format!(
                "server \"{name}\" sends its own Authorization header (\"headers\" in .mcp.json); remove it to sign in instead"
            ));
        }
        let (run, cfg) = manager
            .pause(name, StartPhase::SigningIn)
            .await
            .map_err(|e| e.to_string())?;
        let url = remote_url(&cfg).unwrap_or_default().to_string();
        let log = manager.log(name);
        if let Some(log) = &log {
            log.push(
                LogSource::Host,
                "info",
                "signing in (waiting for the browser)",
            );
        }
        let outcome = auth::sign_in(&url, cfg.oauth.as_ref(), &self.auth, opener).await;
        match outcome {
            Ok(signed_in) => {
                if let Some(log) = &log {
                    log.push(
                        LogSource::Host,
                        "info",
                        &format!("signed in with {}", signed_in.issuer),
                    );
                }
                manager.resume(&run);
                Ok(signed_in)
            }
            Err(e) => {
                if let Some(log) = &log {
                    log.push(LogSource::Host, "error", &format!("sign-in failed: {e}"));
                }
                manager.needs_sign_in(&run, e.to_string());
                Err(e.to_string())
            }
        }
    }

    /// Forgets the tokens kept for a remote server and restarts it (it then shows
    /// `needs-auth`). `Ok(true)` when tokens were kept.
    pub async fn sign_out(&self, manager: &Manager, name: &str) -> Result<bool, String> {
        let cfg = entry_of(manager, name)?;
        let Some(url) = remote_url(&cfg) else {
            return Err(format!(
                "server \"{name}\" is a local (stdio) server; there is no sign-in to forget"
            ));
        };
        let was_running = manager.state(name).is_some_and(|s| {
            !matches!(
                s,
                ServerState::Stopped | ServerState::Disabled | ServerState::AwaitingApproval
            )
        });
        // End the connection first: closing it may still refresh (and keep) a token.
        if was_running {
            manager.stop(name).await;
        }
        let forgot = auth::sign_out(url, &self.auth)
            .await
            .map_err(|e| e.to_string());
        if was_running {
            manager.start_server(name);
        }
        forgot
    }
}
