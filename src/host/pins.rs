//! Tool pins: the gate between the manager and the tool registry. Every listing of a
//! server is compared with its pins ([`crate::trust::pins`]) before it reaches the
//! registry. Tools that are new or changed since they were pinned are held back (the model
//! and `mcp call` do not see them) until the user accepts them with [`Pins::accept_tools`];
//! unchanged tools keep working, a removed tool just disappears. The first listing of a
//! server without pins pins it. The pins are read as stored now for every listing, and
//! again whenever the store changes ([`Pins::recheck`]), so a tool another process
//! accepted (the CLI's `mcp tools --accept`) is released at once.
//!
//! Invariants: the gate keeps the latest listing of each connected server (with the run it
//! belongs to); what it holds is counted in that server's status. It never calls the
//! manager while it holds its own lock.

use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;

use crate::manager::{Run, ToolListing, ToolSink};
use crate::mcp::log::{LogSource, ServerLog};
use crate::mcp::{Client, ToolDef};
use crate::tools::ToolRegistry;
use crate::trust::pins::{compare, upgrades, HeldTool, PinStore, ToolHints, ToolPin};

/// The latest listing of one connected server.
struct Listing {
    run: Run,
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

impl AcceptError {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        match self {
            AcceptError::NotConnected(_) => "not-connected",
            AcceptError::NotHeld { .. } => "not-held",
            AcceptError::Save(_) => "write-failed",
        }
    }
}

/// The pinning gate of one project's servers, in front of its tool registry.
pub struct Pins {
    project: PathBuf,
    store: PinStore,
    registry: Arc<ToolRegistry>,
    listings: Mutex<BTreeMap<String, Listing>>,
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

fn warn(log: &ServerLog, text: &str) {
    log.push(LogSource::Host, "warning", text);
}

impl ToolSink for Pins {
    /// Compares a listing with the pins and puts the tools that are not held in the
    /// registry.
    fn place(&self, l: ToolListing) -> BoxFuture<'_, Option<usize>> {
        Box::pin(async move {
            let name = l.run.server().to_string();
            let listing: Vec<(String, ToolPin)> = l.defs.iter().map(pin_of).collect();
            let pins = self.store.server_pins(&self.project, &name).await;
            let held = compare(&name, pins.as_ref(), &listing);
            let to_record = match &pins {
                None => listing,
                Some(_) => upgrades(pins.as_ref(), &listing),
            };
            if !to_record.is_empty() {
                if let Err(e) = self.store.record(&self.project, &name, to_record).await {
                    warn(&l.log, &format!("could not save the tool pins: {e}"));
                }
            }
            if !l.run.is_current() {
                return None;
            }
            for h in &held {
                warn(
                    &l.log,
                    &format!(
                        "tool \"{}\" changed since it was pinned; held back until you accept it (harness9 mcp tools --changed)",
                        h.tool
                    ),
                );
            }
            self.listings.lock().insert(
                name.clone(),
                Listing {
                    run: l.run,
                    client: l.client,
                    timeout: l.timeout,
                    defs: l.defs,
                    held,
                },
            );
            self.apply(&name).map(|(_, usable)| usable)
        })
    }

    fn remove_server(&self, server: &str) {
        self.registry.remove_server(server);
        self.listings.lock().remove(server);
    }

    fn held(&self, server: &str) -> usize {
        self.listings.lock().get(server).map_or(0, |l| l.held.len())
    }
}

impl Pins {
    /// The gate of the project's servers, with the pins kept beside the approvals store.
    pub fn new(project: &Path, approvals: &Path, registry: Arc<ToolRegistry>) -> Pins {
        Pins {
            project: project.to_path_buf(),
            store: PinStore::beside(approvals),
            registry,
            listings: Mutex::default(),
        }
    }

    /// Puts a server's allowed tools in the registry; returns its run and how many.
    fn apply(&self, name: &str) -> Option<(Run, usize)> {
        let (run, client, allowed, timeout) = {
            let listings = self.listings.lock();
            let l = listings.get(name)?;
            let allowed: Vec<ToolDef> = l
                .defs
                .iter()
                .filter(|d| !l.held.iter().any(|h| h.tool == d.name))
                .cloned()
                .collect();
            (l.run.clone(), l.client.clone(), allowed, l.timeout)
        };
        let count = allowed.len();
        self.registry
            .set_server_tools(name, client, allowed, timeout);
        Some((run, count))
    }

    /// Puts a server's allowed tools in the registry and shows the count in its status.
    fn release(&self, name: &str) {
        if let Some((run, usable)) = self.apply(name) {
            run.set_usable_tools(usable);
        }
    }

    /// Compares every current listing with the pins as stored now (another process may
    /// have accepted or pinned tools) and releases or holds tools accordingly. Returns
    /// whether anything changed.
    pub async fn recheck(&self) -> bool {
        let names: Vec<String> = self.listings.lock().keys().cloned().collect();
        let mut changed = false;
        for name in names {
            let pins = self.store.server_pins(&self.project, &name).await;
            let updated = {
                let mut listings = self.listings.lock();
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
                self.release(&name);
                changed = true;
            }
        }
        changed
    }

    /// The tool definitions of the connected servers (or one), as listed, held ones too.
    pub fn tool_defs(&self, server: Option<&str>) -> Vec<(String, ToolDef)> {
        let listings = self.listings.lock();
        listings
            .iter()
            .filter(|(name, _)| server.is_none_or(|s| s == name.as_str()))
            .flat_map(|(name, l)| l.defs.iter().map(|d| (name.clone(), d.clone())))
            .collect()
    }

    /// Tools held back because they are new or changed since they were pinned (of one
    /// server, or of all connected servers).
    pub fn held_tools(&self, server: Option<&str>) -> Vec<HeldTool> {
        let listed: Vec<(Run, Vec<HeldTool>)> = {
            let listings = self.listings.lock();
            listings
                .iter()
                .filter(|(n, _)| server.is_none_or(|s| s == n.as_str()))
                .map(|(_, l)| (l.run.clone(), l.held.clone()))
                .collect()
        };
        listed
            .into_iter()
            .filter(|(run, _)| run.is_connected())
            .flat_map(|(_, held)| held)
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
        let run = self.listings.lock().get(server).map(|l| l.run.clone());
        if !run.is_some_and(|r| r.is_connected()) {
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
            let listings = self.listings.lock();
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
        self.store.record(&self.project, server, pins).await?;
        if let Some(l) = self.listings.lock().get_mut(server) {
            l.held
                .retain(|h| !accepted.iter().any(|a| a.tool == h.tool));
        }
        self.release(server);
        Ok(accepted)
    }
}
