//! The catalog of a project's servers beyond tools: each connected server's resources,
//! resource templates and prompts (listed after connecting, listed again on
//! `list_changed`), reading, subscribing, prompts with arguments, completion, logging
//! levels and server details. The manager tells it about each server that connected
//! ([`ServerObserver`]); requests go to the client of a server the manager runs.
//!
//! Invariants: a listing belongs to one run of a server (see `follow`); a stale one is
//! never shown. Levels and followed resources outlive a restart and are set again.

mod details;
mod follow;
mod levels;
pub use details::ServerDetails;

use parking_lot::Mutex;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde_json::{Map, Value};
use tokio::sync::{broadcast, watch};

use crate::config::ServerConfig;
use crate::manager::{Manager, Run, ServerObserver, Unavailable};
use crate::mcp::client::{Client, ClientError};
use crate::mcp::features::{
    Completion, CompletionRef, GetPromptResult, LogLevel, Prompt, ReadResourceResult, Resource,
    ResourceTemplate,
};
use crate::mcp::log::ServerLog;

/// Events of the feature surface, for front ends that show resources and prompts.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum SurfaceEvent {
    /// A server's resources, templates or prompts were listed (again).
    #[serde(rename_all = "camelCase")]
    ListingChanged { server: String },
    /// A subscribed resource changed on the server.
    #[serde(rename_all = "camelCase")]
    ResourceUpdated { server: String, uri: String },
    /// A URL elicitation finished out of band.
    #[serde(rename_all = "camelCase")]
    ElicitationComplete {
        server: String,
        elicitation_id: String,
    },
}

/// Events buffered for a slow front end before it skips ahead.
const SURFACE_EVENTS: usize = 256;

/// What one connected server offers beyond tools.
#[derive(Debug, Clone, Default)]
pub struct ServerFeatures {
    pub resources: Arc<Vec<Resource>>,
    pub templates: Arc<Vec<ResourceTemplate>>,
    pub prompts: Arc<Vec<Prompt>>,
    /// Listings that failed, in words.
    pub errors: Vec<String>,
}

/// A resource with the server that has it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServerResource {
    pub server: String,
    #[serde(flatten)]
    pub resource: Resource,
}

/// A resource template with the server that has it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServerTemplate {
    pub server: String,
    #[serde(flatten)]
    pub template: ResourceTemplate,
}

/// A prompt with the server that has it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServerPrompt {
    pub server: String,
    #[serde(flatten)]
    pub prompt: Prompt,
}

/// Why a feature request could not be made.
#[derive(Debug, Clone, thiserror::Error)]
pub enum FeatureError {
    #[error("no server named \"{server}\" in any config scope{}", known_hint(.known))]
    UnknownServer { server: String, known: Vec<String> },
    #[error("server \"{server}\" is not connected: {reason}")]
    NotConnected { server: String, reason: String },
    #[error("server \"{server}\" does not offer {what}")]
    Unsupported { server: String, what: &'static str },
    #[error("server \"{server}\": {error}")]
    Client { server: String, error: ClientError },
}

impl FeatureError {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        match self {
            FeatureError::UnknownServer { .. } => "unknown-server",
            FeatureError::NotConnected { .. } => "not-connected",
            FeatureError::Unsupported { .. } => "unsupported",
            FeatureError::Client { error, .. } => error.code(),
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

impl From<Unavailable> for FeatureError {
    fn from(e: Unavailable) -> FeatureError {
        match e {
            Unavailable::Unknown { server, known } => FeatureError::UnknownServer { server, known },
            Unavailable::NotConnected { server, reason } => {
                FeatureError::NotConnected { server, reason }
            }
        }
    }
}

fn client_error(server: &str, error: ClientError) -> FeatureError {
    FeatureError::Client {
        server: server.into(),
        error,
    }
}

/// The catalog's state, shared with the tasks that follow the servers.
struct Inner {
    /// The latest listing of each connected server, with the run it belongs to.
    listings: Mutex<BTreeMap<String, (Run, Arc<ServerFeatures>)>>,
    changed: watch::Sender<u64>,
    events: broadcast::Sender<SurfaceEvent>,
    levels: levels::Levels,
    /// The resources the user follows, by server, followed again after a restart.
    follows: Mutex<BTreeMap<String, BTreeSet<String>>>,
}

/// The catalog of one project's servers. Cheap to clone; all clones share one state.
#[derive(Clone)]
pub struct Catalog {
    inner: Arc<Inner>,
}

impl Default for Catalog {
    fn default() -> Self {
        Catalog {
            inner: Arc::new(Inner {
                listings: Mutex::default(),
                changed: watch::channel(0).0,
                events: broadcast::channel(SURFACE_EVENTS).0,
                levels: Default::default(),
                follows: Mutex::default(),
            }),
        }
    }
}

impl ServerObserver for Catalog {
    fn connected(&self, run: &Run, client: &Arc<Client>, cfg: &ServerConfig, log: &Arc<ServerLog>) {
        let server = run.server();
        self.inner
            .levels
            .reapply(server, client, log, cfg.tool_timeout);
        follow::follow_features(&self.inner, run, client, cfg.startup_timeout, log);
        follow::resume_listening(&self.inner, server, client, log, cfg.tool_timeout);
    }
}

impl Catalog {
    /// Listing changes, resource updates and finished URL elicitations.
    pub fn subscribe(&self) -> broadcast::Receiver<SurfaceEvent> {
        self.inner.events.subscribe()
    }

