//! The façade's share of MCP tasks (see [`crate::host::tasks`] for the rules). For a
//! front end:
//!
//! - Long-running front ends (terminal UI, desktop) call [`Harness::resume_tasks`] once
//!   the servers started: the stored tasks of HTTP servers are followed again, and their
//!   late results reach their conversations.
//! - [`Harness::subscribe_tasks`] tells each task's start, status changes and end
//!   ([`TaskEvent`]); [`Harness::tasks`] is the table to draw (newest first).
//! - [`Harness::cancel_task`], [`Harness::refresh_task`] and [`Harness::task_result`]
//!   act on one task by its server and id.
//! - The model's calls go through the engine, which hands their tasks to the service
//!   ([`crate::tools::tasks::TaskHost`]); manual calls get [`Harness::task_context`].

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use tokio::sync::broadcast;

use super::chat::OpenEngine;
use super::Harness;
use crate::engine::store::ConversationStore;
use crate::engine::{CallView, LateResult};
use crate::host::tasks::{
    CancelOutcome, LateResults, TaskEnd, TaskEvent, TaskKey, TaskRecord, TaskServiceError,
    TaskState,
};
use crate::mcp::tasks::Task;
use crate::mcp::CallToolResult;
use crate::tools::tasks::{TaskContext, TaskOrigin, TaskSettings};
use crate::tools::ToolRegistry;

/// A task as `mcp task list` shows it: one of the server's list, or of harness9's table.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct TaskListEntry {
    pub task_id: String,
    pub state: TaskState,
    pub message: Option<String>,
    /// The tool, when harness9 started the task.
    pub tool: Option<String>,
    /// ISO 8601 (the server's list) or ms since the epoch as text (harness9's table).
    pub created: Option<String>,
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub ttl_ms: Option<u64>,
}

/// Where a task list came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct TaskListing {
    /// `server` (its `tasks/list`) or `harness9` (the tasks harness9 started).
    pub source: String,
    pub tasks: Vec<TaskListEntry>,
}

impl Harness {
    /// Every task of the table, newest first (after [`Harness::load_tasks`] or
    /// [`Harness::resume_tasks`] also those stored by earlier runs).
    pub fn tasks(&self) -> Vec<TaskRecord> {
        self.tasks.list()
    }

    /// One task of the table.
    pub fn task(&self, server: &str, task_id: &str) -> Option<TaskRecord> {
        self.tasks.get(&key(server, task_id))
    }

    /// Reads the stored table in (without following anything).
    pub async fn load_tasks(&self) {
        self.tasks.load().await;
    }

    /// Follows the stored tasks still running: an HTTP server's again, a stdio server's
    /// are marked lost (they ended with the process that ran them).
    pub async fn resume_tasks(&self) {
        self.tasks.resume().await;
    }

    /// Started, status and ended events of every task.
    pub fn subscribe_tasks(&self) -> broadcast::Receiver<TaskEvent> {
        self.tasks.subscribe()
    }

    /// Asks the server how a task is now.
    pub async fn refresh_task(
        &self,
        server: &str,
        task_id: &str,
    ) -> Result<Task, TaskServiceError> {
        self.tasks.refresh(&key(server, task_id)).await
    }

    /// Cancels a task (see [`CancelOutcome`]).
    pub async fn cancel_task(
        &self,
        server: &str,
        task_id: &str,
    ) -> Result<CancelOutcome, TaskServiceError> {
        self.tasks.cancel(&key(server, task_id)).await
    }

    /// A task's result: at once when it ended in this process, else from the server
    /// (legacy: waits until the task ends; modern: an error while it still runs).
    pub async fn task_result(
        &self,
        server: &str,
        task_id: &str,
    ) -> Result<CallToolResult, TaskServiceError> {
        self.tasks.result(&key(server, task_id)).await
    }

    /// Waits until a task of the table ends.
    pub async fn wait_task(&self, server: &str, task_id: &str) -> Option<Arc<TaskEnd>> {
        self.tasks.wait(&key(server, task_id)).await
    }

