//! A server as the details views show it beyond its status (title, icons, whether it
//! takes a logging level and which one the user chose), and the logging levels the user
//! set: remembered per server for the life of the manager and sent again each time the
//! server (re)connects.
//!
//! Invariants: a level is remembered only once a server accepted it; re-applying never
//! blocks the start of a server (it runs in its own task and a failure is only logged).

use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;

use super::surface::FeatureError;
use super::Manager;
use crate::mcp::client::Client;
use crate::mcp::features::{Icon, LogLevel};
use crate::mcp::log::LogSource;

/// The logging levels the user chose, by server.
#[derive(Default)]
pub(super) struct Levels(Mutex<BTreeMap<String, LogLevel>>);

/// What a connected server says about itself, for a details view.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ServerDetails {
    pub name: String,
    /// `serverInfo.title`, when the server gave one (the name stays the identifier).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub title: Option<String>,
    /// The server's icons a front end may load (`https:` and `data:` only).
    pub icons: Vec<Icon>,
    /// Whether it announced `logging` (takes `logging/setLevel`).
    pub logging: bool,
    /// The level the user chose this session, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub log_level: Option<LogLevel>,
}

impl Manager {
    /// Title, icons and logging of a connected server.
    pub fn server_details(&self, server: &str) -> Result<ServerDetails, FeatureError> {
        let client = self.connected(server)?;
        let info = client.server_info();
        Ok(ServerDetails {
            name: server.to_string(),
            title: info
                .title
                .clone()
                .filter(|t| !t.trim().is_empty() && *t != server),
            icons: info
                .icons
                .iter()
                .filter(|i| i.is_loadable())
                .cloned()
                .collect(),
            logging: client.has_capability("logging"),
            log_level: self.log_level(server),
        })
    }

    /// The logging level the user chose for a server this session.
    pub fn log_level(&self, server: &str) -> Option<LogLevel> {
        self.levels().get(server).copied()
    }

    /// Remembers a level the server accepted.
    pub(super) fn remember_log_level(&self, server: &str, level: LogLevel) {
        self.levels().insert(server.to_string(), level);
    }

    /// After a (re)connect: sends the level the user chose, when the server takes one.
    pub(super) fn reapply_log_level(&self, server: &str, client: &Arc<Client>) {
        let Some(level) = self.log_level(server) else {
            return;
        };
        if !client.has_capability("logging") {
            return;
        }
        let client = client.clone();
        let log = self.log(server);
        let server = server.to_string();
        let timeout = self.request_timeout(&server);
        tokio::spawn(async move {
            let text = match client.set_logging_level(level, timeout).await {
                Ok(()) => format!("logging level {} set again after the start", level.as_str()),
                Err(e) => format!(
                    "could not set the logging level {} again: {e}; choose it again",
                    level.as_str()
                ),
            };
            tracing::info!(server = %server, "{text}");
            if let Some(log) = log {
                log.push(LogSource::Host, "info", &text);
            }
        });
    }

    fn levels(&self) -> parking_lot::MutexGuard<'_, BTreeMap<String, LogLevel>> {
        self.inner.surface.levels.0.lock()
    }
}
