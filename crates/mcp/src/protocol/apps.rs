//! MCP Apps (the `io.modelcontextprotocol/ui` extension, stable revision `2026-01-26`): what
//! a tool says about its interactive view (`_meta.ui` of a tool: the view's `ui://`
//! resource and who may see the tool), what a view's resource declares (`_meta.ui` of its
//! content item or of its `resources/list` entry: the domains it needs, the permissions
//! it asks for, its border), and how a client announces that it renders views.
//!
//! Everything here only reads what a server sent; what a host allows a view is decided
//! above this crate. Values that do not have the expected shape are ignored, never
//! rejected: a tool with a broken `_meta.ui` is a tool without a view.

use serde::Serialize;
use serde_json::{json, Map, Value};

/// The extension's identifier, the key under `extensions` in the client capabilities.
pub const APPS_EXTENSION: &str = "io.modelcontextprotocol/ui";

/// The MIME type of a view's HTML document; the only one a host renders.
pub const VIEW_MIME_TYPE: &str = "text/html;profile=mcp-app";

/// The revision of the view protocol (`ui/initialize`'s `protocolVersion`).
pub const VIEW_PROTOCOL_VERSION: &str = "2026-01-26";

/// The URI scheme of view resources.
pub const UI_SCHEME: &str = "ui://";

/// The deprecated flat key some servers still send beside (or instead of)
/// `_meta.ui.resourceUri`.
const FLAT_RESOURCE_URI: &str = "ui/resourceUri";

/// What a client puts under `extensions` in its capabilities to say it renders views
/// (`{"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}`).
pub fn apps_extension() -> (String, Value) {
    (
        APPS_EXTENSION.to_string(),
        json!({ "mimeTypes": [VIEW_MIME_TYPE] }),
    )
}

/// Who may see a tool (`_meta.ui.visibility`). Absent means both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Visibility {
    /// The model is offered the tool (`"model"`).
    pub model: bool,
    /// A view of the same server may call it (`"app"`).
    pub app: bool,
}

impl Default for Visibility {
    fn default() -> Self {
        Visibility {
            model: true,
            app: true,
        }
    }
}

impl Visibility {
    /// Reads a `visibility` value: a list of `"model"` / `"app"` (unknown words are
    /// ignored; a lone string counts as a list of one); anything else means both.
    fn of(value: Option<&Value>) -> Visibility {
        let words: Vec<&str> = match value {
            Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).collect(),
            Some(Value::String(one)) => vec![one.as_str()],
            _ => return Visibility::default(),
        };
        Visibility {
            model: words.contains(&"model"),
            app: words.contains(&"app"),
        }
    }

    /// Only views may call it: never offered to the model.
    pub fn app_only(&self) -> bool {
        !self.model
    }
}

/// What a tool's `_meta.ui` says: its view and who may see it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ToolUi {
    /// The `ui://` resource of the tool's view; `None` for a tool without one (an
    /// app-only tool need not have a view).
    pub resource_uri: Option<String>,
    pub visibility: Visibility,
}

impl ToolUi {
    /// Reads a tool's `_meta`: `_meta.ui.resourceUri`, else the flat
    /// `_meta["ui/resourceUri"]`; values that are not `ui://` URIs are ignored. `None`
    /// when the tool says nothing about a view (no view, visible to both).
    pub fn of(meta: Option<&Value>) -> Option<ToolUi> {
        let meta = meta?.as_object()?;
        let ui = meta.get("ui").and_then(Value::as_object);
        let is_ui = |v: &&str| v.starts_with(UI_SCHEME) && v.len() > UI_SCHEME.len();
        let nested = ui
            .and_then(|u| u.get("resourceUri"))
            .and_then(Value::as_str)
            .filter(is_ui);
        let flat = meta
            .get(FLAT_RESOURCE_URI)
            .and_then(Value::as_str)
            .filter(is_ui);
        let found = ToolUi {
            resource_uri: nested.or(flat).map(str::to_string),
            visibility: Visibility::of(ui.and_then(|u| u.get("visibility"))),
        };
        (found != ToolUi::default()).then_some(found)
    }

    /// Whether the tool has a view.
    pub fn has_view(&self) -> bool {
        self.resource_uri.is_some()
    }
}

