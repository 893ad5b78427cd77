//! A saved conversation as a chat pane shows it when it is reopened: the user's messages,
//! the model's answers, each tool call with its result, notes and attachments; an answer
//! cut off at the output token limit is followed by a notice that says so. Both front ends
//! render these items; the desktop app's TypeScript types come from here.

use std::collections::HashMap;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use super::event::{CallView, CUT_OFF_NOTICE};
use super::message::{Block, Message, ResultPart, Role};

/// One entry of a saved conversation, as the chat pane shows it when reopened.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(
    tag = "kind",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum ChatItem {
    User {
        text: String,
    },
    Assistant {
        text: String,
    },
    Tool {
        call_id: String,
        name: String,
        arguments: Value,
        /// `null` when the conversation holds no result for the call.
        output: Option<String>,
        is_error: bool,
        /// The call's interactive view (MCP Apps), when its tool has one: a front end
        /// that renders views opens it again; the others show a note.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "ts", ts(optional))]
        view: Option<Box<CallView>>,
    },
    /// A note the app added to the conversation (tools that disappeared).
    Notice {
        text: String,
    },
    /// A resource the user attached to their message.
    Attachment {
        server: String,
        uri: String,
    },
}

/// The conversation as chat items: prompts, answers and tool calls with their results.
pub fn history(messages: &[Arc<Message>]) -> Vec<ChatItem> {
    history_with_views(messages, &HashMap::new())
}

/// [`history`] with the views of tool calls (MCP Apps), by call id.
pub fn history_with_views(
    messages: &[Arc<Message>],
    views: &HashMap<String, CallView>,
) -> Vec<ChatItem> {
    let mut out: Vec<ChatItem> = Vec::new();
    let mut calls: HashMap<&str, usize> = HashMap::new();
    for m in messages {
        let mut first_text = true;
        for b in &m.content {
            match b {
                Block::Text { text } => match m.role {
                    Role::User if first_text => {
                        first_text = false;
                        out.push(ChatItem::User { text: text.clone() });
                    }
                    Role::User => out.push(ChatItem::Notice { text: text.clone() }),
                    Role::Assistant => match out.last_mut() {
                        Some(ChatItem::Assistant { text: t }) => t.push_str(text),
                        _ => out.push(ChatItem::Assistant { text: text.clone() }),
                    },
                },
                // An image of a server prompt's message: named, not shown.
                Block::Image { media_type, data } => out.push(ChatItem::Notice {
                    text: format!("[image: {media_type}, {} bytes]", data.len() / 4 * 3),
                }),
                Block::Resource { server, uri, .. } => {
                    let same = matches!(out.last(), Some(ChatItem::Attachment { server: s, uri: u }) if s == server && u == uri);
                    if !same {
                        out.push(ChatItem::Attachment {
                            server: server.clone(),
                            uri: uri.clone(),
                        });
                    }
                }
                Block::ToolUse { id, name, input } => {
                    calls.insert(id, out.len());
                    out.push(ChatItem::Tool {
                        call_id: id.clone(),
                        name: name.clone(),
                        arguments: input.clone(),
                        output: None,
                        is_error: false,
                        view: views.get(id).cloned().map(Box::new),
                    });
                }
                Block::ToolResult {
                    tool_use_id,
                    content,
                    is_error,
                } => {
                    first_text = false;
                    let text = content
                        .iter()
                        .map(|p| match p {
                            ResultPart::Text { text } => text.clone(),
                            ResultPart::Image { media_type, data } => {
                                ResultPart::placeholder(media_type, data)
                            }
                        })
                        .collect::<Vec<_>>()
                        .join("\n");
                    if let Some(ChatItem::Tool {
                        output,
                        is_error: e,
                        ..
                    }) = calls
                        .get(tool_use_id.as_str())
                        .and_then(|i| out.get_mut(*i))
                    {
                        *output = Some(text);
                        *e = *is_error;
                    }
                }
            }
        }
        if m.cut_off {
            out.push(ChatItem::Notice {
                text: CUT_OFF_NOTICE.into(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_off_answer_is_followed_by_a_notice() {
        let msgs = [
            Message::user_text("write a lot"),
            Message {
                role: Role::Assistant,
                content: vec![Block::Text {
                    text: "The first half".into(),
                }],
                cut_off: true,
            },
            Message::user_text("go on"),
        ]
        .map(Arc::new);
        assert_eq!(
            serde_json::to_value(history(&msgs)).unwrap(),
            serde_json::json!([
                {"kind": "user", "text": "write a lot"},
                {"kind": "assistant", "text": "The first half"},
                {"kind": "notice", "text": CUT_OFF_NOTICE},
                {"kind": "user", "text": "go on"},
            ])
        );
    }

    #[test]
    fn history_pairs_tool_calls_with_their_results() {
        let msgs = [
            Message::user_text("hi"),
            Message {
                role: Role::Assistant,
                content: vec![
                    Block::Text {
                        text: "let me".into(),
                    },
                    Block::ToolUse {
                        id: "t1".into(),
                        name: "mcp__demo__list_dir".into(),
                        input: serde_json::json!({}),
                    },
                ],
                cut_off: false,
            },
            Message {
                role: Role::User,
                content: vec![Block::ToolResult {
                    tool_use_id: "t1".into(),
                    content: vec![ResultPart::Text {
                        text: "README.md".into(),
                    }],
                    is_error: false,
                }],
                cut_off: false,
            },
            Message {
                role: Role::Assistant,
                content: vec![Block::Text {
                    text: "done".into(),
                }],
                cut_off: false,
            },
        ]
        .map(Arc::new);
        assert_eq!(
            serde_json::to_value(history(&msgs)).unwrap(),
            serde_json::json!([
                {"kind": "user", "text": "hi"},
                {"kind": "assistant", "text": "let me"},
                {"kind": "tool", "callId": "t1", "name": "mcp__demo__list_dir", "arguments": {},
                 "output": "README.md", "isError": false},
                {"kind": "assistant", "text": "done"},
            ])
        );
    }
}
