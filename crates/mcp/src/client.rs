//! One connected MCP server: handshake, request/response correlation, timeouts and
//! cancellation, progress, server requests and notifications, tool listing and calls.
//!
//! Invariants: a request is registered in the pending map before it is written; one reader
//! task owns the receiving half, and when it ends every pending request fails at once with
//! the reason (exit status and stderr tail on stdio). No lock is held across an `.await`.
//! Every request goes out through [`Inner::encode_request`] ([`encode`]), the one place
//! that adds the modern era's per-request `_meta`. The era is settled when the connection
//! opens ([`modern`]: the `server/discover` probe, or the legacy `initialize` here); modern
//! results go through [`mrtr`] (`resultType`, `input_required` rounds). Inbound messages
//! are taken apart in [`inbound`] and [`notify`]. Requests from the server (and a modern
//! server's input requests) go to the [`ClientHandler`] given at connect ([`served`]);
//! resources, prompts and completion live in [`features`].
//!
//! Every message goes to the transport as an [`Outbound`] built here and in [`encode`]
//! (its kind, id and the era's HTTP headers beside the bytes), so transports never parse
//! what we send. A transport that loses its session hands the unanswered requests back;
//! [`recover`] starts a new session, sends them once more and lists again what was listed.

use parking_lot::Mutex;
use std::collections::HashSet;
use std::future::Future;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde_json::value::RawValue;
use serde_json::{json, Map, Value};
use tokio::sync::{broadcast, mpsc, oneshot};

mod cache;
mod encode;
mod features;
mod follow;
mod inbound;
mod listen;
mod modern;
mod mrtr;
mod notify;
mod pages;
mod polls;
mod recover;
mod reply;
mod served;
#[cfg(test)]
mod surface_tests;
mod tasks;
#[cfg(test)]
mod tasks_tests;

use crate::handler::ClientHandler;
use crate::log::{LogSource, ServerLog};
use crate::protocol::era::{self, Era};
use crate::protocol::jsonrpc::{self, RpcError};
use crate::protocol::types::{
    CallToolResult, InitializeResult, ListToolsPage, Progress, ToolDef, LATEST_PROTOCOL_VERSION,
    SUPPORTED_PROTOCOL_VERSIONS,
};
use crate::transport::{Connection, EraHeaders, Inbound, Outbound, OutboundKind, TransportSender};

/// The byte-level fast paths and the full parses they must agree with (the fuzzer checks).
#[doc(hidden)]
pub use cache::{parsed_reuse, reuse};
pub use cache::{MAX_CACHE_BYTES, MAX_TTL as MAX_CACHE_TTL};
pub use follow::{Follow, MAX_POLL_FAILURES, TTL_GRACE};
pub use listen::{ACK_TIMEOUT as LISTEN_ACK_TIMEOUT, MAX_LISTEN_FAILURES};
pub use modern::{ConnectOptions, Reopen};
#[doc(hidden)]
pub use mrtr::{plainly_complete, ResultHeader};
pub use polls::{MAX_POLLS_IN_FLIGHT, POLL_GRID, POLL_TIMEOUT};
use reply::{IdMap, Params, Reply, ReplyBody, ReplyError};
pub use tasks::{CallOutcome, TaskCall, TaskError, MAX_LISTENED_TASKS};

/// Most pages `tools/list` may take before we call the server broken.
pub const MAX_TOOL_PAGES: usize = 10_000;

