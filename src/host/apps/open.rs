//! Opening a view: its tool's `_meta.ui`, the `ui://` resource read from the server now,
//! its checks (MIME type, size, UTF-8), its policy, the user's consent to the device
//! permissions it declares, and the id it is known by from then on.

use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::limits::{self, TokenBucket};
use super::{
    csp, Apps, DisplayMode, HostParts, Phase, View, ViewCall, ViewDocument, ViewError, ViewOpened,
};
use crate::host::asks::{AskAnswer, ViewAsk};
use crate::mcp::apps::{is_view_mime_type, ViewPermissions, ViewResourceMeta};
use crate::mcp::features::ReadResourceResult;

/// How long opening a view waits for a server's resource listing (for the `_meta.ui` of
/// the resource's entry) when the server is still being listed.
const LISTING_WAIT: Duration = Duration::from_secs(2);

impl Apps {
    /// Opens the view of `tool` of `server` for `call` (see [`crate::Harness::open_view`]).
    pub async fn open(
        &self,
        parts: HostParts<'_>,
        server: &str,
        tool: &str,
        call: ViewCall,
    ) -> Result<ViewOpened, ViewError> {
        parts
            .manager
            .connected(server)
            .map_err(|e| ViewError::ServerUnavailable {
                server: server.to_string(),
                reason: match e {
                    crate::manager::Unavailable::Unknown { .. } => {
                        "it is not in the project's config any more".to_string()
                    }
                    crate::manager::Unavailable::NotConnected { reason, .. } => reason,
                },
            })?;
        let Some((_, def)) = parts
            .pins
            .tool_defs(Some(server))
            .into_iter()
            .find(|(_, d)| d.name == tool)
        else {
            return Err(ViewError::UnknownTool {
                server: server.to_string(),
                tool: tool.to_string(),
            });
        };
        let Some(uri) = def.ui().and_then(|u| u.resource_uri) else {
            return Err(ViewError::NoView {
                server: server.to_string(),
                tool: tool.to_string(),
            });
        };
        let read = parts
            .catalog
            .read_resource(parts.manager, server, &uri)
            .await
            .map_err(|e| ViewError::Read {
                server: server.to_string(),
                uri: uri.clone(),
                reason: e.to_string(),
            })?;
        let (html, item_meta) = document_of(&uri, read)?;
        let listed_meta = listed_meta(parts, server, &uri).await;
        let meta = ViewResourceMeta::of(item_meta.as_ref(), listed_meta.as_ref());
        let policy = csp::build(meta.csp.as_ref());
        let view_id = random_id();
        let log = parts.manager.log(server);
        let note = |text: &str| {
            if let Some(log) = &log {
                log.push(
                    crate::mcp::LogSource::View,
                    "info",
                    &format!("view {} ({tool}): {text}", super::short(&view_id)),
                );
            }
        };
        note(&format!("opened from {uri} (call {})", call.call_id));
        for d in &policy.dropped {
            note(&format!(
                "declared domain {:?} left out of its policy: {}",
                d.entry, d.why
            ));
        }
        if !policy.external.is_empty() {
            note(&format!("may reach {}", policy.external.join(", ")));
        }
        if meta.domain.is_some() {
            note("declares a domain of its own; harness9 serves each server's views from an origin of its own instead");
        }
        let granted = grant_permissions(parts, server, &view_id, meta.permissions).await;
        if meta.permissions.any() {
            let asked = meta.permissions.features().join(", ");
            match granted.any() {
                true => note(&format!("the user granted {asked}")),
                false => note(&format!("asked for {asked}; not granted")),
            }
        }
        let details = parts.catalog.server_details(parts.manager, server).ok();
        let opened = ViewOpened {
            view_id: view_id.clone(),
            server: server.to_string(),
            tool: tool.to_string(),
            resource_uri: uri,
            origin: origin_label(parts.project, server),
            csp: policy.csp.clone(),
            allow: csp::allow_attribute(&granted),
            permissions: granted.features().iter().map(|s| s.to_string()).collect(),
            external_origins: policy.external,
            dropped_domains: policy
                .dropped
                .iter()
                .map(|d| format!("{} ({})", d.entry, d.why))
                .collect(),
            prefers_border: meta.prefers_border,
            server_title: details.as_ref().and_then(|d| d.title.clone()),
            server_icons: details.map(|d| d.icons).unwrap_or_default(),
            tool_definition: serde_json::to_value(&def).unwrap_or(Value::Null),
            call,
        };
        let now = Instant::now();
        let view = View {
            opened: opened.clone(),
            document: ViewDocument {
                html,
                csp: policy.csp,
            },
            run: parts.manager.run_of(server),
            log,
            granted,
            phase: Phase::Opened,
            display_modes: Vec::new(),
            display_mode: DisplayMode::Inline,
            requests: TokenBucket::new(limits::REQUESTS_PER_SECOND, limits::REQUEST_BURST, now),
            resizes: TokenBucket::new(limits::RESIZES_PER_SECOND, limits::RESIZE_BURST, now),
            last_notice: None,
        };
        // The server may have gone while it was read: then the view goes at once.
        let current = view.run.as_ref().is_some_and(|r| r.is_connected());
        if !current {
            return Err(ViewError::ServerUnavailable {
                server: server.to_string(),
                reason: "it stopped while its view was opened".into(),
            });
        }
        self.inner.state.lock().views.insert(view_id, view);
        self.follow(parts.manager);
        Ok(opened)
    }
}

