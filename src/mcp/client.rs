//! One connected MCP server: handshake, request/response correlation, timeouts and
//! cancellation, progress, server requests and notifications, tool listing and calls.
//!
//! Invariants: a request is registered in the pending map before it is written; one reader
//! task owns the receiving half, and when it ends every pending request fails at once with
//! the reason (exit status and stderr tail on stdio). No lock is held across an `.await`.
//! Every request goes out through [`Inner::encode_request`], the one place that can add
//! per-request metadata when a second protocol era is spoken. Requests from the server go
//! to the [`ClientHandler`] given at connect, each on its own task ([`served`]); resources,
//! prompts and completion live in [`features`].

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde_json::value::RawValue;
use serde_json::{json, Map, Value};
use tokio::sync::{broadcast, mpsc, oneshot};

mod encode;
mod features;
mod modern;
mod mrtr;
mod served;
#[cfg(test)]
mod surface_tests;

use super::era::{self, Era};
use super::handler::ClientHandler;
use super::jsonrpc::{self, Inbound as Msg, Kind, RpcError};
use super::log::{LogSource, ServerLog};
use super::transport::{Connection, Inbound, TransportSender};
use super::types::{
    CallToolResult, InitializeResult, ListToolsPage, Progress, ToolDef, LATEST_PROTOCOL_VERSION,
    SUPPORTED_PROTOCOL_VERSIONS,
};

pub use modern::{ConnectOptions, Reopen};

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

pub(crate) fn fmt_duration(d: Duration) -> String {
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

type Reply = Result<ReplyBody, ReplyError>;

/// A result as received: the text of the message it came in and where in it the result
/// lies, so that large results are neither copied nor scanned once more before parsing.
///
/// A plain answer is recognised by its shape alone ([`jsonrpc::quick_result`]), without
/// reading the result: `checked` is then false, and the result is only known to be the
/// answer once it parses as one whole value. When it does not, the whole message is
/// decoded the usual way to find out what it really says.
struct ReplyBody {
    text: String,
    range: Range<usize>,
    checked: bool,
}

impl ReplyBody {
    fn whole(text: String) -> ReplyBody {
        let range = 0..text.len();
        ReplyBody {
            text,
            range,
            checked: true,
        }
    }

    fn get(&self) -> &str {
        &self.text[self.range.clone()]
    }

    fn parse<T: serde::de::DeserializeOwned>(&self, method: &str) -> Result<T, ClientError> {
        let invalid = |e: serde_json::Error| ClientError::Invalid {
            method: method.into(),
            detail: e.to_string(),
        };
        match serde_json::from_str(self.get()) {
            Ok(value) => Ok(value),
            Err(e) if self.checked => Err(invalid(e)),
            Err(_) => serde_json::from_str(&self.text[self.check(method)?]).map_err(invalid),
        }
    }

    fn into_raw(self, method: &str) -> Result<Box<RawValue>, ClientError> {
        let invalid = |e: serde_json::Error| ClientError::Invalid {
            method: method.into(),
            detail: e.to_string(),
        };
        let range = match (self.checked, RawValue::from_string(self.get().to_owned())) {
            (_, Ok(raw)) => return Ok(raw),
            (true, Err(e)) => return Err(invalid(e)),
            (false, Err(_)) => self.check(method)?,
        };
        RawValue::from_string(self.text[range].to_owned()).map_err(invalid)
    }

    /// Decodes the whole message: where its result really is, or what it says instead.
    fn check(&self, method: &str) -> Result<Range<usize>, ClientError> {
        let invalid = |detail: String| ClientError::Invalid {
            method: method.into(),
            detail,
        };
        let msg = serde_json::from_str::<Msg<'_>>(&self.text)
            .map_err(|e| invalid(format!("not valid JSON-RPC ({e})")))?;
        match msg.kind() {
            Kind::Response {
                outcome: Ok(raw), ..
            } => subrange(&self.text, raw.get())
                .ok_or_else(|| invalid("the result could not be located".into())),
            Kind::Response {
                outcome: Err(error),
                ..
            } => Err(ClientError::Rpc {
                method: method.into(),
                error: Box::new(error),
            }),
            Kind::BadResponse { problem, .. } => Err(invalid(problem)),
            Kind::Request { .. } | Kind::Notification { .. } | Kind::Invalid => {
                Err(invalid("not a JSON-RPC answer".into()))
            }
        }
    }
}

/// Hashes our integer request ids with one multiplication (they are not attacker-chosen:
/// we pick them), instead of SipHash on every request and answer.
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(*b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0 ^ n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

type IdMap<V> = HashMap<u64, V, BuildHasherDefault<IdHasher>>;

/// The params of one request: a JSON value, or those of `tools/call`, written without
/// building a value first.
enum Params<'a> {
    None,
    Value(Value),
    /// A JSON object as text, written as it is (MRTR retries keep `requestState` byte-exact).
    Raw(String),
    ToolCall {
        name: &'a str,
        arguments: Option<Value>,
    },
}

impl Params<'_> {
    fn from_value(params: Option<Value>) -> Self {
        params.map_or(Params::None, Params::Value)
    }

    /// The params as a value (the slow path, for adding a progress token).
    fn to_value(&self) -> Option<Value> {
        match self {
            Params::None => None,
            Params::Value(v) => Some(v.clone()),
            Params::Raw(text) => serde_json::from_str(text).ok(),
            Params::ToolCall { name, arguments } => {
                let mut params = Map::with_capacity(2);
                params.insert("name".into(), Value::String(name.to_string()));
                if let Some(a) = arguments {
                    params.insert("arguments".into(), a.clone());
                }
                Some(Value::Object(params))
            }
        }
    }
}

