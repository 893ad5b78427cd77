//! What the manager says about its servers: each server's state and status, and the
//! snapshot of all of them that goes out on a `watch` channel (the latest value only, so a
//! slow subscriber never blocks the manager; a revision orders the snapshots).

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use tokio::sync::watch;

use super::Manager;
#[cfg(doc)]
use crate::config::ServerConfig;

/// What a starting server is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "kebab-case")]
pub enum StartPhase {
    Spawning,
    Initializing,
    ListingTools,
    /// The authorization page is open in the browser; waiting for the user to sign in.
    SigningIn,
}

impl StartPhase {
    pub fn label(self) -> &'static str {
        match self {
            StartPhase::Spawning => "spawning",
            StartPhase::Initializing => "initializing",
            StartPhase::ListingTools => "listing tools",
            StartPhase::SigningIn => "waiting for sign-in in the browser",
        }
    }
}

/// The state of one server.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum ServerState {
    Starting {
        phase: StartPhase,
    },
    #[serde(rename_all = "camelCase")]
    Connected {
        tools: usize,
        protocol_version: String,
        server_name: String,
        server_version: String,
        /// The era the connection speaks, from the version.
        era: crate::mcp::era::Era,
    },
    #[serde(rename_all = "camelCase")]
    Failed {
        reason: String,
        stderr_tail: String,
    },
    Disabled,
    AwaitingApproval,
    /// A remote server that needs the user to sign in (`harness9 mcp login`, "Sign in");
    /// not a failure. `reason` says why (no token yet, expired, more scopes needed).
    NeedsAuth {
        reason: String,
    },
    Stopped,
}

impl ServerState {
    /// The state of a server whose client connected, with `tools` usable tools.
    pub fn connected(client: &crate::mcp::Client, tools: usize) -> ServerState {
        ServerState::Connected {
            tools,
            protocol_version: client.protocol_version().to_string(),
            server_name: client.server_info().name.clone(),
            server_version: client.server_info().version.clone(),
            era: crate::mcp::era::Era::of_version(client.protocol_version()),
        }
    }

    /// The status word used in `--json` output and the UI.
    pub fn word(&self) -> &'static str {
        match self {
            ServerState::Starting { .. } => "starting",
            ServerState::Connected { .. } => "connected",
            ServerState::Failed { .. } => "failed",
            ServerState::Disabled => "disabled",
            ServerState::AwaitingApproval => "awaiting-approval",
            ServerState::NeedsAuth { .. } => "needs-auth",
            ServerState::Stopped => "stopped",
        }
    }

    pub fn is_settled(&self) -> bool {
        !matches!(self, ServerState::Starting { .. })
    }
}

/// One server as the front ends show it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ServerStatus {
    pub name: String,
    /// `stdio`, `http` or `sse` (empty when the entry is too broken to tell). The transport
    /// in use: an `http` entry whose server only speaks the legacy HTTP+SSE transport shows
    /// `sse` once the fallback happened.
    pub transport: String,
    /// The config scope the entry comes from (`local`, `project` or `user`).
    pub scope: crate::config::Scope,
    /// Command line or URL as written, secrets masked ([`ServerConfig::display_target`]);
    /// env and header values are never included. Display text: control, bidi and invisible
    /// characters are escaped ([`crate::term_text::line`]), so every front end shows them.
    pub target: String,
    pub state: ServerState,
    /// Automatic restarts after crashes in a row (see the manager's `RestartPolicy`); `None` when the
    /// server has not crashed since it was last started by hand.
    pub restart: Option<RestartStatus>,
    /// Tools whose definition changed since they were pinned, held back from the model
    /// until the user accepts them (counted by the tool sink: `ToolSink::held`).
    pub held_tools: usize,
    /// Who the user is signed in as on this (remote) server, when tokens are held.
    pub signed_in: Option<crate::mcp::auth::SignedIn>,
}

/// Where a crashed server's automatic restarts stand.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct RestartStatus {
    /// The latest attempt (1-based) in this series of crashes.
    pub attempt: u32,
    pub max_attempts: u32,
    /// Set while waiting for the next attempt.
    pub retry_in_ms: Option<u64>,
    /// Every attempt was used; the server stays failed until restarted by hand.
    pub gave_up: bool,
}

