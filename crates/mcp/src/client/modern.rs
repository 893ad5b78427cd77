//! Opening a connection in the right era. With [`ProtocolEra::Auto`] the client probes with
//! `server/discover` at our preferred modern version: a `DiscoverResult` or a recognized
//! modern error (`-32022` naming the versions the server speaks) means modern, and the
//! client stays modern (retrying at a common version); any other error, an invalid answer
//! or silence for [`DISCOVER_TIMEOUT`] means legacy, and `initialize` follows on the same
//! connection (while a late answer to the probe, from a modern server slow to start, still
//! wins). A legacy server that exits on the unknown method is opened once more (via
//! [`ConnectOptions::reopen`]) for `initialize`. The fallback never keys on one error code.

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;

use super::{Client, ClientError, Inner, Params, RequestOptions};
use crate::handler::ClientHandler;
use crate::log::{LogSource, ServerLog};
use crate::protocol::era::{
    self, DiscoverResult, Era, ProtocolEra, DISCOVER_TIMEOUT, MODERN_PROTOCOL_VERSION,
};
use crate::transport::{mcp_headers, Connection, EraHeaders};

/// Opens the same server anew (a fresh process for stdio).
pub type Reopen = Box<dyn FnOnce() -> BoxFuture<'static, Result<Connection, String>> + Send>;

/// How to open a connection: the handler of the server's requests, the era, and how to
/// start the server again should the probe make it exit.
pub struct ConnectOptions {
    pub handler: Option<Arc<dyn ClientHandler>>,
    pub era: ProtocolEra,
    pub reopen: Option<Reopen>,
    /// How long the probe waits for an answer before taking the server for a legacy one
    /// that ignores it ([`DISCOVER_TIMEOUT`] on stdio). `None` waits for the answer: on
    /// HTTP every request gets one (an error status at least), and signing in may come
    /// first.
    pub probe_timeout: Option<Duration>,
}

impl Default for ConnectOptions {
    fn default() -> Self {
        ConnectOptions {
            handler: None,
            era: ProtocolEra::Auto,
            reopen: None,
            probe_timeout: Some(DISCOVER_TIMEOUT),
        }
    }
}

/// What the probe found out.
enum Probe {
    /// Connected: a modern server, or (after a silent probe) the legacy handshake.
    Connected(Box<Client>),
    /// Not a modern server; the connection is still open for `initialize`.
    Legacy(String),
    /// The connection ended during the probe.
    Closed(String),
}

impl Client {
    /// Opens a connection in the era `opts.era` asks for (probing with `Auto`). No timeout
    /// here beyond the probe's own: the caller bounds the whole start-up.
    pub async fn connect_opts(
        conn: Connection,
        name: &str,
        log: Arc<ServerLog>,
        opts: ConnectOptions,
    ) -> Result<Client, ClientError> {
        let inner = Inner::start(conn, name, log.clone(), opts.handler.clone());
        match opts.era {
            ProtocolEra::Legacy => Client::initialize(inner).await,
            ProtocolEra::Modern => match Client::discover(&inner, false).await {
                Ok(client) => Ok(client),
                Err(e) => {
                    inner.sender.close().await;
                    Err(e)
                }
            },
            ProtocolEra::Auto => match Client::probe(&inner, opts.probe_timeout, &log).await? {
                Probe::Connected(client) => Ok(*client),
                Probe::Legacy(why) => {
                    note(&log, &format!("speaking the legacy protocol ({why})"));
                    Client::initialize(inner).await
                }
                Probe::Closed(reason) => {
                    let Some(reopen) = opts.reopen else {
                        return Err(ClientError::Closed(reason));
                    };
                    note(
                        &log,
                        &format!("the server exited on server/discover ({reason}); starting it again for the legacy protocol"),
                    );
                    log.mark_new_process();
                    let conn = reopen().await.map_err(ClientError::Closed)?;
                    let inner = Inner::start(conn, name, log, opts.handler);
                    Client::initialize(inner).await
                }
            },
        }
    }

