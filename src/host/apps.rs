//! MCP Apps views: a tool's interactive HTML view, opened for one tool call, and
//! everything it may ask of the host. The core decides; a front end that can render
//! views (the desktop app) serves each document from the server's own origin, relays the
//! frame's messages here, and shows what comes back.
//!
//! - Opening ([`Apps::open`], `open`): the `ui://` resource is read from the server at
//!   that moment (never stored on disk), checked (MIME type, size), and given a policy
//!   built from its declarations only ([`csp`]); declared device permissions are granted
//!   only after the user agrees (an ask). Each view gets an unguessable id.
//! - Messages ([`Apps::request`], `serve`): typed ([`ViewRequest`]) and checked: the view
//!   is live; nothing but `ui/initialize` and `initialized` before `initialized`; tool
//!   calls and resource reads go to the view's own server only, tools only when visible
//!   to views (`_meta.ui.visibility`), under the same permission rules as the model's
//!   calls (asks shown as coming from the view); links through the link rules and the
//!   user; messages into the chat wait for the user; a flood is throttled ([`limits`]).
//!   Every request of a view is written to its server's log as coming from the view.
//! - Lifecycle (`lifecycle`): a view is torn down ([`ViewEvent::Teardown`]) when its
//!   conversation is left, its server is removed, stopped, restarted or fails, or the
//!   project closes. The service follows the manager's status; the manager knows nothing
//!   of it.
//!
//! Invariants: the service holds no reference to the manager (the façade passes what a
//! call needs, [`HostParts`]); no lock is held across an await or while an event is
//! sent; a view's document and policy never change after it opened.

pub mod csp;
mod error;
mod lifecycle;
pub mod limits;
mod open;
mod request;
mod serve;
mod types;

pub use error::ViewError;
pub use request::{DisplayMode, DownloadItem, ViewRequest};
pub use types::{
    DownloadFile, DownloadOffer, PendingMessage, TeardownReason, ViewCall, ViewDocument, ViewEvent,
    ViewOpened, ViewReply,
};

use parking_lot::Mutex;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Arc;
use std::time::Instant;

use tokio::sync::broadcast;

use crate::host::asks::Asks;
use crate::host::catalog::Catalog;
use crate::host::pins::Pins;
use crate::manager::{Manager, Run};
use crate::mcp::apps::ViewPermissions;
use crate::mcp::log::{LogSource, ServerLog};
use crate::tools::{ToolRegistry, ToolSpec};

/// Events kept for a slow front end before the oldest are dropped.
const EVENT_BUFFER: usize = 256;

/// Longest model context a view may set, in characters (the rest is cut).
pub const MAX_MODEL_CONTEXT_CHARS: usize = 16_000;

/// What front ends that cannot render views say under a tool result that has one.
pub const TERMINAL_VIEW_NOTE: &str = "interactive view in the desktop app";

/// The display modes this host offers views.
pub const HOST_DISPLAY_MODES: [DisplayMode; 2] = [DisplayMode::Inline, DisplayMode::Fullscreen];

/// The services a view's request may need, lent by the façade for one call.
#[derive(Clone, Copy)]
pub struct HostParts<'a> {
    pub project: &'a Path,
    pub manager: &'a Manager,
    pub registry: &'a ToolRegistry,
    pub catalog: &'a Catalog,
    pub asks: &'a Asks,
    pub pins: &'a Pins,
    /// The permission rules of the model's calls, applied to a view's calls.
    pub rules: &'a dyn ToolRules,
}

/// The model's tool permission rules as a view's tool calls meet them (the façade
/// implements it over the engine's rules; the service writes no rules of its own).
/// Both calls may read or write the user's data (blocking).
pub trait ToolRules: Send + Sync {
    /// Whether a call of `tool` runs, is asked about, or is denied (with the reason).
    fn verdict(&self, tool: &ToolSpec) -> RuleVerdict;
    /// Remembers "allow" for `tool` of `server` in this project (the user said
    /// "always").
    fn allow_always(&self, server: &str, tool: &str) -> Result<(), String>;
}

