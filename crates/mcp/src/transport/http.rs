//! Streamable HTTP transport (MCP 2025-03-26 … 2026-07-28), with automatic fallback to the
//! legacy HTTP+SSE transport (see [`super::sse`]); the connection state both share is
//! [`super::http_conn`]'s. Opens `type: "sse"` connections too ([`connect_sse`]).
//!
//! Every outbound message is one POST with `Accept: application/json, text/event-stream`;
//! the answer is a JSON body or an SSE stream whose events (notifications and server
//! requests first, then the response) go to the receiver in order. The client above knows
//! nothing of HTTP, so the transport keeps the session itself: it sniffs the `initialize`
//! exchange passing through it (request bytes, `Mcp-Session-Id`, negotiated
//! `protocolVersion`) and sends `Mcp-Session-Id` and `MCP-Protocol-Version` on every later
//! request. A 404 on a request that carried a session id means the session expired: the
//! transport replays the stored `initialize` and `notifications/initialized` itself, tells
//! the client to re-list tools (a synthesized `notifications/tools/list_changed`) and
//! repeats the request once.
//!
//! Invariants:
//! - `initialize` and `notifications/initialized` are sent in order and awaited before the
//!   next message is taken, so a server never sees a request before the handshake ended;
//!   every other message is POSTed concurrently.
//! - A request whose HTTP exchange fails gets a JSON-RPC error response synthesized for it
//!   (only that request fails). A failure to reach the server at all (refused, DNS, TLS)
//!   ends the connection with the reason, like a stdio server exiting.
//! - An SSE answer that ends before the response is resumed with `GET` + `Last-Event-ID`
//!   after the server's `retry:` delay; the response may arrive on the resumed stream.
//! - `notifications/cancelled` also drops the HTTP exchange of the cancelled request.
//! - Header values from `.mcp.json` and the session id are never logged or put in a
//!   message (they are marked sensitive, so even `Debug` hides them).
//! - The receiver yields `Inbound::Closed` exactly once, after every message.

use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::future::BoxFuture;
use futures::FutureExt;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE};
use reqwest::{Response, StatusCode, Url};
use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::sync::{mpsc, watch};

use super::http_conn::{
    describe_status, is_event_stream, response_id, LegacySession, Mode, Peek, SessionSnapshot,
    Shared, EVENT_STREAM, SESSION_HEADER,
};
pub use super::http_conn::{HttpSpec, TransportKind, ACK_TIMEOUT, TRANSPORT_ERROR_CODE};
use super::mcp_headers;
use super::sse_parse::{SseEvent, SseParser};
use super::{Connection, Inbound, TransportError, TransportReceiver, TransportSender};
pub use crate::http::errors::{classify_failure, describe_status_parts};
use crate::http::errors::{describe_send_error, error_chain};
use crate::http::limits::{self, BodyError};
use crate::log::{LogSource, ServerLog};
use crate::mask::MaskedUrl;

/// `Accept` of every POST.
const ACCEPT_POST: &str = "application/json, text/event-stream";
const LAST_EVENT_ID: &str = "last-event-id";

/// Reconnection delay when the server gave no `retry:`.
pub const DEFAULT_RETRY: Duration = Duration::from_secs(1);
/// Most resumptions of one answer stream that bring no new event.
const MAX_IDLE_RESUMES: u32 = 5;
/// How long to keep reading an SSE answer after its response (for connection reuse).
const AFTER_RESPONSE_GRACE: Duration = Duration::from_millis(500);
/// Connecting to the server (TCP + TLS) may take this long.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);
/// The `DELETE` that ends a session on shutdown.
const DELETE_TIMEOUT: Duration = Duration::from_secs(2);
/// Set (`true`) in the `data` of a synthesized error when a modern request's answer
/// stream broke before its response: the request may be sent again with a new id.
pub const STREAM_BROKEN: &str = "h9StreamBroken";

/// Opens a Streamable HTTP connection (`type: "http"`) that falls back to the legacy
/// HTTP+SSE transport when the `initialize` POST gets 400, 404 or 405. Nothing is sent
/// until the client sends `initialize`.
pub fn connect(
    spec: &HttpSpec,
    log: Arc<ServerLog>,
) -> Result<(Connection, TransportKind), String> {
    open(spec, log, Mode::Streamable)
}

