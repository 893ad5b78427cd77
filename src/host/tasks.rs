//! MCP tasks of one project: the table of the tasks harness9 started (server, tool,
//! arguments, task id, era, creation, time to live, last status and message, and the
//! model's tool call that started it), one follower per running task, and what front ends
//! are told ([`TaskEvent`]).
//!
//! - A task enters the table when a tool call starts it ([`Tasks::adopt`] for the
//!   model's calls through [`TaskHost`], [`Tasks::start`] for the CLI) or when the table is
//!   taken up again after a restart ([`Tasks::resume`]).
//! - Its follower ([`follow`]) polls it through the server's current client until it ends,
//!   also across a reconnection of an HTTP server. A stdio server's tasks end with its
//!   process: they are marked [`TaskState::Lost`] when it goes (and on quit).
//! - The table is kept on disk ([`store`]) when a task starts, ends or is asked to cancel,
//!   so a restarted harness9 follows its HTTP servers' tasks again; a task's late result
//!   goes to its conversation exactly once ([`LateResults`], claimed in the store).
//!
//! Invariants: the service knows the manager (for clients and statuses), the manager
//! knows nothing of it; no lock is held across an await or while an event is sent; a
//! flood of statuses costs one entry per task; ended tasks kept in memory are bounded
//! ([`store::MAX_ENDED_KEPT`]).

mod follow;
pub mod record;
pub mod store;

pub use record::{TaskEnd, TaskEvent, TaskKey, TaskRecord, TaskState};
pub use store::TaskStore;

use parking_lot::Mutex;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures::future::BoxFuture;
use futures::FutureExt;
use tokio::sync::{broadcast, watch};
use tokio::task::AbortHandle;

use crate::config::TransportConfig;
use crate::manager::{Manager, Unavailable};
use crate::mcp::client::{TaskError, POLL_TIMEOUT};
use crate::mcp::tasks::{Task, TaskStatus};
use crate::mcp::{CallToolResult, Client};
use crate::tools::tasks::{StartedTask, TaskHost, TaskWait};

/// Events kept for a slow front end before it skips ahead.
const EVENT_BUFFER: usize = 1024;

/// Where ended tasks with an origin deliver their late results (the façade implements it
/// over the chat and the conversation store).
pub trait LateResults: Send + Sync {
    /// Task `record` ended with `end`; its origin says which conversation and call. Called
    /// once per task across processes (the claim is made before).
    fn deliver(&self, record: &TaskRecord, end: &TaskEnd);
}

/// Why a request about a task could not be done.
#[derive(Debug, thiserror::Error)]
pub enum TaskServiceError {
    #[error(transparent)]
    Server(#[from] Unavailable),
    #[error("there is no task {task_id} of server \"{server}\" in this project's task list{}", stdio_hint(*.local))]
    UnknownTask {
        server: String,
        task_id: String,
        local: bool,
    },
    #[error("task {task_id} has already ended ({})", state.word())]
    Ended { task_id: String, state: TaskState },
    #[error("server \"{server}\" does not take tasks/cancel (it did not declare tasks.cancel); the task runs until it ends")]
    CannotCancel { server: String },
    #[error(transparent)]
    Task(#[from] TaskError),
}

fn stdio_hint(local: bool) -> &'static str {
    if local {
        " (a stdio server's tasks live only as long as the harness9 that started it)"
    } else {
        ""
    }
}

impl TaskServiceError {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        match self {
            TaskServiceError::Server(e) => e.code(),
            TaskServiceError::UnknownTask { .. } => "unknown-task",
            TaskServiceError::Ended { .. } => "task-ended",
            TaskServiceError::CannotCancel { .. } => "cannot-cancel",
            TaskServiceError::Task(e) => e.code(),
        }
    }
}

/// What became of a cancel request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum CancelOutcome {
    /// The server says the task is cancelled (legacy era).
    Cancelled,
    /// The server took the request; the task ends when it stops (modern era).
    Requested,
}

/// One task in the table.
struct Entry {
    record: TaskRecord,
    /// Set once when it ends.
    end: watch::Sender<Option<Arc<TaskEnd>>>,
    follower: Option<AbortHandle>,
    /// [`Tasks::finish`] took it (it ends once).
    ending: bool,
    /// No call waits for it any more (its wait ran out, or it was taken up from the
    /// stored table): its end is a late result for its conversation. A task that ends while
    /// its call still waits gives the call its result, and no late one.
    detached: bool,
}