/// The view's HTML and its content item's `_meta`, from a `resources/read` answer.
fn document_of(
    uri: &str,
    read: ReadResourceResult,
) -> Result<(Arc<str>, Option<Value>), ViewError> {
    let mut contents = read.contents;
    // The item of the URI asked for, else the only one.
    let at = contents
        .iter()
        .position(|c| c.uri == uri)
        .or_else(|| (contents.len() == 1).then_some(0));
    let Some(item) = at.map(|i| contents.swap_remove(i)) else {
        return Err(not_readable(uri, "the server sent no content for it"));
    };
    let mime = item.mime_type.clone().unwrap_or_default();
    if !is_view_mime_type(&mime) {
        return Err(ViewError::NotAView {
            uri: uri.to_string(),
            mime_type: if mime.is_empty() {
                "not given".into()
            } else {
                mime
            },
        });
    }
    let too_large = |size| ViewError::TooLarge {
        uri: uri.to_string(),
        size,
        limit: limits::MAX_VIEW_BYTES,
    };
    let html: String = match (&item.text, &item.blob) {
        (Some(text), _) => {
            if text.len() > limits::MAX_VIEW_BYTES {
                return Err(too_large(text.len()));
            }
            text.clone()
        }
        (None, Some(blob)) => {
            let size = item.blob_len().unwrap_or(0);
            if size > limits::MAX_VIEW_BYTES {
                return Err(too_large(size));
            }
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(blob.trim())
                .map_err(|e| not_readable(uri, &format!("its blob is not base64 ({e})")))?;
            String::from_utf8(bytes).map_err(|_| not_readable(uri, "its blob is not UTF-8 text"))?
        }
        (None, None) => return Err(not_readable(uri, "it has neither text nor blob")),
    };
    let meta = item.extra.get("_meta").cloned();
    Ok((Arc::from(html), meta))
}

fn not_readable(uri: &str, why: &str) -> ViewError {
    ViewError::Read {
        server: String::new(),
        uri: uri.to_string(),
        reason: why.to_string(),
    }
}

/// The `_meta` of the resource's entry in the server's listing, if it lists it.
async fn listed_meta(parts: HostParts<'_>, server: &str, uri: &str) -> Option<Value> {
    let features = parts
        .catalog
        .features(parts.manager, Some(server), LISTING_WAIT)
        .await
        .ok()?;
    features.iter().find_map(|(_, f)| {
        f.resources
            .iter()
            .find(|r| r.uri == uri)
            .and_then(|r| r.extra.get("_meta").cloned())
    })
}