/// What a caller gets when a request does not produce a result.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ClientError {
    /// The server is gone; the text says why.
    #[error("{0}")]
    Closed(String),
    #[error("the server did not answer {method} within {}; it was cancelled. Raise \"{field}\" in .mcp.json if the server needs longer", fmt_duration(*timeout))]
    Timeout {
        method: String,
        timeout: Duration,
        field: &'static str,
    },
    #[error("the server answered {method} with error {}: {}", error.code, error.message)]
    Rpc {
        method: String,
        error: Box<RpcError>,
    },
    #[error("the server sent an invalid answer to {method}: {detail}")]
    Invalid { method: String, detail: String },
    #[error("the server speaks MCP protocol version {0}, which harness9 does not support (it supports {supported}); update the server or harness9", supported = SUPPORTED_PROTOCOL_VERSIONS.join(", "))]
    UnsupportedVersion(String),
    #[error(
        "the server repeated the {method} cursor {cursor:?}; it is misbehaving (listing stopped)"
    )]
    RepeatedCursor { method: String, cursor: String },
    #[error("the request was cancelled")]
    Cancelled,
    /// A feature the connection's protocol era does not have (`ping`, `logging/setLevel`,
    /// subscriptions in the modern era).
    #[error("the server speaks the modern protocol at {offered}; harness9 speaks {}. Update harness9 or the server, or set \"protocolEra\": \"legacy\" in .mcp.json if the server also speaks the legacy protocol", era::MODERN_PROTOCOL_VERSIONS.join(", "))]
    NoCommonVersion { offered: String },
    #[error("{what} is not in this protocol era (the server speaks {version})")]
    NotInEra { what: String, version: String },
}

impl ClientError {
    /// A stable kebab-case code for front ends and `--json` output. Codes never change
    /// once released; a new variant gets a new code.
    pub fn code(&self) -> &'static str {
        match self {
            ClientError::Closed(_) => "connection-closed",
            ClientError::Timeout { .. } => "timeout",
            ClientError::Rpc { .. } => "server-error",
            ClientError::Invalid { .. } => "invalid-response",
            ClientError::UnsupportedVersion(_) => "unsupported-version",
            ClientError::RepeatedCursor { .. } => "repeated-cursor",
            ClientError::Cancelled => "cancelled",
            ClientError::NoCommonVersion { .. } => "no-common-version",
            ClientError::NotInEra { .. } => "not-in-era",
        }
    }
}

pub fn fmt_duration(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s >= 1.0 && s.fract() == 0.0 {
        format!("{s:.0} s")
    } else if s >= 1.0 {
        format!("{s:.1} s")
    } else {
        format!("{} ms", d.as_millis())
    }
}

/// Something the server told us outside of a response.
#[derive(Debug, Clone, PartialEq)]
pub enum ClientEvent {
    /// `notifications/tools/list_changed`: list the tools again.
    ToolsChanged,
    /// `notifications/resources/list_changed`: list the resources (and templates) again.
    ResourcesChanged,
    /// `notifications/resources/updated`: a subscribed resource changed; read it again.
    ResourceUpdated { uri: String },
    /// `notifications/prompts/list_changed`: list the prompts again.
    PromptsChanged,
    /// `notifications/elicitation/complete`: a URL elicitation finished out of band.
    ElicitationComplete { elicitation_id: String },
    /// The connection ended; the text says why.
    Closed(String),
}

/// Per-request options.
#[derive(Debug, Default, Clone)]
pub struct RequestOptions {
    pub timeout: Option<Duration>,
    /// The `.mcp.json` field a timeout message should name.
    pub timeout_field: Option<&'static str>,
    /// Receives `notifications/progress` for this request. Make it with
    /// [`progress_channel`]: when it is full, newer notifications are dropped (the server
    /// log says so once per request), so a flood never grows memory.
    pub progress: Option<mpsc::Sender<Progress>>,
}

/// Progress notifications buffered for one request before newer ones are dropped.
pub const PROGRESS_QUEUE: usize = 64;

/// A channel for [`RequestOptions::progress`] of [`PROGRESS_QUEUE`] places.
pub fn progress_channel() -> (mpsc::Sender<Progress>, mpsc::Receiver<Progress>) {
    mpsc::channel(PROGRESS_QUEUE)
}