struct Inner {
    project: PathBuf,
    store: TaskStore,
    manager: Manager,
    table: Mutex<HashMap<TaskKey, Entry>>,
    events: broadcast::Sender<TaskEvent>,
    /// The stored table was read in.
    loaded: AtomicBool,
    /// Records waiting to be written, and whether a writer is at work ([`Tasks::persist`]).
    unwritten: Mutex<(Vec<TaskRecord>, bool)>,
    late: Mutex<Option<Arc<dyn LateResults>>>,
}

/// The tasks service of one project. Cheap to clone.
#[derive(Clone)]
pub struct Tasks {
    inner: Arc<Inner>,
}

pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

fn system_time(ms: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(ms)
}

impl Tasks {
    pub fn new(project: &Path, manager: Manager, store: TaskStore) -> Tasks {
        Tasks {
            inner: Arc::new(Inner {
                project: project.to_path_buf(),
                store,
                manager,
                table: Mutex::default(),
                events: broadcast::channel(EVENT_BUFFER).0,
                loaded: AtomicBool::new(false),
                unwritten: Mutex::default(),
                late: Mutex::new(None),
            }),
        }
    }

    /// Where late results go (set once by the façade).
    pub fn set_late_results(&self, late: Arc<dyn LateResults>) {
        *self.inner.late.lock() = Some(late);
    }

    /// Started, status and ended events of every task.
    pub fn subscribe(&self) -> broadcast::Receiver<TaskEvent> {
        self.inner.events.subscribe()
    }

    /// Every task in the table, newest first.
    pub fn list(&self) -> Vec<TaskRecord> {
        let mut out: Vec<TaskRecord> = self
            .inner
            .table
            .lock()
            .values()
            .map(|e| e.record.clone())
            .collect();
        out.sort_by(|a, b| {
            b.created_ms
                .cmp(&a.created_ms)
                .then_with(|| a.task_id.cmp(&b.task_id))
        });
        out
    }

    /// One task of the table.
    pub fn get(&self, key: &TaskKey) -> Option<TaskRecord> {
        self.inner.table.lock().get(key).map(|e| e.record.clone())
    }

    /// How a task ended, once it did (kept for the most recent ones).
    pub fn end_of(&self, key: &TaskKey) -> Option<Arc<TaskEnd>> {
        self.inner
            .table
            .lock()
            .get(key)
            .and_then(|e| e.end.borrow().clone())
    }

    /// Reads the stored table in (once; what this process holds wins). Tasks still
    /// running there are not followed until [`Tasks::resume`].
    pub async fn load(&self) {
        if self.inner.loaded.swap(true, Ordering::AcqRel) {
            return;
        }
        let (store, project) = (self.inner.store.clone(), self.inner.project.clone());
        let stored = tokio::task::spawn_blocking(move || store.load(&project))
            .await
            .unwrap_or_default();
        let mut table = self.inner.table.lock();
        for record in stored {
            table.entry(record.key()).or_insert_with(|| Entry {
                ending: record.state.is_ended(),
                detached: true,
                record,
                end: watch::channel(None).0,
                follower: None,
            });
        }
    }

    /// Takes up the stored tasks still running (after a restart, or for a front end that
    /// opened the project): an HTTP server's are followed again (their late results then
    /// reach their conversations); a stdio server's ended with the process that ran it,
    /// and are marked lost.
    pub async fn resume(&self) {
        self.load().await;
        let waiting: Vec<TaskRecord> = self
            .inner
            .table
            .lock()
            .values()
            .filter(|e| !e.record.state.is_ended() && e.follower.is_none())
            .map(|e| e.record.clone())
            .collect();
        for record in waiting {
            // Another harness9 that is still running follows its own stdio server's tasks.
            if record.local && record.owner_pid.is_some_and(other_process_alive) {
                continue;
            }
            if record.local {
                let error = TaskError::Client(crate::mcp::ClientError::Closed(format!(
                    "the stdio server \"{}\" was stopped with the harness9 that started the task; its tasks ended with its process",
                    record.server
                )));
                self.finish(&record.key(), ended(TaskState::Lost, None, Some(error)))
                    .await;
                continue;
            }
            let _ = self.inner.events.send(TaskEvent::Started {
                task: record.clone(),
            });
            self.spawn_follower(&record, None);
        }
    }

