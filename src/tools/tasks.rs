//! Tool calls that run as MCP tasks, as the tool layer sees them: a call whose server made
//! a task of it is handed to a [`TaskHost`] (the host's tasks service), which follows the
//! task and tells the call its result, or, when the call has waited long enough, that the
//! task is still running (the call then ends and the task goes on without it).
//!
//! Without a host (a plain call from a front end), [`McpTool`](super::McpTool) follows the
//! task itself until it ends.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::mcp::client::TaskError;
use crate::mcp::tasks::{CreatedTask, TaskStatus};
use crate::mcp::{CallToolResult, Client};

/// How long a model's tool call waits for its task before the turn goes on without it
/// (`"tasks": {"waitSec": …}` in the settings file).
pub const DEFAULT_TASK_WAIT: Duration = Duration::from_secs(600);

/// Whether a legacy tool whose `taskSupport` is `optional` runs as a task
/// (`"tasks": {"optionalAsTask": …}` in the settings file).
pub const DEFAULT_OPTIONAL_AS_TASK: bool = true;

/// The `_meta` key of a tool result that says its call still runs as a task (the server
/// and the task id; the engine keeps them with the conversation).
pub const META_RUNNING_TASK: &str = "harness9/runningTask";

/// The `tasks` section of the settings file.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskSettings {
    /// Seconds a model's call waits for its task ([`DEFAULT_TASK_WAIT`]).
    #[serde(default)]
    pub wait_sec: Option<f64>,
    /// Run `optional` legacy tools as tasks ([`DEFAULT_OPTIONAL_AS_TASK`]).
    #[serde(default)]
    pub optional_as_task: Option<bool>,
}

impl TaskSettings {
    pub fn wait(&self) -> Duration {
        self.wait_sec
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map_or(DEFAULT_TASK_WAIT, Duration::from_secs_f64)
    }

    pub fn optional_as_task(&self) -> bool {
        self.optional_as_task.unwrap_or(DEFAULT_OPTIONAL_AS_TASK)
    }
}

/// The model's tool call that started a task: where its late result goes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct TaskOrigin {
    pub conversation_id: String,
    /// The tool call's id in the conversation.
    pub call_id: String,
    /// The model-facing tool name of the call.
    pub name: String,
    /// The data folder of the conversation store.
    #[cfg_attr(feature = "ts", ts(skip))]
    pub data_dir: PathBuf,
}

/// A task a tool call started, handed to the host.
pub struct StartedTask {
    pub server: String,
    pub tool: String,
    pub arguments: Value,
    pub client: Arc<Client>,
    pub created: CreatedTask,
    pub origin: Option<TaskOrigin>,
}

/// What the call learns of its task.
#[derive(Debug, Clone)]
pub enum TaskWait {
    /// The task ended within the wait: its result, or why there is none.
    Ended(Result<CallToolResult, TaskError>),
    /// The task is still running; the host goes on following it.
    Running {
        task_id: String,
        status: TaskStatus,
        message: Option<String>,
    },
}

/// Follows the tasks that calls start (the host's tasks service implements it).
pub trait TaskHost: Send + Sync {
    /// Takes over a task: follows it to its end whatever becomes of the call, and tells
    /// the call its outcome within `wait`, or that it still runs. Dropping the future
    /// before it is ready (the user stopped the call) cancels the task.
    fn adopt(&self, task: StartedTask, wait: Duration) -> BoxFuture<'static, TaskWait>;
}

/// A call's way to a [`TaskHost`].
#[derive(Clone)]
pub struct TaskContext {
    pub host: Arc<dyn TaskHost>,
    /// How long the call waits for its task.
    pub wait: Duration,
    /// Run legacy `optional` tools as tasks.
    pub optional_as_task: bool,
    pub origin: Option<TaskOrigin>,
}

impl std::fmt::Debug for TaskContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskContext")
            .field("wait", &self.wait)
            .field("optional_as_task", &self.optional_as_task)
            .field("origin", &self.origin)
            .finish()
    }
}

/// What the model is told of a call whose task still runs.
pub fn still_running_text(
    server: &str,
    task_id: &str,
    status: TaskStatus,
    message: Option<&str>,
    immediate: Option<&str>,
) -> String {
    let status = match message {
        Some(m) => format!("{}: {m}", status.word()),
        None => status.word().to_string(),
    };
    let mut text = format!(
        "This call is still running on the MCP server \"{server}\" as task {task_id} ({status}). Its result will be added to the conversation when it arrives; do not call the tool again for the same work. The user can cancel the task."
    );
    if let Some(said) = immediate {
        text.push_str("\nThe server says meanwhile: ");
        text.push_str(said);
    }
    text
}
