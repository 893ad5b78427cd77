//! MCP tasks in the desktop app: the task that forwards the core's [`TaskEvent`]s (a task
//! started, its status changed, it ended with its result) to the window, and the
//! requests the tasks view makes (the table, cancel, a finished task's result). The table
//! is the core's ([`Harness::tasks`]); the window only draws it.

use tokio::sync::broadcast::error::RecvError;
use tokio::task::AbortHandle;

use harness9::host::tasks::{CancelOutcome, TaskEvent, TaskRecord};
use harness9::mcp::CallToolResult;
use harness9::Harness;

use crate::bridge::{events, BridgeResult, ProjectEmitter};

/// The project's tasks, newest first (running and recent ones).
pub fn list(harness: &Harness) -> Vec<TaskRecord> {
    harness.tasks()
}

/// Cancels a running task.
pub async fn cancel(harness: &Harness, server: &str, task_id: &str) -> BridgeResult<CancelOutcome> {
    Ok(harness.cancel_task(server, task_id).await?)
}

/// A finished task's result (at once for a task that ended in this run; else the server
/// is asked).
pub async fn result(
    harness: &Harness,
    server: &str,
    task_id: &str,
) -> BridgeResult<CallToolResult> {
    Ok(harness.task_result(server, task_id).await?)
}

/// Forwards every task event to the window; `null` when events were missed (the window
/// then fetches the table again). Tasks stored by an earlier run are taken up once the
/// servers have started ([`Harness::resume_tasks`], called by the session).
pub fn forward(app: ProjectEmitter, harness: &Harness) -> AbortHandle {
    let mut rx = harness.subscribe_tasks();
    tokio::spawn(async move {
        loop {
            let event: Option<TaskEvent> = match rx.recv().await {
                Ok(e) => Some(e),
                Err(RecvError::Lagged(_)) => None,
                Err(RecvError::Closed) => return,
            };
            app.emit(events::TASKS, event);
        }
    })
    .abort_handle()
}
