//! A server as the details views show it beyond its status: title, icons, whether it
//! takes a logging level and which one the user chose.

use serde::Serialize;

use crate::mcp::client::Client;
use crate::mcp::features::{Icon, LogLevel};

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

impl ServerDetails {
    /// The details of `server`, connected through `client`.
    pub fn of(server: &str, client: &Client, log_level: Option<LogLevel>) -> ServerDetails {
        let info = client.server_info();
        ServerDetails {
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
            log_level,
        }
    }
}
