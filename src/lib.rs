//! harness9: an agent harness whose tools come from MCP servers.
//!
//! Layers, top to bottom (see DESIGN.md): [`config`] reads `.mcp.json`; [`mcp`] holds the
//! transports, the client of one server and the manager of all servers; [`tools`] is the
//! registry every front end and the engine use.

// Slicing a `str` by bytes panics inside a multibyte character, and much of our text
// comes from servers, files and models: each slice says why it is safe (an `allow` with
// its reason), or uses `get` or `truncate::prefix`.
#![warn(clippy::string_slice)]

pub mod about;
pub mod config;
pub mod doctor;
pub mod harness;
pub mod icons;
pub use harness9_mcp::links;
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

/// Fuzz target bodies, shared by the fuzzer (`fuzz/`) and the corpus replay test.
#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
#[allow(
    clippy::string_slice,
    reason = "fuzz harness code, not run on real input"
)]
pub mod fuzz_targets;
