//! The agent engine: the loop that lets a model use the tools of the [`ToolRegistry`].
//! MCP tools and built-in tools take the same path; the engine never knows which is which,
//! except that MCP tools may be deferred behind tool search.
//!
//! # Driving it (CLI, TUI, desktop)
//!
//! ```text
//! let engine = harness.engine(EngineOptions::default())?;   // NotConfigured → show the text
//! let mut turn = engine.send("fix the build")?;             // one turn at a time
//! let control = turn.control();                             // Stop button, approval card
//! while let Some(event) = turn.next_event().await {
//!     match event {
//!         Event::TextDelta { text } => …,
//!         Event::ApprovalRequest { call_id, .. } => control.approve(&call_id, Decision::AllowOnce),
//!         Event::TurnEnd { outcome, .. } => …,              // always the last event
//!         …
//!     }
//! }
//! ```
//!
//! - [`Engine::send`] spawns the turn on the current tokio runtime and returns a
//!   [`TurnHandle`]: an unbounded event receiver (the loop never waits for a slow front end)
//!   and a cloneable [`TurnControl`] with `stop()` and `approve(call_id, decision)`.
//! - Events ([`Event`], serializable, `{"type": "text_delta", …}`): `turn_start`,
//!   `model_request`, `retry`, `text_delta`, `tool_call_start` (id, name, arguments),
//!   `approval_request`, `tool_call_progress`, `tool_call_end` (status, duration, error,
//!   output), `notice`, and `turn_end` (outcome: completed with the answer, cut off at the
//!   output token limit with the answer so far, stopped, or failed with the error;
//!   round-trips, duration, token usage), always last.
//! - [`Engine::messages`] is the history to render when a conversation is reopened.
//!
//! # The turn loop ([`turn`])
//!
//! Each round-trip sends the conversation and the tool definitions, streams the answer,
//! and runs all tool calls of the answer concurrently, each under its timeout (the
//! server's `toolTimeoutSec`, or [`EngineOptions::tool_timeout`]). A failure, timeout or
//! denial becomes an error result the model sees. Stopping cancels in-flight calls
//! (dropping an MCP call sends `notifications/cancelled`), answers them with "cancelled"
//! results and keeps the conversation valid. At most `max_round_trips` model requests run
//! per user message.
//!
//! An MCP tool call that runs as a task waits for it up to the task wait
//! ([`EngineOptions::task_wait`]); a task still running then gives the model a result
//! saying so (the façade's tasks service follows it on), and its result comes back later as
//! a [`late`] result, added to the conversation and given to the model with the next user
//! message.
//!
//! Conversations are saved per project ([`store`]), tool permissions are checked per call
//! ([`permissions`]), large tool sets are deferred behind tool search ([`toolset`],
//! [`search`]) and long outputs are cut and paged ([`spill`]); outputs older than a
//! configurable age are removed in the background when an engine starts
//! ([`spill_cleanup`]). No file is written on a runtime thread: conversations go through
//! their own writer threads, outputs through tokio's blocking pool.

pub mod approvals;
pub mod builtin;
pub mod event;
pub mod history;
pub mod late;
pub mod message;
pub mod partial_json;
pub mod permissions;
pub mod prompt;
pub mod provider;
pub mod resources;
pub mod sampling;
pub mod search;
pub mod spill;
pub mod spill_cleanup;
pub mod store;
pub mod toolset;
mod turn;
mod writer;

use parking_lot::Mutex;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot, watch};

pub use event::{CallStatus, CallView, Event, ToolView, TurnOutcome, CUT_OFF_NOTICE};
pub use late::LateResult;
pub use message::{Block, Message, ResultPart, Role, ToolDefinition};
pub use permissions::{Decision, PermissionOptions, ToolPermission};
pub use provider::{
    ChatRequest, LlmClient, ProviderError, ProviderInfo, ProviderOverrides, ProviderSettings,
    RequestOptions, SettingsError, StreamEvent, ToolChoice, Usage,
};
pub use store::{ConversationSummary, StoreError};

use crate::tools::tasks::{TaskHost, TaskSettings};
use crate::tools::ToolRegistry;
use permissions::{PermissionStore, Permissions};
use resources::{ResourceAccess, ResourceRef};
use spill::Spill;
use store::{ConversationFile, ConversationStore};
use toolset::ToolSets;

/// Most model requests one user message may cause.
pub const DEFAULT_MAX_ROUND_TRIPS: usize = 25;

