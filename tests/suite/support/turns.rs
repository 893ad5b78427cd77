//! Agent turns against the scripted provider: engine options, a turn run to its end, what
//! its events say; and `harness9 exec` with the provider variables pointing at the stub.

use std::process::Output;
use std::sync::Arc;
use std::time::Duration;

use harness9::engine::{
    CallStatus, Engine, EngineOptions, Event, PermissionOptions, ToolPermission, TurnOutcome,
};
use harness9::Harness;
use serde_json::Value;

use super::project::Project;
use super::provider_stub::{Recorded, Stub, Wire, TEST_KEY};

/// [`Project::started`], checked: the servers gave tools.
pub async fn started(project: &Project) -> Harness {
    let h = project.started().await;
    assert!(
        !h.registry().is_empty(),
        "the servers started: {:?}",
        h.status()
    );
    h
}

/// Engine options for tests: the stub as provider, the project's private data dir, every
/// tool allowed.
pub fn options(project: &Project, stub: &Stub) -> EngineOptions {
    EngineOptions {
        provider: Some(stub.client()),
        data_dir: project.data.path().to_path_buf(),
        permissions: PermissionOptions {
            default: ToolPermission::Allow,
            // An explicit rule: destructive tools are asked about under a default.
            allow: vec!["*".into()],
            ..PermissionOptions::default()
        },
        ..EngineOptions::default()
    }
}

pub async fn run(engine: &Engine, prompt: &str) -> Vec<Event> {
    let turn = engine.send(prompt).unwrap();
    tokio::time::timeout(Duration::from_secs(30), turn.collect())
        .await
        .expect("the turn ends within 30 s")
}

pub fn outcome(events: &[Event]) -> &TurnOutcome {
    match events.last() {
        Some(Event::TurnEnd { outcome, .. }) => outcome,
        other => panic!("the last event is not turn_end: {other:?}"),
    }
}

pub fn completed(events: &[Event]) -> &str {
    match outcome(events) {
        TurnOutcome::Completed { answer } => answer,
        other
        @ (TurnOutcome::CutOff { .. } | TurnOutcome::Stopped | TurnOutcome::Failed { .. }) => {
            panic!("the turn did not complete: {other:?}")
        }
    }
}

/// `(name, status, error, output)` of every tool_call_end.
pub fn call_ends(events: &[Event]) -> Vec<(String, CallStatus, Option<String>, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCallEnd {
                name,
                status,
                error,
                output,
                ..
            } => Some((name.clone(), *status, error.clone(), output.clone())),
            Event::TurnStart { .. }
            | Event::ModelRequest { .. }
            | Event::Retry { .. }
            | Event::TextDelta { .. }
            | Event::ToolInputPartial { .. }
            | Event::ToolCallStart { .. }
            | Event::ApprovalRequest { .. }
            | Event::ToolCallProgress { .. }
            | Event::Notice { .. }
            | Event::TurnEnd { .. } => None,
        })
        .collect()
}

pub fn streamed_text(events: &[Event]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            Event::TextDelta { text } => Some(text.as_str()),
            Event::TurnStart { .. }
            | Event::ModelRequest { .. }
            | Event::Retry { .. }
            | Event::ToolInputPartial { .. }
            | Event::ToolCallStart { .. }
            | Event::ApprovalRequest { .. }
            | Event::ToolCallProgress { .. }
            | Event::ToolCallEnd { .. }
            | Event::Notice { .. }
            | Event::TurnEnd { .. } => None,
        })
        .collect()
}

/// The tool_result blocks of the last user message of an Anthropic request.
pub fn anthropic_results(req: &Recorded) -> Vec<Value> {
    let last = req.messages().last().unwrap();
    assert_eq!(last["role"], "user");
    last["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "tool_result")
        .cloned()
        .collect()
}

/// `(attempt, delay_ms, reason)` of every retry.
pub fn retries(events: &[Event]) -> Vec<(u32, u64, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Retry {
                attempt,
                delay_ms,
                reason,
            } => Some((*attempt, *delay_ms, reason.clone())),
            Event::TurnStart { .. }
            | Event::ModelRequest { .. }
            | Event::TextDelta { .. }
            | Event::ToolInputPartial { .. }
            | Event::ToolCallStart { .. }
            | Event::ApprovalRequest { .. }
            | Event::ToolCallProgress { .. }
            | Event::ToolCallEnd { .. }
            | Event::Notice { .. }
            | Event::TurnEnd { .. } => None,
        })
        .collect()
}

/// Runs `harness9 exec` with the provider variables pointing at the stub.
pub fn exec(project: &Project, stub: Option<&Stub>, args: &[&str]) -> Output {
    exec_with_env(project, stub, &[], args)
}

/// Like [`exec`], with extra environment variables (set after the stub's).
pub fn exec_with_env(
    project: &Project,
    stub: Option<&Stub>,
    env: &[(&str, String)],
    args: &[&str],
) -> Output {
    let exec_args: Vec<&str> = std::iter::once("exec")
        .chain(args.iter().copied())
        .collect();
    let mut cmd = project.command(&exec_args);
    cmd.env("HARNESS9_LOG", "error");
    for var in [
        "HARNESS9_PROVIDER",
        "HARNESS9_MODEL",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
    ] {
        cmd.env_remove(var);
    }
    if let Some(stub) = stub {
        let (provider, key, url) = match stub.wire {
            Wire::Anthropic => ("anthropic", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"),
            Wire::OpenAi => ("openai", "OPENAI_API_KEY", "OPENAI_BASE_URL"),
        };
        cmd.env("HARNESS9_PROVIDER", provider)
            .env("HARNESS9_MODEL", "stub-model")
            .env(key, TEST_KEY)
            .env(url, stub.base_url());
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

pub async fn exec_async(
    project: Arc<Project>,
    stub: Option<Arc<Stub>>,
    args: Vec<String>,
) -> Output {
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        exec(&project, stub.as_deref(), &args)
    })
    .await
    .unwrap()
}

pub fn strings(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}
