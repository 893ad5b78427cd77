//! All the servers of one project: concurrent fail-soft start, per-server status, restart,
//! stop, reload of a changed configuration and a shutdown that leaves no child behind.
//!
//! Invariants: every server starts in its own task with its own start-up timeout, so one
//! server never blocks or fails another. Status goes out on a `watch` channel holding the
//! latest snapshot: any number of subscribers, none can block the manager, a slow one only
//! misses intermediate states. Each start has a generation number; a task whose generation
//! is stale (the server was restarted or stopped meanwhile) changes nothing.

use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;
use tokio::sync::watch;
use tokio::task::AbortHandle;

use super::client::{fmt_duration, Client, ClientEvent};
use super::log::{LogSource, ServerLog};
use super::transport::http::{self, HttpSpec, TransportKind};
use super::transport::stdio::{self, StdioSpec};
use super::transport::{Connection, TransportSender};
use super::types::ToolDef;
use crate::config::{EntryError, McpConfig, ServerConfig, TransportConfig};
use crate::trust::pins::PinStore;
use crate::trust::ApprovalStore;

mod ask_view;
mod asks;
mod auth;
mod consent;
mod era;
mod levels;
mod pinning;
mod sampling;
mod stored;
mod surface;
pub use ask_view::{AskDetail, AskReply, AskView, ReplyError, Resolved, SAMPLING_REFUSAL};
pub use asks::{
    Ask, AskAnswer, AskError, AskKind, AskQueue, SamplingChoice, Unanswered, DEFAULT_ASK_TIMEOUT,
};
pub use levels::ServerDetails;
pub use pinning::AcceptError;
pub use sampling::NO_SAMPLER;
pub use surface::{
    FeatureError, ServerFeatures, ServerPrompt, ServerResource, ServerTemplate, SurfaceEvent,
};

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
    /// Automatic restarts after crashes in a row (see [`RestartPolicy`]); `None` when the
    /// server has not crashed since it was last started by hand.
    pub restart: Option<RestartStatus>,
    /// Tools whose definition changed since they were pinned, held back from the model
    /// until the user accepts them (see [`Manager::held_tools`]).
    pub held_tools: usize,
    /// Who the user is signed in as on this (remote) server, when tokens are held.
    pub signed_in: Option<crate::mcp::auth::SignedIn>,
}

/// How a crashed stdio server is restarted (off unless [`Manager::set_restart_policy`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RestartPolicy {
    /// Restarts after crashes in a row before giving up.
    pub max_attempts: u32,
    /// Wait before the first restart; doubled for each further attempt.
    pub first_delay: Duration,
    /// A server that stayed connected this long starts a fresh series of attempts.
    pub stable_after: Duration,
}

/// Restarts of a crashed server before harness9 gives up.
pub const DEFAULT_RESTART_ATTEMPTS: u32 = 3;

/// Wait before the first automatic restart (then 2x, 4x, ...).
pub const DEFAULT_RESTART_DELAY: Duration = Duration::from_secs(1);

/// Uptime after which a crash counts as the first of a new series.
pub const DEFAULT_RESTART_STABLE_AFTER: Duration = Duration::from_secs(60);

impl Default for RestartPolicy {
    fn default() -> Self {
        RestartPolicy {
            max_attempts: DEFAULT_RESTART_ATTEMPTS,
            first_delay: DEFAULT_RESTART_DELAY,
            stable_after: DEFAULT_RESTART_STABLE_AFTER,
        }
    }
}

impl RestartPolicy {
    /// The wait before attempt `attempt` (1-based).
    pub fn delay(&self, attempt: u32) -> Duration {
        self.first_delay * 2u32.saturating_pow(attempt.saturating_sub(1).min(16))
    }
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

/// What [`Manager::approve`] did with each server it was given.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ApproveOutcome {
    /// Approved (and started if they were waiting).
    pub approved: Vec<String>,
    /// Refused: the entry changed (or went away) since the prompt showed it. Show the
    /// current entry and ask again.
    pub stale: Vec<String>,
}

