//! MCP Apps views through the façade, against our fixture (`mcp-apps-fixture`): the
//! extension announced in both eras, views opened with a policy built from their
//! declarations, a view's requests checked (order, own server, visibility, permission
//! rules and asks, links, messages, sizes), teardown when the server goes (a restart
//! told as one), views kept with a conversation and listed when it is reopened, a call's
//! view known when the call starts with its input streamed before, and what a view gives
//! the model reaching a prompt's turn.

use std::sync::{Arc, Mutex};

use harness9::engine::history::{history_with_views, ChatItem};
use harness9::engine::permissions::PermissionStore;
use harness9::engine::{ConversationChoice, Event, ToolPermission, ToolView};
use harness9::host::apps::{TeardownReason, ViewCall, ViewEvent, ViewReply};
use harness9::host::asks::{AskAnswer, AskDetail, AskReply, SamplingChoice, ViewAsk};
use harness9::Harness;
use serde_json::{json, Value};

use super::support::bins::apps_fixture_bin;
use super::support::provider_stub::{Reply, Stub, Wire};
use super::support::turns::{completed, options, run};
use super::support::wait::{next_ask, DEADLINE};
use super::support::{fixture_bin, Project};

/// A project with the apps fixture as `ax` (and more servers).
fn project(more: Value) -> Project {
    let mut servers = json!({"ax": {"command": apps_fixture_bin()}});
    if let Value::Object(m) = more {
        for (k, v) in m {
            servers[k] = v;
        }
    }
    Project::new(&json!({"mcpServers": servers}))
}

/// The façade on `p` with its own permission store, Apps announced, servers started.
async fn started(p: &Project) -> Harness {
    let h = p
        .harness()
        .with_permission_store(PermissionStore::in_dir(p.data.path()));
    h.enable_apps();
    h.start(None).await;
    h.manager()
        .wait_settled(std::time::Duration::from_secs(30))
        .await;
    h
}

fn call(id: &str) -> ViewCall {
    ViewCall {
        conversation_id: None,
        call_id: id.into(),
        arguments: json!({"title": "T"}),
        result: None,
    }
}

/// Sends a view message; the reply, or the error's code and text.
async fn send(
    h: &Harness,
    view: &str,
    method: &str,
    params: Value,
) -> Result<ViewReply, (String, String)> {
    h.view_message(view, method, Some(params))
        .await
        .map_err(|e| (e.code().to_string(), e.to_string()))
}

fn result(reply: Result<ViewReply, (String, String)>) -> Value {
    match reply {
        Ok(ViewReply::Answer { result }) => result,
        other => panic!("not an answer: {other:?}"),
    }
}

/// Opens `tool`'s view and takes it through the handshake.
async fn live_view(h: &Harness, tool: &str) -> String {
    let opened = h.open_view("ax", tool, call("call-1")).await.unwrap();
    let init = json!({"protocolVersion": "2026-01-26", "appInfo": {"name": "v", "version": "1"},
                      "appCapabilities": {"availableDisplayModes": ["inline", "fullscreen"]}});
    result(send(h, &opened.view_id, "ui/initialize", init).await);
    assert_eq!(
        send(
            h,
            &opened.view_id,
            "ui/notifications/initialized",
            json!({})
        )
        .await,
        Ok(ViewReply::Noted)
    );
    opened.view_id
}

/// The client capabilities `server` saw (its `client_capabilities` tool).
async fn caps(h: &Harness, server: &str) -> Value {
    h.call_tool(server, "client_capabilities", json!({}), Default::default())
        .await
        .unwrap()
        .structured_content
        .unwrap_or(Value::Null)
}

/// An opener that records what it was asked to open.
#[derive(Default)]
struct Recorder(Mutex<Vec<String>>);

