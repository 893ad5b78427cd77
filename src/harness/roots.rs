//! Extra roots: folders besides the project that servers may work in (`roots/list`). The
//! user manages them per project; they are kept in the data directory (`extra-roots.json`,
//! kept by [`crate::userdata`], never in
//! `.mcp.json`), applied when the project opens, and every
//! change tells the connected servers `notifications/roots/list_changed`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::Harness;
use crate::userdata::{project_entry, project_key, JsonFile};

/// File in the data directory holding each project's extra roots.
pub const EXTRA_ROOTS_FILE: &str = crate::userdata::DataKind::Roots.file_name();

/// Why an extra root could not be added or removed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RootsError {
    #[error("{path} is not a folder; give the path of an existing folder")]
    NotAFolder { path: String },
    #[error("{path} is the project folder, which servers always get; pick another folder")]
    IsProject { path: String },
    #[error("{path} is already an extra root")]
    AlreadyThere { path: String },
    #[error("{path} is not an extra root of this project")]
    NotThere { path: String },
    #[error(
        "could not save the extra roots to {file}: {error}; check that the folder is writable"
    )]
    Save { file: String, error: String },
}

impl RootsError {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        match self {
            RootsError::NotAFolder { .. } => "not-a-folder",
            RootsError::IsProject { .. } => "is-project-folder",
            RootsError::AlreadyThere { .. } => "already-a-root",
            RootsError::NotThere { .. } => "not-a-root",
            RootsError::Save { .. } => "write-failed",
        }
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct StoreFile {
    /// project folder → extra folders, in the order they were added
    #[serde(default)]
    projects: BTreeMap<String, Vec<PathBuf>>,
}

/// The extra roots of every project, in one file.
#[derive(Debug, Clone)]
pub struct RootsStore {
    file: JsonFile<StoreFile>,
}

impl RootsStore {
    pub fn in_dir(data_dir: &Path) -> RootsStore {
        RootsStore {
            file: JsonFile::at(data_dir.join(EXTRA_ROOTS_FILE)),
        }
    }

    pub fn path(&self) -> &Path {
        self.file.path()
    }

    /// The extra roots of a project, as stored now.
    pub fn get(&self, project: &Path) -> Vec<PathBuf> {
        project_entry(&self.file.current().projects, project)
    }

    /// Changes a project's roots as stored now (under the lock, so another process's
    /// change is kept); returns the edit's answer and the roots after it.
    fn change<T: Send + 'static>(
        &self,
        project: &Path,
        edit: impl FnOnce(&mut Vec<PathBuf>) -> Result<T, RootsError> + Send + 'static,
    ) -> Result<Vec<PathBuf>, RootsError> {
        let key = project_key(project);
        let out = self.file.update(move |file| {
            let roots = file.projects.entry(key.clone()).or_default();
            let out = edit(roots).map(|_| roots.clone());
            if roots.is_empty() {
                file.projects.remove(&key);
            }
            out
        });
        out.map_err(|e| RootsError::Save {
            file: self.file.path().display().to_string(),
            error: e.to_string(),
        })?
    }

    #[cfg(test)]
    fn put(&self, project: &Path, roots: &[PathBuf]) -> Result<(), RootsError> {
        let roots = roots.to_vec();
        self.change(project, move |r| {
            *r = roots;
            Ok(())
        })
        .map(|_| ())
    }
}

/// A folder as the user typed it: `~/` is the home folder, a relative path is taken from
/// the project folder.
fn resolve(project: &Path, typed: &Path) -> PathBuf {
    let typed = match typed.strip_prefix("~") {
        Ok(rest) => match dirs::home_dir() {
            Some(home) => home.join(rest),
            None => typed.to_path_buf(),
        },
        Err(_) => typed.to_path_buf(),
    };
    let full = project.join(typed);
    std::fs::canonicalize(&full).unwrap_or(full)
}

impl Harness {
    /// Keeps the extra roots in `store` instead of the data directory's file (tests, and
    /// hosts with their own data folder), and applies the ones kept there. Call it before
    /// [`Harness::start`].
    pub fn with_roots_store(mut self, store: RootsStore) -> Harness {
        self.set_extra_roots(&store.get(&self.project));
        self.roots_store = store;
        self
    }

    /// The extra roots of this project, as kept.
    pub fn extra_roots(&self) -> Vec<PathBuf> {
        self.roots_store.get(&self.project)
    }

    /// Adds a folder to the extra roots (kept for the project; servers are told).
    /// Returns the extra roots now.
    pub fn add_extra_root(&self, folder: &Path) -> Result<Vec<PathBuf>, RootsError> {
        let path = resolve(&self.project, folder);
        let shown = path.display().to_string();
        if !path.is_dir() {
            return Err(RootsError::NotAFolder {
                path: folder.display().to_string(),
            });
        }
        if project_key(&path) == project_key(&self.project) {
            return Err(RootsError::IsProject { path: shown });
        }
        let roots = self.roots_store.change(&self.project, move |roots| {
            if roots.contains(&path) {
                return Err(RootsError::AlreadyThere { path: shown });
            }
            roots.push(path);
            Ok(())
        })?;
        self.set_extra_roots(&roots);
        Ok(roots)
    }

    /// Removes a folder from the extra roots. Returns the extra roots now.
    pub fn remove_extra_root(&self, folder: &Path) -> Result<Vec<PathBuf>, RootsError> {
        let resolved = resolve(&self.project, folder);
        let folder = folder.to_path_buf();
        let roots = self.roots_store.change(&self.project, move |roots| {
            let before = roots.len();
            roots.retain(|r| *r != folder && *r != resolved);
            if roots.len() == before {
                return Err(RootsError::NotThere {
                    path: folder.display().to_string(),
                });
            }
            Ok(())
        })?;
        self.set_extra_roots(&roots);
        Ok(roots)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_per_project_and_dropped_when_empty() {
        let dir = tempfile::tempdir().unwrap();
        let store = RootsStore::in_dir(dir.path());
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        store
            .put(&a, &[PathBuf::from("/x"), PathBuf::from("/y")])
            .unwrap();
        store.put(&b, &[PathBuf::from("/z")]).unwrap();
        assert_eq!(store.get(&a), [PathBuf::from("/x"), PathBuf::from("/y")]);
        assert_eq!(store.get(&b), [PathBuf::from("/z")]);
        store.put(&a, &[]).unwrap();
        assert!(store.get(&a).is_empty());
        let text = std::fs::read_to_string(dir.path().join(EXTRA_ROOTS_FILE)).unwrap();
        assert!(!text.contains("\"/x\""), "{text}");
    }
}