/// Whether unapproved project servers may start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalPolicy {
    /// Only servers approved in the store start; others wait for [`Manager::approve`].
    Ask,
    /// Everything starts, nothing is recorded (`--yes`).
    AllowAll,
}

struct Slot {
    entry: Result<ServerConfig, EntryError>,
    state: ServerState,
    log: Arc<ServerLog>,
    client: Option<Arc<Client>>,
    /// The transport of a start in progress, so a stop can end it.
    starting: Option<Arc<dyn TransportSender>>,
    /// Which remote transport the connection uses (set for http and sse entries).
    transport_in_use: Option<TransportKind>,
    task: Option<AbortHandle>,
    generation: u64,
    approved_for_run: bool,
    /// Automatic restarts in the current series of crashes.
    restart: Option<RestartStatus>,
    connected_at: Option<Instant>,
    /// The authorization state of the latest start of a remote server.
    authorizer: Option<Arc<crate::mcp::auth::Authorizer>>,
}

struct Inner {
    project: PathBuf,
    /// Where the usable tools of each server go (the tool registry).
    tools: Arc<dyn ToolSink>,
    approvals: ApprovalStore,
    policy: ApprovalPolicy,
    path_for_children: Option<OsString>,
    slots: Mutex<BTreeMap<String, Slot>>,
    config_error: Mutex<Option<String>>,
    status: watch::Sender<Arc<StatusSnapshot>>,
    restart_policy: Mutex<Option<RestartPolicy>>,
    /// This project's approved fingerprints by server name, copied from the store off the
    /// runtime threads (on reload and approval) so that starting a server never reads a file.
    stored_approvals: Mutex<BTreeMap<String, String>>,
    pins: PinStore,
    /// The latest listing of each connected server and which of its tools are held.
    listings: Mutex<BTreeMap<String, pinning::Listing>>,
    /// Credential store and settings shared by the remote servers' authorizers.
    auth: crate::mcp::auth::AuthContext,
    /// Resources, prompts, roots and the consent queue ([`surface`]).
    surface: surface::Surface,
    /// The era each remote server (by URL) was found to speak ([`era`]).
    era_verdicts: era::Verdicts,
    /// Counts changes of the stored user data seen by a watcher ([`stored`]).
    user_data: watch::Sender<u64>,
}

/// Cheap to clone; all clones drive the same servers.
#[derive(Clone)]
pub struct Manager {
    inner: Arc<Inner>,
}

/// Where the manager puts each server's usable tools (the tool registry implements it).
/// The manager publishes; it never knows the registry, which depends on this module and
/// not the reverse.
pub trait ToolSink: Send + Sync + 'static {
    /// Replaces the tools of one server.
    fn set_server_tools(
        &self,
        server: &str,
        client: Arc<Client>,
        defs: Vec<ToolDef>,
        timeout: Duration,
    );
    /// Removes the tools of one server (it stopped, failed or needs sign-in).
    fn remove_server(&self, server: &str);
}

/// Options for [`Manager::new`].
pub struct ManagerOptions {
    pub approvals: ApprovalStore,
    pub policy: ApprovalPolicy,
    /// PATH for children whose entry sets none (see [`crate::shell_env`]).
    pub path_for_children: Option<OsString>,
    /// Where sign-in tokens are kept ([`crate::mcp::auth::AuthContext::open`]).
    pub auth: crate::mcp::auth::AuthContext,
}