/// What the permission rules say of one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleVerdict {
    Allow,
    Ask,
    /// Denied, with the reason the view hears.
    Deny(String),
}

/// Where a view is in its handshake.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Opened; waiting for `ui/initialize`.
    Opened,
    /// `ui/initialize` answered; waiting for `initialized`.
    Initializing,
    /// Interactive.
    Live,
}

/// One live view.
struct View {
    opened: ViewOpened,
    document: ViewDocument,
    /// The server's run the view was opened under: when it is no longer connected, the
    /// view goes.
    run: Option<Run>,
    /// The server's log: every request of the view is written there.
    log: Option<Arc<ServerLog>>,
    granted: ViewPermissions,
    phase: Phase,
    display_modes: Vec<DisplayMode>,
    display_mode: DisplayMode,
    requests: limits::TokenBucket,
    resizes: limits::TokenBucket,
    last_notice: Option<Instant>,
}

impl View {
    /// Writes a line to the server's log, as coming from this view.
    fn note(&self, text: &str) {
        if let Some(log) = &self.log {
            log.push(
                LogSource::View,
                "info",
                &format!(
                    "view {} ({}): {text}",
                    short(&self.opened.view_id),
                    self.opened.tool
                ),
            );
        }
    }
}

/// The first characters of a view id, enough to tell views apart in a log.
fn short(view_id: &str) -> &str {
    view_id.get(..8).unwrap_or(view_id)
}

/// A download offer, kept until saved or discarded.
struct Download {
    view_id: String,
    files: Vec<(DownloadFile, Vec<u8>)>,
}

/// What a view gave the model for the next user message of a conversation.
#[derive(Debug, Clone)]
struct ModelContext {
    text: String,
}

#[derive(Default)]
struct State {
    views: HashMap<String, View>,
    pending: BTreeMap<u64, PendingMessage>,
    /// By conversation id (`""`: views of calls made by hand, for whichever conversation
    /// sends next).
    contexts: HashMap<String, ModelContext>,
    downloads: HashMap<String, Download>,
    /// The conversation the chat shows.
    conversation: Option<String>,
}

struct Inner {
    state: Mutex<State>,
    events: broadcast::Sender<ViewEvent>,
    next_pending: AtomicU64,
    /// The status follower runs (started with the first view).
    following: AtomicBool,
}

/// The views of one project (see the module docs). Cheap to clone.
#[derive(Clone)]
pub struct Apps {
    inner: Arc<Inner>,
}

impl Default for Apps {
    fn default() -> Self {
        Apps {
            inner: Arc::new(Inner {
                state: Mutex::default(),
                events: broadcast::channel(EVENT_BUFFER).0,
                next_pending: AtomicU64::new(1),
                following: AtomicBool::new(false),
            }),
        }
    }
}

impl Apps {
    /// Teardowns, pending messages, model-context updates, floods.
    pub fn subscribe(&self) -> broadcast::Receiver<ViewEvent> {
        self.inner.events.subscribe()
    }

    fn emit(&self, event: ViewEvent) {
        let _ = self.inner.events.send(event);
    }

    /// The document of a live view (`None`: no such view, or it was torn down).
    pub fn document(&self, view_id: &str) -> Option<ViewDocument> {
        self.inner
            .state
            .lock()
            .views
            .get(view_id)
            .map(|v| v.document.clone())
    }

    /// The live views, oldest first is not promised.
    pub fn live(&self) -> Vec<ViewOpened> {
        self.inner
            .state
            .lock()
            .views
            .values()
            .map(|v| v.opened.clone())
            .collect()
    }

    /// The messages views put in the chat, waiting for the user, oldest first.
    pub fn pending_messages(&self) -> Vec<PendingMessage> {
        self.inner.state.lock().pending.values().cloned().collect()
    }

