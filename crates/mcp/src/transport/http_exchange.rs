//! The HTTP exchanges of the Streamable HTTP transport, one per outbound message: the
//! handshake's `initialize` (which starts the session, or the legacy fallback), a request
//! (its answer read, a cut SSE answer resumed), a notification or answer (acknowledged
//! with `202`), and the optional GET stream for messages the server sends on its own.
//!
//! Every POST carries the message's bytes as the client wrote them and the headers it
//! gave ([`Outbound::era`]); the transport adds the configured headers and the session id.
//! A `404` on a message that carried the session id means the server lost the session:
//! the transport says so ([`Inbound::SessionLost`]) with the request handed back unsent,
//! and leaves the new handshake and the repetition to the client.

use std::sync::Arc;

use reqwest::header::{HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE};
use reqwest::StatusCode;

use super::http::{DEFAULT_RETRY, MAX_IDLE_RESUMES, STREAM_BROKEN};
use super::http_answer::AnswerEnd;
use super::http_conn::{
    describe_status, is_event_stream, LegacySession, SessionSnapshot, Shared, ACK_TIMEOUT,
    EVENT_STREAM_VALUE, JSON_VALUE, SESSION_HEADER, TRANSPORT_ERROR_CODE,
};
use super::{mcp_headers, Inbound, Outbound};
use crate::http::errors::{describe_send_error, describe_status_parts};
use crate::http::limits;
use crate::http::wire::{Exchange, HttpResponse, Target};
use crate::log::LogSource;

/// `Accept` of every POST.
const ACCEPT_POST: HeaderValue = HeaderValue::from_static("application/json, text/event-stream");
const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");

/// An event id as a header value (one that cannot be is sent empty: the stream starts
/// over rather than resuming somewhere else).
fn event_value(id: &str) -> HeaderValue {
    HeaderValue::from_str(id).unwrap_or_else(|_| HeaderValue::from_static(""))
}

impl Shared {
    pub(crate) fn post_builder(
        &self,
        out: &Outbound,
        session: Option<&SessionSnapshot>,
    ) -> Exchange {
        self.request(reqwest::Method::POST, Target::Own, session, Some(&out.era))
            .header(ACCEPT, ACCEPT_POST)
            .header(CONTENT_TYPE, JSON_VALUE)
            .body(out.bytes.clone())
    }

    /// The handshake's `initialize`: POSTed without session; its answer starts the
    /// session. The first one falls back to the legacy transport on 400/404/405 and ends
    /// the connection when it fails; one that starts a new session fails only itself (the
    /// client then gives up the connection).
    pub(crate) async fn initialize(self: Arc<Self>, out: Outbound) {
        let id = out.request_id().unwrap_or_default();
        let renewing = self.snapshot().epoch > 0;
        let resp = match self.send(|| self.post_builder(&out, None)).await {
            Ok(r) => r,
            Err(e) => return self.close_with(describe_send_error(&self.url, &e)),
        };
        let status = resp.status();
        if !status.is_success() {
            let reason = describe_status(&self, resp).await;
            if renewing {
                return self.fail_request(id, &reason);
            }
            if matches!(status.as_u16(), 400 | 404 | 405) {
                self.log.push(
                    LogSource::Host,
                    "info",
                    &format!("initialize over Streamable HTTP failed ({reason}); trying the legacy HTTP+SSE transport"),
                );
                match LegacySession::open(&self, self.url.clone()).await {
                    Ok(l) => {
                        self.log.push(
                            LogSource::Host,
                            "info",
                            "using the legacy HTTP+SSE transport",
                        );
                        self.set_legacy(l);
                        if let Some(legacy) = self.legacy() {
                            legacy.post(&self, out, true).await;
                        }
                    }
                    Err(legacy_reason) => self.close_with(format!(
                        "{reason}; the legacy HTTP+SSE transport did not work either: {legacy_reason}"
                    )),
                }
                return;
            }
            return self.close_with(reason);
        }
        self.take_session_id(&resp);
        let end = self
            .read_answer(resp, Some(id), |this, msg, rid| {
                this.deliver_known(msg, rid, None)
            })
            .await;
        if !end.got_response {
            let why = end.error.unwrap_or_else(|| "the stream ended".to_string());
            let reason = format!("the server did not answer initialize ({why})");
            if renewing {
                self.fail_request(id, &reason);
            } else {
                self.close_with(reason);
            }
        }
    }

