//! The per-server settings the client's own messages point the user to (by their
//! `.mcp.json` field names), and the client's default message size limit.

/// `.mcp.json` field (seconds, may be fractional) overriding the host's start-up timeout.
pub const STARTUP_TIMEOUT_FIELD: &str = "startupTimeoutSec";

/// `.mcp.json` field (seconds, may be fractional) overriding the host's tool-call timeout.
pub const TOOL_TIMEOUT_FIELD: &str = "toolTimeoutSec";

/// The largest single message (a stdio line, an HTTP body, an SSE event) read from a
/// server. A longer one is discarded as it streams in, never buffered past this size.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 128 * 1024 * 1024;

/// `.mcp.json` field (bytes) overriding [`DEFAULT_MAX_MESSAGE_BYTES`] for one server.
pub const MAX_MESSAGE_FIELD: &str = "maxMessageBytes";
