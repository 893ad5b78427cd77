//! Approvals, as part of starting: a project server runs only as approved (for this run,
//! by policy, or in the store), and what the user approved is what runs (an approval names
//! the entry's fingerprint). Approvals given by another process are taken as the store
//! changes ([`Manager::recheck_approvals`]).

use serde::Serialize;

use super::{Manager, ServerState};
use crate::config::ServerConfig;

/// What [`Manager::approve`] did with each server it was given.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ApproveOutcome {
    /// Approved (and started if they were waiting).
    pub approved: Vec<String>,
    /// Refused: the entry changed (or went away) since the prompt showed it. Show the
    /// current entry and ask again.
    pub stale: Vec<String>,
}

/// Whether unapproved project servers may start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalPolicy {
    /// Only servers approved in the store start; others wait for [`Manager::approve`].
    Ask,
    /// Everything starts, nothing is recorded (`--yes`).
    AllowAll,
}

impl Manager {
    /// Whether an entry may run: user and local servers were written by the user and need
    /// no approval; a project server needs one (for this run, by policy, or stored).
    pub(super) fn may_run(&self, approved_for_run: bool, cfg: &ServerConfig) -> bool {
        !cfg.scope.needs_approval()
            || approved_for_run
            || self.inner.policy == ApprovalPolicy::AllowAll
            || self.stored_approval_matches(cfg)
    }

    /// Servers waiting for the user's approval, with what they would run.
    pub fn awaiting_approval(&self) -> Vec<ServerConfig> {
        self.lock()
            .values()
            .filter(|s| s.state == ServerState::AwaitingApproval)
            .filter_map(|s| s.entry.as_ref().ok().cloned())
            .collect()
    }

    /// Approves servers, each named with the fingerprint the user was shown
    /// ([`ServerConfig::fingerprint`]); `remember` records them in the store for later runs.
    /// A pair whose fingerprint no longer matches the current entry (the file changed after
    /// the prompt was drawn) is refused and reported in [`ApproveOutcome::stale`], so the
    /// front end can show the entry again. Starts the approved servers that were waiting.
    pub async fn approve(
        &self,
        picks: &[(String, String)],
        remember: bool,
    ) -> std::io::Result<ApproveOutcome> {
        let mut outcome = ApproveOutcome::default();
        let mut to_start = Vec::new();
        {
            let mut slots = self.lock();
            for (name, fingerprint) in picks {
                let current = slots.get_mut(name).and_then(|slot| {
                    let fp = slot.entry.as_ref().ok()?.fingerprint(&self.inner.project);
                    (fp == *fingerprint).then_some(slot)
                });
                match current {
                    Some(slot) => {
                        slot.approved_for_run = true;
                        if slot.state == ServerState::AwaitingApproval {
                            to_start.push(name.clone());
                        }
                        outcome.approved.push(name.clone());
                    }
                    None => outcome.stale.push(name.clone()),
                }
            }
        }
        if remember {
            let accepted: Vec<(String, String)> = picks
                .iter()
                .filter(|(n, _)| outcome.approved.contains(n))
                .cloned()
                .collect();
            let store = self.inner.approvals.clone();
            let project = self.inner.project.clone();
            tokio::task::spawn_blocking(move || store.approve(&project, &accepted))
                .await
                .map_err(std::io::Error::other)??;
            self.refresh_stored_approvals().await;
        }
        for n in &to_start {
            self.start(n);
        }
        self.publish();
        Ok(outcome)
    }

    /// Copies this project's approvals from the store (read on a blocking thread, once per
    /// process; cached by the store afterwards).
    pub(super) async fn refresh_stored_approvals(&self) {
        let store = self.inner.approvals.clone();
        let project = self.inner.project.clone();
        let found = tokio::task::spawn_blocking(move || store.approved(&project))
            .await
            .unwrap_or_default();
        *self.inner.stored_approvals.lock() = found;
    }

    /// Whether the store approves this entry now: the store's generation is checked first
    /// (one `stat`), so an approval given or changed by another process counts at once.
    pub(super) fn stored_approval_matches(&self, cfg: &ServerConfig) -> bool {
        let fingerprint = cfg.fingerprint(&self.inner.project);
        let now = self.inner.approvals.approved(&self.inner.project);
        let mut stored = self.inner.stored_approvals.lock();
        *stored = now;
        stored.get(&cfg.name).is_some_and(|f| *f == fingerprint)
    }

    /// Starts the servers waiting for an approval that is now stored (given by another
    /// process), and publishes the status.
    pub async fn recheck_approvals(&self) {
        self.refresh_stored_approvals().await;
        let waiting: Vec<String> = self
            .lock()
            .iter()
            .filter(|(_, s)| s.state == ServerState::AwaitingApproval)
            .map(|(n, _)| n.clone())
            .collect();
        {
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
        self.publish();
    }
}