    /// Keeps the session the answer to `initialize` starts (a new number even without id).
    fn take_session_id(&self, resp: &HttpResponse) {
        let mut s = self.session.lock();
        s.id = None;
        s.epoch += 1;
        if let Some(v) = resp.headers().get(&SESSION_HEADER) {
            let visible = !v.is_empty() && v.as_bytes().iter().all(|b| (0x21..=0x7e).contains(b));
            // A copy: the response's own value may share the buffer the head was read into.
            if let Some(mut v) = visible
                .then(|| HeaderValue::from_bytes(v.as_bytes()).ok())
                .flatten()
            {
                v.set_sensitive(true);
                s.id = Some(v);
            } else {
                drop(s);
                self.warn("the server sent an invalid Mcp-Session-Id (not visible ASCII); ignored");
            }
        }
    }

    /// The server lost session `epoch`: the client starts a new one and sends `request`
    /// again.
    fn session_lost(&self, epoch: u64, request: Option<Outbound>) {
        if self.is_closing() {
            return;
        }
        let _ = self.inbound.send(Inbound::SessionLost {
            session: epoch,
            request: request.map(Box::new),
        });
    }

    /// A notification or a response to a server request: POST, expect 202 (or 200).
    pub(crate) async fn post_other(self: Arc<Self>, out: Outbound) {
        let snap = self.snapshot();
        let resp = match self
            .send(|| self.post_builder(&out, Some(&snap)).timeout(ACK_TIMEOUT))
            .await
        {
            Ok(r) => r,
            Err(e) if e.is_timeout() => {
                self.warn(&format!(
                    "the server did not acknowledge a notification within {} s",
                    ACK_TIMEOUT.as_secs()
                ));
                return;
            }
            Err(e) => {
                if !self.is_closing() {
                    self.close_with(describe_send_error(&self.url, &e));
                }
                return;
            }
        };
        let status = resp.status();
        if status == StatusCode::NOT_FOUND && snap.id.is_some() {
            limits::drain_ack(resp).await;
            return self.session_lost(snap.epoch, None);
        }
        if status.is_success() {
            // Drain the (normally empty) body so the connection can be reused.
            limits::drain_ack(resp).await;
        } else {
            let reason = describe_status(&self, resp).await;
            self.warn(&format!("a notification was not accepted: {reason}"));
        }
    }

