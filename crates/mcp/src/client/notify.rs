//! What the server says outside of responses: notifications (progress, list changes,
//! resource updates, finished URL elicitations, cancellations of its own requests, log
//! messages, task status), and the end of the connection, which fails every waiting request at once.

use serde_json::value::RawValue;
use serde_json::Value;
use tokio::sync::mpsc;

use super::{ClientEvent, Inner, ReplyError, PROGRESS_QUEUE};
use crate::log::LogSource;
use crate::protocol::types::Progress;

impl Inner {
    pub(super) fn on_notification(&self, method: &str, params: Option<&RawValue>) {
        let params: Value = params
            .and_then(|p| serde_json::from_str(p.get()).ok())
            .unwrap_or(Value::Null);
        match method {
            "notifications/progress" => {
                let Some(token) = params.get("progressToken").and_then(|t| {
                    t.as_u64()
                        .or_else(|| t.as_str().and_then(|s| s.parse().ok()))
                }) else {
                    return;
                };
                let Ok(progress) = serde_json::from_value::<Progress>(params) else {
                    return;
                };
                let full = {
                    let mut sinks = self.progress.lock();
                    match sinks.get_mut(&token) {
                        Some((sink, noted)) => match sink.try_send(progress) {
                            Err(mpsc::error::TrySendError::Full(_)) if !*noted => {
                                *noted = true;
                                true
                            }
                            Ok(()) | Err(_) => false,
                        },
                        None => false,
                    }
                };
                if full {
                    self.note_garbage(&format!(
                        "progress notifications for request {token}: more than {PROGRESS_QUEUE} were waiting to be read, so newer ones are dropped"
                    ));
                }
            }
            "notifications/tools/list_changed" => {
                self.cache.forget("tools/list");
                let _ = self.events.send(ClientEvent::ToolsChanged);
            }
            "notifications/resources/list_changed" => {
                self.cache.forget("resources/list");
                self.cache.forget("resources/templates/list");
                let _ = self.events.send(ClientEvent::ResourcesChanged);
            }
            "notifications/prompts/list_changed" => {
                self.cache.forget("prompts/list");
                let _ = self.events.send(ClientEvent::PromptsChanged);
            }
            "notifications/resources/updated" => {
                if let Some(uri) = params.get("uri").and_then(Value::as_str) {
                    let uri = uri.to_string();
                    let _ = self.events.send(ClientEvent::ResourceUpdated { uri });
                }
            }
            "notifications/elicitation/complete" => {
                if let Some(id) = params.get("elicitationId").and_then(Value::as_str) {
                    if let Some(h) = &self.handler {
                        h.elicitation_complete(id);
                    }
                    let elicitation_id = id.to_string();
                    let _ = self
                        .events
                        .send(ClientEvent::ElicitationComplete { elicitation_id });
                }
            }
            "notifications/subscriptions/acknowledged" => {
                let filter = params.get("notifications").cloned();
                if self.listening.acknowledged(filter) {
                    // A stream opened again: changes may have been missed meanwhile.
                    self.cache.clear();
                    for event in [
                        ClientEvent::ToolsChanged,
                        ClientEvent::PromptsChanged,
                        ClientEvent::ResourcesChanged,
                    ] {
                        let _ = self.events.send(event);
                    }
                }
            }
            "notifications/tasks/status" | "notifications/tasks" => self.task_notes.notice(params),
            "notifications/cancelled" => {
                if let Some(id) = params.get("requestId") {
                    self.served.cancel(&id.to_string());
                }
            }
            "notifications/message" => {
                let level = params
                    .get("level")
                    .and_then(Value::as_str)
                    .unwrap_or("info")
                    .to_string();
                let text = match params.get("data") {
                    Some(Value::String(s)) => s.clone(),
                    Some(other) => other.to_string(),
                    None => String::new(),
                };
                let text = match params.get("logger").and_then(Value::as_str) {
                    Some(l) => format!("[{l}] {text}"),
                    None => text,
                };
                match level.as_str() {
                    "debug" => tracing::debug!(server = %self.name, "{text}"),
                    "info" | "notice" => tracing::info!(server = %self.name, "{text}"),
                    "warning" => tracing::warn!(server = %self.name, "{text}"),
                    _ => tracing::error!(server = %self.name, "{text}"),
                }
                self.log.push(LogSource::Server, &level, &text);
            }
            other => tracing::debug!(server = %self.name, "ignored notification {other}"),
        }
    }

    /// The connection ended: fail every waiting request at once.
    pub(super) fn close_all(&self, reason: String) {
        tracing::info!(server = %self.name, "connection closed: {reason}");
        let waiters: Vec<_> = {
            let mut closed = self.closed.lock();
            if closed.is_some() {
                return; // ended already (a failed new session), with its reason
            }
            *closed = Some(reason.clone());
            self.pending.lock().drain().map(|(_, tx)| tx).collect()
        };
        for tx in waiters {
            let _ = tx.send(Err(ReplyError::Closed(reason.clone())));
        }
        self.progress.lock().clear();
        self.served.cancel_all();
        self.listening.stop();
        let _ = self.events.send(ClientEvent::Closed(reason));
    }
}
