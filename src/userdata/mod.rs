//! The per-project user data: approvals, tool pins, sampling grants, tool permission rules
//! and extra roots. Each kind keeps its own JSON file in the user's data directory (the
//! formats of earlier versions are read as they are), and this module owns how every one
//! of them is read, written and shared between processes:
//!
//! - one project key ([`project_key`]): the canonical project folder;
//! - one lock for all of them ([`LOCK_FILE`], an `flock` beside the files), held while a
//!   writer re-reads the file, applies its change and replaces the file — a write merges
//!   a change into what is on disk, never a snapshot over another process's work;
//! - writes go to a temp file created exclusively next to the target (a planted symlink
//!   is never followed), then the file and its folder are fsynced;
//! - every read checks the file's generation (device, inode, size, modification and
//!   change time) first, so a decision made from a stored entry honours another process's
//!   change at once, and costs one `stat` when nothing changed;
//! - [`watch`] tells a running front end within a second that a file changed.

mod file;
pub mod watch;

pub use file::{JsonFile, LOCK_FILE};
pub use watch::{DataKind, UserDataWatcher};

use std::path::Path;

/// Why per-project user data could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum UserDataError {
    #[error("cannot lock {path}: {source}")]
    Lock {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write {path}: {source}")]
    Write {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

impl UserDataError {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        match self {
            UserDataError::Lock { .. } => "lock-failed",
            UserDataError::Write { .. } => "write-failed",
        }
    }
}

impl From<UserDataError> for std::io::Error {
    fn from(e: UserDataError) -> std::io::Error {
        let kind = match &e {
            UserDataError::Lock { source, .. } | UserDataError::Write { source, .. } => {
                source.kind()
            }
        };
        std::io::Error::new(kind, e.to_string())
    }
}

/// The key of a project in every store: its canonical folder (the folder as given when it
/// cannot be resolved).
pub fn project_key(project: &Path) -> String {
    std::fs::canonicalize(project)
        .unwrap_or_else(|_| project.to_path_buf())
        .display()
        .to_string()
}

/// A project's entry of a store kept per project (under [`project_key`]); the default
/// when the project has none.
pub fn project_entry<T: Clone + Default>(
    projects: &std::collections::BTreeMap<String, T>,
    project: &Path,
) -> T {
    projects
        .get(&project_key(project))
        .cloned()
        .unwrap_or_default()
}