/// Shortest time between two [`Event::ToolInputPartial`] of one call (the first goes out
/// at once): views see the input grow without a message per streamed fragment.
pub const PARTIAL_INPUT_EVERY: Duration = Duration::from_millis(50);

/// Arguments longer than this (in bytes, as the model writes them) get no more
/// [`Event::ToolInputPartial`]: each one carries the whole input so far.
pub const MAX_PARTIAL_INPUT_BYTES: usize = 256 * 1024;

/// Which conversation an engine continues.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConversationChoice {
    /// A new saved conversation.
    New,
    /// The project's newest saved conversation, or a new one when there is none.
    Latest,
    /// A saved conversation by id.
    Resume(String),
    /// Not saved at all.
    InMemory,
}

pub struct EngineOptions {
    /// The model client; `None` resolves one from `provider_overrides`, the environment and
    /// the settings file.
    pub provider: Option<Arc<dyn LlmClient>>,
    pub provider_overrides: ProviderOverrides,
    /// `None`: [`default_system_prompt`].
    pub system_prompt: Option<String>,
    pub max_round_trips: usize,
    /// Overrides every tool's own timeout (MCP tools otherwise use their server's).
    pub tool_timeout: Option<Duration>,
    pub permissions: PermissionOptions,
    /// Where conversations, outputs and remembered permissions live.
    pub data_dir: PathBuf,
    pub conversation: ConversationChoice,
    pub spill_limit_chars: usize,
    pub defer_over_tools: usize,
    /// `None`: the provider settings' value, or the default.
    pub context_window: Option<u32>,
    /// The servers' resources, for attachments and the resource tools (the façade's
    /// [`crate::Harness::engine`] fills it in); `None`: neither is available.
    pub resources: Option<Arc<dyn ResourceAccess>>,
    /// Who follows the tasks tool calls start (the façade fills it in); `None`: a call
    /// follows its task to the end itself.
    pub tasks: Option<Arc<dyn TaskHost>>,
    /// How long a call waits for its task before the turn goes on without it; `None`:
    /// the settings file's `tasks.waitSec`, or
    /// [`DEFAULT_TASK_WAIT`](crate::tools::tasks::DEFAULT_TASK_WAIT).
    pub task_wait: Option<Duration>,
    /// Whether legacy `optional` tools run as tasks; `None`: the settings file's
    /// `tasks.optionalAsTask`, or on.
    pub optional_as_task: Option<bool>,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            provider: None,
            provider_overrides: ProviderOverrides::default(),
            system_prompt: None,
            max_round_trips: DEFAULT_MAX_ROUND_TRIPS,
            tool_timeout: None,
            permissions: PermissionOptions::default(),
            data_dir: crate::trust::data_dir(),
            conversation: ConversationChoice::New,
            spill_limit_chars: spill::DEFAULT_SPILL_LIMIT_CHARS,
            defer_over_tools: toolset::DEFAULT_DEFER_OVER_TOOLS,
            context_window: None,
            resources: None,
            tasks: None,
            task_wait: None,
            optional_as_task: None,
        }
    }
}

/// Why an engine could not start or take a message.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Settings(#[from] SettingsError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("a turn is already running; stop it or wait for it to end")]
    Busy,
    #[error(
        "the prompt has no messages, so nothing was sent; pick another prompt or type a message"
    )]
    EmptyPrompt,
}

impl EngineError {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        match self {
            EngineError::Settings(e) => e.code(),
            EngineError::Store(e) => e.code(),
            EngineError::Busy => "busy",
            EngineError::EmptyPrompt => "empty-prompt",
        }
    }
}

pub fn default_system_prompt(project: &Path) -> String {
    format!(
        "You are harness9, an agent working in the user's project folder {}. Use the available tools when they help. When a tool call fails, read the error: fix the arguments and try again, or explain what went wrong. Answer concisely.",
        project.display()
    )
}

/// The conversation and what the loop tracks about it.
struct ConvState {
    messages: Vec<Arc<Message>>,
    /// Tools that tool search loaded (deferred mode).
    loaded: BTreeSet<String>,
    /// Tool names the model has called.
    used: BTreeSet<String>,
    /// Disappeared tools the model was already told about.
    announced_missing: HashSet<String>,
    /// The views of tool calls, by call id (MCP Apps).
    views: HashMap<String, CallView>,
    /// Late results waiting for the next user message ([`late`]).
    late: Vec<LateResult>,
}