impl Manager {
    pub fn new(project: &Path, tools: Arc<dyn ToolSink>, opts: ManagerOptions) -> Manager {
        Manager {
            inner: Arc::new(Inner {
                project: project.to_path_buf(),
                tools,
                pins: PinStore::beside(opts.approvals.path()),
                listings: Mutex::default(),
                surface: surface::Surface::new(
                    project,
                    crate::trust::sampling::SamplingGrants::beside(opts.approvals.path()),
                ),
                approvals: opts.approvals,
                policy: opts.policy,
                path_for_children: opts.path_for_children,
                slots: Mutex::default(),
                config_error: Mutex::default(),
                status: watch::channel(Arc::new(StatusSnapshot::default())).0,
                restart_policy: Mutex::default(),
                stored_approvals: Mutex::default(),
                auth: opts.auth,
                era_verdicts: era::Verdicts::default(),
                user_data: watch::channel(0).0,
            }),
        }
    }

    pub fn project(&self) -> &Path {
        &self.inner.project
    }

    /// Restart crashed stdio servers with backoff (`None`, the default: leave them failed).
    pub fn set_restart_policy(&self, policy: Option<RestartPolicy>) {
        *self.inner.restart_policy.lock() = policy;
    }

    /// Latest status; `changed()` wakes on every update.
    pub fn subscribe(&self) -> watch::Receiver<Arc<StatusSnapshot>> {
        self.inner.status.subscribe()
    }

    pub fn snapshot(&self) -> Arc<StatusSnapshot> {
        self.inner.status.borrow().clone()
    }

    /// Recent output of one server.
    pub fn log(&self, server: &str) -> Option<Arc<ServerLog>> {
        self.lock().get(server).map(|s| s.log.clone())
    }

    /// The live client of a connected server.
    pub fn client(&self, server: &str) -> Option<Arc<Client>> {
        self.lock().get(server).and_then(|s| s.client.clone())
    }

    /// Takes a configuration: starts new and changed servers, stops removed and changed
    /// ones, leaves unchanged ones running. A configuration that cannot be read keeps the
    /// current servers and shows the error.
    pub async fn reload(&self, config: &McpConfig) {
        if let Some(err) = &config.error {
            *self.inner.config_error.lock() = Some(err.to_string());
            self.publish();
            return;
        }
        *self.inner.config_error.lock() = None;
        self.refresh_stored_approvals().await;
        let project = self.inner.project.clone();
        let mut to_stop = Vec::new();
        let mut to_start = Vec::new();
        {
            let mut slots = self.lock();
            let gone: Vec<String> = slots
                .keys()
                .filter(|k| !config.servers.contains_key(*k))
                .cloned()
                .collect();
            for name in gone {
                if let Some(slot) = slots.remove(&name) {
                    to_stop.push((name, slot.generation, slot));
                }
            }
            for (name, entry) in &config.servers {
                match slots.get_mut(name) {
                    Some(slot) if same_entry(&slot.entry, entry) => {}
                    Some(slot) => {
                        let old = std::mem::replace(slot, new_slot(entry.clone()));
                        slot.log = old.log.clone();
                        slot.generation = old.generation + 1;
                        slot.approved_for_run = old.approved_for_run
                            && matches!((&old.entry, entry), (Ok(a), Ok(b)) if a.fingerprint(&project) == b.fingerprint(&project));
                        to_stop.push((name.clone(), old.generation, old));
                        to_start.push(name.clone());
                    }
                    None => {
                        slots.insert(name.clone(), new_slot(entry.clone()));
                        to_start.push(name.clone());
                    }
                }
            }
        }
        // Old processes stop in the background: a server that takes long to exit never
        // holds up the reload (or the front end that asked for it). A changed server starts
        // again once its old process has ended; meanwhile its status says it is starting.
        for (name, _, mut slot) in to_stop {
            let running = take_running(&mut slot);
            if let Some(t) = &running.task {
                t.abort();
            }
            self.inner.tools.remove_server(&name);
            let again = match to_start.iter().position(|n| *n == name) {
                Some(i) => {
                    to_start.remove(i);
                    let mut slots = self.lock();
                    // A server that may not start says why at once; one that may says it
                    // is starting, and starts once its old process has ended.
                    slots.get_mut(&name).and_then(|s| {
                        self.startable(s)?;
                        s.state = ServerState::Starting {
                            phase: StartPhase::Spawning,
                        };
                        Some(s.generation)
                    })
                }
                None => None,
            };
            let this = self.clone();
            tokio::spawn(async move {
                running.end().await;
                match again {
                    Some(gen) => {
                        let mut slots = this.lock();
                        // Unless another reload, stop or restart took the slot meanwhile.
                        if slots.get(&name).is_some_and(|s| s.generation == gen) {
                            this.inner.tools.remove_server(&name);
                            this.start_in(&mut slots, &name);
                        }
                        drop(slots);
                        this.publish();
                    }
                    None => {
                        if !this.lock().contains_key(&name) {
                            this.inner.tools.remove_server(&name);
                        }
                    }
                }
            });
        }
        for name in to_start {
            self.start(&name);
        }
        self.publish();
    }

