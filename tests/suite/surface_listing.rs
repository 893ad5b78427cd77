//! Listings through the façade against our fixture (pages, capabilities a server lacks,
//! a stopped server) and the Python SDK server (completion, titles).

use harness9::mcp::features::CompletionRef;
use serde_json::{json, Map};

use super::support::{external, Project};

#[tokio::test]
async fn fixture_pages_resources_and_prompts_through_the_facade() {
    let p = Project::new(&json!({"mcpServers": {
        "fx": {"command": super::support::fixture_bin(), "env": {"REFSERVER_RESOURCES": "2500", "REFSERVER_PROMPTS": "1001"}},
        "plain": {"command": super::support::fixture_bin()}
    }}));
    let h = p.started().await;
    let resources = h.resources(None).await.unwrap();
    let prompts = h.prompts(None).await.unwrap();
    assert_eq!(resources.len(), 2500);
    assert_eq!(resources[2499].resource.uri, "fixture://resource/2499");
    assert_eq!(resources[0].resource.title.as_deref(), Some("Resource 0"));
    assert_eq!(prompts.len(), 1001);
    assert_eq!(h.resources(Some("plain")).await.unwrap(), vec![]);
    let err = h
        .read_resource("plain", "fixture://resource/1")
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "server \"plain\" does not offer resources");
    let read = h.read_resource("fx", "fixture://resource/1").await.unwrap();
    assert_eq!(read.contents[0].text.as_deref(), Some("resource 1"));
    let mut args = Map::new();
    args.insert("topic".into(), json!("tides"));
    let got = h.get_prompt("fx", "prompt-1000", args).await.unwrap();
    assert_eq!(got.to_text(), "user: prompt-1000 about tides");
    let err = h
        .get_prompt("fx", "prompt-1000", Map::new())
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "server \"fx\": the server answered prompts/get with error -32602: Missing required argument: topic"
    );
    h.manager().stop("fx").await;
    let err = h.resources(Some("fx")).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "server \"fx\" is not connected: it is stopped"
    );
    h.shutdown().await;
}

#[tokio::test]
async fn python_completion_and_titles() {
    let (Some(python), Some(server)) = (external("H9_PYTHON"), external("H9_PY_SERVER")) else {
        return;
    };
    let p = Project::new(&json!({"mcpServers": {"py": {"command": python, "args": [server]}}}));
    let h = p.started().await;
    let done = h
        .complete(
            "py",
            &CompletionRef::Prompt {
                name: "review".into(),
            },
            "focus",
            "s",
            &Map::new(),
        )
        .await
        .unwrap();
    assert_eq!(done.values, ["security", "speed", "style"]);
    let prompts = h.prompts(Some("py")).await.unwrap();
    assert_eq!(prompts[0].prompt.title.as_deref(), Some("Code review"));
    h.shutdown().await;
}
