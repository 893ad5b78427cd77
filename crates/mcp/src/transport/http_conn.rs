//! The connection state both HTTP transports share: what to connect to ([`HttpSpec`]),
//! which transport is in use ([`TransportKind`]), and [`Shared`], with the plumbing of a
//! connection whatever its wire: handing messages to the client, failing one request,
//! closing once, building a request with the configured and session headers, describing a
//! refusal. The Streamable HTTP transport ([`super::http`]) and the legacy HTTP+SSE session
//! ([`super::sse`]) both build on it, and neither imports the other's module: `http` opens
//! connections and falls back to a [`LegacySession`] that `sse` knows how to open and post
//! to.

use parking_lot::Mutex;
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue, AUTHORIZATION, CONTENT_TYPE};
use reqwest::Url;

use crate::mask::mask_urls_in;
use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::sync::{mpsc, watch};
use tokio::task::AbortHandle;

use super::{EraHeaders, Inbound, Outbound};
use crate::http::errors::{self, describe_status_parts};
use crate::http::h1::Wire;
use crate::http::limits;
use crate::http::wire::{Exchange, HttpResponse, Target};
use crate::log::{LogSource, ServerLog};

pub(crate) const EVENT_STREAM: &str = "text/event-stream";
/// Header values built once, when compiled (a value made at run time is checked byte by
/// byte on every request).
pub(crate) const EVENT_STREAM_VALUE: HeaderValue = HeaderValue::from_static(EVENT_STREAM);
pub(crate) const JSON_VALUE: HeaderValue = HeaderValue::from_static("application/json");
pub(crate) const SESSION_HEADER: HeaderName = HeaderName::from_static("mcp-session-id");
pub(crate) const VERSION_HEADER: HeaderName = HeaderName::from_static("mcp-protocol-version");
/// A POST that only needs an acknowledgement (notification, response, legacy message) may
/// take this long.
pub const ACK_TIMEOUT: Duration = Duration::from_secs(30);
/// JSON-RPC error code of the errors the transport synthesizes for a failed exchange.
pub const TRANSPORT_ERROR_CODE: i64 = -32000;

/// What to connect to.
#[derive(Clone)]
pub struct HttpSpec {
    pub url: String,
    /// From `.mcp.json`, `${VAR}` expanded; sent on every request, never shown.
    pub headers: Vec<(String, String)>,
    /// The largest body or SSE event read (see [`crate::settings::DEFAULT_MAX_MESSAGE_BYTES`]).
    pub max_message_bytes: usize,
    /// OAuth for this server ([`crate::auth`]); `None` sends only `headers`.
    pub auth: Option<Arc<crate::auth::Authorizer>>,
}

impl std::fmt::Debug for HttpSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.headers.iter().map(|(k, _)| k.as_str()).collect();
        f.debug_struct("HttpSpec")
            .field("url", &self.url)
            .field("header_names", &names)
            .finish()
    }
}

/// Which transport a connection is using; becomes `"sse"` after a fallback.
#[derive(Clone, Debug)]
pub struct TransportKind(Arc<Mutex<&'static str>>);

impl TransportKind {
    pub(crate) fn new(kind: &'static str) -> TransportKind {
        TransportKind(Arc::new(Mutex::new(kind)))
    }
    pub fn get(&self) -> &'static str {
        *self.0.lock()
    }
    pub(crate) fn set(&self, kind: &'static str) {
        *self.0.lock() = kind;
    }
}

/// How a connection starts.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Streamable HTTP, with the legacy fallback.
    Streamable,
    /// Legacy HTTP+SSE from the start (`type: "sse"`).
    Legacy,
}

#[derive(Default)]
pub(crate) struct Session {
    pub(crate) id: Option<HeaderValue>,
    /// The protocol version the client said it speaks, for requests of our own (GET,
    /// DELETE).
    pub(crate) version: Option<HeaderValue>,
    /// Numbers the sessions: bumped by every answer to `initialize`.
    pub(crate) epoch: u64,
}

#[derive(Clone)]
pub(crate) struct SessionSnapshot {
    pub(crate) id: Option<HeaderValue>,
    pub(crate) version: Option<HeaderValue>,
    pub(crate) epoch: u64,
}

