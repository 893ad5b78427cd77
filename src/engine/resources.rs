//! Resources of the project's MCP servers as the engine uses them: the resources a user
//! attached to a message (read when the message is sent, bounded, text as text blocks that
//! name the URI, images as image blocks), and the two built-in tools that let the model list
//! and read resources itself. The tools are offered only while some server has resources.
//!
//! The engine reaches the servers through [`ResourceAccess`], which the façade implements;
//! the engine never knows the manager.

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::builtin::BuiltinToolError;
use super::message::{resource_header, Block, ResultPart, ToolDefinition};
use crate::host::catalog::{FeatureError, ServerResource, ServerTemplate};
use crate::mcp::features::{ReadResourceResult, ResourceContents};

/// The built-in tool that lists the servers' resources.
pub const LIST_RESOURCES_TOOL: &str = "list_mcp_resources";
/// The built-in tool that reads one resource.
pub const READ_RESOURCE_TOOL: &str = "read_mcp_resource";
/// Most characters of one attached text resource the model gets.
pub const MAX_RESOURCE_CHARS: usize = 50_000;
/// Most characters of attached text one message carries in all.
pub const MAX_ATTACHED_CHARS: usize = 200_000;
/// Largest image (decoded bytes) sent to the model as an image.
pub const MAX_RESOURCE_IMAGE_BYTES: usize = 5 * 1024 * 1024;
/// Most resources (and templates) one listing shows the model.
pub const MAX_LISTED_RESOURCES: usize = 200;

/// Image types providers take as images; other types are described in words.
pub const IMAGE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// A resource the user picked: which server, which URI.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ResourceRef {
    pub server: String,
    pub uri: String,
}

/// The resources and templates of the servers a listing covered.
pub type Listing = (Vec<ServerResource>, Vec<ServerTemplate>);

/// How the engine reaches the servers' resources.
pub trait ResourceAccess: Send + Sync {
    /// Whether any connected server lists resources or templates now.
    fn has_resources(&self) -> bool;
    /// The resources and templates of every connected server (or of one).
    fn list(&self, server: Option<String>) -> BoxFuture<'_, Result<Listing, FeatureError>>;
    fn read(
        &self,
        server: String,
        uri: String,
    ) -> BoxFuture<'_, Result<ReadResourceResult, FeatureError>>;
}

/// The blocks attached resources add to a user message, and notes for the user.
#[derive(Debug, Default)]
pub struct Attached {
    pub blocks: Vec<Block>,
    pub notes: Vec<String>,
}

/// Reads every attached resource at once and turns it into blocks for the model.
pub async fn read_attachments(access: &dyn ResourceAccess, refs: &[ResourceRef]) -> Attached {
    let reads = futures::future::join_all(
        refs.iter()
            .map(|r| access.read(r.server.clone(), r.uri.clone())),
    )
    .await;
    let mut out = Attached::default();
    let mut budget = MAX_ATTACHED_CHARS;
    for (r, result) in refs.iter().zip(reads) {
        let text_part = |text: String| Block::Resource {
            server: r.server.clone(),
            uri: r.uri.clone(),
            content: ResultPart::Text { text },
        };
        let read = match result {
            Ok(read) => read,
            Err(e) => {
                let header = resource_header(&r.server, &r.uri, None);
                out.blocks
                    .push(text_part(format!("{header}\n[it could not be read: {e}]")));
                out.notes.push(format!(
                    "the attached resource {} could not be read: {e}",
                    r.uri
                ));
                continue;
            }
        };
        if read.contents.is_empty() {
            let header = resource_header(&r.server, &r.uri, None);
            out.blocks.push(text_part(format!(
                "{header}\n[the server returned no content]"
            )));
        }
        for c in &read.contents {
            let header = resource_header(&r.server, &c.uri, c.mime_type.as_deref());
            match describe(c, &mut budget) {
                Part::Text { text, cut } => {
                    if let Some(note) = cut {
                        out.notes.push(format!("{}: {note}", c.uri));
                    }
                    out.blocks.push(text_part(format!("{header}\n{text}")));
                }
                Part::Image { media_type, data } => {
                    out.blocks
                        .push(text_part(format!("{header}\n[the image follows]")));
                    out.blocks.push(Block::Resource {
                        server: r.server.clone(),
                        uri: c.uri.clone(),
                        content: ResultPart::Image { media_type, data },
                    });
                }
            }
        }
    }
    out
}

enum Part {
    Text { text: String, cut: Option<String> },
    Image { media_type: String, data: String },
}

