//! What the tasks service keeps of each task, and what it tells front ends.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::mcp::era::Era;
use crate::mcp::tasks::TaskStatus;
use crate::mcp::CallToolResult;
use crate::tools::tasks::TaskOrigin;

/// Where a task is, as the user sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum TaskState {
    Working,
    /// The server waits for the user (an elicitation or sampling request of the task).
    InputRequired,
    /// Cancel was asked for (modern era: the server may take a while, or finish anyway).
    CancelRequested,
    Completed,
    /// The tool failed, or the task ended without a result (the record's `error` says why).
    Failed,
    Cancelled,
    /// Its time to live passed before it finished.
    Expired,
    /// Its server can no longer give it: a stdio server's process ended (its tasks end with
    /// it), or the server no longer knows the task.
    Lost,
}

impl TaskState {
    pub fn is_ended(self) -> bool {
        match self {
            TaskState::Working | TaskState::InputRequired | TaskState::CancelRequested => false,
            TaskState::Completed
            | TaskState::Failed
            | TaskState::Cancelled
            | TaskState::Expired
            | TaskState::Lost => true,
        }
    }

    pub fn word(self) -> &'static str {
        match self {
            TaskState::Working => "working",
            TaskState::InputRequired => "input required",
            TaskState::CancelRequested => "cancel requested",
            TaskState::Completed => "completed",
            TaskState::Failed => "failed",
            TaskState::Cancelled => "cancelled",
            TaskState::Expired => "expired",
            TaskState::Lost => "lost",
        }
    }

    /// The state of a server's status (a finished task that failed stays failed here
    /// until its result says more).
    pub fn of_status(status: TaskStatus) -> TaskState {
        match status {
            TaskStatus::Working => TaskState::Working,
            TaskStatus::InputRequired => TaskState::InputRequired,
            TaskStatus::Completed => TaskState::Completed,
            TaskStatus::Failed => TaskState::Failed,
            TaskStatus::Cancelled => TaskState::Cancelled,
        }
    }
}

/// One task harness9 started (or was told of), as it is kept on disk and shown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct TaskRecord {
    pub server: String,
    /// The tool's raw name on its server.
    pub tool: String,
    #[cfg_attr(feature = "ts", ts(type = "JsonValue"))]
    pub arguments: Value,
    pub task_id: String,
    pub era: Era,
    /// When it was created (ms since the epoch, our clock).
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub created_ms: u64,
    /// Its time to live in ms from creation; `null`: unlimited.
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub ttl_ms: Option<u64>,
    pub state: TaskState,
    /// The server's last status message.
    pub message: Option<String>,
    /// When its state or message last changed (ms since the epoch).
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub updated_ms: u64,
    /// Why it ended without a result, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub error: Option<String>,
    /// The model's tool call that started it, if any (its late result goes there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub origin: Option<TaskOrigin>,
    /// Its server runs over stdio: the task ends with the server's process.
    pub local: bool,
    /// The harness9 process that ran that stdio server (whose end ends the task).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(skip))]
    pub owner_pid: Option<u32>,
    /// The server takes `tasks/cancel` (legacy servers declare it).
    pub can_cancel: bool,
    /// Its late result was added to its conversation (by this or another process).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[cfg_attr(feature = "ts", ts(skip))]
    pub delivered: bool,
}

impl TaskRecord {
    /// The record's key: tasks are named by their server and id.
    pub fn key(&self) -> TaskKey {
        TaskKey {
            server: self.server.clone(),
            task_id: self.task_id.clone(),
        }
    }

    /// Ms left before its time to live ends (`None`: unlimited), as of `now_ms`.
    pub fn ttl_left_ms(&self, now_ms: u64) -> Option<u64> {
        self.ttl_ms
            .map(|ttl| self.created_ms.saturating_add(ttl).saturating_sub(now_ms))
    }
}

/// A task's name: its server and its id there.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TaskKey {
    pub server: String,
    pub task_id: String,
}

/// How a task ended, kept in memory for who waits for it.
#[derive(Debug, Clone)]
pub struct TaskEnd {
    pub state: TaskState,
    /// The call's result (also an `isError` one), when the task gave one.
    pub result: Option<CallToolResult>,
    /// Why there is no result.
    pub error: Option<crate::mcp::client::TaskError>,
}

/// What the tasks service tells front ends, in order per task: `started`, any number of
/// `status`, then `ended` (once).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum TaskEvent {
    /// A task was started (or taken up again after a restart).
    Started { task: TaskRecord },
    /// Its state or status message changed.
    Status {
        server: String,
        task_id: String,
        state: TaskState,
        message: Option<String>,
    },
    /// It ended; `result` is the tool's result when it gave one.
    Ended {
        task: TaskRecord,
        result: Option<CallToolResult>,
    },
}
