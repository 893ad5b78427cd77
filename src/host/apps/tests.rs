//! The service's own rules without a server or a window: the handshake order, floods,
//! conversations left, pending messages.

use std::time::Instant;

use serde_json::json;

use super::limits::{self, TokenBucket};
use super::*;

fn opened(id: &str, conversation: Option<&str>) -> ViewOpened {
    ViewOpened {
        view_id: id.into(),
        server: "s".into(),
        tool: "t".into(),
        resource_uri: "ui://s/v".into(),
        origin: "v0".into(),
        csp: csp::build(None).csp,
        allow: String::new(),
        permissions: Vec::new(),
        external_origins: Vec::new(),
        dropped_domains: Vec::new(),
        prefers_border: None,
        server_title: None,
        server_icons: Vec::new(),
        tool_definition: json!({"name": "t"}),
        call: ViewCall {
            conversation_id: conversation.map(str::to_string),
            call_id: "c1".into(),
            arguments: json!({}),
            result: None,
        },
    }
}

/// A view as `open` leaves it, without a server.
fn insert(apps: &Apps, id: &str, conversation: Option<&str>) {
    let now = Instant::now();
    let view = View {
        opened: opened(id, conversation),
        document: ViewDocument {
            html: std::sync::Arc::from("<p>x</p>"),
            csp: csp::build(None).csp,
        },
        run: None,
        log: None,
        granted: ViewPermissions::default(),
        phase: Phase::Opened,
        display_modes: Vec::new(),
        display_mode: DisplayMode::Inline,
        requests: TokenBucket::new(limits::REQUESTS_PER_SECOND, limits::REQUEST_BURST, now),
        resizes: TokenBucket::new(limits::RESIZES_PER_SECOND, limits::RESIZE_BURST, now),
        last_notice: None,
    };
    apps.inner.state.lock().views.insert(id.to_string(), view);
}

fn events(rx: &mut broadcast::Receiver<ViewEvent>) -> Vec<ViewEvent> {
    let mut out = Vec::new();
    while let Ok(e) = rx.try_recv() {
        out.push(e);
    }
    out
}

fn initialize() -> ViewRequest {
    ViewRequest::Initialize {
        protocol_version: "2026-01-26".into(),
        app_info: json!({}),
        display_modes: vec![DisplayMode::Inline],
    }
}

#[test]
fn nothing_but_the_handshake_before_initialized() {
    let apps = Apps::default();
    insert(&apps, "v1", None);
    let code = |r: Result<_, ViewError>| r.err().map(|e| e.code());
    assert_eq!(
        code(apps.gate("v1", &ViewRequest::Ping)),
        Some("not-initialized")
    );
    assert_eq!(
        code(apps.gate("v1", &ViewRequest::Initialized)),
        Some("not-initialized")
    );
    assert_eq!(code(apps.gate("v1", &initialize())), None);
    let call = ViewRequest::CallTool {
        name: "t".into(),
        arguments: None,
    };
    assert_eq!(
        apps.gate("v1", &call).err().map(|e| e.to_string()),
        Some("the view sent tools/call before it was initialized".into())
    );
    assert_eq!(code(apps.gate("v1", &ViewRequest::Initialized)), None);
    assert_eq!(code(apps.gate("v1", &call)), None);
    // A reload of the frame starts the handshake over.
    assert_eq!(code(apps.gate("v1", &initialize())), None);
    assert_eq!(code(apps.gate("v1", &call)), Some("not-initialized"));
    assert_eq!(code(apps.gate("nope", &call)), Some("unknown-view"));
    assert_eq!(ViewError::NotInitialized("x".into()).rpc_code(), -32600);
    assert_eq!(ViewError::UnknownMethod("x".into()).rpc_code(), -32601);
}

#[test]
fn a_flood_is_refused_and_the_user_told_once() {
    let apps = Apps::default();
    let mut rx = apps.subscribe();
    insert(&apps, "v1", None);
    apps.gate("v1", &initialize()).unwrap();
    apps.gate("v1", &ViewRequest::Initialized).unwrap();
    let passed = (0..1000)
        .filter(|_| apps.gate("v1", &ViewRequest::Ping).is_ok())
        .count();
    // The burst (less the two handshake messages), within the time the loop took.
    assert!(
        (limits::REQUEST_BURST as usize - 2..limits::REQUEST_BURST as usize + 5).contains(&passed),
        "{passed}"
    );
    assert_eq!(
        apps.gate("v1", &ViewRequest::Ping)
            .err()
            .map(|e| e.to_string()),
        Some("the view sends too much (requests); it is slowed down".into())
    );
    // Resizes have their own bucket.
    let resize = ViewRequest::SizeChanged {
        width: None,
        height: Some(10.0),
    };
    assert!(apps.gate("v1", &resize).is_ok());
    let told = events(&mut rx);
    assert_eq!(
        told,
        vec![ViewEvent::Throttled {
            view_id: "v1".into(),
            server: "s".into(),
            message: "a view of server \"s\" sends too many requests; they are refused for a while"
                .into()
        }]
    );
}

#[test]
fn leaving_a_conversation_tears_its_views_down_with_their_messages() {
    let apps = Apps::default();
    apps.conversation_shown("A");
    insert(&apps, "a1", Some("A"));
    insert(&apps, "a2", Some("A"));
    // A view of another conversation (opened while the chat showed it).
    insert(&apps, "b1", Some("B"));
    insert(&apps, "m1", None);
    apps.inner.state.lock().pending.insert(
        7,
        PendingMessage {
            id: 7,
            view_id: "a1".into(),
            server: "s".into(),
            tool: "t".into(),
            conversation_id: Some("A".into()),
            text: "hello".into(),
        },
    );
    let mut rx = apps.subscribe();
    apps.conversation_shown("B");
    let mut told = events(&mut rx);
    let last = told.pop();
    assert_eq!(last, Some(ViewEvent::PendingMessages { messages: vec![] }));
    let mut gone: Vec<(String, TeardownReason)> = told
        .into_iter()
        .map(|e| match e {
            ViewEvent::Teardown {
                view_id, reason, ..
            } => (view_id, reason),
            other => panic!("{other:?}"),
        })
        .collect();
    gone.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        gone,
        [
            ("a1".to_string(), TeardownReason::ConversationLeft),
            ("a2".to_string(), TeardownReason::ConversationLeft)
        ]
    );
    let mut live: Vec<String> = apps.live().into_iter().map(|v| v.view_id).collect();
    live.sort();
    assert_eq!(live, ["b1", "m1"]);
    assert!(apps.document("a1").is_none());
    assert!(apps.document("b1").is_some());
    // Showing the same conversation again changes nothing; leaving it takes its views.
    apps.conversation_shown("B");
    assert!(events(&mut rx).is_empty());
    apps.conversation_left("B");
    assert_eq!(
        events(&mut rx),
        vec![ViewEvent::Teardown {
            view_id: "b1".into(),
            reason: TeardownReason::ConversationLeft,
            message: "its conversation was left".into()
        }]
    );
    apps.close_all(TeardownReason::ProjectClosed);
    assert!(apps.live().is_empty());
}

#[test]
fn model_context_goes_with_the_next_message_once() {
    let apps = Apps::default();
    {
        let mut st = apps.inner.state.lock();
        st.contexts
            .insert("A".into(), ModelContext { text: "a".into() });
        st.contexts.insert(
            String::new(),
            ModelContext {
                text: "manual".into(),
            },
        );
    }
    assert_eq!(apps.take_model_context("A"), ["a", "manual"]);
    assert!(apps.take_model_context("A").is_empty());
}
