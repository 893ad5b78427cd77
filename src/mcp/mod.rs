//! The MCP side of the app: the manager of all the servers of a project, and the client
//! library (the `harness9-mcp` crate) under the names the rest of the app uses.

pub use harness9_mcp::protocol::{
    elicit_form, era, features, jsonrpc, requests, schema_text, types,
};
pub use harness9_mcp::{auth, client, contain, handler, log, transport};

pub mod sampling;

pub use client::{Client, ClientError, ClientEvent, RequestOptions};
pub use log::{LogLine, LogSource, ServerLog};
pub use types::{CallToolResult, Content, Progress, ToolDef};
pub mod manager;
pub use manager::{AcceptError, ApproveOutcome, RestartPolicy, RestartStatus};
pub use manager::{
    ApprovalPolicy, Manager, ManagerOptions, ServerState, ServerStatus, StatusSnapshot, ToolSink,
};
