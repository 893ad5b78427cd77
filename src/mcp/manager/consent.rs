//! Consent and roots: the handler every server's client gets at connect. It turns a
//! server's elicitation and sampling requests into [`Ask`](super::Ask)s in the manager's
//! queue (with the default answer when no front end listens or nobody answers), gives
//! `roots/list` the project folder and the extra roots, and writes what became of each
//! request to the server's log.
//!
//! Invariants: the handler holds no reference back to the manager (no cycle through the
//! client), and announces sampling only when it was turned on before the server started.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use super::asks::{AskAnswer, AskKind, AskQueue, Unanswered};
use super::Manager;
use crate::mcp::client::Client;
use crate::mcp::handler::{ClientHandler, HandlerFuture, Handles};
use crate::mcp::jsonrpc::RpcError;
use crate::mcp::log::{LogSource, ServerLog};
use crate::mcp::requests::{
    CreateMessageRequest, CreateMessageResult, ElicitAction, ElicitRequest, ElicitResult, Root,
    USER_REJECTED,
};

/// What the handlers of all servers share; no reference back to the manager.
pub(super) struct Shared {
    pub(super) asks: Arc<AskQueue>,
    sampling: AtomicBool,
    project_root: Root,
    extra_roots: Mutex<Vec<Root>>,
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
}

impl Shared {
    pub(super) fn new(project: &std::path::Path) -> Shared {
        let name = project
            .file_name()
            .map(|n| n.to_string_lossy().into_owned());
        Shared {
            asks: Arc::default(),
            sampling: AtomicBool::new(false),
            project_root: Root::of_path(project, name),
            extra_roots: Mutex::default(),
        }
    }

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
        let waiting = self.shared.asks.ask(
            &self.server,
            AskKind::Sampling {
                request: Box::new(request),
            },
        );
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
