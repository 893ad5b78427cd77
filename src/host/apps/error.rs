//! Why a view could not be opened, or a view's message was refused.

use crate::mcp::jsonrpc::{INVALID_PARAMS, METHOD_NOT_FOUND};

/// The JSON-RPC code a view hears when a request is refused or fails on the host side.
pub const REFUSED: i64 = -32000;

/// The JSON-RPC code of a message sent out of order (before `initialized`).
pub const INVALID_REQUEST: i64 = -32600;

/// Why a view could not be opened, or a view's message was refused. The text is for the
/// user (a placeholder where the view would be, a line in the server's log) and is what
/// the view hears; [`ViewError::rpc_code`] is the JSON-RPC code it hears it with.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ViewError {
    #[error("the view {0} is closed (its conversation was left, or its server stopped); open it again from its tool call")]
    UnknownView(String),
    #[error("server \"{server}\" is not available: {reason}; its view cannot be shown (the text result stays)")]
    ServerUnavailable { server: String, reason: String },
    #[error("server \"{server}\" no longer offers tool \"{tool}\"; its view cannot be shown (the text result stays)")]
    UnknownTool { server: String, tool: String },
    #[error("tool \"{tool}\" of server \"{server}\" has no interactive view")]
    NoView { server: String, tool: String },
    #[error("could not read the view {uri} from server \"{server}\": {reason}")]
    Read {
        server: String,
        uri: String,
        reason: String,
    },
    #[error("{uri} is not a view: its type is {mime_type}, not text/html;profile=mcp-app")]
    NotAView { uri: String, mime_type: String },
    #[error("the view {uri} is {size} bytes, more than harness9 shows ({limit} bytes)")]
    TooLarge {
        uri: String,
        size: usize,
        limit: usize,
    },
    #[error("the view sent a malformed {method}: {why}")]
    Invalid { method: String, why: String },
    #[error("a view may not send \"{0}\"")]
    UnknownMethod(String),
    #[error("the view sent {0} before it was initialized")]
    NotInitialized(String),
    /// Refused by the host's rules or by the user.
    #[error("{0}")]
    Refused(String),
    #[error("the view sends too much ({what}); it is slowed down")]
    Throttled { what: &'static str },
    /// The request reached the server and failed there.
    #[error("{0}")]
    Failed(String),
    #[error("there is no download {0} (it was saved, discarded, or its view closed)")]
    UnknownDownload(String),
    #[error("could not save {path}: {reason}")]
    Save { path: String, reason: String },
}

impl ViewError {
    /// A stable kebab-case code for front ends (never changes once released).
    pub fn code(&self) -> &'static str {
        match self {
            ViewError::UnknownView(_) => "unknown-view",
            ViewError::ServerUnavailable { .. } => "server-unavailable",
            ViewError::UnknownTool { .. } => "unknown-tool",
            ViewError::NoView { .. } => "no-view",
            ViewError::Read { .. } => "read-failed",
            ViewError::NotAView { .. } => "not-a-view",
            ViewError::TooLarge { .. } => "view-too-large",
            ViewError::Invalid { .. } => "invalid-message",
            ViewError::UnknownMethod(_) => "unknown-method",
            ViewError::NotInitialized(_) => "not-initialized",
            ViewError::Refused(_) => "refused",
            ViewError::Throttled { .. } => "throttled",
            ViewError::Failed(_) => "failed",
            ViewError::UnknownDownload(_) => "unknown-download",
            ViewError::Save { .. } => "save-failed",
        }
    }

    /// The JSON-RPC error code the view hears.
    pub fn rpc_code(&self) -> i64 {
        match self {
            ViewError::UnknownMethod(_) => METHOD_NOT_FOUND,
            ViewError::Invalid { .. } => INVALID_PARAMS,
            ViewError::NotInitialized(_) => INVALID_REQUEST,
            ViewError::UnknownView(_)
            | ViewError::ServerUnavailable { .. }
            | ViewError::UnknownTool { .. }
            | ViewError::NoView { .. }
            | ViewError::Read { .. }
            | ViewError::NotAView { .. }
            | ViewError::TooLarge { .. }
            | ViewError::Refused(_)
            | ViewError::Throttled { .. }
            | ViewError::Failed(_)
            | ViewError::UnknownDownload(_)
            | ViewError::Save { .. } => REFUSED,
        }
    }
}
