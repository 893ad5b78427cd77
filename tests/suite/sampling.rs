//! Sampling end to end through the façade, against real servers (server-everything's
//! `trigger-sampling-request`, the Python SDK server's `ask_client`), with the scripted
//! provider standing in for the model: approve once, refuse, "always for this server",
//! review then refuse, no provider, tools in sampling.

use std::sync::Arc;
use std::time::Duration;

use harness9::engine::sampling::SamplingSource;
use harness9::host::asks::{AskAnswer, AskKind, SamplingChoice};
use harness9::Harness;
use serde_json::{json, Value};

use super::support::client::spawn_call;
use super::support::provider_stub::{Reply, Stub, Wire};
use super::support::wait::{next_ask, wait_for_tool};
use super::support::Project;

async fn open(p: &Project, stub: Option<&Stub>) -> Arc<Harness> {
    let h = p.harness();
    match stub {
        Some(stub) => h.enable_sampling(SamplingSource::Client {
            client: stub.client(),
            models: Vec::new(),
        }),
        None => h.enable_sampling(SamplingSource::Settings(Default::default())),
    }
    h.start(None).await;
    h.manager().wait_settled(Duration::from_secs(30)).await;
    Arc::new(h)
}

const TRIGGER: &str = "trigger-sampling-request";

#[tokio::test]
async fn everything_sampling_approved_refused_always_and_reviewed() {
    let Some(p) = Project::everything() else {
        return;
    };
    let stub = Stub::start(
        Wire::Anthropic,
        vec![
            Reply::text("scripted haiku"),
            Reply::text("always answer 1"),
            Reply::text("always answer 2"),
            Reply::text("reviewed answer"),
        ],
    )
    .await;
    let h = open(&p, Some(&stub)).await;
    wait_for_tool(h.registry(), "ev", TRIGGER).await;
    let mut asks = h.subscribe_asks();

    // Approved once: the provider gets the messages, the system prompt and the limit.
    let caller = spawn_call(
        &h,
        "ev",
        TRIGGER,
        json!({"prompt": "Write a haiku", "maxTokens": 7}),
    );
    let ask = next_ask(&mut asks, |_| true).await;
    assert_eq!(ask.server, "ev");
    let AskKind::Sampling { request } = &ask.kind else {
        panic!("{ask:?}")
    };
    assert_eq!(request.max_tokens, 7);
    assert!(stub.requests().is_empty(), "nothing runs before approval");
    h.answer_ask(ask.id, AskAnswer::Approve(SamplingChoice::default()))
        .unwrap();
    let out = caller.await.unwrap();
    assert!(out.contains("scripted haiku"), "{out}");
    let sent = &stub.requests()[0].body;
    assert_eq!(sent["max_tokens"], 7);
    assert_eq!(sent["system"], "You are a helpful test server.");
    assert!(
        sent["messages"].to_string().contains("Write a haiku"),
        "{sent}"
    );

    // Refused: the provider is never called; the server hears the refusal.
    let caller = spawn_call(&h, "ev", TRIGGER, json!({"prompt": "again"}));
    let ask = next_ask(&mut asks, |_| true).await;
    h.answer_ask(ask.id, AskAnswer::Refuse(String::new()))
        .unwrap();
    let out = caller.await.unwrap();
    assert!(
        out.contains("the user refused the sampling request"),
        "{out}"
    );
    assert_eq!(stub.requests().len(), 1);

    // Always for this server: this one runs, and the next asks nobody.
    let caller = spawn_call(&h, "ev", TRIGGER, json!({"prompt": "one"}));
    let ask = next_ask(&mut asks, |_| true).await;
    h.answer_ask(
        ask.id,
        AskAnswer::Approve(SamplingChoice {
            always: true,
            review: false,
        }),
    )
    .unwrap();
    assert!(caller.await.unwrap().contains("always answer 1"));
    assert_eq!(h.sampling_grants().await.len(), 1);
    let watched = h.subscribe_asks();
    let out = spawn_call(&h, "ev", TRIGGER, json!({"prompt": "two"}))
        .await
        .unwrap();
    assert!(out.contains("always answer 2"), "{out}");
    assert!(
        !watched.has_changed().unwrap(),
        "the second request asked: {:?}",
        h.pending_asks()
    );
    // Revoked: asks again; review the answer, then refuse it.
    assert!(h.revoke_sampling("ev").await.unwrap());
    let caller = spawn_call(&h, "ev", TRIGGER, json!({"prompt": "three"}));
    let ask = next_ask(&mut asks, |_| true).await;
    assert!(matches!(ask.kind, AskKind::Sampling { .. }), "{ask:?}");
    h.answer_ask(
        ask.id,
        AskAnswer::Approve(SamplingChoice {
            always: false,
            review: true,
        }),
    )
    .unwrap();
    let review = next_ask(&mut asks, |a| {
        matches!(a.kind, AskKind::SamplingReview { .. })
    })
    .await;
    let AskKind::SamplingReview { result, .. } = &review.kind else {
        panic!("{review:?}")
    };
    assert_eq!(
        result.content,
        json!({"type": "text", "text": "reviewed answer"})
    );
    assert_eq!(result.model, "stub-model");
    h.answer_ask(review.id, AskAnswer::Refuse(String::new()))
        .unwrap();
    let out = caller.await.unwrap();
    assert!(
        out.contains("the user refused the sampling request"),
        "{out}"
    );
    assert!(!out.contains("reviewed answer"), "{out}");
    assert_eq!(stub.remaining(), 0);
    // The server's log says what became of each request.
    let log: Vec<String> = h
        .server_log("ev", 200)
        .unwrap()
        .into_iter()
        .map(|l| l.text)
        .collect();
    let log = log.join("\n");
    for want in [
        "approved by the user; answered by stub-model",
        "the user refused",
        "allowed for this server; answered by stub-model",
        "the user refused the model's answer",
    ] {
        assert!(log.contains(want), "{want} not in\n{log}");
    }
    h.shutdown().await;
}

