//! The task table on disk (`tasks.json` in the user's data folder, kept by
//! [`crate::userdata`]): per project, the tasks still running and the most recent ended
//! ones ([`MAX_ENDED_KEPT`]), so that a restarted harness9 polls its HTTP servers' tasks
//! again and delivers their late results. Written when a task starts, ends, or is asked to
//! cancel, never on each poll. Blocking: call it off the async runtime.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::record::{TaskKey, TaskRecord};
use crate::userdata::{project_key, JsonFile, UserDataError};

/// The file of the task table in the data folder.
pub const TASKS_FILE: &str = crate::userdata::DataKind::Tasks.file_name();

/// Ended tasks kept per project (the oldest go first).
pub const MAX_ENDED_KEPT: usize = 200;

#[derive(Debug, Default, Serialize, Deserialize)]
struct TasksFile {
    /// project folder → its tasks, oldest first.
    #[serde(default)]
    projects: BTreeMap<String, Vec<TaskRecord>>,
}

/// The stored task tables of every project.
#[derive(Debug, Clone)]
pub struct TaskStore {
    file: JsonFile<TasksFile>,
}

impl TaskStore {
    pub fn in_dir(dir: &Path) -> TaskStore {
        TaskStore::at(dir.join(TASKS_FILE))
    }

    pub fn at(path: PathBuf) -> TaskStore {
        TaskStore {
            file: JsonFile::at(path),
        }
    }

    pub fn path(&self) -> &Path {
        self.file.path()
    }

    /// The project's stored tasks, oldest first.
    pub fn load(&self, project: &Path) -> Vec<TaskRecord> {
        self.file
            .current()
            .projects
            .get(&project_key(project))
            .cloned()
            .unwrap_or_default()
    }

    /// Writes these records (each replaces the stored one of the same task), keeping what
    /// is on disk otherwise; a record already delivered stays delivered.
    pub fn put(&self, project: &Path, records: Vec<TaskRecord>) -> Result<(), UserDataError> {
        let key = project_key(project);
        self.file.update(move |f| {
            let list = f.projects.entry(key).or_default();
            for mut record in records {
                match list.iter_mut().find(|r| r.key() == record.key()) {
                    Some(stored) => {
                        record.delivered |= stored.delivered;
                        *stored = record;
                    }
                    None => list.push(record),
                }
            }
            prune(list);
        })
    }

    /// Marks a task's late result delivered: `true` when this call did (no one had yet),
    /// so exactly one process adds it to its conversation.
    pub fn claim_delivery(&self, project: &Path, task: &TaskKey) -> Result<bool, UserDataError> {
        let (key, task) = (project_key(project), task.clone());
        self.file.update(move |f| {
            let Some(record) = f
                .projects
                .get_mut(&key)
                .and_then(|list| list.iter_mut().find(|r| r.key() == task))
            else {
                return false;
            };
            let first = !record.delivered;
            record.delivered = true;
            first
        })
    }
}

/// Keeps every running task and the newest [`MAX_ENDED_KEPT`] ended ones.
fn prune(list: &mut Vec<TaskRecord>) {
    let ended = list.iter().filter(|r| r.state.is_ended()).count();
    let mut extra = ended.saturating_sub(MAX_ENDED_KEPT);
    if extra == 0 {
        return;
    }
    list.sort_by_key(|r| r.created_ms);
    list.retain(|r| {
        if extra > 0 && r.state.is_ended() {
            extra -= 1;
            false
        } else {
            true
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::tasks::record::TaskState;
    use crate::mcp::era::Era;

    fn record(id: &str, state: TaskState, created_ms: u64) -> TaskRecord {
        TaskRecord {
            server: "s".into(),
            tool: "t".into(),
            arguments: serde_json::json!({}),
            task_id: id.into(),
            era: Era::Legacy,
            created_ms,
            ttl_ms: None,
            state,
            message: None,
            updated_ms: created_ms,
            error: None,
            origin: None,
            local: false,
            owner_pid: None,
            can_cancel: true,
            delivered: false,
        }
    }

    #[test]
    fn records_merge_and_ended_ones_are_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let store = TaskStore::in_dir(dir.path());
        let project = dir.path();
        store
            .put(project, vec![record("a", TaskState::Working, 1)])
            .unwrap();
        // Another process's task is kept beside ours.
        TaskStore::in_dir(dir.path())
            .put(project, vec![record("b", TaskState::Working, 2)])
            .unwrap();
        store
            .put(project, vec![record("a", TaskState::Completed, 1)])
            .unwrap();
        let ids: Vec<(String, TaskState)> = store
            .load(project)
            .into_iter()
            .map(|r| (r.task_id, r.state))
            .collect();
        assert_eq!(
            ids,
            [
                ("a".to_string(), TaskState::Completed),
                ("b".to_string(), TaskState::Working)
            ]
        );
        let many: Vec<TaskRecord> = (0..MAX_ENDED_KEPT + 5)
            .map(|i| record(&format!("e{i}"), TaskState::Completed, 10 + i as u64))
            .collect();
        store.put(project, many).unwrap();
        let kept = store.load(project);
        assert_eq!(
            kept.iter().filter(|r| r.state.is_ended()).count(),
            MAX_ENDED_KEPT
        );
        assert!(kept.iter().any(|r| r.task_id == "b"), "running tasks stay");
        assert!(
            !kept.iter().any(|r| r.task_id == "a"),
            "the oldest ended go"
        );
    }

    #[test]
    fn a_late_result_is_claimed_once() {
        let dir = tempfile::tempdir().unwrap();
        let store = TaskStore::in_dir(dir.path());
        let r = record("a", TaskState::Completed, 1);
        store.put(dir.path(), vec![r.clone()]).unwrap();
        assert!(store.claim_delivery(dir.path(), &r.key()).unwrap());
        assert!(!TaskStore::in_dir(dir.path())
            .claim_delivery(dir.path(), &r.key())
            .unwrap());
        // Writing the record again does not undo the claim.
        store.put(dir.path(), vec![r.clone()]).unwrap();
        assert!(!store.claim_delivery(dir.path(), &r.key()).unwrap());
    }
}
