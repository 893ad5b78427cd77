//! The MCP client library (the `harness9-mcp` crate) under the names the rest of the app
//! uses, and the app's side of sampling. The manager of all the servers of a project is
//! [`crate::manager`].

pub use harness9_mcp::protocol::{
    apps, elicit_form, era, features, jsonrpc, requests, schema_text, tasks, types,
};
pub use harness9_mcp::{auth, client, contain, handler, log, transport};

pub mod sampling;

pub use client::{Client, ClientError, ClientEvent, RequestOptions};
pub use log::{LogLine, LogSource, ServerLog};
pub use types::{CallToolResult, Content, Progress, ToolDef};
