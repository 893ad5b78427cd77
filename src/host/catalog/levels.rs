//! The logging levels the user chose, by server: remembered for the life of the catalog and
//! sent again each time the server (re)connects.
//!
//! Invariants: a level is remembered only once a server accepted it; sending it again
//! never blocks the start of a server (it runs in its own task and a failure is only
//! logged).

use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use crate::mcp::client::Client;
use crate::mcp::features::LogLevel;
use crate::mcp::log::{LogSource, ServerLog};

/// The logging levels the user chose, by server.
#[derive(Default)]
pub(super) struct Levels(Mutex<BTreeMap<String, LogLevel>>);

impl Levels {
    /// The level the user chose for a server this session.
    pub(super) fn get(&self, server: &str) -> Option<LogLevel> {
        self.0.lock().get(server).copied()
    }

    /// Remembers a level the server accepted.
    pub(super) fn remember(&self, server: &str, level: LogLevel) {
        self.0.lock().insert(server.to_string(), level);
    }

    /// After a (re)connect: sends the level the user chose, when the server takes one.
    pub(super) fn reapply(
        &self,
        server: &str,
        client: &Arc<Client>,
        log: &Arc<ServerLog>,
        timeout: Duration,
    ) {
        let Some(level) = self.get(server) else {
            return;
        };
        if !client.has_capability("logging") {
            return;
        }
        let (client, log, server) = (client.clone(), log.clone(), server.to_string());
        tokio::spawn(async move {
            let text = match client.set_logging_level(level, Some(timeout)).await {
                Ok(()) => format!("logging level {} set again after the start", level.as_str()),
                Err(e) => format!(
                    "could not set the logging level {} again: {e}; choose it again",
                    level.as_str()
                ),
            };
            tracing::info!(server = %server, "{text}");
            log.push(LogSource::Host, "info", &text);
        });
    }
}
