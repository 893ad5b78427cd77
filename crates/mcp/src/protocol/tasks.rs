//! Tasks on the wire, in both generations, read into one model. A task turns a
//! `tools/call` into a handle the client watches and collects later:
//!
//! - 2025-11-25 (legacy, experimental core feature): the client asks for a task by adding
//!   `task: {ttl}` to the call when the server declared `tasks.requests.tools.call` and
//!   the tool's `execution.taskSupport` allows it; the reply is `{task: Task}`; timing
//!   fields are `ttl` and `pollInterval`; the result comes from `tasks/result`.
//! - 2026-07-28 (the `io.modelcontextprotocol/tasks` extension): the client declares the
//!   extension on every request and the server decides; the reply is the task's fields
//!   flattened with `resultType: "task"`; timing fields are `ttlMs` and `pollIntervalMs`;
//!   `tasks/get` carries the outcome (`result` or `error`) and the input requests inline.
//!
//! Both read into [`Task`] (and [`TaskSnapshot`] for what `tasks/get` adds); nothing
//! here knows a connection.

use std::borrow::Cow;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::jsonrpc::RpcError;

/// The extension id of the 2026-07-28 tasks extension.
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";
/// The `_meta` key that ties a message to its task (legacy era).
pub const META_RELATED_TASK: &str = "io.modelcontextprotocol/related-task";
/// The `_meta` key of a text a legacy server offers the model at once when it creates a
/// task (provisional guidance).
pub const META_MODEL_IMMEDIATE_RESPONSE: &str = "io.modelcontextprotocol/model-immediate-response";

/// The shortest wait between two polls of one task, whatever the server asks for.
pub const MIN_POLL_INTERVAL: Duration = Duration::from_millis(500);
/// The longest wait between two polls of one task, whatever the server asks for.
pub const MAX_POLL_INTERVAL: Duration = Duration::from_secs(60);
/// The wait between two polls when the server names none.
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_secs(1);

/// The wait between polls for a server's `pollInterval` (ms), clamped to
/// [`MIN_POLL_INTERVAL`]..=[`MAX_POLL_INTERVAL`].
pub fn poll_interval(ms: Option<u64>) -> Duration {
    ms.map_or(DEFAULT_POLL_INTERVAL, Duration::from_millis)
        .clamp(MIN_POLL_INTERVAL, MAX_POLL_INTERVAL)
}

/// Where a task is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    Working,
    /// The server waits for an answer from the client (an elicitation, a sampling).
    InputRequired,
    Completed,
    Failed,
    Cancelled,
}

impl TaskStatus {
    /// `completed`, `failed` and `cancelled` never change again.
    pub fn is_terminal(self) -> bool {
        match self {
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled => true,
            TaskStatus::Working | TaskStatus::InputRequired => false,
        }
    }

    pub fn word(self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }

    fn of(word: &str) -> Option<TaskStatus> {
        Some(match word {
            "working" => TaskStatus::Working,
            "input_required" => TaskStatus::InputRequired,
            "completed" => TaskStatus::Completed,
            "failed" => TaskStatus::Failed,
            "cancelled" => TaskStatus::Cancelled,
            _ => return None,
        })
    }
}

/// One task as the server last described it, in either generation's words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Task {
    pub task_id: String,
    pub status: TaskStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// ISO 8601, as the server wrote it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_updated_at: Option<String>,
    /// Lifetime in ms from creation; `None`: unlimited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub ttl_ms: Option<u64>,
    /// The wait the server suggests between polls, in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub poll_interval_ms: Option<u64>,
}

/// Why a task description from a server cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TaskWireError {
    #[error("a task needs a string \"taskId\"")]
    NoId,
    #[error("task {id:?} has the unknown status {status:?}")]
    UnknownStatus { id: String, status: String },
    #[error("the answer holds no task")]
    NoTask,
}

impl TaskWireError {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        match self {
            TaskWireError::NoId | TaskWireError::NoTask => "invalid-task",
            TaskWireError::UnknownStatus { .. } => "unknown-task-status",
        }
    }
}

