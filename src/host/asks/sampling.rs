//! The consent flow of `sampling/createMessage`, owned by the core so every front end only
//! renders and answers: check that a model is configured → ask the user (unless they said
//! "always" for this server as configured now) → run the request on the [`Sampler`] →
//! show the model's answer when the user chose to review it (Send / Refuse) → answer the
//! server. Each outcome is written to the server's log.
//!
//! Errors the server gets: `-1` (the user refused, or nobody answered), `-32603` with a
//! text naming what to configure when no model provider is set up, or why the model
//! failed. Without a [`Sampler`] at all (the commands that have no user to ask) the ask
//! still reaches whoever answers asks, who may refuse it or answer it themselves.

use std::sync::Arc;

use super::queue::{AskAnswer, AskKind, SamplingChoice, Unanswered};
use super::{Notes, Shared};
use crate::mcp::handler::HandlerFuture;
use crate::mcp::jsonrpc::{RpcError, INTERNAL_ERROR};
use crate::mcp::requests::{CreateMessageRequest, CreateMessageResult, USER_REJECTED};
use crate::mcp::sampling::Sampler;

/// What the server hears when the host has no sampler at all.
pub const NO_SAMPLER: &str = "harness9 has no model provider for sampling here";

/// One server's sampling request, from arrival to answer.
pub(super) struct SamplingFlow {
    pub(super) shared: Arc<Shared>,
    pub(super) server: String,
    /// The server entry's fingerprint: an "always" grant holds for this one only.
    pub(super) fingerprint: Option<String>,
    pub(super) notes: Notes,
    /// The MCP task the request is made for, if any (shown with the asks).
    pub(super) task: Option<String>,
}

fn refused(reason: String) -> RpcError {
    RpcError {
        code: USER_REJECTED,
        message: reason,
        data: None,
    }
}

fn failed(message: String) -> RpcError {
    RpcError {
        code: INTERNAL_ERROR,
        message,
        data: None,
    }
}

fn reason_or_default(reason: String) -> String {
    if reason.trim().is_empty() {
        "the user refused the sampling request".into()
    } else {
        reason
    }
}

fn unanswered(why: Unanswered) -> String {
    match why {
        Unanswered::NoFrontEnd => {
            "no one can approve it here (sampling needs the terminal UI or the desktop app); the request was refused".into()
        }
        Unanswered::TimedOut(_) | Unanswered::Failed => {
            format!("the sampling request was refused: {}", why.reason())
        }
    }
}

impl SamplingFlow {
    pub(super) fn run(self, request: CreateMessageRequest) -> HandlerFuture<CreateMessageResult> {
        Box::pin(async move { self.answer(request).await })
    }

    async fn answer(self, request: CreateMessageRequest) -> Result<CreateMessageResult, RpcError> {
        let what = format!(
            "the server asked the model for a message ({} message{}, up to {} tokens{})",
            request.messages.len(),
            if request.messages.len() == 1 { "" } else { "s" },
            request.max_tokens,
            match request.tools.as_ref().map(Vec::len) {
                Some(n) if n > 0 => format!(", {n} tools"),
                _ => String::new(),
            }
        );
        let note = |how: &str| self.notes.note(&format!("{what}; {how}"));
        // Without a sampler the ask still goes out: a front end may answer it itself
        // (the commands without a user refuse it and say so), but approving it fails.
        let sampler: Option<Arc<dyn Sampler>> = self.shared.sampler();
        if let Some(sampler) = &sampler {
            if let Err(what_to_do) = sampler.check().await {
                let text = format!("harness9 cannot run sampling requests: {what_to_do}");
                note(&text);
                return Err(failed(text));
            }
        }
        let granted = sampler.is_some() && self.granted().await;
        let mut review = false;
        if !granted {
            let waiting = self.shared.queue.ask_for(
                &self.server,
                AskKind::Sampling {
                    request: Box::new(request.clone()),
                },
                self.task.clone(),
            );
            match waiting.answer().await {
                Ok(AskAnswer::Approve(SamplingChoice { always, review: r })) => {
                    review = r;
                    if always {
                        self.grant().await;
                    }
                }
                Ok(AskAnswer::Sample(result)) => {
                    note("the user answered it");
                    return Ok(result);
                }
                Ok(AskAnswer::Refuse(reason)) => {
                    note("the user refused");
                    return Err(refused(reason_or_default(reason)));
                }
                Ok(AskAnswer::Elicit(_)) => {
                    note("the user refused");
                    return Err(refused(reason_or_default(String::new())));
                }
                Err(why) => {
                    let text = unanswered(why);
                    note(&text);
                    return Err(refused(text));
                }
            }
        }
        let Some(sampler) = sampler else {
            let text = format!("{NO_SAMPLER}; the request was refused");
            note(&text);
            return Err(failed(text));
        };
        let result = match sampler.sample(request.clone()).await {
            Ok(r) => r,
            Err(e) => {
                let text = format!("the model failed: {e}");
                note(&text);
                return Err(failed(text));
            }
        };
        let approved = if granted {
            "allowed for this server"
        } else {
            "approved by the user"
        };
        if !review {
            note(&format!("{approved}; answered by {}", result.model));
            return Ok(result);
        }
        let waiting = self.shared.queue.ask_for(
            &self.server,
            AskKind::SamplingReview {
                request: Box::new(request),
                result: Box::new(result.clone()),
            },
            self.task.clone(),
        );
        match waiting.answer().await {
            Ok(AskAnswer::Approve(_)) => {
                note(&format!(
                    "{approved}; the user sent the answer of {}",
                    result.model
                ));
                Ok(result)
            }
            Ok(AskAnswer::Sample(edited)) => {
                note(&format!("{approved}; the user sent an edited answer"));
                Ok(edited)
            }
            Ok(AskAnswer::Refuse(reason)) => {
                note("the user refused the model's answer");
                Err(refused(reason_or_default(reason)))
            }
            Ok(AskAnswer::Elicit(_)) => {
                note("the user refused the model's answer");
                Err(refused(reason_or_default(String::new())))
            }
            Err(why) => {
                let text = unanswered(why);
                note(&text);
                Err(refused(text))
            }
        }
    }

    async fn granted(&self) -> bool {
        let Some(fp) = self.fingerprint.clone() else {
            return false;
        };
        let (grants, project, server) = (
            self.shared.grants.clone(),
            self.shared.project.clone(),
            self.server.clone(),
        );
        tokio::task::spawn_blocking(move || grants.is_granted(&project, &server, &fp))
            .await
            .unwrap_or(false)
    }

    async fn grant(&self) {
        let Some(fp) = self.fingerprint.clone() else {
            return;
        };
        let (grants, project, server) = (
            self.shared.grants.clone(),
            self.shared.project.clone(),
            self.server.clone(),
        );
        let done = tokio::task::spawn_blocking(move || grants.grant(&project, &server, &fp)).await;
        match done {
            Ok(Ok(())) => self.notes.note(
                "the user lets this server use the model without asking (until revoked or its entry changes)",
            ),
            Ok(Err(e)) => self
                .notes
                .note(&format!("could not remember \"always\" for this server: {e}")),
            Err(e) => self
                .notes
                .note(&format!("could not remember \"always\" for this server: {e}")),
        }
    }
}
