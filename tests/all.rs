//! The one integration test binary: real MCP servers, our fixture server and the CLI.

mod suite;