/// Milliseconds from a JSON number (a float is cut, a negative one is none).
fn millis(v: Option<&Value>) -> Option<u64> {
    number_millis(v?.as_number()?)
}

fn number_millis(n: &serde_json::Number) -> Option<u64> {
    n.as_u64().or_else(|| {
        n.as_f64()
            .filter(|f| *f >= 0.0)
            .map(|f| f.min(u64::MAX as f64) as u64)
    })
}

fn text(v: Option<&Value>) -> Option<String> {
    v?.as_str().map(str::to_string)
}

impl Task {
    /// Reads a task object of either generation (`ttl`/`pollInterval` or
    /// `ttlMs`/`pollIntervalMs`).
    pub fn from_wire(v: &Value) -> Result<Task, TaskWireError> {
        let task_id = text(v.get("taskId")).ok_or(TaskWireError::NoId)?;
        let word = v.get("status").and_then(Value::as_str).unwrap_or_default();
        let status = TaskStatus::of(word).ok_or_else(|| TaskWireError::UnknownStatus {
            id: task_id.clone(),
            status: word.to_string(),
        })?;
        Ok(Task {
            task_id,
            status,
            status_message: text(v.get("statusMessage")),
            created_at: text(v.get("createdAt")),
            last_updated_at: text(v.get("lastUpdatedAt")),
            ttl_ms: millis(v.get("ttlMs").or_else(|| v.get("ttl"))),
            poll_interval_ms: millis(v.get("pollIntervalMs").or_else(|| v.get("pollInterval"))),
        })
    }

    /// The wait before the next poll ([`poll_interval`]).
    pub fn poll_interval(&self) -> Duration {
        poll_interval(self.poll_interval_ms)
    }
}

/// What a `tasks/get` (or a status notification) says of a task: the task, and in the
/// modern era its input requests and, once terminal, its outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskSnapshot {
    pub task: Task,
    /// Modern `input_required`: key → `{method, params}` of one request to the client.
    pub input_requests: Map<String, Value>,
    /// Modern terminal task: the call's result (`completed`) or its JSON-RPC error
    /// (`failed`). Legacy tasks never carry it (`tasks/result` gives it).
    pub outcome: Option<Result<Value, RpcError>>,
}

impl TaskSnapshot {
    /// Reads a `tasks/get` result or a notification's params: the task's fields at the top
    /// (both generations), or under `task` (a legacy `CreateTaskResult`).
    pub fn from_wire(v: &Value) -> Result<TaskSnapshot, TaskWireError> {
        let at = match v.get("task") {
            Some(inner @ Value::Object(_)) if v.get("taskId").is_none() => inner,
            _ => v,
        };
        let task = Task::from_wire(at)?;
        let input_requests = match v.get("inputRequests") {
            Some(Value::Object(m)) => m.clone(),
            _ => Map::new(),
        };
        let outcome = if let Some(error) = v.get("error").filter(|e| !e.is_null()) {
            Some(Err(serde_json::from_value::<RpcError>(error.clone())
                .unwrap_or(RpcError {
                    code: super::jsonrpc::INTERNAL_ERROR,
                    message: error.to_string(),
                    data: None,
                })))
        } else {
            v.get("result").filter(|r| r.is_object()).cloned().map(Ok)
        };
        Ok(TaskSnapshot {
            task,
            input_requests,
            outcome,
        })
    }
}

/// A `tasks/get` result of the usual shape, read without a tree of values: the task's
/// fields at the top, each of its type (text a string, timings numbers). The rest (input
/// requests, an outcome) is kept as values; unknown members are skipped.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PlainSnapshot<'a> {
    #[serde(borrow, default)]
    task_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    status: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    status_message: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    created_at: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    last_updated_at: Option<Cow<'a, str>>,
    #[serde(default, deserialize_with = "present")]
    ttl_ms: Option<Option<serde_json::Number>>,
    #[serde(default, deserialize_with = "present")]
    ttl: Option<Option<serde_json::Number>>,
    #[serde(default, deserialize_with = "present")]
    poll_interval_ms: Option<Option<serde_json::Number>>,
    #[serde(default, deserialize_with = "present")]
    poll_interval: Option<Option<serde_json::Number>>,
    #[serde(default)]
    input_requests: Option<Value>,
    #[serde(default)]
    result: Option<Value>,
    #[serde(default)]
    error: Option<Value>,
}

