//! The model provider failing or stopping short: rate limits and busy errors retried (in
//! the status and in the stream), errors after part of an answer, answers and tool calls
//! cut off at the output token limit, and errors that end the turn with a clear message.

use std::sync::Arc;

use harness9::engine::history::{history, ChatItem};
use harness9::engine::{
    CallStatus, ConversationChoice, Engine, EngineOptions, TurnOutcome, CUT_OFF_NOTICE,
};
use serde_json::json;

use super::support::provider_stub::{Reply, Stub, Wire};
use super::support::turns::*;
use super::support::Project;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limits_and_server_errors_are_retried() {
    let project = Project::new(&json!({"mcpServers": {}}));
    let stub = Stub::start(
        Wire::Anthropic,
        vec![
            Reply::status(429, Some("1"), "slow down"),
            Reply::status(529, None, "overloaded"),
            Reply::text("finally"),
        ],
    )
    .await;
    let registry = Arc::new(harness9::tools::ToolRegistry::new());
    let engine = Engine::new(project.path(), registry, options(&project, &stub)).unwrap();
    let events = run(&engine, "hi").await;
    assert_eq!(completed(&events), "finally");
    assert_eq!(
        retries(&events),
        vec![
            (1, 1000, "the provider answered 429: slow down".to_string()),
            (2, 20, "the provider answered 529: overloaded".to_string())
        ]
    );
    assert_eq!(stub.requests().len(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn busy_errors_in_the_stream_are_retried_before_the_answer_starts() {
    let project = Project::new(&json!({"mcpServers": {}}));
    let registry = Arc::new(harness9::tools::ToolRegistry::new());
    // One retry budget for statuses and errors in the stream.
    let stub = Stub::start(
        Wire::Anthropic,
        vec![
            Reply::status(529, None, "Overloaded"),
            Reply::stream_error("", "overloaded_error", "Overloaded"),
            Reply::stream_error("", "api_error", "Internal server error"),
            Reply::text("finally"),
        ],
    )
    .await;
    let engine = Engine::new(project.path(), registry.clone(), options(&project, &stub)).unwrap();
    let events = run(&engine, "hi").await;
    assert_eq!(completed(&events), "finally");
    assert_eq!(streamed_text(&events), "finally");
    assert_eq!(
        retries(&events),
        vec![
            (1, 10, "the provider answered 529: Overloaded".to_string()),
            (
                2,
                20,
                "the provider reported overloaded_error while streaming: Overloaded".to_string()
            ),
            (
                3,
                40,
                "the provider reported api_error while streaming: Internal server error"
                    .to_string()
            ),
        ]
    );
    assert_eq!(stub.requests().len(), 4);

    let stub = Stub::start(
        Wire::OpenAi,
        vec![
            Reply::stream_error("", "server_error", "The server had an error"),
            Reply::text("ok"),
        ],
    )
    .await;
    let engine = Engine::new(project.path(), registry, options(&project, &stub)).unwrap();
    let events = run(&engine, "hi").await;
    assert_eq!(completed(&events), "ok");
    assert_eq!(
        retries(&events),
        vec![(
            1,
            10,
            "the provider reported server_error while streaming: The server had an error"
                .to_string()
        )]
    );
    assert_eq!(stub.requests().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_busy_error_after_part_of_the_answer_fails_the_turn_without_repeating_it() {
    let project = Project::new(&json!({"mcpServers": {}}));
    let registry = Arc::new(harness9::tools::ToolRegistry::new());
    for wire in [Wire::Anthropic, Wire::OpenAi] {
        let stub = Stub::start(
            wire,
            vec![
                Reply::stream_error("Half of an answer", "overloaded_error", "Overloaded"),
                Reply::text("never sent"),
            ],
        )
        .await;
        let engine =
            Engine::new(project.path(), registry.clone(), options(&project, &stub)).unwrap();
        let events = run(&engine, "hi").await;
        assert_eq!(
            outcome(&events),
            &TurnOutcome::Failed {
                error: "the model provider failed in the middle of the answer (overloaded_error: Overloaded); the answer is incomplete, send your message again".into(),
                code: "answer-incomplete",
            },
            "{wire:?}"
        );
        assert_eq!(streamed_text(&events), "Half of an answer", "{wire:?}");
        assert_eq!(retries(&events), vec![], "{wire:?}");
        assert_eq!(stub.requests().len(), 1, "{wire:?}");
        assert_eq!(engine.messages().len(), 1, "only the prompt is kept");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn busy_errors_in_the_stream_fail_the_turn_after_the_retries() {
    let project = Project::new(&json!({"mcpServers": {}}));
    let registry = Arc::new(harness9::tools::ToolRegistry::new());
    let busy = Reply::stream_error("", "rate_limit_exceeded", "Rate limit reached");
    let stub = Stub::start(Wire::OpenAi, vec![busy; 4]).await;
    let engine = Engine::new(project.path(), registry.clone(), options(&project, &stub)).unwrap();
    let events = run(&engine, "hi").await;
    assert_eq!(
        outcome(&events),
        &TurnOutcome::Failed {
            error: "the model provider was still busy after 3 retries (rate_limit_exceeded: Rate limit reached); try again in a minute".into(),
            code: "provider-busy",
        }
    );
    assert_eq!(retries(&events).len(), 3);
    assert_eq!(stub.requests().len(), 4);

    // Other errors in the stream are not retried.
    let stub = Stub::start(
        Wire::Anthropic,
        vec![Reply::stream_error(
            "",
            "invalid_request_error",
            "prompt is too long",
        )],
    )
    .await;
    let engine = Engine::new(project.path(), registry, options(&project, &stub)).unwrap();
    let events = run(&engine, "hi").await;
    assert_eq!(
        outcome(&events),
        &TurnOutcome::Failed {
            error: "the model provider sent an error: invalid_request_error: prompt is too long"
                .into(),
            code: "provider-error",
        }
    );
    assert_eq!(stub.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_cut_off_at_the_token_limit_is_marked_in_the_outcome_and_the_history() {
    let project = Project::new(&json!({"mcpServers": {}}));
    let registry = Arc::new(harness9::tools::ToolRegistry::new());
    for wire in [Wire::Anthropic, Wire::OpenAi] {
        let stub = Stub::start(
            wire,
            vec![
                Reply::cut_off("The first half of a long"),
                Reply::text(" answer."),
            ],
        )
        .await;
        let engine =
            Engine::new(project.path(), registry.clone(), options(&project, &stub)).unwrap();
        let events = run(&engine, "write a lot").await;
        assert_eq!(
            outcome(&events),
            &TurnOutcome::CutOff {
                answer: "The first half of a long".into(),
                notice: CUT_OFF_NOTICE.into(),
            },
            "{wire:?}"
        );
        assert_eq!(streamed_text(&events), "The first half of a long");
        let id = engine.conversation_id().to_string();
        drop(engine);

        // Reopened, the conversation says so after the answer.
        let opts = EngineOptions {
            conversation: ConversationChoice::Resume(id),
            ..options(&project, &stub)
        };
        let reopened = Engine::new(project.path(), registry.clone(), opts).unwrap();
        assert_eq!(
            serde_json::to_value(history(&reopened.messages())).unwrap(),
            json!([
                {"kind": "user", "text": "write a lot"},
                {"kind": "assistant", "text": "The first half of a long"},
                {"kind": "notice", "text": CUT_OFF_NOTICE},
            ]),
            "{wire:?}"
        );
        // The model gets its text back as any other answer when the user asks for the rest.
        let events = run(&reopened, "go on").await;
        assert_eq!(completed(&events), " answer.");
        let next = &stub.requests()[1];
        let assistant = match wire {
            Wire::Anthropic => {
                json!({"role": "assistant", "content": [{"type": "text", "text": "The first half of a long"}]})
            }
            Wire::OpenAi => json!({"role": "assistant", "content": "The first half of a long"}),
        };
        let at = usize::from(wire == Wire::OpenAi); // after OpenAI's system message
        assert_eq!(next.messages()[at + 1], assistant, "{wire:?}");
        assert!(!next.body.to_string().contains("cut_off"));
        assert_eq!(
            history(&reopened.messages())
                .iter()
                .filter(|i| matches!(i, ChatItem::Notice { .. }))
                .count(),
            1
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_call_cut_off_at_the_token_limit_is_not_run_and_the_model_is_told_why() {
    let project = Project::fixture(json!({}));
    let harness = started(&project).await;
    for wire in [Wire::Anthropic, Wire::OpenAi] {
        let stub = Stub::start(
            wire,
            vec![
                Reply::CutOff {
                    text: "Echoing it.".into(),
                    call: Some(("mcp__fx__echo".into(), r#"{"text": "a very long te"#.into())),
                },
                Reply::text("I will send less."),
            ],
        )
        .await;
        let engine = harness.engine(options(&project, &stub)).unwrap();
        let events = run(&engine, "echo a lot").await;
        assert_eq!(completed(&events), "I will send less.", "{wire:?}");
        let ends = call_ends(&events);
        assert_eq!(ends.len(), 1);
        let (name, status, error, output) = &ends[0];
        assert_eq!(
            (name.as_str(), *status),
            ("mcp__fx__echo", CallStatus::Error)
        );
        let error = error.as_deref().unwrap();
        assert!(
            error.starts_with("the arguments were not valid JSON")
                && error.ends_with(
                    "; the answer reached the output token limit while this call was written"
                ),
            "{error}"
        );
        assert!(output.contains(error), "{output}");
        // The turn went on, so the history holds no cut-off notice.
        assert!(!history(&engine.messages())
            .iter()
            .any(|i| matches!(i, ChatItem::Notice { .. })));
    }
    harness.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn provider_errors_fail_the_turn_with_a_clear_message() {
    let project = Project::new(&json!({"mcpServers": {}}));
    let stub = Stub::start(
        Wire::OpenAi,
        vec![Reply::status(401, None, "Incorrect API key provided")],
    )
    .await;
    let registry = Arc::new(harness9::tools::ToolRegistry::new());
    let engine = Engine::new(project.path(), registry, options(&project, &stub)).unwrap();
    let events = run(&engine, "hi").await;
    assert_eq!(
        outcome(&events),
        &TurnOutcome::Failed {
            error: "the model provider rejected the request with 401 (Incorrect API key provided); check that OPENAI_API_KEY holds a valid API key".into(),
            code: "unauthorized",
        }
    );
    assert_eq!(stub.requests().len(), 1, "a 401 is not retried");
}
