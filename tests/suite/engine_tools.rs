//! The model's tool calls in a turn, against the scripted provider (the real Anthropic and
//! OpenAI streaming wire formats over local HTTP) and real MCP servers: our fixture and
//! server-everything. Calls run concurrently, keep their ids, time out, find deferred tools,
//! spill long outputs, carry images and progress, and follow the servers through a reload.

use std::sync::Arc;
use std::time::Duration;

use harness9::engine::history::{history, ChatItem};
use harness9::engine::{CallStatus, Engine, Event};
use serde_json::{json, Value};

use super::support::memory::{legacy_server, next_message, send};
use super::support::provider_stub::{Reply, Stub, Wire, TEST_KEY};
use super::support::turns::*;
use super::support::{fixture_bin, Project};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_streams_text_and_uses_a_fixture_tool() {
    let project = Project::fixture(json!({}));
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
    // The test plays server `fx` and answers neither call before both have arrived: only
    // calls that run at the same time get answers.
    let (client, mut peer) = legacy_server().await;
    let registry = Arc::new(harness9::tools::ToolRegistry::new());
    registry.set_server_tools(
        "fx",
        Arc::new(client),
        vec![
            serde_json::from_value(json!({"name": "sleep", "inputSchema": {"type": "object"}}))
                .unwrap(),
        ],
        Duration::from_secs(600),
    );
    let project = Project::new(&json!({"mcpServers": {}}));
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
    let engine = Engine::new(project.path(), registry, options(&project, &stub)).unwrap();
    let serve = async {
        let first = next_message(&mut peer).await;
        let second = next_message(&mut peer).await;
        for call in [&first, &second] {
            assert_eq!(call["method"], "tools/call", "{call}");
        }
        // The later call is answered first.
        for call in [&second, &first] {
            send(
                &peer,
                json!({"jsonrpc": "2.0", "id": call["id"], "result": {"content": [{"type": "text", "text": "slept 1000 ms"}]}}),
            );
        }
    };
    let (events, ()) = tokio::join!(run(&engine, "sleep twice"), serve);

    assert_eq!(completed(&events), "Both slept.");
    let ends = call_ends(&events);
    assert_eq!(ends.len(), 2);
    assert!(ends
        .iter()
        .all(|e| e.1 == CallStatus::Ok && e.3 == "slept 1000 ms"));

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
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_call_ids_are_unique_when_the_provider_repeats_or_omits_them() {
    let project = Project::fixture(json!({}));
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
            Event::ToolInputPartial { .. }
            | Event::TurnStart { .. }
            | Event::ModelRequest { .. }
            | Event::Retry { .. }
            | Event::TextDelta { .. }
            | Event::ApprovalRequest { .. }
            | Event::ToolCallProgress { .. }
            | Event::ToolCallEnd { .. }
            | Event::Notice { .. }
            | Event::TurnEnd { .. } => None,
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
            ChatItem::User { .. }
            | ChatItem::Assistant { .. }
            | ChatItem::Notice { .. }
            | ChatItem::Attachment { .. } => None,
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
    let project = Project::fixture(json!({"toolTimeoutSec": 0.3}));
    let harness = started(&project).await;
    // The server would answer in ten minutes: the turn ends only if the call is given up.
    let stub = Stub::start(
        Wire::Anthropic,
        vec![
            Reply::tool("mcp__fx__sleep", json!({"ms": 600_000})),
            Reply::tool("mcp__fx__echo", json!({"text": "quick"})),
            Reply::text("The sleep timed out, the echo worked."),
        ],
    )
    .await;
    let engine = harness.engine(options(&project, &stub)).unwrap();
    let events = run(&engine, "try").await;
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
async fn tool_search_finds_one_of_ten_thousand_tools() {
    let project = Project::fixture(json!({"env": {"REFSERVER_TOOLS": "10000"}}));
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
    let project = Project::fixture(json!({}));
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
async fn after_a_reload_the_model_is_told_which_tools_disappeared() {
    let project = Project::fixture(json!({}));
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
    let project = Project::fixture(json!({}));
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
    let project = Project::fixture(json!({}));
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
            Event::TurnStart { .. }
            | Event::ModelRequest { .. }
            | Event::Retry { .. }
            | Event::TextDelta { .. }
            | Event::ToolInputPartial { .. }
            | Event::ToolCallStart { .. }
            | Event::ApprovalRequest { .. }
            | Event::ToolCallEnd { .. }
            | Event::Notice { .. }
            | Event::TurnEnd { .. } => None,
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
    let Some(project) = Project::everything() else {
        return;
    };
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
