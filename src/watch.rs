//! Hot reload: watches a project's config files (the project's `.mcp.json`, the user's and
//! the local scope's `mcp.json`, see [`crate::config::scopes`]) and hands every settled
//! change to the manager, which restarts only the servers whose entries changed.
//!
//! The folders are watched, not the files (the user's and the local folder are created when
//! missing, so a file added later is seen): editors and our own atomic save replace
//! the file by a rename, which a watch on the old file would miss. Events are debounced
//! ([`RELOAD_DEBOUNCE`]) so that an editor's write-rename-chmod burst gives one reload, and
//! a change whose content equals what was last loaded (our own save, a `touch`) reloads
//! nothing. Every reload bumps a revision on a `watch` channel, so a front end can tell
//! the user that the file changed on disk; no subscriber can block the watcher.

use std::path::{Path, PathBuf};
use std::time::Duration;

use notify::{RecursiveMode, Watcher};
use tokio::sync::{mpsc, watch};
use tokio::task::AbortHandle;

use crate::config::{McpConfig, Scope, ScopeFiles, MCP_JSON};
use crate::inspect::content_hash;
use crate::manager::Manager;

/// Quiet time after the last file event before the configuration is read again.
pub const RELOAD_DEBOUNCE: Duration = Duration::from_millis(200);

/// A change of `.mcp.json` that the watcher handed to the manager.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ConfigChange {
    /// Counts reloads since the watcher started (0 = none yet).
    pub revision: u64,
    /// [`content_hash`] of the project's `.mcp.json` that was loaded ("" when the file is
    /// gone).
    pub hash: String,
}

/// Why the folder cannot be watched.
#[derive(Debug, thiserror::Error)]
#[error("cannot watch {path} for changes of {MCP_JSON}: {source}")]
pub struct WatchError {
    path: String,
    #[source]
    source: notify::Error,
}

impl WatchError {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        "watch-failed"
    }
}

/// Watches while alive; dropping it stops the watch.
pub struct ConfigWatcher {
    _watcher: notify::RecommendedWatcher,
    task: AbortHandle,
    changes: watch::Receiver<ConfigChange>,
    /// The watch of the stored user data, kept as long as this one.
    user_data: Option<crate::userdata::UserDataWatcher>,
}

impl ConfigWatcher {
    /// Starts watching `manager`'s project. Must be called inside a Tokio runtime.
    pub fn start(manager: Manager) -> Result<ConfigWatcher, WatchError> {
        let files = ScopeFiles::of(manager.project());
        ConfigWatcher::start_files(manager, files)
    }

    /// Starts watching the given scope files of `manager`'s project.
    pub fn start_files(manager: Manager, files: ScopeFiles) -> Result<ConfigWatcher, WatchError> {
        let (tx, rx) = mpsc::unbounded_channel::<()>();
        let targets: Vec<PathBuf> = Scope::ALL
            .iter()
            .map(|s| files.path(*s).to_path_buf())
            .collect();
        let names = targets.clone();
        let mut watcher =
            notify::recommended_watcher(move |res: notify::Result<notify::Event>| match res {
                Ok(ev)
                    if ev
                        .paths
                        .iter()
                        .any(|p| names.iter().any(|t| is_config(p, t))) =>
                {
                    let _ = tx.send(());
                }
                Ok(_) => {}
                // A lost event (queue overflow): read the file again to be safe.
                Err(_) => {
                    let _ = tx.send(());
                }
            })
            .map_err(|source| WatchError {
                path: manager.project().display().to_string(),
                source,
            })?;
        for scope in Scope::ALL {
            let dir = files
                .path(scope)
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default();
            if scope != Scope::Project {
                // Best effort: without the folder, that scope is simply not watched.
                if std::fs::create_dir_all(&dir).is_err() {
                    continue;
                }
            }
            let watched = watcher.watch(&dir, RecursiveMode::NonRecursive);
            if scope == Scope::Project {
                watched.map_err(|source| WatchError {
                    path: dir.display().to_string(),
                    source,
                })?;
            }
        }
        let loaded = hashes(&files);
        let (changes_tx, changes) = watch::channel(ConfigChange {
            revision: 0,
            hash: loaded.1.clone(),
        });
        let task = tokio::spawn(run(manager, files, rx, changes_tx, loaded.0)).abort_handle();
        Ok(ConfigWatcher {
            _watcher: watcher,
            task,
            changes,
            user_data: None,
        })
    }

    /// Keeps a watch of the stored user data alive as long as this one.
    pub fn with_user_data(mut self, w: Option<crate::userdata::UserDataWatcher>) -> Self {
        self.user_data = w;
        self
    }

    /// The latest change; `changed()` wakes on every reload caused by the file.
    pub fn subscribe(&self) -> watch::Receiver<ConfigChange> {
        self.changes.clone()
    }
}

impl Drop for ConfigWatcher {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn is_config(path: &Path, target: &Path) -> bool {
    path == target || path.file_name() == target.file_name()
}

/// The hash of all three files together, and of the project's file alone.
fn hashes(files: &ScopeFiles) -> (String, String) {
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
    let project = read(&files.project);
    let all = format!(
        "{}\0{}\0{}",
        content_hash(&read(&files.local)),
        content_hash(&project),
        content_hash(&read(&files.user))
    );
    let project = if files.project.exists() {
        content_hash(&project)
    } else {
        String::new()
    };
    (all, project)
}

async fn run(
    manager: Manager,
    files: ScopeFiles,
    mut events: mpsc::UnboundedReceiver<()>,
    changes: watch::Sender<ConfigChange>,
    mut loaded: String,
) {
    let mut revision = 0;
    while events.recv().await.is_some() {
        // Debounce: wait until the files have been quiet for a while.
        loop {
            match tokio::time::timeout(RELOAD_DEBOUNCE, events.recv()).await {
                Ok(Some(())) => continue,
                Ok(None) => return,
                Err(_) => break,
            }
        }
        let at = files.clone();
        let Ok((all, hash)) = tokio::task::spawn_blocking(move || hashes(&at)).await else {
            continue;
        };
        if all == loaded {
            continue;
        }
        loaded = all;
        let at = files.clone();
        let Ok(config) = tokio::task::spawn_blocking(move || McpConfig::load_files(&at)).await
        else {
            continue;
        };
        tracing::info!(
            "the MCP config of {} changed; reloading",
            manager.project().display()
        );
        manager.reload(&config).await;
        revision += 1;
        changes.send_replace(ConfigChange { revision, hash });
    }
}