struct Inner {
    project: PathBuf,
    provider: Mutex<Arc<dyn LlmClient>>,
    /// The settings the provider was made from, and how they were picked; `None` when the
    /// engine was given a client. Read again when a turn starts.
    resolved: Option<(ProviderOverrides, Mutex<ProviderSettings>)>,
    system: Arc<str>,
    max_round_trips: usize,
    tool_timeout: Option<Duration>,
    permissions: Mutex<Permissions>,
    permission_store: PermissionStore,
    tools: ToolSets,
    spill: Spill,
    file: Option<ConversationFile>,
    conversation_id: String,
    state: Mutex<ConvState>,
    busy: AtomicBool,
    resources: Option<Arc<dyn ResourceAccess>>,
    tasks: Option<Arc<dyn TaskHost>>,
    task_wait: Duration,
    optional_as_task: bool,
    /// Where this conversation's store lives (a task's late result finds it there).
    data_dir: PathBuf,
    /// Keeps this conversation's spilled outputs from the clean-up while the engine lives.
    _open: spill_cleanup::OpenConversation,
}

/// One conversation with a model over the project's tools. Cheap to clone.
#[derive(Clone)]
pub struct Engine {
    inner: Arc<Inner>,
}

impl Engine {
    pub fn new(
        project: &Path,
        registry: Arc<ToolRegistry>,
        opts: EngineOptions,
    ) -> Result<Engine, EngineError> {
        let (provider, window, resolved) = match opts.provider {
            Some(p) => (p, provider::settings::DEFAULT_CONTEXT_WINDOW, None),
            None => {
                let s = ProviderSettings::resolve(&opts.provider_overrides)?;
                let window = s.context_window;
                let client = provider::connect(&s);
                (
                    client,
                    window,
                    Some((opts.provider_overrides, Mutex::new(s))),
                )
            }
        };
        let window = opts.context_window.unwrap_or(window);
        let store = ConversationStore::new(&opts.data_dir, project);
        let (file, loaded) = match &opts.conversation {
            ConversationChoice::InMemory => (None, store::Loaded::default()),
            ConversationChoice::New => (Some(store.create()?), store::Loaded::default()),
            ConversationChoice::Resume(id) => {
                let (f, l) = store.open(id)?;
                (Some(f), l)
            }
            ConversationChoice::Latest => match store.latest() {
                Some(id) => {
                    let (f, l) = store.open(&id)?;
                    (Some(f), l)
                }
                None => (Some(store.create()?), store::Loaded::default()),
            },
        };
        let conversation_id = file
            .as_ref()
            .map_or_else(|| "in-memory".to_string(), |f| f.id().to_string());
        let used = loaded
            .messages
            .iter()
            .flat_map(|m| m.tool_uses().map(|(_, n, _)| n.to_string()))
            .collect();
        let permission_store = PermissionStore::in_dir(&opts.data_dir);
        let remembered = permission_store.rules(project);
        let spill_dir = opts
            .data_dir
            .join(spill::OUTPUTS_DIR)
            .join(&conversation_id);
        // Registered first, so the clean-up never takes this conversation's outputs.
        let open = spill_cleanup::OpenConversation::new(&conversation_id);
        spill_cleanup::start(opts.data_dir.clone());
        let task_settings = match (opts.task_wait, opts.optional_as_task, &opts.tasks) {
            (Some(_), Some(_), _) | (_, _, None) => TaskSettings::default(),
            _ => provider::settings::load_section::<TaskSettings>("tasks")
                .ok()
                .flatten()
                .unwrap_or_default(),
        };
        let task_wait = opts.task_wait.unwrap_or_else(|| task_settings.wait());
        let optional_as_task = opts
            .optional_as_task
            .unwrap_or_else(|| task_settings.optional_as_task());
        Ok(Engine {
            inner: Arc::new(Inner {
                project: project.to_path_buf(),
                provider: Mutex::new(provider),
                resolved,
                system: opts
                    .system_prompt
                    .unwrap_or_else(|| default_system_prompt(project))
                    .into(),
                max_round_trips: opts.max_round_trips.max(1),
                tool_timeout: opts.tool_timeout,
                permissions: Mutex::new(Permissions::new(opts.permissions, remembered)),
                permission_store,
                tools: ToolSets::new(registry, opts.defer_over_tools, window),
                spill: Spill::new(spill_dir, opts.spill_limit_chars),
                file,
                conversation_id,
                state: Mutex::new(ConvState {
                    messages: loaded.messages,
                    loaded: loaded.tools_loaded.into_iter().collect(),
                    used,
                    announced_missing: HashSet::new(),
                    views: loaded.views,
                    late: loaded.late,
                }),
                busy: AtomicBool::new(false),
                resources: opts.resources,
                tasks: opts.tasks,
                task_wait,
                optional_as_task,
                data_dir: opts.data_dir,
                _open: open,
            }),
        })
    }