/// A member that is there (`Some`), null included (`Some(None)`).
fn present<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<Option<serde_json::Number>>, D::Error> {
    Option::<serde_json::Number>::deserialize(d).map(Some)
}

/// The milliseconds of the first timing member that is there (`ttlMs` before `ttl`).
fn first_millis(
    modern: Option<Option<serde_json::Number>>,
    legacy: Option<Option<serde_json::Number>>,
) -> Option<u64> {
    modern.or(legacy).flatten().as_ref().and_then(number_millis)
}

impl TaskSnapshot {
    /// [`TaskSnapshot::from_wire`] of a result's text, when it has the usual shape: read
    /// in one pass, without building a tree of values (a poll's answer). `None` for any
    /// other (a legacy nested task, a member of an unexpected type, an unknown status, a
    /// repeated member, text that is not one JSON object): read it with `from_wire`, which
    /// says what is wrong or how to take it.
    pub fn from_text(text: &str) -> Option<TaskSnapshot> {
        let plain: PlainSnapshot<'_> = serde_json::from_str(text).ok()?;
        let task_id = plain.task_id?.into_owned();
        let status = TaskStatus::of(plain.status.as_deref()?)?;
        let task = Task {
            task_id,
            status,
            status_message: plain.status_message.map(Cow::into_owned),
            created_at: plain.created_at.map(Cow::into_owned),
            last_updated_at: plain.last_updated_at.map(Cow::into_owned),
            ttl_ms: first_millis(plain.ttl_ms, plain.ttl),
            poll_interval_ms: first_millis(plain.poll_interval_ms, plain.poll_interval),
        };
        let input_requests = match plain.input_requests {
            Some(Value::Object(m)) => m,
            _ => Map::new(),
        };
        let outcome = match plain.error {
            Some(error) => Some(Err(serde_json::from_value::<RpcError>(error.clone())
                .unwrap_or(RpcError {
                    code: super::jsonrpc::INTERNAL_ERROR,
                    message: error.to_string(),
                    data: None,
                }))),
            None => plain.result.filter(Value::is_object).map(Ok),
        };
        Some(TaskSnapshot {
            task,
            input_requests,
            outcome,
        })
    }
}

/// A reply to `tools/call` that created a task: the task, and the text a legacy server
/// offers the model meanwhile.
#[derive(Debug, Clone, PartialEq)]
pub struct CreatedTask {
    pub task: Task,
    pub immediate_response: Option<String>,
}

impl CreatedTask {
    /// A legacy `CreateTaskResult` (`{task: {...}, _meta}`) or a modern flattened one.
    pub fn from_wire(v: &Value) -> Result<CreatedTask, TaskWireError> {
        let at = match v.get("task") {
            Some(inner @ Value::Object(_)) => inner,
            _ if v.get("taskId").is_some() => v,
            _ => return Err(TaskWireError::NoTask),
        };
        let immediate_response = v
            .get("_meta")
            .and_then(|m| m.get(META_MODEL_IMMEDIATE_RESPONSE))
            .and_then(Value::as_str)
            .map(str::to_string);
        Ok(CreatedTask {
            task: Task::from_wire(at)?,
            immediate_response,
        })
    }
}

/// Whether a tool may or must run as a task (legacy `execution.taskSupport`; the
/// modern era removed the field: there the server decides).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum TaskSupport {
    /// The default: never as a task.
    #[default]
    Forbidden,
    Optional,
    Required,
}

impl TaskSupport {
    /// A tool's `execution` object as listed (absent or unknown: forbidden).
    pub fn of_execution(execution: Option<&Value>) -> TaskSupport {
        match execution
            .and_then(|e| e.get("taskSupport"))
            .and_then(Value::as_str)
        {
            Some("optional") => TaskSupport::Optional,
            Some("required") => TaskSupport::Required,
            _ => TaskSupport::Forbidden,
        }
    }
}

