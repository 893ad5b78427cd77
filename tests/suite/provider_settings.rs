//! Provider settings through the façade, against the stub providers (the real Anthropic and
//! OpenAI wire formats over local HTTP): keep a key in the (in-memory) keychain and never
//! show it back, test the connection (success, a refused key, nothing listening), and an
//! engine that takes a change at its next turn.

use std::time::Duration;

use harness9::engine::provider::settings::ProviderKind;
use harness9::engine::provider::setup::{KeySource, KeyState, ProviderChange};
use harness9::engine::{EngineOptions, Event};
use harness9::mcp::auth::AuthContext;
use harness9::{Harness, HarnessOptions};
use serde_json::json;

use super::support::provider_stub::{Reply, Stub, Wire, TEST_KEY};
use super::support::turns::options;
use super::support::Project;

/// A harness whose settings file and keychain are the test's own.
fn harness(project: &Project, config: &tempfile::TempDir) -> Harness {
    Harness::open(
        project.path(),
        HarnessOptions {
            auth: Some(AuthContext::memory()),
            ..project.harness_options()
        },
    )
    .with_settings_file(config.path().join("settings.json"))
}

fn change(stub: &Stub, wire: Wire, key: Option<&str>) -> ProviderChange {
    ProviderChange {
        provider: match wire {
            Wire::Anthropic => ProviderKind::Anthropic,
            Wire::OpenAi => ProviderKind::OpenAi,
        },
        model: "stub-model".into(),
        base_url: stub.base_url(),
        key_source: KeySource::Keychain,
        api_key: key.map(harness9::engine::provider::settings::ApiKey::new),
    }
}

async fn keychain_key_and_test_connection(wire: Wire) {
    let project = Project::new(&json!({"mcpServers": {}}));
    let config = tempfile::tempdir().unwrap();
    let h = harness(&project, &config);
    let stub = Stub::start(wire, vec![Reply::text("pong")]).await;
    assert_eq!(h.provider_settings().await.key, KeyState::Missing);

    let view = h
        .save_provider_settings(change(&stub, wire, Some(TEST_KEY)))
        .await
        .unwrap();
    assert_eq!(
        (
            view.key.clone(),
            view.key_text.as_str(),
            view.base_url.clone()
        ),
        (KeyState::Keychain, "set in keychain", stub.base_url())
    );
    // The key is in neither the view nor the settings file.
    let shown = serde_json::to_string(&view).unwrap();
    let file = std::fs::read_to_string(config.path().join("settings.json")).unwrap();
    assert!(
        !shown.contains(TEST_KEY) && !file.contains(TEST_KEY),
        "{shown}\n{file}"
    );
    assert!(file.contains("\"keyInKeychain\": true"), "{file}");

    let check = h.test_provider(None).await;
    assert!(check.ok, "{check:?}");
    let sent = &stub.requests()[0];
    match wire {
        Wire::Anthropic => {
            assert_eq!(sent.header("x-api-key"), Some(TEST_KEY));
            assert_eq!(sent.body["max_tokens"], 1);
        }
        Wire::OpenAi => {
            assert_eq!(
                sent.header("authorization"),
                Some(format!("Bearer {TEST_KEY}").as_str())
            );
            assert_eq!(sent.body["max_completion_tokens"], 1);
        }
    }
    assert_eq!(sent.body["model"], "stub-model");

    // A key typed but not kept is tested as it is, and the refusal says so.
    let check = h
        .test_provider(Some(change(&stub, wire, Some("sk-wrong"))))
        .await;
    assert!(!check.ok);
    assert!(
        check.message.starts_with("the key was refused (401"),
        "{}",
        check.message
    );
    // The kept key is still the good one.
    assert!(h.test_provider(None).await.ok || stub.remaining() == 0);
}

#[tokio::test]
async fn anthropic_key_in_the_keychain_and_test_connection() {
    keychain_key_and_test_connection(Wire::Anthropic).await;
}

#[tokio::test]
async fn openai_key_in_the_keychain_and_test_connection() {
    keychain_key_and_test_connection(Wire::OpenAi).await;
}

#[tokio::test]
async fn test_connection_says_when_nothing_answers() {
    let project = Project::new(&json!({"mcpServers": {}}));
    let config = tempfile::tempdir().unwrap();
    let h = harness(&project, &config);
    // A port that was free a moment ago: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/v1");
    let check = h
        .test_provider(Some(ProviderChange {
            provider: ProviderKind::OpenAi,
            model: "m".into(),
            base_url: url.clone(),
            key_source: KeySource::Env {
                var: "H9_TEST_UNSET_KEY_VAR".into(),
            },
            api_key: None,
        }))
        .await;
    assert!(!check.ok);
    assert!(
        check
            .message
            .starts_with(&format!("nothing answers at {url} (connection refused)")),
        "{}",
        check.message
    );
    // Without a key for the official API, the test says what to set instead.
    let check = h
        .test_provider(Some(ProviderChange {
            provider: ProviderKind::Anthropic,
            model: String::new(),
            base_url: String::new(),
            key_source: KeySource::Keychain,
            api_key: None,
        }))
        .await;
    assert!(!check.ok);
    assert!(
        check
            .message
            .starts_with("no API key for the anthropic provider is kept in in memory only"),
        "{}",
        check.message
    );
}