struct Inner {
    sender: Arc<dyn TransportSender>,
    pending: Mutex<IdMap<oneshot::Sender<Reply>>>,
    /// Progress sinks by request id, with whether a drop was already noted in the log.
    progress: Mutex<IdMap<(mpsc::Sender<Progress>, bool)>>,
    next_id: AtomicU64,
    closed: Mutex<Option<String>>,
    events: broadcast::Sender<ClientEvent>,
    log: Arc<ServerLog>,
    name: String,
    handler: Option<Arc<dyn ClientHandler>>,
    /// Server requests being answered by the handler, by their id as JSON text.
    served: served::Served,
    /// Modern era only: the members of the `_meta` every request carries, as JSON text,
    /// set once the protocol version is settled. Unset means the legacy era.
    meta: OnceLock<Box<str>>,
    /// Modern era only: the logging level every request asks for ([`level_code`]).
    log_level: std::sync::atomic::AtomicU8,
    /// Modern era only: the `subscriptions/listen` stream ([`listen`]).
    listening: listen::Listening,
    /// Modern era only: list results the server let us reuse ([`cache`]).
    cache: cache::ListCache,
    /// The latest status notice of each followed task ([`tasks`]).
    task_notes: tasks::TaskNotes,
    /// The protocol version once settled (`MCP-Protocol-Version` on HTTP).
    version: OnceLock<reqwest::header::HeaderValue>,
    /// Modern era only: the `x-mcp-header` parameters of the tools listed so far.
    tool_headers: Mutex<crate::transport::mcp_headers::ToolHeaders>,
    /// The transport sends the era's HTTP headers ([`crate::transport::EraHeaders`]).
    sends_era_headers: bool,
    /// Starting a new session when the transport lost its own ([`recover`]).
    recovery: recover::Recovery,
    /// The polls of the followed tasks ([`polls`]).
    polls: Arc<polls::Polls>,
}

/// A live connection to one server, after a successful handshake.
pub struct Client {
    inner: Arc<Inner>,
    init: InitializeResult,
    era: Era,
}

impl Client {
    /// Runs the `initialize` handshake over `conn`. `name` labels logs. No timeout here:
    /// the caller bounds the whole start-up (initialize must not be cancelled).
    pub async fn connect(
        conn: Connection,
        name: &str,
        log: Arc<ServerLog>,
    ) -> Result<Client, ClientError> {
        Client::connect_with(conn, name, log, None).await
    }

    /// [`Client::connect`] with a handler for the server's requests: `initialize`
    /// announces exactly what it [handles](ClientHandler::handles).
    pub async fn connect_with(
        conn: Connection,
        name: &str,
        log: Arc<ServerLog>,
        handler: Option<Arc<dyn ClientHandler>>,
    ) -> Result<Client, ClientError> {
        let inner = Inner::start(conn, name, log, handler);
        Client::initialize(inner).await
    }

    /// The legacy handshake on a started connection; closes it when the handshake fails.
    async fn initialize(inner: Arc<Inner>) -> Result<Client, ClientError> {
        match Client::handshake(&inner).await {
            Ok(client) => Ok(client),
            Err(e) => {
                inner.sender.close().await;
                Err(e)
            }
        }
    }

    /// The legacy handshake, leaving the connection open when it fails.
    async fn handshake(inner: &Arc<Inner>) -> Result<Client, ClientError> {
        let params = json!({
            "protocolVersion": LATEST_PROTOCOL_VERSION,
            "capabilities": inner.capabilities(),
            "clientInfo": {"name": "harness9", "version": env!("CARGO_PKG_VERSION")},
        });
        let body = inner
            .request_once(
                "initialize",
                &Params::Value(params),
                RequestOptions::default(),
                false,
            )
            .await
            .map_err(initialize_error)?;
        let init: InitializeResult = body.parse("initialize")?;
        if !SUPPORTED_PROTOCOL_VERSIONS.contains(&init.protocol_version.as_str()) {
            return Err(ClientError::UnsupportedVersion(init.protocol_version));
        }
        inner.settle_version(&init.protocol_version);
        inner.notify("notifications/initialized", None)?;
        Ok(Client {
            inner: inner.clone(),
            init,
            era: Era::Legacy,
        })
    }

    /// The protocol era this connection speaks.
    pub fn era(&self) -> Era {
        self.era
    }

    pub fn protocol_version(&self) -> &str {
        &self.init.protocol_version
    }

    pub fn server_info(&self) -> &crate::protocol::types::Implementation {
        &self.init.server_info
    }

    pub fn instructions(&self) -> Option<&str> {
        self.init.instructions.as_deref()
    }

    pub fn capabilities(&self) -> &Map<String, Value> {
        &self.init.capabilities
    }

