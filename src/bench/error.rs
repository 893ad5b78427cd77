//! Why a scenario of `harness9 bench mcp` failed: one [`BenchError`] for the client's
//! scenarios (stdio and HTTP) and for the floor's runs. Its text is the `error` of the
//! scenario's `ok:false` line (or the line's `floor_error`), so it says what went wrong in
//! the words of the contract's reader; its [`code`](BenchError::code) names the kind.

use std::time::Duration;

use crate::mcp::transport::stdio::SpawnError;
use crate::mcp::ClientError;

/// Why one run of a scenario failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum BenchError {
    /// The library's stdio transport could not start the server.
    #[error(transparent)]
    Spawn(#[from] SpawnError),
    /// Reaching the server failed outside a request: the floor could not start it, read
    /// from it or write to it, or it closed; the HTTP connection could not be opened.
    #[error("{0}")]
    Server(String),
    /// The handshake failed.
    #[error("initialize failed: {0}")]
    Initialize(Box<ClientError>),
    /// A request failed: the client's error, or the error the server answered the floor.
    #[error("{method} failed: {error}")]
    Request { method: &'static str, error: String },
    /// The server answered, but not what was asked (a tool error, other text, fewer items
    /// than asked for, an answer without a result).
    #[error("{0}")]
    WrongAnswer(String),
    #[error("did not finish within {} s", .0.as_secs())]
    Timeout(Duration),
    /// The scenario's task or thread ended early, or could not be started.
    #[error("{0}")]
    Crashed(String),
    /// A scenario this mode does not run (over HTTP, in the floor); the text says why.
    #[error("{0}")]
    NotRun(String),
}

impl BenchError {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        match self {
            BenchError::Spawn(e) => e.code(),
            BenchError::Server(_) => "server-failed",
            BenchError::Initialize(_) => "initialize-failed",
            BenchError::Request { .. } => "request-failed",
            BenchError::WrongAnswer(_) => "wrong-answer",
            BenchError::Timeout(_) => "timeout",
            BenchError::Crashed(_) => "crashed",
            BenchError::NotRun(_) => "not-run",
        }
    }

    /// A request of the client that failed.
    pub(crate) fn request(method: &'static str, error: ClientError) -> BenchError {
        BenchError::Request {
            method,
            error: error.to_string(),
        }
    }
}
