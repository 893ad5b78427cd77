//! A server's prompt (`prompts/get`) as the opening of a turn: each [`PromptMessage`]
//! becomes an engine [`Message`] with the same role. Text stays text; images stay images
//! (the provider decides whether it can take them); an embedded text resource becomes a
//! text block headed by its URI; a binary resource, audio and a resource link become a
//! short description, so the model always learns that they were there. Consecutive
//! messages of one role are merged, since providers expect roles to alternate.

use serde_json::Value;

use super::message::{base64_decoded_len, Block, Message, Role};
use crate::mcp::features::{GetPromptResult, PromptMessage};
use crate::mcp::Content;

/// Image types providers take as images; other images become a description.
pub(crate) const IMAGE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// The engine messages a prompt's result stands for (empty when it has none).
pub fn prompt_messages(result: &GetPromptResult) -> Vec<Message> {
    let mut out: Vec<Message> = Vec::new();
    for m in &result.messages {
        let role = role(m);
        let block = block(&m.content);
        match out.last_mut() {
            Some(last) if last.role == role => last.content.push(block),
            _ => out.push(Message {
                role,
                content: vec![block],
                cut_off: false,
            }),
        }
    }
    out
}

/// `assistant` is the model's; anything else the spec does not name is the user's.
fn role(m: &PromptMessage) -> Role {
    if m.role == "assistant" {
        Role::Assistant
    } else {
        Role::User
    }
}

fn block(content: &Content) -> Block {
    match content {
        Content::Text { text } => Block::Text { text: text.clone() },
        Content::Image { data, mime_type } if IMAGE_TYPES.contains(&mime_type.as_str()) => {
            Block::Image {
                media_type: mime_type.clone(),
                data: data.clone(),
            }
        }
        Content::Image { data, mime_type } => Block::Text {
            text: format!(
                "[image: {mime_type}, {} bytes; not a type the model takes]",
                base64_decoded_len(data)
            ),
        },
        Content::Audio { data, mime_type } => Block::Text {
            text: format!(
                "[audio: {mime_type}, {} bytes; the model cannot hear it]",
                base64_decoded_len(data)
            ),
        },
        Content::ResourceLink {
            uri,
            name,
            mime_type,
            description,
        } => {
            let mut text = format!("[resource link: {uri}");
            if !name.is_empty() {
                text.push_str(&format!(" ({name})"));
            }
            if let Some(m) = mime_type {
                text.push_str(&format!(", {m}"));
            }
            if let Some(d) = description {
                text.push_str(&format!(" — {d}"));
            }
            text.push(']');
            Block::Text { text }
        }
        Content::Resource { resource } => embedded(resource),
        Content::Unknown(v) => Block::Text {
            text: format!(
                "[content of a type harness9 does not know: {}]",
                v.get("type").and_then(Value::as_str).unwrap_or("untyped")
            ),
        },
    }
}

/// An embedded resource: its text under its URI, an image as an image, other binary data
/// described.
fn embedded(resource: &Value) -> Block {
    let uri = resource
        .get("uri")
        .and_then(Value::as_str)
        .unwrap_or("(no uri)");
    let mime = resource.get("mimeType").and_then(Value::as_str);
    if let Some(text) = resource.get("text").and_then(Value::as_str) {
        let kind = mime.map(|m| format!(" ({m})")).unwrap_or_default();
        return Block::Text {
            text: format!("[resource {uri}{kind}]\n{text}"),
        };
    }
    let blob = resource.get("blob").and_then(Value::as_str).unwrap_or("");
    if let Some(text) = textual_blob(mime, blob) {
        return Block::Text {
            text: format!("[resource {uri} ({})]\n{text}", mime.unwrap_or("text")),
        };
    }
    match mime {
        Some(m) if IMAGE_TYPES.contains(&m) => Block::Image {
            media_type: m.to_string(),
            data: blob.to_string(),
        },
        _ => Block::Text {
            text: format!(
                "[resource {uri}: {}, {} bytes of binary data, not shown]",
                mime.unwrap_or("unknown type"),
                base64_decoded_len(blob)
            ),
        },
    }
}

/// A blob whose type is text and whose bytes are UTF-8, decoded.
fn textual_blob(mime: Option<&str>, blob: &str) -> Option<String> {
    use base64::Engine;
    let mime = mime?;
    let textual = mime.starts_with("text/")
        || mime == "application/json"
        || mime.ends_with("+json")
        || mime.ends_with("+xml");
    if !textual {
        return None;
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(blob.trim())
        .ok()?;
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_content_kind_becomes_a_block_and_roles_merge() {
        let result: GetPromptResult = serde_json::from_value(json!({"messages": [
            {"role": "user", "content": {"type": "text", "text": "look:"}},
            {"role": "user", "content": {"type": "image", "data": "AAAA", "mimeType": "image/png"}},
            {"role": "assistant", "content": {"type": "text", "text": "I see."}},
            {"role": "user", "content": {"type": "resource", "resource": {"uri": "demo://a", "mimeType": "text/plain", "text": "alpha"}}},
            {"role": "user", "content": {"type": "resource", "resource": {"uri": "demo://b", "mimeType": "application/octet-stream", "blob": "AAEC"}}},
            {"role": "user", "content": {"type": "resource", "resource": {"uri": "demo://t", "mimeType": "text/plain", "blob": "aGk="}}},
            {"role": "user", "content": {"type": "resource_link", "uri": "demo://c", "name": "c", "description": "the third"}},
            {"role": "user", "content": {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}}
        ]}))
        .unwrap();
        let text = |t: &str| Block::Text { text: t.into() };
        assert_eq!(
            prompt_messages(&result),
            vec![
                Message {
                    role: Role::User,
                    content: vec![
                        text("look:"),
                        Block::Image {
                            media_type: "image/png".into(),
                            data: "AAAA".into()
                        }
                    ],
                    cut_off: false,
                },
                Message {
                    role: Role::Assistant,
                    content: vec![text("I see.")],
                    cut_off: false,
                },
                Message {
                    role: Role::User,
                    content: vec![
                        text("[resource demo://a (text/plain)]\nalpha"),
                        text("[resource demo://b: application/octet-stream, 3 bytes of binary data, not shown]"),
                        text("[resource demo://t (text/plain)]\nhi"),
                        text("[resource link: demo://c (c) — the third]"),
                        text("[audio: audio/wav, 3 bytes; the model cannot hear it]"),
                    ],
                    cut_off: false,
                },
            ]
        );
        assert_eq!(prompt_messages(&GetPromptResult::default()), vec![]);
    }
}
