//! What a front end shows about a tool besides its name: the server's title, its
//! annotations (with the spec's defaults) and the icons it may load. Built-in tools have
//! none of these.

use serde::Serialize;

use crate::mcp::apps::ToolUi;
use crate::mcp::features::{Icon, ToolAnnotations};
use crate::mcp::ToolDef;

/// The display side of a tool, as its server listed it. Hints are untrusted: they decide
/// what to show and when to ask, never to skip asking.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolDisplay {
    /// `title` of the tool (or, from older servers, `annotations.title`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub annotations: ToolAnnotations,
    /// Only the icons a front end may load (`https:` and `data:`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub icons: Vec<Icon>,
    /// The tool's interactive view and who may see it (MCP Apps `_meta.ui`); `None`: no
    /// view, visible to the model and to views.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ui: Option<ToolUi>,
}

impl ToolDisplay {
    pub fn of(def: &ToolDef) -> ToolDisplay {
        let annotations = def.hints();
        let title = def
            .title
            .clone()
            .or_else(|| annotations.title.clone())
            .filter(|t| !t.trim().is_empty() && *t != def.name);
        ToolDisplay {
            title,
            annotations,
            icons: loadable_icons(&def.icons),
            ui: def.ui(),
        }
    }

    /// Whether the model may be offered the tool (MCP Apps: tools visible to views only
    /// are never offered).
    pub fn model_visible(&self) -> bool {
        self.ui.as_ref().is_none_or(|u| u.visibility.model)
    }

    /// Whether a view of the tool's server may call it.
    pub fn app_visible(&self) -> bool {
        self.ui.as_ref().is_none_or(|u| u.visibility.app)
    }

    /// MCP Apps marks, as tool lists show them beside the hints: `view` (the tool has an
    /// interactive view) and `app-only` (only views may call it; the model never sees it).
    pub fn apps_marks(&self) -> Vec<&'static str> {
        let mut marks = Vec::new();
        if self.has_view() {
            marks.push("view");
        }
        if !self.model_visible() {
            marks.push("app-only");
        }
        marks
    }

    /// Whether the tool has an interactive view (MCP Apps).
    pub fn has_view(&self) -> bool {
        self.ui.as_ref().is_some_and(ToolUi::has_view)
    }
}

/// The icons a front end may load: `https:` and `data:` only.
pub fn loadable_icons(icons: &[Icon]) -> Vec<Icon> {
    icons.iter().filter(|i| i.is_loadable()).cloned().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn title_hints_and_only_safe_icons() {
        let def: ToolDef = serde_json::from_value(json!({
            "name": "rm",
            "annotations": {"title": "Remove a file", "destructiveHint": true},
            "icons": [
                {"src": "https://example.com/rm.png"},
                {"src": "http://example.com/rm.png"},
                {"src": "file:///etc/passwd"},
                {"src": "javascript:alert(1)"},
                {"src": "data:image/png;base64,AAAA"}
            ]
        }))
        .unwrap();
        let d = ToolDisplay::of(&def);
        assert_eq!(d.title.as_deref(), Some("Remove a file"));
        assert!(d.annotations.destructive());
        let srcs: Vec<&str> = d.icons.iter().map(|i| i.src.as_str()).collect();
        assert_eq!(
            srcs,
            ["https://example.com/rm.png", "data:image/png;base64,AAAA"]
        );
    }
}
