//! Removing spilled tool outputs ([`super::spill`]) nobody will read again. Outputs live
//! in `{data dir}/tool-outputs/{conversation id}/`, and only their conversation refers to
//! them (by id, in its tool results); that conversation is
//! `{data dir}/conversations/{project hash}/{conversation id}.jsonl`.
//!
//! The rule is conservative: an output file is removed only when it is older than the
//! maximum age, its conversation is not open in this process, and no file of its
//! conversation (under any project) was written or reopened within the maximum age.
//! Opening a conversation sets its file's modification time ([`super::writer`]), so one
//! reopened in another process counts as in use too. A folder left empty goes as well.
//!
//! [`start`] runs this on a thread of its own when an engine starts: it never blocks a
//! turn, and a failure is logged and skipped, never reported to the user.

use parking_lot::Mutex;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use super::provider::settings;
use super::spill::OUTPUTS_DIR;
use super::store::CONVERSATIONS_DIR;

/// Days a spilled tool output is kept when the settings file does not say
/// (`toolOutputs.maxAgeDays`).
pub const DEFAULT_MAX_AGE_DAYS: u64 = 7;
/// The settings file's key of [`ToolOutputsSection`].
pub const SETTINGS_KEY: &str = "toolOutputs";

const DAY: Duration = Duration::from_secs(24 * 60 * 60);

/// The `toolOutputs` section of `settings.json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolOutputsSection {
    /// Spilled outputs older than this many days are removed; 0 keeps them forever.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_age_days: Option<u64>,
}

impl ToolOutputsSection {
    /// How long outputs are kept; `None`: forever.
    pub fn max_age(&self) -> Option<Duration> {
        match self.max_age_days.unwrap_or(DEFAULT_MAX_AGE_DAYS) {
            0 => None,
            days => Some(DAY.saturating_mul(days.min(u64::from(u32::MAX)) as u32)),
        }
    }
}

/// Conversation ids of the engines alive in this process, with how many engines have each.
static OPEN: Mutex<Option<HashMap<String, usize>>> = Mutex::new(None);

/// Marks a conversation as open in this process while it lives: its outputs are kept
/// whatever their age.
#[derive(Debug)]
pub struct OpenConversation(String);

impl OpenConversation {
    pub fn new(id: &str) -> OpenConversation {
        let mut open = OPEN.lock();
        *open
            .get_or_insert_with(HashMap::new)
            .entry(id.to_string())
            .or_default() += 1;
        OpenConversation(id.to_string())
    }
}

impl Drop for OpenConversation {
    fn drop(&mut self) {
        let mut open = OPEN.lock();
        if let Some(map) = open.as_mut() {
            if let Some(n) = map.get_mut(&self.0) {
                *n -= 1;
                if *n == 0 {
                    map.remove(&self.0);
                }
            }
        }
    }
}

fn is_open(id: &str) -> bool {
    let open = OPEN.lock();
    open.as_ref().is_some_and(|m| m.contains_key(id))
}

/// Cleans `data_dir`'s outputs on a thread of its own, with the maximum age from the
/// settings file (or [`DEFAULT_MAX_AGE_DAYS`]). An unreadable setting removes nothing.
pub fn start(data_dir: PathBuf) {
    let spawned = std::thread::Builder::new()
        .name("tool-output cleanup".into())
        .spawn(move || {
            let section = match settings::load_section::<ToolOutputsSection>(SETTINGS_KEY) {
                Ok(s) => s.unwrap_or_default(),
                Err(e) => {
                    tracing::warn!("spilled tool outputs are kept: {e}");
                    return;
                }
            };
            let Some(max_age) = section.max_age() else {
                return;
            };
            let removed = clean(&data_dir, max_age, SystemTime::now());
            tracing::debug!("removed {removed} spilled tool outputs older than {max_age:?}");
        });
    if let Err(e) = spawned {
        tracing::warn!("spilled tool outputs are not cleaned up: {e}");
    }
}