    /// Events from the server; a receiver that lags skips ahead.
    pub fn events(&self) -> broadcast::Receiver<ClientEvent> {
        self.inner.events.subscribe()
    }

    /// `Some(reason)` once the connection has ended.
    pub fn closed_reason(&self) -> Option<String> {
        self.inner.closed.lock().clone()
    }

    /// Sends one request and waits for its result (raw JSON). Dropping the future cancels
    /// the request (the server gets `notifications/cancelled`).
    pub async fn request(
        &self,
        method: &str,
        params: Option<Value>,
        opts: RequestOptions,
    ) -> Result<Box<RawValue>, ClientError> {
        let body = self
            .inner
            .request(method, Params::from_value(params), opts, true)
            .await?;
        body.into_raw(method)
    }

    /// Every tool, following `nextCursor` to the end. A server that did not declare the
    /// `tools` capability has none.
    pub async fn list_tools(&self, timeout: Option<Duration>) -> Result<Vec<ToolDef>, ClientError> {
        if !self.init.capabilities.contains_key("tools") {
            return Ok(Vec::new());
        }
        let tools = self
            .list_pages("tools/list", MAX_TOOL_PAGES, timeout, |p: ListToolsPage| {
                (p.tools, p.next_cursor)
            })
            .await?;
        let tools = self.inner.without_repeats(tools);
        Ok(match self.era {
            Era::Legacy => tools,
            Era::Modern => self.inner.without_bad_headers(tools),
        })
    }

    /// Calls one tool by its raw name. A tool that fails reports `is_error` in the result;
    /// an `Err` means the call itself did not complete. A modern server may make a task
    /// of the call: it is followed to its end within the call's timeout (and cancelled
    /// when that passes); see [`Client::call_tool_as_task`] to keep the task instead.
    pub fn call_tool<'a>(
        &'a self,
        name: &'a str,
        arguments: Option<Value>,
        opts: RequestOptions,
    ) -> impl Future<Output = Result<CallToolResult, ClientError>> + Send + 'a {
        // Not an `async fn`: the future holds the params once rather than its arguments
        // and the params made of them (it is stored per call in flight).
        let params = Params::ToolCall { name, arguments };
        async move {
            if self.era == Era::Legacy {
                let body = self
                    .inner
                    .request_with("tools/call", &params, opts, true)
                    .await;
                // The arguments go before the result is built: their memory can hold it
                // (a large echo then needs no fresh pages).
                drop(params);
                let body = body?;
                return match CallToolResult::plain_text(body.get()) {
                    Some(result) => Ok(result),
                    None => body.parse("tools/call"),
                };
            }
            let timeout = opts.timeout;
            let answer = self
                .inner
                .request_modern_kind("tools/call", &params, opts, true)
                .await;
            drop(params);
            let (body, task) = answer?;
            if !task {
                return match CallToolResult::plain_text(body.get()) {
                    Some(result) => Ok(result),
                    None => body.parse("tools/call"),
                };
            }
            let value: Value = body.parse("tools/call")?;
            drop(body);
            Box::pin(self.finish_task_call(value, timeout)).await
        }
    }

    /// Ends the connection (for stdio, the full shutdown of the child).
    pub async fn close(&self) {
        self.inner.sender.close().await;
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        if self.closed_reason().is_none() {
            if let Ok(rt) = tokio::runtime::Handle::try_current() {
                rt.spawn(self.inner.sender.close());
            }
        }
    }
}

fn initialize_error(e: ClientError) -> ClientError {
    match e {
        ClientError::Rpc { method, mut error } => {
            let supported = error.data.as_ref().and_then(|d| d.get("supported"));
            if let (Some(supported), false) =
                (supported, error.code == era::UNSUPPORTED_PROTOCOL_VERSION)
            {
                error.message = format!(
                    "{} (the server supports {supported}; harness9 supports {})",
                    error.message,
                    SUPPORTED_PROTOCOL_VERSIONS.join(", ")
                );
            }
            ClientError::Rpc { method, error }
        }
        other @ (ClientError::Closed(_)
        | ClientError::Timeout { .. }
        | ClientError::Invalid { .. }
        | ClientError::UnsupportedVersion(_)
        | ClientError::RepeatedCursor { .. }
        | ClientError::Cancelled
        | ClientError::NoCommonVersion { .. }
        | ClientError::NotInEra { .. }) => other,
    }
}