pub(crate) struct Shared {
    pub(crate) client: reqwest::Client,
    /// The lean client for the server's own URL, when it can serve it ([`crate::http::wire`]).
    pub(crate) wire: Option<Wire>,
    pub(crate) url: Url,
    pub(crate) headers: Arc<HeaderMap>,
    pub(crate) has_auth_header: bool,
    /// OAuth ([`super::http_auth`]); `None` when the entry sets its own `Authorization`.
    pub(crate) auth: Option<Arc<crate::auth::Authorizer>>,
    /// The largest JSON body or SSE event kept ([`HttpSpec::max_message_bytes`]).
    pub(crate) max_message_bytes: usize,
    pub(crate) inbound: mpsc::UnboundedSender<Inbound>,
    /// What `inbound` holds; readers wait on it before reading more from the server.
    pub(crate) backlog: Arc<limits::Backlog>,
    pub(crate) log: Arc<ServerLog>,
    pub(crate) closed: AtomicBool,
    pub(crate) closing: watch::Sender<bool>,
    pub(crate) session: Mutex<Session>,
    /// Requests whose HTTP exchange is running, by JSON-RPC id.
    pub(crate) inflight: Mutex<HashMap<u64, AbortHandle>>,
    /// Long-lived tasks (GET stream, legacy reader) ended on close.
    pub(crate) background: Mutex<Vec<AbortHandle>>,
    pub(crate) legacy: Mutex<Option<Arc<LegacySession>>>,
    pub(crate) kind: TransportKind,
}

/// A legacy HTTP+SSE session ([`super::sse`]): where to POST.
pub(crate) struct LegacySession {
    pub(crate) endpoint: Url,
}

#[derive(Deserialize)]
pub(crate) struct Peek<'a> {
    #[serde(borrow, default)]
    pub(crate) id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(crate) method: Option<Cow<'a, str>>,
}

/// The id of an inbound response (a message with an id and no method), when it is one of
/// ours (an integer). The usual compact shape, `{"jsonrpc":"2.0","id":N,"result":` (or
/// `"error":`), is told by its start; anything else is parsed.
pub(crate) fn response_id(bytes: &[u8]) -> Option<u64> {
    const HEAD: &[u8] = br#"{"jsonrpc":"2.0","id":"#;
    if let Some(rest) = bytes.strip_prefix(HEAD) {
        let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        let after = rest.get(digits..).unwrap_or_default();
        let answer = after.starts_with(br#","result":"#) || after.starts_with(br#","error":"#);
        if answer && (digits == 1 || rest.first() != Some(&b'0')) {
            if let Some(id) = std::str::from_utf8(rest.get(..digits).unwrap_or_default())
                .ok()
                .and_then(|d| d.parse().ok())
            {
                return Some(id);
            }
        }
    }
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace())?;
    if *first != b'{' {
        return None;
    }
    let p = serde_json::from_slice::<Peek<'_>>(bytes).ok()?;
    if p.method.is_some() {
        return None;
    }
    p.id.and_then(|i| i.get().parse().ok())
}

impl Shared {
    pub(crate) fn legacy(&self) -> Option<Arc<LegacySession>> {
        self.legacy.lock().clone()
    }

    pub(crate) fn set_legacy(&self, l: LegacySession) {
        *self.legacy.lock() = Some(Arc::new(l));
        self.kind.set("sse");
    }

    pub(crate) fn add_background(&self, h: AbortHandle) {
        self.background.lock().push(h);
    }

    pub(crate) fn is_closing(&self) -> bool {
        *self.closing.borrow() || self.closed.load(Ordering::Acquire)
    }

    /// Hands one inbound message to the client. A response settles its request's exchange;
    /// when it arrived on another stream than its own, that exchange is dropped.
    pub(crate) fn deliver(&self, bytes: Vec<u8>, owner: Option<u64>) {
        let id = response_id(&bytes);
        self.deliver_known(bytes, id, owner);
    }

    /// [`Shared::deliver`] of a message whose response id is known (`None`: not a response).
    pub(crate) fn deliver_known(&self, bytes: Vec<u8>, id: Option<u64>, owner: Option<u64>) {
        if self.closed.load(Ordering::Acquire) {
            return;
        }
        if let Some(id) = id {
            if owner == Some(id) {
                self.inflight.lock().remove(&id);
            } else {
                self.drop_exchange(id);
            }
        }
        // Counted before it can be taken, so the count never goes below zero.
        let n = bytes.len();
        self.backlog.add(n);
        if self.inbound.send(Inbound::Message(bytes)).is_err() {
            self.backlog.take(n);
        }
    }

