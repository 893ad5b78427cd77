//! Following one task to its end, in the connection's generation: its `tasks/get` polls,
//! at the server's interval (clamped, [`poll_interval`](crate::protocol::tasks::poll_interval)),
//! are made by the connection's poller ([`super::polls`]), which wakes the follower only
//! when an answer says something; it learns sooner from status notifications (never
//! instead of polling), answers what the
//! task asks (legacy: `tasks/result` is called early, and the server's requests arrive on
//! it tagged with the task; modern: `inputRequests`, answered with `tasks/update` once per
//! key), and collects the result (legacy `tasks/result`; modern inline in `tasks/get`).
//!
//! Bounded against bad servers: a task past its time to live ends with
//! [`TaskError::Expired`]; a finished task said to change ends with
//! [`TaskError::Backwards`]; an unknown id with [`TaskError::Unknown`]; polls that keep
//! failing end after [`MAX_POLL_FAILURES`] in a row; a flood of notifications costs one
//! slot ([`super::tasks`]); input keys answered are remembered up to
//! [`MAX_INPUT_KEYS`].

use std::collections::HashSet;
use std::pin::Pin;
use std::time::{Duration, SystemTime};

use futures::future::BoxFuture;
use futures::stream::FuturesUnordered;
use futures::{FutureExt, StreamExt};
use serde_json::{json, Map, Value};

use super::polls::POLL_TIMEOUT;
use super::tasks::{outcome_parts, TaskError};
use super::{Client, ClientError};
use crate::protocol::era::Era;
use crate::protocol::jsonrpc::RpcError;
use crate::protocol::tasks::{Task, TaskSnapshot, TaskStatus, META_RELATED_TASK};
use crate::protocol::types::CallToolResult;

/// Polls that fail in a row (timeouts, invalid answers) before following gives up.
pub const MAX_POLL_FAILURES: u32 = 5;
/// How long a finished legacy task's `tasks/result` may still take.
pub const RESULT_AFTER_END: Duration = Duration::from_secs(300);
/// Time past a task's time to live before it counts as expired (clocks and polls differ).
pub const TTL_GRACE: Duration = Duration::from_secs(5);
/// Most input request keys of one task remembered as answered.
pub const MAX_INPUT_KEYS: usize = 1024;

/// What following a task starts from.
#[derive(Debug, Clone)]
pub struct Follow {
    /// The task as last known.
    pub task: Task,
    /// When the task was created, by our clock (its time to live counts from here).
    pub created: SystemTime,
}

/// The legacy `tasks/result` request under way.
type Pending<'a, T> = Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;

