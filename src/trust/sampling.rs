//! Which servers the user lets use the model without asking each time ("always for this
//! server" in the sampling dialog). A grant is bound, like an approval, to the project
//! folder, the server name and [`crate::config::ServerConfig::fingerprint`]: a changed
//! server entry asks again. The file holds names and hashes only, lives beside the
//! approvals in the user's data directory, is written atomically, and a grant can be
//! revoked ([`SamplingGrants::revoke`]).
//!
//! Reading and writing are blocking: call them off the async runtime.

use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// File name of the sampling grants, beside `approvals.json`.
pub const SAMPLING_FILE: &str = "sampling.json";

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct GrantFile {
    /// project folder → server name → fingerprint
    #[serde(default)]
    projects: BTreeMap<String, BTreeMap<String, String>>,
}

/// The "always" grants of every project, as a file plus an in-memory copy.
#[derive(Debug, Clone)]
pub struct SamplingGrants {
    path: PathBuf,
    cache: Arc<Mutex<Option<GrantFile>>>,
}

impl SamplingGrants {
    pub fn at(path: PathBuf) -> Self {
        SamplingGrants {
            path,
            cache: Arc::default(),
        }
    }

    /// `sampling.json` beside the given approvals file.
    pub fn beside(approvals: &Path) -> Self {
        Self::at(approvals.with_file_name(SAMPLING_FILE))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn read_file(&self) -> GrantFile {
        std::fs::read(&self.path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }

    /// The granted servers of one project and the fingerprint each grant was given for.
    /// Blocking the first time (reads the file); from the cache afterwards.
    pub fn granted(&self, project: &Path) -> BTreeMap<String, String> {
        let key = super::approvals::project_key(project);
        let mut cache = self.cache.lock();
        let file = cache.get_or_insert_with(|| self.read_file());
        file.projects.get(&key).cloned().unwrap_or_default()
    }

    /// Whether this server, with this fingerprint, may sample without asking. Blocking.
    pub fn is_granted(&self, project: &Path, server: &str, fingerprint: &str) -> bool {
        self.granted(project)
            .get(server)
            .is_some_and(|f| f == fingerprint)
    }

    /// Lets the server sample without asking while its entry stays as it is. Blocking.
    pub fn grant(&self, project: &Path, server: &str, fingerprint: &str) -> std::io::Result<()> {
        self.change(project, |servers| {
            servers.insert(server.to_string(), fingerprint.to_string());
        })
        .map(|_| ())
    }

    /// Withdraws a grant; `Ok(true)` when there was one. Blocking.
    pub fn revoke(&self, project: &Path, server: &str) -> std::io::Result<bool> {
        self.change(project, |servers| servers.remove(server).is_some())
    }

    fn change<T>(
        &self,
        project: &Path,
        edit: impl FnOnce(&mut BTreeMap<String, String>) -> T,
    ) -> std::io::Result<T> {
        // Re-read: grants made by another harness9 process are kept.
        let mut file = self.read_file();
        let key = super::approvals::project_key(project);
        let servers = file.projects.entry(key.clone()).or_default();
        let out = edit(servers);
        if servers.is_empty() {
            file.projects.remove(&key);
        }
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let bytes = serde_json::to_vec_pretty(&file).expect("grants serialize");
        crate::config::write_atomically(&self.path, &bytes)?;
        *self.cache.lock() = Some(file);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_grant_holds_for_one_fingerprint_and_can_be_revoked() {
        let dir = tempfile::tempdir().unwrap();
        let grants = SamplingGrants::beside(&dir.path().join("approvals.json"));
        let project = dir.path();
        assert!(!grants.is_granted(project, "ev", "f1"));
        grants.grant(project, "ev", "f1").unwrap();
        assert!(grants.is_granted(project, "ev", "f1"));
        assert!(
            !grants.is_granted(project, "ev", "f2"),
            "a changed entry asks again"
        );
        // Another process sees it.
        let again = SamplingGrants::beside(&dir.path().join("approvals.json"));
        assert!(again.is_granted(project, "ev", "f1"));
        assert!(grants.revoke(project, "ev").unwrap());
        assert!(!grants.is_granted(project, "ev", "f1"));
        assert!(!grants.revoke(project, "ev").unwrap());
    }
}
