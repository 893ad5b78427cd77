//! Tool pinning in the manager: every listing of a server is compared with its pins
//! ([`crate::trust::pins`]) before it reaches the registry. Tools that are new or changed
//! since they were pinned are held back (the model and `mcp call` do not see them) until
//! the user accepts them with [`Manager::accept_tools`]; unchanged tools keep working, a
//! removed tool just disappears. The first listing of a server without pins pins it.
//! The pins are read as stored now for every listing, and again whenever the store
//! changes ([`Manager::recheck_pins`]), so a tool another process accepted (the CLI's
//! `mcp tools --accept`) is released at once.

use std::sync::Arc;
use std::time::Duration;

use super::{connected_state, Manager, ServerState};
use crate::config::ServerConfig;
use crate::mcp::log::LogSource;
use crate::mcp::{Client, ToolDef};
use crate::trust::pins::{compare, upgrades, HeldTool, ToolHints, ToolPin};

/// The latest listing of one connected server.
pub(super) struct Listing {
    generation: u64,
    client: Arc<Client>,
    timeout: Duration,
    defs: Vec<ToolDef>,
    held: Vec<HeldTool>,
}

/// Why tools could not be accepted.
#[derive(Debug, thiserror::Error)]
pub enum AcceptError {
    #[error("server \"{0}\" is not connected; start it, then accept its tools")]
    NotConnected(String),
    #[error("server \"{server}\" has no held tool \"{tool}\" (held: {})", if .held.is_empty() { "none".to_string() } else { .held.join(", ") })]
    NotHeld {
        server: String,
        tool: String,
        held: Vec<String>,
    },
    #[error("could not save the tool pins: {0}")]
    Save(#[from] std::io::Error),
}

fn pin_of(def: &ToolDef) -> (String, ToolPin) {
    (
        def.name.clone(),
        ToolPin::new(
            &def.name,
            def.description.as_deref().unwrap_or(""),
            &def.input_schema.value(),
        )
        .with_hints(ToolHints::of(
            def.title.as_deref(),
            def.annotations.as_ref(),
        )),
    )
}

impl Manager {
    /// Compares a listing with the pins, puts the tools that are not held in the registry
    /// and publishes the connected state.
    pub(super) async fn publish_tools(
        &self,
        name: &str,
        gen: u64,
        client: &Arc<Client>,
        defs: Vec<ToolDef>,
        cfg: &ServerConfig,
    ) {
        let project = self.inner.project.clone();
        let listing: Vec<(String, ToolPin)> = defs.iter().map(pin_of).collect();
        let pins = self.inner.pins.server_pins(&project, name).await;
        let held = compare(name, pins.as_ref(), &listing);
        let to_record = match &pins {
            None => listing,
            Some(_) => upgrades(pins.as_ref(), &listing),
        };
        if !to_record.is_empty() {
            if let Err(e) = self.inner.pins.record(&project, name, to_record).await {
                self.warn(name, &format!("could not save the tool pins: {e}"));
            }
        }
        if !self.is_current(name, gen) {
            return;
        }
        for h in &held {
            self.warn(
                name,
                &format!(
                    "tool \"{}\" changed since it was pinned; held back until you accept it (harness9 mcp tools --changed)",
                    h.tool
                ),
            );
        }
        self.inner.listings.lock().insert(
            name.to_string(),
            Listing {
                generation: gen,
                client: client.clone(),
                timeout: cfg.tool_timeout,
                defs,
                held,
            },
        );
        self.apply_listing(name);
    }

    /// Compares every current listing with the pins as stored now (another process may
    /// have accepted or pinned tools) and releases or holds tools accordingly. Returns
    /// whether anything changed.
    pub async fn recheck_pins(&self) -> bool {
        let names: Vec<String> = self.inner.listings.lock().keys().cloned().collect();
        let mut changed = false;
        for name in names {
            let pins = self
                .inner
                .pins
                .server_pins(&self.inner.project, &name)
                .await;
            let updated = {
                let mut listings = self.inner.listings.lock();
                let Some(l) = listings.get_mut(&name) else {
                    continue;
                };
                let listing: Vec<(String, ToolPin)> = l.defs.iter().map(pin_of).collect();
                let held = compare(&name, pins.as_ref(), &listing);
                let differs = held != l.held;
                l.held = held;
                differs
            };
            if updated {
                self.apply_listing(&name);
                changed = true;
            }
        }
        if changed {
            self.publish();
        }
        changed
    }

