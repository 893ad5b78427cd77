//! How the manager opens a server in its protocol era: the `protocolEra` setting, and for a
//! local server a way to start it once more should the era probe make it exit. The sender
//! of whichever process is current is kept in one place, so a start-up that fails or times
//! out stops the process that is really running.
//!
//! A local server is probed each time it starts (each process may be another program). A
//! remote one keeps the era it was found to speak, by URL, for the life of the manager:
//! connecting again (a restart, a reload) speaks it at once, without the probe; a start
//! that fails forgets it, so the next one probes again.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;

use super::Manager;
use crate::config::{ProtocolEra, ServerConfig, TransportConfig};
use crate::mcp::client::{ConnectOptions, Reopen};
use crate::mcp::era::Era;
use crate::mcp::handler::ClientHandler;
use crate::mcp::log::ServerLog;
use crate::mcp::transport::TransportSender;

/// The sender of the server process that is current during a start-up.
pub(super) type CurrentSender = Arc<Mutex<Arc<dyn TransportSender>>>;

/// The era each remote server was found to speak, by URL.
#[derive(Default)]
pub(super) struct Verdicts(Mutex<HashMap<String, Era>>);

impl Manager {
    /// The options for [`crate::mcp::Client::connect_opts`] of one start-up.
    pub(super) fn connect_options(
        &self,
        name: &str,
        cfg: &ServerConfig,
        log: Arc<ServerLog>,
        gen: u64,
        handler: Option<Arc<dyn ClientHandler>>,
        current: CurrentSender,
    ) -> ConnectOptions {
        let stdio = matches!(cfg.transport, TransportConfig::Stdio { .. });
        let era = match (&cfg.transport, cfg.era) {
            // The HTTP+SSE transport (2024-11-05) is legacy by definition.
            (TransportConfig::Sse { .. }, _) => ProtocolEra::Legacy,
            (TransportConfig::Http { url, .. }, ProtocolEra::Auto) => {
                let known = self.verdicts().get(url).copied();
                match known {
                    Some(Era::Legacy) => ProtocolEra::Legacy,
                    Some(Era::Modern) => ProtocolEra::Modern,
                    None => ProtocolEra::Auto,
                }
            }
            (_, era) => era,
        };
        let reopen: Option<Reopen> = stdio.then(|| {
            let me = self.clone();
            let cfg = cfg.clone();
            let name = name.to_string();
            let reopen: Reopen = Box::new(move || {
                Box::pin(async move {
                    let (conn, _) = me.open_transport(&cfg, log, None)?;
                    *current.lock() = conn.sender.clone();
                    let mut slots = me.lock();
                    match slots.get_mut(&name) {
                        Some(slot) if slot.generation == gen => {
                            slot.starting = Some(conn.sender.clone());
                            Ok(conn)
                        }
                        _ => Err("stopped".to_string()),
                    }
                })
            });
            reopen
        });
        ConnectOptions {
            handler,
            era,
            reopen,
            // stdio: a legacy server may stay silent; HTTP answers every request (an error
            // status at least), and signing in may come first.
            probe_timeout: stdio.then_some(crate::mcp::era::DISCOVER_TIMEOUT),
        }
    }

    /// After a start-up: keeps a remote server's era (`Some`), or forgets it (`None`: the
    /// start failed, and the next one probes).
    pub(super) fn note_era(&self, cfg: &ServerConfig, era: Option<Era>) {
        let TransportConfig::Http { url, .. } = &cfg.transport else {
            return;
        };
        if cfg.era != ProtocolEra::Auto {
            return;
        }
        let mut verdicts = self.verdicts();
        match era {
            Some(era) => verdicts.insert(url.clone(), era),
            None => verdicts.remove(url),
        };
    }

    fn verdicts(&self) -> parking_lot::MutexGuard<'_, HashMap<String, Era>> {
        self.inner.era_verdicts.0.lock()
    }
}