/// Opens a legacy HTTP+SSE connection (`type: "sse"`). The GET stream is opened when the
/// client sends its first message (`initialize`).
pub fn connect_sse(
    spec: &HttpSpec,
    log: Arc<ServerLog>,
) -> Result<(Connection, TransportKind), String> {
    open(spec, log, Mode::Legacy)
}

pub(crate) fn open(
    spec: &HttpSpec,
    log: Arc<ServerLog>,
    mode: Mode,
) -> Result<(Connection, TransportKind), String> {
    let url = Url::parse(&spec.url).map_err(|e| {
        format!(
            "the url \"{}\" is not valid: {e}",
            MaskedUrl::new(&spec.url)
        )
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!(
            "the url \"{}\" must start with http:// or https://",
            MaskedUrl::new(&spec.url)
        ));
    }
    let headers = config_headers(&spec.headers)?;
    let has_auth_header = headers.contains_key(reqwest::header::AUTHORIZATION);
    let client = reqwest::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        .tcp_nodelay(true)
        .user_agent(concat!("harness9/", env!("CARGO_PKG_VERSION")))
        .redirect(crate::http::redirect::redirect_policy())
        .build()
        .map_err(|e| format!("cannot set up the HTTP client: {e}"))?;
    // Unbounded, but every reader waits for room in `backlog` before reading on.
    let (in_tx, in_rx) = mpsc::unbounded_channel();
    let backlog = Arc::new(limits::Backlog::default());
    let (out_tx, out_rx) = mpsc::unbounded_channel();
    let kind = TransportKind::new(match mode {
        Mode::Streamable => "http",
        Mode::Legacy => "sse",
    });
    let shared = Arc::new(Shared {
        client,
        url,
        headers,
        has_auth_header,
        auth: spec.auth.clone().filter(|_| !has_auth_header),
        max_message_bytes: spec.max_message_bytes,
        inbound: in_tx,
        backlog: backlog.clone(),
        log,
        closed: AtomicBool::new(false),
        closing: watch::channel(false).0,
        session: Mutex::default(),
        init_request: Mutex::default(),
        initialized_note: Mutex::default(),
        reinit: tokio::sync::Mutex::new(()),
        inflight: Mutex::default(),
        background: Mutex::default(),
        legacy: Mutex::default(),
        kind: kind.clone(),
        modern: AtomicBool::new(false),
        tool_headers: Mutex::default(),
    });
    // The driver awaits the handshake inline; closing aborts it with the other tasks.
    let driver = tokio::spawn(drive(shared.clone(), out_rx, mode));
    shared.add_background(driver.abort_handle());
    let sender = Arc::new(HttpSender {
        shared,
        queue: out_tx,
    });
    let receiver = Box::new(HttpReceiver {
        rx: in_rx,
        done: false,
        backlog: backlog.clone(),
    });
    Ok((Connection { sender, receiver }, kind))
}

fn config_headers(list: &[(String, String)]) -> Result<HeaderMap, String> {
    let mut map = HeaderMap::new();
    for (k, v) in list {
        let name = HeaderName::from_bytes(k.as_bytes())
            .map_err(|_| format!("header \"{k}\" in .mcp.json is not a valid HTTP header name"))?;
        let mut value = HeaderValue::from_str(v).map_err(|_| {
            format!("the value of header \"{k}\" in .mcp.json is not a valid HTTP header value (control characters or non-ASCII?)")
        })?;
        value.set_sensitive(true);
        map.append(name, value);
    }
    Ok(map)
}

/// What an outbound message is, as far as the transport cares.
enum Outbound {
    Initialize { id: String },
    Initialized,
    Request { id: String },
    Cancel { request_id: Option<String> },
    Other,
}

#[derive(Deserialize)]
struct CancelParams<'a> {
    #[serde(borrow, rename = "requestId")]
    request_id: Option<&'a RawValue>,
}