/// What a caller gets for an answer that carries no result.
fn reply_error(method: &str, error: ReplyError) -> ClientError {
    match error {
        ReplyError::Rpc(mut error) => {
            if let Some(why) = era::explain(&error) {
                error.message = format!("{} ({why})", error.message);
            }
            ClientError::Rpc {
                method: method.to_string(),
                error: Box::new(error),
            }
        }
        ReplyError::Invalid(detail) => ClientError::Invalid {
            method: method.into(),
            detail,
        },
        ReplyError::Closed(reason) => ClientError::Closed(reason),
    }
}

/// A legacy request's params with `_meta.progressToken` set to `id`.
fn with_progress_token(params: &Params<'_>, id: u64) -> Value {
    let mut value = params
        .to_value()
        .unwrap_or_else(|| Value::Object(Map::new()));
    if let Value::Object(map) = &mut value {
        let meta = map
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(meta) = meta {
            meta.insert("progressToken".into(), json!(id));
        }
    }
    value
}

/// A logging level as one byte: its place in [`LOG_LEVELS`](crate::protocol::features::LOG_LEVELS)
/// plus one (0 stands for none).
fn level_code(level: crate::protocol::features::LogLevel) -> u8 {
    let i = crate::protocol::features::LOG_LEVELS
        .iter()
        .position(|l| *l == level)
        .unwrap_or(0);
    u8::try_from(i + 1).unwrap_or(1)
}

/// Removes a request's bookkeeping when its future ends early (timeout or drop), and tells
/// the server to stop working on it.
struct PendingGuard<'a> {
    inner: &'a Inner,
    id: u64,
    armed: bool,
    cancellable: bool,
    reason: &'static str,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let was_pending = self.inner.pending.lock().remove(&self.id).is_some();
        self.inner.progress.lock().remove(&self.id);
        if was_pending && self.cancellable {
            self.inner.cancel(self.id, self.reason);
        }
    }
}

/// Where `part`, a slice of `whole`, lies in it.
fn subrange(whole: &str, part: &str) -> Option<Range<usize>> {
    let start = (part.as_ptr() as usize).checked_sub(whole.as_ptr() as usize)?;
    let end = start.checked_add(part.len())?;
    let inside = end <= whole.len() && whole.is_char_boundary(start) && whole.is_char_boundary(end);
    inside.then_some(start..end)
}

impl Inner {
    /// Wraps a transport connection and starts its reader task.
    fn start(
        conn: Connection,
        name: &str,
        log: Arc<ServerLog>,
        handler: Option<Arc<dyn ClientHandler>>,
    ) -> Arc<Inner> {
        let sessions = conn.sender.has_sessions();
        let sends_era_headers = conn.sender.uses_era_headers();
        let inner = Arc::new(Inner {
            sender: conn.sender,
            pending: Mutex::default(),
            progress: Mutex::default(),
            next_id: AtomicU64::new(1),
            closed: Mutex::new(None),
            events: broadcast::channel(64).0,
            log,
            name: name.to_string(),
            handler,
            served: served::Served::default(),
            meta: OnceLock::new(),
            listening: listen::Listening::default(),
            cache: cache::ListCache::default(),
            task_notes: tasks::TaskNotes::default(),
            polls: Arc::default(),
            log_level: std::sync::atomic::AtomicU8::new(level_code(era::DEFAULT_LOG_LEVEL)),
            version: OnceLock::new(),
            tool_headers: Mutex::default(),
            sends_era_headers,
            recovery: recover::Recovery::new(sessions),
        });
        let reader_inner = inner.clone();
        let mut receiver = conn.receiver;
        tokio::spawn(async move {
            loop {
                match receiver.recv().await {
                    Inbound::Message(bytes) => reader_inner.dispatch(bytes),
                    Inbound::SessionLost { session, request } => {
                        reader_inner.session_lost(session, request.map(|r| *r));
                    }
                    Inbound::Closed(reason) => {
                        reader_inner.close_all(reason);
                        break;
                    }
                }
            }
        });
        inner
    }

