//! Resources in the chat: attachments read by the core and sent with the user's message,
//! the built-in resource tools (offered only while a server has resources), and the
//! terminal UI's `@` picker, against server-everything and the scripted provider.

use std::time::Duration;

use harness9::engine::resources::{ResourceRef, LIST_RESOURCES_TOOL, READ_RESOURCE_TOOL};
use harness9::engine::{CallStatus, Event};
use serde_json::{json, Value};

use super::support::provider_stub::{Reply, Stub, Wire};
use super::support::terminal::{have_tmux, Tmux};
use super::support::turns::{completed, options};
use super::support::wait::{poll_for, DEADLINE};
use super::support::Project;

const FEATURES: &str = "demo://resource/static/document/features.md";

/// The text blocks of the first request's user message.
fn user_texts(stub: &Stub) -> Vec<String> {
    let req = &stub.requests()[0];
    let user = req.messages().last().unwrap();
    assert_eq!(user["role"], "user");
    user["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "text")
        .map(|b| b["text"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attached_resources_reach_the_model_with_the_message() {
    let Some(project) = Project::everything() else {
        return;
    };
    let harness = project.started().await;
    // The listing follows the connection; wait until the façade sees it.
    let resources = harness.resources(Some("ev")).await.unwrap();
    assert!(resources.iter().any(|r| r.resource.uri == FEATURES));
    let stub = Stub::start(Wire::Anthropic, vec![Reply::text("It lists the features.")]).await;
    let engine = harness.engine(options(&project, &stub)).unwrap();
    let turn = engine
        .send_with(
            "What does this say?",
            vec![
                ResourceRef {
                    server: "ev".into(),
                    uri: FEATURES.into(),
                },
                ResourceRef {
                    server: "ev".into(),
                    uri: "demo://nope".into(),
                },
            ],
        )
        .unwrap();
    let events = tokio::time::timeout(Duration::from_secs(30), turn.collect())
        .await
        .unwrap();
    assert_eq!(completed(&events), "It lists the features.");
    let texts = user_texts(&stub);
    assert_eq!(texts[0], "What does this say?");
    let header = format!("[attached resource {FEATURES} (text/markdown) from MCP server \"ev\"]\n");
    assert!(texts[1].starts_with(&header), "{texts:?}");
    assert!(texts[1].len() > header.len() + 20, "{texts:?}");
    assert!(
        texts[2].starts_with(
            "[attached resource demo://nope from MCP server \"ev\"]\n[it could not be read: server \"ev\": "
        ),
        "{texts:?}"
    );
    // The user is told too.
    assert!(events.iter().any(|e| matches!(e, Event::Notice { message } if message.starts_with("the attached resource demo://nope could not be read"))), "{events:?}");
    // With resources listed, the model is offered the resource tools.
    let names = stub.requests()[0].tool_names();
    assert!(
        names.contains(&LIST_RESOURCES_TOOL.to_string()),
        "{names:?}"
    );
    assert!(names.contains(&READ_RESOURCE_TOOL.to_string()), "{names:?}");
    // The conversation keeps the attachment as a resource block (shown again on reopen).
    let user = engine.messages()[0].clone();
    assert_eq!(user.text(), "What does this say?");
    harness.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_lists_and_reads_resources_with_the_builtin_tools() {
    let Some(project) = Project::everything() else {
        return;
    };
    let harness = project.started().await;
    harness.resources(Some("ev")).await.unwrap();
    let stub = Stub::start(
        Wire::OpenAi,
        vec![
            Reply::tool(LIST_RESOURCES_TOOL, json!({"server": "ev"})),
            Reply::tool(
                READ_RESOURCE_TOOL,
                json!({"server": "ev", "uri": "demo://resource/dynamic/text/7"}),
            ),
            Reply::tool(READ_RESOURCE_TOOL, json!({"server": "ev"})),
            Reply::text("Resource 7 is plain text."),
        ],
    )
    .await;
    let engine = harness.engine(options(&project, &stub)).unwrap();
    let turn = engine.send("read resource 7").unwrap();
    let events = tokio::time::timeout(Duration::from_secs(30), turn.collect())
        .await
        .unwrap();
    assert_eq!(completed(&events), "Resource 7 is plain text.");
    let ends: Vec<(CallStatus, String)> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCallEnd { status, output, .. } => Some((*status, output.clone())),
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
        .collect();
    assert_eq!(ends.len(), 3);
    assert_eq!(ends[0].0, CallStatus::Ok);
    assert!(
        ends[0].1.contains(&format!(
            "- server ev: {FEATURES} (features.md, text/markdown)"
        )),
        "{}",
        ends[0].1
    );
    assert!(
        ends[0]
            .1
            .contains("- server ev: demo://resource/dynamic/text/{resourceId}"),
        "{}",
        ends[0].1
    );
    assert_eq!(ends[1].0, CallStatus::Ok);
    assert!(
        ends[1].1.starts_with(
            "[attached resource demo://resource/dynamic/text/7 (text/plain) from MCP server \"ev\"]\nResource 7: This is a plaintext resource"
        ),
        "{}",
        ends[1].1
    );
    assert_eq!(ends[2].0, CallStatus::Error);
    assert_eq!(
        ends[2].1,
        "Error: give \"server\" and \"uri\" (see list_mcp_resources)"
    );
    harness.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_resource_tools_without_resources() {
    let project = Project::new(&json!({"mcpServers": {}}));
    let harness = project.started().await;
    let stub = Stub::start(Wire::Anthropic, vec![Reply::text("ok")]).await;
    let engine = harness.engine(options(&project, &stub)).unwrap();
    let events = engine.send("hi").unwrap().collect().await;
    assert_eq!(completed(&events), "ok");
    let names = stub.requests()[0].tool_names();
    assert!(
        !names.contains(&LIST_RESOURCES_TOOL.to_string()),
        "{names:?}"
    );
    assert!(
        !names.contains(&READ_RESOURCE_TOOL.to_string()),
        "{names:?}"
    );
    harness.shutdown().await;
}

#[test]
fn tui_at_picker_attaches_a_resource() {
    if !have_tmux() {
        return;
    }
    let Some(p) = Project::everything() else {
        return;
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let stub = rt.block_on(Stub::start(
        Wire::Anthropic,
        vec![Reply::text("It is about features.")],
    ));
    let config = tempfile::tempdir().unwrap();
    let t = Tmux::chat(&p, stub.base_url(), config.path());
    t.wait_for("[MCP] ev ●");
    t.wait_for("anthropic · stub-model");
    // The resources are listed right after the connection; `@` opens the picker once
    // they are there.
    poll_for("the resource picker", DEADLINE, || {
        t.keys(&["@"]);
        let s = t.wait_until("the UI to take the @", |s| {
            s.contains("Enter attaches") || s.contains("› @")
        });
        if s.contains("Enter attaches") {
            return Ok(());
        }
        t.keys(&["BSpace"]);
        t.wait_until("the @ to be erased", |s| !s.contains("› @"));
        Err(s)
    });
    for k in ["f", "e", "a", "t", "u", "r", "e", "s", ".", "m", "d"] {
        t.keys(&[k]);
    }
    let s = t.wait_for(" @features.md ");
    assert!(s.contains(&format!("ev  features.md  {FEATURES}")), "{s}");
    t.keys(&["Enter"]);
    let s = t.wait_for("@ev:features.md");
    assert!(!s.contains("Enter attaches"), "the picker closed:\n{s}");
    for k in ["w", "h", "a", "t", "?", "Enter"] {
        t.keys(&[k]);
    }
    let s = t.wait_for("It is about features.");
    assert!(
        !s.contains("@ev:features.md"),
        "the tag went with the message:\n{s}"
    );
    let req = &stub.requests()[0];
    let user = req.messages().last().unwrap().clone();
    let texts: Vec<&str> = user["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b: &Value| b["text"].as_str())
        .collect();
    assert_eq!(texts[0], "what?");
    assert!(
        texts[1].starts_with(&format!("[attached resource {FEATURES} (text/markdown)")),
        "{texts:?}"
    );
    t.keys(&["C-c"]);
}
