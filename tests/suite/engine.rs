//! The agent engine against the scripted provider (real Anthropic and OpenAI streaming wire
//! formats over local HTTP) and real MCP servers: our fixture and server-everything.

use std::sync::Arc;
use std::time::{Duration, Instant};

use harness9::engine::history::{history, ChatItem};
use harness9::engine::{
    CallStatus, ConversationChoice, Decision, Engine, EngineOptions, Event, PermissionOptions,
    ToolPermission, TurnOutcome, CUT_OFF_NOTICE,
};
use harness9::Harness;
use serde_json::{json, Value};

use super::provider_stub::{Reply, Stub, Wire, TEST_KEY};
use super::{fixture_bin, Project};

/// A project whose `.mcp.json` runs the fixture as server `fx` with these extra fields.
fn fixture_project(extra: Value) -> Project {
    let mut server = json!({"command": fixture_bin()});
    if let Value::Object(m) = extra {
        for (k, v) in m {
            server[k] = v;
        }
    }
    Project::new(&json!({"mcpServers": {"fx": server}}))
}

async fn started(project: &Project) -> Harness {
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
fn options(project: &Project, stub: &Stub) -> EngineOptions {
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

async fn run(engine: &Engine, prompt: &str) -> Vec<Event> {
    let turn = engine.send(prompt).unwrap();
    tokio::time::timeout(Duration::from_secs(30), turn.collect())
        .await
        .expect("the turn ends within 30 s")
}

fn outcome(events: &[Event]) -> &TurnOutcome {
    match events.last() {
        Some(Event::TurnEnd { outcome, .. }) => outcome,
        other => panic!("the last event is not turn_end: {other:?}"),
    }
}

fn completed(events: &[Event]) -> &str {
    match outcome(events) {
        TurnOutcome::Completed { answer } => answer,
        other => panic!("the turn did not complete: {other:?}"),
    }
}

/// `(name, status, error, output)` of every tool_call_end.
fn call_ends(events: &[Event]) -> Vec<(String, CallStatus, Option<String>, String)> {
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
            _ => None,
        })
        .collect()
}

