//! A panic while answering one of a server's requests: the server gets an error for
//! that request, and the connection and the next request work, against our fixture (its
//! `server_request` tool sends a ping and a sampling request and reports the answers).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use harness9::mcp::handler::{ClientHandler, HandlerFuture, Handles};
use harness9::mcp::requests::{CreateMessageRequest, CreateMessageResult};
use harness9::mcp::{LogSource, RequestOptions};
use serde_json::json;

use super::support::client::spawn_client_handled;
use super::support::fixture_bin;

/// Panics building its first answer, panics while answering the second (after it has
/// had to wait, so on a task of its own), and answers from then on.
#[derive(Default)]
struct PanicsTwice {
    calls: AtomicUsize,
}

impl ClientHandler for PanicsTwice {
    fn handles(&self) -> Handles {
        Handles {
            sampling: true,
            ..Handles::default()
        }
    }

    fn create_message(&self, _request: CreateMessageRequest) -> HandlerFuture<CreateMessageResult> {
        match self.calls.fetch_add(1, Ordering::SeqCst) {
            0 => panic!("a handler that panics on purpose (at once)"),
            1 => Box::pin(async {
                tokio::task::yield_now().await;
                panic!("a handler that panics on purpose (while answering)")
            }),
            _ => Box::pin(async {
                Ok(CreateMessageResult {
                    role: "assistant".into(),
                    content: json!({"type": "text", "text": "hello"}),
                    model: "test-model".into(),
                    stop_reason: None,
                })
            }),
        }
    }
}

#[tokio::test]
async fn a_panicking_handler_answers_an_error_and_the_next_request_works() {
    let handler = Arc::new(PanicsTwice::default());
    let (client, log) = spawn_client_handled(fixture_bin(), &[], &[], Some(handler.clone()))
        .await
        .expect("connect");
    // Without containment the first panic ends the connection's reader and no answer
    // ever comes: the timeout turns that into a failure instead of a hang.
    let opts = || RequestOptions {
        timeout: Some(Duration::from_secs(10)),
        ..RequestOptions::default()
    };
    for round in ["at once", "while answering"] {
        let r = client
            .call_tool("server_request", None, opts())
            .await
            .unwrap_or_else(|e| panic!("the call after a panic {round} failed: {e}"));
        assert_eq!(
            r.to_text(),
            "ping: ok; sampling: error -32603",
            "panic {round}"
        );
    }
    let r = client
        .call_tool("server_request", None, opts())
        .await
        .expect("the request after the panics is answered");
    let text = r.to_text();
    assert!(
        text.starts_with("ping: ok; sampling: ok ") && text.contains("hello"),
        "{text}"
    );
    assert_eq!(handler.calls.load(Ordering::SeqCst), 3);
    let noted: Vec<String> = log
        .tail(100)
        .into_iter()
        .filter(|l| l.source == LogSource::Host && l.level == "error")
        .map(|l| l.text)
        .collect();
    assert_eq!(noted.len(), 2, "{noted:?}");
    assert!(
        noted[0].contains("sampling/createMessage") && noted[0].contains("panics on purpose"),
        "{noted:?}"
    );
    assert!(client.closed_reason().is_none());
    client.close().await;
}
