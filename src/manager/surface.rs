//! The client surface of a project's servers beyond tools: each connected server's
//! resources, resource templates and prompts (listed after connecting, listed again on
//! `list_changed`), reading, subscribing, prompts with arguments, completion and the
//! logging level. What servers ask of the host (elicitation, sampling, roots) is
//! [`consent`](super::consent)'s.
//!
//! Invariants: a listing belongs to one start of a server (its generation); a stale one
//! is never shown, and the task that follows a server's changes ends with its connection.

use parking_lot::Mutex;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::{Arc, Weak};
use std::time::Duration;

use serde::Serialize;
use serde_json::{Map, Value};
use tokio::sync::{broadcast, watch};

use super::consent::Shared;
use super::{Manager, ServerState};
use crate::mcp::client::{Client, ClientError, ClientEvent};
use crate::mcp::features::{
    Completion, CompletionRef, GetPromptResult, LogLevel, Prompt, ReadResourceResult, Resource,
    ResourceTemplate,
};
use crate::mcp::log::LogSource;

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

fn known_hint(known: &[String]) -> String {
    if known.is_empty() {
        String::new()
    } else {
        format!(" (servers: {})", known.join(", "))
    }
}

/// The surface state of one manager.
pub(super) struct Surface {
    pub(super) shared: Arc<Shared>,
    listings: Mutex<BTreeMap<String, (u64, Arc<ServerFeatures>)>>,
    changed: watch::Sender<u64>,
    events: broadcast::Sender<SurfaceEvent>,
    pub(super) levels: super::levels::Levels,
    /// The resources the user follows, by server, followed again after a restart.
    follows: Mutex<BTreeMap<String, BTreeSet<String>>>,
}

impl Surface {
    pub(super) fn new(project: &Path, grants: crate::trust::sampling::SamplingGrants) -> Surface {
        Surface {
            shared: Arc::new(Shared::new(project, grants)),
            listings: Mutex::default(),
            changed: watch::channel(0).0,
            events: broadcast::channel(SURFACE_EVENTS).0,
            levels: Default::default(),
            follows: Mutex::default(),
        }
    }
}

/// Which listings to refresh.
#[derive(Clone, Copy)]
enum Which {
    All,
    Resources,
    Prompts,
}

impl Manager {
    /// Listing changes, resource updates and finished URL elicitations.
    pub fn subscribe_surface(&self) -> broadcast::Receiver<SurfaceEvent> {
        self.inner.surface.events.subscribe()
    }

