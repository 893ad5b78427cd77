//! What was installed from where: for each entry written by an install, the registry, the
//! server's name there, its version and the package used. Kept in harness9's own data
//! (never in `.mcp.json`, which stays portable), through [`crate::userdata`]'s locked,
//! merging writes. `mcp outdated` and updates read it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::config::Scope;
use crate::userdata::{project_key, JsonFile, UserDataError};

/// The file in the user's data folder.
pub const INSTALLED_FILE: &str = "installed-servers.json";

/// Where one entry came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Provenance {
    /// The registry's base URL.
    pub registry: String,
    /// The server's name in the registry.
    pub name: String,
    pub version: String,
    /// `npm`, `pypi`, `oci`, `nuget`; `None`: a remote.
    pub package: Option<String>,
    /// The plain (not secret) values given at install, to offer again on update.
    #[serde(default)]
    pub values: BTreeMap<String, String>,
    /// Seconds since the Unix epoch.
    pub installed_at: u64,
    /// A bundle's: the folder its files were unpacked into (`registry` is the file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub bundle: Option<String>,
}

/// One installed entry: its scope, project (for local and project scopes) and name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InstalledEntry {
    pub scope: Scope,
    /// The project's key; empty for the user scope.
    #[serde(default)]
    pub project: String,
    pub server: String,
    pub from: Provenance,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct InstalledFile {
    #[serde(default)]
    entries: Vec<InstalledEntry>,
}

/// The record of installs, for every project.
#[derive(Debug, Clone)]
pub struct InstalledStore {
    file: JsonFile<InstalledFile>,
}

fn project_of(scope: Scope, project: &Path) -> String {
    match scope {
        Scope::User => String::new(),
        Scope::Local | Scope::Project => project_key(project),
    }
}

impl InstalledStore {
    pub fn at(path: PathBuf) -> InstalledStore {
        InstalledStore {
            file: JsonFile::at(path),
        }
    }

    /// In the user's data folder.
    pub fn for_user() -> InstalledStore {
        InstalledStore::at(crate::config::scopes::data_dir().join(INSTALLED_FILE))
    }

    pub fn path(&self) -> &Path {
        self.file.path()
    }

    /// Where `server` of `scope` came from. Blocking.
    pub fn get(&self, scope: Scope, project: &Path, server: &str) -> Option<Provenance> {
        let key = project_of(scope, project);
        self.file
            .current()
            .entries
            .iter()
            .find(|e| e.scope == scope && e.project == key && e.server == server)
            .map(|e| e.from.clone())
    }

    /// The installed entries this project sees (its local and project scopes, and the
    /// user's). Blocking.
    pub fn of_project(&self, project: &Path) -> Vec<InstalledEntry> {
        let key = project_key(project);
        self.file
            .current()
            .entries
            .iter()
            .filter(|e| e.scope == Scope::User || e.project == key)
            .cloned()
            .collect()
    }

    /// Records (or replaces) where an entry came from. Blocking.
    pub fn record(
        &self,
        scope: Scope,
        project: &Path,
        server: &str,
        from: Provenance,
    ) -> Result<(), UserDataError> {
        let entry = InstalledEntry {
            scope,
            project: project_of(scope, project),
            server: server.to_string(),
            from,
        };
        self.file.update(move |f| {
            f.entries.retain(|e| {
                !(e.scope == entry.scope && e.project == entry.project && e.server == entry.server)
            });
            f.entries.push(entry);
        })
    }

    /// Whether an installed entry (of any project) uses the bundle folder `dir`. Blocking.
    pub fn uses_folder(&self, dir: &str) -> bool {
        self.file
            .current()
            .entries
            .iter()
            .any(|e| e.from.bundle.as_deref() == Some(dir))
    }

    /// Forgets an entry (it was removed). Blocking.
    pub fn forget(&self, scope: Scope, project: &Path, server: &str) -> Result<(), UserDataError> {
        let (key, server) = (project_of(scope, project), server.to_string());
        self.file.update(move |f| {
            f.entries
                .retain(|e| !(e.scope == scope && e.project == key && e.server == server));
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from(v: &str) -> Provenance {
        Provenance {
            registry: "https://r.example".into(),
            name: "io.github.a/b".into(),
            version: v.into(),
            package: Some("npm".into()),
            values: BTreeMap::new(),
            installed_at: 1,
            bundle: None,
        }
    }

    #[test]
    fn entries_by_scope_project_and_name() {
        let dir = tempfile::tempdir().unwrap();
        let s = InstalledStore::at(dir.path().join(INSTALLED_FILE));
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        s.record(Scope::Local, &a, "b", from("1.0.0")).unwrap();
        s.record(Scope::Local, &a, "b", from("1.1.0")).unwrap();
        s.record(Scope::User, &a, "u", from("2.0.0")).unwrap();
        s.record(Scope::Local, &b, "x", from("3.0.0")).unwrap();
        assert_eq!(s.get(Scope::Local, &a, "b").unwrap().version, "1.1.0");
        assert_eq!(s.get(Scope::Project, &a, "b"), None);
        let names: Vec<String> = s.of_project(&a).into_iter().map(|e| e.server).collect();
        assert_eq!(names, vec!["b", "u"]);
        assert_eq!(
            s.of_project(&b).len(),
            2,
            "the user's entry is every project's"
        );
        s.forget(Scope::Local, &a, "b").unwrap();
        assert_eq!(s.get(Scope::Local, &a, "b"), None);
    }
}
