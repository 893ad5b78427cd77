//! How the manager takes a change another process made to the stored user data (see
//! [`crate::userdata`]): held tools are compared with the pins again, servers waiting for
//! an approval given elsewhere start, the status is published, and a revision that front
//! ends can follow ([`Manager::subscribe_user_data`]) moves on, so each one draws what is
//! stored now (grants and permission rules are not part of the status).

use std::collections::BTreeSet;
use std::path::PathBuf;

use super::{Manager, ServerState};
use crate::userdata::DataKind;

impl Manager {
    /// The folder of the user-data files this manager reads (approvals, pins, grants).
    pub fn user_data_dir(&self) -> PathBuf {
        self.inner
            .approvals
            .path()
            .parent()
            .map(PathBuf::from)
            .unwrap_or_default()
    }

    /// Takes a change of the stored user data (seen by a watcher).
    pub async fn user_data_changed(&self, kinds: &BTreeSet<DataKind>) {
        for kind in kinds {
            match kind {
                DataKind::Approvals => self.approvals_changed().await,
                // Read again at each decision; the front ends are told below. Held tools
                // are the pins service's (the façade has it compare them again first).
                DataKind::Pins | DataKind::Sampling | DataKind::Permissions | DataKind::Roots => {}
            }
        }
        self.publish();
        self.inner.user_data.send_modify(|r| *r += 1);
    }

    /// Counts the changes of the stored user data seen since start; `changed()` wakes on
    /// each (a front end reads the grants, rules or roots it shows again).
    pub fn subscribe_user_data(&self) -> tokio::sync::watch::Receiver<u64> {
        self.inner.user_data.subscribe()
    }

    /// Starts the servers waiting for an approval that is now stored.
    async fn approvals_changed(&self) {
        self.refresh_stored_approvals().await;
        let waiting: Vec<String> = self
            .lock()
            .iter()
            .filter(|(_, s)| s.state == ServerState::AwaitingApproval)
            .map(|(n, _)| n.clone())
            .collect();
        let mut slots = self.lock();
        for name in waiting {
            let approved = slots
                .get(&name)
                .and_then(|s| s.entry.as_ref().ok())
                .is_some_and(|cfg| self.stored_approval_matches(cfg));
            if approved {
                self.start_in(&mut slots, &name);
            }
        }
    }
}
