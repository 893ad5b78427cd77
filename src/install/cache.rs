//! Registry answers kept on disk with the time they were fetched: a search repeated within
//! [`FRESH_FOR`] is answered from here without asking the registry (a search box stays
//! fast), and when a registry cannot be reached an answer of any age is shown instead,
//! labelled with its age. Only what the registry published is kept (never a secret), in
//! the user's data folder; at most [`MAX_ENTRIES`] answers, the oldest go first.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::Digest;

/// How long a kept answer is used without asking the registry again.
pub const FRESH_FOR: Duration = Duration::from_secs(5 * 60);

/// How many answers are kept at most.
pub const MAX_ENTRIES: usize = 256;

/// The folder of the cache in the user's data folder.
pub const CACHE_DIR: &str = "registry-cache";

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Entry {
    key: String,
    /// Seconds since the Unix epoch.
    fetched_at: u64,
    body: Value,
}

/// A kept answer and how old it is.
#[derive(Debug, Clone)]
pub struct Kept {
    pub body: Value,
    pub age: Duration,
}

/// The cache in one folder.
#[derive(Debug, Clone)]
pub struct Cache {
    dir: Option<PathBuf>,
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl Cache {
    /// Kept in `dir` (created when first written).
    pub fn at(dir: PathBuf) -> Cache {
        Cache { dir: Some(dir) }
    }

    /// Keeps nothing.
    pub fn none() -> Cache {
        Cache { dir: None }
    }

    fn file(&self, key: &str) -> Option<PathBuf> {
        let digest = sha2::Sha256::digest(key.as_bytes());
        let name: String = digest.iter().take(16).map(|b| format!("{b:02x}")).collect();
        Some(self.dir.as_ref()?.join(format!("{name}.json")))
    }

    /// The answer kept for `key`, whatever its age.
    pub fn get(&self, key: &str) -> Option<Kept> {
        let text = std::fs::read(self.file(key)?).ok()?;
        let entry: Entry = serde_json::from_slice(&text).ok()?;
        if entry.key != key {
            return None;
        }
        let age = Duration::from_secs(now_secs().saturating_sub(entry.fetched_at));
        Some(Kept {
            body: entry.body,
            age,
        })
    }

    /// Keeps an answer (a failure to keep it only costs speed later).
    pub fn put(&self, key: &str, body: &Value) {
        let (Some(dir), Some(file)) = (self.dir.as_ref(), self.file(key)) else {
            return;
        };
        if std::fs::create_dir_all(dir).is_err() {
            return;
        }
        let entry = Entry {
            key: key.to_string(),
            fetched_at: now_secs(),
            body: body.clone(),
        };
        if let Ok(bytes) = serde_json::to_vec(&entry) {
            let _ = crate::config::write_atomically(&file, &bytes);
        }
        prune(dir);
    }
}

/// Removes the oldest answers beyond [`MAX_ENTRIES`].
fn prune(dir: &Path) {
    let Ok(read) = std::fs::read_dir(dir) else {
        return;
    };
    let mut files: Vec<(SystemTime, PathBuf)> = read
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    if files.len() <= MAX_ENTRIES {
        return;
    }
    files.sort();
    let extra = files.len() - MAX_ENTRIES;
    for (_, p) in files.into_iter().take(extra) {
        let _ = std::fs::remove_file(p);
    }
}

/// An age for people: `just now`, `5 min ago`, `3 h ago`, `2 days ago`.
pub fn fmt_age(age: Duration) -> String {
    let s = age.as_secs();
    match s {
        0..=59 => "just now".into(),
        60..=3599 => format!("{} min ago", s / 60),
        3600..=172_799 => format!("{} h ago", s / 3600),
        _ => format!("{} days ago", s / 86_400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_come_back_with_their_age_and_old_ones_go() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::at(dir.path().join("c"));
        assert!(cache.get("k").is_none());
        cache.put("k", &serde_json::json!([1, 2]));
        let kept = cache.get("k").unwrap();
        assert_eq!(kept.body, serde_json::json!([1, 2]));
        assert!(kept.age < Duration::from_secs(5));
        for i in 0..MAX_ENTRIES + 3 {
            cache.put(&format!("k{i}"), &Value::Null);
        }
        let count = std::fs::read_dir(dir.path().join("c")).unwrap().count();
        assert_eq!(count, MAX_ENTRIES);
        assert!(Cache::none().get("k").is_none());
        assert_eq!(fmt_age(Duration::from_secs(7300)), "2 h ago");
    }
}
