//! The manager's side of signing in to remote servers: one [`Authorizer`] per start of an
//! http/sse server (kept on its slot, handed to the transport), the `needs-auth` state
//! when a start or a connection ends because the server wants the user to sign in, and
//! [`Manager::sign_in`] / [`Manager::sign_out`].
//!
//! Starting a server never opens a browser: only [`Manager::sign_in`] is given an
//! [`Opener`]. The sign-in itself may take minutes (the user is in the browser), so it runs
//! outside the start-up timeout and never under a lock; a stop or reload meanwhile wins
//! (the generation moved on, so the finished sign-in does not restart anything).

use std::sync::Arc;

use super::{take_running, ApprovalPolicy, Manager, ServerState, StartPhase};
use crate::config::{ServerConfig, TransportConfig};
use crate::mcp::auth::{self, AuthContext, Authorizer, Opener, SignedIn};
use crate::mcp::log::{LogSource, ServerLog};

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

impl Manager {
    /// Where sign-in tokens are kept, in words for the user.
    pub fn credentials_location(&self) -> String {
        self.inner.auth.store.location()
    }

    /// The shared credential store and settings.
    pub fn auth_context(&self) -> &AuthContext {
        &self.inner.auth
    }

    /// A fresh authorizer for this start of a remote server (kept on the slot so the
    /// status can show who is signed in); `None` for local servers and for entries that
    /// send their own `Authorization` header.
    pub(super) fn new_authorizer(
        &self,
        name: &str,
        cfg: &ServerConfig,
        gen: u64,
    ) -> Option<Arc<Authorizer>> {
        let url = remote_url(cfg)?;
        if has_own_authorization(cfg) {
            return None;
        }
        let authorizer = Authorizer::new(url, cfg.oauth.clone(), self.inner.auth.clone());
        let mut slots = self.lock();
        match slots.get_mut(name) {
            Some(slot) if slot.generation == gen => slot.authorizer = Some(authorizer.clone()),
            _ => {}
        }
        Some(authorizer)
    }

    /// After a start failed or a connection closed: when the server wants the user to
    /// sign in, shows `needs-auth` with the reason (not failed, no restart) and returns
    /// true.
    pub(super) fn settle_needs_auth(&self, name: &str, gen: u64, log: &ServerLog) -> bool {
        let reason = {
            let mut slots = self.lock();
            let Some(slot) = slots.get_mut(name).filter(|s| s.generation == gen) else {
                return false;
            };
            let Some(reason) = slot.authorizer.as_ref().and_then(|a| a.needs_auth()) else {
                return false;
            };
            slot.client = None;
            slot.starting = None;
            slot.restart = None;
            reason
        };
        log.push(
            LogSource::Host,
            "warning",
            &format!("needs sign-in: {reason}"),
        );
        self.set_state(name, gen, ServerState::NeedsAuth { reason });
        true
    }

    /// Signs in to a remote server: shows it as signing in, runs the authorization flow
    /// with `opener` showing the page (this may take minutes), keeps the tokens and
    /// restarts the server with them. On failure the server shows `needs-auth` with the
    /// error as its reason, and the error is returned.
    pub async fn sign_in(&self, name: &str, opener: Arc<dyn Opener>) -> Result<SignedIn, String> {
        let (cfg, gen, old) = {
            let mut slots = self.lock();
            let Some(slot) = slots.get_mut(name) else {
                return Err(format!("no server named \"{name}\" in any config scope"));
            };
            let cfg = match &slot.entry {
                Ok(cfg) => cfg.clone(),
                Err(e) => return Err(format!("server \"{name}\" cannot be used: {}", e.message)),
            };
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
            let approved = slot.approved_for_run || self.inner.policy == ApprovalPolicy::AllowAll;
            if !approved && !self.stored_approval_matches(&cfg) {
                return Err(format!(
                    "server \"{name}\" is not approved yet; approve it first (run a command on a terminal and answer the prompt, or pass --yes)"
                ));
            }
            slot.generation += 1;
            slot.state = ServerState::Starting {
                phase: StartPhase::SigningIn,
            };
            slot.restart = None;
            (cfg, slot.generation, take_running(slot))
        };
        self.inner.tools.remove_server(name);
        self.forget_listing(name);
        self.publish();
        old.end().await;

        let url = remote_url(&cfg).unwrap_or_default().to_string();
        let log = self.log(name);
        if let Some(log) = &log {
            log.push(
                LogSource::Host,
                "info",
                "signing in (waiting for the browser)",
            );
        }
        let outcome = auth::sign_in(&url, cfg.oauth.as_ref(), &self.inner.auth, opener).await;
        match outcome {
            Ok(signed_in) => {
                if let Some(log) = &log {
                    log.push(
                        LogSource::Host,
                        "info",
                        &format!("signed in with {}", signed_in.issuer),
                    );
                }
                if self.is_current(name, gen) {
                    self.start(name);
                    self.publish();
                }
                Ok(signed_in)
            }
            Err(e) => {
                if let Some(log) = &log {
                    log.push(LogSource::Host, "error", &format!("sign-in failed: {e}"));
                }
                self.set_state(
                    name,
                    gen,
                    ServerState::NeedsAuth {
                        reason: e.to_string(),
                    },
                );
                Err(e.to_string())
            }
        }
    }

    /// Forgets the tokens kept for a remote server and restarts it (it then shows
    /// `needs-auth`). `Ok(true)` when tokens were kept.
    pub async fn sign_out(&self, name: &str) -> Result<bool, String> {
        let cfg = {
            let slots = self.lock();
            let Some(slot) = slots.get(name) else {
                return Err(format!("no server named \"{name}\" in any config scope"));
            };
            match &slot.entry {
                Ok(cfg) => cfg.clone(),
                Err(e) => return Err(format!("server \"{name}\" cannot be used: {}", e.message)),
            }
        };
        let Some(url) = remote_url(&cfg) else {
            return Err(format!(
                "server \"{name}\" is a local (stdio) server; there is no sign-in to forget"
            ));
        };
        let was_running = self.lock().get(name).is_some_and(|s| {
            !matches!(
                s.state,
                ServerState::Stopped | ServerState::Disabled | ServerState::AwaitingApproval
            )
        });
        // End the connection first: closing it may still refresh (and keep) a token.
        if was_running {
            self.stop(name).await;
        }
        let forgot = auth::sign_out(url, &self.inner.auth)
            .await
            .map_err(|e| e.to_string());
        if was_running {
            self.start(name);
            self.publish();
        }
        forgot
    }
}
