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
use crate::manager::{Authorizers, Manager, PauseError, ServerState, StartPhase};
use crate::mcp::auth::{self, AuthContext, AuthError, Authorizer, Opener, SignedIn};
use crate::mcp::log::LogSource;

/// Why signing in to a server (or out of it) did not happen; the text says what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignInError {
    #[error("no server named \"{0}\" in any config scope")]
    UnknownServer(String),
    /// The entry of the server is invalid.
    #[error("server \"{name}\" cannot be used: {reason}")]
    Unusable { name: String, reason: String },
    /// A stdio server: it takes credentials from `env`, there is no sign-in.
    #[error("server \"{0}\" is a local (stdio) server; signing in is for remote (http or sse) servers. Give it credentials through \"env\" in .mcp.json")]
    LocalSignIn(String),
    /// A stdio server asked to sign out.
    #[error("server \"{0}\" is a local (stdio) server; there is no sign-in to forget")]
    LocalSignOut(String),
    #[error("server \"{0}\" is disabled; enable it in .mcp.json first")]
    Disabled(String),
    /// The entry sends its own `Authorization` header; OAuth stays out of it.
    #[error("server \"{0}\" sends its own Authorization header (\"headers\" in .mcp.json); remove it to sign in instead")]
    OwnAuthorization(String),
    /// The server could not be paused for the sign-in (not approved, gone meanwhile).
    #[error(transparent)]
    Pause(#[from] PauseError),
    /// The authorization flow, or forgetting the tokens, failed.
    #[error(transparent)]
    Auth(#[from] AuthError),
}

impl SignInError {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        match self {
            SignInError::UnknownServer(_) => "unknown-server",
            SignInError::Unusable { .. } => "invalid-entry",
            SignInError::LocalSignIn(_) | SignInError::LocalSignOut(_) => "local-server",
            SignInError::Disabled(_) => "server-disabled",
            SignInError::OwnAuthorization(_) => "own-authorization",
            SignInError::Pause(e) => e.code(),
            SignInError::Auth(e) => e.code(),
        }
    }
}

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
fn entry_of(manager: &Manager, name: &str) -> Result<ServerConfig, SignInError> {
    match manager.entry(name) {
        None => Err(SignInError::UnknownServer(name.to_string())),
        Some(Err(e)) => Err(SignInError::Unusable {
            name: name.to_string(),
            reason: e.message,
        }),
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
    ) -> Result<SignedIn, SignInError> {
        let cfg = entry_of(manager, name)?;
        if remote_url(&cfg).is_none() {
            return Err(SignInError::LocalSignIn(name.to_string()));
        }
        if cfg.disabled {
            return Err(SignInError::Disabled(name.to_string()));
        }
        if has_own_authorization(&cfg) {
            return Err(SignInError::OwnAuthorization(name.to_string()));
        }
        let (run, cfg) = manager.pause(name, StartPhase::SigningIn).await?;
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
                Err(e.into())
            }
        }
    }

    /// Forgets the tokens kept for a remote server and restarts it (it then shows
    /// `needs-auth`). `Ok(true)` when tokens were kept.
    pub async fn sign_out(&self, manager: &Manager, name: &str) -> Result<bool, SignInError> {
        let cfg = entry_of(manager, name)?;
        let Some(url) = remote_url(&cfg) else {
            return Err(SignInError::LocalSignOut(name.to_string()));
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
            .map_err(SignInError::from);
        if was_running {
            manager.start_server(name);
        }
        forgot
    }
}
