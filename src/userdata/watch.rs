//! Watches the user-data folder so a running front end sees another process's change (a
//! revoke or an accept in the CLI) within a second, without waiting for its next decision.
//! The folder is watched, not the files: every write replaces a file by a rename. Events
//! are debounced ([`USERDATA_DEBOUNCE`]) and handed on as the kinds of data that changed.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use notify::{RecursiveMode, Watcher};
use tokio::sync::mpsc;
use tokio::task::AbortHandle;

/// Quiet time after the last file event before the change is handed on.
pub const USERDATA_DEBOUNCE: Duration = Duration::from_millis(100);

/// The kinds of per-project user data, one file each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DataKind {
    Approvals,
    Pins,
    Sampling,
    Permissions,
    Roots,
    /// The task table ([`crate::host::tasks`]).
    Tasks,
}

impl DataKind {
    /// The file of this kind in the data folder. The store names the files; each owner of
    /// a kind takes its file name from here.
    pub const fn file_name(self) -> &'static str {
        match self {
            DataKind::Approvals => "approvals.json",
            DataKind::Pins => "pins.json",
            DataKind::Sampling => "sampling.json",
            DataKind::Permissions => "tool-permissions.json",
            DataKind::Roots => "extra-roots.json",
            DataKind::Tasks => "tasks.json",
        }
    }

    const ALL: [DataKind; 6] = [
        DataKind::Approvals,
        DataKind::Pins,
        DataKind::Sampling,
        DataKind::Permissions,
        DataKind::Roots,
        DataKind::Tasks,
    ];

    fn of(path: &Path) -> Option<DataKind> {
        let name = path.file_name()?.to_str()?;
        DataKind::ALL.into_iter().find(|k| k.file_name() == name)
    }
}

/// Watches while alive; dropping it stops the watch.
pub struct UserDataWatcher {
    _watcher: notify::RecommendedWatcher,
    task: AbortHandle,
}

impl UserDataWatcher {
    /// Watches the folders and calls `changed` with the kinds whose file changed. Must be
    /// called inside a Tokio runtime.
    pub fn start(
        dirs: &[PathBuf],
        changed: impl Fn(BTreeSet<DataKind>) + Send + 'static,
    ) -> notify::Result<UserDataWatcher> {
        let (tx, mut rx) = mpsc::unbounded_channel::<PathBuf>();
        let mut watcher =
            notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
                if let Ok(event) = res {
                    for p in event.paths {
                        let _ = tx.send(p);
                    }
                }
            })?;
        for dir in dirs {
            // The folder exists before the first write, so that write is seen too.
            let _ = std::fs::create_dir_all(dir);
            watcher.watch(dir, RecursiveMode::NonRecursive)?;
        }
        let task = tokio::spawn(async move {
            while let Some(first) = rx.recv().await {
                let mut kinds: BTreeSet<DataKind> = DataKind::of(&first).into_iter().collect();
                loop {
                    match tokio::time::timeout(USERDATA_DEBOUNCE, rx.recv()).await {
                        Ok(Some(p)) => kinds.extend(DataKind::of(&p)),
                        Ok(None) => return,
                        Err(_) => break,
                    }
                }
                if !kinds.is_empty() {
                    changed(kinds);
                }
            }
        })
        .abort_handle();
        Ok(UserDataWatcher {
            _watcher: watcher,
            task,
        })
    }
}

impl Drop for UserDataWatcher {
    fn drop(&mut self) {
        self.task.abort();
    }
}
