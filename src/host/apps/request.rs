//! Everything a view may send its host, typed ([`ViewRequest`]), and how it is read from
//! the JSON-RPC method and params the frame posted ([`ViewRequest::parse`]). Reading only
//! checks shapes; what a view may do is decided by the service.
//!
//! Tolerated beyond the stable text (as `@modelcontextprotocol/ext-apps` 2.x sends them):
//! `ui/message` content as one block or an array of blocks, `ui/download-file`,
//! `ui/notifications/request-teardown`, and view-initiated `sampling/createMessage`,
//! `resources/list`, `resources/templates/list` and `prompts/list`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::ViewError;
use crate::mcp::requests::CreateMessageRequest;

/// A display mode of a view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum DisplayMode {
    Inline,
    Fullscreen,
    Pip,
}

impl DisplayMode {
    pub fn name(self) -> &'static str {
        match self {
            DisplayMode::Inline => "inline",
            DisplayMode::Fullscreen => "fullscreen",
            DisplayMode::Pip => "pip",
        }
    }

    fn parse(s: &str) -> Option<DisplayMode> {
        match s {
            "inline" => Some(DisplayMode::Inline),
            "fullscreen" => Some(DisplayMode::Fullscreen),
            "pip" => Some(DisplayMode::Pip),
            _ => None,
        }
    }
}

/// One file a view offers for download.
#[derive(Debug, Clone, PartialEq)]
pub enum DownloadItem {
    /// The data is in the message (an embedded resource: `text` or base64 `blob`).
    Embedded {
        uri: String,
        mime_type: Option<String>,
        text: Option<String>,
        blob: Option<String>,
    },
    /// A resource of the view's server, read when offered.
    Link {
        uri: String,
        name: Option<String>,
        mime_type: Option<String>,
    },
}

/// What a view asks of its host.
#[derive(Debug, Clone, PartialEq)]
pub enum ViewRequest {
    /// `ui/initialize`: the view's first message.
    Initialize {
        protocol_version: String,
        app_info: Value,
        /// The display modes the view supports (`appCapabilities.availableDisplayModes`).
        display_modes: Vec<DisplayMode>,
    },
    /// `ui/notifications/initialized`: from now on the host may talk to the view.
    Initialized,
    /// `ping`.
    Ping,
    /// `tools/call` to the view's own server.
    CallTool {
        name: String,
        arguments: Option<Map<String, Value>>,
    },
    /// `resources/read` from the view's own server.
    ReadResource { uri: String },
    /// `resources/list` of the view's own server.
    ListResources,
    /// `resources/templates/list` of the view's own server.
    ListResourceTemplates,
    /// `prompts/list` of the view's own server.
    ListPrompts,
    /// `ui/open-link`.
    OpenLink { url: String },
    /// `ui/message`: a user message for the chat (content blocks).
    Message { content: Vec<Value> },
    /// `ui/update-model-context`: replaces what the view last gave the model.
    UpdateModelContext {
        content: Vec<Value>,
        structured_content: Option<Value>,
    },
    /// `ui/request-display-mode`.
    RequestDisplayMode { mode: DisplayMode },
    /// `ui/download-file`.
    DownloadFile { items: Vec<DownloadItem> },
    /// `sampling/createMessage` from the view.
    CreateMessage(Box<CreateMessageRequest>),
    /// `ui/notifications/size-changed` (pixels; either may be absent).
    SizeChanged {
        width: Option<f64>,
        height: Option<f64>,
    },
    /// `notifications/message`: a log line.
    Log {
        level: String,
        logger: Option<String>,
        data: Value,
    },
    /// `ui/notifications/request-teardown`: the view asks to be closed.
    RequestTeardown,
}

