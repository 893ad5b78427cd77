//! A running front end follows the stored user data: a change another process made (the
//! CLI accepting a tool, revoking a sampling grant, approving a server, editing the extra
//! roots) reaches the manager and the status every front end draws within a second.

use std::path::PathBuf;

use super::Harness;
use crate::userdata::{DataKind, UserDataWatcher};

impl Harness {
    /// A counter that moves on each change of the stored user data (another process's
    /// included, while [`Harness::watch_user_data`] runs): front ends redraw what they show
    /// of it (sampling grants, permission rules, held tools).
    pub fn subscribe_user_data(&self) -> tokio::sync::watch::Receiver<u64> {
        self.manager.subscribe_user_data()
    }

    /// Watches the user-data folders; `None` when they cannot be watched (each decision
    /// still reads the store as it is now). Must be called inside a Tokio runtime.
    pub fn watch_user_data(&self) -> Option<UserDataWatcher> {
        let mut dirs: Vec<PathBuf> = vec![self.manager.user_data_dir()];
        for file in [self.roots_store.path(), self.permission_store.path()] {
            if let Some(d) = file.parent().map(PathBuf::from) {
                if !dirs.contains(&d) {
                    dirs.push(d);
                }
            }
        }
        let (manager, asks, pins, roots, project) = (
            self.manager.clone(),
            self.asks.clone(),
            self.pins.clone(),
            self.roots_store.clone(),
            self.project.clone(),
        );
        UserDataWatcher::start(&dirs, move |kinds| {
            let (manager, asks, pins, roots, project) = (
                manager.clone(),
                asks.clone(),
                pins.clone(),
                roots.clone(),
                project.clone(),
            );
            tokio::spawn(async move {
                if kinds.contains(&DataKind::Pins) {
                    pins.recheck().await;
                }
                if kinds.contains(&DataKind::Roots) {
                    let now = tokio::task::spawn_blocking(move || roots.get(&project)).await;
                    if let Ok(now) = now {
                        super::surface::apply_extra_roots(&asks, &manager, &now);
                    }
                }
                manager.user_data_changed(&kinds).await;
            });
        })
        .ok()
    }
}