fn peek_outbound(bytes: &[u8]) -> Outbound {
    let Ok(p) = serde_json::from_slice::<Peek<'_>>(bytes) else {
        return Outbound::Other;
    };
    let id = p.id.map(|i| i.get().to_string()).filter(|i| i != "null");
    match (p.method.as_deref(), id) {
        (Some("initialize"), Some(id)) => Outbound::Initialize { id },
        (Some("notifications/initialized"), None) => Outbound::Initialized,
        (Some("notifications/cancelled"), None) => Outbound::Cancel {
            request_id: p
                .params
                .and_then(|r| serde_json::from_str::<CancelParams<'_>>(r.get()).ok())
                .and_then(|c| c.request_id.map(|i| i.get().to_string())),
        },
        (Some(_), Some(id)) => Outbound::Request { id },
        _ => Outbound::Other,
    }
}

#[derive(Deserialize)]
struct InitPeek {
    result: Option<InitResultPeek>,
}

#[derive(Deserialize)]
struct InitResultPeek {
    #[serde(rename = "protocolVersion")]
    protocol_version: Option<String>,
}

struct HttpSender {
    shared: Arc<Shared>,
    queue: mpsc::UnboundedSender<Vec<u8>>,
}

impl TransportSender for HttpSender {
    fn send(&self, message: Vec<u8>) -> Result<(), TransportError> {
        if *self.shared.closing.borrow() || self.shared.closed.load(Ordering::Acquire) {
            return Err(TransportError::Closed);
        }
        self.queue.send(message).map_err(|_| TransportError::Closed)
    }

    fn close(&self) -> BoxFuture<'static, ()> {
        self.shared.clone().shutdown().boxed()
    }

    fn credentials_key(&self) -> u64 {
        self.shared.auth.as_ref().map_or(0, |a| a.credentials_key())
    }
}

struct HttpReceiver {
    rx: mpsc::UnboundedReceiver<Inbound>,
    done: bool,
    backlog: Arc<limits::Backlog>,
}

impl Drop for HttpReceiver {
    fn drop(&mut self) {
        self.backlog.close();
    }
}

impl TransportReceiver for HttpReceiver {
    fn recv(&mut self) -> BoxFuture<'_, Inbound> {
        async move {
            if self.done {
                return Inbound::Closed("the connection is closed".into());
            }
            match self.rx.recv().await {
                Some(Inbound::Closed(reason)) => {
                    self.done = true;
                    Inbound::Closed(reason)
                }
                Some(Inbound::Message(m)) => {
                    self.backlog.take(m.len());
                    Inbound::Message(m)
                }
                None => {
                    self.done = true;
                    Inbound::Closed("the connection is closed".into())
                }
            }
        }
        .boxed()
    }
}

/// Takes outbound messages in order and starts their HTTP exchanges.
async fn drive(shared: Arc<Shared>, mut queue: mpsc::UnboundedReceiver<Vec<u8>>, mode: Mode) {
    let mut closing = shared.closing.subscribe();
    loop {
        let next = tokio::select! {
            biased;
            _ = closing.wait_for(|c| *c) => None,
            m = queue.recv() => m,
        };
        let Some(msg) = next else { break };
        if shared.closed.load(Ordering::Acquire) {
            break;
        }
        let bytes = Bytes::from(msg);
        let outbound = peek_outbound(&bytes);
        if mode == Mode::Legacy && shared.legacy().is_none() {
            match LegacySession::open(&shared, shared.url.clone()).await {
                Ok(l) => shared.set_legacy(l),
                Err(reason) => {
                    shared.close_with(reason);
                    break;
                }
            }
        }
        if let Some(legacy) = shared.legacy() {
            match outbound {
                Outbound::Initialize { .. } | Outbound::Initialized => {
                    legacy
                        .post(&shared, bytes, &outbound_id(&outbound), true)
                        .await;
                }
                _ => {
                    let shared = shared.clone();
                    let id = outbound_id(&outbound);
                    tokio::spawn(async move { legacy.post(&shared, bytes, &id, false).await });
                }
            }
            continue;
        }
        match outbound {
            Outbound::Initialize { id } => shared.clone().initialize(bytes, id).await,
            Outbound::Initialized => {
                *shared.initialized_note.lock() = Some(bytes.clone());
                shared.clone().post_other(bytes).await;
                if shared.legacy().is_none() && !shared.closed.load(Ordering::Acquire) {
                    shared.clone().start_get_stream();
                }
            }
            Outbound::Request { id } => {
                let mut inflight = shared.inflight.lock();
                let task = tokio::spawn(shared.clone().post_request(bytes, id.clone()));
                inflight.insert(id, task.abort_handle());
            }
            Outbound::Cancel { request_id } => {
                if let Some(rid) = request_id {
                    let task = shared.inflight.lock().remove(&rid);
                    if let Some(t) = task {
                        t.abort();
                    }
                }
                // Modern: closing the request's stream (above) is the cancellation.
                if !shared.modern.load(Ordering::Acquire) {
                    tokio::spawn(shared.clone().post_other(bytes));
                }
            }
            Outbound::Other => {
                tokio::spawn(shared.clone().post_other(bytes));
            }
        }
    }
}

