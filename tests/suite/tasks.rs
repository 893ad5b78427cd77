//! MCP tasks of the 2026-07-28 extension, against `mcp-tasks-fixture` (written from the
//! extension's text): a model's call that ends within the wait, one that goes on as a task
//! and whose late result reaches the conversation (also after harness9 restarts, for an
//! HTTP server that keeps the task), a task that asks the user, the bad servers (a task
//! that never ends, a status that goes backwards, answers about another task, a poll
//! interval of a day, a flood of notifications), and the CLI.

use std::sync::Arc;
use std::time::Duration;

use harness9::engine::{ConversationChoice, EngineOptions, Event};
use harness9::host::asks::{AskAnswer, AskKind};
use harness9::host::tasks::{TaskEvent, TaskState};
use harness9::mcp::era::Era;
use harness9::mcp::requests::{ElicitAction, ElicitResult};
use harness9::tools::CallContext;
use harness9::Harness;
use serde_json::{json, Value};

use super::support::bins::tasks_fixture_bin;
use super::support::provider_stub::{Reply, Stub, Wire};
use super::support::server::{free_port, LoopbackServer};
use super::support::turns::{call_ends, completed, options, run};
use super::support::wait::{holds_for, next_ask, poll_for_async, wait_for_tool, DEADLINE};
use super::support::{stderr, stdout, Project};

/// A project whose servers are the tasks fixture over stdio, one per set of flags.
fn stdio_project(servers: &[(&str, &[&str])]) -> Project {
    let mut map = serde_json::Map::new();
    for (name, flags) in servers {
        map.insert(
            name.to_string(),
            json!({"command": tasks_fixture_bin(), "args": flags}),
        );
    }
    Project::new(&json!({ "mcpServers": map }))
}

/// The tasks fixture over HTTP on a loopback port.
fn http_fixture(flags: &[&str]) -> LoopbackServer {
    let port = free_port();
    let mut cmd = std::process::Command::new(tasks_fixture_bin());
    cmd.args(["--http", "--port", &port.to_string()])
        .args(flags);
    LoopbackServer::start(cmd, port)
}

fn task_call(h: &Harness) -> CallContext {
    CallContext {
        task: Some(h.task_context(Duration::MAX, None)),
        ..CallContext::default()
    }
}

/// Engine options that wait `wait` for a task.
fn engine_options(project: &Project, stub: &Stub, wait: Duration) -> EngineOptions {
    EngineOptions {
        task_wait: Some(wait),
        optional_as_task: Some(true),
        conversation: ConversationChoice::New,
        ..options(project, stub)
    }
}