    /// The probe: `server/discover`, waited for at most `wait` when given. A server still
    /// silent then gets `initialize`, but its answer to the probe is still listened for:
    /// a modern server that was merely slow to start answers the probe first (and refuses
    /// `initialize`), and stays modern.
    async fn probe(
        inner: &Arc<Inner>,
        wait: Option<Duration>,
        log: &ServerLog,
    ) -> Result<Probe, ClientError> {
        let discover = Client::discover(inner, true);
        tokio::pin!(discover);
        let first = match wait {
            Some(wait) => tokio::time::timeout(wait, &mut discover).await.ok(),
            None => Some((&mut discover).await),
        };
        let Some(outcome) = first else {
            let silent = format!(
                "no answer to server/discover within {}",
                super::fmt_duration(wait.unwrap_or_default())
            );
            let handshake = Client::handshake(inner);
            tokio::pin!(handshake);
            let mut probe_pending = true;
            loop {
                tokio::select! {
                    late = &mut discover, if probe_pending => match late {
                        Ok(client) => {
                            note(log, "the server answered server/discover late; speaking the modern protocol");
                            return Ok(Probe::Connected(Box::new(client)));
                        }
                        // Legacy after all: the handshake decides.
                        Err(_) => probe_pending = false,
                    },
                    legacy = &mut handshake => {
                        let refused = match legacy {
                            Ok(client) => {
                                note(log, &format!("speaking the legacy protocol ({silent})"));
                                return Ok(Probe::Connected(Box::new(client)));
                            }
                            Err(e) => e,
                        };
                        // A refused handshake may be a modern server answering late.
                        if probe_pending {
                            let late = tokio::time::timeout(DISCOVER_TIMEOUT, &mut discover).await;
                            if let Ok(Ok(client)) = late {
                                return Ok(Probe::Connected(Box::new(client)));
                            }
                        }
                        if let ClientError::Closed(reason) = refused {
                            // A slow legacy server that exited on the probe after all.
                            return Ok(Probe::Closed(reason));
                        }
                        inner.sender.close().await;
                        return Err(refused);
                    }
                }
            }
        };
        match outcome {
            Ok(client) => Ok(Probe::Connected(Box::new(client))),
            Err(ClientError::Closed(reason)) => Ok(Probe::Closed(reason)),
            Err(ClientError::Rpc { error, .. }) if !era::is_modern_error(&error) => Ok(
                Probe::Legacy(format!("server/discover: error {}", error.code)),
            ),
            Err(ClientError::Invalid { detail, .. }) => Ok(Probe::Legacy(format!(
                "server/discover: invalid answer ({detail})"
            ))),
            // A modern server that refuses every version we speak, or another failure: no
            // fallback.
            Err(e) => {
                inner.sender.close().await;
                Err(e)
            }
        }
    }

    /// `server/discover` at our preferred version, once more at a common version when the
    /// server names the ones it speaks; settles the connection as modern.
    async fn discover(inner: &Arc<Inner>, probing: bool) -> Result<Client, ClientError> {
        let mut version = MODERN_PROTOCOL_VERSION;
        for attempt in 0..2 {
            let meta = era::meta_members(version, &era::modern_capabilities(&inner.capabilities()));
            let params = Params::Raw(format!("{{\"_meta\":{{{meta}}}}}"));
            // Not cancellable while probing: a legacy server must see nothing but
            // `initialize` after an unanswered probe.
            let outcome = inner
                .request_once_as(
                    "server/discover",
                    &params,
                    RequestOptions::default(),
                    !probing,
                    Some(discover_headers(version)),
                )
                .await;
            let body = match outcome {
                Ok(body) => body,
                Err(ClientError::Rpc { method, error }) => {
                    let offered = era::unsupported_versions(&error);
                    match offered
                        .as_deref()
                        .map(|o| era::common_version(o.iter().map(String::as_str)))
                    {
                        // Even our own version again: the server may have refused it
                        // for this request only.
                        Some(Some(common)) if attempt == 0 => {
                            version = common;
                            continue;
                        }
                        Some(_) => return Err(no_common_version(&offered.unwrap_or_default())),
                        None => return Err(ClientError::Rpc { method, error }),
                    }
                }
                Err(e) => return Err(e),
            };
            let result: DiscoverResult = body.parse("server/discover")?;
            let settled = if result.supported_versions.iter().any(|v| v == version) {
                version
            } else {
                match era::common_version(result.supported_versions.iter().map(String::as_str)) {
                    Some(v) => v,
                    None => return Err(no_common_version(&result.supported_versions)),
                }
            };
            let meta = era::meta_members(settled, &era::modern_capabilities(&inner.capabilities()));
            let _ = inner.meta.set(meta.into_boxed_str());
            inner.settle_version(settled);
            return Ok(Client {
                inner: inner.clone(),
                init: result.into_summary(settled),
                era: Era::Modern,
            });
        }
        Err(no_common_version(&[]))
    }
}

/// The headers of a `server/discover` at `version` (the era is not settled yet).
fn discover_headers(version: &str) -> EraHeaders {
    EraHeaders {
        modern: true,
        version: reqwest::header::HeaderValue::from_str(version).ok(),
        more: mcp_headers::modern_headers("server/discover", None, None, &[]),
    }
}

fn no_common_version(offered: &[String]) -> ClientError {
    let offered = if offered.is_empty() {
        "no version harness9 knows".to_string()
    } else {
        offered.join(", ")
    };
    ClientError::NoCommonVersion { offered }
}

fn note(log: &ServerLog, text: &str) {
    tracing::debug!("{text}");
    log.push(LogSource::Host, "info", text);
}
