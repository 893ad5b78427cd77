//! Tasks on a scripted connection: the test plays the server, per method.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde_json::{json, Value};

use super::*;
use crate::handler::{ClientHandler, HandlerFuture, Handles};
use crate::protocol::era::ProtocolEra;
use crate::protocol::requests::{ElicitRequest, ElicitResult};
use crate::protocol::tasks::{Task, TaskStatus};
use crate::transport::memory::{self, MemoryPeer};

/// What the scripted server does with one message: answer it (result or error), send
/// messages (notifications, requests) first, or nothing.
#[derive(Default)]
struct Reply {
    before: Vec<Value>,
    result: Option<Result<Value, Value>>,
}

fn ok(v: Value) -> Reply {
    Reply {
        before: Vec::new(),
        result: Some(Ok(v)),
    }
}

fn err(code: i64, message: &str) -> Reply {
    Reply {
        before: Vec::new(),
        result: Some(Err(json!({"code": code, "message": message}))),
    }
}

type Script = Box<dyn FnMut(&str, &Value) -> Reply + Send>;

/// Runs the server side: every message from the client goes to `script` (requests with
/// their method and params; answers to server requests as method `"answer"` with the
/// message), and what it says is sent back.
fn serve(mut peer: MemoryPeer, mut script: Script) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        while let Some(bytes) = peer.from_client.recv().await {
            let msg: Value = serde_json::from_slice(&bytes).unwrap();
            let method = msg["method"].as_str().unwrap_or("answer").to_string();
            let params = if method == "answer" {
                msg.clone()
            } else {
                msg.get("params").cloned().unwrap_or(Value::Null)
            };
            let reply = script(&method, &params);
            for m in reply.before {
                let _ = peer
                    .to_client
                    .send(Inbound::Message(m.to_string().into_bytes()));
            }
            if let (Some(id), Some(result)) = (msg.get("id"), reply.result) {
                let text = match result {
                    Ok(r) => json!({"jsonrpc": "2.0", "id": id, "result": r}),
                    Err(e) => json!({"jsonrpc": "2.0", "id": id, "error": e}),
                };
                let _ = peer
                    .to_client
                    .send(Inbound::Message(text.to_string().into_bytes()));
            }
        }
    })
}

/// A connection in `era` whose server answers with `script` (the handshake included).
async fn connect(
    modern: bool,
    caps: Value,
    handler: Option<Arc<dyn ClientHandler>>,
    mut script: Script,
) -> Client {
    let (conn, peer) = memory::pair();
    let handshake_caps = caps.clone();
    serve(
        peer,
        Box::new(move |method, params| match method {
            "initialize" if !modern => {
                ok(json!({"protocolVersion": "2025-11-25", "capabilities": handshake_caps}))
            }
            "server/discover" if modern => {
                ok(json!({"supportedVersions": ["2026-07-28"], "capabilities": handshake_caps}))
            }
            "notifications/initialized" => Reply::default(),
            _ => script(method, params),
        }),
    );
    let opts = ConnectOptions {
        handler,
        era: if modern {
            ProtocolEra::Modern
        } else {
            ProtocolEra::Legacy
        },
        ..ConnectOptions::default()
    };
    Client::connect_opts(conn, "mem", Arc::default(), opts)
        .await
        .unwrap()
}

fn task(id: &str, status: &str) -> Value {
    json!({"taskId": id, "status": status, "createdAt": "2026-01-01T00:00:00Z", "ttl": 60000, "pollInterval": 500})
}

fn text_result(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}]})
}

fn started(t: Value) -> Follow {
    Follow {
        task: Task::from_wire(&t).unwrap(),
        created: SystemTime::now(),
    }
}

const LEGACY_CAPS: &str =
    r#"{"tools": {}, "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}}"#;

/// Accepts every form with `{"pick": "b"}` and counts the asks; remembers the task they
/// were asked for.
#[derive(Default)]
struct Picker {
    asked: AtomicUsize,
    task: parking_lot::Mutex<Option<String>>,
}