#[tokio::test]
async fn a_models_task_ends_in_its_turn_or_comes_back_later_as_a_late_result() {
    let project = stdio_project(&[("tf", &[])]);
    let h = project.started().await;
    wait_for_tool(h.registry(), "tf", "slow").await;
    let stub = Stub::start(
        Wire::Anthropic,
        vec![
            Reply::tools(&[
                ("mcp__tf__slow", json!({"ms": 200, "text": "quick one"})),
                ("mcp__tf__slow", json!({"ms": 2500, "text": "the late one"})),
            ]),
            Reply::text("one is still running"),
            Reply::text("thanks"),
        ],
    )
    .await;
    let engine = h
        .engine(engine_options(&project, &stub, Duration::from_millis(800)))
        .unwrap();
    let events = run(&engine, "run both").await;
    assert_eq!(completed(&events), "one is still running");
    let ends = call_ends(&events);
    assert_eq!(ends[0].3, "quick one");
    let still = &ends[1].3;
    assert!(
        still.starts_with("This call is still running on the MCP server \"tf\" as task task-"),
        "{still}"
    );
    // The task is in the table with the call that started it; the turn did not wait.
    let record = h
        .tasks()
        .into_iter()
        .find(|t| !t.state.is_ended())
        .expect("the slow task runs on");
    let call_id = events
        .iter()
        .find_map(|e| match e {
            Event::ToolCallStart {
                call_id, arguments, ..
            } if arguments["ms"] == 2500 => Some(call_id.clone()),
            _ => None,
        })
        .unwrap();
    let origin = record.origin.clone().unwrap();
    assert_eq!(
        (
            origin.call_id.as_str(),
            origin.conversation_id.as_str(),
            record.era
        ),
        (call_id.as_str(), engine.conversation_id(), Era::Modern)
    );
    // Its late result reaches the conversation when it ends; no turn starts by itself.
    let end = tokio::time::timeout(DEADLINE, h.wait_task("tf", &record.task_id))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(end.state, TaskState::Completed);
    assert_eq!(stub.requests().len(), 2);
    let reopened = poll_for_async("the late result in the conversation", DEADLINE, || {
        let opened = h
            .engine(EngineOptions {
                conversation: ConversationChoice::Resume(engine.conversation_id().into()),
                ..engine_options(&project, &stub, Duration::from_millis(800))
            })
            .unwrap();
        let ok = !opened.late_results().is_empty();
        async move { ok.then_some(opened).ok_or_else(String::new) }
    })
    .await;
    let late = reopened.late_results();
    assert_eq!(late.len(), 1);
    assert_eq!(
        (late[0].call_id.as_str(), late[0].state.as_str()),
        (call_id.as_str(), "completed")
    );
    // The quick one gave its call the result in its turn: it is no late result too.
    let file = conversation_file(project.data.path(), engine.conversation_id())
        .expect("the conversation's file");
    let text = std::fs::read_to_string(&file).unwrap();
    let lates: Vec<&str> = text.lines().filter(|l| l.contains("\"late\":{")).collect();
    assert_eq!(lates.len(), 1, "{lates:?}");
    assert!(lates[0].contains(&call_id), "{}", lates[0]);
    // The next message takes it to the model, after the user's text.
    let events = run(&reopened, "what came back?").await;
    assert_eq!(completed(&events), "thanks");
    let sent = stub.requests()[2].body["messages"].to_string();
    assert!(sent.contains("what came back?"), "{sent}");
    assert!(
        sent.contains("has ended (completed); its late result follows"),
        "{sent}"
    );
    assert!(sent.contains("the late one"), "{sent}");
    assert!(reopened.late_results().is_empty(), "taken by the message");
    h.shutdown().await;
}

/// The file of conversation `id` under the data folder `dir`.
fn conversation_file(dir: &std::path::Path, id: &str) -> Option<std::path::PathBuf> {
    let name = format!("{id}.jsonl");
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if let Some(found) = conversation_file(&path, id) {
                return Some(found);
            }
        } else if path.file_name().is_some_and(|n| n == name.as_str()) {
            return Some(path);
        }
    }
    None
}

#[tokio::test]
async fn a_task_that_asks_is_answered_through_the_same_consent_once() {
    let project = stdio_project(&[("tf", &[])]);
    let h = Arc::new(project.started().await);
    wait_for_tool(h.registry(), "tf", "ask").await;
    let mut asks = h.subscribe_asks();
    let caller = {
        let h = h.clone();
        tokio::spawn(async move {
            h.call_tool(
                "tf",
                "ask",
                json!({"question": "Which colour?"}),
                task_call(&h),
            )
            .await
        })
    };
    let ask = next_ask(&mut asks, |_| true).await;
    let task_id = ask.task.clone().expect("the ask names its task");
    assert!(task_id.starts_with("task-"), "{task_id}");
    let AskKind::Elicitation { request } = &ask.kind else {
        panic!("{ask:?}")
    };
    assert_eq!(request.message(), "Which colour?");
    // The request comes back on every poll (each second) until it is answered: it is
    // asked once.
    holds_for("one ask", Duration::from_millis(2200), || {
        h.pending_asks().len() == 1
    })
    .await;
    let mut content = serde_json::Map::new();
    content.insert("answer".into(), json!("teal"));
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
    assert_eq!(r.to_text(), "answered: teal");
    assert!(h.pending_asks().is_empty());
    h.shutdown().await;
}

