//! A provider's stream is read with a bound on one event: a stream without line ends fails
//! with an error that says what to check, rather than growing memory until it ends.

use std::sync::Arc;

use futures::StreamExt;
use harness9::engine::provider::{ChatRequest, RequestOptions, MAX_PROVIDER_EVENT_BYTES};
use harness9::engine::Message;

use super::support::provider_stub::{Reply, Stub, Wire};

const MIB: usize = 1024 * 1024;

fn request() -> ChatRequest {
    ChatRequest {
        system: None,
        messages: vec![Arc::new(Message::user_text("hello"))].into(),
        tools: Vec::new().into(),
        options: RequestOptions::default(),
    }
}

#[tokio::test]
async fn a_stream_without_line_ends_fails_rather_than_growing() {
    for (wire, path, var) in [
        (Wire::Anthropic, "/v1/messages", "ANTHROPIC_BASE_URL"),
        (Wire::OpenAi, "/chat/completions", "OPENAI_BASE_URL"),
    ] {
        // One-MiB chunks, two more than the limit holds, and not one line end.
        let chunks = vec!["x".repeat(MIB); MAX_PROVIDER_EVENT_BYTES / MIB + 2];
        let stub = Stub::start(wire, vec![Reply::Raw(chunks)]).await;
        let mut stream = stub.client().stream(request());
        let error = match stream.next().await {
            Some(Err(e)) => e,
            other => panic!("{wire:?}: {other:?} from a stream of x, not the error"),
        };
        assert_eq!(
            error.to_string(),
            format!(
                "the model provider at {}{path} sent a stream event larger than 16 MiB (or a \
                 stream without line ends), so harness9 stopped reading it; check that {var} \
                 points at the provider's API",
                stub.base_url()
            ),
            "{wire:?}"
        );
        assert!(
            stream.next().await.is_none(),
            "{wire:?}: the stream goes on"
        );
    }
}