    /// Puts a server's allowed tools in the registry and updates its status.
    fn apply_listing(&self, name: &str) {
        let (gen, client, allowed, timeout) = {
            let listings = self.inner.listings.lock();
            let Some(l) = listings.get(name) else {
                return;
            };
            let allowed: Vec<ToolDef> = l
                .defs
                .iter()
                .filter(|d| !l.held.iter().any(|h| h.tool == d.name))
                .cloned()
                .collect();
            (l.generation, l.client.clone(), allowed, l.timeout)
        };
        let count = allowed.len();
        self.inner
            .tools
            .set_server_tools(name, client.clone(), allowed, timeout);
        self.set_state(name, gen, connected_state(&client, count));
    }

    /// The tool definitions of the connected servers (or one), as listed, held ones too.
    pub fn tool_defs(&self, server: Option<&str>) -> Vec<(String, ToolDef)> {
        let listings = self.inner.listings.lock();
        listings
            .iter()
            .filter(|(name, _)| server.is_none_or(|s| s == name.as_str()))
            .flat_map(|(name, l)| l.defs.iter().map(|d| (name.clone(), d.clone())))
            .collect()
    }

    pub(super) fn forget_listing(&self, name: &str) {
        self.inner.listings.lock().remove(name);
    }

    pub(super) fn held_count(&self, name: &str) -> usize {
        self.inner
            .listings
            .lock()
            .get(name)
            .map_or(0, |l| l.held.len())
    }

    fn warn(&self, name: &str, text: &str) {
        if let Some(log) = self.log(name) {
            log.push(LogSource::Host, "warning", text);
        }
    }

    /// Tools held back because they are new or changed since they were pinned (of one
    /// server, or of all connected servers).
    pub fn held_tools(&self, server: Option<&str>) -> Vec<HeldTool> {
        let current: Vec<(String, u64)> = self
            .lock()
            .iter()
            .filter(|(_, s)| matches!(s.state, ServerState::Connected { .. }))
            .map(|(n, s)| (n.clone(), s.generation))
            .collect();
        let listings = self.inner.listings.lock();
        listings
            .iter()
            .filter(|(n, l)| {
                server.is_none_or(|s| s == n.as_str())
                    && current.iter().any(|(cn, g)| cn == *n && *g == l.generation)
            })
            .flat_map(|(_, l)| l.held.iter().cloned())
            .collect()
    }

    /// Accepts held tools of one server (all of them when `tools` is empty): pins their
    /// current definitions and puts them in the registry at once. Returns what was accepted.
    pub async fn accept_tools(
        &self,
        server: &str,
        tools: &[String],
    ) -> Result<Vec<HeldTool>, AcceptError> {
        let held = self.held_tools(Some(server));
        let connected = self
            .lock()
            .get(server)
            .is_some_and(|s| matches!(s.state, ServerState::Connected { .. }));
        if !connected {
            return Err(AcceptError::NotConnected(server.to_string()));
        }
        if let Some(missing) = tools.iter().find(|t| !held.iter().any(|h| &h.tool == *t)) {
            return Err(AcceptError::NotHeld {
                server: server.to_string(),
                tool: missing.clone(),
                held: held.iter().map(|h| h.tool.clone()).collect(),
            });
        }
        let accepted: Vec<HeldTool> = held
            .into_iter()
            .filter(|h| tools.is_empty() || tools.contains(&h.tool))
            .collect();
        if accepted.is_empty() {
            return Ok(accepted);
        }
        let pins: Vec<(String, ToolPin)> = {
            let listings = self.inner.listings.lock();
            listings
                .get(server)
                .map(|l| {
                    l.defs
                        .iter()
                        .filter(|d| accepted.iter().any(|h| h.tool == d.name))
                        .map(pin_of)
                        .collect()
                })
                .unwrap_or_default()
        };
        self.inner
            .pins
            .record(&self.inner.project, server, pins)
            .await?;
        if let Some(l) = self.inner.listings.lock().get_mut(server) {
            l.held
                .retain(|h| !accepted.iter().any(|a| a.tool == h.tool));
        }
        self.apply_listing(server);
        self.publish();
        Ok(accepted)
    }
}