#[tokio::test]
async fn bad_task_servers_end_with_a_clear_error_never_a_hang() {
    let project = stdio_project(&[
        ("never", &["--never-end", "--ttl-ms", "1000"]),
        ("back", &["--backwards"]),
        ("wrong", &["--wrong-id", "--poll-ms", "0", "--no-listen"]),
        ("day", &["--poll-ms", "86400000"]),
        ("flood", &["--flood", "5000"]),
    ]);
    let h = project.started().await;
    for s in ["never", "back", "wrong", "day", "flood"] {
        wait_for_tool(h.registry(), s, "slow").await;
    }
    let call = |server: &'static str| {
        let h = &h;
        async move {
            let started = std::time::Instant::now();
            let outcome = h
                .call_tool(
                    server,
                    "slow",
                    json!({"ms": 600, "text": server}),
                    task_call(h),
                )
                .await;
            (
                outcome.map(|r| r.to_text()).map_err(|e| e.to_string()),
                started.elapsed(),
            )
        }
    };
    let all = futures::future::join_all(["never", "back", "wrong", "day", "flood"].map(call));
    let outcomes = tokio::time::timeout(Duration::from_secs(30), all)
        .await
        .expect("every task ends within 30 s");
    let [never, back, wrong, day, flood] = <[_; 5]>::try_from(outcomes).unwrap();
    let never_err = never.0.unwrap_err();
    assert!(
        never_err.ends_with(
            "outlived its time to live (1 s) without finishing; harness9 stopped waiting for it"
        ),
        "{never_err}"
    );
    assert!(never.1 < Duration::from_secs(15), "{:?}", never.1);
    let back_err = back.0.unwrap_err();
    assert!(
        back_err.ends_with("was completed and then working; a finished task never changes, so harness9 stopped following it"),
        "{back_err}"
    );
    let wrong_err = wrong.0.unwrap_err();
    assert!(
        wrong_err.contains("the server described task task-"),
        "{wrong_err}"
    );
    // A day's poll interval is clamped, and the notifications tell the end sooner.
    assert_eq!(day.0.as_deref(), Ok("day"));
    assert!(day.1 < Duration::from_secs(10), "{:?}", day.1);
    assert_eq!(flood.0.as_deref(), Ok("flood"));
    let states: Vec<(String, TaskState)> =
        h.tasks().into_iter().map(|t| (t.server, t.state)).collect();
    for (server, state) in [
        ("never", TaskState::Expired),
        ("back", TaskState::Failed),
        ("wrong", TaskState::Failed),
        ("day", TaskState::Completed),
        ("flood", TaskState::Completed),
    ] {
        assert!(
            states.contains(&(server.to_string(), state)),
            "{server} {state:?} in {states:?}"
        );
    }
    h.shutdown().await;
}

/// The requests the HTTP fixture saw.
async fn journal_async(server: &LoopbackServer) -> Vec<Value> {
    let url = server.url("/journal");
    match reqwest::get(&url).await {
        Ok(r) => r.json::<Vec<Value>>().await.unwrap_or_default(),
        Err(_) => Vec::new(),
    }
}

