//! MCP tasks in the CLI: `mcp call` on a tool that runs as a task (its status on stderr,
//! its result on stdout; `--detach` prints the task id and returns), and
//! `mcp task list|get|result|cancel SERVER [ID]`. Exit codes as for any call: 0, 1 when the
//! tool or the task failed, 2 for bad arguments.

use std::time::Duration;

use harness9::host::tasks::{CancelOutcome, TaskEvent, TaskServiceError, TaskState};
use harness9::mcp::tasks::Task;
use harness9::term_text::Line;
use harness9::Harness;
use serde_json::json;
use tokio::sync::broadcast;

use super::{open, out, EXIT_FAILED, EXIT_USAGE};
use crate::ProjectArgs;

/// How long `mcp call` waits for its task: until it ends (or is interrupted).
pub const CALL_WAIT: Duration = Duration::MAX;

/// What `mcp task` does.
#[derive(Debug, Clone)]
pub enum TaskAction {
    List,
    Get(String),
    Result(String),
    Cancel(String),
}

/// Prints each status change of the tasks of `server` on stderr until aborted.
pub fn print_statuses(harness: &Harness, server: &str) -> tokio::task::JoinHandle<()> {
    let mut events = harness.subscribe_tasks();
    let server = server.to_string();
    tokio::spawn(async move {
        loop {
            match events.recv().await {
                Ok(TaskEvent::Started { task }) if task.server == server => {
                    errln!(
                        "task {} started on \"{}\" ({})",
                        Line(&task.task_id),
                        Line(&server),
                        status_text(task.state, task.message.as_deref())
                    );
                }
                Ok(TaskEvent::Status {
                    server: s,
                    task_id,
                    state,
                    message,
                }) if s == server => {
                    errln!(
                        "task {}: {}",
                        Line(&task_id),
                        status_text(state, message.as_deref())
                    );
                }
                Ok(TaskEvent::Ended { task, .. }) if task.server == server => {
                    errln!("task {}: {}", Line(&task.task_id), task.state.word());
                }
                Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(broadcast::error::RecvError::Closed) => break,
            }
        }
    })
}

fn status_text(state: TaskState, message: Option<&str>) -> String {
    match message {
        Some(m) => format!("{} — {}", state.word(), Line(m)),
        None => state.word().to_string(),
    }
}

/// `harness9 mcp task …`.
pub async fn run(args: ProjectArgs, server: String, action: TaskAction) -> i32 {
    let only = [server.clone()];
    let harness = match open(&args, Some(&only)).await {
        Ok(h) => h,
        Err(code) => return code,
    };
    harness.load_tasks().await;
    let code = match action {
        TaskAction::List => list(&harness, &args, &server).await,
        TaskAction::Get(id) => get(&harness, &args, &server, &id).await,
        TaskAction::Result(id) => result(&harness, &args, &server, &id).await,
        TaskAction::Cancel(id) => cancel(&harness, &args, &server, &id).await,
    };
    harness.shutdown().await;
    code
}

fn fail(args: &ProjectArgs, e: &TaskServiceError) -> i32 {
    out::failure(args.json, e.code(), &e.to_string());
    match e {
        TaskServiceError::Server(harness9::manager::Unavailable::Unknown { .. }) => EXIT_USAGE,
        _ => EXIT_FAILED,
    }
}

async fn list(harness: &Harness, args: &ProjectArgs, server: &str) -> i32 {
    let listing = match harness.list_server_tasks(server).await {
        Ok(l) => l,
        Err(e) => return fail(args, &e),
    };
    if args.json {
        out::json(&listing);
        return 0;
    }
    if listing.tasks.is_empty() {
        let whose = if listing.source == "server" {
            format!("server \"{}\" lists no tasks", Line(server))
        } else {
            format!("harness9 started no tasks on server \"{}\"", Line(server))
        };
        outln!("{whose}");
        return 0;
    }
    let width = listing
        .tasks
        .iter()
        .map(|t| t.task_id.chars().count())
        .max()
        .unwrap_or(4)
        .max(4);
    outln!(
        "{:<width$}  {:<16}  {:<16}  MESSAGE",
        "TASK",
        "STATUS",
        "TOOL"
    );
    for t in &listing.tasks {
        outln!(
            "{:<width$}  {:<16}  {:<16}  {}",
            Line(&t.task_id).to_string(),
            t.state.word(),
            Line(t.tool.as_deref().unwrap_or("-")).to_string(),
            Line(t.message.as_deref().unwrap_or(""))
        );
    }
    0
}

fn print_task(args: &ProjectArgs, task: &Task) {
    if args.json {
        out::json(task);
        return;
    }
    outln!("task:     {}", Line(&task.task_id));
    outln!("status:   {}", task.status.word());
    if let Some(m) = &task.status_message {
        outln!("message:  {}", Line(m));
    }
    if let Some(c) = &task.created_at {
        outln!("created:  {}", Line(c));
    }
    match task.ttl_ms {
        Some(ms) => outln!(
            "ttl:      {}",
            harness9::mcp::client::fmt_duration(Duration::from_millis(ms))
        ),
        None => outln!("ttl:      unlimited"),
    }
}

async fn get(harness: &Harness, args: &ProjectArgs, server: &str, id: &str) -> i32 {
    match harness.refresh_task(server, id).await {
        Ok(task) => {
            print_task(args, &task);
            0
        }
        Err(e) => fail(args, &e),
    }
}

async fn result(harness: &Harness, args: &ProjectArgs, server: &str, id: &str) -> i32 {
    let printer = print_statuses(harness, server);
    let outcome = loop {
        match harness.task_result(server, id).await {
            // Modern tasks tell their result only once they ended: wait for it.
            Err(TaskServiceError::Task(harness9::mcp::client::TaskError::NotFinished {
                status,
                ..
            })) => {
                errln!("task {}: {}", Line(id), status.word());
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            other => break other,
        }
    };
    printer.abort();
    match outcome {
        Ok(r) => super::print_result(args.json, &r),
        Err(e) => fail(args, &e),
    }
}

async fn cancel(harness: &Harness, args: &ProjectArgs, server: &str, id: &str) -> i32 {
    match harness.cancel_task(server, id).await {
        Ok(outcome) => {
            if args.json {
                out::json(&json!({"taskId": id, "outcome": outcome}));
            } else {
                match outcome {
                    CancelOutcome::Cancelled => outln!("task {} cancelled", Line(id)),
                    CancelOutcome::Requested => outln!(
                        "cancel of task {} requested; the server stops it when it can",
                        Line(id)
                    ),
                }
            }
            0
        }
        Err(e) => fail(args, &e),
    }
}
