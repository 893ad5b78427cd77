//! Requests from the server. `ping` is answered at once; `elicitation/create`,
//! `sampling/createMessage` and `roots/list` go to the connection's handler when it
//! handles them, each on a task of its own (the reader never waits for the user), and a
//! `notifications/cancelled` or the end of the connection aborts that task without an
//! answer. Everything else gets `-32601`. A panic in the handler answers its request
//! `-32603` (see [`crate::contain`]); the connection goes on.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use futures::FutureExt;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use tokio::task::AbortHandle;

use super::Inner;
use crate::contain;
use crate::log::LogSource;
use crate::protocol::jsonrpc::{self, RpcError, INVALID_PARAMS, METHOD_NOT_FOUND};
use crate::protocol::requests::{CreateMessageRequest, ElicitRequest};
use crate::protocol::tasks::META_RELATED_TASK;
use crate::transport::Outbound;

/// Server requests being answered, by their id as JSON text.
#[derive(Default)]
pub(super) struct Served {
    tasks: Arc<Mutex<HashMap<String, AbortHandle>>>,
}

impl Served {
    /// Runs `work` on its own task, until it ends or [`Served::cancel`] names `key`.
    fn spawn(&self, key: String, work: impl Future<Output = ()> + Send + 'static) {
        let tasks = self.tasks.clone();
        let mine = key.clone();
        // The lock is held until the handle is in the map, so the task's own removal
        // (which waits for it) always finds it.
        let mut map = self.tasks.lock();
        let task = tokio::spawn(async move {
            work.await;
            tasks.lock().remove(&mine);
        });
        map.insert(key, task.abort_handle());
    }

    /// The server cancelled request `key`: stop answering it.
    pub(super) fn cancel(&self, key: &str) {
        let task = self.tasks.lock().remove(&id_key(key));
        if let Some(task) = task {
            task.abort();
        }
    }

    pub(super) fn cancel_all(&self) {
        let tasks: Vec<AbortHandle> = {
            let mut map = self.tasks.lock();
            map.drain().map(|(_, t)| t).collect()
        };
        for t in tasks {
            t.abort();
        }
    }
}

/// One spelling of a request id (`"a"` and `"a"` with escapes, `5` and ` 5` agree).
fn id_key(raw: &str) -> String {
    serde_json::from_str::<Value>(raw).map_or_else(|_| raw.to_string(), |v| v.to_string())
}

fn error(code: i64, message: String) -> RpcError {
    RpcError {
        code,
        message,
        data: None,
    }
}

impl Inner {
    /// Answers (or hands on) one request from the server.
    pub(super) fn serve(&self, id: &RawValue, method: &str, params: Option<&RawValue>) {
        let params: Value = params
            .and_then(|p| serde_json::from_str(p.get()).ok())
            .unwrap_or(Value::Null);
        let era = self.answer_headers();
        if method == "ping" {
            let answer = jsonrpc::encode_response(id, Ok(json!({})));
            let _ = self.sender.send(Outbound::response(answer, era));
            return;
        }
        // A request made for a task carries its mark; so does the answer.
        let related = params
            .pointer("/_meta")
            .and_then(|m| m.get(META_RELATED_TASK))
            .cloned();
        let mut work = self.handle_request(method, params);
        // An answer known at once goes out at once, in order with the reader.
        if let Some(outcome) = (&mut work).now_or_never() {
            let outcome = tagged(outcome, related);
            let answer = jsonrpc::encode_response(id, outcome);
            let _ = self.sender.send(Outbound::response(answer, era));
            return;
        }
        let sender = self.sender.clone();
        let owned: Box<RawValue> = id.to_owned();
        self.served.spawn(id_key(id.get()), async move {
            let outcome = tagged(work.await, related);
            let answer = jsonrpc::encode_response(&owned, outcome);
            let _ = sender.send(Outbound::response(answer, era));
        });
    }

