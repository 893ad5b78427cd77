//! Tasks on one connection, in the connection's generation (see
//! [`crate::protocol::tasks`]): a tool call that may become a task, and the requests
//! about a task (`tasks/get`, `tasks/result`, `tasks/cancel`, `tasks/list`,
//! `tasks/update`). [`follow`](super::follow) drives one task to its end.
//!
//! Status notifications (legacy `notifications/tasks/status`, modern
//! `notifications/tasks`) go only to the tasks someone follows: each followed task has
//! one slot that keeps the latest notice (a flood of them costs one slot, never a queue),
//! and notices of other tasks are dropped. In the modern era the followed tasks (at most
//! [`MAX_LISTENED_TASKS`]) ride on the connection's `subscriptions/listen` stream
//! ([`listen`](super::listen)); polling goes on all the same.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Map, Value};
use tokio::sync::watch;

use super::reply::ReplyBody;
use super::{Client, ClientError, Inner, Params, RequestOptions};
use crate::protocol::era::Era;
use crate::protocol::jsonrpc::{RpcError, INVALID_PARAMS};
use crate::protocol::tasks::{
    CreatedTask, ServerTasks, Task, TaskSnapshot, TaskStatus, TaskWireError, META_RELATED_TASK,
};
use crate::protocol::types::CallToolResult;

/// Most followed tasks of one modern connection named on its `subscriptions/listen`
/// stream; the others are learnt of by polling alone.
pub const MAX_LISTENED_TASKS: usize = 64;

/// How a `tools/call` that may become a task came back.
#[derive(Debug, Clone, PartialEq)]
pub enum CallOutcome {
    /// The tool's result, at once.
    Done(CallToolResult),
    /// A task: follow it ([`Client::follow_task`]) for the result.
    Task(CreatedTask),
}

/// Asking a legacy server to run a call as a task (`params.task`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TaskCall {
    /// The lifetime asked for, in ms (the server may choose another).
    pub ttl_ms: Option<u64>,
}

/// Why following a task, or a request about one, did not give its result.
#[derive(Debug, Clone, thiserror::Error)]
pub enum TaskError {
    #[error(transparent)]
    Client(#[from] ClientError),
    #[error("the server does not know task {task_id} ({detail}); it may have ended and been removed after its time to live, or it was started on another connection")]
    Unknown { task_id: String, detail: String },
    #[error("task {task_id} outlived its time to live ({}) without finishing; harness9 stopped waiting for it", super::fmt_duration(*ttl))]
    Expired { task_id: String, ttl: Duration },
    #[error("the server said task {task_id} was {} and then {}; a finished task never changes, so harness9 stopped following it", from.word(), to.word())]
    Backwards {
        task_id: String,
        from: TaskStatus,
        to: TaskStatus,
    },
    #[error("task {task_id} was cancelled")]
    Cancelled { task_id: String },
    #[error("task {task_id} failed: error {}: {}", error.code, error.message)]
    Failed {
        task_id: String,
        error: Box<RpcError>,
    },
    #[error("task {task_id} is still {}; its result is not ready yet", status.word())]
    NotFinished { task_id: String, status: TaskStatus },
    #[error("the server sent an invalid description of task {task_id}: {detail}")]
    Invalid { task_id: String, detail: String },
}

impl TaskError {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        match self {
            TaskError::Client(e) => e.code(),
            TaskError::Unknown { .. } => "unknown-task",
            TaskError::Expired { .. } => "task-expired",
            TaskError::Backwards { .. } => "task-status-backwards",
            TaskError::Cancelled { .. } => "task-cancelled",
            TaskError::Failed { .. } => "task-failed",
            TaskError::NotFinished { .. } => "task-not-finished",
            TaskError::Invalid { .. } => "invalid-task",
        }
    }

    /// An error about task `task_id`: `-32602` (unknown or expired id) becomes
    /// [`TaskError::Unknown`].
    pub(super) fn of(task_id: &str, e: ClientError) -> TaskError {
        match e {
            ClientError::Rpc { error, .. } if error.code == INVALID_PARAMS => TaskError::Unknown {
                task_id: task_id.to_string(),
                detail: error.message,
            },
            other => TaskError::Client(other),
        }
    }

    fn invalid(task_id: &str, e: TaskWireError) -> TaskError {
        TaskError::Invalid {
            task_id: task_id.to_string(),
            detail: e.to_string(),
        }
    }
}

