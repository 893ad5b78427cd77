//! Which folders the window may open as a project. Opening a folder decides where the
//! settings pane writes (`.mcp.json` of that folder), so the window cannot name one: it may
//! open only a folder the backend offered it — one the user picked in the native folder
//! dialog this run, one of the recent projects, or one already opened (from the command
//! line or before).

use parking_lot::Mutex;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use crate::bridge::{BridgeError, BridgeResult};

static OFFERED: LazyLock<Mutex<HashSet<PathBuf>>> = LazyLock::new(Mutex::default);

fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Records a folder the backend offered (picked in the dialog, or opened).
pub fn offer(path: &Path) {
    OFFERED.lock().insert(canonical(path));
}

/// The folder to open for the window's request, when it is one the backend offered or
/// one of `recent`; otherwise an error that says how to open it.
pub fn may_open(path: &str, recent: &[String]) -> BridgeResult<PathBuf> {
    let wanted = canonical(Path::new(path));
    let known = OFFERED.lock().contains(&wanted)
        || recent.iter().any(|r| canonical(Path::new(r)) == wanted);
    if known {
        Ok(wanted)
    } else {
        Err(BridgeError::folder(format!(
            "{path} was not chosen in this app; open it with Open Folder…"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("h9-folders-{}-{tag}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn only_offered_or_recent_folders_open() {
        let (picked, recent, other) = (folder("picked"), folder("recent"), folder("other"));
        let recent_list = vec![recent.display().to_string()];
        let name = |d: &Path| d.display().to_string();

        assert!(may_open(&name(&picked), &recent_list).is_err());
        offer(&picked);
        assert_eq!(
            may_open(&name(&picked), &recent_list).unwrap(),
            picked.canonicalize().unwrap()
        );
        // Another spelling of the same folder is the same folder.
        assert!(may_open(&format!("{}/.", name(&picked)), &recent_list).is_ok());
        assert!(may_open(&name(&recent), &recent_list).is_ok());
        let refused = may_open(&name(&other), &recent_list).unwrap_err();
        assert!(
            refused.message.contains("open it with Open Folder"),
            "{}",
            refused.message
        );
        assert!(may_open("/", &recent_list).is_err());
        for d in [picked, recent, other] {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}