    /// A server's tasks: its own `tasks/list` when it declared one (legacy era), else
    /// the tasks harness9 started on it.
    pub async fn list_server_tasks(&self, server: &str) -> Result<TaskListing, TaskServiceError> {
        self.tasks.load().await;
        let client = self.manager.connected(server)?;
        if client.server_tasks().list {
            let tasks = client
                .list_tasks(Some(crate::mcp::client::POLL_TIMEOUT))
                .await
                .map_err(|e| TaskServiceError::Task(e.into()))?;
            let ours = self.tasks();
            let tasks = tasks
                .into_iter()
                .map(|t| {
                    let tool = ours
                        .iter()
                        .find(|r| r.server == server && r.task_id == t.task_id)
                        .map(|r| r.tool.clone());
                    TaskListEntry {
                        state: TaskState::of_status(t.status),
                        message: t.status_message,
                        tool,
                        created: t.created_at,
                        ttl_ms: t.ttl_ms,
                        task_id: t.task_id,
                    }
                })
                .collect();
            return Ok(TaskListing {
                source: "server".into(),
                tasks,
            });
        }
        let tasks = self
            .tasks()
            .into_iter()
            .filter(|r| r.server == server)
            .map(|r| TaskListEntry {
                task_id: r.task_id,
                state: r.state,
                message: r.message,
                tool: Some(r.tool),
                created: Some(r.created_ms.to_string()),
                ttl_ms: r.ttl_ms,
            })
            .collect();
        Ok(TaskListing {
            source: "harness9".into(),
            tasks,
        })
    }

    /// Whether a server's tasks end with its process (stdio): they cannot outlive the
    /// harness9 that started them (no `--detach`).
    pub fn tasks_are_local(&self, server: &str) -> bool {
        self.tasks.is_local(server)
    }

    /// What a manual call needs to hand its task to the service: it waits for the task
    /// up to `wait` (`Duration::ZERO`: it returns at once with the task id, which goes on).
    /// Reads the settings file.
    pub fn task_context(&self, wait: Duration, origin: Option<TaskOrigin>) -> TaskContext {
        let settings = crate::engine::provider::settings::load_section::<TaskSettings>("tasks")
            .ok()
            .flatten()
            .unwrap_or_default();
        TaskContext {
            host: Arc::new(self.tasks.clone()),
            wait,
            optional_as_task: settings.optional_as_task(),
            origin,
        }
    }

    /// Connects the tasks service to the chat: late results go to their conversations.
    pub(super) fn deliver_late_results(&self) {
        self.tasks.set_late_results(Arc::new(Deliver {
            chat: self.chat.open_engine(),
            registry: self.registry.clone(),
            project: self.project.clone(),
        }));
    }
}

fn key(server: &str, task_id: &str) -> TaskKey {
    TaskKey {
        server: server.to_string(),
        task_id: task_id.to_string(),
    }
}

/// Adds late results to their conversations: the open one through its engine (it then
/// goes to the model with the next message), a closed one in its file.
struct Deliver {
    chat: OpenEngine,
    registry: Arc<ToolRegistry>,
    project: PathBuf,
}

impl LateResults for Deliver {
    fn deliver(&self, record: &TaskRecord, end: &TaskEnd) {
        let Some(origin) = record.origin.clone() else {
            return;
        };
        let late = LateResult {
            call_id: origin.call_id.clone(),
            name: origin.name.clone(),
            server: record.server.clone(),
            task_id: record.task_id.clone(),
            state: end.state.word().to_string(),
            result: end.result.clone(),
            error: end.error.as_ref().map(ToString::to_string),
        };
        // A tool with a view (MCP Apps) gets its result only now that the task ended.
        let view = end.result.as_ref().and_then(|result| {
            let tool = self.registry.get_mcp(&record.server, &record.tool)?;
            let uri = tool.spec().display.ui.as_ref()?.resource_uri.clone()?;
            Some(CallView {
                server: record.server.clone(),
                tool: record.tool.clone(),
                resource_uri: uri,
                arguments: record.arguments.clone(),
                result: result.clone(),
            })
        });
        if let Some(engine) = self.chat.engine_of(&origin.conversation_id) {
            if let Err(e) = engine.add_late_result(late, view) {
                tracing::warn!(
                    "could not keep the late result of task {}: {e}",
                    record.task_id
                );
            }
            return;
        }
        let project = self.project.clone();
        let task_id = record.task_id.clone();
        let write = move || {
            let store = ConversationStore::new(&origin.data_dir, &project);
            if let Err(e) = store.add_late_result(&origin.conversation_id, &late, view.as_ref()) {
                tracing::warn!("could not keep the late result of task {task_id}: {e}");
            }
        };
        match tokio::runtime::Handle::try_current() {
            Ok(rt) => drop(rt.spawn_blocking(write)),
            Err(_) => write(),
        }
    }
}
