//! The host services beside the manager, one folder each, each with its own state and one
//! owner, composed by the façade ([`crate::Harness`]). The manager runs the servers and
//! knows none of them; each service plugs into the manager's hooks
//! ([`crate::manager::Hooks`], [`crate::manager::ToolSink`]) or works on the manager it is
//! given.
//!
//! - [`apps`]: MCP Apps views (a tool's interactive view: opening it, what it may ask,
//!   when it goes).
//! - [`asks`]: what servers ask of the user and the model (elicitation, sampling, roots):
//!   the consent queue, the handler of each server's requests, the sampling flow.
//! - [`inputs`]: the values of entries' `${input:NAME}` references, from the credential
//!   store, for each start.
//! - [`catalog`]: what the servers offer beyond tools (resources, templates, prompts,
//!   completion, logging levels, server details).
//! - [`pins`]: the gate between the manager and the tool registry (tool pins, held
//!   tools, accepting them).
//! - [`signin`]: sign-in sessions of remote servers (tokens, `needs-auth`, sign in/out).
//! - [`tasks`]: MCP tasks (the task table, following each task, cancelling, late
//!   results, the table on disk).

pub mod apps;
pub mod asks;
pub mod catalog;
pub mod inputs;
pub mod pins;
pub mod signin;
pub mod tasks;