fn outbound_id(o: &Outbound) -> Option<String> {
    match o {
        Outbound::Initialize { id } | Outbound::Request { id } => Some(id.clone()),
        _ => None,
    }
}

/// How an SSE or JSON answer ended.
struct AnswerEnd {
    got_response: bool,
    /// Events that carried a message.
    events: u64,
    last_event_id: Option<String>,
    retry: Option<Duration>,
    /// The stream broke with an error rather than ending.
    error: Option<String>,
    /// A message passed the size limit (`error` says so); the answer was abandoned.
    too_large: bool,
}

impl Shared {
    fn post_builder(
        &self,
        body: Bytes,
        session: Option<&SessionSnapshot>,
    ) -> reqwest::RequestBuilder {
        self.request(reqwest::Method::POST, self.url.clone(), session)
            .header(ACCEPT, ACCEPT_POST)
            .header(CONTENT_TYPE, "application/json")
            .body(body)
    }

    /// The first `initialize`: POSTed without session; its answer sets up the session, or
    /// (400/404/405) starts the legacy fallback.
    async fn initialize(self: Arc<Self>, bytes: Bytes, id: String) {
        *self.init_request.lock() = Some(bytes.clone());
        let resp = match self.send(|| self.post_builder(bytes.clone(), None)).await {
            Ok(r) => r,
            Err(e) => return self.close_with(describe_send_error(&self.url, &e)),
        };
        let status = resp.status();
        if !status.is_success() {
            let reason = describe_status(&self, resp).await;
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
                            legacy.post(&self, bytes, &Some(id), true).await;
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
            .read_answer(resp, Some(&id), |this, msg, is_response| {
                if is_response {
                    this.sniff_version(&msg);
                }
                this.deliver(msg, None);
            })
            .await;
        if !end.got_response {
            let why = end.error.unwrap_or_else(|| "the stream ended".to_string());
            self.close_with(format!("the server did not answer initialize ({why})"));
        }
    }

    fn take_session_id(&self, resp: &Response) {
        let mut s = self.session.lock();
        s.id = None;
        if let Some(v) = resp.headers().get(SESSION_HEADER) {
            if !v.is_empty() && v.as_bytes().iter().all(|b| (0x21..=0x7e).contains(b)) {
                let mut v = v.clone();
                v.set_sensitive(true);
                s.id = Some(v);
            } else {
                drop(s);
                self.warn("the server sent an invalid Mcp-Session-Id (not visible ASCII); ignored");
            }
        }
    }

    fn sniff_version(&self, msg: &[u8]) {
        if let Ok(InitPeek {
            result: Some(InitResultPeek {
                protocol_version: Some(v),
            }),
        }) = serde_json::from_slice::<InitPeek>(msg)
        {
            if let Ok(h) = HeaderValue::from_str(&v) {
                self.session.lock().version = Some(h);
            }
        }
    }

    /// A notification or a response to a server request: POST, expect 202 (or 200).
    async fn post_other(self: Arc<Self>, bytes: Bytes) {
        let mut retried = false;
        loop {
            let snap = self.snapshot();
            let resp = match self
                .send(|| {
                    self.post_builder(bytes.clone(), Some(&snap))
                        .timeout(ACK_TIMEOUT)
                })
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
            if status == StatusCode::NOT_FOUND && snap.id.is_some() && !retried {
                retried = true;
                if let Err(e) = self.clone().reinitialize(snap.epoch).await {
                    self.warn(&e);
                    return;
                }
                continue;
            }
            if status.is_success() {
                // Drain the (normally empty) body so the connection can be reused.
                limits::drain_ack(resp).await;
            } else {
                let reason = describe_status(&self, resp).await;
                self.warn(&format!("a notification was not accepted: {reason}"));
            }
            return;
        }
    }

    /// A request: POST, read its answer (resuming a cut stream), repeat once after a
    /// session expiry. Runs in its own task, registered in `inflight`.
    async fn post_request(self: Arc<Self>, bytes: Bytes, id: String) {
        struct Unregister<'a>(&'a Shared, &'a str);
        impl Drop for Unregister<'_> {
            fn drop(&mut self) {
                self.0.inflight.lock().remove(self.1);
            }
        }
        let _unregister = Unregister(&self, &id);
        let modern = {
            let tools = self.tool_headers.lock();
            mcp_headers::request_headers(&bytes, &tools)
        };
        if modern.is_some() {
            self.modern.store(true, Ordering::Release);
        }
        let lists_tools = modern.as_ref().is_some_and(|m| m.method == "tools/list");
        let mut retried = false;
        loop {
            let snap = self.snapshot();
            let resp = match self
                .send(|| {
                    let post = self.post_builder(bytes.clone(), Some(&snap));
                    match &modern {
                        Some(m) => post.headers(m.headers.clone()),
                        None => post,
                    }
                })
                .await
            {
                Ok(r) => r,
                Err(e) => {
                    if !self.is_closing() {
                        self.close_with(describe_send_error(&self.url, &e));
                    }
                    return;
                }
            };
            let status = resp.status();
            if status == StatusCode::NOT_FOUND && snap.id.is_some() && !retried {
                retried = true;
                let _ = resp.bytes().await;
                if let Err(e) = self.clone().reinitialize(snap.epoch).await {
                    self.fail_request(&id, &e);
                    return;
                }
                continue;
            }
            if status == StatusCode::BAD_REQUEST && modern.is_some() {
                // A JSON-RPC error in the body is the answer (the modern era's way of
                // refusing a request; also how its era probe tells the eras apart).
                let body = mcp_headers::read_small_body(resp).await;
                match mcp_headers::error_object(&body) {
                    Some(error) => {
                        let answer =
                            format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"error\":{error}}}");
                        self.deliver(answer.into_bytes(), Some(&id));
                    }
                    None => {
                        let detail = String::from_utf8_lossy(&body);
                        let detail: String = detail.chars().take(200).collect();
                        let reason = describe_status_parts(
                            status,
                            None,
                            detail.trim(),
                            self.has_auth_header,
                        );
                        self.fail_request(&id, &reason);
                    }
                }
                return;
            }
            if !status.is_success() {
                let reason = describe_status(&self, resp).await;
                self.fail_request(&id, &reason);
                return;
            }
            if status == StatusCode::ACCEPTED {
                // No body: the answer will come on the GET stream.
                return;
            }
            let sse = is_event_stream(&resp);
            let end = self
                .read_answer(resp, Some(&id), |this, msg, is_response| {
                    if is_response && lists_tools {
                        let mut tools = this.tool_headers.lock();
                        mcp_headers::note_tools(&msg, &mut tools);
                    }
                    this.deliver(msg, Some(&id))
                })
                .await;
            if end.got_response || !sse || end.too_large {
                if !end.got_response {
                    let why = end.error.unwrap_or_else(|| {
                        "the server answered the request without a JSON-RPC response".into()
                    });
                    self.fail_request(&id, &why);
                }
                return;
            }
            if modern.is_some() {
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
                self.deliver(body.into_bytes(), Some(&id));
                return;
            }
            self.resume(&id, end).await;
            return;
        }
    }

    /// Resumes a cut answer stream with GET + `Last-Event-ID` until the response arrives.
    async fn resume(&self, id: &str, mut end: AnswerEnd) {
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
            if !self.inflight.lock().contains_key(id) {
                return; // answered elsewhere or cancelled
            }
            let snap = self.snapshot();
            let resp = self
                .send(|| {
                    self.request(reqwest::Method::GET, self.url.clone(), Some(&snap))
                        .header(ACCEPT, EVENT_STREAM)
                        .header(LAST_EVENT_ID, event_id.as_str())
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
                .read_answer(resp, Some(id), |this, msg, _| this.deliver(msg, Some(id)))
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

    /// The session expired: initialize again (once per epoch, whoever sees the 404 first),
    /// then ask the client to re-list tools.
    async fn reinitialize(self: Arc<Self>, seen_epoch: u64) -> Result<(), String> {
        let _guard = self.reinit.lock().await;
        if self.snapshot().epoch != seen_epoch {
            return Ok(()); // another request already did it
        }
        let init = self
            .init_request
            .lock()
            .clone()
            .ok_or("the session expired before it was initialized")?;
        let init_id = match peek_outbound(&init) {
            Outbound::Initialize { id } => id,
            _ => return Err("the stored initialize request is invalid".into()),
        };
        self.log.push(
            LogSource::Host,
            "info",
            "the server ended the session (HTTP 404); initializing a new one",
        );
        let fail = |why: String| {
            format!("the server ended the session and starting a new one failed: {why}")
        };
        let resp = self
            .send(|| self.post_builder(init.clone(), None))
            .await
            .map_err(|e| fail(describe_send_error(&self.url, &e)))?;
        if !resp.status().is_success() {
            return Err(fail(describe_status(&self, resp).await));
        }
        self.take_session_id(&resp);
        let end = self
            .read_answer(resp, Some(&init_id), |this, msg, is_response| {
                if is_response {
                    this.sniff_version(&msg);
                } else {
                    this.deliver(msg, None);
                }
            })
            .await;
        if !end.got_response {
            return Err(fail("no answer to initialize".into()));
        }
        let note = self.initialized_note.lock().clone();
        if let Some(note) = note {
            let snap = self.snapshot();
            let resp = self
                .send(|| self.post_builder(note.clone(), Some(&snap)))
                .await
                .map_err(|e| fail(describe_send_error(&self.url, &e)))?;
            let ok = resp.status().is_success();
            let reason = if ok {
                String::new()
            } else {
                describe_status(&self, resp).await
            };
            if !ok {
                return Err(fail(reason));
            }
        }
        self.session.lock().epoch += 1;
        self.deliver(
            br#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#.to_vec(),
            None,
        );
        self.clone().start_get_stream();
        Ok(())
    }

    /// Opens the optional GET stream for server-initiated messages (405 = none offered).
    fn start_get_stream(self: Arc<Self>) {
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
                return; // a re-initialization started a new stream
            }
            let build = || {
                let req = self
                    .request(reqwest::Method::GET, self.url.clone(), Some(&snap))
                    .header(ACCEPT, EVENT_STREAM);
                match &last_id {
                    Some(l) => req.header(LAST_EVENT_ID, l.as_str()),
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
                .read_answer(resp, None, |this, msg, _| this.deliver(msg, None))
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

    /// Reads a JSON or SSE answer, calling `on_message(self, message, is_the_response)` for
    /// every message; `want` is the raw id of the response that completes it.
    async fn read_answer(
        &self,
        mut resp: Response,
        want: Option<&str>,
        mut on_message: impl FnMut(&Self, Vec<u8>, bool),
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
                        let msg = body.to_vec();
                        let is = want.is_some() && response_id(&msg).as_deref() == want;
                        end.got_response = is || (want.is_some() && body_answers(&msg, want));
                        end.events = 1;
                        on_message(self, msg, is);
                    }
                }
                Err(e) => {
                    end.too_large = matches!(e, BodyError::TooLarge(_));
                    end.error = Some(e.into_message());
                }
            }
            return end;
        }
        let mut parser = SseParser::new(self.max_message_bytes);
        let mut events: Vec<SseEvent> = Vec::new();
        // The response, held back until what already arrived after it has been read.
        let mut held: Option<Vec<u8>> = None;
        let mut after: Vec<Vec<u8>> = Vec::new();
        let mut ended = false;
        while !ended {
            let chunk = if held.is_some() {
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
                let is =
                    !end.got_response && want.is_some() && response_id(&ev.data).as_deref() == want;
                if is {
                    end.got_response = true;
                    held = Some(ev.data);
                } else if held.is_some() {
                    after.push(ev.data);
                } else {
                    on_message(self, ev.data, false);
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
        held: &mut Option<Vec<u8>>,
        after: &mut Vec<Vec<u8>>,
        on_message: &mut impl FnMut(&Self, Vec<u8>, bool),
    ) {
        if let Some(r) = held.take() {
            on_message(self, r, true);
        }
        for m in after.drain(..) {
            on_message(self, m, false);
        }
    }

    /// Ends the session (DELETE, 405 is fine) and the connection.
    async fn shutdown(self: Arc<Self>) {
        if self.closing.send_replace(true) {
            // Already closing: just make sure the receiver ends.
            self.close_with("the connection was closed".into());
            return;
        }
        self.abort_all();
        // A refresh under way keeps its new tokens before the caller goes on (or quits).
        if let Some(auth) = &self.auth {
            auth.settle().await;
        }
        let snap = self.snapshot();
        if snap.id.is_some() && self.legacy().is_none() {
            let req = self
                .request(reqwest::Method::DELETE, self.url.clone(), Some(&snap))
                .send();
            match tokio::time::timeout(DELETE_TIMEOUT, req).await {
                Ok(Ok(r)) => tracing::debug!("DELETE session: HTTP {}", r.status()),
                Ok(Err(e)) => tracing::debug!("DELETE session failed: {e}"),
                Err(_) => tracing::debug!("DELETE session timed out"),
            }
        }
        self.close_with("the connection was closed".into());
    }
}

/// A JSON batch answer that contains the wanted response.
fn body_answers(body: &[u8], want: Option<&str>) -> bool {
    let Some(want) = want else { return false };
    let Ok(items) = serde_json::from_slice::<Vec<&RawValue>>(body) else {
        return false;
    };
    items
        .iter()
        .any(|i| response_id(i.get().as_bytes()).as_deref() == Some(want))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outbound_kinds() {
        let k = peek_outbound(br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#);
        assert!(matches!(k, Outbound::Initialize { id } if id == "1"));
        let k = peek_outbound(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        assert!(matches!(k, Outbound::Initialized));
        let k = peek_outbound(
            br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"x"}}"#,
        );
        assert!(matches!(k, Outbound::Cancel { request_id: Some(r) } if r == "7"));
        let k = peek_outbound(br#"{"jsonrpc":"2.0","id":3,"method":"tools\/call"}"#);
        assert!(matches!(k, Outbound::Request { id } if id == "3"));
        let k = peek_outbound(br#"{"jsonrpc":"2.0","id":"s1","result":{}}"#);
        assert!(matches!(k, Outbound::Other));
    }

    #[test]
    fn response_ids() {
        assert_eq!(
            response_id(br#"{"jsonrpc":"2.0","id":4,"result":{}}"#).as_deref(),
            Some("4")
        );
        assert_eq!(
            response_id(br#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#),
            None
        );
        assert_eq!(response_id(br#"{"jsonrpc":"2.0","method":"x"}"#), None);
        assert_eq!(response_id(b"[1]"), None);
        assert!(body_answers(
            br#"[{"jsonrpc":"2.0","id":9,"result":{}}]"#,
            Some("9")
        ));
    }

    #[test]
    fn header_values_stay_hidden() {
        let spec = HttpSpec {
            url: "http://x/".into(),
            headers: vec![("Authorization".into(), "Bearer SECRET-123".into())],
            max_message_bytes: crate::settings::DEFAULT_MAX_MESSAGE_BYTES,
            auth: None,
        };
        assert!(!format!("{spec:?}").contains("SECRET"));
        let map = config_headers(&spec.headers).unwrap();
        assert!(!format!("{map:?}").contains("SECRET"));
        let e = config_headers(&[("Bad Name".into(), "v".into())]).unwrap_err();
        assert!(e.contains("Bad Name"));
        let e = config_headers(&[("X".into(), "a\nb-SECRET".into())]).unwrap_err();
        assert!(!e.contains("SECRET"), "{e}");
    }
}
