//! The client surface beyond tools, through the façade, against real servers:
//! `@modelcontextprotocol/server-everything` (resources with templates and subscriptions,
//! prompts, completion, elicitation, sampling, roots, logging) and the Python SDK server.

use std::sync::Arc;
use std::time::Duration;

use harness9::host::asks::{AskAnswer, AskKind};
use harness9::mcp::features::{CompletionRef, LogLevel};
use harness9::mcp::requests::{CreateMessageResult, ElicitAction, ElicitRequest, ElicitResult};
use harness9::tools::CallContext;
use harness9::Harness;
use serde_json::{json, Map, Value};

use super::support::wait::{next_ask, tool_answer_contains, wait_for_tool};
use super::support::Project;

async fn open(p: &Project, sampling: bool) -> Harness {
    let h = p.harness();
    h.set_sampling(sampling);
    h.start(None).await;
    h.manager().wait_settled(Duration::from_secs(30)).await;
    h
}

fn text(r: &harness9::mcp::CallToolResult) -> String {
    r.to_text()
}

#[tokio::test]
async fn everything_resources_templates_prompts_and_completion() {
    let Some(p) = Project::everything() else {
        return;
    };
    let h = open(&p, false).await;
    let resources = h.resources(None).await.unwrap();
    assert!(resources.len() >= 5, "{resources:?}");
    let doc = resources
        .iter()
        .find(|r| {
            r.resource
                .uri
                .starts_with("demo://resource/static/document/")
        })
        .expect("a static document");
    assert_eq!(doc.server, "ev");
    let read = h.read_resource("ev", &doc.resource.uri).await.unwrap();
    assert!(read.contents[0].text.as_deref().unwrap_or("").len() > 10);
    let templates = h.resource_templates(Some("ev")).await.unwrap();
    let uris: Vec<&str> = templates
        .iter()
        .map(|t| t.template.uri_template.as_str())
        .collect();
    assert!(
        uris.contains(&"demo://resource/dynamic/blob/{resourceId}"),
        "{uris:?}"
    );
    let blob = h
        .read_resource("ev", "demo://resource/dynamic/blob/3")
        .await
        .unwrap();
    assert!(blob.contents[0].blob.is_some(), "{blob:?}");
    let err = h
        .read_resource("ev", "demo://resource/dynamic/text/0")
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("server \"ev\": the server answered resources/read with error"),
        "{err}"
    );

    let prompts = h.prompts(None).await.unwrap();
    let names: Vec<&str> = prompts.iter().map(|p| p.prompt.name.as_str()).collect();
    assert!(names.contains(&"args-prompt"), "{names:?}");
    let args_prompt = &prompts
        .iter()
        .find(|p| p.prompt.name == "args-prompt")
        .unwrap()
        .prompt;
    assert!(args_prompt
        .arguments
        .iter()
        .any(|a| a.name == "city" && a.required));
    let mut args = Map::new();
    args.insert("city".into(), json!("Paris"));
    let got = h.get_prompt("ev", "args-prompt", args).await.unwrap();
    assert!(got.to_text().starts_with("user: "), "{}", got.to_text());
    assert!(got.to_text().contains("Paris"));

    let done = h
        .complete(
            "ev",
            &CompletionRef::Prompt {
                name: "resource-prompt".into(),
            },
            "resourceType",
            "Bl",
            &Map::new(),
        )
        .await
        .unwrap();
    assert_eq!(done.values, ["Blob"]);
    let done = h
        .complete(
            "ev",
            &CompletionRef::Resource {
                uri: "demo://resource/dynamic/text/{resourceId}".into(),
            },
            "resourceId",
            "12",
            &Map::new(),
        )
        .await
        .unwrap();
    assert_eq!(done.values, ["12"]);
    h.set_log_level("ev", LogLevel::Error).await.unwrap();
    let unknown = h.read_resource("nope", "x").await.unwrap_err();
    assert_eq!(
        unknown.to_string(),
        "no server named \"nope\" in any config scope (servers: ev)"
    );
    h.shutdown().await;
}

