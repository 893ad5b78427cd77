//! Which project servers the user approved. A project's `.mcp.json` can run any command,
//! so its servers start only after approval. An approval is bound to the project folder,
//! the server name and [`ServerConfig::fingerprint`]: a hash of the transport, the expanded
//! command, args, url and working directory, and `env` and `headers` as written; changing
//! any of those needs a new approval. The store holds hashes only, never values. It lives in
//! the user's data directory, written atomically.
//!
//! The file is read once per process and cached; a write re-reads it (so approvals given by
//! another harness9 process are kept) and refreshes the cache. Reading and writing are
//! blocking: call them off the async runtime (the manager uses `spawn_blocking`).

use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::config::ServerConfig;

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
    path: PathBuf,
    cache: Arc<Mutex<Option<StoreFile>>>,
}

impl ApprovalStore {
    pub fn at(path: PathBuf) -> Self {
        ApprovalStore {
            path,
            cache: Arc::default(),
        }
    }

    /// `approvals.json` in [`data_dir`].
    pub fn default_location() -> Self {
        Self::at(data_dir().join("approvals.json"))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn read_file(&self) -> StoreFile {
        std::fs::read(&self.path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }

    /// The approved fingerprints of one project's servers, by server name. Blocking the
    /// first time (reads the file); from the cache afterwards.
    pub fn approved(&self, project: &Path) -> BTreeMap<String, String> {
        let key = project_key(project);
        let cached = self
            .cache
            .lock()
            .as_ref()
            .map(|f| f.projects.get(&key).cloned().unwrap_or_default());
        if let Some(found) = cached {
            return found;
        }
        let file = self.read_file();
        let found = file.projects.get(&key).cloned().unwrap_or_default();
        self.cache.lock().get_or_insert(file);
        found
    }

    /// Whether this server, as configured now, is approved for this project. Blocking the
    /// first time (see [`ApprovalStore::approved`]).
    pub fn is_approved(&self, project: &Path, server: &ServerConfig) -> bool {
        self.approved(project)
            .get(&server.name)
            .is_some_and(|f| *f == server.fingerprint(project))
    }

    /// Records approvals of (server name, fingerprint) pairs for this project. Blocking.
    pub fn approve(&self, project: &Path, servers: &[(String, String)]) -> std::io::Result<()> {
        let mut file = self.read_file();
        let entry = file.projects.entry(project_key(project)).or_default();
        for (name, fingerprint) in servers {
            entry.insert(name.clone(), fingerprint.clone());
        }
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let bytes = serde_json::to_vec_pretty(&file).expect("store serializes");
        crate::config::write_atomically(&self.path, &bytes)?;
        *self.cache.lock() = Some(file);
        Ok(())
    }
}

pub(crate) fn project_key(project: &Path) -> String {
    std::fs::canonicalize(project)
        .unwrap_or_else(|_| project.to_path_buf())
        .display()
        .to_string()
}