/// The latest notice of each followed task.
#[derive(Default)]
pub(super) struct TaskNotes {
    slots: Mutex<HashMap<String, watch::Sender<Option<Arc<Value>>>>>,
}

impl TaskNotes {
    /// A status notification arrived: it goes to the task's slot, if someone follows it.
    pub(super) fn notice(&self, params: Value) {
        let Some(id) = params
            .get("taskId")
            .or_else(|| params.pointer("/task/taskId"))
            .and_then(Value::as_str)
        else {
            return;
        };
        let slots = self.slots.lock();
        if let Some(slot) = slots.get(id) {
            slot.send_replace(Some(Arc::new(params)));
        }
    }

    pub(super) fn ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.slots.lock().keys().cloned().collect();
        ids.sort_unstable();
        ids
    }
}

/// The notices of one followed task; dropping it stops them.
pub(super) struct Notices {
    inner: Arc<Inner>,
    id: String,
    pub(super) rx: watch::Receiver<Option<Arc<Value>>>,
}

impl Drop for Notices {
    fn drop(&mut self) {
        let gone = {
            let mut slots = self.inner.task_notes.slots.lock();
            // Our own receiver still counts here: the last one out removes the slot.
            let last = slots.get(&self.id).is_some_and(|s| s.receiver_count() <= 1);
            if last {
                slots.remove(&self.id);
            }
            last
        };
        if gone {
            self.inner.listening.tasks_changed(&self.inner);
        }
    }
}

impl Client {
    /// What the server lets the client do with tasks. Legacy: what it declared in
    /// `capabilities.tasks`. Modern: the server decides which calls become tasks, and
    /// every task can be cancelled but none listed.
    pub fn server_tasks(&self) -> ServerTasks {
        match self.era {
            Era::Legacy => ServerTasks::of_capabilities(self.capabilities()),
            Era::Modern => ServerTasks {
                tool_calls: true,
                list: false,
                cancel: true,
            },
        }
    }

    /// Calls a tool, which may become a task: in the legacy era only when `task` asks for
    /// one and the server declared `tasks.requests.tools.call` (the caller checks the
    /// tool's `taskSupport`); in the modern era whenever the server decides so.
    pub async fn call_tool_as_task(
        &self,
        name: &str,
        arguments: Option<Value>,
        opts: RequestOptions,
        task: Option<TaskCall>,
    ) -> Result<CallOutcome, ClientError> {
        match (self.era, task) {
            (Era::Legacy, Some(task)) if self.server_tasks().tool_calls => {
                let mut params = Map::with_capacity(3);
                params.insert("name".into(), Value::String(name.to_string()));
                if let Some(a) = arguments {
                    params.insert("arguments".into(), a);
                }
                let ttl = task.ttl_ms.map_or(json!({}), |t| json!({ "ttl": t }));
                params.insert("task".into(), ttl);
                let body = self
                    .inner
                    .request(
                        "tools/call",
                        Params::Value(Value::Object(params)),
                        opts,
                        true,
                    )
                    .await?;
                let value: Value = body.parse("tools/call")?;
                drop(body);
                if value.get("task").is_some_and(Value::is_object) {
                    return created(&value).map(CallOutcome::Task);
                }
                serde_json::from_value(value)
                    .map(CallOutcome::Done)
                    .map_err(|e| invalid("tools/call", e.to_string()))
            }
            (Era::Legacy, _) => self
                .call_tool(name, arguments, opts)
                .await
                .map(CallOutcome::Done),
            (Era::Modern, _) => {
                let params = Params::ToolCall { name, arguments };
                let (body, task) = self
                    .inner
                    .request_modern_kind("tools/call", &params, opts, true)
                    .await?;
                if !task {
                    return match CallToolResult::plain_text(body.get()) {
                        Some(result) => Ok(CallOutcome::Done(result)),
                        None => body.parse("tools/call").map(CallOutcome::Done),
                    };
                }
                let value: Value = body.parse("tools/call")?;
                created(&value).map(CallOutcome::Task)
            }
        }
    }

    /// `tasks/get`: the task as the server describes it now (modern: with its input
    /// requests and, once terminal, its outcome).
    pub async fn get_task(
        &self,
        task_id: &str,
        timeout: Option<Duration>,
    ) -> Result<TaskSnapshot, TaskError> {
        self.inner.get_task(task_id, timeout).await
    }