/// The domains a view declares it needs (`_meta.ui.csp` of its resource), as sent;
/// the host checks each entry before it becomes part of a policy.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ViewCspDeclaration {
    /// Origins the view may connect to (`fetch`, WebSocket). Empty: no network.
    pub connect_domains: Vec<String>,
    /// Origins of scripts, styles, images, fonts and media.
    pub resource_domains: Vec<String>,
    /// Origins of frames inside the view; `None`: none.
    pub frame_domains: Option<Vec<String>>,
    /// Origins allowed in `<base href>`; `None`: the view's own.
    pub base_uri_domains: Option<Vec<String>>,
}

impl ViewCspDeclaration {
    fn of(value: &Value) -> Option<ViewCspDeclaration> {
        let csp = value.as_object()?;
        let list = |key: &str| -> Option<Vec<String>> {
            match csp.get(key)? {
                Value::Array(items) => Some(
                    items
                        .iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect(),
                ),
                Value::String(one) => Some(vec![one.clone()]),
                _ => None,
            }
        };
        Some(ViewCspDeclaration {
            connect_domains: list("connectDomains").unwrap_or_default(),
            resource_domains: list("resourceDomains").unwrap_or_default(),
            frame_domains: list("frameDomains"),
            base_uri_domains: list("baseUriDomains"),
        })
    }
}

/// The device permissions a view asks for (`_meta.ui.permissions`: each present key is
/// one request).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ViewPermissions {
    pub camera: bool,
    pub microphone: bool,
    pub geolocation: bool,
    pub clipboard_write: bool,
}

impl ViewPermissions {
    fn of(value: &Value) -> ViewPermissions {
        let Some(p) = value.as_object() else {
            return ViewPermissions::default();
        };
        // `{}` is the spec's form; `true` is read the same; `false` and `null` are not.
        let asks = |key: &str| {
            p.get(key)
                .is_some_and(|v| !matches!(v, Value::Null | Value::Bool(false)))
        };
        ViewPermissions {
            camera: asks("camera"),
            microphone: asks("microphone"),
            geolocation: asks("geolocation"),
            clipboard_write: asks("clipboardWrite"),
        }
    }

    pub fn any(&self) -> bool {
        self.camera || self.microphone || self.geolocation || self.clipboard_write
    }

    /// The permissions asked for, by their names in the iframe `allow` attribute
    /// (`camera`, `microphone`, `geolocation`, `clipboard-write`).
    pub fn features(&self) -> Vec<&'static str> {
        [
            (self.camera, "camera"),
            (self.microphone, "microphone"),
            (self.geolocation, "geolocation"),
            (self.clipboard_write, "clipboard-write"),
        ]
        .into_iter()
        .filter_map(|(on, name)| on.then_some(name))
        .collect()
    }
}

/// What a view's resource declares in `_meta.ui`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ViewResourceMeta {
    /// `None`: nothing declared (the host's restrictive default applies).
    pub csp: Option<ViewCspDeclaration>,
    pub permissions: ViewPermissions,
    /// A dedicated origin in a host-defined format. Read, never used: harness9 gives
    /// each server's views an origin of its own.
    pub domain: Option<String>,
    /// `None`: the host decides.
    pub prefers_border: Option<bool>,
}

impl ViewResourceMeta {
    /// Reads `_meta.ui` of a content item (`item_meta`) and of the resource's
    /// `resources/list` entry (`listed_meta`), both the whole `_meta` objects; a key the
    /// content item has wins over the listed one.
    pub fn of(item_meta: Option<&Value>, listed_meta: Option<&Value>) -> ViewResourceMeta {
        let ui = |m: Option<&Value>| -> Map<String, Value> {
            m.and_then(|m| m.get("ui"))
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default()
        };
        let mut merged = ui(listed_meta);
        merged.extend(ui(item_meta));
        ViewResourceMeta {
            csp: merged.get("csp").and_then(ViewCspDeclaration::of),
            permissions: merged
                .get("permissions")
                .map(ViewPermissions::of)
                .unwrap_or_default(),
            domain: merged
                .get("domain")
                .and_then(Value::as_str)
                .map(str::to_string),
            prefers_border: merged.get("prefersBorder").and_then(Value::as_bool),
        }
    }
}

