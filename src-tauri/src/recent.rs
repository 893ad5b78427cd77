//! Recently opened project folders, newest first, in the user's harness9 data folder
//! (`recent-projects.json`, written atomically). Failures to record are logged, never shown:
//! the list is a convenience.

use std::path::{Path, PathBuf};

/// Folders kept in the list.
pub const RECENT_LIMIT: usize = 10;

const FILE: &str = "recent-projects.json";

fn store() -> PathBuf {
    harness9::trust::data_dir().join(FILE)
}

/// The recent folders that still exist, newest first.
pub fn list() -> Vec<String> {
    read(&store())
        .into_iter()
        .filter(|p| Path::new(p).is_dir())
        .collect()
}

fn read(path: &Path) -> Vec<String> {
    std::fs::read(path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

/// Puts a folder at the top of the list.
pub fn remember(folder: &Path) {
    let path = store();
    if let Err(e) = remember_in(&path, folder) {
        tracing::warn!(
            "cannot record the recent project in {}: {e}",
            path.display()
        );
    }
}

fn remember_in(path: &Path, folder: &Path) -> std::io::Result<()> {
    let folder = folder.display().to_string();
    let mut list = read(path);
    list.retain(|p| *p != folder);
    list.insert(0, folder);
    list.truncate(RECENT_LIMIT);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let bytes = serde_json::to_vec_pretty(&list).expect("a list of strings serializes");
    harness9::config::write_atomically(path, &bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newest_first_without_duplicates_and_bounded() {
        let dir = std::env::temp_dir().join(format!("h9-recent-{}", std::process::id()));
        let file = dir.join(FILE);
        for i in 0..12 {
            remember_in(&file, Path::new(&format!("/p{i}"))).unwrap();
        }
        remember_in(&file, Path::new("/p5")).unwrap();
        let got = read(&file);
        assert_eq!(got.len(), RECENT_LIMIT);
        assert_eq!(&got[..3], ["/p5", "/p11", "/p10"]);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