    /// Takes a pending message out (to send it); `None` when there is none under `id`.
    pub fn take_pending(&self, id: u64) -> Option<PendingMessage> {
        let (taken, list) = {
            let mut st = self.inner.state.lock();
            let taken = st.pending.remove(&id);
            (taken, st.pending.values().cloned().collect())
        };
        if taken.is_some() {
            self.emit(ViewEvent::PendingMessages { messages: list });
        }
        taken
    }

    /// Puts a pending message back (it could not be sent), unless its view is gone.
    pub fn restore_pending(&self, message: PendingMessage) {
        let list = {
            let mut st = self.inner.state.lock();
            if !st.views.contains_key(&message.view_id) {
                return;
            }
            st.pending.insert(message.id, message);
            st.pending.values().cloned().collect()
        };
        self.emit(ViewEvent::PendingMessages { messages: list });
    }

    /// Takes what views gave the model for the next user message of `conversation`
    /// (and what views of calls made by hand gave): the text blocks to add to it, if any.
    pub fn take_model_context(&self, conversation: &str) -> Vec<String> {
        let mut st = self.inner.state.lock();
        let mut out = Vec::new();
        for key in [conversation, ""] {
            if let Some(c) = st.contexts.remove(key) {
                out.push(c.text);
            }
        }
        out
    }

    /// Tears view `view_id` down; `false` when it is not live.
    pub fn close(&self, view_id: &str, reason: TeardownReason) -> bool {
        self.teardown(|v| v.opened.view_id == view_id, reason) > 0
    }

    /// Tears down every view (the project closes).
    pub fn close_all(&self, reason: TeardownReason) {
        self.teardown(|_| true, reason);
    }

    /// The chat now shows conversation `id` (opened, resumed or started): the views of
    /// every other conversation are torn down, with their pending messages.
    pub fn conversation_shown(&self, id: &str) {
        let previous = self.inner.state.lock().conversation.replace(id.to_string());
        if previous.as_deref() == Some(id) {
            return;
        }
        self.conversation_left_except(Some(id));
    }

    /// The chat left conversation `id` (closed): its views are torn down.
    pub fn conversation_left(&self, id: &str) {
        {
            let mut st = self.inner.state.lock();
            if st.conversation.as_deref() == Some(id) {
                st.conversation = None;
            }
        }
        self.teardown(
            |v| v.opened.call.conversation_id.as_deref() == Some(id),
            TeardownReason::ConversationLeft,
        );
    }

    fn conversation_left_except(&self, keep: Option<&str>) {
        self.teardown(
            |v| {
                v.opened
                    .call
                    .conversation_id
                    .as_deref()
                    .is_some_and(|c| Some(c) != keep)
            },
            TeardownReason::ConversationLeft,
        );
    }

    /// Removes the views `which` picks, with their pending messages and downloads, and
    /// tells the front ends. Returns how many went.
    fn teardown(&self, which: impl Fn(&View) -> bool, reason: TeardownReason) -> usize {
        let (gone, pending_changed, list) = {
            let mut st = self.inner.state.lock();
            let ids: Vec<String> = st
                .views
                .iter()
                .filter(|(_, v)| which(v))
                .map(|(id, _)| id.clone())
                .collect();
            let gone: Vec<View> = ids.iter().filter_map(|id| st.views.remove(id)).collect();
            let before = st.pending.len();
            st.pending.retain(|_, p| !ids.contains(&p.view_id));
            st.downloads.retain(|_, d| !ids.contains(&d.view_id));
            let changed = st.pending.len() != before;
            (gone, changed, st.pending.values().cloned().collect())
        };
        for view in &gone {
            view.note(&format!("closed: {}", reason.message()));
            self.emit(ViewEvent::Teardown {
                view_id: view.opened.view_id.clone(),
                reason,
                message: reason.message().to_string(),
            });
        }
        if pending_changed {
            self.emit(ViewEvent::PendingMessages { messages: list });
        }
        gone.len()
    }
}

#[cfg(test)]
mod tests;
