//! Conversations saved per project, append-only: one JSONL file per conversation under
//! `{data dir}/conversations/{project hash}/{id}.jsonl`. The first line is a header (the
//! project folder, the creation time); each further line is one record: a message, or the
//! names of tools that tool search loaded. The file is opened and each line written whole
//! with one `write` call on the file's own writer thread ([`super::writer`]), so that
//! neither the turn loop nor whoever starts an engine waits on the disk for it; a torn last
//! line (a crash mid-write) is skipped on load. Reopening a conversation sets its file's
//! modification time, so clean-ups by age ([`super::spill_cleanup`]) see it as in use.
//!
//! Loading repairs a history cut off in the middle of tool calls: every `tool_use` without
//! a result gets an error result, so the conversation stays valid for every provider.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::event::CallView;
use super::late::LateResult;
use super::message::{Block, Message, ResultPart, Role};
use super::writer::AppendWriter;

/// Folder of conversations in the data directory.
pub const CONVERSATIONS_DIR: &str = "conversations";

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Record {
    Header {
        project: String,
        created_ms: u64,
    },
    Message {
        message: Message,
    },
    ToolsLoaded {
        names: Vec<String>,
    },
    /// A tool call with an interactive view (MCP Apps): what reopens it.
    View {
        call_id: String,
        view: Box<CallView>,
    },
    /// A tool call that went on running as an MCP task after its turn.
    Task {
        call_id: String,
        server: String,
        task_id: String,
    },
    /// The late result of such a call ([`LateResult`]); it goes to the model with the
    /// next user message.
    LateResult {
        late: Box<LateResult>,
    },
}

/// A saved conversation, as a front end lists it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ConversationSummary {
    pub id: String,
    pub created_ms: u64,
    pub messages: usize,
    /// The first user message, shortened.
    pub title: String,
}

/// A conversation read back from disk.
#[derive(Debug, Default)]
pub struct Loaded {
    pub messages: Vec<Arc<Message>>,
    pub tools_loaded: Vec<String>,
    /// The views of tool calls, by call id (MCP Apps).
    pub views: std::collections::HashMap<String, CallView>,
    /// Late results not yet given to the model (added after the last user message).
    pub late: Vec<LateResult>,
    /// The tasks its calls left running: call id → (server, task id).
    pub tasks: std::collections::HashMap<String, (String, String)>,
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("could not write the conversation file {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("no saved conversation \"{0}\" for this project")]
    NotFound(String),
}

impl StoreError {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        match self {
            StoreError::Io { .. } => "write-failed",
            StoreError::NotFound(_) => "unknown-conversation",
        }
    }
}

/// The conversations of one project.
#[derive(Debug, Clone)]
pub struct ConversationStore {
    dir: PathBuf,
    project: String,
}

impl ConversationStore {
    pub fn new(data_dir: &Path, project: &Path) -> ConversationStore {
        let key = crate::userdata::project_key(project);
        let digest = Sha256::digest(key.as_bytes());
        let hash: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
        ConversationStore {
            dir: data_dir.join(CONVERSATIONS_DIR).join(hash),
            project: key,
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.jsonl"))
    }

    /// Saved conversations with at least one message, newest first.
    pub fn list(&self) -> Vec<ConversationSummary> {
        let mut ids: Vec<String> = std::fs::read_dir(&self.dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                name.strip_suffix(".jsonl").map(str::to_string)
            })
            .filter(|id| valid_id(id))
            .collect();
        ids.sort_unstable_by(|a, b| b.cmp(a));
        ids.into_iter()
            .filter_map(|id| {
                let (created_ms, loaded) = self.read(&id).ok()?;
                // A conversation nobody wrote in is not worth listing.
                if loaded.messages.is_empty() {
                    return None;
                }
                let title = loaded
                    .messages
                    .iter()
                    .find(|m| m.role == Role::User && !m.text().is_empty())
                    .map(|m| m.text().chars().take(80).collect())
                    .unwrap_or_default();
                Some(ConversationSummary {
                    id,
                    created_ms,
                    messages: loaded.messages.len(),
                    title,
                })
            })
            .collect()
    }

    /// The newest conversation's id.
    pub fn latest(&self) -> Option<String> {
        self.list().into_iter().next().map(|s| s.id)
    }