impl ViewRequest {
    /// Reads what a frame posted: the JSON-RPC `method` and its `params` (absent or
    /// `null` when there were none). A method no view may send is
    /// [`ViewError::UnknownMethod`]; params of the wrong shape are [`ViewError::Invalid`].
    pub fn parse(method: &str, params: Option<Value>) -> Result<ViewRequest, ViewError> {
        let params = match params {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(map)) => map,
            Some(_) => return Err(invalid(method, "params must be an object")),
        };
        let p = Params { method, params };
        Ok(match method {
            "ui/initialize" => ViewRequest::Initialize {
                protocol_version: p.string("protocolVersion")?,
                app_info: p.params.get("appInfo").cloned().unwrap_or(Value::Null),
                display_modes: p
                    .params
                    .get("appCapabilities")
                    .and_then(|c| c.get("availableDisplayModes"))
                    .and_then(Value::as_array)
                    .map(|modes| {
                        modes
                            .iter()
                            .filter_map(Value::as_str)
                            .filter_map(DisplayMode::parse)
                            .collect()
                    })
                    .unwrap_or_default(),
            },
            "ui/notifications/initialized" => ViewRequest::Initialized,
            "ping" => ViewRequest::Ping,
            "tools/call" => ViewRequest::CallTool {
                name: p.string("name")?,
                arguments: match p.params.get("arguments") {
                    None | Some(Value::Null) => None,
                    Some(Value::Object(a)) => Some(a.clone()),
                    Some(_) => return Err(invalid(method, "arguments must be an object")),
                },
            },
            "resources/read" => ViewRequest::ReadResource {
                uri: p.string("uri")?,
            },
            "resources/list" => ViewRequest::ListResources,
            "resources/templates/list" => ViewRequest::ListResourceTemplates,
            "prompts/list" => ViewRequest::ListPrompts,
            "ui/open-link" => ViewRequest::OpenLink {
                url: p.string("url")?,
            },
            "ui/message" => {
                if let Some(role) = p.params.get("role") {
                    if role.as_str() != Some("user") {
                        return Err(invalid(method, "role must be \"user\""));
                    }
                }
                let content = p.blocks("content")?;
                if content.is_empty() {
                    return Err(invalid(method, "content is empty"));
                }
                ViewRequest::Message { content }
            }
            "ui/update-model-context" => ViewRequest::UpdateModelContext {
                content: match p.params.get("content") {
                    None | Some(Value::Null) => Vec::new(),
                    Some(_) => p.blocks("content")?,
                },
                structured_content: match p.params.get("structuredContent") {
                    None | Some(Value::Null) => None,
                    Some(v @ Value::Object(_)) => Some(v.clone()),
                    Some(_) => return Err(invalid(method, "structuredContent must be an object")),
                },
            },
            "ui/request-display-mode" => {
                let mode = p.string("mode")?;
                ViewRequest::RequestDisplayMode {
                    mode: DisplayMode::parse(&mode).ok_or_else(|| {
                        invalid(method, "mode must be \"inline\", \"fullscreen\" or \"pip\"")
                    })?,
                }
            }
            "ui/download-file" => ViewRequest::DownloadFile {
                items: p.download_items()?,
            },
            "sampling/createMessage" => {
                let request: CreateMessageRequest =
                    serde_json::from_value(Value::Object(p.params.clone()))
                        .map_err(|e| invalid(method, &e.to_string()))?;
                ViewRequest::CreateMessage(Box::new(request))
            }
            "ui/notifications/size-changed" => ViewRequest::SizeChanged {
                width: p.number("width")?,
                height: p.number("height")?,
            },
            "notifications/message" => ViewRequest::Log {
                level: p
                    .params
                    .get("level")
                    .and_then(Value::as_str)
                    .unwrap_or("info")
                    .to_string(),
                logger: p
                    .params
                    .get("logger")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                data: p.params.get("data").cloned().unwrap_or(Value::Null),
            },
            "ui/notifications/request-teardown" => ViewRequest::RequestTeardown,
            other => return Err(ViewError::UnknownMethod(other.to_string())),
        })
    }

    /// The JSON-RPC method this request was read from.
    pub fn method(&self) -> &'static str {
        match self {
            ViewRequest::Initialize { .. } => "ui/initialize",
            ViewRequest::Initialized => "ui/notifications/initialized",
            ViewRequest::Ping => "ping",
            ViewRequest::CallTool { .. } => "tools/call",
            ViewRequest::ReadResource { .. } => "resources/read",
            ViewRequest::ListResources => "resources/list",
            ViewRequest::ListResourceTemplates => "resources/templates/list",
            ViewRequest::ListPrompts => "prompts/list",
            ViewRequest::OpenLink { .. } => "ui/open-link",
            ViewRequest::Message { .. } => "ui/message",
            ViewRequest::UpdateModelContext { .. } => "ui/update-model-context",
            ViewRequest::RequestDisplayMode { .. } => "ui/request-display-mode",
            ViewRequest::DownloadFile { .. } => "ui/download-file",
            ViewRequest::CreateMessage(_) => "sampling/createMessage",
            ViewRequest::SizeChanged { .. } => "ui/notifications/size-changed",
            ViewRequest::Log { .. } => "notifications/message",
            ViewRequest::RequestTeardown => "ui/notifications/request-teardown",
        }
    }

    /// A notification: the view expects no answer.
    pub fn is_notification(&self) -> bool {
        match self {
            ViewRequest::Initialized
            | ViewRequest::SizeChanged { .. }
            | ViewRequest::Log { .. }
            | ViewRequest::RequestTeardown => true,
            ViewRequest::Initialize { .. }
            | ViewRequest::Ping
            | ViewRequest::CallTool { .. }
            | ViewRequest::ReadResource { .. }
            | ViewRequest::ListResources
            | ViewRequest::ListResourceTemplates
            | ViewRequest::ListPrompts
            | ViewRequest::OpenLink { .. }
            | ViewRequest::Message { .. }
            | ViewRequest::UpdateModelContext { .. }
            | ViewRequest::RequestDisplayMode { .. }
            | ViewRequest::DownloadFile { .. }
            | ViewRequest::CreateMessage(_) => false,
        }
    }
}