/// One content item as the model gets it, taking its text from `budget`.
fn describe(c: &ResourceContents, budget: &mut usize) -> Part {
    if let Some(text) = &c.text {
        let limit = MAX_RESOURCE_CHARS.min(*budget);
        let total = text.chars().count();
        if total <= limit {
            *budget -= total;
            return Part::Text {
                text: text.clone(),
                cut: None,
            };
        }
        let kept: String = text.chars().take(limit).collect();
        *budget -= limit;
        let note = format!("cut to its first {limit} of {total} characters");
        return Part::Text {
            text: format!("{kept}\n[harness9: this resource was {note}]"),
            cut: Some(note),
        };
    }
    let Some(blob) = &c.blob else {
        return Part::Text {
            text: "[no text and no data]".into(),
            cut: None,
        };
    };
    let size = c.blob_len().unwrap_or(0);
    let mime = c.mime_type.as_deref().unwrap_or("application/octet-stream");
    if IMAGE_TYPES.contains(&mime) && size <= MAX_RESOURCE_IMAGE_BYTES {
        return Part::Image {
            media_type: mime.to_string(),
            data: blob.clone(),
        };
    }
    let why = if IMAGE_TYPES.contains(&mime) {
        format!("larger than the {MAX_RESOURCE_IMAGE_BYTES} bytes sent as an image")
    } else {
        "binary data that is neither text nor an image".into()
    };
    let note = format!("{mime}, {size} bytes: {why}; it is not sent");
    Part::Text {
        text: format!("[{note}]"),
        cut: Some(note),
    }
}

pub fn list_definition() -> ToolDefinition {
    ToolDefinition {
        name: LIST_RESOURCES_TOOL.into(),
        description: "Lists the resources (files, documents, data) the project's MCP servers offer, with their URIs, and the URI templates of resources that take parameters. Read one with read_mcp_resource.".into(),
        input_schema: crate::mcp::schema_text::SchemaText::from(json!({
            "type": "object",
            "properties": {
                "server": {"type": "string", "description": "Only this server's resources (default: every server's)."}
            }
        })),
    }
}

pub fn read_definition() -> ToolDefinition {
    ToolDefinition {
        name: READ_RESOURCE_TOOL.into(),
        description: "Reads one resource of an MCP server by its URI (from list_mcp_resources, or a template with its parameters filled in).".into(),
        input_schema: crate::mcp::schema_text::SchemaText::from(json!({
            "type": "object",
            "properties": {
                "server": {"type": "string", "description": "The server that has the resource."},
                "uri": {"type": "string", "description": "The resource's URI."}
            },
            "required": ["server", "uri"]
        })),
    }
}

/// Runs `list_mcp_resources`: one line per resource, then the templates.
pub async fn run_list(
    access: &dyn ResourceAccess,
    arguments: &Value,
) -> Result<String, BuiltinToolError> {
    let server = arguments
        .get("server")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string);
    let (resources, templates) = access
        .list(server)
        .await
        .map_err(BuiltinToolError::Resources)?;
    if resources.is_empty() && templates.is_empty() {
        return Ok("No server lists any resources.".into());
    }
    let mut text = format!("{} resource(s):\n", resources.len());
    for r in resources.iter().take(MAX_LISTED_RESOURCES) {
        let res = &r.resource;
        let name = res.title.as_deref().unwrap_or(&res.name);
        let mime = res.mime_type.as_deref().unwrap_or("-");
        text.push_str(&format!(
            "- server {}: {} ({name}, {mime})",
            r.server, res.uri
        ));
        if let Some(d) = res.description.as_deref().and_then(|d| d.lines().next()) {
            text.push_str(&format!(": {d}"));
        }
        text.push('\n');
    }
    if resources.len() > MAX_LISTED_RESOURCES {
        text.push_str(&format!(
            "… and {} more; give \"server\" to list one server's.\n",
            resources.len() - MAX_LISTED_RESOURCES
        ));
    }
    if !templates.is_empty() {
        text.push_str(&format!(
            "{} resource template(s) (fill in the {{parameters}} to get a URI):\n",
            templates.len()
        ));
        for t in templates.iter().take(MAX_LISTED_RESOURCES) {
            let tpl = &t.template;
            let name = tpl.title.as_deref().unwrap_or(&tpl.name);
            text.push_str(&format!(
                "- server {}: {} ({name})\n",
                t.server, tpl.uri_template
            ));
        }
    }
    Ok(text)
}

