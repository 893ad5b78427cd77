//! The conversation as the engine keeps it: provider-neutral messages made of blocks. Each
//! provider encodes these into its own wire format; the conversation store writes them as
//! they are (one JSON object per message).
//!
//! Invariant kept by the turn loop: every `ToolUse` block of an assistant message is
//! answered by exactly one `ToolResult` block (same id) in the next user message, even when
//! the turn was stopped or the call was denied, so every provider accepts the history.

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
}

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: Vec<Block>,
    /// The model's answer stopped at the output token limit in this (assistant) message,
    /// as the last answer of its turn. Front ends say so; providers never see it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cut_off: bool,
}

/// One part of a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Block {
    Text {
        text: String,
    },
    /// Base64 image data in a message (a prompt's image); providers that take no images,
    /// and assistant messages, get [`ResultPart::placeholder`] text instead.
    Image {
        media_type: String,
        data: String,
    },
    /// The model asks for a tool call.
    ToolUse {
        id: String,
        name: String,
        input: Value,
    },
    /// The answer to one tool call, for the model.
    ToolResult {
        tool_use_id: String,
        content: Vec<ResultPart>,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
    },
    /// Part of a resource the user attached to their message, read when it was sent.
    /// A text part already names the resource for the model (see [`resource_header`]).
    Resource {
        server: String,
        uri: String,
        content: ResultPart,
    },
}

/// The line that introduces an attached resource to the model.
pub fn resource_header(server: &str, uri: &str, mime_type: Option<&str>) -> String {
    match mime_type {
        Some(m) => format!("[attached resource {uri} ({m}) from MCP server \"{server}\"]"),
        None => format!("[attached resource {uri} from MCP server \"{server}\"]"),
    }
}

/// A part of a tool result as the model sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ResultPart {
    Text {
        text: String,
    },
    /// Base64 image data; providers that take no images get [`ResultPart::placeholder`].
    Image {
        media_type: String,
        data: String,
    },
}

impl ResultPart {
    /// The text a provider without image input shows instead of an image.
    pub fn placeholder(media_type: &str, data: &str) -> String {
        format!(
            "[image: {media_type}, {} bytes; this model does not accept images]",
            base64_decoded_len(data)
        )
    }
}

pub(crate) fn base64_decoded_len(data: &str) -> usize {
    let pad = data.bytes().rev().take_while(|b| *b == b'=').count();
    ((data.len() / 4) * 3).saturating_sub(pad.min(2))
}

impl Message {
    pub fn user_text(text: impl Into<String>) -> Message {
        Message {
            role: Role::User,
            content: vec![Block::Text { text: text.into() }],
            cut_off: false,
        }
    }

    /// The text blocks joined, as a front end shows the message.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for b in &self.content {
            if let Block::Text { text } = b {
                out.push_str(text);
            }
        }
        out
    }

    /// The tool calls this (assistant) message asks for: `(id, name, input)`.
    pub fn tool_uses(&self) -> impl Iterator<Item = (&str, &str, &Value)> {
        self.content.iter().filter_map(|b| match b {
            Block::ToolUse { id, name, input } => Some((id.as_str(), name.as_str(), input)),
            Block::Text { .. }
            | Block::Image { .. }
            | Block::ToolResult { .. }
            | Block::Resource { .. } => None,
        })
    }
}

/// A tool as offered to the model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolDefinition {
    pub name: String,
    pub description: String,
    pub input_schema: crate::mcp::schema_text::SchemaText,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cut_off_mark_is_saved_only_when_set() {
        let mut m = Message {
            role: Role::Assistant,
            content: vec![Block::Text {
                text: "half".into(),
            }],
            cut_off: false,
        };
        let plain = r#"{"role":"assistant","content":[{"type":"text","text":"half"}]}"#;
        assert_eq!(serde_json::to_string(&m).unwrap(), plain);
        assert_eq!(serde_json::from_str::<Message>(plain).unwrap(), m);
        m.cut_off = true;
        let marked =
            r#"{"role":"assistant","content":[{"type":"text","text":"half"}],"cut_off":true}"#;
        assert_eq!(serde_json::to_string(&m).unwrap(), marked);
        assert_eq!(serde_json::from_str::<Message>(marked).unwrap(), m);
    }
}
