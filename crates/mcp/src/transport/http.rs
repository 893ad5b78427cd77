//! Streamable HTTP transport (MCP 2025-03-26 … 2026-07-28), with automatic fallback to the
//! legacy HTTP+SSE transport (see [`super::sse`]); the connection state both share is
//! [`super::http_conn`]'s, the exchanges of one message are [`super::http_exchange`]'s and
//! reading an answer is [`super::http_answer`]'s. Opens `type: "sse"` connections too
//! ([`connect_sse`]).
//!
//! Every outbound message is one POST with `Accept: application/json, text/event-stream`;
//! the answer is a JSON body or an SSE stream whose events (notifications and server
//! requests first, then the response) go to the receiver in order. The transport never
//! reads what it sends: each [`Outbound`] says what it is (request id, whether it opens or
//! ends the handshake, which request a cancellation names) and brings the era's headers
//! (`MCP-Protocol-Version`, and the modern era's own). The transport keeps only the
//! session: the `Mcp-Session-Id` the answer to `initialize` gives, sent on every later
//! request. A 404 on a message that carried it means the session expired: the transport
//! reports it ([`Inbound::SessionLost`]) with the request handed back, and the client
//! starts a new session and sends the request again.
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
//! - A cancellation also drops the HTTP exchange of the cancelled request (not that of
//!   the polls sent together with it, [`super::http_pipeline`]).
//! - Polls (`tasks/get`) queued together go together, written back to back on one
//!   kept-alive connection ([`super::http_pipeline`]); every other message goes alone.
//! - Header values from `.mcp.json` and the session id are never logged or put in a
//!   message (they are marked sensitive, so even `Debug` hides them).
//! - The receiver yields `Inbound::Closed` exactly once, after every message.

use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use futures::FutureExt;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use reqwest::Url;
use tokio::sync::{mpsc, watch};

pub use super::http_conn::{HttpSpec, TransportKind, ACK_TIMEOUT, TRANSPORT_ERROR_CODE};
use super::http_conn::{LegacySession, Mode, Shared};
use super::http_pipeline::{gather_polls, is_poll};
use super::{
    Connection, Inbound, Outbound, OutboundKind, TransportError, TransportReceiver, TransportSender,
};
pub use crate::http::errors::{classify_failure, describe_status_parts};
use crate::http::h1::Wire;
use crate::http::limits;
use crate::http::wire::Target;
use crate::log::ServerLog;
use crate::mask::MaskedUrl;

/// Reconnection delay when the server gave no `retry:`.
pub const DEFAULT_RETRY: Duration = Duration::from_secs(1);
/// Most resumptions of one answer stream that bring no new event.
pub(crate) const MAX_IDLE_RESUMES: u32 = 5;
/// The `User-Agent` of every request.
const USER_AGENT: &str = concat!("harness9/", env!("CARGO_PKG_VERSION"));
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
        .user_agent(USER_AGENT)
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
    let wire = Wire::for_url(&url, USER_AGENT, CONNECT_TIMEOUT);
    let shared = Arc::new(Shared {
        client,
        wire,
        url,
        headers: Arc::new(headers),
        has_auth_header,
        auth: spec.auth.clone().filter(|_| !has_auth_header),
        max_message_bytes: spec.max_message_bytes,
        inbound: in_tx,
        backlog: backlog.clone(),
        log,
        closed: AtomicBool::new(false),
        closing: watch::channel(false).0,
        session: Mutex::default(),
        inflight: Mutex::default(),
        background: Mutex::default(),
        legacy: Mutex::default(),
        kind: kind.clone(),
    });
    // The driver awaits the handshake inline; closing aborts it with the other tasks.
    let driver = tokio::spawn(drive(shared.clone(), out_rx, mode));
    shared.add_background(driver.abort_handle());
    let sender = Arc::new(HttpSender {
        shared,
        queue: out_tx,
        sessions: mode == Mode::Streamable,
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

struct HttpSender {
    shared: Arc<Shared>,
    queue: mpsc::UnboundedSender<Outbound>,
    /// Streamable HTTP (not the legacy transport from the start).
    sessions: bool,
}

impl TransportSender for HttpSender {
    fn send(&self, message: Outbound) -> Result<(), TransportError> {
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

    fn has_sessions(&self) -> bool {
        self.sessions
    }

    fn uses_era_headers(&self) -> bool {
        true
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
                Some(lost @ Inbound::SessionLost { .. }) => lost,
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
async fn drive(shared: Arc<Shared>, mut queue: mpsc::UnboundedReceiver<Outbound>, mode: Mode) {
    let mut closing = shared.closing.subscribe();
    // A message taken while gathering polls, next in turn.
    let mut held: Option<Outbound> = None;
    loop {
        let next = match held.take() {
            Some(m) => Some(m),
            None => tokio::select! {
                biased;
                _ = closing.wait_for(|c| *c) => None,
                m = queue.recv() => m,
            },
        };
        let Some(out) = next else { break };
        if shared.closed.load(Ordering::Acquire) {
            break;
        }
        shared.note_version(&out);
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
            let handshake = matches!(
                out.kind,
                OutboundKind::Request {
                    initialize: true,
                    ..
                } | OutboundKind::Notification {
                    initialized: true,
                    ..
                }
            );
            if handshake {
                legacy.post(&shared, out, true).await;
            } else {
                let shared = shared.clone();
                tokio::spawn(async move { legacy.post(&shared, out, false).await });
            }
            continue;
        }
        match &out.kind {
            OutboundKind::Request {
                initialize: true, ..
            } => shared.clone().initialize(out).await,
            OutboundKind::Notification {
                initialized: true, ..
            } => {
                shared.clone().post_other(out).await;
                if shared.legacy().is_none() && !shared.closed.load(Ordering::Acquire) {
                    shared.clone().start_get_stream();
                }
            }
            OutboundKind::Request { .. } if is_poll(&out) && shared.pipelines() => {
                let (polls, after) = gather_polls(out, &mut queue, &shared).await;
                held = after;
                shared.start_polls(polls);
            }
            OutboundKind::Request { .. } => shared.spawn_request(out),
            OutboundKind::Notification {
                cancels: Some(rid), ..
            } => {
                shared.drop_exchange(*rid);
                // Modern: closing the request's stream (above) is the cancellation.
                if !out.era.modern {
                    tokio::spawn(shared.clone().post_other(out));
                }
            }
            OutboundKind::Notification { .. } | OutboundKind::Response => {
                tokio::spawn(shared.clone().post_other(out));
            }
        }
    }
}

impl Shared {
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
            // Sent once, as it is: no sign-in on the way out.
            let req =
                self.execute(self.request(reqwest::Method::DELETE, Target::Own, Some(&snap), None));
            match tokio::time::timeout(DELETE_TIMEOUT, req).await {
                Ok(Ok(r)) => tracing::debug!("DELETE session: HTTP {}", r.status()),
                Ok(Err(e)) => tracing::debug!("DELETE session failed: {e}"),
                Err(_) => tracing::debug!("DELETE session timed out"),
            }
        }
        self.close_with("the connection was closed".into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
