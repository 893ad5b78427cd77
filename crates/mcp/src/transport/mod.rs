//! Transports move serialized JSON-RPC messages and know nothing of MCP methods.
//!
//! A connection is split in two halves: a [`TransportSender`] shared by every caller, and a
//! [`TransportReceiver`] owned by the client's single reader task. A receiver yields
//! [`Inbound::Closed`] exactly once, with the reason the peer went away.

pub mod http;
mod http_auth;
mod http_conn;
pub mod mcp_headers;
pub mod memory;
pub mod sse;
pub mod sse_parse;
pub mod stdio;

use futures::future::BoxFuture;

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

/// What the receiving half yields.
#[derive(Debug)]
pub enum Inbound {
    /// One complete message (one line on stdio, one event or body on HTTP).
    Message(Vec<u8>),
    /// The peer is gone; the text says why (exit status, stderr tail, ...).
    Closed(String),
}

pub trait TransportSender: Send + Sync + 'static {
    /// Queues one message; never waits for the peer to read it.
    fn send(&self, message: Vec<u8>) -> Result<(), TransportError>;
    /// Ends the connection (for stdio: the whole shutdown sequence of the child).
    fn close(&self) -> BoxFuture<'static, ()>;
    /// Which credentials requests go out with now (HTTP with OAuth: it changes whenever
    /// the tokens do); what was received under one is never served under another.
    fn credentials_key(&self) -> u64 {
        0
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