fn invalid(method: &str, why: &str) -> ViewError {
    ViewError::Invalid {
        method: method.to_string(),
        why: why.to_string(),
    }
}

/// The params of one message, with the method for error messages.
struct Params<'a> {
    method: &'a str,
    params: Map<String, Value>,
}

impl Params<'_> {
    fn string(&self, key: &str) -> Result<String, ViewError> {
        match self.params.get(key) {
            Some(Value::String(s)) if !s.is_empty() => Ok(s.clone()),
            Some(Value::String(_)) => Err(invalid(self.method, &format!("{key} is empty"))),
            Some(_) => Err(invalid(self.method, &format!("{key} must be a string"))),
            None => Err(invalid(self.method, &format!("{key} is missing"))),
        }
    }

    fn number(&self, key: &str) -> Result<Option<f64>, ViewError> {
        match self.params.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) => Ok(n.as_f64()),
            Some(_) => Err(invalid(self.method, &format!("{key} must be a number"))),
        }
    }

    /// Content blocks: one object, or an array of objects each with a `type`.
    fn blocks(&self, key: &str) -> Result<Vec<Value>, ViewError> {
        let blocks = match self.params.get(key) {
            Some(Value::Array(items)) => items.clone(),
            Some(one @ Value::Object(_)) => vec![one.clone()],
            Some(_) => {
                return Err(invalid(
                    self.method,
                    &format!("{key} must be a content block or an array of them"),
                ))
            }
            None => return Err(invalid(self.method, &format!("{key} is missing"))),
        };
        if blocks
            .iter()
            .any(|b| b.get("type").and_then(Value::as_str).is_none())
        {
            return Err(invalid(
                self.method,
                &format!("every block of {key} needs a type"),
            ));
        }
        Ok(blocks)
    }

    fn download_items(&self) -> Result<Vec<DownloadItem>, ViewError> {
        let items = self.blocks("contents")?;
        items
            .iter()
            .map(|item| {
                let text =
                    |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
                match item.get("type").and_then(Value::as_str) {
                    Some("resource") => {
                        let r =
                            item.get("resource")
                                .filter(|r| r.is_object())
                                .ok_or_else(|| {
                                    invalid(self.method, "an embedded resource needs resource")
                                })?;
                        let uri = text(r, "uri").unwrap_or_default();
                        let (t, b) = (text(r, "text"), text(r, "blob"));
                        if t.is_none() && b.is_none() {
                            return Err(invalid(
                                self.method,
                                "an embedded resource needs text or blob",
                            ));
                        }
                        Ok(DownloadItem::Embedded {
                            uri,
                            mime_type: text(r, "mimeType"),
                            text: t,
                            blob: b,
                        })
                    }
                    Some("resource_link") => Ok(DownloadItem::Link {
                        uri: text(item, "uri")
                            .ok_or_else(|| invalid(self.method, "a resource link needs a uri"))?,
                        name: text(item, "name"),
                        mime_type: text(item, "mimeType"),
                    }),
                    _ => Err(invalid(
                        self.method,
                        "contents must be embedded resources or resource links",
                    )),
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(method: &str, params: Value) -> Result<ViewRequest, ViewError> {
        ViewRequest::parse(method, Some(params))
    }

    fn why(r: Result<ViewRequest, ViewError>) -> String {
        r.unwrap_err().to_string()
    }

    #[test]
    fn well_formed_messages_are_read() {
        assert_eq!(
            parse(
                "ui/initialize",
                json!({"protocolVersion": "2026-01-26", "appInfo": {"name": "a", "version": "1"},
                       "appCapabilities": {"availableDisplayModes": ["inline", "fullscreen", "weird"]}})
            )
            .unwrap(),
            ViewRequest::Initialize {
                protocol_version: "2026-01-26".into(),
                app_info: json!({"name": "a", "version": "1"}),
                display_modes: vec![DisplayMode::Inline, DisplayMode::Fullscreen],
            }
        );
        assert_eq!(
            ViewRequest::parse("ui/notifications/initialized", None).unwrap(),
            ViewRequest::Initialized
        );
        assert_eq!(
            parse("tools/call", json!({"name": "t", "arguments": {"x": 1}})).unwrap(),
            ViewRequest::CallTool {
                name: "t".into(),
                arguments: Some(json!({"x": 1}).as_object().unwrap().clone())
            }
        );
        // Stable text: one block; the package: an array.
        let one = parse(
            "ui/message",
            json!({"role": "user", "content": {"type": "text", "text": "hi"}}),
        );
        let many = parse(
            "ui/message",
            json!({"role": "user", "content": [{"type": "text", "text": "hi"}]}),
        );
        assert_eq!(one.unwrap(), many.unwrap());
        assert_eq!(
            parse("ui/notifications/size-changed", json!({"height": 120})).unwrap(),
            ViewRequest::SizeChanged {
                width: None,
                height: Some(120.0)
            }
        );
        assert_eq!(
            parse(
                "ui/download-file",
                json!({"contents": [{"type": "resource", "resource": {"uri": "file:///r.csv", "mimeType": "text/csv", "text": "a,b"}},
                                    {"type": "resource_link", "uri": "ui://x/data.bin", "name": "data.bin"}]})
            )
            .unwrap(),
            ViewRequest::DownloadFile {
                items: vec![
                    DownloadItem::Embedded {
                        uri: "file:///r.csv".into(),
                        mime_type: Some("text/csv".into()),
                        text: Some("a,b".into()),
                        blob: None
                    },
                    DownloadItem::Link {
                        uri: "ui://x/data.bin".into(),
                        name: Some("data.bin".into()),
                        mime_type: None
                    }
                ]
            }
        );
        assert!(matches!(
            parse(
                "sampling/createMessage",
                json!({"messages": [], "maxTokens": 10})
            )
            .unwrap(),
            ViewRequest::CreateMessage(_)
        ));
    }

    #[test]
    fn malformed_messages_are_refused_with_what_is_wrong() {
        assert_eq!(
            why(ViewRequest::parse("tools/call", Some(json!([1])))),
            "the view sent a malformed tools/call: params must be an object"
        );
        assert_eq!(
            why(parse("tools/call", json!({"arguments": {}}))),
            "the view sent a malformed tools/call: name is missing"
        );
        assert_eq!(
            why(parse("tools/call", json!({"name": "t", "arguments": [1]}))),
            "the view sent a malformed tools/call: arguments must be an object"
        );
        assert_eq!(
            why(parse("ui/open-link", json!({"url": 5}))),
            "the view sent a malformed ui/open-link: url must be a string"
        );
        assert_eq!(
            why(parse(
                "ui/message",
                json!({"role": "assistant", "content": {"type": "text", "text": "x"}})
            )),
            "the view sent a malformed ui/message: role must be \"user\""
        );
        assert_eq!(
            why(parse("ui/message", json!({"content": [{"text": "x"}]}))),
            "the view sent a malformed ui/message: every block of content needs a type"
        );
        assert_eq!(
            why(parse("ui/request-display-mode", json!({"mode": "maximized"}))),
            "the view sent a malformed ui/request-display-mode: mode must be \"inline\", \"fullscreen\" or \"pip\""
        );
        assert_eq!(
            why(parse(
                "ui/notifications/size-changed",
                json!({"width": "9999"})
            )),
            "the view sent a malformed ui/notifications/size-changed: width must be a number"
        );
        assert_eq!(
            why(parse("ui/initialize", json!({}))),
            "the view sent a malformed ui/initialize: protocolVersion is missing"
        );
        assert_eq!(
            why(parse("tools/list", json!({}))),
            "a view may not send \"tools/list\""
        );
        assert_eq!(
            why(parse("ui/notifications/sandbox-proxy-ready", json!({}))),
            "a view may not send \"ui/notifications/sandbox-proxy-ready\""
        );
    }
}
