//! The handler every server's client gets at connect: it turns a server's elicitation
//! and sampling requests into [`Ask`](super::Ask)s in the queue (with the default answer
//! when no front end listens or nobody answers), gives `roots/list` the project folder and
//! the extra roots, and writes what became of each request to the server's log.
//!
//! Invariants: the handler holds no reference back to the manager (no cycle through the
//! client), and announces sampling only when it was turned on before the server started.

use std::sync::Arc;

use super::queue::{AskAnswer, AskKind, Unanswered};
use super::sampling::SamplingFlow;
use super::{Notes, Shared};
use crate::mcp::handler::{ClientHandler, HandlerFuture, Handles};
use crate::mcp::jsonrpc::{RpcError, INTERNAL_ERROR};
use crate::mcp::requests::{
    CreateMessageRequest, CreateMessageResult, ElicitAction, ElicitRequest, ElicitResult, Root,
};

/// Answers one server's requests through the consent queue.
pub(super) struct ServerHandler {
    pub(super) server: String,
    pub(super) fingerprint: Option<String>,
    pub(super) shared: Arc<Shared>,
    pub(super) handles: Handles,
    pub(super) notes: Notes,
}

impl ClientHandler for ServerHandler {
    fn handles(&self) -> Handles {
        self.handles
    }

    fn elicit(&self, request: ElicitRequest) -> HandlerFuture<ElicitResult> {
        self.elicit_marked(request, None)
    }

    fn elicit_for_task(
        &self,
        request: ElicitRequest,
        task_id: &str,
    ) -> HandlerFuture<ElicitResult> {
        self.elicit_marked(request, Some(task_id.to_string()))
    }

    fn create_message_for_task(
        &self,
        request: CreateMessageRequest,
        task_id: &str,
    ) -> HandlerFuture<CreateMessageResult> {
        self.sampling(Some(task_id.to_string())).run(request)
    }

    fn create_message(&self, request: CreateMessageRequest) -> HandlerFuture<CreateMessageResult> {
        self.sampling(None).run(request)
    }

    fn list_roots(&self) -> HandlerFuture<Vec<Root>> {
        let roots = self.shared.roots();
        Box::pin(async move { Ok(roots) })
    }
}

impl ServerHandler {
    fn sampling(&self, task: Option<String>) -> SamplingFlow {
        SamplingFlow {
            shared: self.shared.clone(),
            server: self.server.clone(),
            fingerprint: self.fingerprint.clone(),
            notes: self.notes.clone(),
            task,
        }
    }

    /// An elicitation through the consent queue; `task` marks one asked for an MCP task.
    fn elicit_marked(
        &self,
        request: ElicitRequest,
        task: Option<String>,
    ) -> HandlerFuture<ElicitResult> {
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
        let what = match &task {
            Some(t) => format!("{what} for task {t}"),
            None => what,
        };
        let waiting =
            self.shared
                .queue
                .ask_for(&self.server, AskKind::Elicitation { request }, task);
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
}