    /// Starts (or restarts) one server if its entry is valid, enabled and approved;
    /// otherwise sets the state that says why not.
    fn start(&self, name: &str) {
        self.start_in(&mut self.lock(), name);
    }

    /// [`Manager::start`] with the slots already locked.
    fn start_in(&self, slots: &mut BTreeMap<String, Slot>, name: &str) {
        let Some(slot) = slots.get_mut(name) else {
            return;
        };
        let Some(cfg) = self.startable(slot) else {
            return;
        };
        slot.generation += 1;
        slot.transport_in_use = None;
        slot.state = ServerState::Starting {
            phase: StartPhase::Spawning,
        };
        if let Some(r) = &mut slot.restart {
            r.retry_in_ms = None;
        }
        let gen = slot.generation;
        let log = slot.log.clone();
        let this = self.clone();
        let name = name.to_string();
        let task = tokio::spawn(async move { this.run_server(name, cfg, log, gen).await });
        slot.task = Some(task.abort_handle());
    }

    /// The entry to start when the slot's server may start; otherwise sets the state that
    /// says why not (invalid entry, disabled, awaiting approval).
    fn startable(&self, slot: &mut Slot) -> Option<ServerConfig> {
        let cfg = match &slot.entry {
            Err(e) => {
                slot.state = ServerState::Failed {
                    reason: e.message.clone(),
                    stderr_tail: String::new(),
                };
                return None;
            }
            Ok(cfg) => cfg.clone(),
        };
        if cfg.disabled {
            slot.state = ServerState::Disabled;
            return None;
        }
        // User and local servers were written by the user: no approval.
        let approved = !cfg.scope.needs_approval()
            || slot.approved_for_run
            || self.inner.policy == ApprovalPolicy::AllowAll
            || self.stored_approval_matches(&cfg);
        if !approved {
            slot.state = ServerState::AwaitingApproval;
            return None;
        }
        Some(cfg)
    }

    /// Servers waiting for the user's approval, with what they would run.
    pub fn awaiting_approval(&self) -> Vec<ServerConfig> {
        self.lock()
            .values()
            .filter(|s| s.state == ServerState::AwaitingApproval)
            .filter_map(|s| s.entry.as_ref().ok().cloned())
            .collect()
    }

