//! The whole client surface of a project's servers beyond tools: each connected server's
//! resources, resource templates and prompts (listed after connecting, listed again on
//! `list_changed`), reading, subscribing, prompts with arguments, completion, the logging
//! level, the roots every server is given, and the handler that turns a server's
//! elicitation and sampling requests into [`Ask`]s for the user.
//!
//! Invariants: a listing belongs to one start of a server (its generation); a stale one
//! is never shown. The handler holds no reference back to the manager (no cycle), and
//! announces sampling only when it was turned on before the server started. Roots are
//! the project folder plus the extra roots set here; every connected server hears
//! `notifications/roots/list_changed` when they change.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use serde::Serialize;
use serde_json::{Map, Value};
use tokio::sync::{broadcast, watch};

use super::asks::{AskAnswer, AskKind, AskQueue, Unanswered};
use super::{Manager, ServerState};
use crate::mcp::client::{Client, ClientError, ClientEvent};
use crate::mcp::features::{
    Completion, CompletionRef, GetPromptResult, LogLevel, Prompt, ReadResourceResult, Resource,
    ResourceTemplate,
};
use crate::mcp::handler::{ClientHandler, HandlerFuture, Handles};
use crate::mcp::jsonrpc::RpcError;
use crate::mcp::log::{LogSource, ServerLog};
use crate::mcp::requests::{
    CreateMessageRequest, CreateMessageResult, ElicitAction, ElicitRequest, ElicitResult, Root,
    USER_REJECTED,
};

/// Events of the feature surface, for front ends that show resources and prompts.
#[derive(Debug, Clone, PartialEq, Serialize)]
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
    #[error("no server named \"{server}\" in .mcp.json{}", known_hint(.known))]
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

/// What the handlers of all servers share; no reference back to the manager.
pub(super) struct Shared {
    pub(super) asks: Arc<AskQueue>,
    sampling: AtomicBool,
    project_root: Root,
    extra_roots: Mutex<Vec<Root>>,
}

/// The surface state of one manager.
pub(super) struct Surface {
    shared: Arc<Shared>,
    listings: Mutex<BTreeMap<String, (u64, Arc<ServerFeatures>)>>,
    changed: watch::Sender<u64>,
    events: broadcast::Sender<SurfaceEvent>,
}

