//! When views go because of their server: a task follows the manager's status (started
//! with the first view, ended with the manager or the service) and tears down every view
//! whose server's run is no longer connected, saying why (removed, stopped, restarted,
//! failed). The manager is never asked anything: the status it publishes and the run each
//! view was opened under are enough.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::{Apps, TeardownReason};
use crate::manager::{Manager, ServerState, StatusSnapshot};

impl Apps {
    /// Starts following `manager`'s status, once.
    pub(super) fn follow(&self, manager: &Manager) {
        if self.inner.following.swap(true, Ordering::AcqRel) {
            return;
        }
        let mut rx = manager.subscribe();
        // A change between the view's own check and this subscription is seen here.
        let now = rx.borrow_and_update().clone();
        self.check_runs(&now);
        let weak = Arc::downgrade(&self.inner);
        tokio::spawn(async move {
            loop {
                let ended = rx.changed().await.is_err();
                let Some(inner) = weak.upgrade() else {
                    return;
                };
                let apps = Apps { inner };
                if ended {
                    // The manager is gone: so is the project.
                    apps.close_all(TeardownReason::ProjectClosed);
                    apps.inner.following.store(false, Ordering::Release);
                    return;
                }
                let snapshot = rx.borrow_and_update().clone();
                apps.check_runs(&snapshot);
            }
        });
    }

    /// Tears down the views whose server's run is over.
    pub(super) fn check_runs(&self, snapshot: &StatusSnapshot) {
        let over: Vec<(String, TeardownReason)> = {
            let st = self.inner.state.lock();
            st.views
                .iter()
                .filter(|(_, v)| !v.run.as_ref().is_some_and(|r| r.is_connected()))
                .map(|(id, v)| (id.clone(), reason_for(snapshot, &v.opened.server)))
                .collect()
        };
        for (id, reason) in over {
            self.close(&id, reason);
        }
    }
}

fn reason_for(snapshot: &StatusSnapshot, server: &str) -> TeardownReason {
    match snapshot.servers.iter().find(|s| s.name == server) {
        None => TeardownReason::ServerRemoved,
        Some(s) => match &s.state {
            ServerState::Stopped | ServerState::Disabled => TeardownReason::ServerStopped,
            ServerState::Starting { .. } | ServerState::Connected { .. } => {
                TeardownReason::ServerRestarted
            }
            ServerState::Failed { .. }
            | ServerState::NeedsAuth { .. }
            | ServerState::AwaitingApproval => TeardownReason::ServerFailed,
        },
    }
}