impl Client {
    /// Follows a task until it ends and returns its result; `on_status` hears each new
    /// status or status message (not the first one, which the caller knows). A tool
    /// result with `isError` is a result, not an error.
    pub async fn follow_task(
        &self,
        follow: Follow,
        on_status: &mut (dyn FnMut(&Task) + Send),
    ) -> Result<CallToolResult, TaskError> {
        let Follow { mut task, created } = follow;
        // The task's age by the runtime's clock from here on.
        let born = tokio::time::Instant::now()
            .checked_sub(created.elapsed().unwrap_or_default())
            .unwrap_or_else(tokio::time::Instant::now);
        let id = task.task_id.clone();
        let mut notices = self.task_notices(&id);
        let mut ended: Option<TaskStatus> = task.status.is_terminal().then_some(task.status);
        // Legacy: the `tasks/result` request, once called.
        let mut result: Option<Pending<'_, Result<CallToolResult, TaskError>>> = None;
        let mut result_deadline: Option<tokio::time::Instant> = None;
        // Modern: input requests being answered, and the keys already taken.
        let mut answering: FuturesUnordered<BoxFuture<'static, (String, Result<Value, RpcError>)>> =
            FuturesUnordered::new();
        let mut asked: HashSet<String> = HashSet::new();
        let mut failures = 0u32;
        if self.era == Era::Legacy
            && (task.status == TaskStatus::InputRequired || task.status.is_terminal())
        {
            result = Some(self.result_call(&id));
        }
        // The polls: made by the connection's poller, which wakes us only with news. A
        // legacy task is polled until it ends (then `tasks/result` has the rest); a modern
        // one until we have its result, and a task born finished at once.
        let born_finished = self.era == Era::Modern && task.status.is_terminal();
        let mut polling = (self.era == Era::Modern || ended.is_none())
            .then(|| self.start_polling(&task, born_finished));
        let mut listening = true;
        loop {
            let age = born.elapsed();
            if let Some(ttl) = task.ttl_ms.map(Duration::from_millis) {
                if ended.is_none() && age > ttl + TTL_GRACE {
                    return Err(TaskError::Expired { task_id: id, ttl });
                }
            }
            // Woken to see the task expire (the check above).
            let expires = match (task.ttl_ms, ended) {
                (Some(ttl), None) => {
                    Some(born + Duration::from_millis(ttl) + TTL_GRACE + Duration::from_millis(10))
                }
                _ => None,
            };
            // What woke us: a poll said something, a notice came, an answer is ready.
            let mut noticed = false;
            let fresh: Option<Result<TaskSnapshot, TaskError>> = tokio::select! {
                r = async { result.as_mut().expect("checked").await }, if result.is_some() => {
                    return self.legacy_outcome(&id, task.status, r);
                }
                _ = async {
                    match result_deadline {
                        Some(d) => tokio::time::sleep_until(d).await,
                        None => std::future::pending().await,
                    }
                } => {
                    return Err(TaskError::Client(ClientError::Timeout {
                        method: format!("tasks/result of task {id}"),
                        timeout: RESULT_AFTER_END,
                        field: crate::settings::TOOL_TIMEOUT_FIELD,
                    }));
                }
                Some((key, answer)) = answering.next() => {
                    self.send_input(&id, key, answer).await?;
                    None
                }
                changed = notices.rx.changed(), if listening => {
                    let value = match changed {
                        Ok(()) => notices.rx.borrow_and_update().clone(),
                        Err(_) => {
                            // The connection is going: the polls say why.
                            listening = false;
                            None
                        }
                    };
                    match value.map(|v| TaskSnapshot::from_wire(&v)) {
                        Some(Ok(s)) => {
                            noticed = true;
                            Some(Ok(s))
                        }
                        // A notice we cannot read is no news.
                        Some(Err(_)) | None => None,
                    }
                }
                polled = async {
                    match polling.as_ref() {
                        Some(p) => p.answers.next().await,
                        None => std::future::pending().await,
                    }
                }, if polling.is_some() => Some(polled),
                _ = async {
                    match expires {
                        Some(at) => tokio::time::sleep_until(at).await,
                        None => std::future::pending().await,
                    }
                }, if expires.is_some() => None,
            };
            let snapshot = match fresh {
                None => continue,
                Some(Ok(s)) => s,
                Some(Err(
                    e @ (TaskError::Unknown { .. } | TaskError::Client(ClientError::Closed(_))),
                )) => return Err(e),
                Some(Err(e)) => {
                    failures += 1;
                    if failures >= MAX_POLL_FAILURES {
                        return Err(e);
                    }
                    continue;
                }
            };
            if snapshot.task.task_id != id {
                // A notice of another task is no news; a poll answered about another task
                // is a failed poll.
                if !noticed {
                    failures += 1;
                    if failures >= MAX_POLL_FAILURES {
                        return Err(TaskError::Invalid {
                            detail: format!(
                                "asked for it {failures} times, the server described task {} instead",
                                snapshot.task.task_id
                            ),
                            task_id: id,
                        });
                    }
                }
                continue;
            }
            if !noticed {
                failures = 0;
            }
            if let Some(was) = ended {
                if snapshot.task.status != was {
                    return Err(TaskError::Backwards {
                        task_id: id,
                        from: was,
                        to: snapshot.task.status,
                    });
                }
            }
            let news = snapshot.task.status != task.status
                || snapshot.task.status_message != task.status_message;
            let TaskSnapshot {
                task: now,
                input_requests,
                outcome,
            } = snapshot;
            task = now;
            if noticed {
                if let Some(p) = &polling {
                    p.know(&task);
                }
            }
            if news {
                on_status(&task);
            }
            if task.status.is_terminal() {
                ended = Some(task.status);
            }
            match self.era {
                Era::Legacy => {
                    let collect =
                        task.status == TaskStatus::InputRequired || task.status.is_terminal();
                    if collect && result.is_none() {
                        result = Some(self.result_call(&id));
                    }
                    if task.status.is_terminal() && result_deadline.is_none() {
                        result_deadline = Some(tokio::time::Instant::now() + RESULT_AFTER_END);
                        // `tasks/result` has the rest.
                        polling = None;
                    }
                }
                Era::Modern => {
                    if task.status.is_terminal() {
                        match outcome_parts(&task, outcome.as_ref()) {
                            // A notice may leave the result out: `tasks/get` has it.
                            Err(TaskError::Invalid { .. }) if noticed => {
                                if let Some(p) = &polling {
                                    p.soon();
                                }
                                continue;
                            }
                            other => return other,
                        }
                    }
                    for (key, request) in input_requests {
                        if asked.len() >= MAX_INPUT_KEYS || !asked.insert(key.clone()) {
                            continue;
                        }
                        answering.push(self.answer_input(&id, key, request));
                    }
                }
            }
        }
    }