#[tokio::test]
async fn everything_sampling_without_a_provider_names_what_to_configure() {
    let Some(p) = Project::everything() else {
        return;
    };
    let resolved = harness9::engine::ProviderSettings::resolve(
        &harness9::engine::ProviderOverrides::default(),
    );
    if resolved.is_ok() {
        eprintln!("skipped: a model provider is configured in this environment");
        return;
    }
    let h = open(&p, None).await;
    wait_for_tool(h.registry(), "ev", TRIGGER).await;
    let _asks = h.subscribe_asks();
    let out = spawn_call(&h, "ev", TRIGGER, json!({"prompt": "hi"}))
        .await
        .unwrap();
    assert!(
        out.contains("harness9 cannot run sampling requests: no model provider is configured: set HARNESS9_PROVIDER"),
        "{out}"
    );
    assert!(h.pending_asks().is_empty(), "the user is not asked");
    let log: Vec<String> = h
        .server_log("ev", 200)
        .unwrap()
        .into_iter()
        .map(|l| l.text)
        .collect();
    assert!(
        log.iter()
            .any(|l| l.contains("no model provider is configured")),
        "{log:?}"
    );
    h.shutdown().await;
}

#[tokio::test]
async fn python_sampling_with_tools_preferences_and_review() {
    let Some(p) = Project::python_legacy() else {
        return;
    };
    let stub = Stub::start(
        Wire::OpenAi,
        vec![
            Reply::text("Hi there"),
            Reply::tool("weather", json!({"city": "Paris"})),
        ],
    )
    .await;
    let h = p.harness();
    h.enable_sampling(SamplingSource::Client {
        client: stub.client(),
        models: vec!["stub-mini".into(), "stub-opus-large".into()],
    });
    h.start(None).await;
    h.manager().wait_settled(Duration::from_secs(30)).await;
    let h = Arc::new(h);
    let mut asks = h.subscribe_asks();

    // Plain request, approved with review, then sent.
    let caller = spawn_call(&h, "py", "ask_client", json!({"kind": "sample"}));
    let ask = next_ask(&mut asks, |_| true).await;
    let AskKind::Sampling { request } = &ask.kind else {
        panic!("{ask:?}")
    };
    assert_eq!(request.max_tokens, 16);
    h.answer_ask(
        ask.id,
        AskAnswer::Approve(SamplingChoice {
            always: false,
            review: true,
        }),
    )
    .unwrap();
    let review = next_ask(&mut asks, |a| {
        matches!(a.kind, AskKind::SamplingReview { .. })
    })
    .await;
    h.answer_ask(review.id, AskAnswer::Approve(SamplingChoice::default()))
        .unwrap();
    let out = caller.await.unwrap();
    assert_eq!(
        out,
        r#"sampled: {"role":"assistant","content":{"type":"text","text":"Hi there"},"model":"stub-model","stopReason":"endTurn"}"#
    );
    assert_eq!(stub.requests()[0].body["max_completion_tokens"], 16);
    assert_eq!(stub.requests()[0].body.get("max_tokens"), None);

    // With tools: the hint picks a configured model, everything is passed through, and
    // the model's tool call comes back as tool_use with stopReason toolUse.
    let caller = spawn_call(&h, "py", "ask_client", json!({"kind": "sample_tools"}));
    let ask = next_ask(&mut asks, |_| true).await;
    let AskKind::Sampling { request } = &ask.kind else {
        panic!("{ask:?}")
    };
    assert_eq!(request.tools.as_ref().map(Vec::len), Some(1));
    h.answer_ask(ask.id, AskAnswer::Approve(SamplingChoice::default()))
        .unwrap();
    let out = caller.await.unwrap();
    let sent = &stub.requests()[1].body;
    assert_eq!(sent["model"], "stub-opus-large");
    assert_eq!(sent["max_completion_tokens"], 64);
    assert_eq!(sent.get("max_tokens"), None);
    assert_eq!(sent["temperature"], 0.3);
    assert_eq!(sent["stop"], json!(["STOP"]));
    assert_eq!(sent["tool_choice"], "required");
    assert_eq!(sent["tools"][0]["function"]["name"], "weather");
    assert_eq!(
        sent["messages"][0],
        json!({"role": "system", "content": "Use the weather tool."})
    );
    let answer: Value = serde_json::from_str(out.strip_prefix("sampled: ").unwrap_or(&out))
        .unwrap_or_else(|_| panic!("{out}"));
    assert_eq!(answer["model"], "stub-opus-large");
    assert_eq!(answer["stopReason"], "toolUse");
    assert_eq!(
        answer["content"],
        json!([{"type": "tool_use", "id": "call_1", "name": "weather", "input": {"city": "Paris"}}])
    );
    h.shutdown().await;
}
