//! What the manager asks of the services beside it, and what it tells them. The manager
//! defines these traits and never names a service; the façade wires each service in
//! ([`Hooks`], [`ToolSink`]). A manager without hooks still starts, stops and reloads its
//! servers: their requests are declined, remote servers get no sign-in, nothing follows
//! them.
//!
//! Invariants: a hook returns at once (long work goes to a task of the service's own) and
//! holds no strong reference back to the manager: what a service needs of one start is a
//! [`Run`], which holds the manager weakly. Only [`ToolSink::held`] is called while the
//! manager holds its lock, so it must not call the manager.

use std::sync::{Arc, Weak};
use std::time::Duration;

use futures::future::BoxFuture;

use super::{Inner, Manager, ServerState};
use crate::config::ServerConfig;
use crate::mcp::auth::Authorizer;
use crate::mcp::handler::ClientHandler;
use crate::mcp::log::ServerLog;
use crate::mcp::{Client, ToolDef};

/// The services a start consults, each optional.
#[derive(Clone, Default)]
pub struct Hooks {
    /// Gives each server's client the handler of the server's requests (elicitation,
    /// sampling, roots).
    pub requests: Option<Arc<dyn RequestHandlers>>,
    /// Gives each start of a remote server its authorizer (sign-in).
    pub authorizers: Option<Arc<dyn Authorizers>>,
    /// Told about each server that connected.
    pub observers: Vec<Arc<dyn ServerObserver>>,
    /// Gives the values of an entry's `${input:NAME}` references when it starts.
    pub inputs: Option<Arc<dyn InputValues>>,
}

/// Where the values of an entry's `${input:NAME}` references come from (the credential
/// store). Called off the runtime threads, once per start of an entry that has any.
pub trait InputValues: Send + Sync + 'static {
    /// The value of input `name` of `cfg`'s entry (`None`: none kept).
    fn value(&self, cfg: &ServerConfig, name: &str) -> Option<String>;
}

/// Where a server's client gets the handler of the server's requests.
pub trait RequestHandlers: Send + Sync + 'static {
    /// The handler for this start of `server` (`log` is the server's log, for what became
    /// of each request).
    fn handler(
        &self,
        server: &str,
        cfg: &ServerConfig,
        log: Arc<ServerLog>,
    ) -> Arc<dyn ClientHandler>;
}

/// Where a remote server's transport gets its authorization.
pub trait Authorizers: Send + Sync + 'static {
    /// The authorizer for this start of `server`; `None` when it signs in no one (a local
    /// server, an entry that sends its own `Authorization` header). The manager keeps it
    /// for the start: it tells whether the server waits for sign-in, and who is signed in.
    fn authorizer(&self, server: &str, cfg: &ServerConfig) -> Option<Arc<Authorizer>>;
}

/// Told about each server that connected (after its tools were placed).
pub trait ServerObserver: Send + Sync + 'static {
    /// `run` is this start; its connection ends when `client`'s does.
    fn connected(&self, run: &Run, client: &Arc<Client>, cfg: &ServerConfig, log: &Arc<ServerLog>);
}

/// Where the manager puts each server's tools (the tool registry, or a gate in front of
/// it). The manager places; it never knows the registry, which depends on this module and
/// not the reverse.
pub trait ToolSink: Send + Sync + 'static {
    /// Takes a server's listing (at connect, and again after each `list_changed`).
    /// Resolves to how many of its tools are usable now (the connected state shows it), or
    /// `None` when the run ended meanwhile and nothing was placed.
    fn place(&self, listing: ToolListing) -> BoxFuture<'_, Option<usize>>;
    /// Removes the tools of one server (it stopped, failed or needs sign-in).
    fn remove_server(&self, server: &str);
    /// How many of a connected server's listed tools are held back (shown in its status).
    /// Called under the manager's lock: must not call the manager.
    fn held(&self, _server: &str) -> usize {
        0
    }
}

/// One listing of a connected server's tools.
pub struct ToolListing {
    pub run: Run,
    pub client: Arc<Client>,
    pub defs: Vec<ToolDef>,
    /// The entry's tool-call timeout.
    pub timeout: Duration,
    pub log: Arc<ServerLog>,
}

/// One start of one server, as the services see it. Holds the manager weakly: once the
/// manager is gone, a run is no longer current.
#[derive(Clone)]
pub struct Run {
    manager: Weak<Inner>,
    server: String,
    generation: u64,
}

impl Run {
    pub(super) fn new(manager: &Manager, server: &str, generation: u64) -> Run {
        Run {
            manager: Arc::downgrade(&manager.inner),
            server: server.to_string(),
            generation,
        }
    }

    fn manager(&self) -> Option<Manager> {
        self.manager.upgrade().map(|inner| Manager { inner })
    }

    pub fn server(&self) -> &str {
        &self.server
    }

    pub(super) fn generation(&self) -> u64 {
        self.generation
    }

    /// Whether this is still the server's current start (no stop, restart or reload since).
    pub fn is_current(&self) -> bool {
        self.manager()
            .is_some_and(|m| m.is_current(&self.server, self.generation))
    }

    /// Whether this start is current and connected.
    pub fn is_connected(&self) -> bool {
        self.manager().is_some_and(|m| {
            m.lock().get(&self.server).is_some_and(|s| {
                s.generation == self.generation && matches!(s.state, ServerState::Connected { .. })
            })
        })
    }

    /// The sink released or held tools of this start: the connected state shows `usable`
    /// tools, and the status (with the held count) goes out again. Nothing happens when the
    /// start is over.
    pub fn set_usable_tools(&self, usable: usize) {
        let Some(manager) = self.manager() else {
            return;
        };
        let client = manager
            .lock()
            .get(&self.server)
            .filter(|s| s.generation == self.generation)
            .and_then(|s| s.client.clone());
        if let Some(client) = client {
            manager.set_state(
                &self.server,
                self.generation,
                ServerState::connected(&client, usable),
            );
        }
    }
}

impl PartialEq for Run {
    fn eq(&self, other: &Run) -> bool {
        self.generation == other.generation
            && self.server == other.server
            && Weak::ptr_eq(&self.manager, &other.manager)
    }
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Run")
            .field("server", &self.server)
            .field("generation", &self.generation)
            .finish()
    }
}
