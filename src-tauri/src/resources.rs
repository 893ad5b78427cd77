//! Resources in the desktop app: the bridge payloads of the Resources tab (resources,
//! templates, a bounded preview of what reading one returns, completions), the task that
//! forwards list changes and resource updates to the window, and saving a resource into
//! the Downloads folder. The web view never gets file-system access: the file is written
//! here, from what the server sent, under a name made safe by the core.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tauri::{AppHandle, Manager as _};
use tokio::sync::broadcast::error::RecvError;
use tokio::task::AbortHandle;
use ts_rs::TS;

use harness9::engine::resources::ResourceRef;
use harness9::mcp::features::{CompletionRef, ReadResourceResult, ResourceContents};
use harness9::mcp::manager::{FeatureError, ServerResource, ServerTemplate, SurfaceEvent};
use harness9::Harness;

use crate::bridge::{BridgeError, BridgeResult, ErrorCode, ProjectEmitter};
use crate::prompts::CompletionDto;

/// The event that tells the window resources changed: [`ResourceEventDto`].
pub const RESOURCES_EVENT: &str = "resources-changed";
/// Most characters of a text resource the preview shows.
pub const MAX_PREVIEW_CHARS: usize = 100_000;
/// Largest image (base64 characters) shown inline; larger ones are offered for download.
pub const MAX_INLINE_IMAGE_CHARS: usize = 8 * 1024 * 1024;

/// One resource of one server.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ResourceDto {
    pub server: String,
    pub uri: String,
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub mime_type: Option<String>,
    /// Bytes, when the server says.
    pub size: Option<u64>,
}

/// One resource template of one server.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplateDto {
    pub server: String,
    pub uri_template: String,
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub mime_type: Option<String>,
}

/// What the Resources tab lists.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ResourceListDto {
    pub resources: Vec<ResourceDto>,
    pub templates: Vec<ResourceTemplateDto>,
    /// Whether the server lets clients subscribe to updates.
    pub can_subscribe: bool,
}

/// One part of what reading a resource returned, ready to show.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum ResourcePartDto {
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

#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ResourceReadDto {
    pub parts: Vec<ResourcePartDto>,
}

/// A resource picked in the chat's `@` picker.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, TS)]
pub struct AttachmentDto {
    pub server: String,
    pub uri: String,
}

impl From<AttachmentDto> for ResourceRef {
    fn from(a: AttachmentDto) -> Self {
        ResourceRef {
            server: a.server,
            uri: a.uri,
        }
    }
}

/// What changed: a server's listing, or a subscribed resource.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ResourceEventDto {
    Listing { server: String },
    Updated { server: String, uri: String },
}