    /// The task's result: legacy `tasks/result`, which waits until the task is finished
    /// (no timeout unless given); modern `tasks/get`, which has it once the task is
    /// finished ([`TaskError::NotFinished`] before).
    pub async fn task_result(
        &self,
        task_id: &str,
        timeout: Option<Duration>,
    ) -> Result<CallToolResult, TaskError> {
        match self.era {
            Era::Legacy => {
                let value = self
                    .task_request("tasks/result", task_id, None, timeout)
                    .await?;
                tool_result(task_id, value)
            }
            Era::Modern => {
                let snapshot = self.get_task(task_id, timeout).await?;
                outcome_of(&snapshot)
            }
        }
    }

    /// `tasks/cancel`. Legacy: the task as it is now (`cancelled`). Modern: an empty
    /// acknowledgement (`None`): the task may go on for a while, and may even complete.
    pub async fn cancel_task(
        &self,
        task_id: &str,
        timeout: Option<Duration>,
    ) -> Result<Option<Task>, TaskError> {
        let value = self
            .task_request("tasks/cancel", task_id, None, timeout)
            .await?;
        match self.era {
            Era::Modern => Ok(None),
            Era::Legacy => match TaskSnapshot::from_wire(&value) {
                Ok(s) => Ok(Some(s.task)),
                // An answer without the task is still a yes.
                Err(_) => Ok(None),
            },
        }
    }

    /// `tasks/list` (legacy only, and only when the server declared it), every page.
    pub async fn list_tasks(&self, timeout: Option<Duration>) -> Result<Vec<Task>, ClientError> {
        if self.era == Era::Modern {
            return Err(ClientError::NotInEra {
                what: "tasks/list".into(),
                version: self.protocol_version().to_string(),
            });
        }
        let values: Vec<Value> = self
            .list_pages(
                "tasks/list",
                super::MAX_TOOL_PAGES,
                timeout,
                |p: TaskPage| (p.tasks, p.next_cursor),
            )
            .await?;
        values
            .iter()
            .map(|v| Task::from_wire(v).map_err(|e| invalid("tasks/list", e.to_string())))
            .collect()
    }

    /// `tasks/update` (modern): answers some of a task's input requests, by key.
    pub async fn update_task(
        &self,
        task_id: &str,
        responses: Map<String, Value>,
        timeout: Option<Duration>,
    ) -> Result<(), TaskError> {
        let extra = ("inputResponses", Value::Object(responses));
        self.task_request("tasks/update", task_id, Some(extra), timeout)
            .await
            .map(drop)
    }

    /// One request about task `task_id`, its result as a value.
    async fn task_request(
        &self,
        method: &str,
        task_id: &str,
        extra: Option<(&str, Value)>,
        timeout: Option<Duration>,
    ) -> Result<Value, TaskError> {
        let body = (self.inner)
            .task_body(method, task_id, extra, timeout)
            .await?;
        body.parse(method).map_err(TaskError::Client)
    }

    /// Starts taking status notifications of one task.
    pub(super) fn task_notices(&self, task_id: &str) -> Notices {
        let (rx, added) = {
            let mut slots = self.inner.task_notes.slots.lock();
            match slots.get(task_id) {
                Some(s) => (s.subscribe(), false),
                None => {
                    let (tx, rx) = watch::channel(None);
                    slots.insert(task_id.to_string(), tx);
                    (rx, true)
                }
            }
        };
        if added && self.era == Era::Modern {
            self.inner.listening.know(self.capabilities());
            self.inner.listening.tasks_changed(&self.inner);
        }
        Notices {
            inner: self.inner.clone(),
            id: task_id.to_string(),
            rx,
        }
    }
}