impl ClientHandler for Picker {
    fn handles(&self) -> Handles {
        Handles {
            elicitation_form: true,
            ..Handles::default()
        }
    }
    fn elicit(&self, _request: ElicitRequest) -> HandlerFuture<ElicitResult> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        let mut content = serde_json::Map::new();
        content.insert("pick".into(), json!("b"));
        Box::pin(async move {
            Ok(ElicitResult::accept_form(
                &json!({"type": "object", "properties": {"pick": {"type": "string"}}}),
                content,
            ))
        })
    }
    fn elicit_for_task(
        &self,
        request: ElicitRequest,
        task_id: &str,
    ) -> HandlerFuture<ElicitResult> {
        *self.task.lock() = Some(task_id.to_string());
        self.elicit(request)
    }
}

#[tokio::test(start_paused = true)]
async fn a_legacy_task_is_polled_asks_through_tasks_result_and_ends_with_its_result() {
    let picker = Arc::new(Picker::default());
    let polls = Arc::new(AtomicUsize::new(0));
    let p = polls.clone();
    let answered = Arc::new(parking_lot::Mutex::new(None::<Value>));
    let a = answered.clone();
    let client = connect(
        false,
        serde_json::from_str(LEGACY_CAPS).unwrap(),
        Some(picker.clone()),
        Box::new(move |method, params| match method {
            "tools/call" => {
                assert_eq!(params["task"], json!({"ttl": 60000}));
                ok(json!({"task": task("t1", "working"), "_meta": {"io.modelcontextprotocol/model-immediate-response": "on it"}}))
            }
            "tasks/get" => {
                assert_eq!(params["taskId"], "t1");
                let n = p.fetch_add(1, Ordering::SeqCst);
                let mut t = task("t1", if n == 0 { "working" } else { "input_required" });
                t["statusMessage"] = json!(format!("poll {n}"));
                ok(t)
            }
            // The elicitation arrives on the `tasks/result` stream, tagged with the task.
            "tasks/result" => Reply {
                before: vec![json!({"jsonrpc": "2.0", "id": "e1", "method": "elicitation/create", "params": {
                    "message": "which?", "requestedSchema": {"type": "object", "properties": {"pick": {"type": "string"}}},
                    "_meta": {"io.modelcontextprotocol/related-task": {"taskId": "t1"}}}})],
                result: None,
            },
            "answer" => {
                *a.lock() = Some(params.clone());
                // The answer to the task's question ends the task; `tasks/result` is the
                // request with id 4 (initialize 1, tools/call 2, tasks/get 3, ...).
                Reply::default()
            }
            other => panic!("unexpected {other}"),
        }),
    )
    .await;
    assert!(client.server_tasks().tool_calls);
    let outcome = client
        .call_tool_as_task(
            "research",
            Some(json!({"topic": "x"})),
            RequestOptions::default(),
            Some(TaskCall {
                ttl_ms: Some(60000),
            }),
        )
        .await
        .unwrap();
    let CallOutcome::Task(created) = outcome else {
        panic!("{outcome:?}")
    };
    assert_eq!(created.immediate_response.as_deref(), Some("on it"));
    let mut seen = Vec::new();
    let mut note = |t: &Task| seen.push((t.status, t.status_message.clone()));
    let follow = client.follow_task(
        Follow {
            task: created.task,
            created: SystemTime::now(),
        },
        &mut note,
    );
    // The task's result never comes here: the follower waits (polling) until the test
    // has seen the elicitation answered, then the TTL ends it.
    let err = follow.await.unwrap_err();
    assert!(matches!(err, TaskError::Expired { .. }), "{err}");
    assert_eq!(picker.asked.load(Ordering::SeqCst), 1);
    assert_eq!(picker.task.lock().as_deref(), Some("t1"));
    let answer = answered
        .lock()
        .clone()
        .expect("the elicitation was answered");
    assert_eq!(answer["id"], "e1");
    assert_eq!(answer["result"]["action"], "accept");
    assert_eq!(
        answer["result"]["_meta"]["io.modelcontextprotocol/related-task"],
        json!({"taskId": "t1"})
    );
    assert_eq!(seen[0], (TaskStatus::Working, Some("poll 0".into())));
    assert_eq!(seen[1], (TaskStatus::InputRequired, Some("poll 1".into())));
}