    /// Approves servers, each named with the fingerprint the user was shown
    /// ([`ServerConfig::fingerprint`]); `remember` records them in the store for later runs.
    /// A pair whose fingerprint no longer matches the current entry (the file changed after
    /// the prompt was drawn) is refused and reported in [`ApproveOutcome::stale`], so the
    /// front end can show the entry again. Starts the approved servers that were waiting.
    pub async fn approve(
        &self,
        picks: &[(String, String)],
        remember: bool,
    ) -> std::io::Result<ApproveOutcome> {
        let mut outcome = ApproveOutcome::default();
        let mut to_start = Vec::new();
        {
            let mut slots = self.lock();
            for (name, fingerprint) in picks {
                let current = slots.get_mut(name).and_then(|slot| {
                    let fp = slot.entry.as_ref().ok()?.fingerprint(&self.inner.project);
                    (fp == *fingerprint).then_some(slot)
                });
                match current {
                    Some(slot) => {
                        slot.approved_for_run = true;
                        if slot.state == ServerState::AwaitingApproval {
                            to_start.push(name.clone());
                        }
                        outcome.approved.push(name.clone());
                    }
                    None => outcome.stale.push(name.clone()),
                }
            }
        }
        if remember {
            let accepted: Vec<(String, String)> = picks
                .iter()
                .filter(|(n, _)| outcome.approved.contains(n))
                .cloned()
                .collect();
            let store = self.inner.approvals.clone();
            let project = self.inner.project.clone();
            tokio::task::spawn_blocking(move || store.approve(&project, &accepted))
                .await
                .map_err(std::io::Error::other)??;
            self.refresh_stored_approvals().await;
        }
        for n in &to_start {
            self.start(n);
        }
        self.publish();
        Ok(outcome)
    }

    /// Copies this project's approvals from the store (read on a blocking thread, once per
    /// process; cached by the store afterwards).
    async fn refresh_stored_approvals(&self) {
        let store = self.inner.approvals.clone();
        let project = self.inner.project.clone();
        let found = tokio::task::spawn_blocking(move || store.approved(&project))
            .await
            .unwrap_or_default();
        *self.inner.stored_approvals.lock() = found;
    }

    /// Whether the store approves this entry now: the store's generation is checked first
    /// (one `stat`), so an approval given or changed by another process counts at once.
    fn stored_approval_matches(&self, cfg: &ServerConfig) -> bool {
        let fingerprint = cfg.fingerprint(&self.inner.project);
        let now = self.inner.approvals.approved(&self.inner.project);
        let mut stored = self.inner.stored_approvals.lock();
        *stored = now;
        stored.get(&cfg.name).is_some_and(|f| *f == fingerprint)
    }

    /// Stops one server and starts it again.
    pub async fn restart(&self, name: &str) {
        self.stop(name).await;
        self.start(name);
        self.publish();
    }

    /// Stops one server; it stays stopped until restarted or reloaded with a changed entry.
    pub async fn stop(&self, name: &str) {
        let old = {
            let mut slots = self.lock();
            let Some(slot) = slots.get_mut(name) else {
                return;
            };
            slot.generation += 1;
            slot.state = ServerState::Stopped;
            slot.restart = None;
            take_running(slot)
        };
        self.inner.tools.remove_server(name);
        self.publish();
        old.end().await;
    }

    /// Stops every server and waits until no child process is left.
    pub async fn shutdown(&self) {
        let all: Vec<Running> = {
            let mut slots = self.lock();
            slots
                .values_mut()
                .map(|slot| {
                    slot.generation += 1;
                    slot.state = ServerState::Stopped;
                    take_running(slot)
                })
                .collect()
        };
        let names: Vec<String> = self.lock().keys().cloned().collect();
        for n in &names {
            self.inner.tools.remove_server(n);
        }
        self.publish();
        futures::future::join_all(all.into_iter().map(Running::end)).await;
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

    fn lock(&self) -> parking_lot::MutexGuard<'_, BTreeMap<String, Slot>> {
        self.inner.slots.lock()
    }