    /// What the handler answers one request: a legacy server→client request, or one
    /// input request of a modern `input_required` result (the same handlers, the same
    /// consent UI). Requests for what the handler does not handle get `-32601`.
    /// A panic in the handler (building its answer or while waiting for it) answers
    /// this request `-32603`; the server log and tracing say what it was, and the next
    /// request is handled as usual.
    pub(super) fn handle_request(
        &self,
        method: &str,
        params: Value,
    ) -> BoxFuture<'static, Result<Value, RpcError>> {
        let (server, log, asked) = (self.name.clone(), self.log.clone(), method.to_string());
        contain::contained(|| self.dispatch_request(method, params))
            .map(move |outcome| {
                outcome.unwrap_or_else(|why| {
                    let text = format!(
                        "answering the server's {asked} request failed inside harness9 ({why}); the server was sent an error"
                    );
                    tracing::error!(server = %server, "{text}");
                    log.push(LogSource::Host, "error", &text);
                    Err(error(
                        jsonrpc::INTERNAL_ERROR,
                        format!("harness9 failed while answering {asked}"),
                    ))
                })
            })
            .boxed()
    }

    fn dispatch_request(
        &self,
        method: &str,
        params: Value,
    ) -> BoxFuture<'static, Result<Value, RpcError>> {
        let handles = self
            .handler
            .as_ref()
            .map(|h| h.handles())
            .unwrap_or_default();
        let task = related_task(&params);
        match (method, self.handler.clone()) {
            ("elicitation/create", Some(h)) if handles.elicitation() => {
                match ElicitRequest::from_params(&params) {
                    Err(e) => ready(Err(error(INVALID_PARAMS, e.to_string()))),
                    Ok(req) => {
                        let announced = match &req {
                            ElicitRequest::Form { .. } => handles.elicitation_form,
                            ElicitRequest::Url { .. } => handles.elicitation_url,
                        };
                        if announced {
                            match &task {
                                Some(t) => h.elicit_for_task(req, t).map(to_value).boxed(),
                                None => h.elicit(req).map(to_value).boxed(),
                            }
                        } else {
                            let mode = req.mode();
                            let e = format!("harness9 did not announce elicitation in {mode} mode");
                            ready(Err(error(INVALID_PARAMS, e)))
                        }
                    }
                }
            }
            ("sampling/createMessage", Some(h)) if handles.sampling => {
                match serde_json::from_value::<CreateMessageRequest>(params) {
                    Err(e) => {
                        let e = format!("invalid sampling/createMessage params: {e}");
                        ready(Err(error(INVALID_PARAMS, e)))
                    }
                    Ok(req) if req.tools.is_some() && !handles.sampling_tools => {
                        let e = "harness9 did not announce tools in sampling".to_string();
                        ready(Err(error(INVALID_PARAMS, e)))
                    }
                    Ok(req) => match &task {
                        Some(t) => h.create_message_for_task(req, t).map(to_value).boxed(),
                        None => h.create_message(req).map(to_value).boxed(),
                    },
                }
            }
            ("roots/list", Some(h)) if handles.roots => h
                .list_roots()
                .map(|r| r.map(|roots| json!({ "roots": roots })))
                .boxed(),
            (other, _) => {
                let e = format!("harness9 does not support \"{other}\"");
                ready(Err(error(METHOD_NOT_FOUND, e)))
            }
        }
    }
}

/// The id of the task a request was made for (its related-task `_meta`).
fn related_task(params: &Value) -> Option<String> {
    params
        .get("_meta")?
        .get(META_RELATED_TASK)?
        .get("taskId")?
        .as_str()
        .map(str::to_string)
}

/// A result with the related-task mark of its request (legacy tasks: an answer to a
/// task's request carries the same mark).
fn tagged(outcome: Result<Value, RpcError>, related: Option<Value>) -> Result<Value, RpcError> {
    let Some(mark) = related else {
        return outcome;
    };
    outcome.map(|mut value| {
        if let Some(obj) = value.as_object_mut() {
            let meta = obj
                .entry("_meta")
                .or_insert_with(|| Value::Object(serde_json::Map::new()));
            if let Some(meta) = meta.as_object_mut() {
                meta.insert(META_RELATED_TASK.into(), mark);
            }
        }
        value
    })
}

fn ready(outcome: Result<Value, RpcError>) -> BoxFuture<'static, Result<Value, RpcError>> {
    futures::future::ready(outcome).boxed()
}

fn to_value<T: serde::Serialize>(r: Result<T, RpcError>) -> Result<Value, RpcError> {
    r.and_then(|v| {
        serde_json::to_value(v).map_err(|e| error(jsonrpc::INTERNAL_ERROR, e.to_string()))
    })
}
