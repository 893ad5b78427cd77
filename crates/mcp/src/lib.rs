//! harness9-mcp: an MCP client library. It speaks both protocol eras (the `initialize`
//! handshake of 2024-11-05 … 2025-11-25 and the stateless 2026-07-28 one) over stdio,
//! Streamable HTTP and the legacy HTTP+SSE transport, signs in to servers that need it,
//! and answers what servers ask of a client through one handler trait. It knows nothing
//! of the app that uses it.
//!
//! Rooms, bottom to top: [`protocol`] (types and JSON-RPC framing; imports nothing else
//! of this crate) → [`transport`] (moves messages: stdio with its process containment,
//! Streamable HTTP, legacy SSE) and [`auth`] beside it (OAuth for HTTP servers) →
//! [`client`] (one connection, both eras). Small leaves used by all: [`log`] (a server's
//! bounded log), [`mask`] (URLs without their secrets), [`links`] (which URLs may be
//! opened), [`truncate`], [`contain`] (panic containment), [`settings`].

// Slicing a `str` by bytes panics inside a multibyte character, and much of our text
// comes from servers: each slice says why it is safe, or uses `get` or `truncate::prefix`.
#![warn(clippy::string_slice)]

pub mod auth;
pub mod client;
pub mod contain;
pub mod handler;
pub mod http;
pub mod links;
pub mod log;
pub mod mask;
pub mod protocol;
pub mod settings;
pub mod transport;
pub mod truncate;

pub use client::{Client, ClientError, ClientEvent, RequestOptions};
pub use log::{LogLine, LogSource, ServerLog};
pub use protocol::types::{CallToolResult, Content, Progress, ToolDef};