#[tokio::test]
async fn everything_subscriptions_deliver_updates() {
    let Some(p) = Project::everything() else {
        return;
    };
    let h = open(&p, false).await;
    let mut events = h.subscribe_surface();
    let uri = "demo://resource/dynamic/text/1";
    h.subscribe_resource("ev", uri).await.unwrap();
    let r = h
        .call_tool(
            "ev",
            "toggle-subscriber-updates",
            json!({}),
            CallContext::default(),
        )
        .await
        .unwrap();
    assert!(!r.is_error, "{}", text(&r));
    let updated = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            if let harness9::host::catalog::SurfaceEvent::ResourceUpdated { server, uri } =
                events.recv().await.unwrap()
            {
                return (server, uri);
            }
        }
    })
    .await
    .expect("an update within 20 s");
    assert_eq!(updated, ("ev".to_string(), uri.to_string()));
    h.unsubscribe_resource("ev", uri).await.unwrap();
    h.shutdown().await;
}

#[tokio::test]
async fn everything_elicitation_reaches_the_front_end_at_once() {
    let Some(p) = Project::everything() else {
        return;
    };
    let h = Arc::new(open(&p, false).await);
    wait_for_tool(h.registry(), "ev", "trigger-elicitation-request").await;
    let mut asks = h.subscribe_asks();
    let caller = {
        let h = h.clone();
        tokio::spawn(async move {
            h.call_tool(
                "ev",
                "trigger-elicitation-request",
                json!({}),
                CallContext::default(),
            )
            .await
        })
    };
    let ask = next_ask(&mut asks, |_| true).await;
    assert_eq!(ask.server, "ev");
    let AskKind::Elicitation {
        request: ElicitRequest::Form {
            message,
            requested_schema,
        },
    } = &ask.kind
    else {
        panic!("{ask:?}")
    };
    assert_eq!(message, "Please provide inputs for the following fields:");
    assert_eq!(requested_schema["required"], json!(["name"]));
    let mut content = Map::new();
    content.insert("name".into(), json!("Ada"));
    h.answer_ask(
        ask.id,
        AskAnswer::Elicit(ElicitResult {
            action: ElicitAction::Accept,
            content: Some(content),
        }),
    )
    .unwrap();
    let out = text(&caller.await.unwrap().unwrap());
    assert!(
        out.contains("User provided the requested information"),
        "{out}"
    );
    assert!(out.contains("- Name: Ada"), "{out}");
    // SEP-1034: fields left out take the schema's defaults.
    assert!(out.contains("- Favorite Integer: 42"), "{out}");
    assert!(
        out.contains("\"untitledSingleSelectEnum\": \"Monica\""),
        "{out}"
    );
    assert!(h.pending_asks().is_empty());
    h.shutdown().await;
}

#[tokio::test]
async fn everything_elicitation_without_a_front_end_is_declined() {
    let Some(p) = Project::everything() else {
        return;
    };
    let h = open(&p, false).await;
    wait_for_tool(h.registry(), "ev", "trigger-elicitation-request").await;
    let r = h
        .call_tool(
            "ev",
            "trigger-elicitation-request",
            json!({}),
            CallContext::default(),
        )
        .await
        .unwrap();
    assert!(
        text(&r).contains("User declined to provide the requested information"),
        "{}",
        text(&r)
    );
    let log = h.manager().log("ev").unwrap();
    let lines: Vec<String> = log.tail(100).iter().map(|l| l.text.clone()).collect();
    assert!(
        lines.iter().any(|l| l == "the server asked for input (form mode): \"Please provide inputs for the following fields:\"; declined: no one can answer it here"),
        "{lines:?}"
    );
    h.shutdown().await;
}