#[tokio::test(start_paused = true)]
async fn a_legacy_result_arrives_through_tasks_result() {
    let client = connect(
        false,
        serde_json::from_str(LEGACY_CAPS).unwrap(),
        None,
        Box::new(move |method, _| match method {
            "tasks/get" => ok(task("t2", "completed")),
            "tasks/result" => ok(
                json!({"content": [{"type": "text", "text": "done"}], "isError": true,
                "_meta": {"io.modelcontextprotocol/related-task": {"taskId": "t2"}}}),
            ),
            other => panic!("unexpected {other}"),
        }),
    )
    .await;
    let r = client
        .follow_task(started(task("t2", "working")), &mut |_| {})
        .await
        .unwrap();
    assert_eq!(r.to_text(), "done");
    assert!(r.is_error, "an isError result is the task's result");
    assert_eq!(r.meta, None);
}

#[tokio::test(start_paused = true)]
async fn a_modern_task_result_is_inline_and_input_requests_are_answered_once_per_key() {
    let picker = Arc::new(Picker::default());
    let polls = Arc::new(AtomicUsize::new(0));
    let updates = Arc::new(parking_lot::Mutex::new(Vec::<Value>::new()));
    let (p, u) = (polls.clone(), updates.clone());
    let client = connect(
        true,
        json!({"tools": {}}),
        Some(picker.clone()),
        Box::new(move |method, params| match method {
            "subscriptions/listen" => err(-32601, "no"),
            "tools/call" => ok(json!({"resultType": "task", "taskId": "m1", "status": "working", "ttlMs": null, "pollIntervalMs": 0})),
            "tasks/get" => {
                let n = p.fetch_add(1, Ordering::SeqCst);
                let answered = !u.lock().is_empty();
                if n < 3 && !answered || n < 2 {
                    ok(json!({"resultType": "complete", "taskId": "m1", "status": "input_required", "ttlMs": null,
                        "inputRequests": {"k1": {"method": "elicitation/create", "params": {
                            "message": "which?", "requestedSchema": {"type": "object", "properties": {"pick": {"type": "string"}}}}}}}))
                } else if !answered {
                    ok(json!({"resultType": "complete", "taskId": "m1", "status": "input_required", "ttlMs": null}))
                } else {
                    ok(json!({"resultType": "complete", "taskId": "m1", "status": "completed", "ttlMs": null,
                        "result": {"content": [{"type": "text", "text": "picked b"}], "resultType": "complete"}}))
                }
            }
            "tasks/update" => {
                assert_eq!(params["taskId"], "m1");
                u.lock().push(params["inputResponses"].clone());
                ok(json!({}))
            }
            other => panic!("unexpected {other}"),
        }),
    )
    .await;
    let outcome = client
        .call_tool_as_task("slow", None, RequestOptions::default(), None)
        .await
        .unwrap();
    let CallOutcome::Task(created) = outcome else {
        panic!("{outcome:?}")
    };
    let start = tokio::time::Instant::now();
    let r = client
        .follow_task(
            Follow {
                task: created.task,
                created: SystemTime::now(),
            },
            &mut |_| {},
        )
        .await
        .unwrap();
    assert_eq!(r.to_text(), "picked b");
    assert_eq!(picker.asked.load(Ordering::SeqCst), 1, "one ask per key");
    assert_eq!(picker.task.lock().as_deref(), Some("m1"));
    assert_eq!(updates.lock().len(), 1);
    assert_eq!(updates.lock()[0]["k1"]["action"], "accept");
    // A poll interval of 0 is clamped to the floor.
    let polls = polls.load(Ordering::SeqCst) as u32;
    assert!(
        start.elapsed() >= crate::protocol::tasks::MIN_POLL_INTERVAL * (polls - 1),
        "{polls} polls in {:?}",
        start.elapsed()
    );
}