/// What a legacy server declared of tasks in `capabilities.tasks`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServerTasks {
    /// `tasks.requests.tools.call`: tools may run as tasks.
    pub tool_calls: bool,
    /// `tasks.list`.
    pub list: bool,
    /// `tasks.cancel`.
    pub cancel: bool,
}

impl ServerTasks {
    /// Reads `capabilities.tasks` of a legacy server.
    pub fn of_capabilities(caps: &Map<String, Value>) -> ServerTasks {
        let Some(tasks) = caps.get("tasks").filter(|t| t.is_object()) else {
            return ServerTasks::default();
        };
        ServerTasks {
            tool_calls: tasks.pointer("/requests/tools/call").is_some(),
            list: tasks.get("list").is_some(),
            cancel: tasks.get("cancel").is_some(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn both_generations_read_into_one_task() {
        let legacy = Task::from_wire(&json!({
            "taskId": "t1", "status": "working", "statusMessage": "Gathering sources...",
            "createdAt": "2026-01-01T00:00:00Z", "ttl": 300000, "pollInterval": 1000
        }))
        .unwrap();
        let modern = Task::from_wire(&json!({
            "taskId": "t1", "status": "working", "statusMessage": "Gathering sources...",
            "createdAt": "2026-01-01T00:00:00Z", "ttlMs": 300000, "pollIntervalMs": 1000,
            "resultType": "task"
        }))
        .unwrap();
        assert_eq!(legacy, modern);
        assert_eq!(legacy.ttl_ms, Some(300_000));
        assert_eq!(legacy.poll_interval(), Duration::from_secs(1));
        let unlimited =
            Task::from_wire(&json!({"taskId": "t", "status": "completed", "ttl": null})).unwrap();
        assert_eq!(unlimited.ttl_ms, None);
        assert!(unlimited.status.is_terminal());
        assert_eq!(
            Task::from_wire(&json!({"taskId": "t", "status": "sleeping"}))
                .unwrap_err()
                .to_string(),
            "task \"t\" has the unknown status \"sleeping\""
        );
        assert_eq!(
            Task::from_wire(&json!({"status": "working"})),
            Err(TaskWireError::NoId)
        );
    }

    #[test]
    fn poll_intervals_are_clamped() {
        assert_eq!(poll_interval(Some(0)), MIN_POLL_INTERVAL);
        assert_eq!(poll_interval(Some(86_400_000)), MAX_POLL_INTERVAL);
        assert_eq!(poll_interval(None), DEFAULT_POLL_INTERVAL);
        assert_eq!(poll_interval(Some(2500)), Duration::from_millis(2500));
        let t = Task::from_wire(&json!({"taskId": "t", "status": "working", "pollInterval": -5}))
            .unwrap();
        assert_eq!(t.poll_interval(), DEFAULT_POLL_INTERVAL);
    }

    #[test]
    fn created_tasks_of_both_generations() {
        let legacy = CreatedTask::from_wire(&json!({
            "task": {"taskId": "a", "status": "working"},
            "_meta": {META_MODEL_IMMEDIATE_RESPONSE: "started the research"}
        }))
        .unwrap();
        assert_eq!(legacy.task.task_id, "a");
        assert_eq!(
            legacy.immediate_response.as_deref(),
            Some("started the research")
        );
        let modern = CreatedTask::from_wire(
            &json!({"resultType": "task", "taskId": "b", "status": "working", "ttlMs": null}),
        )
        .unwrap();
        assert_eq!(modern.task.task_id, "b");
        assert_eq!(
            CreatedTask::from_wire(&json!({"content": []})),
            Err(TaskWireError::NoTask)
        );
    }

    #[test]
    fn a_poll_answer_read_from_its_text_is_read_as_from_a_value() {
        let usual = [
            json!({"taskId": "t1", "status": "working", "statusMessage": "step 2 of 9",
                   "createdAt": "2026-01-01T00:00:00Z", "lastUpdatedAt": "2026-01-01T00:00:01Z",
                   "ttlMs": 300000, "pollIntervalMs": 1000, "_meta": {"x": [1, 2]}}),
            json!({"taskId": "t\"2\u{e9}", "status": "input_required", "ttl": 5.7, "pollInterval": -1,
                   "inputRequests": {"k": {"method": "elicitation/create", "params": {}}}}),
            json!({"taskId": "t", "status": "completed", "ttlMs": null, "ttl": 9,
                   "result": {"content": []}}),
            json!({"taskId": "t", "status": "failed", "error": {"code": -32603, "message": "boom"}}),
            json!({"taskId": "t", "status": "failed", "error": "not an object"}),
            json!({"taskId": "t", "status": "completed", "result": "not an object"}),
            json!({"taskId": "t", "status": "working", "inputRequests": [1]}),
        ];
        for v in usual {
            let text = v.to_string();
            assert_eq!(
                TaskSnapshot::from_text(&text),
                Some(TaskSnapshot::from_wire(&v).unwrap()),
                "{text}"
            );
        }
        // Every other shape is left to `from_wire`, which knows what to make of it.
        for text in [
            r#"{"task": {"taskId": "z", "status": "cancelled"}}"#,
            r#"{"taskId": "t", "status": "sleeping"}"#,
            r#"{"taskId": 7, "status": "working"}"#,
            r#"{"taskId": "t", "status": "working", "statusMessage": 5}"#,
            r#"{"taskId": "t", "status": "working", "ttlMs": "5"}"#,
            r#"{"taskId": "t", "taskId": "u", "status": "working"}"#,
            r#"{"taskId": "t", "status": "working"} trailing"#,
            r#"[]"#,
        ] {
            assert_eq!(TaskSnapshot::from_text(text), None, "{text}");
        }
    }

    #[test]
    fn snapshots_carry_the_modern_outcome() {
        let done = TaskSnapshot::from_wire(&json!({
            "resultType": "complete", "taskId": "a", "status": "completed",
            "result": {"content": [{"type": "text", "text": "hi"}], "isError": true}
        }))
        .unwrap();
        assert_eq!(
            done.outcome,
            Some(Ok(
                json!({"content": [{"type": "text", "text": "hi"}], "isError": true})
            ))
        );
        let failed = TaskSnapshot::from_wire(&json!({
            "taskId": "a", "status": "failed", "error": {"code": -32603, "message": "boom"}
        }))
        .unwrap();
        assert_eq!(failed.outcome.unwrap().unwrap_err().message, "boom");
        let asking = TaskSnapshot::from_wire(&json!({
            "taskId": "a", "status": "input_required",
            "inputRequests": {"k1": {"method": "elicitation/create", "params": {}}}
        }))
        .unwrap();
        assert_eq!(asking.input_requests.len(), 1);
        assert_eq!(asking.outcome, None);
        // A legacy notification or cancel answer with the task under `task`.
        let wrapped =
            TaskSnapshot::from_wire(&json!({"task": {"taskId": "z", "status": "cancelled"}}))
                .unwrap();
        assert_eq!(wrapped.task.status, TaskStatus::Cancelled);
    }

    #[test]
    fn task_support_and_server_capabilities() {
        assert_eq!(TaskSupport::of_execution(None), TaskSupport::Forbidden);
        assert_eq!(
            TaskSupport::of_execution(Some(&json!({"taskSupport": "required"}))),
            TaskSupport::Required
        );
        assert_eq!(
            TaskSupport::of_execution(Some(&json!({"taskSupport": "sometimes"}))),
            TaskSupport::Forbidden
        );
        let caps =
            json!({"tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}});
        assert_eq!(
            ServerTasks::of_capabilities(caps.as_object().unwrap()),
            ServerTasks {
                tool_calls: true,
                list: true,
                cancel: true
            }
        );
        assert_eq!(
            ServerTasks::of_capabilities(&Map::new()),
            ServerTasks::default()
        );
    }
}