    /// Starts a new conversation file.
    pub fn create(&self) -> Result<ConversationFile, StoreError> {
        let created_ms = now_ms();
        let mut id = format!("{created_ms:013}-{:05}", std::process::id() % 100_000);
        let mut n = 1;
        while self.path(&id).exists() {
            id = format!("{created_ms:013}-{:05}-{n}", std::process::id() % 100_000);
            n += 1;
        }
        let file = ConversationFile::open(self.path(&id), id)?;
        file.append_record(&Record::Header {
            project: self.project.clone(),
            created_ms,
        })?;
        Ok(file)
    }

    /// Opens a saved conversation for appending, with its history.
    pub fn open(&self, id: &str) -> Result<(ConversationFile, Loaded), StoreError> {
        if !valid_id(id) {
            return Err(StoreError::NotFound(id.into()));
        }
        let (_, loaded) = self.read(id)?;
        let file = ConversationFile::open(self.path(id), id.to_string())?;
        Ok((file, loaded))
    }

    /// Adds a late result (and the view it completes, if any) to saved conversation
    /// `id`, which no engine of this process has open; on disk when this returns
    /// (blocking).
    pub fn add_late_result(
        &self,
        id: &str,
        late: &LateResult,
        view: Option<&CallView>,
    ) -> Result<(), StoreError> {
        let (file, _) = self.open(id)?;
        if let Some(view) = view {
            file.append_view(&late.call_id, view)?;
        }
        file.append_late_result(late)?;
        file.flush()
    }

    fn read(&self, id: &str) -> Result<(u64, Loaded), StoreError> {
        let text = std::fs::read_to_string(self.path(id))
            .map_err(|_| StoreError::NotFound(id.to_string()))?;
        let mut loaded = Loaded::default();
        let mut created = 0;
        for line in text.lines() {
            match serde_json::from_str::<Record>(line) {
                Ok(Record::Header { created_ms, .. }) => created = created_ms,
                Ok(Record::Message { message }) => {
                    // A user message takes the late results that came before it along.
                    if message.role == Role::User {
                        loaded.late.clear();
                    }
                    loaded.messages.push(Arc::new(message));
                }
                Ok(Record::Task {
                    call_id,
                    server,
                    task_id,
                }) => {
                    loaded.tasks.insert(call_id, (server, task_id));
                }
                Ok(Record::LateResult { late }) => loaded.late.push(*late),
                Ok(Record::ToolsLoaded { names }) => loaded.tools_loaded.extend(names),
                Ok(Record::View { call_id, view }) => {
                    loaded.views.insert(call_id, *view);
                }
                Err(_) => {} // a torn line or a record from a newer version
            }
        }
        repair(&mut loaded.messages);
        Ok((created, loaded))
    }
}

fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// Answers tool calls left without results, so every provider accepts the history.
fn repair(messages: &mut Vec<Arc<Message>>) {
    let mut i = 0;
    while i < messages.len() {
        if messages[i].role == Role::Assistant {
            let asked: Vec<String> = messages[i]
                .tool_uses()
                .map(|(id, _, _)| id.to_string())
                .collect();
            if !asked.is_empty() {
                let answered: HashSet<String> = messages
                    .get(i + 1)
                    .filter(|m| m.role == Role::User)
                    .map(|m| {
                        m.content
                            .iter()
                            .filter_map(|b| match b {
                                Block::ToolResult { tool_use_id, .. } => Some(tool_use_id.clone()),
                                Block::Text { .. }
                                | Block::Image { .. }
                                | Block::ToolUse { .. }
                                | Block::Resource { .. } => None,
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                let missing: Vec<Block> = asked
                    .iter()
                    .filter(|id| !answered.contains(*id))
                    .map(|id| Block::ToolResult {
                        tool_use_id: id.clone(),
                        content: vec![ResultPart::Text {
                            text:
                                "harness9 stopped before this tool call finished; it has no result."
                                    .into(),
                        }],
                        is_error: true,
                    })
                    .collect();
                if !missing.is_empty() {
                    if answered.is_empty()
                        && messages.get(i + 1).map(|m| m.role) != Some(Role::User)
                    {
                        messages.insert(
                            i + 1,
                            Arc::new(Message {
                                role: Role::User,
                                content: missing,
                                cut_off: false,
                            }),
                        );
                    } else {
                        let next = Arc::make_mut(&mut messages[i + 1]);
                        let mut content = missing;
                        content.append(&mut next.content);
                        next.content = content;
                    }
                }
            }
        }
        i += 1;
    }
}

/// One conversation file, open for appending.
#[derive(Debug)]
pub struct ConversationFile {
    id: String,
    path: PathBuf,
    writer: AppendWriter,
}

impl ConversationFile {
    /// Opens the file on its writer thread: nothing here waits on the disk, and a file that
    /// cannot be opened is reported by the next append or [`ConversationFile::flush`].
    fn open(path: PathBuf, id: String) -> Result<ConversationFile, StoreError> {
        let writer = AppendWriter::open(path.clone(), &id).map_err(|source| StoreError::Io {
            path: path.display().to_string(),
            source,
        })?;
        Ok(ConversationFile { id, path, writer })
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn append_message(&self, message: &Message) -> Result<(), StoreError> {
        self.append_record(&Record::Message {
            message: message.clone(),
        })
    }

    pub fn append_tools_loaded(&self, names: &[String]) -> Result<(), StoreError> {
        self.append_record(&Record::ToolsLoaded {
            names: names.to_vec(),
        })
    }

    /// Keeps the view of tool call `call_id` (MCP Apps) with the conversation.
    pub fn append_view(&self, call_id: &str, view: &CallView) -> Result<(), StoreError> {
        self.append_record(&Record::View {
            call_id: call_id.to_string(),
            view: Box::new(view.clone()),
        })
    }

    /// Notes that tool call `call_id` goes on running as task `task_id` of `server`.
    pub fn append_task(
        &self,
        call_id: &str,
        server: &str,
        task_id: &str,
    ) -> Result<(), StoreError> {
        self.append_record(&Record::Task {
            call_id: call_id.to_string(),
            server: server.to_string(),
            task_id: task_id.to_string(),
        })
    }

    /// Keeps a late result with the conversation.
    pub fn append_late_result(&self, late: &LateResult) -> Result<(), StoreError> {
        self.append_record(&Record::LateResult {
            late: Box::new(late.clone()),
        })
    }

    /// Waits until every record appended so far is on disk (blocking).
    pub fn flush(&self) -> Result<(), StoreError> {
        self.writer.flush().map_err(|source| self.io_error(source))
    }

    /// Queues one record; an error is that of an earlier write that failed.
    fn append_record(&self, record: &Record) -> Result<(), StoreError> {
        let mut line = serde_json::to_vec(record).expect("record serializes");
        line.push(b'\n');
        self.writer
            .append(line)
            .map_err(|source| self.io_error(source))
    }

    fn io_error(&self, source: std::io::Error) -> StoreError {
        StoreError::Io {
            path: self.path.display().to_string(),
            source,
        }
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::fs::OpenOptions;
    use std::io::Write;

    #[test]
    fn repair_answers_dangling_tool_calls() {
        let mut messages = vec![
            Arc::new(Message::user_text("hi")),
            Arc::new(Message {
                role: Role::Assistant,
                content: vec![Block::ToolUse {
                    id: "t1".into(),
                    name: "x".into(),
                    input: json!({}),
                }],
                cut_off: false,
            }),
        ];
        repair(&mut messages);
        assert_eq!(messages.len(), 3);
        assert!(matches!(
            &messages[2].content[0],
            Block::ToolResult { tool_use_id, is_error: true, .. } if tool_use_id == "t1"
        ));
    }

    #[test]
    fn a_torn_last_line_is_skipped() {
        let data = tempfile::tempdir().unwrap();
        let store = ConversationStore::new(data.path(), data.path());
        let file = store.create().unwrap();
        file.append_message(&Message::user_text("first")).unwrap();
        file.flush().unwrap();
        let mut raw = OpenOptions::new().append(true).open(file.path()).unwrap();
        raw.write_all(b"{\"type\":\"message\",\"mess").unwrap();
        let (again, loaded) = store.open(file.id()).unwrap();
        assert_eq!(loaded.messages.len(), 1);
        assert_eq!(loaded.messages[0].text(), "first");
        again.append_message(&Message::user_text("second")).unwrap();
        again.flush().unwrap();
        let (_, loaded) = store.open(file.id()).unwrap();
        let texts: Vec<String> = loaded.messages.iter().map(|m| m.text()).collect();
        assert_eq!(texts, ["first", "second"]);
    }
}
