//! What the user controls in a turn: which tools may run (permission rules, approvals
//! remembered per project), stopping a turn while a tool runs or while the model streams,
//! and the bound on round trips.

use std::sync::Arc;
use std::time::Duration;

use harness9::engine::{
    CallStatus, Decision, Engine, Event, PermissionOptions, ToolPermission, TurnOutcome,
};
use serde_json::json;

use super::support::memory::{legacy_server, next_message};
use super::support::provider_stub::{Reply, Stub, Wire};
use super::support::turns::*;
use super::support::wait::DEADLINE;
use super::support::Project;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stopping_a_turn_cancels_calls_and_keeps_the_conversation_valid() {
    // An in-memory MCP server, to see the cancellation on the wire.
    let (client, mut peer) = legacy_server().await;
    let registry = Arc::new(harness9::tools::ToolRegistry::new());
    registry.set_server_tools(
        "mem",
        Arc::new(client),
        vec![
            serde_json::from_value(json!({"name": "slow", "inputSchema": {"type": "object"}}))
                .unwrap(),
        ],
        Duration::from_secs(600),
    );
    let project = Project::new(&json!({"mcpServers": {}}));
    let stub = Stub::start(
        Wire::Anthropic,
        vec![
            Reply::tool("mcp__mem__slow", json!({})),
            Reply::text("Understood, stopped."),
        ],
    )
    .await;
    let engine = Engine::new(project.path(), registry, options(&project, &stub)).unwrap();
    let mut turn = engine.send("run slow").unwrap();
    let control = turn.control();
    let call = next_message(&mut peer).await;
    assert_eq!(call["method"], "tools/call");
    assert_eq!(call["params"]["name"], "slow");
    // The server never answers: the turn ends only because it was stopped.
    control.stop();
    let mut events = Vec::new();
    tokio::time::timeout(DEADLINE, async {
        while let Some(e) = turn.next_event().await {
            events.push(e);
        }
    })
    .await
    .expect("the turn ends after stop");
    assert_eq!(outcome(&events), &TurnOutcome::Stopped);
    let ends = call_ends(&events);
    assert_eq!(ends.len(), 1);
    assert_eq!(ends[0].1, CallStatus::Cancelled);
    let cancel = next_message(&mut peer).await;
    assert_eq!(cancel["method"], "notifications/cancelled");
    assert_eq!(cancel["params"]["requestId"], call["id"]);

    // The next turn sends a valid history: the stopped call has a result.
    let events = run(&engine, "what happened?").await;
    assert_eq!(completed(&events), "Understood, stopped.");
    let reqs = stub.requests();
    let msgs = reqs[1].messages();
    assert_eq!(msgs.len(), 3);
    assert_eq!(
        msgs[2]["content"],
        json!([
            {"type": "tool_result", "tool_use_id": "toolu_1", "is_error": true,
             "content": [{"type": "text", "text": "The user stopped this tool call before it finished."}]},
            {"type": "text", "text": "what happened?"}
        ])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stopping_while_the_model_streams_ends_the_turn() {
    let project = Project::new(&json!({"mcpServers": {}}));
    let stub = Stub::start(
        Wire::OpenAi,
        vec![Reply::Hang {
            text: "I am thinking".into(),
        }],
    )
    .await;
    let registry = Arc::new(harness9::tools::ToolRegistry::new());
    let engine = Engine::new(project.path(), registry, options(&project, &stub)).unwrap();
    let mut turn = engine.send("think").unwrap();
    let control = turn.control();
    loop {
        match turn.next_event().await.expect("events until the stop") {
            Event::TextDelta { .. } => break,
            Event::TurnStart { .. }
            | Event::ModelRequest { .. }
            | Event::Retry { .. }
            | Event::ToolInputPartial { .. }
            | Event::ToolCallStart { .. }
            | Event::ApprovalRequest { .. }
            | Event::ToolCallProgress { .. }
            | Event::ToolCallEnd { .. }
            | Event::Notice { .. }
            | Event::TurnEnd { .. } => continue,
        }
    }
    control.stop();
    let mut last = None;
    while let Some(e) = tokio::time::timeout(DEADLINE, turn.next_event())
        .await
        .expect("the turn ends soon after stop")
    {
        last = Some(e);
    }
    assert!(matches!(
        last,
        Some(Event::TurnEnd {
            outcome: TurnOutcome::Stopped,
            ..
        })
    ));
    assert!(!engine.is_busy());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn denied_tools_are_reported_to_the_model() {
    let project = Project::fixture(json!({}));
    let harness = started(&project).await;
    let stub = Stub::start(
        Wire::Anthropic,
        vec![
            Reply::tools(&[
                ("mcp__fx__echo", json!({"text": "allowed"})),
                ("mcp__fx__fail", json!({})),
            ]),
            Reply::text("One was denied."),
        ],
    )
    .await;
    let mut opts = options(&project, &stub);
    opts.permissions = PermissionOptions {
        default: ToolPermission::Deny,
        allow: vec!["mcp__fx__e*".into()],
        ..PermissionOptions::default()
    };
    let engine = harness.engine(opts).unwrap();
    let events = run(&engine, "go").await;
    assert_eq!(completed(&events), "One was denied.");
    let mut ends = call_ends(&events);
    ends.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(ends[0].0, "mcp__fx__echo");
    assert_eq!(ends[0].1, CallStatus::Ok);
    assert_eq!(ends[1].1, CallStatus::Denied);
    let results = anthropic_results(&stub.requests()[1]);
    assert_eq!(results[1]["is_error"], true);
    assert_eq!(
        results[1]["content"][0]["text"],
        "harness9 denied this call: tool mcp__fx__fail is not allowed in this run (the user can allow it with --allow-tools 'mcp__fx__fail'). Do not retry it; answer without it."
    );
    harness.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvals_ask_and_always_allow_is_remembered_per_project() {
    let project = Project::fixture(json!({}));
    let harness = started(&project).await;
    let stub = Stub::start(
        Wire::Anthropic,
        vec![
            Reply::tool("mcp__fx__echo", json!({"text": "a"})),
            Reply::tool("mcp__fx__fail", json!({})),
            Reply::text("done"),
            Reply::tool("mcp__fx__echo", json!({"text": "b"})),
            Reply::text("done again"),
        ],
    )
    .await;
    let mut opts = options(&project, &stub);
    opts.permissions.default = ToolPermission::Ask;
    opts.permissions.allow.clear();
    let engine = harness.engine(opts).unwrap();
    let mut turn = engine.send("go").unwrap();
    let control = turn.control();
    let mut events = Vec::new();
    while let Some(e) = turn.next_event().await {
        if let Event::ApprovalRequest {
            call_id,
            name,
            arguments,
            ..
        } = &e
        {
            let decision = if name == "mcp__fx__echo" {
                assert_eq!(arguments, &json!({"text": "a"}));
                Decision::AllowAlways
            } else {
                Decision::Deny
            };
            assert!(control.approve(call_id, decision));
        }
        events.push(e);
    }
    assert_eq!(completed(&events), "done");
    let ends = call_ends(&events);
    assert_eq!((ends[0].1, ends[1].1), (CallStatus::Ok, CallStatus::Denied));
    assert_eq!(
        anthropic_results(&stub.requests()[2])[0]["content"][0]["text"],
        "The user denied this tool call. Do not retry it unless the user asks."
    );

    // A new engine for the same project does not ask again for echo.
    let mut opts = options(&project, &stub);
    opts.permissions.default = ToolPermission::Ask;
    let engine = harness.engine(opts).unwrap();
    let events = run(&engine, "again").await;
    assert_eq!(completed(&events), "done again");
    assert!(!events
        .iter()
        .any(|e| matches!(e, Event::ApprovalRequest { .. })));
    harness.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_round_trip_bound_ends_the_turn() {
    let project = Project::fixture(json!({}));
    let harness = started(&project).await;
    let stub = Stub::start(
        Wire::Anthropic,
        vec![
            Reply::tool("mcp__fx__echo", json!({"text": "1"})),
            Reply::tool("mcp__fx__echo", json!({"text": "2"})),
        ],
    )
    .await;
    let mut opts = options(&project, &stub);
    opts.max_round_trips = 2;
    let engine = harness.engine(opts).unwrap();
    let events = run(&engine, "loop").await;
    assert!(
        matches!(outcome(&events), TurnOutcome::Failed { error, code: "round-trip-limit" } if error.starts_with("the model used all 2 round-trips"))
    );
    assert_eq!(stub.requests().len(), 2);
    harness.shutdown().await;
}
