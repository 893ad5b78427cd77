//! Hot reload: watches a project's `.mcp.json` and hands every settled change to the
//! manager, which restarts only the servers whose entries changed.
//!
//! The project folder is watched, not the file: editors and our own atomic save replace
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

use crate::config::{McpConfig, MCP_JSON};
use crate::inspect::content_hash;
use crate::mcp::Manager;

/// Quiet time after the last file event before the configuration is read again.
pub const RELOAD_DEBOUNCE: Duration = Duration::from_millis(200);

/// A change of `.mcp.json` that the watcher handed to the manager.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConfigChange {
    /// Counts reloads since the watcher started (0 = none yet).
    pub revision: u64,
    /// [`content_hash`] of the text that was loaded ("" when the file is gone).
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

/// Watches while alive; dropping it stops the watch.
pub struct ConfigWatcher {
    _watcher: notify::RecommendedWatcher,
    task: AbortHandle,
    changes: watch::Receiver<ConfigChange>,
}

impl ConfigWatcher {
    /// Starts watching `manager`'s project. Must be called inside a Tokio runtime.
    pub fn start(manager: Manager) -> Result<ConfigWatcher, WatchError> {
        let dir = manager.project().to_path_buf();
        let file = dir.join(MCP_JSON);
        let (tx, rx) = mpsc::unbounded_channel::<()>();
        let target = file.clone();
        let mut watcher =
            notify::recommended_watcher(move |res: notify::Result<notify::Event>| match res {
                Ok(ev) if ev.paths.iter().any(|p| is_config(p, &target)) => {
                    let _ = tx.send(());
                }
                Ok(_) => {}
                // A lost event (queue overflow): read the file again to be safe.
                Err(_) => {
                    let _ = tx.send(());
                }
            })
            .map_err(|source| WatchError {
                path: dir.display().to_string(),
                source,
            })?;
        watcher
            .watch(&dir, RecursiveMode::NonRecursive)
            .map_err(|source| WatchError {
                path: dir.display().to_string(),
                source,
            })?;
        let loaded = std::fs::read_to_string(&file)
            .map(|t| content_hash(&t))
            .unwrap_or_default();
        let (changes_tx, changes) = watch::channel(ConfigChange {
            revision: 0,
            hash: loaded.clone(),
        });
        let task = tokio::spawn(run(manager, file, rx, changes_tx, loaded)).abort_handle();
        Ok(ConfigWatcher {
            _watcher: watcher,
            task,
            changes,
        })
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

async fn run(
    manager: Manager,
    file: PathBuf,
    mut events: mpsc::UnboundedReceiver<()>,
    changes: watch::Sender<ConfigChange>,
    mut loaded: String,
) {
    let mut revision = 0;
    while events.recv().await.is_some() {
        // Debounce: wait until the file has been quiet for a while.
        loop {
            match tokio::time::timeout(RELOAD_DEBOUNCE, events.recv()).await {
                Ok(Some(())) => continue,
                Ok(None) => return,
                Err(_) => break,
            }
        }
        let hash = match tokio::fs::read_to_string(&file).await {
            Ok(text) => content_hash(&text),
            Err(_) => String::new(),
        };
        if hash == loaded {
            continue;
        }
        loaded = hash.clone();
        let config = McpConfig::load_file(&file);
        tracing::info!("{} changed; reloading", file.display());
        manager.reload(&config).await;
        revision += 1;
        changes.send_replace(ConfigChange { revision, hash });
    }
}