    /// What the connected servers (or one) offer beyond tools, by server. Waits up to
    /// `wait` for servers that connected but are still being listed.
    pub async fn features(
        &self,
        server: Option<&str>,
        wait: Duration,
    ) -> Result<Vec<(String, Arc<ServerFeatures>)>, FeatureError> {
        let mut changed = self.inner.surface.changed.subscribe();
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let wanted: Vec<(String, u64)> = match server {
                Some(s) => {
                    self.connected(s)?;
                    let gen = self.lock().get(s).map_or(0, |slot| slot.generation);
                    vec![(s.to_string(), gen)]
                }
                None => self
                    .lock()
                    .iter()
                    .filter(|(_, s)| matches!(s.state, ServerState::Connected { .. }))
                    .map(|(n, s)| (n.clone(), s.generation))
                    .collect(),
            };
            let (found, missing) = {
                let listings = self.inner.surface.listings.lock();
                let mut found = Vec::with_capacity(wanted.len());
                let mut missing = 0;
                for (name, gen) in &wanted {
                    match listings.get(name) {
                        Some((g, f)) if g == gen => found.push((name.clone(), f.clone())),
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
    pub fn has_resources(&self) -> bool {
        let current: Vec<(String, u64)> = self
            .lock()
            .iter()
            .filter(|(_, s)| matches!(s.state, ServerState::Connected { .. }))
            .map(|(n, s)| (n.clone(), s.generation))
            .collect();
        let listings = self.inner.surface.listings.lock();
        current.iter().any(|(name, gen)| {
            listings.get(name).is_some_and(|(g, f)| {
                g == gen && (!f.resources.is_empty() || !f.templates.is_empty())
            })
        })
    }

    /// The client of a connected server, or why there is none.
    pub fn connected(&self, server: &str) -> Result<Arc<Client>, FeatureError> {
        let slots = self.lock();
        let Some(slot) = slots.get(server) else {
            return Err(FeatureError::UnknownServer {
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
        Err(FeatureError::NotConnected {
            server: server.into(),
            reason,
        })
    }

    pub(super) fn request_timeout(&self, server: &str) -> Option<Duration> {
        self.lock()
            .get(server)
            .and_then(|s| s.entry.as_ref().ok())
            .map(|c| c.tool_timeout)
    }

    /// A client of `server` that declared `capability`, with the request timeout.
    fn capable(
        &self,
        server: &str,
        capability: &str,
        what: &'static str,
    ) -> Result<(Arc<Client>, Option<Duration>), FeatureError> {
        let client = self.connected(server)?;
        if !client.has_capability(capability) {
            return Err(FeatureError::Unsupported {
                server: server.into(),
                what,
            });
        }
        Ok((client, self.request_timeout(server)))
    }

    pub async fn read_resource(
        &self,
        server: &str,
        uri: &str,
    ) -> Result<ReadResourceResult, FeatureError> {
        let (client, timeout) = self.capable(server, "resources", "resources")?;
        client
            .read_resource(uri, timeout)
            .await
            .map_err(|error| client_error(server, error))
    }

    /// Subscribes to (or, with `on` false, unsubscribes from) updates of one resource;
    /// they arrive as [`SurfaceEvent::ResourceUpdated`].
    pub async fn subscribe_resource(
        &self,
        server: &str,
        uri: &str,
        on: bool,
    ) -> Result<(), FeatureError> {
        let (client, timeout) = self.capable(server, "resources", "resources")?;
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
        let mut follows = self.inner.surface.follows.lock();
        let uris = follows.entry(server.to_string()).or_default();
        match on {
            true => uris.insert(uri.to_string()),
            false => uris.remove(uri),
        };
        Ok(())
    }

    /// After a (re)connect: asks for change notifications (the modern era's
    /// `subscriptions/listen`) and follows again the resources followed before. Never
    /// blocks the start; a failure is logged.
    pub(super) fn resume_listening(&self, server: &str, client: &Arc<Client>) {
        let follow: Vec<String> = self
            .inner
            .surface
            .follows
            .lock()
            .get(server)
            .map(|u| u.iter().cloned().collect())
            .unwrap_or_default();
        if follow.is_empty() && client.era() == crate::mcp::era::Era::Legacy {
            return;
        }
        let client = client.clone();
        let log = self.log(server);
        let timeout = self.request_timeout(server);
        tokio::spawn(async move {
            if let Err(e) = client.listen(&follow, timeout).await {
                if let Some(log) = log {
                    let text = format!("could not ask for change notifications: {e}");
                    log.push(LogSource::Host, "warning", &text);
                }
            }
        });
    }

    pub async fn get_prompt(
        &self,
        server: &str,
        name: &str,
        arguments: Map<String, Value>,
    ) -> Result<GetPromptResult, FeatureError> {
        let (client, timeout) = self.capable(server, "prompts", "prompts")?;
        client
            .get_prompt(name, arguments, timeout)
            .await
            .map_err(|error| client_error(server, error))
    }

    pub async fn complete(
        &self,
        server: &str,
        reference: &CompletionRef,
        argument: &str,
        value: &str,
        context: &Map<String, Value>,
    ) -> Result<Completion, FeatureError> {
        let (client, timeout) = self.capable(server, "completions", "argument completion")?;
        client
            .complete(reference, argument, value, context, timeout)
            .await
            .map_err(|error| client_error(server, error))
    }

    pub async fn set_log_level(&self, server: &str, level: LogLevel) -> Result<(), FeatureError> {
        let (client, timeout) = self.capable(server, "logging", "logging")?;
        client
            .set_logging_level(level, timeout)
            .await
            .map_err(|error| client_error(server, error))?;
        self.remember_log_level(server, level);
        Ok(())
    }

    /// After a server connected: list what it offers, and follow its list changes,
    /// resource updates and finished URL elicitations until it goes away.
    pub(super) fn follow_features(
        &self,
        name: &str,
        gen: u64,
        client: &Arc<Client>,
        timeout: Duration,
    ) {
        let this = self.clone();
        let name = name.to_string();
        let mut events = client.events();
        let client = Arc::downgrade(client);
        tokio::spawn(async move {
            this.list_features(&name, gen, &client, timeout, Which::All)
                .await;
            loop {
                let which = match events.recv().await {
                    Ok(ClientEvent::ResourcesChanged) => Which::Resources,
                    Ok(ClientEvent::PromptsChanged) => Which::Prompts,
                    Ok(ClientEvent::ResourceUpdated { uri }) => {
                        let server = name.clone();
                        let _ = this
                            .inner
                            .surface
                            .events
                            .send(SurfaceEvent::ResourceUpdated { server, uri });
                        continue;
                    }
                    Ok(ClientEvent::ElicitationComplete { elicitation_id }) => {
                        let server = name.clone();
                        let _ = this
                            .inner
                            .surface
                            .events
                            .send(SurfaceEvent::ElicitationComplete {
                                server,
                                elicitation_id,
                            });
                        continue;
                    }
                    Ok(ClientEvent::ToolsChanged) => continue,
                    Err(broadcast::error::RecvError::Lagged(_)) => Which::All,
                    Ok(ClientEvent::Closed(_)) | Err(broadcast::error::RecvError::Closed) => break,
                };
                let gone = client.upgrade().is_none_or(|c| c.closed_reason().is_some());
                if gone || !this.is_current(&name, gen) {
                    break;
                }
                this.list_features(&name, gen, &client, timeout, which)
                    .await;
            }
            let mut listings = this.inner.surface.listings.lock();
            if listings.get(&name).is_some_and(|(g, _)| *g == gen) {
                listings.remove(&name);
            }
        });
    }

    async fn list_features(
        &self,
        name: &str,
        gen: u64,
        client: &Weak<Client>,
        timeout: Duration,
        which: Which,
    ) {
        let Some(client) = client.upgrade() else {
            return;
        };
        let t = Some(timeout);
        let (want_resources, want_prompts) = match which {
            Which::All => (true, true),
            Which::Resources => (true, false),
            Which::Prompts => (false, true),
        };
        let resources = async {
            if !want_resources {
                return None;
            }
            let (r, tpl) =
                tokio::join!(client.list_resources(t), client.list_resource_templates(t));
            Some((r, tpl))
        };
        let prompts = async {
            match want_prompts {
                true => Some(client.list_prompts(t).await),
                false => None,
            }
        };
        let (resources, prompts) = tokio::join!(resources, prompts);
        drop(client);
        if !self.is_current(name, gen) {
            return;
        }
        let mut errors = Vec::new();
        let mut note = |what: &str, e: ClientError| {
            let text = format!("listing {what} failed: {e}");
            if let Some(log) = self.log(name) {
                log.push(LogSource::Host, "warning", &text);
            }
            errors.push(text);
        };
        {
            let mut listings = self.inner.surface.listings.lock();
            let mut next = match listings.get(name) {
                Some((g, f)) if *g == gen => (**f).clone(),
                _ => ServerFeatures::default(),
            };
            if let Some((r, tpl)) = resources {
                match r {
                    Ok(r) => next.resources = Arc::new(r),
                    Err(e) => note("resources", e),
                }
                match tpl {
                    Ok(t) => next.templates = Arc::new(t),
                    Err(e) => note("resource templates", e),
                }
            }
            if let Some(p) = prompts {
                match p {
                    Ok(p) => next.prompts = Arc::new(p),
                    Err(e) => note("prompts", e),
                }
            }
            next.errors = errors;
            listings.insert(name.to_string(), (gen, Arc::new(next)));
        }
        self.inner.surface.changed.send_modify(|n| *n += 1);
        let _ = self
            .inner
            .surface
            .events
            .send(SurfaceEvent::ListingChanged {
                server: name.to_string(),
            });
    }
}

fn client_error(server: &str, error: ClientError) -> FeatureError {
    FeatureError::Client {
        server: server.into(),
        error,
    }
}
