//! MCP tasks against the real `@modelcontextprotocol/server-everything` (legacy tasks,
//! 2025-11-25): `simulate-research-query` requires a task; it runs four stages of about a
//! second each, and with `ambiguous: true` asks the user mid-way (the elicitation comes on
//! the `tasks/result` stream, tagged with the task). Over stdio and Streamable HTTP.

use std::sync::Arc;
use std::time::Duration;

use harness9::host::asks::{AskAnswer, AskKind};
use harness9::host::tasks::{CancelOutcome, TaskEvent, TaskState};
use harness9::mcp::era::Era;
use harness9::mcp::requests::{ElicitAction, ElicitRequest, ElicitResult};
use harness9::tools::CallContext;
use harness9::Harness;
use serde_json::{json, Value};
use tokio::sync::broadcast;

use super::support::bins::{everything_bin, servers_dir};
use super::support::server::{free_port, LoopbackServer};
use super::support::wait::{next_ask, wait_for_tool, DEADLINE};
use super::support::Project;

const RESEARCH: &str = "simulate-research-query";

/// A call that hands its task to the façade's tasks service and waits for it to end.
fn task_call(h: &Harness) -> CallContext {
    CallContext {
        task: Some(h.task_context(Duration::MAX, None)),
        ..CallContext::default()
    }
}

