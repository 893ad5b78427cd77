//! What the integration tests share, each piece once: the binaries under test and the real
//! servers ([`bins`]), scratch projects ([`project`]), clients of one server ([`client`],
//! [`memory`], [`era`]), waits with a deadline ([`wait`]), processes ([`process`]), the
//! scripted model provider ([`provider_stub`]) and agent turns ([`turns`]), the HTTP fixture
//! ([`http`]), the registry fixture and offline package runners ([`registry`]), servers on
//! loopback ports ([`server`]), sign-in ([`auth`]), a scratch user
//! ([`home`]) and terminals ([`terminal`]).
//!
//! Test files hold tests, and what only that file uses.

pub mod auth;
pub mod bins;
pub mod client;
pub mod era;
pub mod home;
pub mod http;
pub mod memory;
pub mod process;
pub mod project;
pub mod provider_stub;
pub mod registry;
pub mod server;
pub mod terminal;
pub mod turns;
pub mod wait;

pub use bins::{external, fixture_bin, harness9_bin};
pub use project::{stderr, stdout, Project};
pub use wait::{state_of, wait_until};