    /// The provider in use (the settings are read again when a turn starts).
    pub fn provider(&self) -> ProviderInfo {
        self.inner.client().info().clone()
    }

    pub fn conversation_id(&self) -> &str {
        &self.inner.conversation_id
    }

    /// The conversation so far.
    pub fn messages(&self) -> Vec<Arc<Message>> {
        self.inner.state.lock().messages.clone()
    }

    /// The views of the conversation's tool calls (MCP Apps), by call id.
    pub fn views(&self) -> HashMap<String, CallView> {
        self.inner.state.lock().views.clone()
    }

    /// Late results waiting for the next user message ([`late`]).
    pub fn late_results(&self) -> Vec<LateResult> {
        self.inner.state.lock().late.clone()
    }

    /// Adds the late result of one of this conversation's tool calls (its task ended):
    /// kept with the conversation, it goes to the model with the next user message. A
    /// view the result completes (MCP Apps) is kept too.
    pub fn add_late_result(
        &self,
        late: LateResult,
        view: Option<CallView>,
    ) -> Result<(), StoreError> {
        if let Some(file) = &self.inner.file {
            if let Some(view) = &view {
                file.append_view(&late.call_id, view)?;
            }
            file.append_late_result(&late)?;
        }
        let mut st = self.inner.state.lock();
        if let Some(view) = view {
            st.views.insert(late.call_id.clone(), view);
        }
        st.late.push(late);
        Ok(())
    }

    /// Where this engine keeps its conversations.
    pub fn data_dir(&self) -> &Path {
        &self.inner.data_dir
    }

    /// Whether a turn is running.
    pub fn is_busy(&self) -> bool {
        self.inner.busy.load(Ordering::Acquire)
    }

    /// Starts a turn for one user message on the current tokio runtime.
    pub fn send(&self, prompt: impl Into<String>) -> Result<TurnHandle, EngineError> {
        self.send_with(prompt, Vec::new())
    }

    /// Starts a turn for one user message with resources attached: they are read when the
    /// turn starts and go to the model with the message (bounded; see [`resources`]).
    pub fn send_with(
        &self,
        prompt: impl Into<String>,
        attachments: Vec<ResourceRef>,
    ) -> Result<TurnHandle, EngineError> {
        self.start(vec![Message::user_text(prompt)], attachments)
    }

    /// [`Engine::send_with`] with `context` after the prompt: text the model reads with
    /// the message (what MCP Apps views gave it), shown as notes when the conversation is
    /// reopened.
    pub fn send_with_context(
        &self,
        prompt: impl Into<String>,
        context: Vec<String>,
        attachments: Vec<ResourceRef>,
    ) -> Result<TurnHandle, EngineError> {
        let mut message = Message::user_text(prompt);
        message
            .content
            .extend(context.into_iter().map(|text| Block::Text { text }));
        self.start(vec![message], attachments)
    }

    /// Starts a turn whose opening is these messages (a server prompt's, see
    /// [`prompt::prompt_messages`]): they join the conversation in order, then the model
    /// answers. The opening may hold assistant messages; it must not be empty.
    pub fn send_messages(&self, opening: Vec<Message>) -> Result<TurnHandle, EngineError> {
        self.start(opening, Vec::new())
    }

    /// Starts a turn: the opening messages, with the attachments (if any) read and added
    /// to its last user message.
    fn start(
        &self,
        opening: Vec<Message>,
        attachments: Vec<ResourceRef>,
    ) -> Result<TurnHandle, EngineError> {
        if opening.is_empty() {
            return Err(EngineError::EmptyPrompt);
        }
        if self
            .inner
            .busy
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return Err(EngineError::Busy);
        }
        let (tx, rx) = mpsc::unbounded_channel();
        let control = TurnControl::new();
        let inner = self.inner.clone();
        let c = control.clone();
        let idle = BusyGuard(inner.clone());
        let task = tokio::spawn(turn::run(inner, opening, attachments, tx, c, idle));
        Ok(TurnHandle {
            events: rx,
            control,
            task,
        })
    }

    /// Saved conversations of this engine's project, newest first. Reads every file: async
    /// code calls [`Engine::list_conversations`].
    pub fn conversations(data_dir: &Path, project: &Path) -> Vec<ConversationSummary> {
        ConversationStore::new(data_dir, project).list()
    }

    /// [`Engine::conversations`] on tokio's blocking pool, so no runtime thread waits on the
    /// disk.
    pub async fn list_conversations(data_dir: &Path, project: &Path) -> Vec<ConversationSummary> {
        let store = ConversationStore::new(data_dir, project);
        tokio::task::spawn_blocking(move || store.list())
            .await
            .unwrap_or_default()
    }

    /// [`Engine::new`] on tokio's blocking pool: reading a conversation back (and the
    /// provider settings, and a key from the keychain) never holds up a runtime thread.
    pub async fn open(
        project: &Path,
        registry: Arc<ToolRegistry>,
        opts: EngineOptions,
    ) -> Result<Engine, EngineError> {
        let project = project.to_path_buf();
        tokio::task::spawn_blocking(move || Engine::new(&project, registry, opts))
            .await
            .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()))
    }
}