    /// Sets a server's state if `gen` is still current; returns false when stale.
    fn set_state(&self, name: &str, gen: u64, state: ServerState) -> bool {
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
    fn trim_when_settled(&self) {
        if self.lock().values().all(|s| s.state.is_settled()) {
            crate::memory::trim_soon();
        }
    }

    fn publish(&self) {
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
                        ServerState::Connected { .. } => self.held_count(name),
                        _ => 0,
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

    async fn run_server(&self, name: String, cfg: ServerConfig, log: Arc<ServerLog>, gen: u64) {
        let outcome = self.connect(&name, &cfg, log.clone(), gen).await;
        let client = match outcome {
            Ok(c) => c,
            Err(reason) => {
                if self.settle_needs_auth(&name, gen, &log) {
                    return;
                }
                let tail = log.stderr_tail();
                log.push(
                    LogSource::Host,
                    "error",
                    &format!("failed to start: {reason}"),
                );
                self.set_state(
                    &name,
                    gen,
                    ServerState::Failed {
                        reason,
                        stderr_tail: tail,
                    },
                );
                return;
            }
        };
        self.reapply_log_level(&name, &client);
        self.follow_features(&name, gen, &client, cfg.startup_timeout);
        self.resume_listening(&name, &client);
        self.watch_events(&name, &cfg, client, gen).await;
    }

    /// Spawn, handshake and first listing, all within the start-up timeout.
    async fn connect(
        &self,
        name: &str,
        cfg: &ServerConfig,
        log: Arc<ServerLog>,
        gen: u64,
    ) -> Result<Arc<Client>, String> {
        let authorizer = self.new_authorizer(name, cfg, gen);
        let (conn, kind) = self.open_transport(cfg, log.clone(), authorizer)?;
        let sender = conn.sender.clone();
        let current = {
            let mut slots = self.lock();
            match slots.get_mut(name) {
                Some(slot) if slot.generation == gen => {
                    slot.starting = Some(sender.clone());
                    slot.transport_in_use = kind;
                    true
                }
                _ => false,
            }
        };
        if !current {
            sender.close().await;
            return Err("stopped".into());
        }
        let current: era::CurrentSender = Arc::new(Mutex::new(sender.clone()));
        let phase = Arc::new(Mutex::new(StartPhase::Initializing));
        self.set_state(
            name,
            gen,
            ServerState::Starting {
                phase: StartPhase::Initializing,
            },
        );
        let steps = async {
            let handler = self.client_handler(
                name,
                Some(cfg.fingerprint(&self.inner.project)),
                log.clone(),
            );
            let opts = self.connect_options(name, cfg, log.clone(), gen, handler, current.clone());
            let client = Client::connect_opts(conn, name, log, opts).await;
            self.note_era(cfg, client.as_ref().ok().map(Client::era));
            let client = Arc::new(client.map_err(|e| e.to_string())?);
            *phase.lock() = StartPhase::ListingTools;
            self.set_state(
                name,
                gen,
                ServerState::Starting {
                    phase: StartPhase::ListingTools,
                },
            );
            let tools = client.list_tools(None).await.map_err(|e| e.to_string())?;
            Ok::<_, String>((client, tools))
        };
        let result = tokio::time::timeout(cfg.startup_timeout, steps).await;
        let (client, tools) = match result {
            Ok(Ok(done)) => done,
            Ok(Err(e)) => {
                let sender = current.lock().clone();
                sender.close().await;
                return Err(e);
            }
            Err(_) => {
                let sender = current.lock().clone();
                sender.close().await;
                let phase = *phase.lock();
                return Err(format!(
                    "did not finish starting within {} (stuck {}); raise \"{}\" in .mcp.json if the server needs longer",
                    fmt_duration(cfg.startup_timeout),
                    phase.label(),
                    crate::config::STARTUP_TIMEOUT_FIELD
                ));
            }
        };
        let current = {
            let mut slots = self.lock();
            match slots.get_mut(name) {
                Some(slot) if slot.generation == gen => {
                    slot.starting = None;
                    slot.client = Some(client.clone());
                    slot.connected_at = Some(Instant::now());
                    true
                }
                _ => false,
            }
        };
        if !current {
            client.close().await;
            return Err("stopped".into());
        }
        self.publish_tools(name, gen, &client, tools, cfg).await;
        Ok(client)
    }

    fn open_transport(
        &self,
        cfg: &ServerConfig,
        log: Arc<ServerLog>,
        authorizer: Option<Arc<crate::mcp::auth::Authorizer>>,
    ) -> Result<(Connection, Option<TransportKind>), String> {
        match &cfg.transport {
            TransportConfig::Stdio {
                command, args, env, ..
            } => {
                let spec = StdioSpec {
                    command: crate::shell_env::resolve_command(command),
                    args: args.clone(),
                    env: env.clone(),
                    cwd: cfg.resolved_cwd(&self.inner.project),
                    path: self.inner.path_for_children.clone(),
                    max_message_bytes: cfg.max_message_bytes,
                };
                stdio::spawn(&spec, log)
                    .map(|c| (c, None))
                    .map_err(|e| e.to_string())
            }
            TransportConfig::Http { url, headers } => {
                let spec = HttpSpec {
                    url: url.clone(),
                    headers: headers.clone(),
                    max_message_bytes: cfg.max_message_bytes,
                    auth: authorizer.clone(),
                };
                http::connect(&spec, log).map(|(c, k)| (c, Some(k)))
            }
            TransportConfig::Sse { url, headers } => {
                let spec = HttpSpec {
                    url: url.clone(),
                    headers: headers.clone(),
                    max_message_bytes: cfg.max_message_bytes,
                    auth: authorizer.clone(),
                };
                http::connect_sse(&spec, log).map(|(c, k)| (c, Some(k)))
            }
        }
    }

    /// After connecting: re-list on `list_changed`, report the server leaving.
    async fn watch_events(&self, name: &str, cfg: &ServerConfig, client: Arc<Client>, gen: u64) {
        let mut events = client.events();
        if let Some(reason) = client.closed_reason() {
            self.on_closed(name, gen, reason);
            self.maybe_restart(name, cfg, gen);
            return;
        }
        loop {
            match events.recv().await {
                Ok(ClientEvent::ToolsChanged) => {
                    match client.list_tools(Some(cfg.startup_timeout)).await {
                        Ok(tools) => {
                            if !self.is_current(name, gen) {
                                return;
                            }
                            self.publish_tools(name, gen, &client, tools, cfg).await;
                        }
                        Err(e) => {
                            if let Some(log) = self.log(name) {
                                log.push(
                                    LogSource::Host,
                                    "warning",
                                    &format!("re-listing tools failed: {e}"),
                                );
                            }
                        }
                    }
                }
                // Resources, prompts and elicitations: the surface task follows these.
                Ok(
                    ClientEvent::ResourcesChanged
                    | ClientEvent::ResourceUpdated { .. }
                    | ClientEvent::PromptsChanged
                    | ClientEvent::ElicitationComplete { .. },
                ) => {}
                Ok(ClientEvent::Closed(reason)) => {
                    self.on_closed(name, gen, reason);
                    self.maybe_restart(name, cfg, gen);
                    return;
                }
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            }
        }
    }

    fn is_current(&self, name: &str, gen: u64) -> bool {
        self.lock().get(name).is_some_and(|s| s.generation == gen)
    }

    fn on_closed(&self, name: &str, gen: u64, reason: String) {
        if !self.is_current(name, gen) {
            return;
        }
        if let Some(log) = self.log(name) {
            if self.settle_needs_auth(name, gen, &log) {
                self.inner.tools.remove_server(name);
                self.forget_listing(name);
                return;
            }
        }
        self.inner.tools.remove_server(name);
        self.forget_listing(name);
        let tail = self.log(name).map(|l| l.stderr_tail()).unwrap_or_default();
        {
            let mut slots = self.lock();
            if let Some(slot) = slots.get_mut(name) {
                slot.client = None;
            }
        }
        self.set_state(
            name,
            gen,
            ServerState::Failed {
                reason,
                stderr_tail: tail,
            },
        );
    }
}

impl Manager {
    /// After a connected stdio server crashed (state already failed at `gen`): schedule a
    /// restart with backoff, or record that the attempts are used up.
    fn maybe_restart(&self, name: &str, cfg: &ServerConfig, gen: u64) {
        let Some(policy) = *self.inner.restart_policy.lock() else {
            return;
        };
        if !matches!(cfg.transport, TransportConfig::Stdio { .. }) {
            return;
        }
        let decision = {
            let mut slots = self.lock();
            let Some(slot) = slots.get_mut(name).filter(|s| s.generation == gen) else {
                return;
            };
            let stable = slot
                .connected_at
                .take()
                .is_some_and(|t| t.elapsed() >= policy.stable_after);
            let done = if stable {
                0
            } else {
                slot.restart.as_ref().map_or(0, |r| r.attempt)
            };
            if done < policy.max_attempts {
                let attempt = done + 1;
                let delay = policy.delay(attempt);
                slot.restart = Some(RestartStatus {
                    attempt,
                    max_attempts: policy.max_attempts,
                    retry_in_ms: Some(delay.as_millis() as u64),
                    gave_up: false,
                });
                Ok((attempt, delay))
            } else {
                slot.restart = Some(RestartStatus {
                    attempt: done,
                    max_attempts: policy.max_attempts,
                    retry_in_ms: None,
                    gave_up: true,
                });
                Err(done)
            }
        };
        let log = self.log(name);
        match decision {
            Ok((attempt, delay)) => {
                if let Some(log) = &log {
                    log.push(
                        LogSource::Host,
                        "warning",
                        &format!(
                            "the server crashed; restarting in {} (attempt {attempt} of {})",
                            fmt_duration(delay),
                            policy.max_attempts
                        ),
                    );
                }
                let this = self.clone();
                let who = name.to_string();
                let task = tokio::spawn(async move {
                    tokio::time::sleep(delay).await;
                    if this.is_current(&who, gen) {
                        this.start(&who);
                        this.publish();
                    }
                });
                let mut slots = self.lock();
                match slots.get_mut(name).filter(|s| s.generation == gen) {
                    Some(slot) => slot.task = Some(task.abort_handle()),
                    None => task.abort(),
                }
            }
            Err(done) => {
                if let Some(log) = &log {
                    log.push(
                        LogSource::Host,
                        "error",
                        &format!(
                            "the server crashed {} times in a row; not restarting it again (use Restart)",
                            done + 1
                        ),
                    );
                }
            }
        }
        self.publish();
    }
}

fn connected_state(client: &Client, tools: usize) -> ServerState {
    ServerState::Connected {
        tools,
        protocol_version: client.protocol_version().to_string(),
        server_name: client.server_info().name.clone(),
        server_version: client.server_info().version.clone(),
        era: crate::mcp::era::Era::of_version(client.protocol_version()),
    }
}

fn new_slot(entry: Result<ServerConfig, EntryError>) -> Slot {
    Slot {
        entry,
        state: ServerState::Stopped,
        log: Arc::new(ServerLog::default()),
        client: None,
        starting: None,
        transport_in_use: None,
        task: None,
        generation: 0,
        approved_for_run: false,
        restart: None,
        connected_at: None,
        authorizer: None,
    }
}

fn same_entry(a: &Result<ServerConfig, EntryError>, b: &Result<ServerConfig, EntryError>) -> bool {
    match (a, b) {
        (Ok(a), Ok(b)) => a == b,
        (Err(a), Err(b)) => a == b,
        _ => false,
    }
}

/// What must be ended to stop a server.
struct Running {
    task: Option<AbortHandle>,
    client: Option<Arc<Client>>,
    starting: Option<Arc<dyn TransportSender>>,
}

impl Running {
    async fn end(self) {
        if let Some(t) = self.task {
            t.abort();
        }
        if let Some(c) = self.client {
            c.close().await;
        }
        if let Some(s) = self.starting {
            s.close().await;
        }
    }
}

fn take_running(slot: &mut Slot) -> Running {
    Running {
        task: slot.task.take(),
        client: slot.client.take(),
        starting: slot.starting.take(),
    }
}