/// Runs `read_mcp_resource`: the text of the contents and the images among them.
pub async fn run_read(
    access: &dyn ResourceAccess,
    arguments: &Value,
) -> Result<(String, Vec<(String, String)>), BuiltinToolError> {
    let field = |k: &str| {
        arguments
            .get(k)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    let (Some(server), Some(uri)) = (field("server"), field("uri")) else {
        return Err(BuiltinToolError::NoServerOrUri(LIST_RESOURCES_TOOL));
    };
    let read = access
        .read(server.clone(), uri)
        .await
        .map_err(BuiltinToolError::Resources)?;
    let mut texts = Vec::new();
    let mut images = Vec::new();
    // The engine saves a long result and gives the model its first page.
    let mut budget = usize::MAX;
    for c in &read.contents {
        let header = resource_header(&server, &c.uri, c.mime_type.as_deref());
        match describe(c, &mut budget) {
            Part::Text { text, .. } => texts.push(format!("{header}\n{text}")),
            Part::Image { media_type, data } => {
                texts.push(format!("{header}\n[image]"));
                images.push((media_type, data));
            }
        }
    }
    if texts.is_empty() {
        texts.push("The server returned no content.".into());
    }
    Ok((texts.join("\n\n"), images))
}

#[cfg(test)]
mod tests {
    use super::*;
    use parking_lot::Mutex;

    use futures::FutureExt;

    /// Answers every read with the contents given for its URI.
    struct Fake(Mutex<Vec<ResourceContents>>);

    impl ResourceAccess for Fake {
        fn has_resources(&self) -> bool {
            true
        }
        fn list(&self, _server: Option<String>) -> BoxFuture<'_, Result<Listing, FeatureError>> {
            async { Ok((Vec::new(), Vec::new())) }.boxed()
        }
        fn read(
            &self,
            _server: String,
            uri: String,
        ) -> BoxFuture<'_, Result<ReadResourceResult, FeatureError>> {
            let contents: Vec<ResourceContents> = self
                .0
                .lock()
                .iter()
                .filter(|c| c.uri == uri)
                .cloned()
                .collect();
            async move {
                Ok(ReadResourceResult {
                    contents,
                    meta: None,
                })
            }
            .boxed()
        }
    }

    fn contents(
        uri: &str,
        mime: &str,
        text: Option<String>,
        blob: Option<&str>,
    ) -> ResourceContents {
        ResourceContents {
            uri: uri.into(),
            mime_type: Some(mime.into()),
            text,
            blob: blob.map(str::to_string),
            extra: Default::default(),
        }
    }

    fn pick(uri: &str) -> ResourceRef {
        ResourceRef {
            server: "s".into(),
            uri: uri.into(),
        }
    }

    #[tokio::test]
    async fn long_text_is_cut_with_a_note_and_images_go_as_images() {
        let long = "x".repeat(MAX_RESOURCE_CHARS + 10);
        let fake = Fake(Mutex::new(vec![
            contents("a://long", "text/plain", Some(long), None),
            contents("a://img", "image/png", None, Some("iVBORw0KGgo=")),
            contents("a://zip", "application/zip", None, Some("UEsDBA==")),
        ]));
        let out =
            read_attachments(&fake, &[pick("a://long"), pick("a://img"), pick("a://zip")]).await;
        let texts: Vec<String> = out
            .blocks
            .iter()
            .map(|b| match b {
                Block::Resource {
                    content: ResultPart::Text { text },
                    ..
                } => text.clone(),
                Block::Resource {
                    content: ResultPart::Image { media_type, .. },
                    ..
                } => format!("<image {media_type}>"),
                other @ (Block::Text { .. }
                | Block::Image { .. }
                | Block::ToolUse { .. }
                | Block::ToolResult { .. }) => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(texts.len(), 4);
        assert!(texts[0]
            .starts_with("[attached resource a://long (text/plain) from MCP server \"s\"]\nxxx"));
        assert!(texts[0].ends_with(&format!(
            "\n[harness9: this resource was cut to its first {MAX_RESOURCE_CHARS} of {} characters]",
            MAX_RESOURCE_CHARS + 10
        )));
        assert_eq!(
            texts[1],
            "[attached resource a://img (image/png) from MCP server \"s\"]\n[the image follows]"
        );
        assert_eq!(texts[2], "<image image/png>");
        assert_eq!(
            texts[3],
            "[attached resource a://zip (application/zip) from MCP server \"s\"]\n[application/zip, 4 bytes: binary data that is neither text nor an image; it is not sent]"
        );
        assert_eq!(out.notes.len(), 2, "{:?}", out.notes);
    }

    #[tokio::test]
    async fn all_attachments_share_one_budget() {
        let part = "y".repeat(MAX_RESOURCE_CHARS);
        let uris: Vec<String> = (0..5).map(|i| format!("a://{i}")).collect();
        let fake = Fake(Mutex::new(
            uris.iter()
                .map(|u| contents(u, "text/plain", Some(part.clone()), None))
                .collect(),
        ));
        let refs: Vec<ResourceRef> = uris.iter().map(|u| pick(u)).collect();
        let out = read_attachments(&fake, &refs).await;
        let kept: usize = out
            .blocks
            .iter()
            .map(|b| match b {
                Block::Resource {
                    content: ResultPart::Text { text },
                    ..
                } => text.chars().filter(|c| *c == 'y').count(),
                Block::Text { .. }
                | Block::Image { .. }
                | Block::ToolUse { .. }
                | Block::ToolResult { .. }
                | Block::Resource { .. } => 0,
            })
            .sum();
        assert_eq!(kept, MAX_ATTACHED_CHARS);
        assert_eq!(out.notes.len(), 1);
    }
}