#[tokio::test]
async fn everything_roots_and_sampling() {
    let Some(p) = Project::everything() else {
        return;
    };
    let h = Arc::new(open(&p, true).await);
    wait_for_tool(h.registry(), "ev", "get-roots-list").await;
    wait_for_tool(h.registry(), "ev", "trigger-sampling-request").await;
    let project_uri = h.roots()[0].uri.clone();
    assert!(project_uri.starts_with("file:///"), "{project_uri}");
    let roots = text(
        &h.call_tool("ev", "get-roots-list", json!({}), CallContext::default())
            .await
            .unwrap(),
    );
    assert!(roots.contains(&project_uri), "{roots}");
    // An extra root: the server hears list_changed, asks again, and sees both.
    let extra = tempfile::tempdir().unwrap();
    h.set_extra_roots(&[extra.path().to_path_buf()]);
    let extra_uri = h.roots()[1].uri.clone();
    tool_answer_contains(&h, "ev", "get-roots-list", &extra_uri).await;

    // Sampling: the ask shows what the model would get; the front end answers.
    let mut asks = h.subscribe_asks();
    let caller = {
        let h = h.clone();
        tokio::spawn(async move {
            h.call_tool(
                "ev",
                "trigger-sampling-request",
                json!({"prompt": "hi", "maxTokens": 7}),
                CallContext::default(),
            )
            .await
        })
    };
    let ask = next_ask(&mut asks, |_| true).await;
    let AskKind::Sampling { request } = &ask.kind else {
        panic!("{ask:?}")
    };
    assert_eq!(request.max_tokens, 7);
    assert_eq!(
        request.system_prompt.as_deref(),
        Some("You are a helpful test server.")
    );
    let answer = CreateMessageResult {
        role: "assistant".into(),
        content: json!({"type": "text", "text": "scripted hello"}),
        model: "scripted".into(),
        stop_reason: Some("endTurn".into()),
    };
    h.answer_ask(ask.id, AskAnswer::Sample(answer)).unwrap();
    let out = text(&caller.await.unwrap().unwrap());
    assert!(out.contains("scripted hello"), "{out}");

    // Refused: the server gets the reason as an error.
    let caller = {
        let h = h.clone();
        tokio::spawn(async move {
            h.call_tool(
                "ev",
                "trigger-sampling-request",
                json!({"prompt": "hi"}),
                CallContext::default(),
            )
            .await
        })
    };
    let ask = next_ask(&mut asks, |_| true).await;
    h.answer_ask(ask.id, AskAnswer::Refuse(String::new()))
        .unwrap();
    let out = caller.await.unwrap();
    let shown = match out {
        Ok(r) => text(&r),
        Err(e) => e.to_string(),
    };
    assert!(
        shown.contains("the user refused the sampling request"),
        "{shown}"
    );
    // No front end listening: refused at once, never answered by anyone.
    drop(asks);
    let out = h
        .call_tool(
            "ev",
            "trigger-sampling-request",
            json!({"prompt": "hi"}),
            CallContext::default(),
        )
        .await;
    let shown = match out {
        Ok(r) => text(&r),
        Err(e) => e.to_string(),
    };
    assert!(
        shown.contains("no one can approve it here (sampling needs the terminal UI or the desktop app); the request was refused"),
        "{shown}"
    );
    let _ = Value::Null;
    h.shutdown().await;
}

#[tokio::test]
async fn everything_resource_list_changes_are_followed() {
    let Some(p) = Project::everything() else {
        return;
    };
    let h = open(&p, false).await;
    let before = h.resources(Some("ev")).await.unwrap().len();
    let mut events = h.subscribe_surface();
    let r = h
        .call_tool(
            "ev",
            "gzip-file-as-resource",
            json!({"name": "hello.gz", "data": "data:text/plain;base64,aGVsbG8="}),
            CallContext::default(),
        )
        .await
        .unwrap();
    assert_eq!(
        text(&r),
        "[resource link: hello.gz <demo://resource/session/hello.gz>]"
    );
    tokio::time::timeout(Duration::from_secs(20), async {
        while events.recv().await.unwrap()
            != (harness9::host::catalog::SurfaceEvent::ListingChanged {
                server: "ev".into(),
            })
        {}
    })
    .await
    .expect("listed again");
    let after = h.resources(Some("ev")).await.unwrap();
    assert_eq!(after.len(), before + 1);
    let gz = after
        .iter()
        .find(|r| r.resource.uri == "demo://resource/session/hello.gz")
        .expect("the new resource");
    assert_eq!(gz.resource.mime_type.as_deref(), Some("application/gzip"));
    let read = h.read_resource("ev", &gz.resource.uri).await.unwrap();
    assert!(read.contents[0].blob.is_some());
    h.shutdown().await;
}