enum ReplyError {
    Rpc(RpcError),
    /// The answer was not a valid JSON-RPC response; the text says why.
    Invalid(String),
    Closed(String),
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
        let params = json!({
            "protocolVersion": LATEST_PROTOCOL_VERSION,
            "capabilities": inner.capabilities(),
            "clientInfo": {"name": "harness9", "version": env!("CARGO_PKG_VERSION")},
        });
        let body = match inner
            .request_once(
                "initialize",
                &Params::Value(params),
                RequestOptions::default(),
                false,
            )
            .await
        {
            Ok(body) => body,
            Err(e) => {
                inner.sender.close().await;
                return Err(initialize_error(e));
            }
        };
        let init: InitializeResult = match body.parse("initialize") {
            Ok(i) => i,
            Err(e) => {
                inner.sender.close().await;
                return Err(e);
            }
        };
        if !SUPPORTED_PROTOCOL_VERSIONS.contains(&init.protocol_version.as_str()) {
            inner.sender.close().await;
            return Err(ClientError::UnsupportedVersion(init.protocol_version));
        }
        inner.notify("notifications/initialized", None)?;
        Ok(Client {
            inner,
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

    pub fn server_info(&self) -> &super::types::Implementation {
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
        self.inner.closed.lock().expect("closed lock").clone()
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
        let mut tools = Vec::new();
        let mut seen = HashSet::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_TOOL_PAGES {
            let params = cursor.as_ref().map(|c| json!({ "cursor": c }));
            let opts = RequestOptions {
                timeout,
                timeout_field: Some(crate::config::STARTUP_TIMEOUT_FIELD),
                progress: None,
            };
            let body = self
                .inner
                .request("tools/list", Params::from_value(params), opts, true)
                .await?;
            let page: ListToolsPage = body.parse("tools/list")?;
            drop(body);
            if tools.is_empty() {
                tools = page.tools; // one page (the usual case): no copy
            } else {
                tools.extend(page.tools);
            }
            match page.next_cursor {
                None => {
                    let tools = self.inner.without_repeats(tools);
                    return Ok(match self.era {
                        Era::Legacy => tools,
                        Era::Modern => self.inner.without_bad_headers(tools),
                    });
                }
                Some(c) if !seen.insert(c.clone()) => {
                    return Err(ClientError::RepeatedCursor {
                        method: "tools/list".into(),
                        cursor: c,
                    })
                }
                Some(c) => cursor = Some(c),
            }
        }
        Err(ClientError::Invalid {
            method: "tools/list".into(),
            detail: format!("more than {MAX_TOOL_PAGES} pages"),
        })
    }

    /// Calls one tool by its raw name. A tool that fails reports `is_error` in the result;
    /// an `Err` means the call itself did not complete.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Option<Value>,
        opts: RequestOptions,
    ) -> Result<CallToolResult, ClientError> {
        let params = Params::ToolCall { name, arguments };
        let body = self.inner.request("tools/call", params, opts, true).await?;
        body.parse("tools/call")
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
        other => other,
    }
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
        let was_pending = self
            .inner
            .pending
            .lock()
            .expect("pending lock")
            .remove(&self.id)
            .is_some();
        self.inner
            .progress
            .lock()
            .expect("progress lock")
            .remove(&self.id);
        if was_pending && self.cancellable {
            let params = json!({"requestId": self.id, "reason": self.reason});
            let _ = self.inner.notify("notifications/cancelled", Some(params));
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
        });
        let reader_inner = inner.clone();
        let mut receiver = conn.receiver;
        tokio::spawn(async move {
            loop {
                match receiver.recv().await {
                    Inbound::Message(bytes) => reader_inner.dispatch(bytes),
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

    fn notify(&self, method: &str, params: Option<Value>) -> Result<(), ClientError> {
        self.sender
            .send(jsonrpc::encode_notification(method, params.as_ref()))
            .map_err(|_| self.closed_error())
    }

    fn closed_error(&self) -> ClientError {
        ClientError::Closed(
            self.closed
                .lock()
                .expect("closed lock")
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
        if self.meta.get().is_none() {
            return self.request_once(method, &params, opts, cancellable).await;
        }
        self.request_modern(method, params, opts, cancellable).await
    }

    /// One request, one answer: no `resultType` handling.
    async fn request_once(
        &self,
        method: &str,
        params: &Params<'_>,
        opts: RequestOptions,
        cancellable: bool,
    ) -> Result<ReplyBody, ClientError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        {
            let closed = self.closed.lock().expect("closed lock");
            if let Some(reason) = closed.as_ref() {
                return Err(ClientError::Closed(reason.clone()));
            }
            self.pending.lock().expect("pending lock").insert(id, tx);
        }
        let mut guard = PendingGuard {
            inner: self,
            id,
            armed: true,
            cancellable,
            reason: "cancelled by the user",
        };
        let had_progress = opts.progress.is_some();
        let modern = self.meta.get().is_some();
        let with_token;
        let mut params = params;
        if let Some(p) = opts.progress {
            // Modern requests get the token beside the rest of `_meta` when written.
            let mut value = if modern { None } else { params.to_value() };
            let obj = value.get_or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(map) = obj {
                let meta = map
                    .entry("_meta")
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(meta) = meta {
                    meta.insert("progressToken".into(), json!(id));
                }
            }
            if !modern {
                with_token = Params::from_value(value);
                params = &with_token;
            }
            self.progress
                .lock()
                .expect("progress lock")
                .insert(id, (p, false));
        }
        let bytes = self.encode_request(id, method, params, had_progress.then_some(id));
        if self.sender.send(bytes).is_err() {
            return Err(self.closed_error());
        }
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
                            .unwrap_or(crate::config::TOOL_TIMEOUT_FIELD),
                    });
                }
            },
            None => rx.await,
        };
        guard.armed = false;
        if had_progress {
            self.progress.lock().expect("progress lock").remove(&id);
        }
        match reply {
            Ok(Ok(body)) => Ok(body),
            Ok(Err(ReplyError::Rpc(mut error))) => {
                if let Some(why) = era::explain(&error) {
                    error.message = format!("{} ({why})", error.message);
                }
                Err(ClientError::Rpc {
                    method: method.to_string(),
                    error: Box::new(error),
                })
            }
            Ok(Err(ReplyError::Invalid(detail))) => Err(ClientError::Invalid {
                method: method.into(),
                detail,
            }),
            Ok(Err(ReplyError::Closed(reason))) => Err(ClientError::Closed(reason)),
            Err(_) => Err(self.closed_error()),
        }
    }

    /// Handles one inbound message (or batch) on the reader task.
    fn dispatch(&self, bytes: Vec<u8>) {
        let text = match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(e) => {
                let bytes = e.as_bytes();
                let preview = String::from_utf8_lossy(&bytes[..bytes.len().min(200)]);
                self.note_garbage(&format!("not valid JSON-RPC (not UTF-8): {preview}"));
                return;
            }
        };
        // The common case, a plain answer, by its shape alone (see `ReplyBody`).
        if let Some((id, range)) = jsonrpc::quick_result(&text) {
            let waiter = self.pending.lock().expect("pending lock").remove(&id);
            if let Some(tx) = waiter {
                let _ = tx.send(Ok(ReplyBody {
                    text,
                    range,
                    checked: false,
                }));
                return;
            }
            // Nobody waits for it: the full path below says so in the log.
        }
        let first = text.bytes().find(|b| !b.is_ascii_whitespace());
        if first == Some(b'[') {
            let result =
                jsonrpc::for_each_message(text.as_bytes(), |msg: Msg<'_>| self.handle(msg.kind()));
            if let Err(e) = result {
                self.note_invalid(&text, &e);
            }
            return;
        }
        // A single answer keeps its result inside the message's own buffer.
        let answered = match serde_json::from_str::<Msg<'_>>(&text) {
            Err(e) => {
                self.note_invalid(&text, &e);
                None
            }
            Ok(msg) => match msg.kind() {
                Kind::Response {
                    id,
                    outcome: Ok(raw),
                } => match subrange(&text, raw.get()) {
                    Some(range) => self.waiter(id).map(|tx| (tx, range)),
                    None => {
                        self.answer(id, Ok(ReplyBody::whole(raw.get().to_owned())));
                        None
                    }
                },
                other => {
                    self.handle(other);
                    None
                }
            },
        };
        if let Some((tx, range)) = answered {
            let _ = tx.send(Ok(ReplyBody {
                text,
                range,
                checked: true,
            }));
        }
    }

    fn handle(&self, kind: Kind<'_>) {
        match kind {
            Kind::Response { id, outcome } => {
                let reply = match outcome {
                    Ok(raw) => Ok(ReplyBody::whole(raw.get().to_owned())),
                    Err(e) => Err(ReplyError::Rpc(e)),
                };
                self.answer(id, reply);
            }
            Kind::Request { id, method, params } => self.serve(id, &method, params),
            Kind::BadResponse { id, problem } => {
                self.note_garbage(&format!("an invalid answer ({problem})"));
                self.answer(id, Err(ReplyError::Invalid(problem)));
            }
            Kind::Notification { method, params } => self.on_notification(&method, params),
            Kind::Invalid => self.note_garbage("a JSON-RPC message with neither method nor result"),
        }
    }

    /// Takes the waiter of the request `id` answers, if it is still waiting.
    fn waiter(&self, id: &RawValue) -> Option<oneshot::Sender<Reply>> {
        let waiter = jsonrpc::parse_id(id)
            .and_then(|id| self.pending.lock().expect("pending lock").remove(&id));
        if waiter.is_none() {
            tracing::debug!(server = %self.name, id = id.get(), "dropped an answer to a request that is no longer waiting");
        }
        waiter
    }

    fn answer(&self, id: &RawValue, reply: Reply) {
        if let Some(tx) = self.waiter(id) {
            let _ = tx.send(reply);
        }
    }

    fn note_invalid(&self, text: &str, e: &serde_json::Error) {
        let mut end = text.len().min(200);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        self.note_garbage(&format!("not valid JSON-RPC ({e}): {}", &text[..end]));
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

    fn on_notification(&self, method: &str, params: Option<&RawValue>) {
        let params: Value = params
            .and_then(|p| serde_json::from_str(p.get()).ok())
            .unwrap_or(Value::Null);
        match method {
            "notifications/progress" => {
                let Some(token) = params.get("progressToken").and_then(|t| {
                    t.as_u64()
                        .or_else(|| t.as_str().and_then(|s| s.parse().ok()))
                }) else {
                    return;
                };
                let Ok(progress) = serde_json::from_value::<Progress>(params) else {
                    return;
                };
                let full = {
                    let mut sinks = self.progress.lock().expect("progress lock");
                    match sinks.get_mut(&token) {
                        Some((sink, noted)) => match sink.try_send(progress) {
                            Err(mpsc::error::TrySendError::Full(_)) if !*noted => {
                                *noted = true;
                                true
                            }
                            Ok(()) | Err(_) => false,
                        },
                        None => false,
                    }
                };
                if full {
                    self.note_garbage(&format!(
                        "progress notifications for request {token}: more than {PROGRESS_QUEUE} were waiting to be read, so newer ones are dropped"
                    ));
                }
            }
            "notifications/tools/list_changed" => {
                let _ = self.events.send(ClientEvent::ToolsChanged);
            }
            "notifications/resources/list_changed" => {
                let _ = self.events.send(ClientEvent::ResourcesChanged);
            }
            "notifications/prompts/list_changed" => {
                let _ = self.events.send(ClientEvent::PromptsChanged);
            }
            "notifications/resources/updated" => {
                if let Some(uri) = params.get("uri").and_then(Value::as_str) {
                    let uri = uri.to_string();
                    let _ = self.events.send(ClientEvent::ResourceUpdated { uri });
                }
            }
            "notifications/elicitation/complete" => {
                if let Some(id) = params.get("elicitationId").and_then(Value::as_str) {
                    if let Some(h) = &self.handler {
                        h.elicitation_complete(id);
                    }
                    let elicitation_id = id.to_string();
                    let _ = self
                        .events
                        .send(ClientEvent::ElicitationComplete { elicitation_id });
                }
            }
            "notifications/cancelled" => {
                if let Some(id) = params.get("requestId") {
                    self.served.cancel(&id.to_string());
                }
            }
            "notifications/message" => {
                let level = params
                    .get("level")
                    .and_then(Value::as_str)
                    .unwrap_or("info")
                    .to_string();
                let text = match params.get("data") {
                    Some(Value::String(s)) => s.clone(),
                    Some(other) => other.to_string(),
                    None => String::new(),
                };
                let text = match params.get("logger").and_then(Value::as_str) {
                    Some(l) => format!("[{l}] {text}"),
                    None => text,
                };
                match level.as_str() {
                    "debug" => tracing::debug!(server = %self.name, "{text}"),
                    "info" | "notice" => tracing::info!(server = %self.name, "{text}"),
                    "warning" => tracing::warn!(server = %self.name, "{text}"),
                    _ => tracing::error!(server = %self.name, "{text}"),
                }
                self.log.push(LogSource::Server, &level, &text);
            }
            other => tracing::debug!(server = %self.name, "ignored notification {other}"),
        }
    }

    /// The connection ended: fail every waiting request at once.
    fn close_all(&self, reason: String) {
        tracing::info!(server = %self.name, "connection closed: {reason}");
        let waiters: Vec<_> = {
            let mut closed = self.closed.lock().expect("closed lock");
            *closed = Some(reason.clone());
            self.pending
                .lock()
                .expect("pending lock")
                .drain()
                .map(|(_, tx)| tx)
                .collect()
        };
        for tx in waiters {
            let _ = tx.send(Err(ReplyError::Closed(reason.clone())));
        }
        self.progress.lock().expect("progress lock").clear();
        self.served.cancel_all();
        let _ = self.events.send(ClientEvent::Closed(reason));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::transport::memory::{self, MemoryPeer};
    use crate::mcp::Content;

    async fn next_id(peer: &mut MemoryPeer) -> u64 {
        let bytes = peer.from_client.recv().await.expect("a request");
        let v: Value = serde_json::from_slice(&bytes).unwrap();
        v["id"].as_u64().expect("a request id")
    }

    fn send_raw(peer: &MemoryPeer, text: String) {
        peer.to_client
            .send(Inbound::Message(text.into_bytes()))
            .unwrap();
    }

    async fn connected() -> (Client, MemoryPeer) {
        let (conn, mut peer) = memory::pair();
        let connect = tokio::spawn(Client::connect(conn, "mem", Arc::default()));
        let id = next_id(&mut peer).await;
        send_raw(
            &peer,
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"protocolVersion":"2025-11-25","capabilities":{{"tools":{{}}}}}}}}"#
            ),
        );
        let client = connect.await.unwrap().unwrap();
        peer.from_client.recv().await.expect("initialized");
        (client, peer)
    }

    /// Calls `echo` and answers it with `answer(id)`.
    async fn call_answered(
        client: &Client,
        peer: &mut MemoryPeer,
        answer: impl Fn(u64) -> String,
    ) -> Result<CallToolResult, ClientError> {
        let call = client.call_tool("echo", None, RequestOptions::default());
        let serve = async {
            let id = next_id(peer).await;
            send_raw(peer, answer(id));
        };
        let (result, ()) = tokio::join!(call, serve);
        result
    }

    const TEXT: &str = r#"{"content":[{"type":"text","text":"hi"}]}"#;

    fn hi() -> CallToolResult {
        CallToolResult {
            content: vec![Content::Text { text: "hi".into() }],
            ..Default::default()
        }
    }

    #[tokio::test]
    async fn answers_of_every_shape_reach_the_caller() {
        let (client, mut peer) = connected().await;
        let shapes: Vec<Box<dyn Fn(u64) -> String>> = vec![
            Box::new(|id| format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{TEXT}}}"#)),
            Box::new(|id| format!(r#"{{"result":{TEXT},"jsonrpc":"2.0","id":{id}}}"#)),
            Box::new(|id| format!(r#"  {{ "id": {id}, "jsonrpc": "2.0", "result": {TEXT} }} "#)),
            // Looks plain up to the result, but has a member after it.
            Box::new(|id| format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{TEXT},"x":1}}"#)),
            Box::new(|id| format!(r#"[{{"jsonrpc":"2.0","id":{id},"result":{TEXT}}}]"#)),
        ];
        for shape in shapes {
            let result = call_answered(&client, &mut peer, shape).await.unwrap();
            assert_eq!(result, hi());
        }
    }

    #[tokio::test]
    async fn an_error_beside_a_result_wins() {
        let (client, mut peer) = connected().await;
        let err = call_answered(&client, &mut peer, |id| {
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{TEXT},"error":{{"code":-5,"message":"boom"}}}}"#
            )
        })
        .await
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "the server answered tools/call with error -5: boom"
        );
        let err = call_answered(&client, &mut peer, |id| {
            format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":7}}}}"#)
        })
        .await
        .unwrap_err();
        assert!(matches!(err, ClientError::Invalid { .. }), "{err}");
    }

    #[tokio::test]
    async fn raw_requests_get_exactly_the_result() {
        let (client, mut peer) = connected().await;
        for answer in [
            r#"{"jsonrpc":"2.0","id":ID,"result":{"a":[1, 2]}}"#,
            r#"{"jsonrpc":"2.0","id":ID,"result":{"a":[1, 2]},"z":null}"#,
        ] {
            let request = client.request("x/y", None, RequestOptions::default());
            let serve = async {
                let id = next_id(&mut peer).await;
                send_raw(&peer, answer.replace("ID", &id.to_string()));
            };
            let (raw, ()) = tokio::join!(request, serve);
            assert_eq!(raw.unwrap().get(), r#"{"a":[1, 2]}"#);
        }
    }
}