    /// Registers a task a call started and follows it; returns its record.
    pub fn start(&self, started: StartedTask) -> TaskRecord {
        let now = now_ms();
        let task = &started.created.task;
        let record = TaskRecord {
            server: started.server.clone(),
            tool: started.tool.clone(),
            arguments: started.arguments.clone(),
            task_id: task.task_id.clone(),
            era: started.client.era(),
            created_ms: now,
            ttl_ms: task.ttl_ms,
            state: TaskState::of_status(task.status),
            message: task.status_message.clone(),
            updated_ms: now,
            error: None,
            origin: started.origin.clone(),
            local: self.is_local(&started.server),
            owner_pid: Some(std::process::id()),
            can_cancel: started.client.server_tasks().cancel,
            delivered: false,
        };
        {
            let mut table = self.inner.table.lock();
            table.insert(
                record.key(),
                Entry {
                    record: record.clone(),
                    end: watch::channel(None).0,
                    follower: None,
                    ending: false,
                    detached: false,
                },
            );
        }
        self.persist(vec![record.clone()]);
        let _ = self.inner.events.send(TaskEvent::Started {
            task: record.clone(),
        });
        self.spawn_follower(&record, Some((started.client, task.clone())));
        record
    }

    /// The call that started a task stops waiting for it: its end becomes a late result.
    /// False when the task is already ending (the call then waits for that end).
    fn detach(&self, key: &TaskKey) -> bool {
        let mut table = self.inner.table.lock();
        match table.get_mut(key) {
            Some(e) if e.ending => false,
            Some(e) => {
                e.detached = true;
                true
            }
            None => true,
        }
    }

    /// Waits until the task ends (`None`: it is not in the table).
    pub async fn wait(&self, key: &TaskKey) -> Option<Arc<TaskEnd>> {
        let mut rx = self.inner.table.lock().get(key)?.end.subscribe();
        let end = rx.wait_for(Option::is_some).await.ok()?.clone();
        end
    }

    /// Asks the server for the task as it is now (and notes what it says when the task
    /// is in the table). Tasks not in the table are asked for all the same.
    pub async fn refresh(&self, key: &TaskKey) -> Result<Task, TaskServiceError> {
        let client = self.inner.manager.connected(&key.server)?;
        let snapshot = client.get_task(&key.task_id, Some(POLL_TIMEOUT)).await?;
        self.status(key, &snapshot.task);
        Ok(snapshot.task)
    }

    /// Cancels a running task. Legacy: ended once the server says `cancelled`. Modern:
    /// the server only acknowledges; the task shows "cancel requested" until it ends.
    /// A task not in the table is cancelled on the server all the same.
    pub async fn cancel(&self, key: &TaskKey) -> Result<CancelOutcome, TaskServiceError> {
        let record = self.get(key);
        if let Some(record) = &record {
            if record.state.is_ended() {
                return Err(TaskServiceError::Ended {
                    task_id: key.task_id.clone(),
                    state: record.state,
                });
            }
            if !record.can_cancel {
                return Err(TaskServiceError::CannotCancel {
                    server: key.server.clone(),
                });
            }
        }
        let client = self.inner.manager.connected(&key.server)?;
        if record.is_none() && !client.server_tasks().cancel {
            return Err(TaskServiceError::CannotCancel {
                server: key.server.clone(),
            });
        }
        match client.cancel_task(&key.task_id, Some(POLL_TIMEOUT)).await {
            Ok(Some(task)) if task.status.is_terminal() => {
                let state = TaskState::of_status(task.status);
                let error = (task.status == TaskStatus::Cancelled).then(|| TaskError::Cancelled {
                    task_id: key.task_id.clone(),
                });
                self.finish(key, ended(state, None, error)).await;
                Ok(CancelOutcome::Cancelled)
            }
            Ok(_) => {
                self.update(key, |r| {
                    r.state = TaskState::CancelRequested;
                });
                if let Some(r) = self.get(key) {
                    self.persist(vec![r]);
                }
                Ok(CancelOutcome::Requested)
            }
            Err(e @ TaskError::Unknown { .. }) => {
                self.finish(key, ended(TaskState::Lost, None, Some(e.clone())))
                    .await;
                Err(e.into())
            }
            Err(e) => Err(e.into()),
        }
    }

    /// The task's result: at once when it ended here; else from the server, which may
    /// wait until it ends (legacy `tasks/result`) or say it is not finished (modern).
    pub async fn result(&self, key: &TaskKey) -> Result<CallToolResult, TaskServiceError> {
        if let Some(end) = self.end_of(key) {
            return end_result(key, &end).map_err(Into::into);
        }
        let client = self.inner.manager.connected(&key.server)?;
        Ok(client.task_result(&key.task_id, None).await?)
    }

