//! Transports move serialized JSON-RPC messages and know nothing of MCP methods.
//!
//! A connection is split in two halves: a [`TransportSender`] shared by every caller, and a
//! [`TransportReceiver`] owned by the client's single reader task. A receiver yields
//! [`Inbound::Closed`] exactly once, with the reason the peer went away.
//!
//! Every outbound message comes as an [`Outbound`]: its bytes, written once by the client's
//! encoder, with what a transport needs to know about it (request id, whether it opens or
//! ends the handshake, which request a cancellation names, the protocol era's HTTP
//! headers), so that no transport ever parses outgoing JSON. Stdio writes the bytes.
//! A transport with sessions (Streamable HTTP) that finds its session gone says so
//! ([`Inbound::SessionLost`]) and hands the unanswered request back; the client starts a
//! new session and sends it again. A transport replays nothing and invents no message.

pub mod http;
mod http_answer;
mod http_auth;
mod http_conn;
mod http_exchange;
mod http_pipeline;
pub mod mcp_headers;
pub mod memory;
pub mod sse;
pub mod sse_parse;
pub mod stdio;

use std::borrow::Cow;

use bytes::Bytes;
use futures::future::BoxFuture;
use reqwest::header::{HeaderName, HeaderValue};

/// Why a transport could not deliver a message.
#[derive(Debug, Clone, thiserror::Error)]
pub enum TransportError {
    #[error("the connection to the server is closed")]
    Closed,
    /// The server stopped reading its input (stdio): the write queue is full.
    #[error("the server is not reading its input ({queued} bytes are waiting to be written); restart the server")]
    Backlog { queued: usize },
}

impl TransportError {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        match self {
            TransportError::Closed => "connection-closed",
            TransportError::Backlog { .. } => "server-not-reading",
        }
    }
}

/// One message on its way to the server, as the client's encoder wrote it.
#[derive(Debug, Clone)]
pub struct Outbound {
    /// The JSON-RPC message, written once; sent as it is.
    pub bytes: Bytes,
    pub kind: OutboundKind,
    /// What the protocol era adds on HTTP; other transports ignore it.
    pub era: EraHeaders,
}

/// What an outbound message is, as far as a transport cares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutboundKind {
    /// A request; its response carries `id`. `initialize` marks the handshake's request:
    /// HTTP sends it without a session, alone, and takes the session its answer starts.
    Request {
        id: u64,
        method: Cow<'static, str>,
        initialize: bool,
    },
    /// A notification. `initialized` marks the end of the handshake; `cancels` names the
    /// request a cancellation is about (HTTP drops that request's exchange).
    Notification {
        method: Cow<'static, str>,
        initialized: bool,
        cancels: Option<u64>,
    },
    /// The answer to a request from the server.
    Response,
}

/// The HTTP headers and rules of the protocol era one message goes out under.
#[derive(Debug, Clone, Default)]
pub struct EraHeaders {
    /// The modern era (2026-07-28): no session; cancelling a request closes its answer
    /// stream instead of sending `notifications/cancelled`; a `400` whose body is a
    /// JSON-RPC error is the answer; a broken answer stream is not resumed.
    pub modern: bool,
    /// `MCP-Protocol-Version`, once the version is settled.
    pub version: Option<HeaderValue>,
    /// The message's own headers (modern: `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`).
    pub more: Vec<(HeaderName, HeaderValue)>,
}

/// The methods a client sends: an envelope names one of them without allocating.
const CLIENT_METHODS: [&str; 24] = [
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "server/discover",
    "subscriptions/listen",
    "tasks/get",
    "tasks/result",
    "tasks/cancel",
    "tasks/update",
    "tasks/list",
    "notifications/initialized",
    "notifications/cancelled",
    "notifications/progress",
    "notifications/roots/list_changed",
];

fn method_name(method: &str) -> Cow<'static, str> {
    match CLIENT_METHODS.iter().find(|m| **m == method) {
        Some(m) => Cow::Borrowed(*m),
        None => Cow::Owned(method.to_string()),
    }
}

impl Outbound {
    /// A request with id `id`.
    pub fn request(bytes: impl Into<Bytes>, id: u64, method: &str, era: EraHeaders) -> Outbound {
        Outbound {
            bytes: bytes.into(),
            kind: OutboundKind::Request {
                id,
                method: method_name(method),
                initialize: false,
            },
            era,
        }
    }

    /// A notification (the handshake's end and cancellations say so in `kind`).
    pub fn notification(bytes: impl Into<Bytes>, method: &str, era: EraHeaders) -> Outbound {
        Outbound {
            bytes: bytes.into(),
            kind: OutboundKind::Notification {
                method: method_name(method),
                initialized: false,
                cancels: None,
            },
            era,
        }
    }

    /// An answer to a server's request.
    pub fn response(bytes: impl Into<Bytes>, era: EraHeaders) -> Outbound {
        Outbound {
            bytes: bytes.into(),
            kind: OutboundKind::Response,
            era,
        }
    }

    /// The id of a request.
    pub fn request_id(&self) -> Option<u64> {
        match &self.kind {
            OutboundKind::Request { id, .. } => Some(*id),
            OutboundKind::Notification { .. } | OutboundKind::Response => None,
        }
    }
}

/// What the receiving half yields.
#[derive(Debug)]
pub enum Inbound {
    /// One complete message (one line on stdio, one event or body on HTTP).
    Message(Vec<u8>),
    /// The server no longer knows the session (HTTP `404` on a request that carried its
    /// id). `session` numbers the sessions of the connection, so that many messages lost
    /// with one session start one new session; `request` is the request that got no
    /// answer, handed back unsent (`None` for a notification or response).
    SessionLost {
        session: u64,
        request: Option<Box<Outbound>>,
    },
    /// The peer is gone; the text says why (exit status, stderr tail, ...).
    Closed(String),
}

pub trait TransportSender: Send + Sync + 'static {
    /// Queues one message; never waits for the peer to read it.
    fn send(&self, message: Outbound) -> Result<(), TransportError>;
    /// Ends the connection (for stdio: the whole shutdown sequence of the child).
    fn close(&self) -> BoxFuture<'static, ()>;
    /// Which credentials requests go out with now (HTTP with OAuth: it changes whenever
    /// the tokens do); what was received under one is never served under another.
    fn credentials_key(&self) -> u64 {
        0
    }
    /// Whether the server may lose the connection's session (Streamable HTTP), so that the
    /// client keeps what it needs to start a new one ([`Inbound::SessionLost`]).
    fn has_sessions(&self) -> bool {
        false
    }
    /// Whether the transport sends the era's HTTP headers ([`Outbound::era`]); for one
    /// that does not, the client leaves them empty instead of working them out.
    fn uses_era_headers(&self) -> bool {
        false
    }
}

pub trait TransportReceiver: Send + 'static {
    fn recv(&mut self) -> BoxFuture<'_, Inbound>;
}

/// Both halves of a fresh connection.
pub struct Connection {
    pub sender: std::sync::Arc<dyn TransportSender>,
    pub receiver: Box<dyn TransportReceiver>,
}