/// Every task event until the first `ended`, within the suite's deadline.
async fn events_until_end(rx: &mut broadcast::Receiver<TaskEvent>) -> Vec<TaskEvent> {
    let mut out = Vec::new();
    tokio::time::timeout(DEADLINE, async {
        loop {
            let e = rx.recv().await.expect("task events");
            let end = matches!(e, TaskEvent::Ended { .. });
            out.push(e);
            if end {
                break;
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no task ended: {out:?}"));
    out
}

fn messages(events: &[TaskEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            TaskEvent::Status {
                message: Some(m), ..
            } => Some(m.clone()),
            TaskEvent::Started { task } => task.message.clone(),
            _ => None,
        })
        .collect()
}

async fn research_runs_as_a_task(h: &Harness, server: &str, local: bool) {
    wait_for_tool(h.registry(), server, RESEARCH).await;
    let mut events = h.subscribe_tasks();
    let r = h
        .call_tool(server, RESEARCH, json!({"topic": "tides"}), task_call(h))
        .await
        .unwrap();
    let text = r.to_text();
    assert!(text.starts_with("# Research Report: tides"), "{text}");
    assert!(!r.is_error);
    let seen = events_until_end(&mut events).await;
    let TaskEvent::Started { task } = &seen[0] else {
        panic!("{seen:?}")
    };
    assert_eq!(
        (
            task.server.as_str(),
            task.tool.as_str(),
            task.era,
            task.local,
            task.can_cancel
        ),
        (server, RESEARCH, Era::Legacy, local, true)
    );
    assert_eq!(task.ttl_ms, Some(300_000));
    let said = messages(&seen);
    for stage in ["Gathering sources...", "Analyzing content..."] {
        assert!(said.iter().any(|m| m == stage), "{stage} not in {said:?}");
    }
    let Some(TaskEvent::Ended {
        task: ended,
        result,
    }) = seen.last()
    else {
        panic!("{seen:?}")
    };
    assert_eq!(ended.state, TaskState::Completed);
    assert_eq!(result.as_ref().map(|r| r.to_text()), Some(text));
    // The server lists its tasks (it declared tasks.list): this one among them.
    let listing = h.list_server_tasks(server).await.unwrap();
    assert_eq!(listing.source, "server");
    let listed = listing
        .tasks
        .iter()
        .find(|t| t.task_id == ended.task_id)
        .unwrap_or_else(|| panic!("{listing:?}"));
    assert_eq!(
        (listed.state, listed.tool.as_deref()),
        (TaskState::Completed, Some(RESEARCH))
    );
}

#[tokio::test]
async fn the_research_task_over_stdio_shows_its_stages_and_gives_its_report() {
    let Some(project) = Project::everything() else {
        return;
    };
    let h = project.started().await;
    research_runs_as_a_task(&h, "ev", true).await;
    h.shutdown().await;
}

#[tokio::test]
async fn an_ambiguous_research_task_asks_the_user_for_its_task() {
    let Some(project) = Project::everything() else {
        return;
    };
    let h = Arc::new(project.started().await);
    wait_for_tool(h.registry(), "ev", RESEARCH).await;
    let mut asks = h.subscribe_asks();
    let mut events = h.subscribe_tasks();
    let caller = {
        let h = h.clone();
        tokio::spawn(async move {
            h.call_tool(
                "ev",
                RESEARCH,
                json!({"topic": "python", "ambiguous": true}),
                task_call(&h),
            )
            .await
        })
    };
    let ask = next_ask(&mut asks, |a| a.task.is_some()).await;
    let TaskEvent::Started { task } = events.recv().await.unwrap() else {
        panic!("the task starts first")
    };
    assert_eq!(
        ask.task.as_deref(),
        Some(task.task_id.as_str()),
        "the ask names its task"
    );
    assert_eq!(ask.server, "ev");
    let AskKind::Elicitation {
        request: ElicitRequest::Form {
            requested_schema, ..
        },
    } = &ask.kind
    else {
        panic!("{ask:?}")
    };
    let pick = requested_schema["properties"]["interpretation"]["oneOf"][0]["const"].clone();
    assert!(pick.is_string(), "{requested_schema}");
    // Meanwhile the table says the task waits for the user.
    let waiting = h.task("ev", &task.task_id).unwrap();
    assert_eq!(waiting.state, TaskState::InputRequired, "{waiting:?}");
    let mut content = serde_json::Map::new();
    content.insert("interpretation".into(), pick.clone());
    h.answer_ask(
        ask.id,
        AskAnswer::Elicit(ElicitResult {
            action: ElicitAction::Accept,
            content: Some(content),
        }),
    )
    .unwrap();
    let r = tokio::time::timeout(DEADLINE, caller)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let text = r.to_text();
    let pick = pick.as_str().unwrap_or_default();
    assert!(
        text.contains(&format!("**Clarification**: {pick}")),
        "{text}"
    );
    h.shutdown().await;
}

fn everything_http() -> Option<LoopbackServer> {
    let bin = everything_bin()?;
    let preload = servers_dir().join("bind-loopback.cjs");
    let port = free_port();
    let mut cmd = std::process::Command::new(bin);
    cmd.arg("streamableHttp")
        .env("PORT", port.to_string())
        .env("NODE_OPTIONS", format!("--require {}", preload.display()));
    Some(LoopbackServer::start(cmd, port))
}

#[tokio::test]
async fn research_tasks_over_streamable_http_run_and_cancel() {
    let Some(server) = everything_http() else {
        return;
    };
    let project = Project::new(&json!({"mcpServers": {
        "evh": {"type": "http", "url": server.url("/mcp")}
    }}));
    let h = project.started().await;
    wait_for_tool(h.registry(), "evh", RESEARCH).await;
    // Started and left running (a detached call), then cancelled: the server says so.
    let ctx = CallContext {
        task: Some(h.task_context(Duration::ZERO, None)),
        ..CallContext::default()
    };
    let r = h
        .call_tool("evh", RESEARCH, json!({"topic": "to cancel"}), ctx)
        .await
        .unwrap();
    let running: Value = r.meta.clone().unwrap_or_default();
    let id = running[harness9::tools::tasks::META_RUNNING_TASK]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("{r:?}"))
        .to_string();
    assert!(
        r.to_text().contains(&format!("as task {id}")),
        "{}",
        r.to_text()
    );
    assert_eq!(
        h.cancel_task("evh", &id).await.unwrap(),
        CancelOutcome::Cancelled
    );
    let end = tokio::time::timeout(DEADLINE, h.wait_task("evh", &id))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(end.state, TaskState::Cancelled);
    let record = h.task("evh", &id).unwrap();
    assert_eq!((record.state, record.local), (TaskState::Cancelled, false));
    // Cancelling a finished task is refused, in words.
    let e = h.cancel_task("evh", &id).await.unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("task {id} has already ended (cancelled)")
    );
    // And one that runs to its end.
    research_runs_as_a_task(&h, "evh", false).await;
    h.shutdown().await;
}
