//! The legacy HTTP+SSE transport (MCP 2024-11-05), for `type: "sse"` servers and as the
//! fallback of a `type: "http"` server that rejects the Streamable HTTP `initialize` POST.
//!
//! The client opens `GET <url>` (an event stream); the server's first event, `endpoint`,
//! names the URL (often relative, resolved against the stream's URL, and required to be on
//! the same origin) to which every message is POSTed. Every server message, responses
//! included, arrives as a `message` event on the GET stream. When that stream ends the
//! session is over, and the connection closes with the reason.
//!
//! The connection itself (queue, receiver, closing, request failures) is the one the HTTP
//! transports share ([`super::http_conn`]); [`super::http`] opens it (`connect_sse`) and
//! switches to a [`LegacySession`] when it has one.

use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{ACCEPT, CONTENT_TYPE};
use reqwest::Url;

use crate::mask::MaskedUrl;

use super::http_conn::{
    describe_status, is_event_stream, LegacySession, Shared, ACK_TIMEOUT, EVENT_STREAM_VALUE,
    JSON_VALUE,
};
use super::sse_parse::{SseEvent, SseParser};
use super::Outbound;
use crate::http::errors::{describe_send_error, error_chain};
use crate::http::limits;
use crate::http::wire::{HttpResponse, Target};

/// How long the server may take to send its `endpoint` event.
pub const ENDPOINT_WAIT: Duration = Duration::from_secs(10);

impl LegacySession {
    /// GETs the event stream and waits for its `endpoint` event; the rest of the stream is
    /// read by a background task that hands `message` events to the client.
    pub(crate) async fn open(shared: &Arc<Shared>, url: Url) -> Result<LegacySession, String> {
        let mut resp = shared
            .send(|| {
                shared
                    .request(reqwest::Method::GET, target_of(shared, &url), None, None)
                    .header(ACCEPT, EVENT_STREAM_VALUE)
            })
            .await
            .map_err(|e| describe_send_error(&url, &e))?;
        if !resp.status().is_success() {
            return Err(describe_status(shared, resp).await);
        }
        if !is_event_stream(&resp) {
            let ct = resp
                .headers()
                .get(CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("none")
                .to_string();
            return Err(format!(
                "GET {} did not open an event stream (Content-Type: {ct})",
                MaskedUrl::from(&url)
            ));
        }
        let mut parser = SseParser::new(shared.max_message_bytes);
        let mut events: Vec<SseEvent> = Vec::new();
        let mut endpoint: Option<Url> = None;
        let deadline = tokio::time::Instant::now() + ENDPOINT_WAIT;
        while endpoint.is_none() {
            let chunk = tokio::time::timeout_at(deadline, resp.chunk())
                .await
                .map_err(|_| {
                    format!(
                        "the event stream sent no \"endpoint\" event within {} s",
                        ENDPOINT_WAIT.as_secs()
                    )
                })?;
            match chunk {
                Ok(Some(c)) => parser.feed(&c, |e| events.push(e)),
                Ok(None) => {
                    return Err(
                        "the server closed the event stream before naming its message endpoint"
                            .into(),
                    )
                }
                Err(e) => return Err(format!("the event stream broke: {}", error_chain(&e))),
            }
            for ev in events.drain(..) {
                if ev.too_large {
                    return Err(limits::too_large(shared.max_message_bytes));
                }
                if endpoint.is_none() && ev.kind() == "endpoint" {
                    let text = String::from_utf8_lossy(&ev.data).trim().to_string();
                    let resolved = url
                        .join(&text)
                        .map_err(|e| format!("the endpoint event named an invalid url: {e}"))?;
                    if resolved.origin() != url.origin() {
                        return Err(format!(
                            "the server named a message endpoint on another origin ({}); refused",
                            resolved.origin().ascii_serialization()
                        ));
                    }
                    endpoint = Some(resolved);
                } else {
                    deliver_event(shared, ev);
                }
            }
        }
        let reader_shared = shared.clone();
        let task = tokio::spawn(async move { read_stream(reader_shared, resp, parser).await });
        shared.add_background(task.abort_handle());
        Ok(LegacySession {
            endpoint: endpoint.expect("endpoint set"),
        })
    }

    /// POSTs one message to the endpoint; `handshake` messages end the connection when
    /// they fail, a failed request gets an error answer.
    pub(crate) async fn post(&self, shared: &Arc<Shared>, out: Outbound, handshake: bool) {
        let id = out.request_id();
        let resp = shared
            .send(|| {
                shared
                    .request(
                        reqwest::Method::POST,
                        target_of(shared, &self.endpoint),
                        None,
                        None,
                    )
                    .header(CONTENT_TYPE, JSON_VALUE)
                    .body(out.bytes.clone())
                    .timeout(ACK_TIMEOUT)
            })
            .await;
        let resp = match resp {
            Ok(r) => r,
            Err(e) if e.is_timeout() && !handshake => {
                let why = format!(
                    "the server did not accept a message within {} s",
                    ACK_TIMEOUT.as_secs()
                );
                match id {
                    Some(id) => shared.fail_request(id, &why),
                    None => shared.warn(&why),
                }
                return;
            }
            Err(e) => {
                if !shared.is_closing() {
                    shared.close_with(describe_send_error(&self.endpoint, &e));
                }
                return;
            }
        };
        if resp.status().is_success() {
            limits::drain_ack(resp).await;
            return;
        }
        let reason = describe_status(shared, resp).await;
        match (handshake, id) {
            (true, _) => shared.close_with(reason),
            (false, Some(id)) => shared.fail_request(id, &reason),
            (false, None) => shared.warn(&format!("a notification was not accepted: {reason}")),
        }
    }
}

fn deliver_event(shared: &Shared, ev: SseEvent) {
    if ev.data.is_empty() {
        return;
    }
    if ev.kind() == "message" {
        shared.deliver(ev.data, None);
    } else {
        tracing::debug!("ignored an SSE event of type {:?}", ev.kind());
    }
}

/// The server's own URL or another one.
fn target_of(shared: &Shared, url: &Url) -> Target {
    if *url == shared.url {
        Target::Own
    } else {
        Target::Other(url.clone())
    }
}

async fn read_stream(shared: Arc<Shared>, mut resp: HttpResponse, mut parser: SseParser) {
    let mut events = Vec::new();
    let reason = loop {
        shared.backlog.wait_for_room().await;
        match resp.chunk().await {
            Ok(Some(c)) => {
                parser.feed(&c, |e| events.push(e));
                if events.iter().any(|e| e.too_large) {
                    // Responses come only on this stream: one lost would leave its call
                    // waiting, so the connection ends with the reason instead.
                    break limits::too_large(shared.max_message_bytes);
                }
                for ev in events.drain(..) {
                    deliver_event(&shared, ev);
                }
            }
            Ok(None) => {
                break "the server closed the event stream (legacy HTTP+SSE transport)".to_string()
            }
            Err(e) => {
                break format!(
                    "the event stream broke (legacy HTTP+SSE transport): {}",
                    error_chain(&e)
                )
            }
        }
    };
    if !shared.is_closing() {
        shared.close_with(reason);
    }
}