impl Surface {
    pub(super) fn new(project: &Path) -> Surface {
        let name = project
            .file_name()
            .map(|n| n.to_string_lossy().into_owned());
        Surface {
            shared: Arc::new(Shared {
                asks: Arc::default(),
                sampling: AtomicBool::new(false),
                project_root: Root::of_path(project, name),
                extra_roots: Mutex::default(),
            }),
            listings: Mutex::default(),
            changed: watch::channel(0).0,
            events: broadcast::channel(SURFACE_EVENTS).0,
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
    /// The handler given to one server's client at connect.
    pub(super) fn client_handler(
        &self,
        server: &str,
        log: Arc<ServerLog>,
    ) -> Arc<dyn ClientHandler> {
        let shared = self.inner.surface.shared.clone();
        let handles = Handles {
            elicitation_form: true,
            elicitation_url: true,
            sampling: shared.sampling.load(Ordering::Relaxed),
            sampling_tools: false,
            roots: true,
            roots_list_changed: true,
        };
        Arc::new(ServerHandler {
            server: server.to_string(),
            shared,
            handles,
            notes: Notes {
                server: server.to_string(),
                log,
            },
        })
    }

    /// The consent queue of every server's elicitation and sampling requests.
    pub fn asks(&self) -> &Arc<AskQueue> {
        &self.inner.surface.shared.asks
    }

    /// Whether servers started from now on are told the client handles sampling (off
    /// by default: only turn it on when something answers sampling asks).
    pub fn set_sampling(&self, enabled: bool) {
        self.inner
            .surface
            .shared
            .sampling
            .store(enabled, Ordering::Relaxed);
    }

    /// The roots every server gets: the project folder first, then the extra ones.
    pub fn roots(&self) -> Vec<Root> {
        self.inner.surface.shared.roots()
    }

    /// Replaces the extra roots (folders besides the project) and tells every connected
    /// server that the roots changed.
    pub fn set_extra_roots(&self, folders: &[PathBuf]) {
        let roots: Vec<Root> = folders
            .iter()
            .map(|f| Root::of_path(f, f.file_name().map(|n| n.to_string_lossy().into_owned())))
            .collect();
        {
            let mut extra = self
                .inner
                .surface
                .shared
                .extra_roots
                .lock()
                .expect("roots lock");
            if *extra == roots {
                return;
            }
            *extra = roots;
        }
        let clients: Vec<Arc<Client>> = self
            .lock()
            .values()
            .filter_map(|s| s.client.clone())
            .collect();
        for c in clients {
            let _ = c.notify_roots_changed();
        }
    }

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
                let listings = self.inner.surface.listings.lock().expect("features lock");
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
            ServerState::Disabled => "it is disabled in .mcp.json".into(),
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

    fn request_timeout(&self, server: &str) -> Option<Duration> {
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
        done.map_err(|error| client_error(server, error))
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
            .map_err(|error| client_error(server, error))
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
            let mut listings = this.inner.surface.listings.lock().expect("features lock");
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
            let mut listings = self.inner.surface.listings.lock().expect("features lock");
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

impl Shared {
    fn roots(&self) -> Vec<Root> {
        let mut roots = vec![self.project_root.clone()];
        roots.extend(self.extra_roots.lock().expect("roots lock").iter().cloned());
        roots
    }
}

/// Answers one server's requests through the consent queue.
struct ServerHandler {
    server: String,
    shared: Arc<Shared>,
    handles: Handles,
    notes: Notes,
}

/// Writes what became of a server's request to its log.
#[derive(Clone)]
struct Notes {
    server: String,
    log: Arc<ServerLog>,
}

impl Notes {
    fn note(&self, text: &str) {
        tracing::info!(server = %self.server, "{text}");
        self.log.push(LogSource::Host, "info", text);
    }
}

impl ClientHandler for ServerHandler {
    fn handles(&self) -> Handles {
        self.handles
    }

    fn elicit(&self, request: ElicitRequest) -> HandlerFuture<ElicitResult> {
        let schema = match &request {
            ElicitRequest::Form {
                requested_schema, ..
            } => Some(requested_schema.clone()),
            ElicitRequest::Url { .. } => None,
        };
        let what = format!(
            "asked for input ({} mode): {:?}",
            request.mode(),
            request.message()
        );
        let waiting = self
            .shared
            .asks
            .ask(&self.server, AskKind::Elicitation { request });
        let notes = self.notes.clone();
        Box::pin(async move {
            let (result, how) = match waiting.answer().await {
                Ok(AskAnswer::Elicit(r)) => {
                    let how = format!("{:?}", r.action).to_lowercase();
                    let r = match (r.action, schema) {
                        (ElicitAction::Accept, Some(schema)) => {
                            ElicitResult::accept_form(&schema, r.content.unwrap_or_default())
                        }
                        (ElicitAction::Accept, None) => ElicitResult::accept_url(),
                        (ElicitAction::Decline | ElicitAction::Cancel, _) => ElicitResult {
                            action: r.action,
                            content: None,
                        },
                    };
                    (r, format!("{how}ed by the user"))
                }
                Ok(AskAnswer::Refuse(_)) | Ok(AskAnswer::Sample(_)) => {
                    (ElicitResult::decline(), "declined by the user".into())
                }
                Err(why) => (
                    ElicitResult::decline(),
                    format!("declined: {}", why.reason()),
                ),
            };
            notes.note(&format!("the server {what}; {how}"));
            Ok(result)
        })
    }

    fn create_message(&self, request: CreateMessageRequest) -> HandlerFuture<CreateMessageResult> {
        let waiting = self
            .shared
            .asks
            .ask(&self.server, AskKind::Sampling { request });
        let h = self.notes.clone();
        Box::pin(async move {
            let refused = |reason: String| RpcError {
                code: USER_REJECTED,
                message: reason,
                data: None,
            };
            match waiting.answer().await {
                Ok(AskAnswer::Sample(result)) => {
                    h.note("the server asked the model for a message; the user approved it");
                    Ok(result)
                }
                Ok(AskAnswer::Refuse(reason)) => {
                    h.note("the server asked the model for a message; the user refused");
                    Err(refused(reason_or_default(reason)))
                }
                Ok(AskAnswer::Elicit(_)) => Err(refused(reason_or_default(String::new()))),
                Err(why) => {
                    let text = match why {
                        Unanswered::NoFrontEnd => "harness9 has no model provider for sampling here and no one to approve it; the request was refused".to_string(),
                        Unanswered::TimedOut(_) => format!("the sampling request was refused: {}", why.reason()),
                    };
                    h.note(&format!("the server asked the model for a message; {text}"));
                    Err(refused(text))
                }
            }
        })
    }

    fn list_roots(&self) -> HandlerFuture<Vec<Root>> {
        let roots = self.shared.roots();
        Box::pin(async move { Ok(roots) })
    }
}

fn reason_or_default(reason: String) -> String {
    if reason.trim().is_empty() {
        "the user refused the sampling request".into()
    } else {
        reason
    }
}