    /// Ends the connection with `reason` (once).
    /// Ends the connection with `reason` (its URLs masked: it reaches the status, the
    /// logs and the front ends).
    pub(crate) fn close_with(&self, reason: String) {
        if self.closed.swap(true, Ordering::AcqRel) {
            return;
        }
        let _ = self.inbound.send(Inbound::Closed(mask_urls_in(&reason)));
        self.abort_all();
    }

    /// Drops the HTTP exchange of request `id` (cancelled, or answered on another
    /// stream). An exchange that carries other requests too (pipelined polls) goes on for
    /// them; the answer to `id` is still read there, and handed on as a late one.
    pub(crate) fn drop_exchange(&self, id: u64) {
        let mut inflight = self.inflight.lock();
        if let Some(t) = inflight.remove(&id) {
            if !inflight.values().any(|other| other.id() == t.id()) {
                t.abort();
            }
        }
    }

    pub(crate) fn abort_all(&self) {
        for (_, t) in self.inflight.lock().drain() {
            t.abort();
        }
        for t in self.background.lock().drain(..) {
            t.abort();
        }
    }

    /// Fails one request with a synthesized JSON-RPC error response.
    pub(crate) fn fail_request(&self, id: u64, message: &str) {
        let message = &mask_urls_in(message);
        self.log.push(LogSource::Host, "warning", message);
        let body = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"error\":{{\"code\":{TRANSPORT_ERROR_CODE},\"message\":{}}}}}",
            serde_json::Value::String(message.to_string())
        );
        self.deliver_known(body.into_bytes(), Some(id), Some(id));
    }

    pub(crate) fn warn(&self, message: &str) {
        let message = &mask_urls_in(message);
        tracing::warn!("{message}");
        self.log.push(LogSource::Host, "warning", message);
    }

    pub(crate) fn snapshot(&self) -> SessionSnapshot {
        let s = self.session.lock();
        SessionSnapshot {
            id: s.id.clone(),
            version: s.version.clone(),
            epoch: s.epoch,
        }
    }

    /// Keeps the protocol version a message goes out under, for our own requests.
    pub(crate) fn note_version(&self, out: &Outbound) {
        if let Some(v) = &out.era.version {
            let mut s = self.session.lock();
            if s.version.as_ref() != Some(v) {
                s.version = Some(v.clone());
            }
        }
    }

    /// A request with the configured headers and, when `session`, the session id; with
    /// `era`, its headers (else, with `session`, the version the client speaks).
    pub(crate) fn request(
        &self,
        method: reqwest::Method,
        target: Target,
        session: Option<&SessionSnapshot>,
        era: Option<&EraHeaders>,
    ) -> Exchange {
        let more = era.map(|e| e.more.as_slice()).unwrap_or_default();
        // Room for these and the two a POST adds (Accept, Content-Type).
        let mut ex = Exchange::new(method, target, self.headers.clone(), 5 + more.len());
        if let Some(id) = session.and_then(|s| s.id.clone()) {
            ex.set(SESSION_HEADER, id);
        }
        let version = match era {
            Some(e) => e.version.clone(),
            None => session.and_then(|s| s.version.clone()),
        };
        if let Some(v) = version {
            ex.set(VERSION_HEADER, v);
        }
        for (name, value) in more {
            ex.set(name.clone(), value.clone());
        }
        if let Some(h) = self.auth_header_for(&ex.target) {
            ex.set(AUTHORIZATION, h);
        }
        ex
    }
}

pub(crate) fn is_event_stream(resp: &HttpResponse) -> bool {
    resp.headers().get(CONTENT_TYPE).is_some_and(|v| {
        v.as_bytes()
            .trim_ascii_start()
            .get(..EVENT_STREAM.len())
            .is_some_and(|t| t.eq_ignore_ascii_case(EVENT_STREAM.as_bytes()))
    })
}

/// A clear message for a non-success status; reads a little of the body for detail.
pub(crate) async fn describe_status(shared: &Shared, resp: HttpResponse) -> String {
    // Boxed: the exchanges that may call it keep small futures.
    Box::pin(describe(shared, resp)).await
}

async fn describe(shared: &Shared, resp: HttpResponse) -> String {
    if let Some(r) = resp.refusal() {
        return r.to_string();
    }
    let status = resp.status();
    let challenge = resp
        .headers()
        .get(reqwest::header::WWW_AUTHENTICATE)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.split_whitespace().next().unwrap_or("").to_string());
    let detail = errors::body_detail(resp).await;
    describe_status_parts(
        status,
        challenge.as_deref(),
        &detail,
        shared.has_auth_header,
    )
}
