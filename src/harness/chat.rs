//! The chat of one open project, as both front ends drive it: the engine of the current
//! conversation, the running turn with every tool call waiting for the user, the choice of
//! conversation (list, reopen, new), and the forwarding of the turn's events to one sink.
//! The terminal UI and the desktop app keep no turn state of their own: they hand a sink
//! to [`Chat::send`], show what arrives, and answer through [`Chat::approve`].
//!
//! - Any number of approval requests can wait at once; they are answered in any order.
//!   Whatever nobody answered is denied when the turn stops, and a request that arrives
//!   after the sink went away (the window was closed or reloaded) is denied at once.
//! - Engines are made (and conversations read from disk) on tokio's blocking pool, never
//!   on a runtime thread.
//! - Dropping the session (closing the project) stops its turn.

use parking_lot::Mutex;
use std::sync::Arc;

use serde::Serialize;
use serde_json::{Map, Value};

use super::{Harness, PromptError};
use crate::engine::approvals::{PendingApproval, PendingApprovals};
use crate::engine::history::{history_with_views, ChatItem};
use crate::engine::resources::ResourceRef;
use crate::engine::{
    ConversationChoice, ConversationSummary, Decision, Engine, EngineError, EngineOptions, Event,
    Message, TurnControl, TurnHandle,
};

/// Where a turn's events go, in order (`turn_end` last). `false` means nobody can see
/// them any more: approval requests that follow are denied.
pub type EventSink = Box<dyn FnMut(Event) -> bool + Send>;

/// What a chat pane shows when it opens.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ChatState {
    /// `anthropic` or `openai`; `null` when no provider is configured.
    pub provider: Option<String>,
    pub model: Option<String>,
    /// Why the chat cannot run (what to set), when it cannot.
    pub error: Option<String>,
    /// A turn is running (the pane was reopened during one).
    pub busy: bool,
    pub conversation_id: Option<String>,
    pub history: Vec<ChatItem>,
    /// The running turn's tool calls waiting for the user, oldest first.
    pub pending: Vec<PendingApproval>,
}

/// The chat state of one project; [`Harness::chat`] drives it.
#[derive(Default)]
pub struct ChatSession {
    slot: Arc<Mutex<Slot>>,
    /// One engine is made at a time (two opens at once would make two conversations).
    making: tokio::sync::Mutex<()>,
}

#[derive(Default)]
struct Slot {
    engine: Option<Engine>,
    turn: Option<Turn>,
    turns: u64,
}

/// The chat's engine as the tasks service reaches it (to add a late result to the
/// conversation it has open).
#[derive(Clone)]
pub(super) struct OpenEngine(Arc<Mutex<Slot>>);

impl OpenEngine {
    /// The engine of conversation `id`, when it is the one open.
    pub(super) fn engine_of(&self, id: &str) -> Option<Engine> {
        lock(&self.0)
            .engine
            .as_ref()
            .filter(|e| e.conversation_id() == id)
            .cloned()
    }
}

impl ChatSession {
    pub(super) fn open_engine(&self) -> OpenEngine {
        OpenEngine(self.slot.clone())
    }
}

struct Turn {
    number: u64,
    control: TurnControl,
    pending: PendingApprovals,
}

impl Drop for ChatSession {
    fn drop(&mut self) {
        if let Some(t) = &lock(&self.slot).turn {
            t.control.stop();
        }
    }
}

fn lock(slot: &Mutex<Slot>) -> parking_lot::MutexGuard<'_, Slot> {
    // The slot holds plain data; a panic elsewhere leaves it usable.
    slot.lock()
}

/// The chat of a project (see the module docs). Cheap: a view over the façade.
pub struct Chat<'a> {
    harness: &'a Harness,
    session: &'a ChatSession,
}

impl Harness {
    /// The project's chat, shared by every front end of this process.
    pub fn chat(&self) -> Chat<'_> {
        Chat {
            harness: self,
            session: &self.chat,
        }
    }
}