    /// Stops following (the project closes): a stdio server's running tasks are marked
    /// lost (they end with its process), an HTTP server's stay as they are for the next
    /// start.
    pub async fn shutdown(&self) {
        // Only the tasks this process follows: another harness9's stay as they are.
        let local: Vec<TaskKey> = {
            let mut table = self.inner.table.lock();
            let mut local = Vec::new();
            for e in table.values_mut() {
                if let Some(f) = e.follower.take() {
                    f.abort();
                    if e.record.local && !e.record.state.is_ended() {
                        local.push(e.record.key());
                    }
                }
            }
            local
        };
        for key in local {
            let error = TaskError::Client(crate::mcp::ClientError::Closed(format!(
                "harness9 quit and stopped the stdio server \"{}\"; its tasks ended with its process",
                key.server
            )));
            self.finish(&key, ended(TaskState::Lost, None, Some(error)))
                .await;
        }
    }

    /// One task of the table, or why there is none.
    pub fn record(&self, key: &TaskKey) -> Result<TaskRecord, TaskServiceError> {
        self.get(key).ok_or_else(|| TaskServiceError::UnknownTask {
            server: key.server.clone(),
            task_id: key.task_id.clone(),
            local: self.is_local(&key.server),
        })
    }

    /// Whether the server runs over stdio (its tasks end with its process).
    pub fn is_local(&self, server: &str) -> bool {
        matches!(
            self.inner.manager.entry(server),
            Some(Ok(c)) if matches!(c.transport, TransportConfig::Stdio { .. })
        )
    }

    fn spawn_follower(&self, record: &TaskRecord, first: Option<(Arc<Client>, Task)>) {
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let task = rt.spawn(follow::follow(self.clone(), record.clone(), first));
        if let Some(e) = self.inner.table.lock().get_mut(&record.key()) {
            e.follower = Some(task.abort_handle());
        }
    }

    fn update(&self, key: &TaskKey, change: impl FnOnce(&mut TaskRecord)) {
        let event = {
            let mut table = self.inner.table.lock();
            let Some(e) = table.get_mut(key) else {
                return;
            };
            let before = (e.record.state, e.record.message.clone());
            change(&mut e.record);
            if (e.record.state, e.record.message.clone()) == before {
                return;
            }
            e.record.updated_ms = now_ms();
            TaskEvent::Status {
                server: key.server.clone(),
                task_id: key.task_id.clone(),
                state: e.record.state,
                message: e.record.message.clone(),
            }
        };
        let _ = self.inner.events.send(event);
    }

    /// The server said how the task is (not an end: [`Tasks::finish`] does that).
    fn status(&self, key: &TaskKey, task: &Task) {
        self.update(key, |r| {
            if r.state.is_ended() || task.status.is_terminal() {
                return;
            }
            // A cancel request shows until the task ends.
            if r.state != TaskState::CancelRequested {
                r.state = TaskState::of_status(task.status);
            }
            r.message = task.status_message.clone();
            if task.ttl_ms.is_some() {
                r.ttl_ms = task.ttl_ms;
            }
        });
    }

    /// The task ended: recorded (once), kept on disk, told, and its late result
    /// delivered.
    async fn finish(&self, key: &TaskKey, end: TaskEnd) {
        let end = Arc::new(end);
        let (record, detached) = {
            let mut table = self.inner.table.lock();
            let Some(e) = table.get_mut(key) else {
                return;
            };
            if e.ending {
                return;
            }
            e.ending = true;
            e.record.state = end.state;
            e.record.error = end.error.as_ref().map(ToString::to_string);
            e.record.updated_ms = now_ms();
            e.follower = None;
            (e.record.clone(), e.detached)
        };
        let (store, project) = (self.inner.store.clone(), self.inner.project.clone());
        let claim = (record.origin.is_some() && detached).then(|| record.key());
        let put = record.clone();
        let claimed = tokio::task::spawn_blocking(move || {
            if let Err(e) = store.put(&project, vec![put]) {
                tracing::warn!("could not keep the task table: {e}");
            }
            claim.is_some_and(|k| store.claim_delivery(&project, &k).unwrap_or(false))
        })
        .await
        .unwrap_or(false);
        let _ = self.inner.events.send(TaskEvent::Ended {
            task: record.clone(),
            result: end.result.clone(),
        });
        if claimed {
            let late = self.inner.late.lock().clone();
            if let Some(late) = late {
                late.deliver(&record, &end);
            }
        }
        // Who waits hears of the end once it is kept, told and delivered.
        let mut table = self.inner.table.lock();
        if let Some(e) = table.get_mut(key) {
            e.end.send_replace(Some(end));
        }
        forget_oldest(&mut table);
    }