impl From<&ServerResource> for ResourceDto {
    fn from(r: &ServerResource) -> Self {
        let res = &r.resource;
        ResourceDto {
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

impl From<&ServerTemplate> for ResourceTemplateDto {
    fn from(t: &ServerTemplate) -> Self {
        let tpl = &t.template;
        ResourceTemplateDto {
            server: t.server.clone(),
            uri_template: tpl.uri_template.clone(),
            name: tpl.name.clone(),
            title: tpl.title.clone(),
            description: tpl.description.clone(),
            mime_type: tpl.mime_type.clone(),
        }
    }
}

fn part(c: &ResourceContents) -> ResourcePartDto {
    if let Some(text) = &c.text {
        let total = text.chars().count();
        let truncated = total > MAX_PREVIEW_CHARS;
        return ResourcePartDto::Text {
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
        (Some(b), Some(m)) if is_image(m) && b.len() <= MAX_INLINE_IMAGE_CHARS => {
            ResourcePartDto::Image {
                uri: c.uri.clone(),
                mime_type: m.to_string(),
                data_url: format!("data:{m};base64,{}", b.trim()),
                bytes,
            }
        }
        _ => ResourcePartDto::Binary {
            uri: c.uri.clone(),
            mime_type: c.mime_type.clone(),
            bytes,
        },
    }
}

/// Image types a web view shows from a `data:` URL (SVG excluded: it can carry script).
fn is_image(mime: &str) -> bool {
    let m = mime.to_ascii_lowercase();
    m.starts_with("image/") && !m.contains("svg")
}

impl From<&ReadResourceResult> for ResourceReadDto {
    fn from(r: &ReadResourceResult) -> Self {
        ResourceReadDto {
            parts: r.contents.iter().map(part).collect(),
        }
    }
}

pub fn feature_error(e: FeatureError) -> BridgeError {
    let code = match &e {
        FeatureError::UnknownServer { .. } => ErrorCode::NotFound,
        FeatureError::NotConnected { .. } | FeatureError::Unsupported { .. } => {
            ErrorCode::NotConnected
        }
        FeatureError::Client { .. } => ErrorCode::ToolFailed,
    };
    BridgeError::new(code, e.to_string())
}

/// The resources and templates of one server (or every connected one).
pub async fn list(harness: &Harness, server: Option<String>) -> BridgeResult<ResourceListDto> {
    let server = server.as_deref();
    let resources = harness.resources(server).await.map_err(feature_error)?;
    let templates = harness
        .resource_templates(server)
        .await
        .map_err(feature_error)?;
    Ok(ResourceListDto {
        resources: resources.iter().map(Into::into).collect(),
        templates: templates.iter().map(Into::into).collect(),
        can_subscribe: server.is_some_and(|s| harness.can_subscribe(s)),
    })
}

pub async fn read(harness: &Harness, server: &str, uri: &str) -> BridgeResult<ResourceReadDto> {
    let r = harness
        .read_resource(server, uri)
        .await
        .map_err(feature_error)?;
    Ok((&r).into())
}

pub async fn subscribe(harness: &Harness, server: &str, uri: &str, on: bool) -> BridgeResult<()> {
    let done = match on {
        true => harness.subscribe_resource(server, uri).await,
        false => harness.unsubscribe_resource(server, uri).await,
    };
    done.map_err(feature_error)
}

/// Completes one variable of a template, given the values filled in so far.
pub async fn complete(
    harness: &Harness,
    server: &str,
    uri_template: &str,
    variable: &str,
    value: &str,
    context: Map<String, Value>,
) -> BridgeResult<CompletionDto> {
    let reference = CompletionRef::Resource {
        uri: uri_template.to_string(),
    };
    let c = harness
        .complete(server, &reference, variable, value, &context)
        .await
        .map_err(feature_error)?;
    Ok(c.into())
}

/// Saves a resource into the user's Downloads folder; returns the file written.
pub async fn save(
    app: &AppHandle,
    harness: &Harness,
    server: &str,
    uri: &str,
) -> BridgeResult<String> {
    let folder = app.path().download_dir().map_err(|e| {
        BridgeError::new(
            ErrorCode::Io,
            format!("no Downloads folder is known ({e}); set XDG_DOWNLOAD_DIR"),
        )
    })?;
    let _ = std::fs::create_dir_all(&folder);
    let path = harness
        .save_resource(server, uri, &folder)
        .await
        .map_err(|e| BridgeError::new(ErrorCode::Io, e.to_string()))?;
    Ok(path.display().to_string())
}

/// Forwards listing changes and resource updates to the window.
pub fn forward(app: ProjectEmitter, harness: &Harness) -> AbortHandle {
    let mut rx = harness.subscribe_surface();
    tokio::spawn(async move {
        loop {
            let dto = match rx.recv().await {
                Ok(SurfaceEvent::ListingChanged { server }) => ResourceEventDto::Listing { server },
                Ok(SurfaceEvent::ResourceUpdated { server, uri }) => {
                    ResourceEventDto::Updated { server, uri }
                }
                Ok(SurfaceEvent::ElicitationComplete { .. }) => continue,
                Err(RecvError::Lagged(_)) => ResourceEventDto::Listing {
                    server: String::new(),
                },
                Err(RecvError::Closed) => return,
            };
            app.emit(RESOURCES_EVENT, dto);
        }
    })
    .abort_handle()
}
