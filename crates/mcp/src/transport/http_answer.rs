//! Reading one answer of the Streamable HTTP transport: a JSON body (one message or a
//! batch) or an SSE stream of messages. Every message goes to the caller with the id of
//! the response it is (read once, from its shape where it has the usual one), and the
//! answer's end says whether the wanted response came, how the stream ended and where to
//! resume it.
//!
//! Invariants: no body or event is kept past the size limit; the wanted response is held
//! back until what already arrived after it has been read (at most [`MAX_HELD_AFTER`]
//! messages), so the connection goes back to the pool before the caller, woken by the
//! response, sends its next request; a stream is read while the client's backlog has room.

use std::time::Duration;

use futures::FutureExt;
use serde_json::value::RawValue;

use super::http_conn::{is_event_stream, response_id, Shared};
use super::sse_parse::{SseEvent, SseParser};
use crate::http::errors::error_chain;
use crate::http::limits::{self, BodyError};
use crate::http::wire::HttpResponse;

/// How long to keep reading an SSE answer after its response (for connection reuse).
const AFTER_RESPONSE_GRACE: Duration = Duration::from_millis(500);
/// Messages that arrived after the response held back with it at most; past this the
/// response and they go to the client at once.
const MAX_HELD_AFTER: usize = 16;

/// How an SSE or JSON answer ended.
pub(crate) struct AnswerEnd {
    pub(crate) got_response: bool,
    /// Events that carried a message.
    pub(crate) events: u64,
    pub(crate) last_event_id: Option<String>,
    pub(crate) retry: Option<Duration>,
    /// The stream broke with an error rather than ending.
    pub(crate) error: Option<String>,
    /// A message passed the size limit (`error` says so); the answer was abandoned.
    pub(crate) too_large: bool,
}

impl Shared {
    /// Reads a JSON or SSE answer, calling `on_message(self, message, its_response_id)`
    /// for every message; `want` is the id of the response that completes it.
    pub(crate) async fn read_answer(
        &self,
        mut resp: HttpResponse,
        want: Option<u64>,
        mut on_message: impl FnMut(&Self, Vec<u8>, Option<u64>),
    ) -> AnswerEnd {
        let mut end = AnswerEnd {
            got_response: false,
            events: 0,
            last_event_id: None,
            retry: None,
            error: None,
            too_large: false,
        };
        if !is_event_stream(&resp) {
            match limits::read_body(&mut resp, self.max_message_bytes).await {
                Ok(body) => {
                    if body.iter().any(|b| !b.is_ascii_whitespace()) {
                        let id = response_id(&body);
                        let is = want.is_some() && id == want;
                        end.got_response = is || (want.is_some() && body_answers(&body, want));
                        end.events = 1;
                        on_message(self, body, id);
                    }
                }
                Err(e) => {
                    end.too_large = matches!(e, BodyError::TooLarge(_));
                    end.error = Some(e.into_message());
                }
            }
            return end;
        }
        // Boxed: a JSON answer's future stays small.
        Box::pin(self.read_events(resp, want, on_message, end)).await
    }