    /// A request: POST, read its answer (resuming a cut stream). Runs in its own task,
    /// registered in `inflight`.
    pub(crate) async fn post_request(self: Arc<Self>, out: Outbound) {
        /// Takes the request out of `inflight` when its task ends (unless the request was
        /// sent again meanwhile, by another task).
        struct Unregister<'a>(&'a Shared, u64);
        impl Drop for Unregister<'_> {
            fn drop(&mut self) {
                let mut inflight = self.0.inflight.lock();
                let mine = tokio::task::try_id();
                if inflight.get(&self.1).is_some_and(|t| Some(t.id()) == mine) {
                    inflight.remove(&self.1);
                }
            }
        }
        let id = out.request_id().unwrap_or_default();
        let _unregister = Unregister(&self, id);
        let snap = self.snapshot();
        let resp = match self.send(|| self.post_builder(&out, Some(&snap))).await {
            Ok(r) => r,
            Err(e) => {
                if !self.is_closing() {
                    self.close_with(describe_send_error(&self.url, &e));
                }
                return;
            }
        };
        self.answered(out, &snap, resp).await;
    }

    /// Reads the answer `resp` to the request `out`, POSTed under `snap`, and hands it on
    /// (or fails the request, or reports the session lost, or resumes a cut stream).
    pub(crate) async fn answered(&self, out: Outbound, snap: &SessionSnapshot, resp: HttpResponse) {
        let id = out.request_id().unwrap_or_default();
        let modern = out.era.modern;
        let status = resp.status();
        if status == StatusCode::NOT_FOUND && snap.id.is_some() {
            limits::drain_ack(resp).await;
            return self.session_lost(snap.epoch, Some(out));
        }
        if status == StatusCode::BAD_REQUEST && modern {
            // A JSON-RPC error in the body is the answer (the modern era's way of
            // refusing a request; also how its era probe tells the eras apart).
            let body = Box::pin(mcp_headers::read_small_body(resp)).await;
            match mcp_headers::error_object(&body) {
                Some(error) => {
                    let answer = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"error\":{error}}}");
                    self.deliver_known(answer.into_bytes(), Some(id), Some(id));
                }
                None => {
                    let detail = String::from_utf8_lossy(&body);
                    let detail: String = detail.chars().take(200).collect();
                    let reason =
                        describe_status_parts(status, None, detail.trim(), self.has_auth_header);
                    self.fail_request(id, &reason);
                }
            }
            return;
        }
        if !status.is_success() {
            let reason = describe_status(self, resp).await;
            self.fail_request(id, &reason);
            return;
        }
        if status == StatusCode::ACCEPTED {
            // No body: the answer will come on the GET stream.
            limits::drain_ack(resp).await;
            return;
        }
        let sse = is_event_stream(&resp);
        let end = self
            .read_answer(resp, Some(id), |this, msg, rid| {
                this.deliver_known(msg, rid, Some(id))
            })
            .await;
        if end.got_response || !sse || end.too_large {
            if !end.got_response {
                let why = end.error.unwrap_or_else(|| {
                    "the server answered the request without a JSON-RPC response".into()
                });
                self.fail_request(id, &why);
            }
            return;
        }
        if modern {
            // The modern era has no resumption: the client sends the request again,
            // with a new id ([`STREAM_BROKEN`] tells it so).
            let why = end
                .error
                .unwrap_or_else(|| "the stream ended before the answer".into());
            self.log.push(LogSource::Host, "warning", &why);
            let body = format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"error\":{{\"code\":{TRANSPORT_ERROR_CODE},\"message\":{},\"data\":{{\"{STREAM_BROKEN}\":true}}}}}}",
                serde_json::Value::String(format!("the answer stream broke ({why})"))
            );
            self.deliver_known(body.into_bytes(), Some(id), Some(id));
            return;
        }
        Box::pin(self.resume(out, end)).await;
    }

    /// Resumes a cut answer stream with GET + `Last-Event-ID` until the response arrives.
    async fn resume(&self, out: Outbound, mut end: AnswerEnd) {
        let id = out.request_id().unwrap_or_default();
        let mut last_id = end.last_event_id.clone();
        let mut retry = end.retry.unwrap_or(DEFAULT_RETRY);
        let mut idle = 0;
        loop {
            let Some(event_id) = last_id.clone() else {
                let why = end.error.unwrap_or_else(|| "it ended".into());
                self.fail_request(
                    id,
                    &format!("the server closed the answer stream before answering ({why}) and gave no event id to resume it"),
                );
                return;
            };
            if idle >= MAX_IDLE_RESUMES {
                self.fail_request(
                    id,
                    &format!("the answer stream was cut {MAX_IDLE_RESUMES} times in a row without progress; gave up"),
                );
                return;
            }
            tokio::time::sleep(retry).await;
            if !self.inflight.lock().contains_key(&id) {
                return; // answered elsewhere or cancelled
            }
            let snap = self.snapshot();
            let resp = self
                .send(|| {
                    self.request(reqwest::Method::GET, Target::Own, Some(&snap), None)
                        .header(ACCEPT, EVENT_STREAM_VALUE)
                        .header(LAST_EVENT_ID, event_value(&event_id))
                })
                .await;
            let resp = match resp {
                Ok(r) => r,
                Err(e) => {
                    if !self.is_closing() {
                        self.close_with(describe_send_error(&self.url, &e));
                    }
                    return;
                }
            };
            if resp.status() == StatusCode::NOT_FOUND && snap.id.is_some() {
                limits::drain_ack(resp).await;
                return self.session_lost(snap.epoch, Some(out));
            }
            if !resp.status().is_success() || !is_event_stream(&resp) {
                let reason = if resp.status().is_success() {
                    "the server did not answer with an event stream".to_string()
                } else {
                    describe_status(self, resp).await
                };
                self.fail_request(
                    id,
                    &format!("the server closed the answer stream before answering, and resuming it failed: {reason}"),
                );
                return;
            }
            end = self
                .read_answer(resp, Some(id), |this, msg, rid| {
                    this.deliver_known(msg, rid, Some(id))
                })
                .await;
            if end.got_response {
                return;
            }
            if end.too_large {
                let why = end.error.unwrap_or_default();
                self.fail_request(id, &why);
                return;
            }
            if end.events == 0 {
                idle += 1;
            } else {
                idle = 0;
            }
            if end.last_event_id.is_some() {
                last_id = end.last_event_id.clone();
            }
            if let Some(r) = end.retry {
                retry = r;
            }
        }
    }

    /// Opens the optional GET stream for server-initiated messages (405 = none offered).
    pub(crate) fn start_get_stream(self: Arc<Self>) {
        let this = self.clone();
        let task = tokio::spawn(async move { this.run_get_stream().await });
        let mut bg = self.background.lock();
        bg.retain(|t| !t.is_finished());
        bg.push(task.abort_handle());
    }

    async fn run_get_stream(self: Arc<Self>) {
        let mut last_id: Option<String> = None;
        let mut retry = DEFAULT_RETRY;
        let mut idle = 0;
        let start_epoch = self.snapshot().epoch;
        loop {
            if self.is_closing() {
                return;
            }
            let snap = self.snapshot();
            if snap.epoch != start_epoch {
                return; // a new session started its own stream
            }
            let build = || {
                let req = self
                    .request(reqwest::Method::GET, Target::Own, Some(&snap), None)
                    .header(ACCEPT, EVENT_STREAM_VALUE);
                match &last_id {
                    Some(l) => req.header(LAST_EVENT_ID, event_value(l)),
                    None => req,
                }
            };
            let resp = match self.send(build).await {
                Ok(r) => r,
                Err(e) => {
                    tracing::debug!("GET stream: {}", describe_send_error(&self.url, &e));
                    idle += 1;
                    if idle >= MAX_IDLE_RESUMES {
                        return;
                    }
                    tokio::time::sleep(retry).await;
                    continue;
                }
            };
            if !resp.status().is_success() || !is_event_stream(&resp) {
                // 405 is the normal "no GET stream"; anything else also means none.
                tracing::debug!("no GET stream (HTTP {})", resp.status());
                return;
            }
            let end = self
                .read_answer(resp, None, |this, msg, rid| {
                    this.deliver_known(msg, rid, None)
                })
                .await;
            if end.last_event_id.is_some() {
                last_id = end.last_event_id;
            }
            if let Some(r) = end.retry {
                retry = r;
            }
            if end.events == 0 && last_id.is_none() {
                idle += 1;
                if idle >= MAX_IDLE_RESUMES {
                    return;
                }
            } else {
                idle = 0;
            }
            tokio::time::sleep(retry).await;
        }
    }
}