impl harness9::mcp::auth::Opener for Recorder {
    fn open(
        &self,
        url: &str,
    ) -> futures::future::BoxFuture<'static, Result<(), harness9::mcp::auth::BrowserError>> {
        self.0.lock().unwrap().push(url.to_string());
        Box::pin(async { Ok(()) })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_apps_extension_is_announced_in_both_eras_when_views_are_rendered() {
    let p = Project::new(&json!({"mcpServers": {
        "legacy": {"command": apps_fixture_bin()},
        "modern": {"command": apps_fixture_bin(), "args": ["--modern"]},
    }}));
    let h = started(&p).await;
    let ext = json!({"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}});
    assert_eq!(caps(&h, "legacy").await["extensions"], ext);
    // The modern era's requests also declare the tasks extension.
    let tasks = json!({"io.modelcontextprotocol/tasks": {}});
    let mut modern = ext.clone();
    modern["io.modelcontextprotocol/tasks"] = json!({});
    assert_eq!(caps(&h, "modern").await["extensions"], modern);
    h.shutdown().await;

    // A front end that renders no views announces nothing.
    let plain = p.harness();
    plain.start(None).await;
    plain
        .manager()
        .wait_settled(std::time::Duration::from_secs(30))
        .await;
    assert_eq!(caps(&plain, "legacy").await.get("extensions"), None);
    assert_eq!(caps(&plain, "modern").await.get("extensions"), Some(&tasks));
    plain.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn views_open_from_the_server_with_a_policy_of_their_declarations() {
    let p = project(json!({}));
    let h = started(&p).await;

    // Tool lists mark views and app-only tools.
    let entries = h.tool_entries();
    let entry = |t: &str| entries.iter().find(|e| e.tool == t).unwrap().clone();
    assert!(entry("show_board").has_view);
    assert!(!entry("show_board").app_only);
    assert!(entry("refresh").app_only);
    assert_eq!(entry("refresh").marks, ["read-only", "app-only"]);
    assert!(entry("show_plain").has_view);
    assert!(!entry("model_only").has_view);

    let board = h.open_view("ax", "show_board", call("c1")).await.unwrap();
    assert_eq!(board.view_id.len(), 32);
    assert_eq!(board.resource_uri, "ui://fixture/board.html");
    assert_eq!(
        board.csp,
        "default-src 'none'; script-src 'self' 'unsafe-inline' https://*.cdn.example.com; \
         style-src 'self' 'unsafe-inline' https://*.cdn.example.com; \
         img-src 'self' data: https://*.cdn.example.com; font-src 'self' data: https://*.cdn.example.com; \
         media-src 'self' data: https://*.cdn.example.com; connect-src https://api.example.com; \
         frame-src 'none'; base-uri 'self'; form-action 'none'; object-src 'none'"
    );
    assert_eq!(
        board.external_origins,
        ["https://*.cdn.example.com", "https://api.example.com"]
    );
    assert_eq!(
        board.dropped_domains,
        [
            "javascript:alert(1) (it is not an http, https, ws or wss origin)",
            "https://evil.example; script-src * (it holds quotes, ';', ',' or whitespace)"
        ]
    );
    // The content item's prefersBorder wins over the listing's.
    assert_eq!(board.prefers_border, Some(false));
    assert_eq!(board.server_title.as_deref(), Some("Apps Fixture"));
    assert_eq!(board.allow, "");
    assert_eq!(board.tool_definition["name"], "show_board");
    let doc = h.view_document(&board.view_id).unwrap();
    assert!(doc.html.contains("fixture view"));
    assert_eq!(doc.csp, board.csp);

    // Another view of the same server: another id, the same origin.
    let plain = h.open_view("ax", "show_plain", call("c2")).await.unwrap();
    assert_ne!(plain.view_id, board.view_id);
    assert_eq!(plain.origin, board.origin);
    assert_eq!(
        plain.csp,
        "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; \
         img-src 'self' data:; font-src 'self' data:; media-src 'self' data:; connect-src 'none'; \
         frame-src 'none'; base-uri 'self'; form-action 'none'; object-src 'none'"
    );
    assert!(plain.external_origins.is_empty());

    // What cannot be shown says why.
    let error = |tool: &'static str| {
        let h = &h;
        async move {
            h.open_view("ax", tool, call("c3"))
                .await
                .map(|_| ())
                .map_err(|e| (e.code(), e.to_string()))
        }
    };
    assert_eq!(
        error("show_wrong").await,
        Err((
            "not-a-view",
            "ui://fixture/wrong.html is not a view: its type is text/html, not text/html;profile=mcp-app".into()
        ))
    );
    assert_eq!(error("show_gone").await.unwrap_err().0, "read-failed");
    assert_eq!(
        error("model_only").await,
        Err((
            "no-view",
            "tool \"model_only\" of server \"ax\" has no interactive view".into()
        ))
    );
    assert_eq!(
        error("nope").await,
        Err((
            "unknown-tool",
            "server \"ax\" no longer offers tool \"nope\"; its view cannot be shown (the text result stays)".into()
        ))
    );
    // Declared permissions wait for the user; nobody can answer here: none granted.
    let camera = h.open_view("ax", "show_camera", call("c4")).await.unwrap();
    assert_eq!(camera.allow, "");
    assert!(camera.permissions.is_empty());

    let log: Vec<String> = h
        .server_log("ax", 200)
        .unwrap()
        .into_iter()
        .filter(|l| l.source == harness9::mcp::LogSource::View)
        .map(|l| l.text)
        .collect();
    let short = board.view_id.get(..8).unwrap();
    assert!(log.contains(&format!(
        "view {short} (show_board): declared domain \"javascript:alert(1)\" left out of its policy: it is not an http, https, ws or wss origin"
    )), "{log:#?}");
    assert!(
        log.iter()
            .any(|l| l.ends_with("(show_camera): asked for camera, clipboard-write; not granted")),
        "{log:#?}"
    );
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_views_requests_are_checked_and_reach_its_own_server_only() {
    let p = project(json!({"fx": {"command": fixture_bin()}}));
    let h = started(&p).await;
    let opened = h
        .open_view("ax", "show_board", call("call-1"))
        .await
        .unwrap();
    let v = opened.view_id.clone();
    let call_refresh = json!({"name": "refresh", "arguments": {"n": 1}});

    // Nothing before the handshake.
    assert_eq!(
        send(&h, &v, "tools/call", call_refresh.clone()).await,
        Err((
            "not-initialized".into(),
            "the view sent tools/call before it was initialized".into()
        ))
    );
    let init = result(
        send(
            &h,
            &v,
            "ui/initialize",
            json!({"protocolVersion": "2026-01-26", "appInfo": {"name": "v", "version": "1"},
                   "appCapabilities": {"availableDisplayModes": ["inline", "fullscreen"]}}),
        )
        .await,
    );
    assert_eq!(init["protocolVersion"], "2026-01-26");
    assert_eq!(init["hostInfo"]["name"], "harness9");
    assert_eq!(init["hostContext"]["toolInfo"]["id"], "call-1");
    assert_eq!(
        init["hostContext"]["toolInfo"]["tool"]["name"],
        "show_board"
    );
    assert_eq!(
        init["hostCapabilities"]["sandbox"]["csp"]["connectDomains"],
        json!(["https://api.example.com"])
    );
    assert!(init["hostCapabilities"]["serverTools"].is_object());
    assert_eq!(
        send(&h, &v, "ui/notifications/initialized", json!({})).await,
        Ok(ViewReply::Noted)
    );
    // Malformed: refused with what is wrong.
    assert_eq!(
        send(&h, &v, "tools/call", json!({"arguments": {}})).await,
        Err((
            "invalid-message".into(),
            "the view sent a malformed tools/call: name is missing".into()
        ))
    );

    // An app tool under "ask" with nobody to ask: refused.
    assert_eq!(
        send(&h, &v, "tools/call", call_refresh.clone()).await,
        Err((
            "refused".into(),
            "the view's call of tool \"refresh\" was not approved: no one can answer it here"
                .into()
        ))
    );
    // With a front end: the ask comes from the view; yes, always.
    let mut asks = h.subscribe_asks();
    let called = send(&h, &v, "tools/call", call_refresh.clone());
    let answer = async {
        let ask = next_ask(&mut asks, |a| a.server == "ax").await;
        assert_eq!(
            serde_json::to_value(ask.view().request).unwrap(),
            json!({"kind": "view", "viewId": v, "domain": null,
                   "request": {"what": "toolCall", "tool": "refresh", "arguments": {"n": 1}, "readOnly": true}})
        );
        let always = SamplingChoice {
            always: true,
            review: false,
        };
        h.answer_ask(ask.id, AskAnswer::Approve(always)).unwrap();
    };
    let (called, ()) = tokio::join!(called, answer);
    assert_eq!(result(called)["content"][0]["text"], "refreshed 1");
    drop(asks);
    // "Always" holds: the next call asks nobody.
    let called = result(send(&h, &v, "tools/call", call_refresh.clone()).await);
    assert_eq!(called["content"][0]["text"], "refreshed 2");
    // A deny rule holds for views as for the model.
    h.set_permission("mcp__ax__show_plain", Some(ToolPermission::Deny))
        .await
        .unwrap();
    assert_eq!(
        send(&h, &v, "tools/call", json!({"name": "show_plain"})).await,
        Err((
            "refused".into(),
            "harness9 denied this call: the user does not allow tool mcp__ax__show_plain in this project."
                .into()
        ))
    );

    // Model-only tools and other servers' tools are out of reach.
    assert_eq!(
        send(&h, &v, "tools/call", json!({"name": "model_only"})).await,
        Err((
            "refused".into(),
            "tool \"model_only\" of server \"ax\" is not visible to views (its server offers it to the model only)".into()
        ))
    );
    for other in ["echo", "mcp__fx__echo"] {
        assert_eq!(
            send(
                &h,
                &v,
                "tools/call",
                json!({"name": other, "arguments": {"text": "x"}})
            )
            .await,
            Err((
                "refused".into(),
                format!("server \"ax\" has no tool \"{other}\" a view may call")
            ))
        );
    }

    // Resources of its own server.
    let read = result(
        send(
            &h,
            &v,
            "resources/read",
            json!({"uri": "ui://fixture/data.txt"}),
        )
        .await,
    );
    assert_eq!(read["contents"][0]["text"], "fixture data");
    let listed = result(send(&h, &v, "resources/list", json!({})).await);
    assert_eq!(listed["resources"].as_array().unwrap().len(), 2);

    // Links: the link rules first, then the user, then the opener.
    assert_eq!(
        send(&h, &v, "ui/open-link", json!({"url": "javascript:alert(1)"})).await,
        Err((
            "refused".into(),
            "refused to open \"javascript:alert(1)\": it is a javascript: link; only https: links (and http: to this machine) open".into()
        ))
    );
    let mut asks = h.subscribe_asks();
    let opener = Arc::new(Recorder::default());
    let link = send(
        &h,
        &v,
        "ui/open-link",
        json!({"url": "https://example.com/docs?x=1"}),
    );
    let answer = async {
        let ask = next_ask(&mut asks, |a| a.server == "ax").await;
        let AskDetail::View {
            request: ViewAsk::OpenLink { url },
            domain,
            ..
        } = ask.view().request
        else {
            panic!("{ask:?}")
        };
        assert_eq!(url, "https://example.com/docs?x=1");
        assert_eq!(domain.as_deref(), Some("example.com"));
        h.reply_ask(ask.id, AskReply::Accept { content: None }, opener.as_ref())
            .await
            .unwrap();
    };
    let (link_result, ()) = tokio::join!(link, answer);
    drop(asks);
    assert_eq!(result(link_result), json!({}));
    assert_eq!(
        *opener.0.lock().unwrap(),
        ["https://example.com/docs?x=1".to_string()]
    );

    // A message waits for the user; nothing reaches a model.
    let mut events = h.subscribe_views();
    assert_eq!(
        result(
            send(
                &h,
                &v,
                "ui/message",
                json!({"role": "user", "content": [{"type": "text", "text": "Explain the board"}]})
            )
            .await
        ),
        json!({})
    );
    let pending = h.pending_messages();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].text, "Explain the board");
    assert_eq!(pending[0].server, "ax");
    assert_eq!(
        events.recv().await.unwrap(),
        ViewEvent::PendingMessages {
            messages: pending.clone()
        }
    );
    assert!(h.discard_pending(pending[0].id));
    assert!(h.pending_messages().is_empty());
    assert_eq!(
        events.recv().await.unwrap(),
        ViewEvent::PendingMessages { messages: vec![] }
    );

    // Sizes are clamped; display modes only as offered.
    assert_eq!(
        send(
            &h,
            &v,
            "ui/notifications/size-changed",
            json!({"width": 300, "height": 1e9})
        )
        .await,
        Ok(ViewReply::Resize {
            width: Some(300),
            height: Some(4096)
        })
    );
    assert_eq!(
        send(&h, &v, "ui/request-display-mode", json!({"mode": "pip"})).await,
        Ok(ViewReply::DisplayMode {
            mode: harness9::host::apps::DisplayMode::Inline
        })
    );
    assert_eq!(
        send(
            &h,
            &v,
            "ui/request-display-mode",
            json!({"mode": "fullscreen"})
        )
        .await,
        Ok(ViewReply::DisplayMode {
            mode: harness9::host::apps::DisplayMode::Fullscreen
        })
    );
    assert_eq!(
        send(&h, &v, "tools/list", json!({})).await.unwrap_err().0,
        "unknown-method"
    );

    // Every request is in the server's log, as coming from the view.
    let short = v.get(..8).unwrap();
    let log: Vec<String> = h
        .server_log("ax", 500)
        .unwrap()
        .into_iter()
        .filter(|l| l.source == harness9::mcp::LogSource::View)
        .map(|l| l.text)
        .collect();
    for line in [
        format!("view {short} (show_board): sent tools/call"),
        format!("view {short} (show_board): calls tool refresh"),
        format!("view {short} (show_board): the user allows refresh from now on"),
        format!("view {short} (show_board): opened example.com (https://example.com/docs?x=1)"),
    ] {
        assert!(log.contains(&line), "{line:?} in {log:#?}");
    }

    // Closed: gone, and its requests refused.
    assert!(h.close_view(&v));
    assert_eq!(
        events.recv().await.unwrap(),
        ViewEvent::Teardown {
            view_id: v.clone(),
            reason: TeardownReason::Closed,
            message: "the view was closed".into()
        }
    );
    assert!(h.view_document(&v).is_none());
    assert_eq!(
        send(&h, &v, "ping", json!({})).await.unwrap_err().0,
        "unknown-view"
    );
    h.shutdown().await;
}

/// The next teardown event.
async fn next_teardown(
    events: &mut tokio::sync::broadcast::Receiver<ViewEvent>,
) -> (String, TeardownReason) {
    let wait = async {
        loop {
            match events.recv().await {
                Ok(ViewEvent::Teardown {
                    view_id, reason, ..
                }) => return (view_id, reason),
                Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(e) => panic!("view events ended: {e}"),
            }
        }
    };
    tokio::time::timeout(DEADLINE, wait)
        .await
        .expect("a teardown within the deadline")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn views_go_when_their_server_stops_is_removed_or_the_project_closes() {
    let p = project(json!({}));
    let h = started(&p).await;
    let mut events = h.subscribe_views();

    let first = live_view(&h, "show_board").await;
    h.stop_server("ax").await;
    assert_eq!(
        next_teardown(&mut events).await,
        (first.clone(), TeardownReason::ServerStopped)
    );
    assert_eq!(
        h.open_view("ax", "show_board", call("c"))
            .await
            .unwrap_err()
            .code(),
        "server-unavailable"
    );

    h.restart_server("ax").await;
    h.manager()
        .wait_settled(std::time::Duration::from_secs(30))
        .await;
    let second = live_view(&h, "show_board").await;
    h.restart_server("ax").await;
    // A restart is a restart for the view, not a stop.
    assert_eq!(
        next_teardown(&mut events).await,
        (second, TeardownReason::ServerRestarted)
    );
    h.manager()
        .wait_settled(std::time::Duration::from_secs(30))
        .await;

    let third = live_view(&h, "show_board").await;
    h.save_config_text(r#"{"mcpServers": {}}"#, None)
        .await
        .unwrap();
    assert_eq!(
        next_teardown(&mut events).await,
        (third, TeardownReason::ServerRemoved)
    );
    assert_eq!(
        h.open_view("ax", "show_board", call("c"))
            .await
            .unwrap_err()
            .code(),
        "server-unavailable"
    );

    // Closing the project takes the rest.
    h.save_config_text(
        &json!({"mcpServers": {"ax": {"command": apps_fixture_bin()}}}).to_string(),
        None,
    )
    .await
    .unwrap();
    h.manager()
        .wait_settled(std::time::Duration::from_secs(30))
        .await;
    let fourth = live_view(&h, "show_plain").await;
    h.shutdown().await;
    assert_eq!(
        next_teardown(&mut events).await,
        (fourth, TeardownReason::ProjectClosed)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_call_with_a_view_is_kept_with_its_conversation_and_reopens_after_a_restart() {
    let p = project(json!({}));
    let h = started(&p).await;
    let stub = Stub::start(
        Wire::Anthropic,
        vec![
            Reply::tool("mcp__ax__show_board", json!({"title": "Q3"})),
            Reply::text("Here is the board."),
        ],
    )
    .await;
    let engine = h.engine(options(&p, &stub)).unwrap();
    let events = run(&engine, "show me the board").await;
    assert_eq!(completed(&events), "Here is the board.");
    // App-only tools are never offered to the model; the rest are.
    let offered = stub.requests()[0].tool_names();
    assert!(
        offered.contains(&"mcp__ax__show_board".to_string()),
        "{offered:?}"
    );
    assert!(
        !offered.iter().any(|n| n.contains("refresh")),
        "{offered:?}"
    );
    assert!(
        offered.contains(&"mcp__ax__model_only".to_string()),
        "{offered:?}"
    );
    let view = events
        .iter()
        .find_map(|e| match e {
            Event::ToolCallEnd { view, .. } => view.clone(),
            _ => None,
        })
        .expect("the call's end carries its view");
    assert_eq!(view.server, "ax");
    assert_eq!(view.tool, "show_board");
    assert_eq!(view.resource_uri, "ui://fixture/board.html");
    assert_eq!(view.arguments, json!({"title": "Q3"}));
    assert_eq!(
        view.result.structured_content,
        Some(json!({"cells": [1, 2, 3], "title": "Q3"}))
    );
    assert_eq!(view.result.meta, Some(json!({"fixture": "board"})));
    let id = engine.conversation_id().to_string();
    drop(engine);
    h.shutdown().await;
    drop(h);

    // After a restart: the conversation lists the view, and it opens again.
    let h = started(&p).await;
    let mut opts = options(&p, &stub);
    opts.conversation = ConversationChoice::Resume(id.clone());
    let engine = h.engine(opts).unwrap();
    let items = history_with_views(&engine.messages(), &engine.views());
    let (call_id, kept) = items
        .iter()
        .find_map(|i| match i {
            ChatItem::Tool {
                call_id,
                view: Some(v),
                ..
            } => Some((call_id.clone(), (**v).clone())),
            _ => None,
        })
        .expect("the tool item has its view");
    assert_eq!(kept, *view);
    let opened = h
        .open_view(
            &kept.server,
            &kept.tool,
            ViewCall {
                conversation_id: Some(id),
                call_id,
                arguments: kept.arguments.clone(),
                result: Some(kept.result.clone()),
            },
        )
        .await
        .unwrap();
    assert!(h
        .view_document(&opened.view_id)
        .unwrap()
        .html
        .contains("fixture view"));
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_with_a_view_streams_its_input_and_says_so_when_it_starts() {
    let p = project(json!({}));
    let h = started(&p).await;
    let title = "The board of the third quarter, with every team";
    let board = ToolView {
        server: "ax".into(),
        tool: "show_board".into(),
        resource_uri: "ui://fixture/board.html".into(),
    };
    for wire in [Wire::Anthropic, Wire::OpenAi] {
        let stub = Stub::start(
            wire,
            vec![
                Reply::tools(&[
                    ("mcp__ax__show_board", json!({"title": title})),
                    ("mcp__ax__model_only", json!({"note": "no view here"})),
                ]),
                Reply::text("Shown."),
            ],
        )
        .await;
        let engine = h.engine(options(&p, &stub)).unwrap();
        let events = run(&engine, "show me the board").await;
        assert_eq!(completed(&events), "Shown.");
        let mut partials = Vec::new();
        let mut starts = Vec::new();
        for (i, e) in events.iter().enumerate() {
            match e {
                Event::ToolInputPartial {
                    call_id,
                    name,
                    arguments,
                    view,
                } => partials.push((
                    i,
                    call_id.clone(),
                    name.clone(),
                    arguments.clone(),
                    view.clone(),
                )),
                Event::ToolCallStart {
                    call_id,
                    name,
                    view,
                    ..
                } => starts.push((i, call_id.clone(), name.clone(), view.clone())),
                _ => {}
            }
        }
        // Both calls start; only the one with a view says so, and only its input streams.
        let [(board_at, board_id, _, board_view), (_, _, plain, plain_view)] = &starts[..] else {
            panic!("{wire:?}: two starts: {starts:?}");
        };
        assert_eq!(board_view.as_deref(), Some(&board), "{wire:?}");
        assert_eq!(plain, "mcp__ax__model_only");
        assert_eq!(*plain_view, None, "{wire:?}");
        assert!(!partials.is_empty(), "{wire:?}: no partial input");
        for (at, id, name, arguments, view) in &partials {
            assert!(at < board_at, "{wire:?}: a partial input after the start");
            assert_eq!((id, name.as_str()), (board_id, "mcp__ax__show_board"));
            assert_eq!(**view, board);
            let so_far = arguments["title"].as_str().unwrap_or_default();
            assert!(title.starts_with(so_far), "{wire:?}: {arguments}");
            assert_eq!(
                arguments.as_object().map(|o| o.len()),
                Some(1),
                "{arguments}"
            );
        }
    }
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_a_view_gives_the_model_goes_with_a_prompts_turn() {
    let p = project(json!({"fx": {"command": fixture_bin(), "env": {"REFSERVER_PROMPTS": "1"}}}));
    let h = started(&p).await;
    let stub = Stub::start(Wire::Anthropic, vec![Reply::text("Noted.")]).await;
    let engine = h.engine(options(&p, &stub)).unwrap();
    let opened = h
        .open_view(
            "ax",
            "show_board",
            ViewCall {
                conversation_id: Some(engine.conversation_id().to_string()),
                ..call("call-ctx")
            },
        )
        .await
        .unwrap();
    let init = json!({"protocolVersion": "2026-01-26", "appInfo": {"name": "v", "version": "1"},
                      "appCapabilities": {}});
    result(send(&h, &opened.view_id, "ui/initialize", init).await);
    send(
        &h,
        &opened.view_id,
        "ui/notifications/initialized",
        json!({}),
    )
    .await
    .unwrap();
    result(
        send(
            &h,
            &opened.view_id,
            "ui/update-model-context",
            json!({"content": [{"type": "text", "text": "the user picked cell 2"}]}),
        )
        .await,
    );
    let mut topic = serde_json::Map::new();
    topic.insert("topic".into(), json!("the board"));
    let turn = h
        .send_prompt(&engine, "fx", "prompt-0", topic)
        .await
        .unwrap();
    let events = tokio::time::timeout(DEADLINE, turn.handle.collect())
        .await
        .expect("the turn ends");
    assert_eq!(completed(&events), "Noted.");
    let sent = stub.requests()[0].messages().last().unwrap().clone();
    assert_eq!(
        sent["content"],
        json!([
            {"type": "text", "text": "prompt-0 about the board"},
            {"type": "text", "text": "[context from the interactive view of tool \"show_board\" of MCP server \"ax\"]\nthe user picked cell 2"}
        ])
    );
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_terminal_marks_views_and_returns_whole_results() {
    let p = project(json!({}));
    let out = p.cli(&["mcp", "tools", "--yes"]);
    let text = super::support::stdout(&out);
    let row = |tool: &str| {
        text.lines()
            .find(|l| l.split_whitespace().nth(1) == Some(tool))
            .unwrap_or_else(|| panic!("{tool} in {text}"))
            .to_string()
    };
    assert!(row("show_board").contains("read-only,view"), "{text}");
    assert!(row("refresh").contains("read-only,app-only"), "{text}");
    assert!(row("show_plain").contains("view"), "{text}");
    let out = p.cli(&[
        "mcp",
        "call",
        "ax",
        "show_board",
        "{\"title\":\"X\"}",
        "--json",
        "--yes",
    ]);
    let whole: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        whole,
        json!({"content": [{"type": "text", "text": "board shown"}],
               "structuredContent": {"cells": [1, 2, 3], "title": "X"},
               "_meta": {"fixture": "board"}})
    );
}
