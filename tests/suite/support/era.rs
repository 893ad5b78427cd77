//! What tests of both protocol eras share: a handler that answers every server request,
//! tool results compared across eras, and the checks of the modern era's listen stream.

use harness9::mcp::handler::{ClientHandler, HandlerFuture, Handles};
use harness9::mcp::requests::{
    CreateMessageRequest, CreateMessageResult, ElicitRequest, ElicitResult, Root,
};
use harness9::mcp::{Client, ClientEvent, ServerLog};
use serde_json::{json, Map, Value};

use super::client::opts;
use super::wait::next_event;

/// Answers every form with `answer: 42`, samples "hi there" and lists one root; counts
/// what it was asked.
#[derive(Default)]
pub struct Answers {
    pub asked: std::sync::Mutex<Vec<String>>,
}

impl ClientHandler for Answers {
    fn handles(&self) -> Handles {
        Handles {
            elicitation_form: true,
            sampling: true,
            roots: true,
            roots_list_changed: true,
            ..Handles::default()
        }
    }

    fn elicit(&self, request: ElicitRequest) -> HandlerFuture<ElicitResult> {
        let ElicitRequest::Form {
            message,
            requested_schema,
        } = request
        else {
            return Box::pin(async { Ok(ElicitResult::decline()) });
        };
        self.asked
            .lock()
            .unwrap()
            .push(format!("elicit: {message}"));
        let mut content = Map::new();
        let value = if message.contains("unit") {
            "celsius"
        } else {
            "42"
        };
        content.insert("answer".into(), json!(value));
        let result = ElicitResult::accept_form(&requested_schema, content);
        Box::pin(async move { Ok(result) })
    }

    fn create_message(&self, _request: CreateMessageRequest) -> HandlerFuture<CreateMessageResult> {
        self.asked.lock().unwrap().push("sample".into());
        Box::pin(async {
            Ok(CreateMessageResult {
                role: "assistant".into(),
                content: json!({"type": "text", "text": "hi there"}),
                model: "test-model".into(),
                stop_reason: Some("endTurn".into()),
            })
        })
    }

    fn list_roots(&self) -> HandlerFuture<Vec<Root>> {
        self.asked.lock().unwrap().push("roots".into());
        Box::pin(async {
            Ok(vec![Root {
                uri: "file:///srv/demo-project".into(),
                name: None,
            }])
        })
    }
}

/// What a tool call gave, without the server's `_meta` (which differs by era).
pub async fn call(c: &Client, tool: &str, args: Value) -> Value {
    let mut r = c.call_tool(tool, Some(args), opts()).await.unwrap();
    r.meta = None;
    serde_json::to_value(r).unwrap()
}

/// A modern connection to the Python server (a fresh one: no `grown` tool yet): list
/// changes and resource updates on the `subscriptions/listen` stream, and the logging
/// level in each request's `_meta`.
pub async fn listen_checks(modern: &Client, server_log: &ServerLog) {
    // Nothing is sent until the client listens; then the server acknowledges what it will
    // send: every kind it has.
    assert_eq!(modern.listening_for(), None);
    modern.listen(&[], None).await.unwrap();
    assert_eq!(
        modern.listening_for(),
        Some(
            json!({"toolsListChanged": true, "promptsListChanged": true, "resourcesListChanged": true})
        )
    );
    let mut events = modern.events();
    assert_eq!(
        call(modern, "grow", json!({})).await["content"][0]["text"],
        "grown"
    );
    next_event(&mut events, |e| *e == ClientEvent::ToolsChanged).await;
    let tools = modern.list_tools(None).await.unwrap();
    assert!(tools.iter().any(|t| t.name == "grown"), "{tools:?}");

    // Following a resource replaces the stream with one that names it.
    assert!(modern.can_subscribe());
    modern.subscribe("h9://readme", None).await.unwrap();
    assert_eq!(
        modern.listening_for().unwrap()["resourceSubscriptions"],
        json!(["h9://readme"])
    );
    call(modern, "touch", json!({"uri": "h9://other"})).await;
    call(modern, "touch", json!({"uri": "h9://readme"})).await;
    let got = next_event(&mut events, |e| {
        matches!(e, ClientEvent::ResourceUpdated { .. })
    })
    .await;
    assert_eq!(
        got,
        ClientEvent::ResourceUpdated {
            uri: "h9://readme".into()
        }
    );
    modern.unsubscribe("h9://readme", None).await.unwrap();
    assert_eq!(
        modern.listening_for().unwrap().get("resourceSubscriptions"),
        None
    );

    // The logging level rides each request's `_meta`: info by default, then what the
    // user chose.
    let log = || {
        let lines = server_log.tail(1000);
        lines
            .iter()
            .map(|l| l.text.clone())
            .collect::<Vec<_>>()
            .join("\n")
    };
    call(modern, "notify_and_ask", json!({})).await;
    assert!(log().contains("hello from the python server"), "{}", log());
    modern
        .set_logging_level(harness9::mcp::features::LogLevel::Error, None)
        .await
        .unwrap();
    let before = log().matches("hello from the python server").count();
    call(modern, "notify_and_ask", json!({})).await;
    assert_eq!(
        log().matches("hello from the python server").count(),
        before
    );
}