impl Chat<'_> {
    /// The current conversation's engine, made with `choice` when there is none yet (or
    /// always when `replace`). Refuses to replace one while its turn runs.
    async fn engine(
        &self,
        choice: ConversationChoice,
        replace: bool,
    ) -> Result<Engine, EngineError> {
        let _one = self.session.making.lock().await;
        {
            let slot = lock(&self.session.slot);
            if let Some(e) = &slot.engine {
                if !replace {
                    return Ok(e.clone());
                }
                if slot.turn.is_some() || e.is_busy() {
                    return Err(EngineError::Busy);
                }
            }
        }
        let engine = self
            .harness
            .open_engine(EngineOptions {
                conversation: choice,
                ..EngineOptions::default()
            })
            .await?;
        let mut slot = lock(&self.session.slot);
        if replace && slot.turn.is_some() {
            return Err(EngineError::Busy);
        }
        slot.engine = Some(engine.clone());
        drop(slot);
        // The views of the conversation left go (MCP Apps).
        self.harness
            .apps
            .conversation_shown(engine.conversation_id());
        Ok(engine)
    }

    /// The chat as it is, opening `first` when no conversation is open yet: the desktop
    /// app continues the newest conversation, the terminal UI starts a new one.
    pub async fn state(&self, first: ConversationChoice) -> Result<ChatState, EngineError> {
        let engine = self.engine(first, false).await;
        self.describe(engine)
    }

    /// Starts a new conversation (the current one stays saved).
    pub async fn new_conversation(&self) -> Result<ChatState, EngineError> {
        let engine = self.engine(ConversationChoice::New, true).await;
        self.describe(engine)
    }

    /// Reopens saved conversation `id` (the current one stays saved).
    pub async fn resume(&self, id: &str) -> Result<ChatState, EngineError> {
        let engine = self
            .engine(ConversationChoice::Resume(id.to_string()), true)
            .await;
        self.describe(engine)
    }

    /// The project's saved conversations, newest first (read on the blocking pool).
    pub async fn conversations(&self) -> Vec<ConversationSummary> {
        self.harness.list_conversations().await
    }

    /// A missing provider is a state the pane shows, not a failure.
    fn describe(&self, engine: Result<Engine, EngineError>) -> Result<ChatState, EngineError> {
        match engine {
            Ok(e) => Ok(ChatState {
                provider: Some(e.provider().kind.clone()),
                model: Some(e.provider().model.clone()),
                error: None,
                busy: e.is_busy(),
                conversation_id: Some(e.conversation_id().to_string()),
                history: {
                    let mut items = history_with_views(&e.messages(), &e.views());
                    // Late results of tasks wait for the next message; they show already.
                    items.extend(
                        e.late_results()
                            .iter()
                            .map(|l| ChatItem::Notice { text: l.notice() }),
                    );
                    items
                },
                pending: self.pending(),
            }),
            Err(EngineError::Settings(e)) => Ok(ChatState {
                provider: None,
                model: None,
                error: Some(e.to_string()),
                busy: false,
                conversation_id: None,
                history: Vec::new(),
                pending: Vec::new(),
            }),
            Err(e) => Err(e),
        }
    }

    /// Whether a turn is running.
    pub fn busy(&self) -> bool {
        lock(&self.session.slot).turn.is_some()
    }

    /// Starts a turn for one user message (with resources attached); its events go to
    /// `sink`. The first message opens the newest conversation when none is open.
    pub async fn send(
        &self,
        prompt: String,
        attachments: Vec<ResourceRef>,
        sink: EventSink,
    ) -> Result<(), EngineError> {
        let engine = self.engine(ConversationChoice::Latest, false).await?;
        // What views gave the model since the last message goes with this one.
        let context = self
            .harness
            .apps
            .take_model_context(engine.conversation_id());
        let handle = engine.send_with_context(prompt, context, attachments)?;
        self.forward(handle, sink);
        Ok(())
    }

    /// Starts a turn with a server's prompt; its events go to `sink`. Returns the
    /// messages the turn opened with.
    pub async fn send_prompt(
        &self,
        server: &str,
        name: &str,
        arguments: Map<String, Value>,
        sink: EventSink,
    ) -> Result<Vec<Message>, PromptError> {
        let engine = self.engine(ConversationChoice::Latest, false).await?;
        let turn = self
            .harness
            .send_prompt(&engine, server, name, arguments)
            .await?;
        self.forward(turn.handle, sink);
        Ok(turn.opening)
    }

    /// Keeps the turn's controls and pending requests, and hands its events to `sink`.
    fn forward(&self, handle: TurnHandle, mut sink: EventSink) {
        let (mut events, control) = handle.into_parts();
        let slot = self.session.slot.clone();
        let number = {
            let mut s = lock(&slot);
            s.turns += 1;
            let number = s.turns;
            s.turn = Some(Turn {
                number,
                control: control.clone(),
                pending: PendingApprovals::default(),
            });
            number
        };
        tokio::spawn(async move {
            let mut seen = true;
            while let Some(event) = events.recv().await {
                {
                    let mut s = lock(&slot);
                    if let Some(t) = s.turn.as_mut().filter(|t| t.number == number) {
                        t.pending.observe(&event);
                    }
                }
                if seen && !sink(event) {
                    seen = false;
                }
                if !seen {
                    // Nobody sees the cards: what waits is denied.
                    let waiting: Vec<String> = {
                        let mut s = lock(&slot);
                        match s.turn.as_mut().filter(|t| t.number == number) {
                            Some(t) => std::mem::take(&mut t.pending)
                                .iter()
                                .map(|p| p.call_id.clone())
                                .collect(),
                            None => Vec::new(),
                        }
                    };
                    for id in waiting {
                        control.approve(&id, Decision::Deny);
                    }
                }
            }
            let mut s = lock(&slot);
            if s.turn.as_ref().is_some_and(|t| t.number == number) {
                s.turn = None;
            }
        });
    }

    /// Stops the running turn, if any (what waits for the user is denied).
    pub fn stop(&self) {
        if let Some(t) = &lock(&self.session.slot).turn {
            t.control.stop();
        }
    }

    /// Answers one waiting tool call; false when no call waits under that id.
    pub fn approve(&self, call_id: &str, decision: Decision) -> bool {
        let control = {
            let mut s = lock(&self.session.slot);
            let Some(t) = s.turn.as_mut() else {
                return false;
            };
            t.pending.take(call_id);
            t.control.clone()
        };
        control.approve(call_id, decision)
    }

    /// The running turn's tool calls waiting for the user, oldest first.
    pub fn pending(&self) -> Vec<PendingApproval> {
        lock(&self.session.slot)
            .turn
            .as_ref()
            .map(|t| t.pending.iter().cloned().collect())
            .unwrap_or_default()
    }
}
