//! The install plans shown in the window ([`crate::install`]'s commands), kept by number as
//! the core made them: the window sends back only the values and the digest of what it
//! showed, so what is written is the plan the core made, filled with those values, and
//! only when it is what the user saw. A plan belongs to the project it was made in: after
//! another project is opened it is refused. Also the payloads of those commands.

use std::collections::VecDeque;
use std::sync::{Arc, Weak};

use parking_lot::Mutex;
use serde::Serialize;
use ts_rs::TS;

use harness9::config::Scope;
use harness9::install::{InstallPlan, SecretState};
use harness9::Harness;

use crate::errors::{BridgeError, BridgeResult, ErrorCode};

/// How many plans are kept at once (the oldest go first).
pub const MAX_PLANS: usize = 16;

/// A plan shown in the window: its number for `commit_install`, the plan with the values
/// given so far, and the required values still missing.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PlanView {
    pub id: u32,
    pub plan: InstallPlan,
    /// Names of the required values with no answer, default or kept secret yet.
    pub missing: Vec<String>,
}

/// The secrets of a server's entry: which are set (never their values).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ServerSecretsView {
    /// The scope of the entry they belong to.
    pub scope: Scope,
    pub secrets: Vec<SecretState>,
}

struct Kept {
    id: u32,
    harness: Weak<Harness>,
    plan: InstallPlan,
}

/// The plans the window was shown, by number.
#[derive(Default)]
pub struct Plans {
    next: std::sync::atomic::AtomicU32,
    kept: Mutex<VecDeque<Kept>>,
}

impl Plans {
    pub fn keep(&self, harness: &Arc<Harness>, plan: InstallPlan) -> PlanView {
        let id = self
            .next
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            .wrapping_add(1);
        let missing = names_missing(&plan);
        let mut kept = self.kept.lock();
        while kept.len() >= MAX_PLANS {
            kept.pop_front();
        }
        kept.push_back(Kept {
            id,
            harness: Arc::downgrade(harness),
            plan: plan.clone(),
        });
        PlanView { id, plan, missing }
    }

    /// Plan `id`, when it was made for `harness` (the project open now).
    pub fn get(&self, id: u32, harness: &Arc<Harness>) -> BridgeResult<InstallPlan> {
        let kept = self.kept.lock();
        let k = kept.iter().find(|k| k.id == id).ok_or_else(|| {
            BridgeError::new(
                ErrorCode::ChangedOnDisk,
                "this install is no longer shown; search and open the server again",
            )
        })?;
        match k.harness.upgrade() {
            Some(h) if Arc::ptr_eq(&h, harness) => Ok(k.plan.clone()),
            _ => Err(BridgeError::new(
                ErrorCode::ChangedOnDisk,
                "another project was opened since this install was shown; nothing was written",
            )),
        }
    }

    pub fn forget(&self, id: u32) {
        self.kept.lock().retain(|k| k.id != id);
    }
}

pub fn names_missing(plan: &InstallPlan) -> Vec<String> {
    plan.missing().into_iter().map(|v| v.name.clone()).collect()
}
