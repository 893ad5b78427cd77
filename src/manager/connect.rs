//! One start of one server, from spawning it to its connection's end: the transport, the
//! handshake in the server's era, the first listing (all within the start-up timeout),
//! re-listing on `list_changed`, and what its end leaves (failed, or waiting for sign-in).

use parking_lot::Mutex;
use std::sync::Arc;
use std::time::Instant;

use super::{era, Manager, Run, ServerState, StartPhase, ToolListing};
use crate::config::{inputs, ServerConfig, TransportConfig};
use crate::mcp::client::{fmt_duration, Client, ClientEvent};
use crate::mcp::log::{LogSource, ServerLog};
use crate::mcp::transport::http::{self, HttpSpec, TransportKind};
use crate::mcp::transport::stdio::{self, StdioSpec};
use crate::mcp::transport::Connection;
use crate::mcp::types::ToolDef;

impl Manager {
    pub(super) async fn run_server(
        &self,
        name: String,
        cfg: ServerConfig,
        log: Arc<ServerLog>,
        gen: u64,
    ) {
        let outcome = self.connect(&name, &cfg, log.clone(), gen).await;
        let client = match outcome {
            Ok(c) => c,
            Err(reason) => {
                if self.settle_needs_auth(&name, gen, &log) {
                    return;
                }
                let tail = log.stderr_tail();
                log.push(
                    LogSource::Host,
                    "error",
                    &format!("failed to start: {reason}"),
                );
                self.set_state(
                    &name,
                    gen,
                    ServerState::Failed {
                        reason,
                        stderr_tail: tail,
                    },
                );
                return;
            }
        };
        let run = Run::new(self, &name, gen);
        for observer in &self.inner.hooks.observers {
            observer.connected(&run, &client, &cfg, &log);
        }
        self.watch_events(&name, &cfg, client, gen).await;
    }

    /// Spawn, handshake and first listing, all within the start-up timeout.
    pub(super) async fn connect(
        &self,
        name: &str,
        cfg: &ServerConfig,
        log: Arc<ServerLog>,
        gen: u64,
    ) -> Result<Arc<Client>, String> {
        let resolved = self.with_inputs(cfg).await?;
        let authorizer = self.new_authorizer(name, &resolved, gen);
        let (conn, kind) = self.open_transport(&resolved, log.clone(), authorizer)?;
        let sender = conn.sender.clone();
        let current = {
            let mut slots = self.lock();
            match slots.get_mut(name) {
                Some(slot) if slot.generation == gen => {
                    slot.starting = Some(sender.clone());
                    slot.transport_in_use = kind;
                    true
                }
                _ => false,
            }
        };
        if !current {
            sender.close().await;
            return Err("stopped".into());
        }
        let current: era::CurrentSender = Arc::new(Mutex::new(sender.clone()));
        let phase = Arc::new(Mutex::new(StartPhase::Initializing));
        self.set_state(
            name,
            gen,
            ServerState::Starting {
                phase: StartPhase::Initializing,
            },
        );
        let steps = async {
            let handler = self
                .inner
                .hooks
                .requests
                .as_ref()
                .map(|r| r.handler(name, cfg, log.clone()));
            let opts =
                self.connect_options(name, &resolved, log.clone(), gen, handler, current.clone());
            let client = Client::connect_opts(conn, name, log, opts).await;
            self.note_era(cfg, client.as_ref().ok().map(Client::era));
            let client = Arc::new(client.map_err(|e| e.to_string())?);
            *phase.lock() = StartPhase::ListingTools;
            self.set_state(
                name,
                gen,
                ServerState::Starting {
                    phase: StartPhase::ListingTools,
                },
            );
            let tools = client.list_tools(None).await.map_err(|e| e.to_string())?;
            Ok::<_, String>((client, tools))
        };
        let result = tokio::time::timeout(cfg.startup_timeout, steps).await;
        let (client, tools) = match result {
            Ok(Ok(done)) => done,
            Ok(Err(e)) => {
                let sender = current.lock().clone();
                sender.close().await;
                return Err(e);
            }
            Err(_) => {
                let sender = current.lock().clone();
                sender.close().await;
                let phase = *phase.lock();
                return Err(format!(
                    "did not finish starting within {} (stuck {}); raise \"{}\" in .mcp.json if the server needs longer",
                    fmt_duration(cfg.startup_timeout),
                    phase.label(),
                    crate::config::STARTUP_TIMEOUT_FIELD
                ));
            }
        };
        let current = {
            let mut slots = self.lock();
            match slots.get_mut(name) {
                Some(slot) if slot.generation == gen => {
                    slot.starting = None;
                    slot.client = Some(client.clone());
                    slot.connected_at = Some(Instant::now());
                    true
                }
                _ => false,
            }
        };
        if !current {
            client.close().await;
            return Err("stopped".into());
        }
        self.place_tools(name, gen, &client, tools, cfg).await;
        Ok(client)
    }

