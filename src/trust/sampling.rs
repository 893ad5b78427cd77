//! Which servers the user lets use the model without asking each time ("always for this
//! server" in the sampling dialog). A grant is bound, like an approval, to the project
//! folder, the server name and [`crate::config::ServerConfig::fingerprint`]: a changed
//! server entry asks again. The file holds names and hashes only, lives beside the
//! approvals in the user's data directory, is kept by [`crate::userdata`] (a revoke
//! in another process is honoured by the next request at once), and a grant can be
//! revoked ([`SamplingGrants::revoke`]).
//!
//! Reading and writing are blocking: call them off the async runtime.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::userdata::{project_entry, project_key, JsonFile};

/// File name of the sampling grants, beside `approvals.json`.
pub const SAMPLING_FILE: &str = crate::userdata::DataKind::Sampling.file_name();

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct GrantFile {
    /// project folder → server name → fingerprint
    #[serde(default)]
    projects: BTreeMap<String, BTreeMap<String, String>>,
}

/// The "always" grants of every project, as a file plus an in-memory copy.
#[derive(Debug, Clone)]
pub struct SamplingGrants {
    file: JsonFile<GrantFile>,
}

impl SamplingGrants {
    pub fn at(path: PathBuf) -> Self {
        SamplingGrants {
            file: JsonFile::at(path),
        }
    }

    /// `sampling.json` beside the given approvals file.
    pub fn beside(approvals: &Path) -> Self {
        Self::at(approvals.with_file_name(SAMPLING_FILE))
    }

    pub fn path(&self) -> &Path {
        self.file.path()
    }

    /// The granted servers of one project and the fingerprint each grant was given for,
    /// as stored now. Blocking.
    pub fn granted(&self, project: &Path) -> BTreeMap<String, String> {
        project_entry(&self.file.current().projects, project)
    }

    /// Whether this server, with this fingerprint, may sample without asking. Blocking.
    pub fn is_granted(&self, project: &Path, server: &str, fingerprint: &str) -> bool {
        self.granted(project)
            .get(server)
            .is_some_and(|f| f == fingerprint)
    }

    /// Lets the server sample without asking while its entry stays as it is. Blocking.
    pub fn grant(&self, project: &Path, server: &str, fingerprint: &str) -> std::io::Result<()> {
        let (server, fingerprint) = (server.to_string(), fingerprint.to_string());
        self.change(project, move |servers| {
            servers.insert(server, fingerprint);
        })
    }

    /// Withdraws a grant; `Ok(true)` when there was one. Blocking.
    pub fn revoke(&self, project: &Path, server: &str) -> std::io::Result<bool> {
        let server = server.to_string();
        self.change(project, move |servers| servers.remove(&server).is_some())
    }

    fn change<T: Send + 'static>(
        &self,
        project: &Path,
        edit: impl FnOnce(&mut BTreeMap<String, String>) -> T + Send + 'static,
    ) -> std::io::Result<T> {
        let key = project_key(project);
        Ok(self.file.update(move |file| {
            let servers = file.projects.entry(key.clone()).or_default();
            let out = edit(servers);
            if servers.is_empty() {
                file.projects.remove(&key);
            }
            out
        })?)
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