#[tokio::test]
async fn an_http_task_outlives_a_restart_and_its_late_result_reaches_the_conversation() {
    let server = http_fixture(&["--poll-ms", "0"]);
    let project = Project::new(&json!({"mcpServers": {
        "tf": {"type": "http", "url": server.url("/mcp")}
    }}));
    let stub = Stub::start(
        Wire::Anthropic,
        vec![
            Reply::tool("mcp__tf__slow", json!({"ms": 2500, "text": "it finished"})),
            Reply::text("it runs on"),
            Reply::text("got it"),
        ],
    )
    .await;
    let conversation = {
        let h = project.started().await;
        wait_for_tool(h.registry(), "tf", "slow").await;
        let engine = h
            .engine(engine_options(&project, &stub, Duration::from_millis(300)))
            .unwrap();
        let events = run(&engine, "start it").await;
        assert_eq!(completed(&events), "it runs on");
        assert!(call_ends(&events)[0]
            .3
            .starts_with("This call is still running"));
        let running = h.tasks();
        assert_eq!(running.len(), 1);
        assert!(
            !running[0].local && !running[0].state.is_ended(),
            "{running:?}"
        );
        // harness9 quits: the task stays on the server.
        h.shutdown().await;
        engine.conversation_id().to_string()
    };
    let h = project.started().await;
    h.resume_tasks().await;
    let task = h.tasks().into_iter().next().expect("the stored task");
    assert_eq!(task.state, TaskState::Working);
    let end = tokio::time::timeout(DEADLINE, h.wait_task("tf", &task.task_id))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(end.state, TaskState::Completed);
    let engine = poll_for_async("the late result in the conversation", DEADLINE, || {
        let opened = h
            .engine(EngineOptions {
                conversation: ConversationChoice::Resume(conversation.clone()),
                ..engine_options(&project, &stub, Duration::from_millis(300))
            })
            .unwrap();
        let ok = !opened.late_results().is_empty();
        async move { ok.then_some(opened).ok_or_else(String::new) }
    })
    .await;
    let events = run(&engine, "and now?").await;
    assert_eq!(completed(&events), "got it");
    let sent = stub.requests()[2].body["messages"].to_string();
    assert!(sent.contains("it finished"), "{sent}");
    // Delivered once: the stored record says so.
    let stored = std::fs::read_to_string(project.data.path().join("tasks.json")).unwrap();
    assert!(
        stored.contains("\"delivered\": true") || stored.contains("\"delivered\":true"),
        "{stored}"
    );
    // Polls of the extension name their task in Mcp-Name (and Mcp-Method).
    let seen = journal_async(&server).await;
    let polls: Vec<&Value> = seen.iter().filter(|r| r["method"] == "tasks/get").collect();
    assert!(!polls.is_empty(), "{seen:?}");
    for p in &polls {
        assert_eq!(p["mcpName"], p["taskId"], "{p}");
        assert_eq!(p["mcpMethod"], "tasks/get");
    }
    // A poll interval of 0 is clamped: about two polls a second at most.
    assert!(polls.len() <= 14, "{} polls", polls.len());
    h.shutdown().await;
}