    /// The entry with its `${input:NAME}` values put in (in memory, for this start only);
    /// the entry itself when it has none.
    async fn with_inputs(&self, cfg: &ServerConfig) -> Result<ServerConfig, String> {
        if inputs::transport_inputs(&cfg.transport).is_empty() {
            return Ok(cfg.clone());
        }
        let Some(source) = self.inner.hooks.inputs.clone() else {
            return Err("its entry takes values from the credential store (${input:…}), which is not available here".into());
        };
        let owned = cfg.clone();
        let resolved = tokio::task::spawn_blocking(move || {
            inputs::resolve(&owned.transport, &mut |n| source.value(&owned, n))
        })
        .await
        .map_err(|e| format!("reading its inputs failed: {e}"))?;
        match resolved {
            Ok(transport) => Ok(ServerConfig {
                transport,
                ..cfg.clone()
            }),
            Err(missing) => Err(format!(
                "its input \"{missing}\" has no value; set it with `harness9 mcp secret set {} {missing}` (or in the server's settings)",
                cfg.name
            )),
        }
    }

    pub(super) fn open_transport(
        &self,
        cfg: &ServerConfig,
        log: Arc<ServerLog>,
        authorizer: Option<Arc<crate::mcp::auth::Authorizer>>,
    ) -> Result<(Connection, Option<TransportKind>), String> {
        match &cfg.transport {
            TransportConfig::Stdio {
                command, args, env, ..
            } => {
                let spec = StdioSpec {
                    command: crate::shell_env::resolve_command(command),
                    args: args.clone(),
                    env: env.clone(),
                    cwd: cfg.resolved_cwd(&self.inner.project),
                    path: self.inner.path_for_children.clone(),
                    max_message_bytes: cfg.max_message_bytes,
                };
                stdio::spawn(&spec, log)
                    .map(|c| (c, None))
                    .map_err(|e| e.to_string())
            }
            TransportConfig::Http { url, headers } => {
                let spec = HttpSpec {
                    url: url.clone(),
                    headers: headers.clone(),
                    max_message_bytes: cfg.max_message_bytes,
                    auth: authorizer.clone(),
                };
                http::connect(&spec, log).map(|(c, k)| (c, Some(k)))
            }
            TransportConfig::Sse { url, headers } => {
                let spec = HttpSpec {
                    url: url.clone(),
                    headers: headers.clone(),
                    max_message_bytes: cfg.max_message_bytes,
                    auth: authorizer.clone(),
                };
                http::connect_sse(&spec, log).map(|(c, k)| (c, Some(k)))
            }
        }
    }

    /// After connecting: re-list on `list_changed`, report the server leaving.
    pub(super) async fn watch_events(
        &self,
        name: &str,
        cfg: &ServerConfig,
        client: Arc<Client>,
        gen: u64,
    ) {
        let mut events = client.events();
        if let Some(reason) = client.closed_reason() {
            self.on_closed(name, gen, reason);
            self.maybe_restart(name, cfg, gen);
            return;
        }
        loop {
            match events.recv().await {
                Ok(ClientEvent::ToolsChanged) => {
                    match client.list_tools(Some(cfg.startup_timeout)).await {
                        Ok(tools) => {
                            if !self.is_current(name, gen) {
                                return;
                            }
                            self.place_tools(name, gen, &client, tools, cfg).await;
                        }
                        Err(e) => {
                            if let Some(log) = self.log(name) {
                                log.push(
                                    LogSource::Host,
                                    "warning",
                                    &format!("re-listing tools failed: {e}"),
                                );
                            }
                        }
                    }
                }
                // Resources, prompts and elicitations: observers follow these.
                Ok(
                    ClientEvent::ResourcesChanged
                    | ClientEvent::ResourceUpdated { .. }
                    | ClientEvent::PromptsChanged
                    | ClientEvent::ElicitationComplete { .. },
                ) => {}
                Ok(ClientEvent::Closed(reason)) => {
                    self.on_closed(name, gen, reason);
                    self.maybe_restart(name, cfg, gen);
                    return;
                }
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            }
        }
    }

    /// Hands a listing to the tool sink and shows the server connected with the tools the
    /// sink made usable (unless the run ended meanwhile).
    pub(super) async fn place_tools(
        &self,
        name: &str,
        gen: u64,
        client: &Arc<Client>,
        defs: Vec<ToolDef>,
        cfg: &ServerConfig,
    ) {
        let Some(log) = self.log(name) else {
            return;
        };
        let listing = ToolListing {
            run: Run::new(self, name, gen),
            client: client.clone(),
            defs,
            timeout: cfg.tool_timeout,
            log,
        };
        if let Some(usable) = self.inner.tools.place(listing).await {
            self.set_state(name, gen, ServerState::connected(client, usable));
        }
    }

    pub(super) fn on_closed(&self, name: &str, gen: u64, reason: String) {
        if !self.is_current(name, gen) {
            return;
        }
        if let Some(log) = self.log(name) {
            if self.settle_needs_auth(name, gen, &log) {
                self.inner.tools.remove_server(name);
                return;
            }
        }
        self.inner.tools.remove_server(name);
        let tail = self.log(name).map(|l| l.stderr_tail()).unwrap_or_default();
        {
            let mut slots = self.lock();
            if let Some(slot) = slots.get_mut(name) {
                slot.client = None;
            }
        }
        self.set_state(
            name,
            gen,
            ServerState::Failed {
                reason,
                stderr_tail: tail,
            },
        );
    }
}
