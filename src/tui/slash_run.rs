//! The runner's side of the slash commands: listing the prompts, asking a server for
//! completions, and getting a prompt, each in the background beside the event loop; the
//! outcome comes back as [`SlashDone`].

use harness9::engine::{Block, Message, Role};
use harness9::harness::PromptError;
use harness9::host::catalog::{FeatureError, ServerPrompt};
use harness9::mcp::features::CompletionRef;
use harness9::Harness;
use serde_json::{Map, Value};

use super::model::ChatLine;

/// Most characters of one prompt message shown in the transcript (the model gets all).
const SHOWN_CHARS: usize = 2000;

pub enum SlashDone {
    Prompts(Vec<ServerPrompt>),
    Completion {
        input: String,
        result: Result<Vec<String>, FeatureError>,
    },
    /// The messages the prompt opened the turn with.
    Sent(Result<Vec<Message>, PromptError>),
    /// A `/model` or `/permissions` command ran (see [`super::settings`]): what to show.
    Settings(String),
}

pub async fn list(harness: &Harness) -> SlashDone {
    SlashDone::Prompts(harness.prompts(None).await.unwrap_or_default())
}

pub async fn complete(
    harness: &Harness,
    server: String,
    prompt: String,
    argument: String,
    value: String,
    context: Map<String, Value>,
    input: String,
) -> SlashDone {
    let reference = CompletionRef::Prompt { name: prompt };
    let result = harness
        .complete(&server, &reference, &argument, &value, &context)
        .await
        .map(|c| c.values);
    SlashDone::Completion { input, result }
}

pub async fn send(
    harness: &Harness,
    server: String,
    name: String,
    arguments: Map<String, Value>,
    sink: harness9::EventSink,
) -> SlashDone {
    SlashDone::Sent(
        harness
            .chat()
            .send_prompt(&server, &name, arguments, sink)
            .await,
    )
}

/// The messages a prompt opened the turn with, as transcript lines.
pub fn opening_lines(opening: &[Message]) -> Vec<ChatLine> {
    let mut lines = Vec::new();
    for m in opening {
        let mut text = String::new();
        for b in &m.content {
            let part = match b {
                Block::Text { text } => text.clone(),
                Block::Image { media_type, .. } => format!("[image: {media_type}]"),
                Block::ToolUse { name, .. } => format!("[tool call {name}]"),
                Block::ToolResult { .. } => "[tool result]".to_string(),
                Block::Resource { uri, .. } => format!("[resource {uri}]"),
            };
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&part);
        }
        if text.chars().count() > SHOWN_CHARS {
            text = text.chars().take(SHOWN_CHARS).collect::<String>() + "…";
        }
        lines.push(match m.role {
            Role::User => ChatLine::User(text),
            Role::Assistant => ChatLine::Assistant(text),
        });
    }
    lines
}
