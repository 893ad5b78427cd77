//! Consent and roots: the handler every server's client gets at connect. It turns a
//! server's elicitation and sampling requests into [`Ask`](super::Ask)s in the manager's
//! queue (with the default answer when no front end listens or nobody answers), gives
//! `roots/list` the project folder and the extra roots, and writes what became of each
//! request to the server's log.
//!
//! Invariants: the handler holds no reference back to the manager (no cycle through the
//! client), and announces sampling only when it was turned on before the server started.

use parking_lot::Mutex;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::asks::{AskAnswer, AskKind, AskQueue, Unanswered};
use super::sampling::SamplingFlow;
use super::Manager;
use crate::mcp::client::Client;
use crate::mcp::handler::{ClientHandler, HandlerFuture, Handles};
use crate::mcp::jsonrpc::{RpcError, INTERNAL_ERROR};
use crate::mcp::log::{LogSource, ServerLog};
use crate::mcp::requests::{
    CreateMessageRequest, CreateMessageResult, ElicitAction, ElicitRequest, ElicitResult, Root,
};
use crate::mcp::sampling::Sampler;
use crate::trust::sampling::SamplingGrants;

/// What the handlers of all servers share; no reference back to the manager.
pub(super) struct Shared {
    pub(super) asks: Arc<AskQueue>,
    sampling: AtomicBool,
    sampler: Mutex<Option<Arc<dyn Sampler>>>,
    pub(super) grants: SamplingGrants,
    pub(super) project: PathBuf,
    project_root: Root,
    extra_roots: Mutex<Vec<Root>>,
}

impl Manager {
    /// The handler given to one server's client at connect.
    /// `fingerprint` is the server entry's, to which an "always" sampling grant is bound.
    pub(super) fn client_handler(
        &self,
        server: &str,
        fingerprint: Option<String>,
        log: Arc<ServerLog>,
    ) -> Arc<dyn ClientHandler> {
        let shared = self.inner.consent.clone();
        let sampling = shared.sampling.load(Ordering::Relaxed);
        let handles = Handles {
            elicitation_form: true,
            elicitation_url: true,
            sampling,
            // Tools in sampling requests go to the model like any other request.
            sampling_tools: sampling,
            roots: true,
            roots_list_changed: true,
        };
        Arc::new(ServerHandler {
            server: server.to_string(),
            fingerprint,
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
        &self.inner.consent.asks
    }

    /// Whether servers started from now on are told the client handles sampling (off
    /// by default: only turn it on when something answers sampling asks).
    pub fn set_sampling(&self, enabled: bool) {
        self.inner
            .consent
            .sampling
            .store(enabled, Ordering::Relaxed);
    }

    /// What runs approved sampling requests (`None`: they are answered with an error that
    /// says sampling has no model here).
    pub fn set_sampler(&self, sampler: Option<Arc<dyn Sampler>>) {
        *self.inner.consent.sampler.lock() = sampler;
    }

    /// The servers of this project that may use the model without asking, with the
    /// fingerprint of the entry each grant holds for. Reads the store off the runtime.
    pub async fn sampling_grants(&self) -> std::collections::BTreeMap<String, String> {
        let shared = self.inner.consent.clone();
        tokio::task::spawn_blocking(move || shared.grants.granted(&shared.project))
            .await
            .unwrap_or_default()
    }

    /// Withdraws a server's "always" grant: its next sampling request asks again.
    /// `Ok(true)` when there was one.
    pub async fn revoke_sampling(&self, server: &str) -> std::io::Result<bool> {
        let shared = self.inner.consent.clone();
        let server = server.to_string();
        tokio::task::spawn_blocking(move || shared.grants.revoke(&shared.project, &server))
            .await
            .map_err(std::io::Error::other)?
    }

    /// The roots every server gets: the project folder first, then the extra ones.
    pub fn roots(&self) -> Vec<Root> {
        self.inner.consent.roots()
    }

    /// Replaces the extra roots (folders besides the project) and tells every connected
    /// server that the roots changed.
    pub fn set_extra_roots(&self, folders: &[PathBuf]) {
        let roots: Vec<Root> = folders
            .iter()
            .map(|f| Root::of_path(f, f.file_name().map(|n| n.to_string_lossy().into_owned())))
            .collect();
        {
            let mut extra = self.inner.consent.extra_roots.lock();
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
}

impl Shared {
    pub(super) fn new(project: &std::path::Path, grants: SamplingGrants) -> Shared {
        let name = project
            .file_name()
            .map(|n| n.to_string_lossy().into_owned());
        Shared {
            asks: Arc::default(),
            sampling: AtomicBool::new(false),
            sampler: Mutex::default(),
            grants,
            project: project.to_path_buf(),
            project_root: Root::of_path(project, name),
            extra_roots: Mutex::default(),
        }
    }

    pub(super) fn sampler(&self) -> Option<Arc<dyn Sampler>> {
        self.sampler.lock().clone()
    }

    fn roots(&self) -> Vec<Root> {
        let mut roots = vec![self.project_root.clone()];
        roots.extend(self.extra_roots.lock().iter().cloned());
        roots
    }
}

/// Answers one server's requests through the consent queue.
struct ServerHandler {
    server: String,
    fingerprint: Option<String>,
    shared: Arc<Shared>,
    handles: Handles,
    notes: Notes,
}

/// Writes what became of a server's request to its log.
#[derive(Clone)]
pub(super) struct Notes {
    server: String,
    log: Arc<ServerLog>,
}

impl Notes {
    pub(super) fn note(&self, text: &str) {
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
                    let how = match r.action {
                        ElicitAction::Accept => "accepted by the user",
                        ElicitAction::Decline => "declined by the user",
                        ElicitAction::Cancel => "cancelled by the user",
                    };
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
                    (r, how.to_string())
                }
                Ok(AskAnswer::Refuse(_) | AskAnswer::Sample(_) | AskAnswer::Approve(_)) => {
                    (ElicitResult::decline(), "declined by the user".into())
                }
                Err(Unanswered::Failed) => {
                    let why = Unanswered::Failed.reason();
                    notes.note(&format!(
                        "the server {what}; {why}, so it was sent an error"
                    ));
                    return Err(RpcError {
                        code: INTERNAL_ERROR,
                        message: format!("{why}; try again"),
                        data: None,
                    });
                }
                Err(why @ (Unanswered::NoFrontEnd | Unanswered::TimedOut(_))) => (
                    ElicitResult::decline(),
                    format!("declined: {}", why.reason()),
                ),
            };
            notes.note(&format!("the server {what}; {how}"));
            Ok(result)
        })
    }

    fn create_message(&self, request: CreateMessageRequest) -> HandlerFuture<CreateMessageResult> {
        SamplingFlow {
            shared: self.shared.clone(),
            server: self.server.clone(),
            fingerprint: self.fingerprint.clone(),
            notes: self.notes.clone(),
        }
        .run(request)
    }

    fn list_roots(&self) -> HandlerFuture<Vec<Root>> {
        let roots = self.shared.roots();
        Box::pin(async move { Ok(roots) })
    }
}
