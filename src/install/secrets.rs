//! Where the values of `${input:NAME}` references live: the credential store sign-in
//! tokens use (the OS keychain, else a file readable only by the user; see
//! [`crate::mcp::auth::CredentialStore`]), never a file in the project.
//!
//! A value belongs to one entry: its key is made of the entry's scope, the project (for the
//! local and project scopes; a user-scope entry serves every project), the server's name
//! and the input's name. So an entry that arrived with a repository can only ever read the
//! values the user gave that very entry, and a value set for one project never reaches
//! another.
//!
//! Every call may block (a keychain or file access): async code calls them on the
//! blocking pool.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::config::inputs::is_input_name;
use crate::config::Scope;
use crate::mcp::auth::store::CredentialError;
use crate::mcp::auth::CredentialStore;

/// Why a value could not be kept, changed or forgotten.
#[derive(Debug, thiserror::Error)]
pub enum SecretError {
    #[error("\"{0}\" is not an input name: use 1 to 64 letters, digits, '_' and '-'")]
    BadName(String),
    #[error("the value of \"{0}\" is empty; give a value, or remove it instead")]
    Empty(String),
    #[error(transparent)]
    Store(#[from] CredentialError),
}

impl SecretError {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        match self {
            SecretError::BadName(_) => "invalid-input-name",
            SecretError::Empty(_) => "empty-value",
            SecretError::Store(e) => e.code(),
        }
    }
}

/// One input of an entry and whether a value is kept for it (never the value).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SecretState {
    pub name: String,
    /// A value is kept; `None` when the store could not be asked (it says why in `error`).
    pub set: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub error: Option<String>,
}

/// The values of one project's entries in the credential store.
#[derive(Clone)]
pub struct ServerSecrets {
    store: Arc<CredentialStore>,
    project: PathBuf,
}

impl std::fmt::Debug for ServerSecrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerSecrets")
            .field("store", &self.store)
            .field("project", &self.project)
            .finish()
    }
}

/// The store's key of input `name` of server `server` in `scope` of `project`.
pub fn secret_key(scope: Scope, project: &Path, server: &str, name: &str) -> String {
    match scope {
        Scope::User => format!("user {server} {name}"),
        Scope::Local | Scope::Project => format!(
            "{} {} {server} {name}",
            scope.word(),
            crate::userdata::project_key(project)
        ),
    }
}

impl ServerSecrets {
    pub fn new(store: Arc<CredentialStore>, project: &Path) -> ServerSecrets {
        ServerSecrets {
            store,
            project: project.to_path_buf(),
        }
    }

    /// Where the values are kept, in words for the user.
    pub fn location(&self) -> String {
        self.store.location()
    }

    pub fn store(&self) -> &Arc<CredentialStore> {
        &self.store
    }

    /// The value of input `name` of `server`'s entry in `scope`. Blocking.
    pub fn get(&self, scope: Scope, server: &str, name: &str) -> Option<String> {
        self.store
            .server_secret(&secret_key(scope, &self.project, server, name))
    }

    /// Keeps a value (replacing any). Blocking.
    pub fn set(
        &self,
        scope: Scope,
        server: &str,
        name: &str,
        value: &str,
    ) -> Result<(), SecretError> {
        if !is_input_name(name) {
            return Err(SecretError::BadName(name.to_string()));
        }
        if value.is_empty() {
            return Err(SecretError::Empty(name.to_string()));
        }
        self.store
            .save_server_secret(&secret_key(scope, &self.project, server, name), Some(value))?;
        Ok(())
    }

    /// Forgets a value; `Ok(true)` when one was kept. Blocking.
    pub fn remove(&self, scope: Scope, server: &str, name: &str) -> Result<bool, SecretError> {
        Ok(self
            .store
            .save_server_secret(&secret_key(scope, &self.project, server, name), None)?)
    }

    /// Whether each of `names` has a value, never the values. Blocking.
    pub fn states<'a>(
        &self,
        scope: Scope,
        server: &str,
        names: impl IntoIterator<Item = &'a String>,
    ) -> Vec<SecretState> {
        names
            .into_iter()
            .map(|n| {
                let key = secret_key(scope, &self.project, server, n);
                match self.store.has_server_secret(&key) {
                    Ok(set) => SecretState {
                        name: n.clone(),
                        set: Some(set),
                        error: None,
                    },
                    Err(e) => SecretState {
                        name: n.clone(),
                        set: None,
                        error: Some(e.to_string()),
                    },
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_kept_per_scope_project_and_server() {
        let store = Arc::new(CredentialStore::memory());
        let (a, b) = (Path::new("/p/a"), Path::new("/p/b"));
        let sa = ServerSecrets::new(store.clone(), a);
        let sb = ServerSecrets::new(store, b);
        sa.set(Scope::Local, "gh", "TOKEN", "one").unwrap();
        sa.set(Scope::User, "gh", "TOKEN", "everywhere").unwrap();
        assert_eq!(sa.get(Scope::Local, "gh", "TOKEN").as_deref(), Some("one"));
        assert_eq!(sa.get(Scope::Project, "gh", "TOKEN"), None, "another scope");
        assert_eq!(
            sa.get(Scope::Local, "other", "TOKEN"),
            None,
            "another server"
        );
        assert_eq!(sb.get(Scope::Local, "gh", "TOKEN"), None, "another project");
        assert_eq!(
            sb.get(Scope::User, "gh", "TOKEN").as_deref(),
            Some("everywhere")
        );
        let names = ["TOKEN".to_string(), "OTHER".to_string()];
        let states = sa.states(Scope::Local, "gh", &names);
        assert_eq!(
            states.iter().map(|s| s.set).collect::<Vec<_>>(),
            vec![Some(true), Some(false)]
        );
        assert!(sa.remove(Scope::Local, "gh", "TOKEN").unwrap());
        assert!(!sa.remove(Scope::Local, "gh", "TOKEN").unwrap());
        assert_eq!(
            sa.set(Scope::Local, "gh", "a b", "x").unwrap_err().code(),
            "invalid-input-name"
        );
        assert_eq!(
            sa.set(Scope::Local, "gh", "A", "").unwrap_err().code(),
            "empty-value"
        );
    }
}
