//! Resources as a front end's Resources tab shows them: each resource and template with
//! its server, what a server offers (with whether it takes subscriptions), and a bounded
//! preview of what reading a resource returns (text cut to [`MAX_PREVIEW_CHARS`], images
//! as `data:` URLs up to [`MAX_INLINE_IMAGE_CHARS`], other binary data described for a
//! download).

use serde::Serialize;

use super::Harness;
use crate::host::catalog::{FeatureError, ServerResource, ServerTemplate};
use crate::mcp::features::{ReadResourceResult, ResourceContents};

/// Most characters of a text resource the preview shows.
pub const MAX_PREVIEW_CHARS: usize = 100_000;
/// Largest image (base64 characters) shown inline; larger ones are offered for download.
pub const MAX_INLINE_IMAGE_CHARS: usize = 8 * 1024 * 1024;

/// One resource of one server, as a listing shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ResourceEntry {
    pub server: String,
    pub uri: String,
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub mime_type: Option<String>,
    /// Bytes, when the server says.
    pub size: Option<u64>,
}

/// One resource template of one server, as a listing shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct TemplateEntry {
    pub server: String,
    pub uri_template: String,
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub mime_type: Option<String>,
}

/// What the servers of a listing offer.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ResourceListing {
    pub resources: Vec<ResourceEntry>,
    pub templates: Vec<TemplateEntry>,
    /// Whether the server lets clients subscribe to updates (false for a listing of
    /// every server).
    pub can_subscribe: bool,
}

/// One part of what reading a resource returned, ready to show.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum PreviewPart {
    /// Text, cut to [`MAX_PREVIEW_CHARS`] (`totalChars` says how long it was).
    Text {
        uri: String,
        mime_type: Option<String>,
        text: String,
        total_chars: u64,
        truncated: bool,
    },
    /// An image as a `data:` URL.
    Image {
        uri: String,
        mime_type: String,
        data_url: String,
        bytes: u64,
    },
    /// Other binary data: offered for download.
    Binary {
        uri: String,
        mime_type: Option<String>,
        bytes: u64,
    },
}

/// A bounded preview of what reading a resource returned.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ReadPreview {
    pub parts: Vec<PreviewPart>,
}

impl From<&ServerResource> for ResourceEntry {
    fn from(r: &ServerResource) -> Self {
        let res = &r.resource;
        ResourceEntry {
            server: r.server.clone(),
            uri: res.uri.clone(),
            name: res.name.clone(),
            title: res.title.clone(),
            description: res.description.clone(),
            mime_type: res.mime_type.clone(),
            size: res.size,
        }
    }
}

impl From<&ServerTemplate> for TemplateEntry {
    fn from(t: &ServerTemplate) -> Self {
        let tpl = &t.template;
        TemplateEntry {
            server: t.server.clone(),
            uri_template: tpl.uri_template.clone(),
            name: tpl.name.clone(),
            title: tpl.title.clone(),
            description: tpl.description.clone(),
            mime_type: tpl.mime_type.clone(),
        }
    }
}

impl PreviewPart {
    /// The preview of one part of a read.
    pub fn of(c: &ResourceContents) -> PreviewPart {
        if let Some(text) = &c.text {
            let total = text.chars().count();
            let truncated = total > MAX_PREVIEW_CHARS;
            return PreviewPart::Text {
                uri: c.uri.clone(),
                mime_type: c.mime_type.clone(),
                text: match truncated {
                    true => text.chars().take(MAX_PREVIEW_CHARS).collect(),
                    false => text.clone(),
                },
                total_chars: total as u64,
                truncated,
            };
        }
        let bytes = c.blob_len().unwrap_or(0) as u64;
        match (&c.blob, c.mime_type.as_deref()) {
            (Some(b), Some(m)) if is_inline_image(m) && b.len() <= MAX_INLINE_IMAGE_CHARS => {
                PreviewPart::Image {
                    uri: c.uri.clone(),
                    mime_type: m.to_string(),
                    data_url: format!("data:{m};base64,{}", b.trim()),
                    bytes,
                }
            }
            _ => PreviewPart::Binary {
                uri: c.uri.clone(),
                mime_type: c.mime_type.clone(),
                bytes,
            },
        }
    }
}

/// Image types a web view shows from a `data:` URL (SVG excluded: it can carry script).
fn is_inline_image(mime: &str) -> bool {
    let m = mime.to_ascii_lowercase();
    m.starts_with("image/") && !m.contains("svg")
}

impl From<&ReadResourceResult> for ReadPreview {
    fn from(r: &ReadResourceResult) -> Self {
        ReadPreview {
            parts: r.contents.iter().map(PreviewPart::of).collect(),
        }
    }
}

impl Harness {
    /// The resources and templates of one server (or every connected one), and whether
    /// that server takes subscriptions.
    pub async fn resource_listing(
        &self,
        server: Option<&str>,
    ) -> Result<ResourceListing, FeatureError> {
        let resources = self.resources(server).await?;
        let templates = self.resource_templates(server).await?;
        Ok(ResourceListing {
            resources: resources.iter().map(Into::into).collect(),
            templates: templates.iter().map(Into::into).collect(),
            can_subscribe: server.is_some_and(|s| self.can_subscribe(s)),
        })
    }

    /// Reads a resource and returns a bounded preview of it.
    pub async fn preview_resource(
        &self,
        server: &str,
        uri: &str,
    ) -> Result<ReadPreview, FeatureError> {
        Ok((&self.read_resource(server, uri).await?).into())
    }

    /// Follows a resource's updates ([`crate::host::catalog::SurfaceEvent::ResourceUpdated`])
    /// when `on`, else stops following it.
    pub async fn follow_resource(
        &self,
        server: &str,
        uri: &str,
        on: bool,
    ) -> Result<(), FeatureError> {
        match on {
            true => self.subscribe_resource(server, uri).await,
            false => self.unsubscribe_resource(server, uri).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn contents(v: serde_json::Value) -> ResourceContents {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn previews_are_bounded() {
        let long = "é".repeat(MAX_PREVIEW_CHARS + 5);
        let p = PreviewPart::of(&contents(json!({"uri": "a://t", "text": long})));
        let PreviewPart::Text {
            text,
            total_chars,
            truncated,
            ..
        } = p
        else {
            panic!("text expected")
        };
        assert_eq!(text.chars().count(), MAX_PREVIEW_CHARS);
        assert_eq!(total_chars, (MAX_PREVIEW_CHARS + 5) as u64);
        assert!(truncated);
    }

    #[test]
    fn images_inline_as_data_urls_but_svg_does_not() {
        let png = contents(json!({"uri": "a://p", "mimeType": "image/png", "blob": "iVBORw0K"}));
        assert_eq!(
            serde_json::to_value(PreviewPart::of(&png)).unwrap(),
            json!({"kind": "image", "uri": "a://p", "mimeType": "image/png",
                   "dataUrl": "data:image/png;base64,iVBORw0K", "bytes": 6})
        );
        let svg =
            contents(json!({"uri": "a://s", "mimeType": "image/svg+xml", "blob": "PHN2Zz4="}));
        assert!(matches!(PreviewPart::of(&svg), PreviewPart::Binary { .. }));
    }
}
