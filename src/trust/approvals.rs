//! Which project servers the user approved. A project's `.mcp.json` can run any command,
//! so its servers start only after approval. An approval is bound to the project folder,
//! the server name and a hash of its transport, command, args and url; changing any of
//! those needs a new approval. Stored in the user's data directory, written atomically.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::config::ServerConfig;

/// Overrides the data directory (approvals and other per-user state).
pub const DATA_DIR_ENV: &str = "HARNESS9_DATA_DIR";

/// The per-user data directory of harness9.
pub fn data_dir() -> PathBuf {
    match std::env::var_os(DATA_DIR_ENV) {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => dirs::data_dir()
            .unwrap_or_else(std::env::temp_dir)
            .join("harness9"),
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct StoreFile {
    /// project folder → server name → fingerprint
    #[serde(default)]
    projects: BTreeMap<String, BTreeMap<String, String>>,
}

#[derive(Debug, Clone)]
pub struct ApprovalStore {
    path: PathBuf,
}

impl ApprovalStore {
    pub fn at(path: PathBuf) -> Self {
        ApprovalStore { path }
    }

    /// `approvals.json` in [`data_dir`].
    pub fn default_location() -> Self {
        Self::at(data_dir().join("approvals.json"))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn read(&self) -> StoreFile {
        std::fs::read(&self.path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }

    pub fn is_approved(&self, project: &Path, server: &ServerConfig) -> bool {
        self.read()
            .projects
            .get(&project_key(project))
            .and_then(|p| p.get(&server.name))
            .is_some_and(|f| *f == fingerprint(server))
    }

    /// Records approvals for these servers of this project.
    pub fn approve(&self, project: &Path, servers: &[&ServerConfig]) -> std::io::Result<()> {
        let mut file = self.read();
        let entry = file.projects.entry(project_key(project)).or_default();
        for s in servers {
            entry.insert(s.name.clone(), fingerprint(s));
        }
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let bytes = serde_json::to_vec_pretty(&file).expect("store serializes");
        crate::config::write_atomically(&self.path, &bytes)
    }
}

fn project_key(project: &Path) -> String {
    std::fs::canonicalize(project)
        .unwrap_or_else(|_| project.to_path_buf())
        .display()
        .to_string()
}

/// A hash, so that secrets in args never sit in the store in plain text.
fn fingerprint(server: &ServerConfig) -> String {
    let digest = Sha256::digest(server.fingerprint_source().as_bytes());
    digest.iter().take(16).map(|b| format!("{b:02x}")).collect()
}