    /// [`Shared::read_answer`] of an event stream.
    async fn read_events(
        &self,
        mut resp: HttpResponse,
        want: Option<u64>,
        mut on_message: impl FnMut(&Self, Vec<u8>, Option<u64>),
        mut end: AnswerEnd,
    ) -> AnswerEnd {
        let mut parser = SseParser::new(self.max_message_bytes);
        let mut events: Vec<SseEvent> = Vec::new();
        // The response, held back until what already arrived after it has been read.
        let mut held: Option<(Vec<u8>, Option<u64>)> = None;
        let mut after: Vec<(Vec<u8>, Option<u64>)> = Vec::new();
        let mut ended = false;
        while !ended {
            let chunk = if held.is_some() && after.len() < MAX_HELD_AFTER {
                // Read only what is already there: when the stream's end is, the connection
                // goes back to the pool before the caller (woken by the response) sends its
                // next request, instead of that request opening a new connection.
                match resp.chunk().now_or_never() {
                    Some(c) => c,
                    None => {
                        Self::flush_held(self, &mut held, &mut after, &mut on_message);
                        continue;
                    }
                }
            } else if end.got_response {
                Self::flush_held(self, &mut held, &mut after, &mut on_message);
                self.backlog.wait_for_room().await;
                match tokio::time::timeout(AFTER_RESPONSE_GRACE, resp.chunk()).await {
                    Ok(c) => c,
                    Err(_) => break,
                }
            } else {
                self.backlog.wait_for_room().await;
                resp.chunk().await
            };
            match chunk {
                Ok(Some(c)) => parser.feed(&c, |e| events.push(e)),
                Ok(None) => ended = true,
                Err(e) => {
                    end.error = Some(format!("the stream broke: {}", error_chain(&e)));
                    ended = true;
                }
            }
            for ev in events.drain(..) {
                if ev.too_large {
                    let message = limits::too_large(self.max_message_bytes);
                    if want.is_some() && !end.got_response {
                        // It may be the response: the request fails rather than waits.
                        end.too_large = true;
                        end.error = Some(message);
                        ended = true;
                        break;
                    }
                    self.warn(&message);
                    continue;
                }
                if ev.data.is_empty() {
                    continue; // priming event
                }
                if ev.kind() != "message" {
                    tracing::debug!("ignored an SSE event of type {:?}", ev.kind());
                    continue;
                }
                end.events += 1;
                let id = response_id(&ev.data);
                let is = !end.got_response && want.is_some() && id == want;
                if is {
                    end.got_response = true;
                    held = Some((ev.data, id));
                } else if held.is_some() {
                    after.push((ev.data, id));
                } else {
                    on_message(self, ev.data, id);
                }
            }
        }
        Self::flush_held(self, &mut held, &mut after, &mut on_message);
        end.last_event_id = parser.last_event_id().map(str::to_string);
        end.retry = parser.retry_ms.map(Duration::from_millis);
        end
    }

    /// Hands over a held-back response and the messages that followed it.
    fn flush_held(
        &self,
        held: &mut Option<(Vec<u8>, Option<u64>)>,
        after: &mut Vec<(Vec<u8>, Option<u64>)>,
        on_message: &mut impl FnMut(&Self, Vec<u8>, Option<u64>),
    ) {
        if let Some((r, id)) = held.take() {
            on_message(self, r, id);
        }
        for (m, id) in after.drain(..) {
            on_message(self, m, id);
        }
    }
}

/// A JSON batch answer that contains the wanted response.
fn body_answers(body: &[u8], want: Option<u64>) -> bool {
    let Some(want) = want else { return false };
    if body.trim_ascii_start().first() != Some(&b'[') {
        return false;
    }
    let Ok(items) = serde_json::from_slice::<Vec<&RawValue>>(body) else {
        return false;
    };
    items
        .iter()
        .any(|i| response_id(i.get().as_bytes()) == Some(want))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn response_ids() {
        assert_eq!(
            response_id(br#"{"jsonrpc":"2.0","id":4,"result":{}}"#),
            Some(4)
        );
        assert_eq!(
            response_id(br#"{"jsonrpc":"2.0","id":4,"error":{}}"#),
            Some(4)
        );
        assert_eq!(
            response_id(br#"{"result":{},"jsonrpc":"2.0","id":12}"#),
            Some(12)
        );
        assert_eq!(
            response_id(br#" {"id": 7, "jsonrpc":"2.0", "result":1}"#),
            Some(7)
        );
        assert_eq!(
            response_id(br#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#),
            None
        );
        assert_eq!(response_id(br#"{"jsonrpc":"2.0","method":"x"}"#), None);
        assert_eq!(
            response_id(br#"{"jsonrpc":"2.0","id":"s1","result":{}}"#),
            None
        );
        assert_eq!(
            response_id(br#"{"jsonrpc":"2.0","id":04,"result":{}}"#),
            None
        );
        assert_eq!(response_id(b"[1]"), None);
        assert!(body_answers(
            br#"[{"jsonrpc":"2.0","id":9,"result":{}}]"#,
            Some(9)
        ));
        assert!(!body_answers(
            br#"{"jsonrpc":"2.0","id":9,"result":{}}"#,
            Some(9)
        ));
    }
}
