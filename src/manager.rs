//! All the servers of one project, and only their lifecycle: concurrent fail-soft start
//! (as approved, in each server's protocol era), per-server status, restart (by hand, and
//! after a crash by policy), stop, reload of a changed configuration and a shutdown that
//! leaves no child behind. What servers ask of the user, tool pins, resources and prompts,
//! sign-in sessions are host services ([`crate::host`]); the manager knows none of them and
//! reaches them only through its hooks ([`Hooks`], [`ToolSink`]).
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
use std::time::Instant;

use tokio::sync::watch;
use tokio::task::AbortHandle;

use crate::config::{EntryError, McpConfig, ServerConfig};
use crate::mcp::client::Client;
use crate::mcp::log::ServerLog;
use crate::mcp::transport::http::TransportKind;
use crate::mcp::transport::TransportSender;
use crate::trust::ApprovalStore;

mod approval;
mod auth;
mod connect;
mod era;
mod hooks;
mod restart;
mod status;
pub use approval::{ApprovalPolicy, ApproveOutcome};
pub use auth::PauseError;
pub use hooks::{
    Authorizers, Hooks, InputValues, RequestHandlers, Run, ServerObserver, ToolListing, ToolSink,
};
pub use restart::{
    RestartPolicy, DEFAULT_RESTART_ATTEMPTS, DEFAULT_RESTART_DELAY, DEFAULT_RESTART_STABLE_AFTER,
};
pub use status::{
    RestartStatus, ServerState, ServerStatus, StartPhase, StatusSnapshot, Unavailable,
};

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
    /// Where each server's listed tools go (the tool registry, or a gate in front of it).
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
    /// The services a start consults ([`Hooks`]).
    hooks: Hooks,
    /// The era each remote server (by URL) was found to speak ([`era`]).
    era_verdicts: era::Verdicts,
}

/// Cheap to clone; all clones drive the same servers.
#[derive(Clone)]
pub struct Manager {
    inner: Arc<Inner>,
}

/// Options for [`Manager::new`].
pub struct ManagerOptions {
    pub approvals: ApprovalStore,
    pub policy: ApprovalPolicy,
    /// PATH for children whose entry sets none (see [`crate::shell_env`]).
    pub path_for_children: Option<OsString>,
    /// The services a start consults (none: requests declined, no sign-in).
    pub hooks: Hooks,
}

impl Manager {
    pub fn new(project: &Path, tools: Arc<dyn ToolSink>, opts: ManagerOptions) -> Manager {
        Manager {
            inner: Arc::new(Inner {
                project: project.to_path_buf(),
                tools,
                approvals: opts.approvals,
                policy: opts.policy,
                path_for_children: opts.path_for_children,
                slots: Mutex::default(),
                config_error: Mutex::default(),
                status: watch::channel(Arc::new(StatusSnapshot::default())).0,
                restart_policy: Mutex::default(),
                stored_approvals: Mutex::default(),
                hooks: opts.hooks,
                era_verdicts: era::Verdicts::default(),
            }),
        }
    }

    pub fn project(&self) -> &Path {
        &self.inner.project
    }

    /// Recent output of one server.
    pub fn log(&self, server: &str) -> Option<Arc<ServerLog>> {
        self.lock().get(server).map(|s| s.log.clone())
    }

    /// The live clients (of servers connected or stopping), to tell them all something.
    pub fn clients(&self) -> Vec<Arc<Client>> {
        self.lock()
            .values()
            .filter_map(|s| s.client.clone())
            .collect()
    }

    /// The live client of a connected server.
    pub fn client(&self, server: &str) -> Option<Arc<Client>> {
        self.lock().get(server).and_then(|s| s.client.clone())
    }

    /// The client of a connected server, or why there is none.
    pub fn connected(&self, server: &str) -> Result<Arc<Client>, Unavailable> {
        let slots = self.lock();
        let Some(slot) = slots.get(server) else {
            return Err(Unavailable::Unknown {
                server: server.into(),
                known: slots.keys().cloned().collect(),
            });
        };
        let reason = match &slot.state {
            ServerState::Connected { .. } => match &slot.client {
                Some(c) => return Ok(c.clone()),
                None => "it is stopping".to_string(),
            },
            ServerState::Failed { reason, .. } => reason.clone(),
            ServerState::AwaitingApproval => {
                "it is awaiting your approval (run with --yes, or approve it when asked)".into()
            }
            ServerState::Disabled => "it is disabled in its config file".into(),
            ServerState::NeedsAuth { reason } => format!(
                "it needs you to sign in ({reason}): run `harness9 mcp login {server}` or use Sign in"
            ),
            ServerState::Stopped => "it is stopped".into(),
            ServerState::Starting { phase } => format!("it is still {}", phase.label()),
        };
        Err(Unavailable::NotConnected {
            server: server.into(),
            reason,
        })
    }

    /// The current run of one server, whatever its state (`None`: no such server).
    pub fn run_of(&self, server: &str) -> Option<Run> {
        let generation = self.lock().get(server)?.generation;
        Some(Run::new(self, server, generation))
    }

    /// The runs of the connected servers.
    pub fn connected_runs(&self) -> Vec<Run> {
        let current: Vec<(String, u64)> = self
            .lock()
            .iter()
            .filter(|(_, s)| matches!(s.state, ServerState::Connected { .. }))
            .map(|(n, s)| (n.clone(), s.generation))
            .collect();
        current
            .into_iter()
            .map(|(n, g)| Run::new(self, &n, g))
            .collect()
    }

    /// One server's entry as the manager runs it (`None`: no such server).
    pub fn entry(&self, server: &str) -> Option<Result<ServerConfig, EntryError>> {
        self.lock().get(server).map(|s| s.entry.clone())
    }

    /// One server's state now (`None`: no such server).
    pub fn state(&self, server: &str) -> Option<ServerState> {
        self.lock().get(server).map(|s| s.state.clone())
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

    /// Starts a stopped server again (if its entry is valid, enabled and approved;
    /// otherwise its state says why not).
    pub fn start_server(&self, name: &str) {
        self.start(name);
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
        if !self.may_run(slot.approved_for_run, &cfg) {
            slot.state = ServerState::AwaitingApproval;
            return None;
        }
        Some(cfg)
    }

    /// Stops one server and starts it again. Its status goes straight to starting (never
    /// stopped), so followers tell a restart from a stop.
    pub async fn restart(&self, name: &str) {
        let old = {
            let mut slots = self.lock();
            let Some(slot) = slots.get_mut(name) else {
                return;
            };
            slot.generation += 1;
            slot.restart = None;
            // A server that may not start says why at once.
            if self.startable(slot).is_some() {
                slot.state = ServerState::Starting {
                    phase: StartPhase::Spawning,
                };
            }
            take_running(slot)
        };
        self.inner.tools.remove_server(name);
        self.publish();
        old.end().await;
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

    fn lock(&self) -> parking_lot::MutexGuard<'_, BTreeMap<String, Slot>> {
        self.inner.slots.lock()
    }

    fn is_current(&self, name: &str, gen: u64) -> bool {
        self.lock().get(name).is_some_and(|s| s.generation == gen)
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
