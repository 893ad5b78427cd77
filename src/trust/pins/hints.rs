//! What a pin keeps of a tool besides its name, description and schema: the title and
//! the annotations, as the server sent them.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A tool's title and annotations as the server sent them (no defaults filled in: a hint
/// that appears, disappears or flips is a change).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolHints {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// `annotations.title`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations_title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

impl ToolHints {
    /// The hints of a tool: its `title` and its `annotations` object. Each hint is read on
    /// its own, as [`crate::mcp::ToolDef::read_only_hint`] reads it, so one malformed
    /// field cannot hide a flip of another.
    pub fn of(title: Option<&str>, annotations: Option<&Value>) -> ToolHints {
        let field = |k: &str| annotations.and_then(|a| a.get(k));
        let hint = |k: &str| field(k).and_then(Value::as_bool);
        ToolHints {
            title: title.map(str::to_string),
            annotations_title: field("title").and_then(Value::as_str).map(str::to_string),
            read_only_hint: hint("readOnlyHint"),
            destructive_hint: hint("destructiveHint"),
            idempotent_hint: hint("idempotentHint"),
            open_world_hint: hint("openWorldHint"),
        }
    }

    /// One line per field, for a diff.
    pub(super) fn lines(&self) -> String {
        let mut out = Vec::new();
        let text = |v: &Option<String>| match v {
            Some(t) => serde_json::to_string(t).unwrap_or_default(),
            None => "(none)".into(),
        };
        let flag = |v: Option<bool>| v.map_or("(none)".to_string(), |b| b.to_string());
        out.push(format!("title: {}", text(&self.title)));
        out.push(format!(
            "annotations.title: {}",
            text(&self.annotations_title)
        ));
        out.push(format!("readOnlyHint: {}", flag(self.read_only_hint)));
        out.push(format!("destructiveHint: {}", flag(self.destructive_hint)));
        out.push(format!("idempotentHint: {}", flag(self.idempotent_hint)));
        out.push(format!("openWorldHint: {}", flag(self.open_world_hint)));
        out.join("\n")
    }
}
