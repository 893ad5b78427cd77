//! Tools as a front end's tool list shows them: one light entry per tool (no input schema
//! or annotations: a list of thousands of tools stays small), the schema and annotations of
//! one tool when it is opened, and the tools held back since they were pinned, with what
//! changed.

use serde::Serialize;

use super::Harness;
use crate::host::pins::AcceptError;
use crate::mcp::features::{Icon, ToolHints};
use crate::mcp::schema_text::SchemaText;
use crate::tools::{ToolSource, ToolSpec};
use crate::trust::pins::HeldTool;

/// One tool in a front end's list.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ToolEntry {
    /// The model-facing name (`mcp__server__tool`).
    pub name: String,
    /// The server it comes from (`null` for built-in tools).
    pub server: Option<String>,
    /// The tool's own name on its server (used to call it).
    pub tool: String,
    pub description: String,
    pub read_only: bool,
    /// The server's title for the tool (the name stays the identifier).
    pub title: Option<String>,
    /// What the annotations say, a word or two each ([`crate::mcp::features::ToolAnnotations::marks`]).
    pub marks: Vec<&'static str>,
    /// Only `https:` and `data:` icons.
    pub icons: Vec<Icon>,
    /// The tool has an interactive view (MCP Apps): a call of it can open one.
    pub has_view: bool,
    /// Only the server's views may call it (MCP Apps): never offered to the model.
    pub app_only: bool,
}

/// What a front end shows of one tool once it is opened, beside its list entry.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ToolDetail {
    /// With local `$ref`s resolved, as the model sees it.
    #[cfg_attr(feature = "ts", ts(type = "JsonValue"))]
    pub input_schema: SchemaText,
    pub hints: ToolHints,
}

impl From<&ToolSpec> for ToolEntry {
    fn from(t: &ToolSpec) -> Self {
        let (server, tool) = match &t.source {
            ToolSource::Builtin => (None, t.name.clone()),
            ToolSource::Mcp { server, tool } => (Some(server.clone()), tool.clone()),
        };
        ToolEntry {
            name: t.name.clone(),
            server,
            tool,
            description: t.description.clone(),
            read_only: t.read_only,
            title: t.display.title.clone(),
            marks: {
                let mut marks = t.display.annotations.marks();
                marks.extend(t.display.apps_marks());
                marks
            },
            icons: t.display.icons.clone(),
            has_view: t.display.has_view(),
            app_only: !t.display.model_visible(),
        }
    }
}

/// A tool held back from the model because it is new or changed since it was pinned.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct HeldToolEntry {
    pub server: String,
    pub tool: String,
    /// One line: "it is new", "its description changed", ...
    pub summary: String,
    /// The readable diff, one line each (`+` now, `-` pinned).
    pub diff: Vec<String>,
}

impl From<&HeldTool> for HeldToolEntry {
    fn from(h: &HeldTool) -> Self {
        HeldToolEntry {
            server: h.server.clone(),
            tool: h.tool.clone(),
            summary: h.change.summary(),
            diff: h.change.diff(),
        }
    }
}

impl Harness {
    /// Every tool, as a front end lists it.
    pub fn tool_entries(&self) -> Vec<ToolEntry> {
        // What a front end does with a large listing (serialize it, hand it over) frees
        // as much again once it is done.
        crate::memory::trim_soon();
        self.registry()
            .list()
            .iter()
            .map(|t| ToolEntry::from(t.spec()))
            .collect()
    }

    /// The input schema and annotations of one tool (by its model-facing name); `None`
    /// when there is no such tool (any more).
    pub fn tool_detail(&self, name: &str) -> Option<ToolDetail> {
        self.registry().get(name).map(|t| ToolDetail {
            input_schema: t.spec().input_schema.clone(),
            hints: t.spec().display.annotations.hints(),
        })
    }

    /// Tools held back from the model, as a front end lists them.
    pub fn held_tool_entries(&self) -> Vec<HeldToolEntry> {
        self.held_tools(None).iter().map(Into::into).collect()
    }

    /// Accepts held tools of one server (all of them when `tools` is empty) and returns
    /// what was accepted, as a front end lists it.
    pub async fn accept_tool_entries(
        &self,
        server: &str,
        tools: &[String],
    ) -> Result<Vec<HeldToolEntry>, AcceptError> {
        let accepted = self.accept_tools(server, tools).await?;
        Ok(accepted.iter().map(Into::into).collect())
    }
}