    /// The client capabilities for the handshake: exactly what the handler handles.
    fn capabilities(&self) -> Value {
        self.handler
            .as_ref()
            .map_or_else(|| json!({}), |h| h.handles().capabilities())
    }

    /// The logging level modern requests ask for.
    fn log_level(&self) -> Option<crate::protocol::features::LogLevel> {
        let i = self.log_level.load(Ordering::Relaxed);
        crate::protocol::features::LOG_LEVELS
            .get(usize::from(i).checked_sub(1)?)
            .copied()
    }

    fn notify(&self, method: &str, params: Option<Value>) -> Result<(), ClientError> {
        let bytes = jsonrpc::encode_notification(method, params.as_ref());
        let mut out = Outbound::notification(bytes, method, self.era_headers(method, None));
        if let OutboundKind::Notification { initialized, .. } = &mut out.kind {
            *initialized = method == "notifications/initialized";
        }
        self.sender.send(out).map_err(|_| self.closed_error())
    }

    /// `notifications/cancelled` for our request `id`.
    fn cancel(&self, id: u64, reason: &str) {
        let method = "notifications/cancelled";
        let params = json!({"requestId": id, "reason": reason});
        let bytes = jsonrpc::encode_notification(method, Some(&params));
        let mut out = Outbound::notification(bytes, method, self.era_headers(method, None));
        if let OutboundKind::Notification { cancels, .. } = &mut out.kind {
            *cancels = Some(id);
        }
        let _ = self.sender.send(out);
    }

    /// Records the protocol version the connection speaks (sent as a header on HTTP).
    fn settle_version(&self, version: &str) {
        if let Ok(v) = reqwest::header::HeaderValue::from_str(version) {
            let _ = self.version.set(v);
        }
    }

    fn closed_error(&self) -> ClientError {
        ClientError::Closed(
            self.closed
                .lock()
                .clone()
                .unwrap_or_else(|| "the connection to the server is closed".into()),
        )
    }

    /// Sends one request and waits for its answer. Modern connections check the result's
    /// `resultType` and fulfil `input_required` rounds ([`mrtr`]).
    async fn request(
        &self,
        method: &str,
        params: Params<'_>,
        opts: RequestOptions,
        cancellable: bool,
    ) -> Result<ReplyBody, ClientError> {
        self.request_with(method, &params, opts, cancellable).await
    }

    /// [`Inner::request`] with borrowed params.
    async fn request_with(
        &self,
        method: &str,
        params: &Params<'_>,
        opts: RequestOptions,
        cancellable: bool,
    ) -> Result<ReplyBody, ClientError> {
        if self.meta.get().is_none() {
            // Boxed: requests wait only while a lost session is replaced, and the future
            // of every call in flight stays small.
            let opts = match self.recovery.busy() {
                true => Box::pin(self.recovery.wait_idle(method, opts)).await?,
                false => opts,
            };
            return self.request_once(method, params, opts, cancellable).await;
        }
        if !cache::CACHEABLE.contains(&method) {
            return self.request_modern(method, params, opts, cancellable).await;
        }
        // Boxed: listings are rare next to calls, whose futures stay the smaller for it.
        Box::pin(self.request_cached(method, params, opts, cancellable)).await
    }

    /// A modern listing, served from the list cache when the server let us reuse it.
    async fn request_cached(
        &self,
        method: &str,
        params: &Params<'_>,
        opts: RequestOptions,
        cancellable: bool,
    ) -> Result<ReplyBody, ClientError> {
        let key = cache::key(method, params);
        let credentials = self.sender.credentials_key();
        if let Some(hit) = self.cache.get(&key, credentials) {
            return Ok(hit);
        }
        let body = self
            .request_modern(method, params, opts, cancellable)
            .await?;
        self.cache.put(key, &body, credentials);
        Ok(body)
    }