#[test]
fn the_cli_calls_detaches_lists_gets_collects_and_cancels_tasks() {
    let server = http_fixture(&[]);
    let project = Project::new(&json!({"mcpServers": {
        "tf": {"type": "http", "url": server.url("/mcp")},
        "local": {"command": tasks_fixture_bin()}
    }}));
    let out = project.cli(&[
        "mcp",
        "call",
        "tf",
        "slow",
        r#"{"ms": 1200, "text": "from the cli"}"#,
        "--yes",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "from the cli\n");
    let err = stderr(&out);
    assert!(
        err.contains("started on \"tf\" (working — step 1 of 4)"),
        "{err}"
    );

    let out = project.cli(&[
        "mcp",
        "call",
        "tf",
        "slow",
        r#"{"ms": 1500, "text": "detached"}"#,
        "--yes",
        "--detach",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let id = stdout(&out).trim().to_string();
    assert!(id.starts_with("task-"), "{id}");

    let out = project.cli(&["mcp", "task", "get", "tf", &id, "--yes", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let task: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(task["taskId"], id.as_str());

    let out = project.cli(&["mcp", "task", "result", "tf", &id, "--yes"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "detached\n");

    let out = project.cli(&["mcp", "task", "list", "tf", "--yes", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let listing: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(listing["source"], "harness9");
    let ids: Vec<&str> = listing["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["taskId"].as_str())
        .collect();
    assert!(ids.contains(&id.as_str()), "{listing}");

    let out = project.cli(&[
        "mcp",
        "call",
        "tf",
        "slow",
        r#"{"ms": 60000}"#,
        "--yes",
        "--detach",
    ]);
    let long = stdout(&out).trim().to_string();
    let out = project.cli(&["mcp", "task", "cancel", "tf", &long, "--yes"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        format!("cancel of task {long} requested; the server stops it when it can\n")
    );
    let out = project.cli(&["mcp", "task", "result", "tf", &long, "--yes", "--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let failure: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(failure["error"]["code"], "task-cancelled");

    let out = project.cli(&["mcp", "task", "get", "tf", "no-such-task", "--yes"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out)
            .contains("the server does not know task no-such-task (Unknown task: no-such-task)"),
        "{}",
        stderr(&out)
    );

    // A stdio server's tasks end with the process: no --detach.
    let out = project.cli(&["mcp", "call", "local", "slow", "{}", "--yes", "--detach"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "harness9: --detach needs a server whose tasks outlive this command; \"local\" runs over stdio, so its tasks end with the process harness9 starts for it. Call it without --detach\n"
    );
}

#[tokio::test]
async fn a_tool_that_fails_as_a_task_reports_its_error() {
    let project = stdio_project(&[("tf", &[])]);
    let h = project.started().await;
    wait_for_tool(h.registry(), "tf", "fail").await;
    let mut events = h.subscribe_tasks();
    let e = h
        .call_tool("tf", "fail", json!({}), task_call(&h))
        .await
        .unwrap_err();
    assert!(
        e.to_string()
            .ends_with("failed: error -32603: the task failed on purpose"),
        "{e}"
    );
    assert_eq!(e.code(), "task-failed");
    let r = h
        .call_tool("tf", "tool_error", json!({}), task_call(&h))
        .await
        .unwrap();
    assert!(r.is_error && r.to_text() == "the tool failed", "{r:?}");
    // Started and ended events for both, and statuses between.
    let mut ended = Vec::new();
    while let Ok(Ok(e)) = tokio::time::timeout(Duration::from_millis(200), events.recv()).await {
        if let TaskEvent::Ended { task, .. } = e {
            ended.push(task.state);
        }
    }
    assert_eq!(ended, [TaskState::Failed, TaskState::Failed]);
    // Quitting marks nothing lost: both ended.
    h.shutdown().await;
    assert!(h.tasks().iter().all(|t| t.state == TaskState::Failed));
}

#[tokio::test]
async fn a_stdio_servers_running_task_is_lost_when_harness9_quits() {
    let project = stdio_project(&[("tf", &[])]);
    let h = project.started().await;
    wait_for_tool(h.registry(), "tf", "slow").await;
    let ctx = CallContext {
        task: Some(h.task_context(Duration::ZERO, None)),
        ..CallContext::default()
    };
    h.call_tool("tf", "slow", json!({"ms": 60000}), ctx)
        .await
        .unwrap();
    let task = h.tasks().remove(0);
    assert!(task.local);
    h.shutdown().await;
    let after = h.task("tf", &task.task_id).unwrap();
    assert_eq!(after.state, TaskState::Lost);
    assert!(
        after
            .error
            .as_deref()
            .unwrap_or("")
            .contains("its tasks ended with its process"),
        "{after:?}"
    );
    // The next start knows it is lost, from the store.
    let again = project.harness();
    again.load_tasks().await;
    assert_eq!(
        again.task("tf", &task.task_id).unwrap().state,
        TaskState::Lost
    );
}

/// How many requests the HTTP fixture found waiting behind another (pipelined).
async fn pipelined(server: &LoopbackServer) -> u64 {
    let stats: Value = reqwest::get(server.url("/stats"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    stats["http/pipelined"].as_u64().unwrap_or(0)
}

#[tokio::test]
async fn polls_due_together_go_on_one_connection_and_every_task_gets_its_own_result() {
    // A server that keeps its connections; one that closes each after three answers (the
    // polls left unanswered are sent again); one that answers polls with event streams
    // (their connections are not pipelined again).
    let cases: [(&[&str], bool); 3] = [
        (&[], true),
        (&["--close-after", "3"], false),
        (&["--sse-polls"], false),
    ];
    for (flags, always_pipelined) in cases {
        let server = http_fixture(&[&["--poll-ms", "500"], flags].concat());
        let project = Project::new(&json!({"mcpServers": {
            "tf": {"type": "http", "url": server.url("/mcp")}
        }}));
        let h = project.started().await;
        wait_for_tool(h.registry(), "tf", "slow").await;
        let calls = (0..20).map(|i| {
            let args = json!({"ms": 1500, "text": format!("done {i}")});
            h.call_tool("tf", "slow", args, task_call(&h))
        });
        let results = futures::future::join_all(calls).await;
        let texts: Vec<String> = results
            .into_iter()
            .map(|r| r.map(|r| r.to_text()).unwrap_or_else(|e| e.to_string()))
            .collect();
        let expected: Vec<String> = (0..20).map(|i| format!("done {i}")).collect();
        assert_eq!(texts, expected, "{flags:?}");
        if always_pipelined {
            // Twenty polls due together, at most eight under way: several went together.
            assert!(pipelined(&server).await > 0, "{flags:?}");
        }
        h.shutdown().await;
    }
}
