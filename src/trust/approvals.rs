//! Which project servers the user approved. A project's `.mcp.json` can run any command,
//! so its servers start only after approval. An approval is bound to the project folder,
//! the server name and [`ServerConfig::fingerprint`]: a hash of the transport, the expanded
//! command, args, url and working directory, and `env` and `headers` as written; changing
//! any of those needs a new approval. The store holds hashes only, never values. It lives in
//! the user's data directory, written atomically.
//!
//! The file is kept by [`crate::userdata`]: every check sees another process's change at
//! once (one `stat` when nothing changed), and a write merges under the shared lock.
//! Reading and writing are blocking: call them off the async runtime (the manager uses
//! `spawn_blocking`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::config::import::{review, ImportPlan};
use crate::config::{Scope, ServerConfig};
use crate::userdata::{project_entry, project_key, JsonFile};

/// The per-user data directory of harness9 (approvals and other per-user state); it also
/// holds the local config scope, so it lives with the config.
pub use crate::config::scopes::{data_dir, DATA_DIR_ENV};

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct StoreFile {
    /// project folder → server name → fingerprint
    #[serde(default)]
    projects: BTreeMap<String, BTreeMap<String, String>>,
}

/// The approvals of every project, as a file plus an in-memory copy.
#[derive(Debug, Clone)]
pub struct ApprovalStore {
    file: JsonFile<StoreFile>,
}

impl ApprovalStore {
    /// Records what a written import plan added as approved for `project`, when `scope` is
    /// one whose servers need approval (the project's `.mcp.json`): what the user saw in
    /// the plan is what may run. Blocking.
    pub fn approve_import(
        &self,
        plan: &ImportPlan,
        project: &Path,
        scope: Scope,
    ) -> std::io::Result<()> {
        if !scope.needs_approval() || plan.entries.is_empty() {
            return Ok(());
        }
        self.approve(project, &review::fingerprints(plan, project))
    }

    pub fn at(path: PathBuf) -> Self {
        ApprovalStore {
            file: JsonFile::at(path),
        }
    }

    /// `approvals.json` in [`data_dir`].
    pub fn default_location() -> Self {
        Self::at(data_dir().join(crate::userdata::DataKind::Approvals.file_name()))
    }

    pub fn path(&self) -> &Path {
        self.file.path()
    }

    /// The approved fingerprints of one project's servers, by server name, as stored now.
    /// Blocking.
    pub fn approved(&self, project: &Path) -> BTreeMap<String, String> {
        project_entry(&self.file.current().projects, project)
    }

    /// Whether this server, as configured now, is approved for this project. Blocking.
    pub fn is_approved(&self, project: &Path, server: &ServerConfig) -> bool {
        self.approved(project)
            .get(&server.name)
            .is_some_and(|f| *f == server.fingerprint(project))
    }

    /// Records approvals of (server name, fingerprint) pairs for this project. Blocking.
    pub fn approve(&self, project: &Path, servers: &[(String, String)]) -> std::io::Result<()> {
        let (key, servers) = (project_key(project), servers.to_vec());
        self.file.update(move |file| {
            let entry = file.projects.entry(key).or_default();
            for (name, fingerprint) in servers {
                entry.insert(name.clone(), fingerprint.clone());
            }
        })?;
        Ok(())
    }
}