fn streamed_text(events: &[Event]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            Event::TextDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// The tool_result blocks of the last user message of an Anthropic request.
fn anthropic_results(req: &super::provider_stub::Recorded) -> Vec<Value> {
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_streams_text_and_uses_a_fixture_tool() {
    let project = fixture_project(json!({}));
    let harness = started(&project).await;
    let stub = Stub::start(
        Wire::Anthropic,
        vec![
            Reply::Turn {
                text: "Let me echo that.".into(),
                calls: vec![("mcp__fx__echo".into(), json!({"text": "hello \"world\" ✓"}))],
            },
            Reply::text("The tool said hello world."),
        ],
    )
    .await;
    let engine = harness.engine(options(&project, &stub)).unwrap();
    let events = run(&engine, "echo something").await;

    assert_eq!(completed(&events), "The tool said hello world.");
    assert_eq!(
        streamed_text(&events),
        "Let me echo that.The tool said hello world."
    );
    assert_eq!(
        call_ends(&events),
        vec![(
            "mcp__fx__echo".to_string(),
            CallStatus::Ok,
            None,
            "hello \"world\" ✓".to_string()
        )]
    );
    assert!(
        matches!(&events[0], Event::TurnStart { provider, model, .. } if provider == "anthropic" && model == "stub-model")
    );

    let reqs = stub.requests();
    assert_eq!(reqs.len(), 2);
    let first = &reqs[0];
    assert_eq!(first.path, "/v1/messages");
    assert_eq!(first.header("x-api-key"), Some(TEST_KEY));
    assert_eq!(first.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(first.body["stream"], true);
    assert_eq!(first.body["model"], "stub-model");
    assert!(first.body["system"].as_str().unwrap().contains("harness9"));
    let echo = first.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "mcp__fx__echo")
        .expect("echo is offered");
    assert_eq!(echo["input_schema"]["properties"]["text"]["type"], "string");
    assert_eq!(
        first.messages(),
        &vec![json!({"role": "user", "content": [{"type": "text", "text": "echo something"}]})]
    );
    // The second request carries the assistant's tool_use and its result.
    let second = &reqs[1];
    assert_eq!(
        second.messages()[1],
        json!({"role": "assistant", "content": [
            {"type": "text", "text": "Let me echo that."},
            {"type": "tool_use", "id": "toolu_1", "name": "mcp__fx__echo", "input": {"text": "hello \"world\" ✓"}}
        ]})
    );
    assert_eq!(
        anthropic_results(second),
        vec![
            json!({"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "hello \"world\" ✓"}]})
        ]
    );
    harness.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_parallel_tool_calls_run_concurrently() {
    let project = fixture_project(json!({}));
    let harness = started(&project).await;
    let stub = Stub::start(
        Wire::OpenAi,
        vec![
            Reply::tools(&[
                ("mcp__fx__sleep", json!({"ms": 1000})),
                ("mcp__fx__sleep", json!({"ms": 1000})),
            ]),
            Reply::text("Both slept."),
        ],
    )
    .await;
    let engine = harness.engine(options(&project, &stub)).unwrap();
    let started_at = Instant::now();
    let events = run(&engine, "sleep twice").await;
    let elapsed = started_at.elapsed();

    assert_eq!(completed(&events), "Both slept.");
    let ends = call_ends(&events);
    assert_eq!(ends.len(), 2);
    assert!(ends
        .iter()
        .all(|e| e.1 == CallStatus::Ok && e.3 == "slept 1000 ms"));
    assert!(
        elapsed < Duration::from_millis(1800),
        "two 1 s tools took {elapsed:?}: they did not run concurrently"
    );

    let reqs = stub.requests();
    assert_eq!(reqs[0].path, "/v1/chat/completions");
    assert_eq!(
        reqs[0].header("authorization"),
        Some(format!("Bearer {TEST_KEY}").as_str())
    );
    assert_eq!(reqs[0].body["messages"][0]["role"], "system");
    let msgs = reqs[1].messages();
    let assistant = &msgs[msgs.len() - 3];
    assert_eq!(assistant["role"], "assistant");
    assert_eq!(
        assistant["tool_calls"],
        json!([
            {"id": "call_1", "type": "function", "function": {"name": "mcp__fx__sleep", "arguments": "{\"ms\":1000}"}},
            {"id": "call_2", "type": "function", "function": {"name": "mcp__fx__sleep", "arguments": "{\"ms\":1000}"}}
        ])
    );
    assert_eq!(
        msgs[msgs.len() - 2..],
        [
            json!({"role": "tool", "tool_call_id": "call_1", "content": "slept 1000 ms"}),
            json!({"role": "tool", "tool_call_id": "call_2", "content": "slept 1000 ms"})
        ]
    );
    harness.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_call_ids_are_unique_when_the_provider_repeats_or_omits_them() {
    let project = fixture_project(json!({}));
    let harness = started(&project).await;
    // A server that numbers the calls of every answer from call_0, then one that sends none.
    let stub = Stub::start(
        Wire::OpenAi,
        vec![
            Reply::openai_call_with_id(Some("call_0"), "mcp__fx__echo", json!({"text": "1"})),
            Reply::openai_call_with_id(Some("call_0"), "mcp__fx__echo", json!({"text": "2"})),
            Reply::openai_call_with_id(None, "mcp__fx__echo", json!({"text": "3"})),
            Reply::text("done"),
        ],
    )
    .await;
    let engine = harness.engine(options(&project, &stub)).unwrap();
    let events = run(&engine, "echo three times").await;
    assert_eq!(completed(&events), "done");
    let starts: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCallStart { call_id, .. } => Some(call_id.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(starts.len(), 3);
    assert_eq!(starts[0], "call_0");
    assert!(starts[1..]
        .iter()
        .all(|id| id.starts_with(harness9::engine::provider::FALLBACK_CALL_ID_PREFIX)));
    let unique: std::collections::HashSet<&String> = starts.iter().collect();
    assert_eq!(unique.len(), 3, "{starts:?}");
    // The model sees each call with its own result, as does a reopened conversation.
    let last = &stub.requests()[3];
    let pairs: Vec<(Value, Value)> = last
        .messages()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| (m["tool_call_id"].clone(), m["content"].clone()))
        .collect();
    assert_eq!(
        pairs,
        vec![
            (json!(starts[0]), json!("1")),
            (json!(starts[1]), json!("2")),
            (json!(starts[2]), json!("3")),
        ]
    );
    let outputs: Vec<(String, Option<String>)> = history(&engine.messages())
        .into_iter()
        .filter_map(|i| match i {
            ChatItem::Tool {
                call_id, output, ..
            } => Some((call_id, output)),
            _ => None,
        })
        .collect();
    assert_eq!(
        outputs,
        starts
            .iter()
            .zip(["1", "2", "3"])
            .map(|(id, o)| (id.clone(), Some(o.to_string())))
            .collect::<Vec<_>>()
    );
    harness.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timed_out_call_is_an_error_result_and_the_model_goes_on() {
    let project = fixture_project(json!({"toolTimeoutSec": 0.3}));
    let harness = started(&project).await;
    let stub = Stub::start(
        Wire::Anthropic,
        vec![
            Reply::tool("mcp__fx__sleep", json!({"ms": 5000})),
            Reply::tool("mcp__fx__echo", json!({"text": "quick"})),
            Reply::text("The sleep timed out, the echo worked."),
        ],
    )
    .await;
    let engine = harness.engine(options(&project, &stub)).unwrap();
    let started_at = Instant::now();
    let events = run(&engine, "try").await;
    assert!(started_at.elapsed() < Duration::from_secs(4));
    assert_eq!(completed(&events), "The sleep timed out, the echo worked.");
    let ends = call_ends(&events);
    let expected_error = "the server did not answer tools/call within 300 ms; it was cancelled. Raise \"toolTimeoutSec\" in .mcp.json if the server needs longer";
    assert_eq!(ends[0].1, CallStatus::TimedOut);
    assert_eq!(ends[0].2.as_deref(), Some(expected_error));
    assert_eq!(ends[1].1, CallStatus::Ok);
    let reqs = stub.requests();
    assert_eq!(
        anthropic_results(&reqs[1]),
        vec![
            json!({"type": "tool_result", "tool_use_id": "toolu_1", "is_error": true,
                    "content": [{"type": "text", "text": format!("Error: {expected_error}")}]})
        ]
    );
    harness.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stopping_a_turn_cancels_calls_and_keeps_the_conversation_valid() {
    // An in-memory MCP server, to see the cancellation on the wire.
    let (client, mut peer) = memory_server().await;
    let registry = Arc::new(harness9::tools::ToolRegistry::new());
    registry.set_server_tools(
        "mem",
        Arc::new(client),
        vec![
            serde_json::from_value(json!({"name": "slow", "inputSchema": {"type": "object"}}))
                .unwrap(),
        ],
        Duration::from_secs(60),
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
    let call = next_json(&mut peer).await;
    assert_eq!(call["method"], "tools/call");
    assert_eq!(call["params"]["name"], "slow");
    let started_at = Instant::now();
    control.stop();
    let mut events = Vec::new();
    while let Some(e) = turn.next_event().await {
        events.push(e);
    }
    assert!(started_at.elapsed() < Duration::from_secs(2));
    assert_eq!(outcome(&events), &TurnOutcome::Stopped);
    let ends = call_ends(&events);
    assert_eq!(ends.len(), 1);
    assert_eq!(ends[0].1, CallStatus::Cancelled);
    let cancel = next_json(&mut peer).await;
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
            _ => continue,
        }
    }
    control.stop();
    let mut last = None;
    while let Some(e) = tokio::time::timeout(Duration::from_secs(5), turn.next_event())
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
    let project = fixture_project(json!({}));
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
    let project = fixture_project(json!({}));
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
async fn tool_search_finds_one_of_ten_thousand_tools() {
    let project = fixture_project(json!({"env": {"REFSERVER_TOOLS": "10000"}}));
    let harness = started(&project).await;
    assert!(harness.registry().len() > 10_000);
    let stub = Stub::start(
        Wire::OpenAi,
        vec![
            Reply::tool("tool_search", json!({"query": "synthetic tool 04242"})),
            Reply::tool("mcp__fx__tool_04242", json!({"query": "x"})),
            Reply::text("Found and called it."),
        ],
    )
    .await;
    let engine = harness.engine(options(&project, &stub)).unwrap();
    let events = run(&engine, "use tool 04242").await;
    assert_eq!(completed(&events), "Found and called it.");
    let ends = call_ends(&events);
    assert!(
        ends[0]
            .3
            .contains("- mcp__fx__tool_04242: Synthetic tool 04242"),
        "{}",
        ends[0].3
    );
    assert_eq!(ends[1].3, "called tool_04242");

    let reqs = stub.requests();
    let first = reqs[0].tool_names();
    assert!(
        first.len() < 5,
        "deferred tools were sent: {} tools",
        first.len()
    );
    assert!(first.contains(&"tool_search".to_string()));
    let second = reqs[1].tool_names();
    assert!(second.contains(&"mcp__fx__tool_04242".to_string()));
    assert!(second.len() <= 2 + 5, "{second:?}");
    harness.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_outputs_are_cut_saved_and_paged() {
    let project = fixture_project(json!({}));
    let harness = started(&project).await;
    let stub = Stub::start(
        Wire::Anthropic,
        vec![
            Reply::tool("mcp__fx__big", json!({"bytes": 250_000})),
            Reply::tool(
                "read_tool_output",
                json!({"id": "toolu_1", "offset": 100_000}),
            ),
            Reply::text("Read two pages."),
        ],
    )
    .await;
    let engine = harness.engine(options(&project, &stub)).unwrap();
    let events = run(&engine, "big").await;
    assert_eq!(completed(&events), "Read two pages.");

    let reqs = stub.requests();
    assert!(!reqs[0]
        .tool_names()
        .contains(&"read_tool_output".to_string()));
    let first_page = anthropic_results(&reqs[1])[0]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_string();
    let expected_start = "abcdefghij".repeat(10_000);
    assert!(first_page.starts_with(&expected_start));
    assert_eq!(
        &first_page[100_000..],
        "\n\n[harness9: this output has 250000 characters; only the first 100000 are shown. The whole output is saved as \"toolu_1\": call read_tool_output with {\"id\": \"toolu_1\", \"offset\": 100000} to read the next page.]"
    );
    assert!(reqs[1]
        .tool_names()
        .contains(&"read_tool_output".to_string()));
    let second_page = anthropic_results(&reqs[2])[0]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        &second_page[100_000..],
        "\n\n[harness9: characters 100000–200000 of 250000; the next page starts at offset 200000]"
    );
    let saved = project
        .data
        .path()
        .join("tool-outputs")
        .join(engine.conversation_id())
        .join("toolu_1.txt");
    assert_eq!(std::fs::metadata(saved).unwrap().len(), 250_000);
    let ends = call_ends(&events);
    assert!(
        matches!(&events.iter().find(|e| matches!(e, Event::ToolCallEnd { .. })), Some(Event::ToolCallEnd { spilled: Some(id), .. }) if id == "toolu_1")
    );
    assert_eq!(ends[1].1, CallStatus::Ok);
    harness.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limits_and_server_errors_are_retried() {
    let project = Project::new(&json!({"mcpServers": {}}));
    let stub = Stub::start(
        Wire::Anthropic,
        vec![
            Reply::status(429, Some("1"), "slow down"),
            Reply::status(529, None, "overloaded"),
            Reply::text("finally"),
        ],
    )
    .await;
    let registry = Arc::new(harness9::tools::ToolRegistry::new());
    let engine = Engine::new(project.path(), registry, options(&project, &stub)).unwrap();
    let events = run(&engine, "hi").await;
    assert_eq!(completed(&events), "finally");
    let retries: Vec<(u32, u64, String)> = events
        .iter()
        .filter_map(|e| match e {
            Event::Retry {
                attempt,
                delay_ms,
                reason,
            } => Some((*attempt, *delay_ms, reason.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        retries,
        vec![
            (1, 1000, "the provider answered 429: slow down".to_string()),
            (2, 20, "the provider answered 529: overloaded".to_string())
        ]
    );
    assert_eq!(stub.requests().len(), 3);
}

fn retries(events: &[Event]) -> Vec<(u32, u64, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Retry {
                attempt,
                delay_ms,
                reason,
            } => Some((*attempt, *delay_ms, reason.clone())),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn busy_errors_in_the_stream_are_retried_before_the_answer_starts() {
    let project = Project::new(&json!({"mcpServers": {}}));
    let registry = Arc::new(harness9::tools::ToolRegistry::new());
    // One retry budget for statuses and errors in the stream.
    let stub = Stub::start(
        Wire::Anthropic,
        vec![
            Reply::status(529, None, "Overloaded"),
            Reply::stream_error("", "overloaded_error", "Overloaded"),
            Reply::stream_error("", "api_error", "Internal server error"),
            Reply::text("finally"),
        ],
    )
    .await;
    let engine = Engine::new(project.path(), registry.clone(), options(&project, &stub)).unwrap();
    let events = run(&engine, "hi").await;
    assert_eq!(completed(&events), "finally");
    assert_eq!(streamed_text(&events), "finally");
    assert_eq!(
        retries(&events),
        vec![
            (1, 10, "the provider answered 529: Overloaded".to_string()),
            (
                2,
                20,
                "the provider reported overloaded_error while streaming: Overloaded".to_string()
            ),
            (
                3,
                40,
                "the provider reported api_error while streaming: Internal server error"
                    .to_string()
            ),
        ]
    );
    assert_eq!(stub.requests().len(), 4);

    let stub = Stub::start(
        Wire::OpenAi,
        vec![
            Reply::stream_error("", "server_error", "The server had an error"),
            Reply::text("ok"),
        ],
    )
    .await;
    let engine = Engine::new(project.path(), registry, options(&project, &stub)).unwrap();
    let events = run(&engine, "hi").await;
    assert_eq!(completed(&events), "ok");
    assert_eq!(
        retries(&events),
        vec![(
            1,
            10,
            "the provider reported server_error while streaming: The server had an error"
                .to_string()
        )]
    );
    assert_eq!(stub.requests().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_busy_error_after_part_of_the_answer_fails_the_turn_without_repeating_it() {
    let project = Project::new(&json!({"mcpServers": {}}));
    let registry = Arc::new(harness9::tools::ToolRegistry::new());
    for wire in [Wire::Anthropic, Wire::OpenAi] {
        let stub = Stub::start(
            wire,
            vec![
                Reply::stream_error("Half of an answer", "overloaded_error", "Overloaded"),
                Reply::text("never sent"),
            ],
        )
        .await;
        let engine =
            Engine::new(project.path(), registry.clone(), options(&project, &stub)).unwrap();
        let events = run(&engine, "hi").await;
        assert_eq!(
            outcome(&events),
            &TurnOutcome::Failed {
                error: "the model provider failed in the middle of the answer (overloaded_error: Overloaded); the answer is incomplete, send your message again".into(),
                code: "answer-incomplete",
            },
            "{wire:?}"
        );
        assert_eq!(streamed_text(&events), "Half of an answer", "{wire:?}");
        assert_eq!(retries(&events), vec![], "{wire:?}");
        assert_eq!(stub.requests().len(), 1, "{wire:?}");
        assert_eq!(engine.messages().len(), 1, "only the prompt is kept");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn busy_errors_in_the_stream_fail_the_turn_after_the_retries() {
    let project = Project::new(&json!({"mcpServers": {}}));
    let registry = Arc::new(harness9::tools::ToolRegistry::new());
    let busy = Reply::stream_error("", "rate_limit_exceeded", "Rate limit reached");
    let stub = Stub::start(Wire::OpenAi, vec![busy; 4]).await;
    let engine = Engine::new(project.path(), registry.clone(), options(&project, &stub)).unwrap();
    let events = run(&engine, "hi").await;
    assert_eq!(
        outcome(&events),
        &TurnOutcome::Failed {
            error: "the model provider was still busy after 3 retries (rate_limit_exceeded: Rate limit reached); try again in a minute".into(),
            code: "provider-busy",
        }
    );
    assert_eq!(retries(&events).len(), 3);
    assert_eq!(stub.requests().len(), 4);

    // Other errors in the stream are not retried.
    let stub = Stub::start(
        Wire::Anthropic,
        vec![Reply::stream_error(
            "",
            "invalid_request_error",
            "prompt is too long",
        )],
    )
    .await;
    let engine = Engine::new(project.path(), registry, options(&project, &stub)).unwrap();
    let events = run(&engine, "hi").await;
    assert_eq!(
        outcome(&events),
        &TurnOutcome::Failed {
            error: "the model provider sent an error: invalid_request_error: prompt is too long"
                .into(),
            code: "provider-error",
        }
    );
    assert_eq!(stub.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_cut_off_at_the_token_limit_is_marked_in_the_outcome_and_the_history() {
    let project = Project::new(&json!({"mcpServers": {}}));
    let registry = Arc::new(harness9::tools::ToolRegistry::new());
    for wire in [Wire::Anthropic, Wire::OpenAi] {
        let stub = Stub::start(
            wire,
            vec![
                Reply::cut_off("The first half of a long"),
                Reply::text(" answer."),
            ],
        )
        .await;
        let engine =
            Engine::new(project.path(), registry.clone(), options(&project, &stub)).unwrap();
        let events = run(&engine, "write a lot").await;
        assert_eq!(
            outcome(&events),
            &TurnOutcome::CutOff {
                answer: "The first half of a long".into(),
                notice: CUT_OFF_NOTICE.into(),
            },
            "{wire:?}"
        );
        assert_eq!(streamed_text(&events), "The first half of a long");
        let id = engine.conversation_id().to_string();
        drop(engine);

        // Reopened, the conversation says so after the answer.
        let opts = EngineOptions {
            conversation: ConversationChoice::Resume(id),
            ..options(&project, &stub)
        };
        let reopened = Engine::new(project.path(), registry.clone(), opts).unwrap();
        assert_eq!(
            serde_json::to_value(history(&reopened.messages())).unwrap(),
            json!([
                {"kind": "user", "text": "write a lot"},
                {"kind": "assistant", "text": "The first half of a long"},
                {"kind": "notice", "text": CUT_OFF_NOTICE},
            ]),
            "{wire:?}"
        );
        // The model gets its text back as any other answer when the user asks for the rest.
        let events = run(&reopened, "go on").await;
        assert_eq!(completed(&events), " answer.");
        let next = &stub.requests()[1];
        let assistant = match wire {
            Wire::Anthropic => {
                json!({"role": "assistant", "content": [{"type": "text", "text": "The first half of a long"}]})
            }
            Wire::OpenAi => json!({"role": "assistant", "content": "The first half of a long"}),
        };
        let at = usize::from(wire == Wire::OpenAi); // after OpenAI's system message
        assert_eq!(next.messages()[at + 1], assistant, "{wire:?}");
        assert!(!next.body.to_string().contains("cut_off"));
        assert_eq!(
            history(&reopened.messages())
                .iter()
                .filter(|i| matches!(i, ChatItem::Notice { .. }))
                .count(),
            1
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_call_cut_off_at_the_token_limit_is_not_run_and_the_model_is_told_why() {
    let project = fixture_project(json!({}));
    let harness = started(&project).await;
    for wire in [Wire::Anthropic, Wire::OpenAi] {
        let stub = Stub::start(
            wire,
            vec![
                Reply::CutOff {
                    text: "Echoing it.".into(),
                    call: Some(("mcp__fx__echo".into(), r#"{"text": "a very long te"#.into())),
                },
                Reply::text("I will send less."),
            ],
        )
        .await;
        let engine = harness.engine(options(&project, &stub)).unwrap();
        let events = run(&engine, "echo a lot").await;
        assert_eq!(completed(&events), "I will send less.", "{wire:?}");
        let ends = call_ends(&events);
        assert_eq!(ends.len(), 1);
        let (name, status, error, output) = &ends[0];
        assert_eq!(
            (name.as_str(), *status),
            ("mcp__fx__echo", CallStatus::Error)
        );
        let error = error.as_deref().unwrap();
        assert!(
            error.starts_with("the arguments were not valid JSON")
                && error.ends_with(
                    "; the answer reached the output token limit while this call was written"
                ),
            "{error}"
        );
        assert!(output.contains(error), "{output}");
        // The turn went on, so the history holds no cut-off notice.
        assert!(!history(&engine.messages())
            .iter()
            .any(|i| matches!(i, ChatItem::Notice { .. })));
    }
    harness.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn provider_errors_fail_the_turn_with_a_clear_message() {
    let project = Project::new(&json!({"mcpServers": {}}));
    let stub = Stub::start(
        Wire::OpenAi,
        vec![Reply::status(401, None, "Incorrect API key provided")],
    )
    .await;
    let registry = Arc::new(harness9::tools::ToolRegistry::new());
    let engine = Engine::new(project.path(), registry, options(&project, &stub)).unwrap();
    let events = run(&engine, "hi").await;
    assert_eq!(
        outcome(&events),
        &TurnOutcome::Failed {
            error: "the model provider rejected the request with 401 (Incorrect API key provided); check that OPENAI_API_KEY holds a valid API key".into(),
            code: "unauthorized",
        }
    );
    assert_eq!(stub.requests().len(), 1, "a 401 is not retried");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_round_trip_bound_ends_the_turn() {
    let project = fixture_project(json!({}));
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conversations_reopen_after_a_restart() {
    let project = fixture_project(json!({}));
    let harness = started(&project).await;
    let stub = Stub::start(
        Wire::Anthropic,
        vec![
            Reply::tool("mcp__fx__echo", json!({"text": "remember me"})),
            Reply::text("Noted."),
            Reply::text("You asked me to remember."),
        ],
    )
    .await;
    let first = harness.engine(options(&project, &stub)).unwrap();
    completed(&run(&first, "remember this").await);
    let id = first.conversation_id().to_string();
    drop(first);

    let mut opts = options(&project, &stub);
    opts.conversation = ConversationChoice::Latest;
    let second = harness.engine(opts).unwrap();
    assert_eq!(second.conversation_id(), id);
    assert_eq!(second.messages(), {
        let again = Engine::new(
            project.path(),
            harness.registry().clone(),
            EngineOptions {
                conversation: ConversationChoice::Resume(id.clone()),
                ..options(&project, &stub)
            },
        )
        .unwrap();
        again.messages()
    });
    assert_eq!(second.messages().len(), 4);
    let events = run(&second, "what did I ask?").await;
    assert_eq!(completed(&events), "You asked me to remember.");
    let msgs = stub.requests()[2].messages().clone();
    assert_eq!(msgs.len(), 5);
    assert_eq!(msgs[0]["content"][0]["text"], "remember this");
    assert_eq!(msgs[2]["content"][0]["content"][0]["text"], "remember me");
    let summaries = Engine::conversations(project.data.path(), project.path());
    assert_eq!(summaries.len(), 1);
    assert_eq!(summaries[0].title, "remember this");
    assert_eq!(summaries[0].messages, 6);
    harness.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_reload_the_model_is_told_which_tools_disappeared() {
    let project = fixture_project(json!({}));
    let harness = started(&project).await;
    let stub = Stub::start(
        Wire::Anthropic,
        vec![
            Reply::tool("mcp__fx__echo", json!({"text": "x"})),
            Reply::text("ok"),
            Reply::text("I will not use it."),
        ],
    )
    .await;
    let engine = harness.engine(options(&project, &stub)).unwrap();
    completed(&run(&engine, "first").await);
    // The server is renamed: its tools now have other names.
    std::fs::write(
        project.path().join(".mcp.json"),
        json!({"mcpServers": {"fy": {"command": fixture_bin()}}}).to_string(),
    )
    .unwrap();
    harness.reload().await;
    harness
        .manager()
        .wait_settled(Duration::from_secs(20))
        .await;
    assert!(harness.registry().get("mcp__fx__echo").is_none());
    assert!(harness.registry().get("mcp__fy__echo").is_some());

    let events = run(&engine, "second").await;
    assert_eq!(completed(&events), "I will not use it.");
    assert!(events.iter().any(|e| matches!(e, Event::Notice { message } if message == "tools the model used are no longer available: mcp__fx__echo")));
    let req = &stub.requests()[2];
    let last = req.messages().last().unwrap();
    assert_eq!(
        last["content"],
        json!([
            {"type": "text", "text": "second"},
            {"type": "text", "text": "[harness9: these tools you used earlier are no longer available (the project's MCP servers changed): mcp__fx__echo. Do not call them.]"}
        ])
    );
    assert!(req.tool_names().contains(&"mcp__fy__echo".to_string()));
    harness.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_images_reach_providers_as_images() {
    let project = fixture_project(json!({}));
    let harness = started(&project).await;
    for wire in [Wire::Anthropic, Wire::OpenAi] {
        let stub = Stub::start(
            wire,
            vec![Reply::tool("mcp__fx__rich", json!({})), Reply::text("seen")],
        )
        .await;
        let engine = harness.engine(options(&project, &stub)).unwrap();
        assert_eq!(completed(&run(&engine, "rich").await), "seen");
        let req = &stub.requests()[1];
        match wire {
            Wire::Anthropic => {
                let parts = anthropic_results(req)[0]["content"].clone();
                assert_eq!(parts[1]["type"], "image");
                assert_eq!(parts[1]["source"]["type"], "base64");
                assert_eq!(parts[1]["source"]["media_type"], "image/png");
                assert!(parts[0]["text"]
                    .as_str()
                    .unwrap()
                    .starts_with("rich text part\n[audio: audio/wav"));
            }
            Wire::OpenAi => {
                let msgs = req.messages();
                let tool = &msgs[msgs.len() - 2];
                assert_eq!(tool["role"], "tool");
                assert!(tool["content"]
                    .as_str()
                    .unwrap()
                    .contains("[image 1 follows in the next message]"));
                let user = &msgs[msgs.len() - 1];
                assert_eq!(user["role"], "user");
                assert!(user["content"][1]["image_url"]["url"]
                    .as_str()
                    .unwrap()
                    .starts_with("data:image/png;base64,iVBOR"));
            }
        }
    }
    harness.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_progress_becomes_events() {
    let project = fixture_project(json!({}));
    let harness = started(&project).await;
    let stub = Stub::start(
        Wire::Anthropic,
        vec![
            Reply::tool("mcp__fx__progress", json!({"steps": 3})),
            Reply::text("done"),
        ],
    )
    .await;
    let engine = harness.engine(options(&project, &stub)).unwrap();
    let events = run(&engine, "progress").await;
    assert_eq!(completed(&events), "done");
    let progress: Vec<(f64, Option<f64>, Option<String>)> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCallProgress {
                progress,
                total,
                message,
                ..
            } => Some((*progress, *total, message.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        progress,
        (1..=3)
            .map(|i| (i as f64, Some(3.0), Some(format!("step {i} of 3"))))
            .collect::<Vec<_>>()
    );
    harness.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_engine_drives_server_everything() {
    let Some(bin) = super::external("H9_EVERYTHING_BIN") else {
        return;
    };
    let project = Project::new(&json!({"mcpServers": {"ev": {"command": bin, "args": ["stdio"]}}}));
    let harness = started(&project).await;
    let stub = Stub::start(
        Wire::OpenAi,
        vec![
            Reply::tools(&[
                ("mcp__ev__get-sum", json!({"a": 2, "b": 3})),
                ("mcp__ev__echo", json!({"message": "hi there"})),
            ]),
            Reply::text("2 + 3 = 5"),
        ],
    )
    .await;
    let engine = harness.engine(options(&project, &stub)).unwrap();
    let events = run(&engine, "add 2 and 3").await;
    assert_eq!(completed(&events), "2 + 3 = 5");
    let ends = call_ends(&events);
    assert_eq!(ends[0].3, "The sum of 2 and 3 is 5.");
    assert_eq!(ends[1].3, "Echo: hi there");
    harness.shutdown().await;
}

// ---------------------------------------------------------------------------------------
// `harness9 exec`

/// Runs `harness9 exec` with the provider variables pointing at the stub.
pub(super) fn exec(project: &Project, stub: Option<&Stub>, args: &[&str]) -> std::process::Output {
    exec_with_env(project, stub, &[], args)
}

/// Like [`exec`], with extra environment variables (set after the stub's).
fn exec_with_env(
    project: &Project,
    stub: Option<&Stub>,
    env: &[(&str, String)],
    args: &[&str],
) -> std::process::Output {
    let config = project.data.path().join("config");
    let mut cmd = std::process::Command::new(super::harness9_bin());
    cmd.arg("exec")
        .args(args)
        .arg("--project")
        .arg(project.path())
        .env("HARNESS9_DATA_DIR", project.data.path())
        .env("HARNESS9_CONFIG_DIR", &config)
        .env("HARNESS9_LOG", "error")
        .stdin(std::process::Stdio::null());
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

async fn exec_async(
    project: Arc<Project>,
    stub: Option<Arc<Stub>>,
    args: Vec<String>,
) -> std::process::Output {
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        exec(&project, stub.as_deref(), &args)
    })
    .await
    .unwrap()
}

fn strings(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_prints_the_answer_on_stdout_and_tool_calls_on_stderr() {
    let project = Arc::new(fixture_project(json!({})));
    let stub = Arc::new(
        Stub::start(
            Wire::OpenAi,
            vec![
                Reply::Turn {
                    text: "Checking.".into(),
                    calls: vec![
                        ("mcp__fx__echo".into(), json!({"text": "hi"})),
                        ("mcp__fx__fail".into(), json!({})),
                    ],
                },
                Reply::text("The echo said hi."),
            ],
        )
        .await,
    );
    let out = exec_async(
        project.clone(),
        Some(stub.clone()),
        strings(&["--yes", "--allow-tools", "mcp__fx__echo", "say hi"]),
    )
    .await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    assert_eq!(stdout, "The echo said hi.\n");
    let lines: Vec<String> = stderr
        .lines()
        .map(|l| {
            // Durations vary: "(12 ms)" → "(N ms)".
            let mut s = l.to_string();
            if let (Some(a), Some(b)) = (s.rfind(" ("), s.find(" ms)")) {
                if a < b {
                    s.replace_range(a + 2..b, "N");
                }
            }
            s
        })
        .collect();
    assert_eq!(lines.len(), 5, "{lines:?}");
    let mut ends = lines[3..].to_vec();
    ends.sort();
    assert_eq!(
        ends,
        [
            "⊘ mcp__fx__fail denied (N ms): denied by the permission rules",
            "✓ mcp__fx__echo ok (N ms)",
        ]
    );
    assert_eq!(
        lines[..3],
        [
            "Checking.",
            "→ mcp__fx__echo {\"text\":\"hi\"}",
            "→ mcp__fx__fail {}"
        ]
    );
    assert!(!stderr.contains(TEST_KEY) && !stdout.contains(TEST_KEY));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_json_streams_one_event_per_line() {
    let project = Arc::new(fixture_project(json!({})));
    let stub = Arc::new(
        Stub::start(
            Wire::Anthropic,
            vec![
                Reply::tool("mcp__fx__echo", json!({"text": "json"})),
                Reply::text("Done."),
            ],
        )
        .await,
    );
    let out = exec_async(
        project.clone(),
        Some(stub.clone()),
        strings(&["--yes", "--json", "--allow-tools", "mcp__fx__*", "go"]),
    )
    .await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(types.first(), Some(&"turn_start"));
    assert_eq!(types.last(), Some(&"turn_end"));
    let start = events
        .iter()
        .find(|e| e["type"] == "tool_call_start")
        .unwrap();
    assert_eq!(start["name"], "mcp__fx__echo");
    assert_eq!(start["arguments"], json!({"text": "json"}));
    let end = events
        .iter()
        .find(|e| e["type"] == "tool_call_end")
        .unwrap();
    assert_eq!(end["status"], "ok");
    assert_eq!(end["output"], "json");
    assert!(end["durationMs"].is_u64());
    assert_eq!(end["error"], Value::Null);
    assert_eq!(
        events.last().unwrap()["outcome"],
        json!({"status": "completed", "answer": "Done."})
    );
    assert!(types.contains(&"text_delta"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_fails_with_exit_1_on_provider_errors_and_2_without_a_provider() {
    let project = Arc::new(Project::new(&json!({"mcpServers": {}})));
    let stub = Arc::new(
        Stub::start(
            Wire::Anthropic,
            vec![Reply::status(401, None, "invalid x-api-key")],
        )
        .await,
    );
    let out = exec_async(project.clone(), Some(stub.clone()), strings(&["hi"])).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr.trim_end(),
        "harness9: the model provider rejected the request with 401 (invalid x-api-key); check that ANTHROPIC_API_KEY holds a valid API key"
    );
    assert!(out.stdout.is_empty());

    let out = exec_async(project.clone(), None, strings(&["hi"])).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    for var in [
        "HARNESS9_PROVIDER",
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "HARNESS9_MODEL",
    ] {
        assert!(stderr.contains(var), "{var} not named in: {stderr}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_reaching_the_round_trip_bound_exits_1() {
    let project = Arc::new(fixture_project(json!({})));
    let stub = Arc::new(
        Stub::start(
            Wire::OpenAi,
            vec![Reply::tool("mcp__fx__echo", json!({"text": "again"}))],
        )
        .await,
    );
    let out = exec_async(
        project.clone(),
        Some(stub.clone()),
        strings(&[
            "--yes",
            "--allow-tools",
            "*",
            "--max-round-trips",
            "1",
            "loop",
        ]),
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("the model used all 1 round-trips"),
        "{stderr}"
    );
    assert_eq!(stub.remaining(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_prints_a_cut_off_answer_says_so_and_exits_1() {
    let project = Arc::new(Project::new(&json!({"mcpServers": {}})));
    let stub = Arc::new(Stub::start(Wire::Anthropic, vec![Reply::cut_off("Half of it")]).await);
    let out = exec_async(project.clone(), Some(stub.clone()), strings(&["write"])).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Half of it\n");
    assert_eq!(stderr.trim_end(), format!("harness9: {CUT_OFF_NOTICE}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_talks_to_a_keyless_openai_compatible_server() {
    // Like Ollama or llama.cpp: only OPENAI_BASE_URL is set, no key, no provider name.
    let project = Arc::new(Project::new(&json!({"mcpServers": {}})));
    let stub = Arc::new(Stub::start(Wire::OpenAi, vec![Reply::text("local answer")]).await);
    let url = stub.base_url();
    let p = project.clone();
    let out = tokio::task::spawn_blocking(move || {
        exec_with_env(
            &p,
            None,
            &[
                ("OPENAI_BASE_URL", url),
                ("HARNESS9_MODEL", "llama3".into()),
            ],
            &["hi"],
        )
    })
    .await
    .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "local answer\n");
    let req = &stub.requests()[0];
    assert_eq!(req.header("authorization"), None);
    assert_eq!(req.body["model"], "llama3");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_takes_the_provider_from_the_settings_file() {
    let project = Arc::new(Project::new(&json!({"mcpServers": {}})));
    let stub = Arc::new(Stub::start(Wire::OpenAi, vec![Reply::text("from settings")]).await);
    let config = project.data.path().join("config");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("settings.json"),
        json!({"theme": "dark", "provider": {"kind": "openai", "model": "file-model", "baseUrl": stub.base_url(), "apiKeyEnv": "MY_LOCAL_KEY"}}).to_string(),
    )
    .unwrap();
    let p = project.clone();
    let out = tokio::task::spawn_blocking(move || {
        exec_with_env(&p, None, &[("MY_LOCAL_KEY", TEST_KEY.into())], &["hi"])
    })
    .await
    .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "from settings\n");
    let req = &stub.requests()[0];
    assert_eq!(req.body["model"], "file-model");
    assert_eq!(
        req.header("authorization"),
        Some(format!("Bearer {TEST_KEY}").as_str())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_file_must_not_hold_keys() {
    let project = Arc::new(Project::new(&json!({"mcpServers": {}})));
    let config = project.data.path().join("config");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("settings.json"),
        json!({"provider": {"kind": "openai", "apiKey": "sk-plain"}}).to_string(),
    )
    .unwrap();
    let out = exec_async(project.clone(), None, strings(&["hi"])).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr.contains("must not hold an API key"), "{stderr}");
    assert!(!stderr.contains("sk-plain"));
}

// ---------------------------------------------------------------------------------------
// An in-memory MCP server (the test plays it), to watch cancellation on the wire.

use harness9::mcp::transport::memory::{self, MemoryPeer};
use harness9::mcp::transport::Inbound;
use harness9::mcp::{Client, ServerLog};

async fn next_json(peer: &mut MemoryPeer) -> Value {
    let bytes = tokio::time::timeout(Duration::from_secs(5), peer.from_client.recv())
        .await
        .expect("the client sent something")
        .expect("open");
    serde_json::from_slice(&bytes).unwrap()
}

async fn memory_server() -> (Client, MemoryPeer) {
    let (conn, mut peer) = memory::pair();
    let connect = tokio::spawn(Client::connect(conn, "mem", Arc::new(ServerLog::default())));
    let init = next_json(&mut peer).await;
    peer.to_client
        .send(Inbound::Message(
            serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": init["id"], "result": {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "mem", "version": "1"}}}))
                .unwrap(),
        ))
        .unwrap();
    let client = connect.await.unwrap().unwrap();
    let initialized = next_json(&mut peer).await;
    assert_eq!(initialized["method"], "notifications/initialized");
    (client, peer)
}

#[test]
fn bench_engine_reports_both_scenarios() {
    let out = std::process::Command::new(super::harness9_bin())
        .args(["bench", "engine", "--quick"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let scenarios: Vec<(&str, bool, &str)> = lines
        .iter()
        .map(|l| {
            (
                l["scenario"].as_str().unwrap(),
                l["ok"].as_bool().unwrap(),
                l["unit"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        scenarios,
        [
            ("round_trip_overhead", true, "us"),
            ("tool_search_10k", true, "us")
        ]
    );
    assert!(lines.iter().all(|l| l["value"].as_f64().unwrap() > 0.0));
}

/// Listing conversations reads every file on tokio's blocking pool: a file that cannot be
/// read yet (a pipe nobody writes to) holds up the listing, never the runtime's only thread.
#[tokio::test(flavor = "current_thread")]
async fn listing_conversations_never_blocks_the_runtime() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let project = Project::new(&json!({"mcpServers": {}}));
    let store =
        harness9::engine::store::ConversationStore::new(project.data.path(), project.path());
    std::fs::create_dir_all(store.dir()).unwrap();
    let pipe = store.dir().join("0000000000001-00001.jsonl");
    let made = std::process::Command::new("mkfifo")
        .arg(&pipe)
        .status()
        .unwrap();
    assert!(made.success());
    let ticks = Arc::new(AtomicUsize::new(0));
    let t = ticks.clone();
    let ticker = tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_millis(10)).await;
            t.fetch_add(1, Ordering::Relaxed);
        }
    });
    let (data, folder) = (
        project.data.path().to_path_buf(),
        project.path().to_path_buf(),
    );
    let listing = tokio::spawn(async move { Engine::list_conversations(&data, &folder).await });
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        ticks.load(Ordering::Relaxed) >= 5,
        "the runtime was blocked"
    );
    assert!(!listing.is_finished());
    let header = json!({"type": "header", "project": "p", "created_ms": 1});
    let message = json!({"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": "hello pipe"}]}});
    let text = format!("{header}\n{message}\n");
    std::thread::spawn(move || std::fs::write(pipe, text).unwrap());
    let listed = tokio::time::timeout(Duration::from_secs(10), listing)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0].title, "hello pipe");
    ticker.abort();
}

/// Reopening a conversation through the async door gives what the blocking one gives.
#[tokio::test(flavor = "current_thread")]
async fn engines_open_off_the_runtime_with_their_history() {
    let project = Project::new(&json!({"mcpServers": {}}));
    let harness = project.harness();
    let stub = Stub::start(Wire::Anthropic, vec![Reply::text("Hi.")]).await;
    let first = harness.open_engine(options(&project, &stub)).await.unwrap();
    completed(&run(&first, "remember this").await);
    let id = first.conversation_id().to_string();
    drop(first);
    let again = harness
        .open_engine(EngineOptions {
            conversation: ConversationChoice::Resume(id.clone()),
            ..options(&project, &stub)
        })
        .await
        .unwrap();
    assert_eq!(again.conversation_id(), id);
    assert_eq!(again.messages().len(), 2);
}
