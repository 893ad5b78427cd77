//! The manager's side of signing in to remote servers: the [`Authorizer`] of each start of
//! an http/sse server (from the [`Authorizers`](super::Authorizers) hook, kept on its slot
//! and handed to the transport), the `needs-auth` state when a start or a connection ends
//! because the server wants the user to sign in, and the pause a sign-in takes
//! ([`Manager::pause`], then [`Manager::resume`] or [`Manager::needs_sign_in`]).

use std::sync::Arc;

use super::{take_running, Manager, Run, ServerState, StartPhase};
use crate::config::ServerConfig;
use crate::mcp::auth::Authorizer;
use crate::mcp::log::{LogSource, ServerLog};

/// Why a server could not be paused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PauseError {
    #[error("no server named \"{0}\" in any config scope")]
    Unknown(String),
    #[error("server \"{name}\" cannot be used: {reason}")]
    Unusable { name: String, reason: String },
    #[error("server \"{0}\" is not approved yet; approve it first (run a command on a terminal and answer the prompt, or pass --yes)")]
    NotApproved(String),
}

impl PauseError {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        match self {
            PauseError::Unknown(_) => "unknown-server",
            PauseError::Unusable { .. } => "invalid-entry",
            PauseError::NotApproved(_) => "not-approved",
        }
    }
}

impl Manager {
    /// A fresh authorizer for this start of a remote server (kept on the slot so the
    /// status can show who is signed in); `None` without one from the hook.
    pub(super) fn new_authorizer(
        &self,
        name: &str,
        cfg: &ServerConfig,
        gen: u64,
    ) -> Option<Arc<Authorizer>> {
        let authorizer = self
            .inner
            .hooks
            .authorizers
            .as_ref()?
            .authorizer(name, cfg)?;
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

    /// Takes an approved server out of service while something beside the manager gets its
    /// next start ready (a sign-in in the browser): its current run ends, its status shows
    /// `Starting { phase }`, and nothing starts it until [`Manager::resume`]. Returns the
    /// pause (a run that a stop or reload meanwhile makes stale) and the entry paused.
    pub async fn pause(
        &self,
        name: &str,
        phase: StartPhase,
    ) -> Result<(Run, ServerConfig), PauseError> {
        let (cfg, gen, old) = {
            let mut slots = self.lock();
            let Some(slot) = slots.get_mut(name) else {
                return Err(PauseError::Unknown(name.to_string()));
            };
            let cfg = match &slot.entry {
                Ok(cfg) => cfg.clone(),
                Err(e) => {
                    return Err(PauseError::Unusable {
                        name: name.to_string(),
                        reason: e.message.clone(),
                    })
                }
            };
            if !self.may_run(slot.approved_for_run, &cfg) {
                return Err(PauseError::NotApproved(name.to_string()));
            }
            slot.generation += 1;
            slot.state = ServerState::Starting { phase };
            slot.restart = None;
            (cfg, slot.generation, take_running(slot))
        };
        self.inner.tools.remove_server(name);
        self.publish();
        old.end().await;
        Ok((Run::new(self, name, gen), cfg))
    }

    /// Ends a pause: starts the server again, unless a stop, restart or reload took it
    /// meanwhile.
    pub fn resume(&self, pause: &Run) {
        if self.is_current(pause.server(), pause.generation()) {
            self.start(pause.server());
            self.publish();
        }
    }

    /// Ends a pause with the server waiting for sign-in (`needs-auth` with `reason`),
    /// unless a stop, restart or reload took it meanwhile.
    pub fn needs_sign_in(&self, pause: &Run, reason: String) {
        self.set_state(
            pause.server(),
            pause.generation(),
            ServerState::NeedsAuth { reason },
        );
    }
}