    /// One request, one answer: no `resultType` handling.
    fn request_once<'a>(
        &'a self,
        method: &'a str,
        params: &'a Params<'_>,
        opts: RequestOptions,
        cancellable: bool,
    ) -> impl Future<Output = Result<ReplyBody, ClientError>> + Send + 'a {
        // Not an `async fn`: no future around the one it returns (every call in flight
        // holds one).
        self.request_once_as(method, params, opts, cancellable, None)
    }

    /// [`Inner::request_once`] with the era's headers given (`None`: those of `params`).
    async fn request_once_as(
        &self,
        method: &str,
        params: &Params<'_>,
        opts: RequestOptions,
        cancellable: bool,
        era: Option<EraHeaders>,
    ) -> Result<ReplyBody, ClientError> {
        let mut opts = opts;
        let had_progress = opts.progress.is_some();
        // Everything up to the write is synchronous: the future keeps only what the wait
        // needs, so it stays small (it is moved and stored per call in flight).
        let (id, rx) = self.send_request(method, params, opts.progress.take(), era)?;
        let mut guard = PendingGuard {
            inner: self,
            id,
            armed: true,
            cancellable,
            reason: "cancelled by the user",
        };
        let reply = match opts.timeout {
            Some(t) => match tokio::time::timeout(t, rx).await {
                Ok(r) => r,
                Err(_) => {
                    guard.reason = "timed out";
                    return Err(ClientError::Timeout {
                        method: method.to_string(),
                        timeout: t,
                        field: opts
                            .timeout_field
                            .unwrap_or(crate::settings::TOOL_TIMEOUT_FIELD),
                    });
                }
            },
            None => rx.await,
        };
        guard.armed = false;
        if had_progress {
            self.progress.lock().remove(&id);
        }
        match reply {
            Ok(Ok(body)) => Ok(body),
            Ok(Err(error)) => Err(reply_error(method, error)),
            Err(_) => Err(self.closed_error()),
        }
    }

    /// Registers a request (and its progress sink), then writes it; its id and where its
    /// answer will arrive. When the write fails, nothing of it stays registered.
    fn send_request(
        &self,
        method: &str,
        params: &Params<'_>,
        progress: Option<mpsc::Sender<Progress>>,
        era: Option<EraHeaders>,
    ) -> Result<(u64, oneshot::Receiver<Reply>), ClientError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        {
            let closed = self.closed.lock();
            if let Some(reason) = closed.as_ref() {
                return Err(ClientError::Closed(reason.clone()));
            }
            self.pending.lock().insert(id, tx);
        }
        let modern = self.meta.get().is_some();
        let with_token;
        let mut params = params;
        let had_progress = progress.is_some();
        if let Some(p) = progress {
            // Modern requests get the token beside the rest of `_meta` when written.
            if !modern {
                with_token = Params::from_value(Some(with_progress_token(params, id)));
                params = &with_token;
            }
            self.progress.lock().insert(id, (p, false));
        }
        let bytes = self.encode_request(id, method, params, had_progress.then_some(id));
        let era = era.unwrap_or_else(|| self.era_headers(method, Some(params)));
        let mut out = Outbound::request(bytes, id, method, era);
        if let OutboundKind::Request { initialize, .. } = &mut out.kind {
            *initialize = method == "initialize";
        }
        if self.sender.send(out).is_err() {
            self.pending.lock().remove(&id);
            self.progress.lock().remove(&id);
            return Err(self.closed_error());
        }
        Ok((id, rx))
    }

    /// Keeps the first of tools listed under one name twice (calls go by name, so only
    /// one can be reached); the server log names the others.
    fn without_repeats(&self, mut tools: Vec<ToolDef>) -> Vec<ToolDef> {
        let mut names = HashSet::with_capacity(tools.len());
        let mut repeated = Vec::new();
        tools.retain(|t| {
            let first = names.insert(t.name.clone());
            if !first {
                repeated.push(t.name.clone());
            }
            first
        });
        for name in repeated {
            let text = format!("the server listed the tool {name:?} more than once; only the first definition is used");
            tracing::warn!(server = %self.name, "{text}");
            self.log.push(LogSource::Host, "warning", &text);
        }
        tools
    }

    fn note_garbage(&self, what: &str) {
        tracing::warn!(server = %self.name, "skipped {what}");
        self.log
            .push(LogSource::Host, "warning", &format!("skipped {what}"));
    }
}

#[cfg(test)]
mod tests;