/// Asks the user for the permissions a view declares; what they granted (nothing when
/// nothing was declared, nobody answered, or the user said no).
async fn grant_permissions(
    parts: HostParts<'_>,
    server: &str,
    view_id: &str,
    declared: ViewPermissions,
) -> ViewPermissions {
    if !declared.any() {
        return ViewPermissions::default();
    }
    let ask = ViewAsk::Permissions {
        permissions: declared.features().iter().map(|s| s.to_string()).collect(),
    };
    match parts.asks.ask_for_view(server, view_id, ask).await {
        Ok(AskAnswer::Approve(_)) => declared,
        Ok(AskAnswer::Refuse(_) | AskAnswer::Elicit(_) | AskAnswer::Sample(_)) | Err(_) => {
            ViewPermissions::default()
        }
    }
}

/// 128 random bits as hex.
pub(super) fn random_id() -> String {
    let mut buf = [0u8; 16];
    if getrandom::fill(&mut buf).is_err() {
        // No system randomness: a hash of the time and a counter, still unique.
        static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let seed = format!(
            "{:?}{n}{}",
            std::time::SystemTime::now(),
            std::process::id()
        );
        buf.copy_from_slice(&Sha256::digest(seed.as_bytes())[..16]);
    }
    hex(&buf)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The origin label of `server`'s views in `project`: 32 lowercase hex digits, stable,
/// different per server (and per project).
pub fn origin_label(project: &std::path::Path, server: &str) -> String {
    let key = crate::userdata::project_key(project);
    let mut h = Sha256::new();
    h.update(b"harness9 view origin\0");
    h.update(key.as_bytes());
    h.update(b"\0");
    h.update(server.as_bytes());
    let digest: String = hex(&h.finalize()).chars().take(31).collect();
    format!("v{digest}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::features::ResourceContents;
    use serde_json::json;

    fn item(mime: Option<&str>, text: Option<&str>, blob: Option<&str>) -> ReadResourceResult {
        let mut extra = serde_json::Map::new();
        extra.insert("_meta".into(), json!({"ui": {"prefersBorder": true}}));
        ReadResourceResult {
            contents: vec![ResourceContents {
                uri: "ui://s/v.html".into(),
                mime_type: mime.map(str::to_string),
                text: text.map(str::to_string),
                blob: blob.map(str::to_string),
                extra,
            }],
            meta: None,
        }
    }

    #[test]
    fn documents_are_checked() {
        let mime = Some("text/html;profile=mcp-app");
        let (html, meta) =
            document_of("ui://s/v.html", item(mime, Some("<p>hi</p>"), None)).unwrap();
        assert_eq!(&*html, "<p>hi</p>");
        assert_eq!(meta, Some(json!({"ui": {"prefersBorder": true}})));
        let (html, _) =
            document_of("ui://s/v.html", item(mime, None, Some("PHA+aGk8L3A+"))).unwrap();
        assert_eq!(&*html, "<p>hi</p>");
        assert_eq!(
            document_of("ui://s/v.html", item(Some("text/html"), Some("x"), None))
                .unwrap_err()
                .to_string(),
            "ui://s/v.html is not a view: its type is text/html, not text/html;profile=mcp-app"
        );
        assert_eq!(
            document_of("ui://s/v.html", item(mime, None, Some("%%%")))
                .unwrap_err()
                .code(),
            "read-failed"
        );
        let big = "x".repeat(limits::MAX_VIEW_BYTES + 1);
        assert_eq!(
            document_of("ui://s/v.html", item(mime, Some(&big), None))
                .unwrap_err()
                .code(),
            "view-too-large"
        );
    }

    #[test]
    fn ids_are_random_and_origins_stable_per_server() {
        let (a, b) = (random_id(), random_id());
        assert_eq!(a.len(), 32);
        assert_ne!(a, b);
        let p = std::path::Path::new("/srv/project");
        let o = origin_label(p, "files");
        assert_eq!(o, origin_label(p, "files"));
        assert_ne!(o, origin_label(p, "other"));
        assert_eq!(o.len(), 32);
        assert!(o
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()));
    }
}