/// Removes the outputs under `data_dir` that the rule in the module doc lets go, as of
/// `now`; returns how many files went. Files that cannot be read or removed are skipped.
pub fn clean(data_dir: &Path, max_age: Duration, now: SystemTime) -> usize {
    let old = |modified: std::io::Result<SystemTime>| {
        modified
            .ok()
            .and_then(|m| now.duration_since(m).ok())
            .is_some_and(|age| age > max_age)
    };
    let fresh = recent_conversations(&data_dir.join(CONVERSATIONS_DIR), &old);
    let mut removed = 0;
    for conversation in entries(&data_dir.join(OUTPUTS_DIR)) {
        let id = conversation.file_name().to_string_lossy().into_owned();
        if fresh.contains(&id) || is_open(&id) {
            continue;
        }
        let dir = conversation.path();
        for output in entries(&dir) {
            let is_file = output.file_type().is_ok_and(|t| t.is_file());
            if is_file
                && old(output.metadata().and_then(|m| m.modified()))
                && std::fs::remove_file(output.path()).is_ok()
            {
                removed += 1;
            }
        }
        // Fails while anything is left in it, as it should.
        let _ = std::fs::remove_dir(&dir);
    }
    removed
}

/// Ids of the conversations whose file, under any project, is not `old`.
fn recent_conversations(
    dir: &Path,
    old: &dyn Fn(std::io::Result<SystemTime>) -> bool,
) -> HashSet<String> {
    let mut ids = HashSet::new();
    for project in entries(dir) {
        for file in entries(&project.path()) {
            let name = file.file_name().to_string_lossy().into_owned();
            let Some(id) = name.strip_suffix(".jsonl") else {
                continue;
            };
            if !old(file.metadata().and_then(|m| m.modified())) {
                ids.insert(id.to_string());
            }
        }
    }
    ids
}

fn entries(dir: &Path) -> impl Iterator<Item = std::fs::DirEntry> {
    std::fs::read_dir(dir).into_iter().flatten().flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes `path` with a modification time `days` ago.
    fn file_aged(path: &Path, days: u64, now: SystemTime) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let f = std::fs::File::create(path).unwrap();
        f.set_modified(now - DAY * days as u32).unwrap();
    }

    #[test]
    fn only_old_outputs_of_old_and_closed_conversations_go() {
        let data = tempfile::tempdir().unwrap();
        let (d, now) = (data.path(), SystemTime::now());
        let conv = |project: &str, id: &str| {
            d.join(CONVERSATIONS_DIR)
                .join(project)
                .join(format!("{id}.jsonl"))
        };
        let out = |id: &str, file: &str| d.join(OUTPUTS_DIR).join(id).join(file);
        // An old conversation: its old output goes, a recent one stays.
        file_aged(&conv("p1", "old"), 30, now);
        file_aged(&out("old", "a.txt"), 30, now);
        file_aged(&out("old", "b.txt"), 1, now);
        // A conversation written (or reopened) lately keeps even its old outputs, whatever
        // project it belongs to.
        file_aged(&conv("p2", "recent"), 2, now);
        file_aged(&out("recent", "c.txt"), 30, now);
        // No conversation file at all (deleted, or never saved): old outputs go, with
        // their folder.
        file_aged(&out("orphan", "d.txt"), 8, now);
        // Open in this process (a reopened old conversation not written to yet): kept.
        file_aged(&conv("p1", "open"), 30, now);
        file_aged(&out("open", "e.txt"), 30, now);
        let _open = OpenConversation::new("open");

        assert_eq!(clean(d, DAY * 7, now), 2);
        assert!(!out("old", "a.txt").exists());
        assert!(out("old", "b.txt").exists());
        assert!(out("recent", "c.txt").exists());
        assert!(!d.join(OUTPUTS_DIR).join("orphan").exists());
        assert!(out("open", "e.txt").exists());
        // Conversations themselves are never touched.
        assert!(conv("p1", "old").exists());

        drop(_open);
        assert_eq!(clean(d, DAY * 7, now), 1, "closed, it is fair game");
        assert!(!out("open", "e.txt").exists());
    }

    #[test]
    fn the_setting_reads_days_and_zero_keeps_forever() {
        let parse = |v: serde_json::Value| serde_json::from_value::<ToolOutputsSection>(v);
        assert_eq!(
            parse(serde_json::json!({})).unwrap().max_age(),
            Some(DAY * DEFAULT_MAX_AGE_DAYS as u32)
        );
        assert_eq!(
            parse(serde_json::json!({"maxAgeDays": 30}))
                .unwrap()
                .max_age(),
            Some(DAY * 30)
        );
        assert_eq!(
            parse(serde_json::json!({"maxAgeDays": 0}))
                .unwrap()
                .max_age(),
            None
        );
        assert!(parse(serde_json::json!({"maxAge": 3})).is_err());
    }
}