/// Everything the front ends need to draw the MCP status.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct StatusSnapshot {
    /// Grows by one with every change, so a front end can drop a snapshot older than the one
    /// it shows (one fetched before a newer one was pushed).
    pub revision: u64,
    pub servers: Vec<ServerStatus>,
    /// Set when `.mcp.json` cannot be used as a whole.
    pub config_error: Option<String>,
}

/// Why a server cannot take requests now.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unavailable {
    #[error("no server named \"{server}\" in any config scope{}", known_hint(.known))]
    Unknown { server: String, known: Vec<String> },
    #[error("server \"{server}\" is not connected: {reason}")]
    NotConnected { server: String, reason: String },
}

impl Unavailable {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        match self {
            Unavailable::Unknown { .. } => "unknown-server",
            Unavailable::NotConnected { .. } => "not-connected",
        }
    }
}

fn known_hint(known: &[String]) -> String {
    if known.is_empty() {
        String::new()
    } else {
        format!(" (servers: {})", known.join(", "))
    }
}

impl Manager {
    /// Latest status; `changed()` wakes on every update.
    pub fn subscribe(&self) -> watch::Receiver<Arc<StatusSnapshot>> {
        self.inner.status.subscribe()
    }

    pub fn snapshot(&self) -> Arc<StatusSnapshot> {
        self.inner.status.borrow().clone()
    }

    /// Waits until no server is starting (or the timeout passes).
    pub async fn wait_settled(&self, timeout: Duration) {
        let mut rx = self.subscribe();
        let _ = tokio::time::timeout(
            timeout,
            rx.wait_for(|s| s.servers.iter().all(|s| s.state.is_settled())),
        )
        .await;
    }

    /// Sets a server's state if `gen` is still current; returns false when stale.
    pub(super) fn set_state(&self, name: &str, gen: u64, state: ServerState) -> bool {
        let current = {
            let mut slots = self.lock();
            match slots.get_mut(name) {
                Some(slot) if slot.generation == gen => {
                    slot.state = state;
                    true
                }
                _ => false,
            }
        };
        if current {
            self.publish();
            self.trim_when_settled();
        }
        current
    }

    /// Once no server is starting any more, the memory their start-up freed (listings
    /// parsed, pins read, tools built) goes back to the system instead of staying in the
    /// allocator's free lists, where it would count against the app for as long as it runs.
    pub(super) fn trim_when_settled(&self) {
        if self.lock().values().all(|s| s.state.is_settled()) {
            crate::memory::trim_soon();
        }
    }

    pub(super) fn publish(&self) {
        // Built and sent under the slots' lock: snapshots leave in the order of the changes,
        // so a revision never goes back.
        let slots = self.lock();
        let snapshot = StatusSnapshot {
            revision: 0,
            servers: slots
                .iter()
                .map(|(name, slot)| ServerStatus {
                    name: name.clone(),
                    transport: match (&slot.transport_in_use, &slot.entry) {
                        (Some(k), Ok(_)) => k.get().to_string(),
                        (None, Ok(c)) => c.transport.kind().to_string(),
                        (_, Err(e)) => e.transport.unwrap_or("").to_string(),
                    },
                    scope: match &slot.entry {
                        Ok(c) => c.scope,
                        Err(e) => e.scope,
                    },
                    target: match &slot.entry {
                        Ok(c) => crate::term_text::line(&c.display_target()).into_owned(),
                        Err(_) => String::new(),
                    },
                    state: slot.state.clone(),
                    restart: slot.restart.clone(),
                    held_tools: match slot.state {
                        ServerState::Connected { .. } => self.inner.tools.held(name),
                        ServerState::Starting { .. }
                        | ServerState::Failed { .. }
                        | ServerState::Disabled
                        | ServerState::AwaitingApproval
                        | ServerState::NeedsAuth { .. }
                        | ServerState::Stopped => 0,
                    },
                    signed_in: slot.authorizer.as_ref().and_then(|a| a.signed_in()),
                })
                .collect(),
            config_error: self.inner.config_error.lock().clone(),
        };
        self.inner.status.send_if_modified(|old| {
            if old.servers == snapshot.servers && old.config_error == snapshot.config_error {
                false
            } else {
                *old = Arc::new(StatusSnapshot {
                    revision: old.revision + 1,
                    ..snapshot
                });
                true
            }
        });
        drop(slots);
    }
}