    /// Legacy `tasks/result`, without a timeout (the task may take long), as a future of
    /// its own.
    fn result_call(&self, id: &str) -> Pending<'_, Result<CallToolResult, TaskError>> {
        let id = id.to_string();
        Box::pin(async move { self.task_result(&id, None).await })
    }

    fn legacy_outcome(
        &self,
        id: &str,
        last: TaskStatus,
        outcome: Result<CallToolResult, TaskError>,
    ) -> Result<CallToolResult, TaskError> {
        match outcome {
            Err(TaskError::Client(ClientError::Rpc { error, .. })) => Err(match last {
                TaskStatus::Cancelled => TaskError::Cancelled {
                    task_id: id.to_string(),
                },
                TaskStatus::Working
                | TaskStatus::InputRequired
                | TaskStatus::Completed
                | TaskStatus::Failed => TaskError::Failed {
                    task_id: id.to_string(),
                    error,
                },
            }),
            other => other,
        }
    }

    /// Answers one input request of a modern task through the same handler as direct
    /// requests (marked with its task).
    fn answer_input(
        &self,
        id: &str,
        key: String,
        request: Value,
    ) -> BoxFuture<'static, (String, Result<Value, RpcError>)> {
        let method = request
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let mut params = request
            .get("params")
            .cloned()
            .unwrap_or_else(|| Value::Object(Map::new()));
        if let Some(obj) = params.as_object_mut() {
            let meta = obj
                .entry("_meta")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Some(meta) = meta.as_object_mut() {
                meta.insert(META_RELATED_TASK.into(), json!({ "taskId": id }));
            }
        }
        let work = self.inner.handle_request(&method, params);
        async move { (key, work.await) }.boxed()
    }

    /// Sends one answer with `tasks/update`; an answer the handler could not give goes
    /// as the error it is.
    async fn send_input(
        &self,
        id: &str,
        key: String,
        answer: Result<Value, RpcError>,
    ) -> Result<(), TaskError> {
        let value = match answer {
            Ok(v) => v,
            Err(e) => json!({ "error": e }),
        };
        let mut responses = Map::new();
        responses.insert(key, value);
        self.update_task(id, responses, Some(POLL_TIMEOUT)).await
    }
}

impl Client {
    /// A plain `tools/call` that a modern server made a task of: followed to its end
    /// within `timeout` (then cancelled), its result as the call's.
    pub(super) async fn finish_task_call(
        &self,
        value: Value,
        timeout: Option<Duration>,
    ) -> Result<CallToolResult, ClientError> {
        let created = super::tasks::created(&value)?;
        let id = created.task.task_id.clone();
        let follow = Follow {
            task: created.task,
            created: std::time::SystemTime::now(),
        };
        let mut quiet = |_: &Task| {};
        let outcome = match timeout {
            Some(t) => match tokio::time::timeout(t, self.follow_task(follow, &mut quiet)).await {
                Ok(outcome) => outcome,
                Err(_) => {
                    let _ = self.cancel_task(&id, Some(POLL_TIMEOUT)).await;
                    return Err(ClientError::Timeout {
                        method: "tools/call".into(),
                        timeout: t,
                        field: crate::settings::TOOL_TIMEOUT_FIELD,
                    });
                }
            },
            None => self.follow_task(follow, &mut quiet).await,
        };
        outcome.map_err(|e| e.into_call_error())
    }
}
