//! The follower of one task: follows it through its server's current client until it
//! ends. An HTTP server that reconnects is followed on its new connection (the task lives
//! on the server); a stdio server whose process ended takes its tasks with it. Waiting for
//! a server to come back is bounded by the task's time to live.

use std::sync::Arc;
use std::time::Duration;

use super::record::{TaskKey, TaskRecord, TaskState};
use super::{ended, system_time, Tasks};
use crate::manager::ServerState;
use crate::mcp::client::{Follow, TaskError};
use crate::mcp::tasks::{Task, TaskStatus};
use crate::mcp::{Client, ClientError};

/// Follows `record`'s task to its end and records the end. `first` is the client and
/// the task as the call that started it got them.
pub(super) async fn follow(tasks: Tasks, record: TaskRecord, first: Option<(Arc<Client>, Task)>) {
    let key = record.key();
    let created = system_time(record.created_ms);
    let mut next = first;
    let end = loop {
        let (client, task) = match next.take() {
            Some(pair) => pair,
            None => match connected(&tasks, &record).await {
                Ok(client) => (client, last_known(&tasks, &key, &record)),
                Err(end) => break end,
            },
        };
        let seen = tasks.clone();
        let on_status = &mut |t: &Task| seen.status(&key, t);
        let follow = Follow { task, created };
        match client.follow_task(follow, on_status).await {
            Ok(result) => {
                let state = if result.is_error {
                    TaskState::Failed
                } else {
                    TaskState::Completed
                };
                break ended(state, Some(result), None);
            }
            Err(TaskError::Client(ClientError::Closed(reason))) => {
                if record.local {
                    let why = format!(
                        "the stdio server \"{}\" stopped ({reason}); its tasks ended with its process",
                        record.server
                    );
                    break ended(
                        TaskState::Lost,
                        None,
                        Some(TaskError::Client(ClientError::Closed(why))),
                    );
                }
                // An HTTP server: the task lives on; follow it on the next connection.
                continue;
            }
            Err(e @ TaskError::Cancelled { .. }) => {
                break ended(TaskState::Cancelled, None, Some(e))
            }
            Err(e @ TaskError::Expired { .. }) => break ended(TaskState::Expired, None, Some(e)),
            Err(e @ TaskError::Unknown { .. }) => break ended(TaskState::Lost, None, Some(e)),
            Err(e) => break ended(TaskState::Failed, None, Some(e)),
        }
    };
    tasks.finish(&key, end).await;
}

/// The task as the table knows it now (for following it again after a reconnection).
fn last_known(tasks: &Tasks, key: &TaskKey, record: &TaskRecord) -> Task {
    let now = tasks.get(key).unwrap_or_else(|| record.clone());
    Task {
        task_id: now.task_id,
        status: match now.state {
            TaskState::InputRequired => TaskStatus::InputRequired,
            _ => TaskStatus::Working,
        },
        status_message: now.message,
        created_at: None,
        last_updated_at: None,
        ttl_ms: now.ttl_ms,
        poll_interval_ms: None,
    }
}

/// The server's client once it is connected; waits for it (an HTTP server reconnecting,
/// a front end starting its servers) at most until the task's time to live ends.
async fn connected(tasks: &Tasks, record: &TaskRecord) -> Result<Arc<Client>, super::TaskEnd> {
    let manager = &tasks.inner.manager;
    let mut status = manager.subscribe();
    let deadline = record.ttl_left_ms(super::now_ms()).map(|ms| {
        tokio::time::Instant::now() + Duration::from_millis(ms) + crate::mcp::client::TTL_GRACE
    });
    loop {
        if let Some(client) = manager
            .client(&record.server)
            .filter(|c| c.closed_reason().is_none())
        {
            let up = matches!(
                manager.state(&record.server),
                Some(ServerState::Connected { .. })
            );
            if up {
                return Ok(client);
            }
        }
        let lost = |why: String| {
            ended(
                TaskState::Lost,
                None,
                Some(TaskError::Client(ClientError::Closed(why))),
            )
        };
        match manager.state(&record.server) {
            None => {
                return Err(lost(format!(
                    "the server \"{}\" is no longer in the project's config",
                    record.server
                )))
            }
            Some(_) if record.local => {
                return Err(lost(format!(
                    "the stdio server \"{}\" stopped; its tasks ended with its process",
                    record.server
                )))
            }
            Some(_) => {}
        }
        let changed = status.changed();
        match deadline {
            Some(d) => match tokio::time::timeout_at(d, changed).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) => return Err(lost("the project closed".into())),
                Err(_) => {
                    let ttl = Duration::from_millis(record.ttl_ms.unwrap_or_default());
                    return Err(ended(
                        TaskState::Expired,
                        None,
                        Some(TaskError::Expired {
                            task_id: record.task_id.clone(),
                            ttl,
                        }),
                    ));
                }
            },
            None => {
                if changed.await.is_err() {
                    return Err(lost("the project closed".into()));
                }
            }
        }
    }
}