#[tokio::test(start_paused = true)]
async fn a_plain_modern_call_that_becomes_a_task_is_followed_to_its_result() {
    let client = connect(
        true,
        json!({"tools": {}}),
        None,
        Box::new(move |method, _| match method {
            "subscriptions/listen" => err(-32601, "no"),
            "tools/call" => ok(json!({"resultType": "task", "taskId": "m2", "status": "working", "ttlMs": 5000})),
            "tasks/get" => ok(json!({"resultType": "complete", "taskId": "m2", "status": "completed", "ttlMs": 5000,
                "result": text_result("late")})),
            other => panic!("unexpected {other}"),
        }),
    )
    .await;
    let r = client
        .call_tool("slow", None, RequestOptions::default())
        .await
        .unwrap();
    assert_eq!(r.to_text(), "late");
}

#[tokio::test(start_paused = true)]
async fn bad_servers_end_following_with_a_clear_error() {
    // A status that goes backwards: a notice says completed, the poll says working.
    let client = connect(
        true,
        json!({"tools": {}}),
        None,
        Box::new(move |method, _| match method {
            "subscriptions/listen" => err(-32601, "no"),
            "tasks/get" => ok(json!({"resultType": "complete", "taskId": "b1", "status": "working", "ttlMs": null})),
            "tasks/cancel" => ok(json!({})),
            other => panic!("unexpected {other}"),
        }),
    )
    .await;
    let mut quiet = |_: &Task| {};
    let follow = client.follow_task(
        started(json!({"taskId": "b1", "status": "working"})),
        &mut quiet,
    );
    tokio::pin!(follow);
    // Let the follower register, then notify completion without a result.
    assert!(
        tokio::time::timeout(Duration::from_millis(100), &mut follow)
            .await
            .is_err()
    );
    client
        .inner
        .task_notes
        .notice(json!({"taskId": "b1", "status": "completed"}));
    let e = follow.await.unwrap_err();
    assert_eq!(
        e.to_string(),
        "the server said task b1 was completed and then working; a finished task never changes, so harness9 stopped following it"
    );
    assert_eq!(e.code(), "task-status-backwards");

    // An unknown task.
    let client = connect(
        false,
        serde_json::from_str(LEGACY_CAPS).unwrap(),
        None,
        Box::new(move |method, _| match method {
            "tasks/get" => err(-32602, "Task not found: zz"),
            other => panic!("unexpected {other}"),
        }),
    )
    .await;
    let e = client
        .follow_task(started(task("zz", "working")), &mut |_| {})
        .await
        .unwrap_err();
    assert_eq!(e.code(), "unknown-task");
    assert!(
        e.to_string()
            .starts_with("the server does not know task zz (Task not found: zz)"),
        "{e}"
    );

    // A task that never ends, polled at a day's interval (clamped), ends at its TTL.
    let client = connect(
        false,
        serde_json::from_str(LEGACY_CAPS).unwrap(),
        None,
        Box::new(move |method, _| match method {
            "tasks/get" => ok(json!({"taskId": "slow", "status": "working", "ttl": 3000, "pollInterval": 86_400_000u64})),
            other => panic!("unexpected {other}"),
        }),
    )
    .await;
    let start = tokio::time::Instant::now();
    let e = client
        .follow_task(started(json!({"taskId": "slow", "status": "working", "ttl": 3000, "pollInterval": 86_400_000u64})), &mut |_| {})
        .await
        .unwrap_err();
    assert_eq!(e.code(), "task-expired");
    assert_eq!(
        e.to_string(),
        "task slow outlived its time to live (3 s) without finishing; harness9 stopped waiting for it"
    );
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
}