/// Whether a MIME type is the one of views: `text/html;profile=mcp-app`, compared without
/// case or spaces around `;`.
pub fn is_view_mime_type(mime: &str) -> bool {
    let norm: String = mime
        .split(';')
        .map(|p| p.trim().to_ascii_lowercase())
        .collect::<Vec<_>>()
        .join(";");
    norm == VIEW_MIME_TYPE
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_ui_reads_nested_then_flat_and_ignores_other_schemes() {
        let of = |v: Value| ToolUi::of(Some(&v));
        assert_eq!(of(json!({})), None);
        assert_eq!(of(json!({"other": 1})), None);
        assert_eq!(
            of(json!({"ui": {"resourceUri": "ui://a/view.html"}, "ui/resourceUri": "ui://b"})),
            Some(ToolUi {
                resource_uri: Some("ui://a/view.html".into()),
                visibility: Visibility::default()
            })
        );
        assert_eq!(
            of(json!({"ui/resourceUri": "ui://flat"}))
                .unwrap()
                .resource_uri,
            Some("ui://flat".into())
        );
        // Not ui://: ignored (the flat key is still read).
        assert_eq!(
            of(json!({"ui": {"resourceUri": "https://evil.example/x"}, "ui/resourceUri": "ui://ok"}))
                .unwrap()
                .resource_uri,
            Some("ui://ok".into())
        );
        assert_eq!(
            of(json!({"ui": {"resourceUri": "file:///etc/passwd"}})),
            None
        );
        assert_eq!(of(json!({"ui": {"resourceUri": "ui://"}})), None);
        assert_eq!(ToolUi::of(None), None);
    }

    #[test]
    fn visibility_is_a_subset_and_absent_means_both() {
        let vis = |v: Value| {
            ToolUi::of(Some(&json!({"ui": {"visibility": v}})))
                .map(|u| u.visibility)
                .unwrap_or_default()
        };
        let both = Visibility {
            model: true,
            app: true,
        };
        assert_eq!(vis(Value::Null), both);
        assert_eq!(vis(json!(["model", "app"])), both);
        assert_eq!(
            vis(json!(["app"])),
            Visibility {
                model: false,
                app: true
            }
        );
        assert!(vis(json!(["app"])).app_only());
        assert_eq!(
            vis(json!(["model", "other"])),
            Visibility {
                model: true,
                app: false
            }
        );
        assert_eq!(
            vis(json!([])),
            Visibility {
                model: false,
                app: false
            }
        );
        assert!(!vis(json!("app")).model);
        assert_eq!(vis(json!(7)), both);
    }

    #[test]
    fn resource_meta_merges_the_listing_under_the_content_item() {
        let listed = json!({"ui": {"prefersBorder": false, "csp": {"connectDomains": ["https://listed.example"]},
                                    "permissions": {"camera": {}}}});
        let item = json!({"ui": {"csp": {"resourceDomains": ["https://cdn.example"], "frameDomains": []},
                                  "domain": "x.example", "permissions": {"clipboardWrite": {}, "microphone": false}}});
        let m = ViewResourceMeta::of(Some(&item), Some(&listed));
        assert_eq!(
            m,
            ViewResourceMeta {
                csp: Some(ViewCspDeclaration {
                    connect_domains: vec![],
                    resource_domains: vec!["https://cdn.example".into()],
                    frame_domains: Some(vec![]),
                    base_uri_domains: None,
                }),
                permissions: ViewPermissions {
                    clipboard_write: true,
                    ..Default::default()
                },
                domain: Some("x.example".into()),
                prefers_border: Some(false),
            }
        );
        assert_eq!(m.permissions.features(), ["clipboard-write"]);
        assert_eq!(
            ViewResourceMeta::of(None, None),
            ViewResourceMeta::default()
        );
        let only_listed = ViewResourceMeta::of(None, Some(&listed));
        assert_eq!(
            only_listed.csp.unwrap().connect_domains,
            ["https://listed.example"]
        );
    }

    #[test]
    fn the_view_mime_type_is_matched_loosely_in_form_only() {
        assert!(is_view_mime_type("text/html;profile=mcp-app"));
        assert!(is_view_mime_type("Text/HTML; profile=mcp-app"));
        assert!(!is_view_mime_type("text/html"));
        assert!(!is_view_mime_type("text/html;profile=other"));
        assert_eq!(
            apps_extension(),
            (
                "io.modelcontextprotocol/ui".to_string(),
                json!({"mimeTypes": ["text/html;profile=mcp-app"]})
            )
        );
    }
}