    /// Writes records to the store in the background: one writer at a time takes every
    /// record queued meanwhile in one write (a burst of new tasks costs a few writes and
    /// one thread, not one each).
    fn persist(&self, records: Vec<TaskRecord>) {
        {
            let mut queue = self.inner.unwritten.lock();
            queue.0.extend(records);
            if queue.1 {
                return;
            }
            queue.1 = true;
        }
        let inner = self.inner.clone();
        let write = move || loop {
            let batch = {
                let mut queue = inner.unwritten.lock();
                if queue.0.is_empty() {
                    queue.1 = false;
                    return;
                }
                std::mem::take(&mut queue.0)
            };
            if let Err(e) = inner.store.put(&inner.project, batch) {
                tracing::warn!("could not keep the task table: {e}");
            }
        };
        match tokio::runtime::Handle::try_current() {
            Ok(rt) => drop(rt.spawn_blocking(write)),
            Err(_) => write(),
        }
    }
}

/// Whether process `pid` is alive and not this one.
fn other_process_alive(pid: u32) -> bool {
    if pid == std::process::id() {
        return false;
    }
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 checks that the process exists; nothing is sent.
    let alive = unsafe { libc::kill(pid, 0) } == 0;
    alive || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Drops the oldest ended tasks from memory beyond what the store keeps.
fn forget_oldest(table: &mut HashMap<TaskKey, Entry>) {
    let mut ended: Vec<(u64, TaskKey)> = table
        .values()
        .filter(|e| e.record.state.is_ended())
        .map(|e| (e.record.updated_ms, e.record.key()))
        .collect();
    if ended.len() <= store::MAX_ENDED_KEPT {
        return;
    }
    ended.sort();
    let extra = ended.len() - store::MAX_ENDED_KEPT;
    for (_, key) in ended.into_iter().take(extra) {
        table.remove(&key);
    }
}

fn ended(state: TaskState, result: Option<CallToolResult>, error: Option<TaskError>) -> TaskEnd {
    TaskEnd {
        state,
        result,
        error,
    }
}

/// A task's end as a call's outcome.
fn end_result(key: &TaskKey, end: &TaskEnd) -> Result<CallToolResult, TaskError> {
    match (&end.result, &end.error) {
        (Some(r), _) => Ok(r.clone()),
        (None, Some(e)) => Err(e.clone()),
        (None, None) => Err(TaskError::Invalid {
            task_id: key.task_id.clone(),
            detail: format!("it ended {} without a result", end.state.word()),
        }),
    }
}

/// Cancels the task when the call that waits for it is dropped (the user stopped it).
struct CancelOnDrop {
    tasks: Tasks,
    key: TaskKey,
    armed: bool,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let (tasks, key) = (self.tasks.clone(), self.key.clone());
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move {
                let _ = tasks.cancel(&key).await;
            });
        }
    }
}

impl TaskHost for Tasks {
    fn adopt(&self, task: StartedTask, wait: Duration) -> BoxFuture<'static, TaskWait> {
        let record = self.start(task);
        let key = record.key();
        let tasks = self.clone();
        async move {
            let mut guard = CancelOnDrop {
                tasks: tasks.clone(),
                key: key.clone(),
                armed: true,
            };
            let outcome = tokio::time::timeout(wait, tasks.wait(&key)).await;
            guard.armed = false;
            match outcome {
                Ok(Some(end)) => TaskWait::Ended(end_result(&key, &end)),
                Ok(None) => TaskWait::Ended(Err(TaskError::Unknown {
                    task_id: key.task_id.clone(),
                    detail: "it left the task list".into(),
                })),
                Err(_) if !tasks.detach(&key) => {
                    // It is ending right now: the call gets its result.
                    match tasks.wait(&key).await {
                        Some(end) => TaskWait::Ended(end_result(&key, &end)),
                        None => TaskWait::Ended(Err(TaskError::Unknown {
                            task_id: key.task_id.clone(),
                            detail: "it left the task list".into(),
                        })),
                    }
                }
                Err(_) => {
                    let now = tasks.get(&key).unwrap_or(record);
                    TaskWait::Running {
                        task_id: key.task_id.clone(),
                        status: match now.state {
                            TaskState::InputRequired => TaskStatus::InputRequired,
                            _ => TaskStatus::Working,
                        },
                        message: now.message,
                    }
                }
            }
        }
        .boxed()
    }
}
