//! Starting a chat turn with a server's prompt: the façade checks the prompt exists and has
//! its required arguments, gets it (`prompts/get`), and opens the turn with its messages
//! ([`crate::engine::prompt`]). Front ends only collect the arguments.

use serde::Serialize;
use serde_json::{Map, Value};

use super::Harness;
use crate::engine::prompt::prompt_messages;
use crate::engine::{Block, Engine, EngineError, Message, Role, TurnHandle};
use crate::host::catalog::{FeatureError, ServerPrompt};
use crate::mcp::features::{Prompt, PromptArgument};

/// A prompt of a connected server as a picker lists it: with its server and arguments.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct PromptEntry {
    pub server: String,
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub arguments: Vec<PromptArgument>,
}

impl From<&ServerPrompt> for PromptEntry {
    fn from(p: &ServerPrompt) -> Self {
        PromptEntry {
            server: p.server.clone(),
            name: p.prompt.name.clone(),
            title: p.prompt.title.clone(),
            description: p.prompt.description.clone(),
            arguments: p.prompt.arguments.clone(),
        }
    }
}

/// A turn opened with a prompt, and the messages it opened with (for the transcript).
pub struct PromptTurn {
    pub handle: TurnHandle,
    pub opening: Vec<Message>,
}

/// Why a prompt could not start a turn; nothing was sent.
#[derive(Debug, thiserror::Error)]
pub enum PromptError {
    #[error(transparent)]
    Feature(#[from] FeatureError),
    #[error("server \"{server}\" has no prompt \"{name}\"{}", known_prompts(.known))]
    UnknownPrompt {
        server: String,
        name: String,
        known: Vec<String>,
    },
    #[error("the prompt {server}:{name} needs {}; add {} and send again", .missing.join(", "), example(.missing))]
    MissingArguments {
        server: String,
        name: String,
        missing: Vec<String>,
    },
    #[error(transparent)]
    Engine(#[from] EngineError),
}

impl PromptError {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        match self {
            PromptError::Feature(e) => e.code(),
            PromptError::UnknownPrompt { .. } => "unknown-prompt",
            PromptError::MissingArguments { .. } => "missing-arguments",
            PromptError::Engine(e) => e.code(),
        }
    }
}

fn known_prompts(known: &[String]) -> String {
    if known.is_empty() {
        " (it offers none)".to_string()
    } else {
        format!(" (prompts: {})", known.join(", "))
    }
}

fn example(missing: &[String]) -> String {
    missing
        .iter()
        .map(|m| format!("{m}=…"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The required arguments of `prompt` that `arguments` leaves out or leaves empty.
pub fn missing_arguments(prompt: &Prompt, arguments: &Map<String, Value>) -> Vec<String> {
    prompt
        .arguments
        .iter()
        .filter(|a| a.required)
        .filter(|a| match arguments.get(&a.name) {
            None | Some(Value::Null) => true,
            Some(Value::String(s)) => s.is_empty(),
            Some(_) => false,
        })
        .map(|a| a.name.clone())
        .collect()
}

impl Harness {
    /// The prompts of the connected servers (or of one), as a picker lists them.
    pub async fn prompt_entries(
        &self,
        server: Option<&str>,
    ) -> Result<Vec<PromptEntry>, FeatureError> {
        let prompts = self.prompts(server).await?;
        Ok(prompts.iter().map(PromptEntry::from).collect())
    }

    /// Gets prompt `name` of `server` with `arguments` and starts a turn of `engine` with
    /// its messages. Fails before anything is sent when the prompt is unknown or a
    /// required argument is missing. What MCP Apps views gave the model since the last
    /// message goes with the opening's last user message (as with a typed message).
    pub async fn send_prompt(
        &self,
        engine: &Engine,
        server: &str,
        name: &str,
        arguments: Map<String, Value>,
    ) -> Result<PromptTurn, PromptError> {
        if engine.is_busy() {
            return Err(EngineError::Busy.into());
        }
        let prompts = self.prompts(Some(server)).await?;
        let Some(prompt) = prompts.iter().find(|p| p.prompt.name == name) else {
            return Err(PromptError::UnknownPrompt {
                server: server.to_string(),
                name: name.to_string(),
                known: prompts.iter().map(|p| p.prompt.name.clone()).collect(),
            });
        };
        let missing = missing_arguments(&prompt.prompt, &arguments);
        if !missing.is_empty() {
            return Err(PromptError::MissingArguments {
                server: server.to_string(),
                name: name.to_string(),
                missing,
            });
        }
        let result = self.get_prompt(server, name, arguments).await?;
        let mut opening = prompt_messages(&result);
        if let Some(last) = opening.iter_mut().rev().find(|m| m.role == Role::User) {
            let context = self.apps.take_model_context(engine.conversation_id());
            last.content
                .extend(context.into_iter().map(|text| Block::Text { text }));
        }
        let handle = engine.send_messages(opening.clone())?;
        Ok(PromptTurn { handle, opening })
    }
}
