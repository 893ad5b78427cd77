//! MCP message payloads the client reads: initialize results, tool definitions and tool
//! results. Unknown fields and content types are kept, never rejected.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

/// Protocol revision we offer in `initialize`.
pub const LATEST_PROTOCOL_VERSION: &str = "2025-11-25";

/// Legacy-era revisions we accept in the server's answer.
pub const SUPPORTED_PROTOCOL_VERSIONS: &[&str] =
    &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Implementation {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    pub protocol_version: String,
    #[serde(default)]
    pub capabilities: Map<String, Value>,
    #[serde(default)]
    pub server_info: Implementation,
    #[serde(default)]
    pub instructions: Option<String>,
}

/// One tool as the server lists it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ToolDef {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default = "empty_object_schema")]
    pub input_schema: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// Hints only: never trusted for security decisions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
}

fn empty_object_schema() -> Value {
    serde_json::json!({"type": "object"})
}

impl ToolDef {
    /// `readOnlyHint` from the server's annotations (an untrusted hint).
    pub fn read_only_hint(&self) -> bool {
        self.annotations
            .as_ref()
            .and_then(|a| a.get("readOnlyHint"))
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ListToolsPage {
    #[serde(default)]
    pub tools: Vec<ToolDef>,
    #[serde(default)]
    pub next_cursor: Option<String>,
}

/// The whole answer to `tools/call`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    #[serde(default)]
    pub content: Vec<Content>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

/// One content block of a tool result.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Content {
    Text {
        text: String,
    },
    Image {
        data: String,
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    Audio {
        data: String,
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    ResourceLink {
        uri: String,
        #[serde(default)]
        name: String,
        #[serde(default, rename = "mimeType", skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
    },
    Resource {
        resource: Value,
    },
    /// A content type this client does not know, kept as the server sent it.
    #[serde(untagged)]
    Unknown(Value),
}

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(tag = "type", rename_all = "snake_case")]
        enum Known {
            Text {
                text: String,
            },
            Image {
                data: String,
                #[serde(rename = "mimeType")]
                mime_type: String,
            },
            Audio {
                data: String,
                #[serde(rename = "mimeType")]
                mime_type: String,
            },
            ResourceLink {
                uri: String,
                #[serde(default)]
                name: String,
                #[serde(default, rename = "mimeType")]
                mime_type: Option<String>,
                #[serde(default)]
                description: Option<String>,
            },
            Resource {
                resource: Value,
            },
        }
        let value = Value::deserialize(d)?;
        // Fast path for text: take the string out without a second pass.
        if let Value::Object(map) = &value {
            if map.get("type").and_then(Value::as_str) == Some("text") && map.len() == 2 {
                if let Some(Value::String(_)) = map.get("text") {
                    let Value::Object(mut map) = value else {
                        unreachable!()
                    };
                    let Some(Value::String(text)) = map.shift_remove("text") else {
                        unreachable!()
                    };
                    return Ok(Content::Text { text });
                }
            }
        }
        Ok(match serde_json::from_value::<Known>(value.clone()) {
            Ok(Known::Text { text }) => Content::Text { text },
            Ok(Known::Image { data, mime_type }) => Content::Image { data, mime_type },
            Ok(Known::Audio { data, mime_type }) => Content::Audio { data, mime_type },
            Ok(Known::ResourceLink {
                uri,
                name,
                mime_type,
                description,
            }) => Content::ResourceLink {
                uri,
                name,
                mime_type,
                description,
            },
            Ok(Known::Resource { resource }) => Content::Resource { resource },
            Err(_) => Content::Unknown(value),
        })
    }
}

impl CallToolResult {
    /// A result that carries only an error message, for failures the model should see.
    pub fn error_text(message: impl Into<String>) -> CallToolResult {
        CallToolResult {
            content: vec![Content::Text {
                text: message.into(),
            }],
            is_error: true,
            ..Default::default()
        }
    }

    /// The result as text for a model: text blocks as they are, other blocks as short
    /// bracketed descriptions, structured content as JSON when there is no text.
    pub fn to_text(&self) -> String {
        let mut parts: Vec<String> = Vec::with_capacity(self.content.len());
        for c in &self.content {
            parts.push(match c {
                Content::Text { text } => text.clone(),
                Content::Image { data, mime_type } => {
                    format!("[image: {mime_type}, {} bytes]", base64_len(data))
                }
                Content::Audio { data, mime_type } => {
                    format!("[audio: {mime_type}, {} bytes]", base64_len(data))
                }
                Content::ResourceLink { uri, name, .. } => {
                    format!("[resource link: {name} <{uri}>]")
                }
                Content::Resource { resource } => match resource.get("text") {
                    Some(Value::String(t)) => t.clone(),
                    _ => format!(
                        "[resource: {}]",
                        resource.get("uri").and_then(Value::as_str).unwrap_or("?")
                    ),
                },
                Content::Unknown(v) => v.to_string(),
            });
        }
        let has_text = self
            .content
            .iter()
            .any(|c| matches!(c, Content::Text { .. }));
        if let (false, Some(s)) = (has_text, &self.structured_content) {
            parts.push(s.to_string());
        }
        parts.join("\n")
    }
}

fn base64_len(data: &str) -> usize {
    let pad = data.bytes().rev().take_while(|b| *b == b'=').count();
    ((data.len() / 4) * 3).saturating_sub(pad.min(2))
}

/// A progress notification for one in-flight request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    pub progress: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}