#[tokio::test(start_paused = true)]
async fn a_flood_of_notices_is_coalesced_and_other_tasks_notices_are_dropped() {
    let polls = Arc::new(AtomicUsize::new(0));
    let p = polls.clone();
    let client = connect(
        false,
        serde_json::from_str(LEGACY_CAPS).unwrap(),
        None,
        Box::new(move |method, _| match method {
            "tasks/get" => {
                p.fetch_add(1, Ordering::SeqCst);
                ok(task("f1", "working"))
            }
            "tasks/result" => Reply::default(),
            other => panic!("unexpected {other}"),
        }),
    )
    .await;
    let statuses = AtomicUsize::new(0);
    let mut count = |_: &Task| {
        statuses.fetch_add(1, Ordering::SeqCst);
    };
    let follow = client.follow_task(started(task("f1", "working")), &mut count);
    tokio::pin!(follow);
    assert!(tokio::time::timeout(Duration::from_millis(10), &mut follow)
        .await
        .is_err());
    for i in 0..100_000 {
        client.inner.task_notes.notice(
            json!({"taskId": "f1", "status": "working", "statusMessage": format!("step {i}")}),
        );
        client
            .inner
            .task_notes
            .notice(json!({"taskId": format!("other-{i}"), "status": "working"}));
    }
    assert_eq!(client.inner.task_notes.ids(), vec!["f1".to_string()]);
    let e = tokio::time::timeout(Duration::from_secs(120), &mut follow)
        .await
        .unwrap()
        .unwrap_err();
    assert_eq!(e.code(), "task-expired");
    let statuses = statuses.load(Ordering::SeqCst);
    assert!(statuses <= 10, "{statuses} status reports");
    assert!(
        client.inner.task_notes.ids().is_empty(),
        "the slot goes with the follower"
    );
}

#[tokio::test(start_paused = true)]
async fn one_poller_polls_many_tasks_at_their_pace_and_leaves_the_connection_open() {
    // 50 tasks: each is working for its first three polls (the status message changes once,
    // at the second), then completed.
    let polls: Arc<parking_lot::Mutex<std::collections::HashMap<String, usize>>> = Arc::default();
    let p = polls.clone();
    let client = connect(
        false,
        serde_json::from_str(LEGACY_CAPS).unwrap(),
        None,
        Box::new(move |method, params| match method {
            "tasks/get" => {
                let id = params["taskId"].as_str().unwrap().to_string();
                let mut polls = p.lock();
                let n = polls.entry(id.clone()).or_default();
                *n += 1;
                let mut t = task(&id, if *n > 3 { "completed" } else { "working" });
                if *n >= 2 {
                    t["statusMessage"] = json!("half way");
                }
                ok(t)
            }
            "tasks/result" => ok(text_result("done")),
            "ping" => ok(json!({})),
            other => panic!("unexpected {other}"),
        }),
    )
    .await;
    let start = tokio::time::Instant::now();
    let heard = Arc::new(AtomicUsize::new(0));
    let follows = (0..50).map(|i| {
        let heard = heard.clone();
        let client = &client;
        async move {
            let mut count = |_: &Task| {
                heard.fetch_add(1, Ordering::SeqCst);
            };
            client
                .follow_task(started(task(&format!("m{i}"), "working")), &mut count)
                .await
        }
    });
    for r in futures::future::join_all(follows).await {
        assert_eq!(r.unwrap().to_text(), "done");
    }
    // Four polls each, at the server's 500 ms (on the 100 ms grid): about 2 s in all.
    let took = start.elapsed();
    assert!(
        took >= Duration::from_millis(2000) && took < Duration::from_millis(2500),
        "{took:?}"
    );
    assert!(polls.lock().values().all(|&n| n == 4), "{:?}", polls.lock());
    // Each follower heard the two changes (the message, then completed), nothing more.
    assert_eq!(heard.load(Ordering::SeqCst), 100);
    // The poller has gone and the connection is open.
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(
        client.inner.polls.idle(),
        "the poller ends with the last follower"
    );
    assert_eq!(client.closed_reason(), None);
    let again = client
        .get_task("m0", Some(Duration::from_secs(5)))
        .await
        .unwrap();
    assert_eq!(again.task.status, TaskStatus::Completed);
}
