//! Payloads of the server features beyond tools: resources, resource templates and what
//! reading one returns, prompts and their messages, argument completion, logging levels,
//! tool annotations and icons. Unknown fields are kept (in `extra`), schemas and metadata
//! stay raw JSON, and nothing a server omits is an error when the spec gives it a default.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::types::Content;
// Icons and tool annotations are part of the core types; they are named here too, beside
// the other features' payloads.
pub use super::types::{Icon, ToolAnnotations, ToolHints};

/// One resource a server lists.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Resource {
    pub uri: String,
    #[serde(default)]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub icons: Vec<Icon>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
    /// Fields this client does not know (`_meta` among them), as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A family of resources addressed by an RFC 6570 URI template.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplate {
    pub uri_template: String,
    #[serde(default)]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub icons: Vec<Icon>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One part of what `resources/read` returns: text, or binary data in base64.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ResourceContents {
    pub uri: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Base64, as the server sent it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blob: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ResourceContents {
    /// Decoded size of the blob, if any.
    pub fn blob_len(&self) -> Option<usize> {
        self.blob.as_deref().map(super::types::base64_len)
    }
}

/// The answer to `resources/read`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ReadResourceResult {
    #[serde(default)]
    pub contents: Vec<ResourceContents>,
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

/// A ready-made prompt a server offers.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Prompt {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arguments: Vec<PromptArgument>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub icons: Vec<Icon>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One argument of a prompt (always a string value).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct PromptArgument {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub required: bool,
}

/// One message of a prompt's result.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PromptMessage {
    /// `user` or `assistant`.
    pub role: String,
    pub content: Content,
}

/// The answer to `prompts/get`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct GetPromptResult {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default)]
    pub messages: Vec<PromptMessage>,
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

impl GetPromptResult {
    /// The messages as text, one `role: text` paragraph each (other content described).
    pub fn to_text(&self) -> String {
        self.messages
            .iter()
            .map(|m| {
                let body = super::types::CallToolResult {
                    content: vec![m.content.clone()],
                    ..Default::default()
                }
                .to_text();
                format!("{}: {body}", m.role)
            })
            .collect::<Vec<_>>()
            .join("\n\n")
    }
}

/// What `completion/complete` completes: a prompt's argument or a template's variable.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(tag = "type")]
pub enum CompletionRef {
    #[serde(rename = "ref/prompt")]
    Prompt { name: String },
    #[serde(rename = "ref/resource")]
    Resource { uri: String },
}

/// The server's suggestions for one value.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    #[serde(default)]
    pub values: Vec<String>,
    /// How many values exist in all, when the server says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub has_more: bool,
}

#[derive(Debug, Deserialize)]
pub(crate) struct CompleteResult {
    #[serde(default)]
    pub completion: Completion,
}

/// A syslog severity for `logging/setLevel` and `notifications/message`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
}

/// Every level, lowest first.
pub const LOG_LEVELS: [LogLevel; 8] = [
    LogLevel::Debug,
    LogLevel::Info,
    LogLevel::Notice,
    LogLevel::Warning,
    LogLevel::Error,
    LogLevel::Critical,
    LogLevel::Alert,
    LogLevel::Emergency,
];

impl LogLevel {
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }
}

/// A word that names no [`LogLevel`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown log level \"{0}\"; use one of {all}", all = LOG_LEVELS.map(LogLevel::as_str).join(", "))]
pub struct UnknownLogLevel(pub String);

impl UnknownLogLevel {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        "unknown-log-level"
    }
}

impl std::str::FromStr for LogLevel {
    type Err = UnknownLogLevel;
    fn from_str(s: &str) -> Result<Self, UnknownLogLevel> {
        LOG_LEVELS
            .into_iter()
            .find(|l| l.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| UnknownLogLevel(s.to_string()))
    }
}

/// One page of a paginated listing (`resources/list`, `resources/templates/list`,
/// `prompts/list`): the items sit under a method-specific key.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ResourcesPage {
    #[serde(default)]
    pub resources: Vec<Resource>,
    #[serde(default)]
    pub next_cursor: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TemplatesPage {
    #[serde(default)]
    pub resource_templates: Vec<ResourceTemplate>,
    #[serde(default)]
    pub next_cursor: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PromptsPage {
    #[serde(default)]
    pub prompts: Vec<Prompt>,
    #[serde(default)]
    pub next_cursor: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn annotations_take_the_spec_defaults() {
        let none = ToolAnnotations::from_value(None);
        assert!(!none.read_only() && none.destructive() && none.open_world());
        assert_eq!(none.marks(), Vec::<&str>::new());
        let ro = ToolAnnotations::from_value(Some(&json!({"readOnlyHint": true})));
        assert!(!ro.destructive());
        assert_eq!(ro.marks(), ["read-only"]);
        let rm = ToolAnnotations::from_value(Some(&json!({
            "readOnlyHint": false, "idempotentHint": true, "openWorldHint": true
        })));
        assert_eq!(rm.marks(), ["destructive", "idempotent", "open-world"]);
        let odd = ToolAnnotations::from_value(Some(&json!({"readOnlyHint": "yes"})));
        assert_eq!(odd, ToolAnnotations::default());
    }

    #[test]
    fn icons_load_only_from_https_and_data() {
        let icon = |src: &str| Icon {
            src: src.into(),
            mime_type: None,
            sizes: vec![],
            theme: None,
        };
        assert!(icon("https://example.com/a.png").is_loadable());
        assert!(icon("data:image/png;base64,AA==").is_loadable());
        assert!(!icon("http://example.com/a.png").is_loadable());
        assert!(!icon("javascript:alert(1)").is_loadable());
        assert!(!icon("file:///etc/passwd").is_loadable());
    }

    #[test]
    fn resources_keep_unknown_fields() {
        let r: Resource = serde_json::from_value(json!({
            "uri": "demo://a", "name": "a", "mimeType": "text/plain", "_meta": {"x": 1}, "z": true
        }))
        .unwrap();
        assert_eq!(r.mime_type.as_deref(), Some("text/plain"));
        assert_eq!(
            r.extra,
            json!({"_meta": {"x": 1}, "z": true})
                .as_object()
                .unwrap()
                .clone()
        );
        let back = serde_json::to_value(&r).unwrap();
        assert_eq!(back["z"], true);
        let c: ResourceContents =
            serde_json::from_value(json!({"uri": "demo://b", "blob": "AAEC"})).unwrap();
        assert_eq!(c.blob_len(), Some(3));
        let m: PromptMessage = serde_json::from_value(json!({
            "role": "user", "content": {"type": "resource", "resource": {"uri": "demo://c", "text": "hi"}}
        }))
        .unwrap();
        assert_eq!(m.role, "user");
        assert_eq!(
            serde_json::to_value(CompletionRef::Prompt { name: "p".into() }).unwrap(),
            json!({"type": "ref/prompt", "name": "p"})
        );
        assert_eq!("WARNING".parse::<LogLevel>(), Ok(LogLevel::Warning));
        assert!("loud"
            .parse::<LogLevel>()
            .unwrap_err()
            .to_string()
            .contains("debug, info"));
    }
}