/// An engine made from the settings uses a change from its next turn on.
#[tokio::test]
async fn a_saved_change_applies_to_the_next_turn() {
    let project = Project::new(&json!({"mcpServers": {}}));
    let config = tempfile::tempdir().unwrap();
    let h = harness(&project, &config);
    let first = Stub::start(Wire::Anthropic, vec![Reply::text("from the first")]).await;
    let second = Stub::start(Wire::OpenAi, vec![Reply::text("from the second")]).await;
    h.save_provider_settings(change(&first, Wire::Anthropic, Some(TEST_KEY)))
        .await
        .unwrap();
    let engine = h
        .open_engine(EngineOptions {
            data_dir: project.data.path().to_path_buf(),
            ..EngineOptions::default()
        })
        .await
        .unwrap();
    let answer = |events: Vec<Event>| {
        events
            .into_iter()
            .find_map(|e| match e {
                Event::TurnEnd { outcome, .. } => Some(format!("{outcome:?}")),
                Event::TurnStart { .. }
                | Event::ModelRequest { .. }
                | Event::Retry { .. }
                | Event::TextDelta { .. }
                | Event::ToolInputPartial { .. }
                | Event::ToolCallStart { .. }
                | Event::ApprovalRequest { .. }
                | Event::ToolCallProgress { .. }
                | Event::ToolCallEnd { .. }
                | Event::Notice { .. } => None,
            })
            .unwrap()
    };
    let turn = engine.send("one").unwrap();
    let events = tokio::time::timeout(Duration::from_secs(30), turn.collect())
        .await
        .unwrap();
    assert!(answer(events).contains("from the first"));
    h.save_provider_settings(change(&second, Wire::OpenAi, Some(TEST_KEY)))
        .await
        .unwrap();
    let turn = engine.send("two").unwrap();
    let events = tokio::time::timeout(Duration::from_secs(30), turn.collect())
        .await
        .unwrap();
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::TurnStart { provider, .. } if provider == "openai")),
        "{events:?}"
    );
    assert!(answer(events).contains("from the second"));
    assert_eq!(engine.provider().kind, "openai");
    assert_eq!(second.requests().len(), 1);
}

/// Permission rules through the façade: listed, changed and revoked, and a running engine
/// follows them from its next turn on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn permission_rules_apply_to_the_next_turn() {
    use harness9::engine::permissions::{PermissionRule, PermissionStore};
    use harness9::engine::{CallStatus, ToolPermission};
    let project =
        Project::new(&json!({"mcpServers": {"fx": {"command": super::support::fixture_bin()}}}));
    let config = tempfile::tempdir().unwrap();
    let h = harness(&project, &config)
        .with_permission_store(PermissionStore::in_dir(project.data.path()));
    h.start(None).await;
    h.manager().wait_settled(Duration::from_secs(30)).await;
    let stub = Stub::start(
        Wire::Anthropic,
        vec![
            Reply::tool("mcp__fx__echo", json!({"text": "a"})),
            Reply::text("one"),
            Reply::tool("mcp__fx__echo", json!({"text": "b"})),
            Reply::text("two"),
        ],
    )
    .await;
    let engine = h.open_engine(options(&project, &stub)).await.unwrap();
    assert_eq!(h.permission_rules().await, Vec::new());
    let rules = h
        .set_permission("mcp__fx__*", Some(ToolPermission::Deny))
        .await
        .unwrap();
    assert_eq!(
        rules,
        vec![PermissionRule {
            tool: "mcp__fx__*".into(),
            permission: ToolPermission::Deny
        }]
    );
    let status = |events: &[Event]| {
        events
            .iter()
            .find_map(|e| match e {
                Event::ToolCallEnd { status, .. } => Some(*status),
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
            .unwrap()
    };
    let run = |prompt: &'static str| {
        let turn = engine.send(prompt).unwrap();
        async move {
            tokio::time::timeout(Duration::from_secs(30), turn.collect())
                .await
                .unwrap()
        }
    };
    assert_eq!(status(&run("first").await), CallStatus::Denied);
    assert_eq!(
        h.set_permission("mcp__fx__*", None).await.unwrap(),
        Vec::new()
    );
    assert_eq!(status(&run("second").await), CallStatus::Ok);
    assert!(h
        .set_permission("  ", Some(ToolPermission::Allow))
        .await
        .is_err());
    h.shutdown().await;
}
