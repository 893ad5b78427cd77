//! The chat pane's backend: one agent engine per open project (continuing its newest saved
//! conversation), the controls of the running turn, and the task that forwards the
//! engine's events to the window over the `chat_send` channel.
//!
//! Without a configured model provider no engine exists: `chat_state` says what to set and
//! everything else in the app keeps working. The engine is looked up again on each call,
//! so setting up a provider needs no restart of the app, only a new message.

use std::sync::{Arc, Mutex};

use harness9::engine::history::{history, ChatItem};
use harness9::engine::{
    ConversationChoice, Decision, Engine, EngineError, EngineOptions, Event, Message, TurnControl,
    TurnHandle,
};
use harness9::Harness;
use serde_json::{Map, Value};
use tauri::ipc::Channel;

use crate::bridge::{BridgeError, BridgeResult, ChatEventDto, ChatStateDto, ErrorCode};

/// The chat of one open project.
#[derive(Default)]
pub struct Chat {
    slot: Arc<Mutex<Slot>>,
}

#[derive(Default)]
struct Slot {
    engine: Option<Engine>,
    /// The running turn: its number and controls.
    turn: Option<(u64, TurnControl)>,
    turns: u64,
}

impl Drop for Chat {
    fn drop(&mut self) {
        // Closing the project stops its turn (in-flight tool calls are cancelled).
        self.stop();
    }
}

pub(crate) fn engine_error(e: EngineError) -> BridgeError {
    let code = match &e {
        EngineError::Settings(_) => ErrorCode::NotConfigured,
        EngineError::Store(_) => ErrorCode::Io,
        EngineError::Busy => ErrorCode::Busy,
        EngineError::EmptyPrompt => ErrorCode::InvalidArguments,
    };
    BridgeError::new(code, e.to_string())
}

impl Chat {
    /// Reopens saved conversation `id` (the current one stays saved).
    pub fn open(&self, harness: &Harness, id: &str) -> BridgeResult<ChatStateDto> {
        {
            let mut slot = self.slot.lock().expect("chat lock");
            if slot.engine.as_ref().is_some_and(|e| e.is_busy()) {
                return Err(engine_error(EngineError::Busy));
            }
            let engine = harness
                .engine(EngineOptions {
                    conversation: ConversationChoice::Resume(id.to_string()),
                    ..EngineOptions::default()
                })
                .map_err(engine_error)?;
            slot.engine = Some(engine);
        }
        self.state(harness, false)
    }

    /// The project's engine, made on first use; `fresh` starts a new conversation.
    fn engine(&self, harness: &Harness, fresh: bool) -> BridgeResult<Engine> {
        let mut slot = self.slot.lock().expect("chat lock");
        if let Some(e) = &slot.engine {
            if !fresh {
                return Ok(e.clone());
            }
            if e.is_busy() {
                return Err(engine_error(EngineError::Busy));
            }
        }
        let engine = harness
            .engine(EngineOptions {
                conversation: if fresh {
                    ConversationChoice::New
                } else {
                    ConversationChoice::Latest
                },
                ..EngineOptions::default()
            })
            .map_err(engine_error)?;
        slot.engine = Some(engine.clone());
        Ok(engine)
    }

    /// The provider and model, or why there is none, and the conversation so far.
    pub fn state(&self, harness: &Harness, fresh: bool) -> BridgeResult<ChatStateDto> {
        match self.engine(harness, fresh) {
            Ok(e) => Ok(ChatStateDto {
                provider: Some(e.provider().kind.clone()),
                model: Some(e.provider().model.clone()),
                error: None,
                busy: e.is_busy(),
                conversation_id: Some(e.conversation_id().to_string()),
                history: history(&e.messages()),
            }),
            Err(e) if e.code == ErrorCode::NotConfigured => Ok(ChatStateDto {
                provider: None,
                model: None,
                error: Some(e.message),
                busy: false,
                conversation_id: None,
                history: Vec::new(),
            }),
            Err(e) => Err(e),
        }
    }

    /// Starts a turn; its events follow on `channel`, `turn_end` last.
    pub fn send(
        &self,
        harness: &Harness,
        prompt: String,
        attachments: Option<Vec<crate::resources::AttachmentDto>>,
        channel: Channel<ChatEventDto>,
    ) -> BridgeResult<()> {
        let engine = self.engine(harness, false)?;
        let attachments = attachments
            .unwrap_or_default()
            .into_iter()
            .map(Into::into)
            .collect();
        let handle = engine
            .send_with(prompt, attachments)
            .map_err(engine_error)?;
        self.forward(handle, channel);
        Ok(())
    }

    /// Starts a turn with a server's prompt; its events follow on `channel`. Returns the
    /// messages the turn opened with, as chat items.
    pub async fn send_prompt(
        &self,
        harness: &Harness,
        server: &str,
        name: &str,
        arguments: Map<String, Value>,
        channel: Channel<ChatEventDto>,
    ) -> BridgeResult<Vec<ChatItem>> {
        let engine = self.engine(harness, false)?;
        let turn = harness
            .send_prompt(&engine, server, name, arguments)
            .await?;
        self.forward(turn.handle, channel);
        let opening: Vec<Arc<Message>> = turn.opening.into_iter().map(Arc::new).collect();
        Ok(history(&opening))
    }

    /// Forwards a turn's events to the window and keeps its controls until it ends.
    fn forward(&self, handle: TurnHandle, channel: Channel<ChatEventDto>) {
        let (mut events, control) = handle.into_parts();
        let number = {
            let mut slot = self.slot.lock().expect("chat lock");
            slot.turns += 1;
            slot.turn = Some((slot.turns, control.clone()));
            slot.turns
        };
        let slot = self.slot.clone();
        tokio::spawn(async move {
            // Once the window is gone (reloaded), approval requests nobody sees are denied.
            let mut window = true;
            while let Some(event) = events.recv().await {
                let asks = match &event {
                    Event::ApprovalRequest { call_id, .. } => Some(call_id.clone()),
                    _ => None,
                };
                if window && channel.send(ChatEventDto::from(event)).is_err() {
                    window = false;
                }
                if let (false, Some(id)) = (window, asks) {
                    control.approve(&id, Decision::Deny);
                }
            }
            let mut slot = slot.lock().expect("chat lock");
            if slot.turn.as_ref().is_some_and(|(n, _)| *n == number) {
                slot.turn = None;
            }
        });
    }

    /// Stops the running turn, if any.
    pub fn stop(&self) {
        if let Some((_, c)) = &self.slot.lock().expect("chat lock").turn {
            c.stop();
        }
    }

    /// Answers an approval card; false when no call waits under that id.
    pub fn approve(&self, call_id: &str, decision: Decision) -> bool {
        match &self.slot.lock().expect("chat lock").turn {
            Some((_, c)) => c.approve(call_id, decision),
            None => false,
        }
    }
}
