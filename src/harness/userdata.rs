//! A running front end follows the stored user data: a change another process made (the
//! CLI accepting a tool, revoking a sampling grant, approving a server, editing the extra
//! roots) reaches the service that owns the data, and the status every front end draws,
//! within a second. Each kind goes to its owner: pins to the pins gate (held tools are
//! compared again), approvals to the manager (servers waiting for one start), extra roots
//! to the asks service (servers are told); then a revision that front ends follow
//! ([`Harness::subscribe_user_data`]) moves on, so each one draws what is stored now
//! (grants and permission rules are read again at each decision).

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::watch;

use super::{Harness, RootsStore};
use crate::host::asks::Asks;
use crate::host::pins::Pins;
use crate::manager::Manager;
use crate::userdata::{DataKind, UserDataWatcher};

/// Who takes a change of the stored user data.
#[derive(Clone)]
struct Owners {
    manager: Manager,
    asks: Arc<Asks>,
    pins: Arc<Pins>,
    roots: RootsStore,
    project: PathBuf,
    revision: watch::Sender<u64>,
}

impl Owners {
    async fn take(self, kinds: BTreeSet<DataKind>) {
        for kind in &kinds {
            match kind {
                DataKind::Pins => {
                    self.pins.recheck().await;
                }
                DataKind::Approvals => self.manager.recheck_approvals().await,
                DataKind::Roots => {
                    let (roots, project) = (self.roots.clone(), self.project.clone());
                    let now = tokio::task::spawn_blocking(move || roots.get(&project)).await;
                    if let Ok(now) = now {
                        super::surface::apply_extra_roots(&self.asks, &self.manager, &now);
                    }
                }
                // Read again at each decision; the front ends are told below.
                DataKind::Sampling | DataKind::Permissions => {}
                // Each process follows its own tasks; the table is read when listed.
                DataKind::Tasks => {}
            }
        }
        self.revision.send_modify(|r| *r += 1);
    }
}

impl Harness {
    /// A counter that moves on each change of the stored user data (another process's
    /// included, while [`Harness::watch_user_data`] runs): front ends redraw what they show
    /// of it (sampling grants, permission rules, held tools).
    pub fn subscribe_user_data(&self) -> watch::Receiver<u64> {
        self.user_data.subscribe()
    }

    /// Watches the user-data folders; `None` when they cannot be watched (each decision
    /// still reads the store as it is now). Must be called inside a Tokio runtime.
    pub fn watch_user_data(&self) -> Option<UserDataWatcher> {
        let mut dirs: Vec<PathBuf> = vec![self.user_data_dir.clone()];
        for file in [self.roots_store.path(), self.permission_store.path()] {
            if let Some(d) = file.parent().map(PathBuf::from) {
                if !dirs.contains(&d) {
                    dirs.push(d);
                }
            }
        }
        let owners = Owners {
            manager: self.manager.clone(),
            asks: self.asks.clone(),
            pins: self.pins.clone(),
            roots: self.roots_store.clone(),
            project: self.project.clone(),
            revision: self.user_data.clone(),
        };
        UserDataWatcher::start(&dirs, move |kinds| {
            tokio::spawn(owners.clone().take(kinds));
        })
        .ok()
    }
}