impl Inner {
    fn client(&self) -> Arc<dyn LlmClient> {
        self.provider.lock().clone()
    }

    /// Reads the provider settings and the remembered permissions again (off the runtime),
    /// so what a settings pane changed applies from this turn on. Says why the provider
    /// settings could not be used (the previous ones stay).
    async fn refresh(self: &Arc<Inner>) -> Result<(), String> {
        let inner = self.clone();
        let joined = tokio::task::spawn_blocking(move || {
            let rules = inner.permission_store.rules(&inner.project);
            inner.permissions.lock().set_remembered(rules);
            let Some((overrides, current)) = &inner.resolved else {
                return Ok(());
            };
            let fresh = ProviderSettings::resolve(overrides).map_err(|e| e.to_string())?;
            let mut current = current.lock();
            if *current != fresh {
                *inner.provider.lock() = provider::connect(&fresh);
                *current = fresh;
            }
            Ok(())
        })
        .await;
        joined.unwrap_or_else(|e| Err(e.to_string()))
    }
}

struct BusyGuard(Arc<Inner>);

impl Drop for BusyGuard {
    fn drop(&mut self) {
        self.0.busy.store(false, Ordering::Release);
    }
}

/// Stops a turn and answers its approval requests. Cheap to clone.
#[derive(Clone)]
pub struct TurnControl {
    inner: Arc<ControlInner>,
}

struct ControlInner {
    stop: watch::Sender<bool>,
    approvals: Mutex<HashMap<String, oneshot::Sender<Decision>>>,
}

impl TurnControl {
    fn new() -> TurnControl {
        TurnControl {
            inner: Arc::new(ControlInner {
                stop: watch::channel(false).0,
                approvals: Mutex::default(),
            }),
        }
    }

    /// Stops the turn: in-flight tool calls are cancelled, the turn ends `stopped`.
    pub fn stop(&self) {
        self.inner.stop.send_replace(true);
    }

    pub fn is_stopped(&self) -> bool {
        *self.inner.stop.borrow()
    }

    /// Answers the approval request of one call; false when none is waiting.
    pub fn approve(&self, call_id: &str, decision: Decision) -> bool {
        let waiting = self.inner.approvals.lock().remove(call_id);
        match waiting {
            Some(tx) => tx.send(decision).is_ok(),
            None => false,
        }
    }

    fn wait_for_approval(&self, call_id: &str) -> oneshot::Receiver<Decision> {
        let (tx, rx) = oneshot::channel();
        self.inner.approvals.lock().insert(call_id.to_string(), tx);
        rx
    }

    /// Resolves once [`TurnControl::stop`] was called.
    async fn stopped(&self) {
        let mut rx = self.inner.stop.subscribe();
        let _ = rx.wait_for(|s| *s).await;
    }
}

/// A running turn: its events and its controls. Dropping the handle does not stop the
/// turn (call [`TurnControl::stop`]); approval requests nobody can see are denied.
pub struct TurnHandle {
    events: mpsc::UnboundedReceiver<Event>,
    control: TurnControl,
    task: tokio::task::JoinHandle<()>,
}

impl TurnHandle {
    pub fn control(&self) -> TurnControl {
        self.control.clone()
    }

    /// The next event; `None` after `TurnEnd`.
    pub async fn next_event(&mut self) -> Option<Event> {
        self.events.recv().await
    }

    /// Splits the handle for a front end that forwards events elsewhere.
    pub fn into_parts(self) -> (mpsc::UnboundedReceiver<Event>, TurnControl) {
        (self.events, self.control)
    }

    /// Waits for the end of the turn, collecting every event (the last is `TurnEnd`).
    pub async fn collect(mut self) -> Vec<Event> {
        let mut out = Vec::new();
        while let Some(e) = self.events.recv().await {
            out.push(e);
        }
        let _ = (&mut self.task).await;
        out
    }
}