    /// What the connected servers (or one) offer beyond tools, by server. Waits up to
    /// `wait` for servers that connected but are still being listed.
    pub async fn features(
        &self,
        manager: &Manager,
        server: Option<&str>,
        wait: Duration,
    ) -> Result<Vec<(String, Arc<ServerFeatures>)>, FeatureError> {
        let mut changed = self.inner.changed.subscribe();
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let wanted: Vec<Run> = match server {
                Some(s) => {
                    manager.connected(s)?;
                    manager.run_of(s).into_iter().collect()
                }
                None => manager.connected_runs(),
            };
            let (found, missing) = {
                let listings = self.inner.listings.lock();
                let mut found = Vec::with_capacity(wanted.len());
                let mut missing = 0;
                for run in &wanted {
                    match listings.get(run.server()) {
                        Some((r, f)) if r == run => {
                            found.push((run.server().to_string(), f.clone()))
                        }
                        _ => missing += 1,
                    }
                }
                (found, missing)
            };
            if missing == 0 {
                return Ok(found);
            }
            if tokio::time::timeout_at(deadline, changed.changed())
                .await
                .is_err()
            {
                return Ok(found);
            }
        }
    }

    /// Whether any server's current listing has resources or resource templates (no
    /// waiting: servers still being listed count as having none).
    pub fn has_resources(&self, manager: &Manager) -> bool {
        let current = manager.connected_runs();
        let listings = self.inner.listings.lock();
        current.iter().any(|run| {
            listings.get(run.server()).is_some_and(|(r, f)| {
                r == run && (!f.resources.is_empty() || !f.templates.is_empty())
            })
        })
    }

    /// A client of `server` that declared `capability`, with the request timeout.
    fn capable(
        manager: &Manager,
        server: &str,
        capability: &str,
        what: &'static str,
    ) -> Result<(Arc<Client>, Option<Duration>), FeatureError> {
        let client = manager.connected(server)?;
        if !client.has_capability(capability) {
            return Err(FeatureError::Unsupported {
                server: server.into(),
                what,
            });
        }
        let timeout = manager
            .entry(server)
            .and_then(|e| e.ok())
            .map(|c| c.tool_timeout);
        Ok((client, timeout))
    }

    pub async fn read_resource(
        &self,
        manager: &Manager,
        server: &str,
        uri: &str,
    ) -> Result<ReadResourceResult, FeatureError> {
        let (client, timeout) = Self::capable(manager, server, "resources", "resources")?;
        client
            .read_resource(uri, timeout)
            .await
            .map_err(|error| client_error(server, error))
    }

    /// Subscribes to (or, with `on` false, unsubscribes from) updates of one resource;
    /// they arrive as [`SurfaceEvent::ResourceUpdated`].
    pub async fn subscribe_resource(
        &self,
        manager: &Manager,
        server: &str,
        uri: &str,
        on: bool,
    ) -> Result<(), FeatureError> {
        let (client, timeout) = Self::capable(manager, server, "resources", "resources")?;
        if !client.can_subscribe() {
            return Err(FeatureError::Unsupported {
                server: server.into(),
                what: "resource subscriptions",
            });
        }
        let done = match on {
            true => client.subscribe(uri, timeout).await,
            false => client.unsubscribe(uri, timeout).await,
        };
        done.map_err(|error| client_error(server, error))?;
        let mut follows = self.inner.follows.lock();
        let uris = follows.entry(server.to_string()).or_default();
        match on {
            true => uris.insert(uri.to_string()),
            false => uris.remove(uri),
        };
        Ok(())
    }

    pub async fn get_prompt(
        &self,
        manager: &Manager,
        server: &str,
        name: &str,
        arguments: Map<String, Value>,
    ) -> Result<GetPromptResult, FeatureError> {
        let (client, timeout) = Self::capable(manager, server, "prompts", "prompts")?;
        client
            .get_prompt(name, arguments, timeout)
            .await
            .map_err(|error| client_error(server, error))
    }

    pub async fn complete(
        &self,
        manager: &Manager,
        server: &str,
        reference: &CompletionRef,
        argument: &str,
        value: &str,
        context: &Map<String, Value>,
    ) -> Result<Completion, FeatureError> {
        let (client, timeout) =
            Self::capable(manager, server, "completions", "argument completion")?;
        client
            .complete(reference, argument, value, context, timeout)
            .await
            .map_err(|error| client_error(server, error))
    }

    /// Sets a server's logging level; remembered and set again after each restart.
    pub async fn set_log_level(
        &self,
        manager: &Manager,
        server: &str,
        level: LogLevel,
    ) -> Result<(), FeatureError> {
        let (client, timeout) = Self::capable(manager, server, "logging", "logging")?;
        client
            .set_logging_level(level, timeout)
            .await
            .map_err(|error| client_error(server, error))?;
        self.inner.levels.remember(server, level);
        Ok(())
    }

    /// The logging level the user chose for a server this session.
    pub fn log_level(&self, server: &str) -> Option<LogLevel> {
        self.inner.levels.get(server)
    }

    /// Title, icons and logging of a connected server.
    pub fn server_details(
        &self,
        manager: &Manager,
        server: &str,
    ) -> Result<ServerDetails, FeatureError> {
        let client = manager.connected(server)?;
        Ok(ServerDetails::of(server, &client, self.log_level(server)))
    }
}