impl TaskError {
    /// The error of a plain `tools/call` whose task ended this way.
    pub fn into_call_error(self) -> ClientError {
        match self {
            TaskError::Client(e) => e,
            TaskError::Failed { error, .. } => ClientError::Rpc {
                method: "tools/call".into(),
                error,
            },
            TaskError::Cancelled { .. } => ClientError::Cancelled,
            other @ (TaskError::Unknown { .. }
            | TaskError::Expired { .. }
            | TaskError::Backwards { .. }
            | TaskError::NotFinished { .. }
            | TaskError::Invalid { .. }) => ClientError::Invalid {
                method: "tools/call".into(),
                detail: other.to_string(),
            },
        }
    }
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct TaskPage {
    #[serde(default)]
    tasks: Vec<Value>,
    #[serde(default)]
    next_cursor: Option<String>,
}

fn invalid(method: &str, detail: String) -> ClientError {
    ClientError::Invalid {
        method: method.into(),
        detail,
    }
}

pub(super) fn created(value: &Value) -> Result<CreatedTask, ClientError> {
    CreatedTask::from_wire(value).map_err(|e| invalid("tools/call", e.to_string()))
}

/// A tool result as a task's result, without the related-task mark in its `_meta`.
pub(super) fn tool_result(task_id: &str, mut value: Value) -> Result<CallToolResult, TaskError> {
    if let Some(meta) = value.get_mut("_meta").and_then(Value::as_object_mut) {
        meta.remove(META_RELATED_TASK);
        if meta.is_empty() {
            if let Some(obj) = value.as_object_mut() {
                obj.remove("_meta");
            }
        }
    }
    if let Some(obj) = value.as_object_mut() {
        obj.remove("resultType");
    }
    serde_json::from_value(value).map_err(|e| TaskError::Invalid {
        task_id: task_id.to_string(),
        detail: format!("its result is not a tool result ({e})"),
    })
}

/// The result a modern snapshot carries, or why it carries none.
pub(super) fn outcome_of(snapshot: &TaskSnapshot) -> Result<CallToolResult, TaskError> {
    outcome_parts(&snapshot.task, snapshot.outcome.as_ref())
}

/// [`outcome_of`] of a snapshot taken apart: its task and its outcome.
pub(super) fn outcome_parts(
    task: &Task,
    outcome: Option<&Result<Value, RpcError>>,
) -> Result<CallToolResult, TaskError> {
    let id = &task.task_id;
    match (outcome, task.status) {
        (Some(Ok(v)), _) => tool_result(id, v.clone()),
        (Some(Err(e)), _) => Err(TaskError::Failed {
            task_id: id.clone(),
            error: Box::new(e.clone()),
        }),
        (None, TaskStatus::Cancelled) => Err(TaskError::Cancelled {
            task_id: id.clone(),
        }),
        (None, status @ (TaskStatus::Working | TaskStatus::InputRequired)) => {
            Err(TaskError::NotFinished {
                task_id: id.clone(),
                status,
            })
        }
        (None, TaskStatus::Completed | TaskStatus::Failed) => Err(TaskError::Invalid {
            task_id: id.clone(),
            detail: format!(
                "it is {} but carries no result or error",
                task.status.word()
            ),
        }),
    }
}

impl Inner {
    /// [`Client::get_task`], for the poller, which holds the connection's insides (a
    /// [`Client`] it held would close the connection when it goes).
    pub(super) async fn get_task(
        &self,
        task_id: &str,
        timeout: Option<Duration>,
    ) -> Result<TaskSnapshot, TaskError> {
        let body = self.task_body("tasks/get", task_id, None, timeout).await?;
        // The usual answer is read straight from its text; any other through a value.
        if let Some(snapshot) = TaskSnapshot::from_text(body.get()) {
            return Ok(snapshot);
        }
        let value: Value = body.parse("tasks/get").map_err(TaskError::Client)?;
        drop(body);
        TaskSnapshot::from_wire(&value).map_err(|e| TaskError::invalid(task_id, e))
    }

    /// One request about task `task_id`, its result as received.
    async fn task_body(
        &self,
        method: &str,
        task_id: &str,
        extra: Option<(&str, Value)>,
        timeout: Option<Duration>,
    ) -> Result<ReplyBody, TaskError> {
        let params = match extra {
            // The usual request (a poll): written as text, no value built.
            None => Params::Task { task_id },
            Some((k, v)) => {
                let mut params = Map::with_capacity(2);
                params.insert("taskId".into(), Value::String(task_id.to_string()));
                params.insert(k.into(), v);
                Params::Value(Value::Object(params))
            }
        };
        let opts = RequestOptions {
            timeout,
            ..RequestOptions::default()
        };
        self.request(method, params, opts, true)
            .await
            .map_err(|e| TaskError::of(task_id, e))
    }
}
