//! Late results: a tool call that ran on as an MCP task after its turn gave the model a
//! "still running" result. When the task ends (also after the conversation was closed or
//! harness9 restarted), its result is added to the conversation ([`LateResult`], kept in
//! the conversation file) and waits there: it goes to the model with the user's next
//! message (after the message's text), and no turn starts by itself.

use serde::{Deserialize, Serialize};

use super::message::Block;
use crate::mcp::CallToolResult;

/// Most characters of a late result's text kept for the model (the rest is cut, with a
/// note).
pub const MAX_LATE_RESULT_CHARS: usize = 100_000;

/// The result of a tool call that arrived after its turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LateResult {
    /// The tool call it belongs to.
    pub call_id: String,
    /// The model-facing tool name.
    pub name: String,
    pub server: String,
    pub task_id: String,
    /// How the task ended (`completed`, `failed`, `cancelled`, `expired`, `lost`).
    pub state: String,
    /// The tool's result, when the task gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<CallToolResult>,
    /// Why there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl LateResult {
    /// The first line the model and the user read of it.
    pub fn heading(&self) -> String {
        format!(
            "[harness9: the tool call {} ({}) ran on as task {} on the MCP server \"{}\" and has ended ({}); its late result follows]",
            self.call_id, self.name, self.task_id, self.server, self.state
        )
    }

    /// What the model gets: the heading and the result's text (cut at
    /// [`MAX_LATE_RESULT_CHARS`]) and images.
    pub fn blocks(&self) -> Vec<Block> {
        let (mut text, images) = match (&self.result, &self.error) {
            (Some(r), _) => {
                let done = super::turn::result_parts(r);
                let text = if r.is_error {
                    format!("Error: {}", done.0)
                } else {
                    done.0
                };
                (text, done.1)
            }
            (None, Some(e)) => (format!("Error: {e}"), Vec::new()),
            (None, None) => ("(no result)".to_string(), Vec::new()),
        };
        if text.chars().count() > MAX_LATE_RESULT_CHARS {
            text = text.chars().take(MAX_LATE_RESULT_CHARS).collect();
            text.push_str("\n[harness9: the rest of this late result was cut]");
        }
        let mut blocks = vec![Block::Text {
            text: format!("{}\n{text}", self.heading()),
        }];
        for (media_type, data) in images {
            blocks.push(Block::Image { media_type, data });
        }
        blocks
    }

    /// What a chat pane shows of it before it went to the model.
    pub fn notice(&self) -> String {
        match self.blocks().into_iter().next() {
            Some(Block::Text { text }) => text,
            _ => self.heading(),
        }
    }
}
