//! harness9: an agent harness whose tools come from MCP servers.
//!
//! Layers, top to bottom (see DESIGN.md): [`config`] reads `.mcp.json`; [`mcp`] holds the
//! transports and the client of one server; [`manager`] runs all the servers of a project
//! (lifecycle only), with the host services beside it in [`host`] (asks, pins, catalog,
//! sign-in), composed by the façade [`harness`]; [`tools`] is the registry every front end
//! and the engine use.

// Slicing a `str` by bytes panics inside a multibyte character, and much of our text
// comes from servers, files and models: each slice says why it is safe (an `allow` with
// its reason), or uses `get` or `truncate::prefix`.
#![warn(clippy::string_slice)]

pub mod about;
pub mod config;
pub mod doctor;
pub mod harness;
pub mod host;
pub mod icons;
pub mod install;
pub use harness9_mcp::links;
pub mod manager;
pub mod mcp;
pub mod memory;
pub mod serve;
pub mod term_text;
pub use harness9_mcp::transport::stdio::shell_env;
pub mod tools;
pub use harness9_mcp::truncate;
pub mod trust;
pub mod userdata;
pub use harness::{Chat, ChatState, EventSink, Harness, HarnessOptions};
pub mod bench;
pub mod engine;
pub mod inspect;
pub mod watch;
