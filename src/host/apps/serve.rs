//! A view's messages, checked and carried out: the gate (the view is live, the message
//! comes in order, the view does not flood), then what each message does. Tool calls and
//! resource reads go to the view's own server only; tool calls need the tool to be
//! visible to views and pass the same permission rules as the model's calls.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use base64::Engine as _;
use serde_json::{json, Map, Value};

use super::limits::{self, clamp_dimension};
use super::{
    Apps, DisplayMode, Download, DownloadFile, DownloadItem, DownloadOffer, HostParts,
    ModelContext, PendingMessage, Phase, RuleVerdict, TeardownReason, ViewError, ViewEvent,
    ViewReply, ViewRequest, HOST_DISPLAY_MODES, MAX_MODEL_CONTEXT_CHARS,
};
use crate::host::asks::{AskAnswer, ViewAsk};
use crate::mcp::apps::VIEW_PROTOCOL_VERSION;
use crate::mcp::log::{LogSource, ServerLog};
use crate::tools::CallContext;

/// How long a view's listing requests wait for a server still being listed.
const LISTING_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// What a request needs of its view, copied out of the state (no lock is held while a
/// request runs).
pub(super) struct Info {
    view_id: String,
    server: String,
    tool: String,
    conversation_id: Option<String>,
    call_id: String,
    tool_definition: Value,
    log: Option<Arc<ServerLog>>,
    granted: Vec<&'static str>,
    csp: String,
}

impl Info {
    fn note(&self, level: &str, text: &str) {
        if let Some(log) = &self.log {
            log.push(
                LogSource::View,
                level,
                &format!(
                    "view {} ({}): {text}",
                    super::short(&self.view_id),
                    self.tool
                ),
            );
        }
    }
}

fn refused(text: impl Into<String>) -> ViewError {
    ViewError::Refused(text.into())
}

fn answer(result: Value) -> ViewReply {
    ViewReply::Answer { result }
}

impl Apps {
    /// Takes one message of view `view_id` (see [`crate::Harness::view_request`]).
    pub async fn request(
        &self,
        parts: HostParts<'_>,
        view_id: &str,
        request: ViewRequest,
    ) -> Result<ViewReply, ViewError> {
        let info = self.gate(view_id, &request)?;
        match &request {
            ViewRequest::Ping | ViewRequest::SizeChanged { .. } | ViewRequest::Log { .. } => {}
            other => info.note("info", &format!("sent {}", other.method())),
        }
        match request {
            ViewRequest::Initialize { .. } => Ok(answer(self.initialize_result(parts, &info))),
            ViewRequest::Initialized => Ok(ViewReply::Noted),
            ViewRequest::Ping => Ok(answer(json!({}))),
            ViewRequest::CallTool { name, arguments } => {
                self.call_tool(parts, &info, &name, arguments).await
            }
            ViewRequest::ReadResource { uri } => {
                let read = parts
                    .catalog
                    .read_resource(parts.manager, &info.server, &uri)
                    .await
                    .map_err(|e| ViewError::Failed(e.to_string()))?;
                Ok(answer(serde_json::to_value(read).unwrap_or(Value::Null)))
            }
            ViewRequest::ListResources
            | ViewRequest::ListResourceTemplates
            | ViewRequest::ListPrompts => {
                let features = parts
                    .catalog
                    .features(parts.manager, Some(&info.server), LISTING_WAIT)
                    .await
                    .map_err(|e| ViewError::Failed(e.to_string()))?;
                let f = features.into_iter().next().map(|(_, f)| f);
                let list = |v: Option<Value>| v.unwrap_or_else(|| json!([]));
                Ok(answer(match request {
                    ViewRequest::ListResources => json!({"resources": list(
                        f.map(|f| serde_json::to_value(&*f.resources).unwrap_or_default()))}),
                    ViewRequest::ListResourceTemplates => json!({"resourceTemplates": list(
                        f.map(|f| serde_json::to_value(&*f.templates).unwrap_or_default()))}),
                    _ => json!({"prompts": list(
                        f.map(|f| serde_json::to_value(&*f.prompts).unwrap_or_default()))}),
                }))
            }
            ViewRequest::OpenLink { url } => self.open_link(parts, &info, &url).await,
            ViewRequest::Message { content } => {
                let text = blocks_text(&content);
                let message = PendingMessage {
                    id: self
                        .inner
                        .next_pending
                        .fetch_add(1, std::sync::atomic::Ordering::Relaxed),
                    view_id: info.view_id.clone(),
                    server: info.server.clone(),
                    tool: info.tool.clone(),
                    conversation_id: info.conversation_id.clone(),
                    text,
                };
                let list = {
                    let mut st = self.inner.state.lock();
                    st.pending.insert(message.id, message);
                    st.pending.values().cloned().collect()
                };
                info.note("info", "put a message in the chat; it waits for the user");
                self.emit(ViewEvent::PendingMessages { messages: list });
                Ok(answer(json!({})))
            }
            ViewRequest::UpdateModelContext {
                content,
                structured_content,
            } => {
                let text = model_context_text(&info, &content, structured_content.as_ref());
                let key = info.conversation_id.clone().unwrap_or_default();
                {
                    let mut st = self.inner.state.lock();
                    match &text {
                        Some(t) => {
                            st.contexts.insert(key, ModelContext { text: t.clone() });
                        }
                        None => {
                            st.contexts.remove(&key);
                        }
                    }
                }
                self.emit(ViewEvent::ModelContext {
                    view_id: info.view_id.clone(),
                    server: info.server.clone(),
                    conversation_id: info.conversation_id.clone(),
                    preview: text
                        .as_deref()
                        .unwrap_or_default()
                        .chars()
                        .take(300)
                        .collect(),
                });
                Ok(answer(json!({})))
            }
            ViewRequest::RequestDisplayMode { mode } => {
                let now = {
                    let mut st = self.inner.state.lock();
                    let view = st
                        .views
                        .get_mut(view_id)
                        .ok_or_else(|| ViewError::UnknownView(view_id.to_string()))?;
                    if HOST_DISPLAY_MODES.contains(&mode) && view.display_modes.contains(&mode) {
                        view.display_mode = mode;
                    }
                    view.display_mode
                };
                Ok(ViewReply::DisplayMode { mode: now })
            }
            ViewRequest::DownloadFile { items } => self.offer_download(parts, &info, items).await,
            ViewRequest::CreateMessage(request) => {
                let fingerprint = parts
                    .manager
                    .entry(&info.server)
                    .and_then(Result::ok)
                    .map(|c| c.fingerprint(parts.project));
                let log = info.log.clone().unwrap_or_default();
                let result = parts
                    .asks
                    .sample_for_view(&info.server, fingerprint, log, *request)
                    .await
                    .map_err(|e| refused(e.message))?;
                Ok(answer(serde_json::to_value(result).unwrap_or(Value::Null)))
            }
            ViewRequest::SizeChanged { width, height } => {
                let bad = |why: &str| ViewError::Invalid {
                    method: "ui/notifications/size-changed".into(),
                    why: why.to_string(),
                };
                Ok(ViewReply::Resize {
                    width: clamp_dimension(width, limits::MAX_VIEW_WIDTH).map_err(bad)?,
                    height: clamp_dimension(height, limits::MAX_VIEW_HEIGHT).map_err(bad)?,
                })
            }
            ViewRequest::Log {
                level,
                logger,
                data,
            } => {
                let text = match data {
                    Value::String(s) => s,
                    other => other.to_string(),
                };
                let text = match logger {
                    Some(l) => format!("[{l}] {text}"),
                    None => text,
                };
                info.note(&level, &text);
                Ok(ViewReply::Noted)
            }
            ViewRequest::RequestTeardown => {
                self.close(view_id, TeardownReason::ViewAsked);
                Ok(ViewReply::Noted)
            }
        }
    }

    /// The checks before a message is carried out: the view is live, the message comes
    /// in order, the view does not flood. Moves the handshake along.
    pub(super) fn gate(&self, view_id: &str, request: &ViewRequest) -> Result<Info, ViewError> {
        let now = Instant::now();
        let mut notice = None;
        let checked = {
            let mut st = self.inner.state.lock();
            let Some(view) = st.views.get_mut(view_id) else {
                return Err(ViewError::UnknownView(view_id.to_string()));
            };
            let throttled = match request {
                ViewRequest::SizeChanged { .. } => (!view.resizes.take(now)).then_some("resizes"),
                _ => (!view.requests.take(now)).then_some("requests"),
            };
            if let Some(what) = throttled {
                let due = view
                    .last_notice
                    .is_none_or(|t| now.duration_since(t) >= limits::THROTTLE_NOTICE_EVERY);
                if due {
                    view.last_notice = Some(now);
                    notice = Some((view.opened.server.clone(), what));
                }
                Err(ViewError::Throttled { what })
            } else {
                match (view.phase, request) {
                    (_, ViewRequest::Initialize { display_modes, .. }) => {
                        // Again after a reload of its frame: the handshake starts over.
                        view.phase = Phase::Initializing;
                        view.display_modes = display_modes.clone();
                        view.display_mode = DisplayMode::Inline;
                        Ok(())
                    }
                    (Phase::Initializing, ViewRequest::Initialized) => {
                        view.phase = Phase::Live;
                        Ok(())
                    }
                    (Phase::Live, _) => Ok(()),
                    (Phase::Opened | Phase::Initializing, other) => {
                        Err(ViewError::NotInitialized(other.method().to_string()))
                    }
                }
            }
            .map(|()| Info {
                view_id: view_id.to_string(),
                server: view.opened.server.clone(),
                tool: view.opened.tool.clone(),
                conversation_id: view.opened.call.conversation_id.clone(),
                call_id: view.opened.call.call_id.clone(),
                tool_definition: view.opened.tool_definition.clone(),
                log: view.log.clone(),
                granted: view.granted.features(),
                csp: view.document.csp.clone(),
            })
        };
        if let Some((server, what)) = notice {
            let message = format!(
                "a view of server \"{server}\" sends too many {what}; they are refused for a while"
            );
            if let Some(log) = self
                .inner
                .state
                .lock()
                .views
                .get(view_id)
                .and_then(|v| v.log.clone())
            {
                log.push(LogSource::View, "warning", &message);
            }
            self.emit(ViewEvent::Throttled {
                view_id: view_id.to_string(),
                server,
                message,
            });
        }
        checked
    }

    /// The answer to `ui/initialize`: what this host lets the view do.
    fn initialize_result(&self, parts: HostParts<'_>, info: &Info) -> Value {
        let mut permissions = Map::new();
        for p in &info.granted {
            let key = match *p {
                "clipboard-write" => "clipboardWrite",
                other => other,
            };
            permissions.insert(key.into(), json!({}));
        }
        let mut caps = json!({
            "openLinks": {},
            "serverTools": {},
            "serverResources": {},
            "logging": {},
            "downloadFile": {},
            "message": {"text": {}},
            "updateModelContext": {"text": {}, "structuredContent": {}},
            "sandbox": {"permissions": permissions, "csp": approved_csp(&info.csp)},
        });
        if parts.asks.sampling_enabled() {
            caps["sampling"] = json!({});
        }
        json!({
            "protocolVersion": VIEW_PROTOCOL_VERSION,
            "hostInfo": {"name": "harness9", "version": env!("CARGO_PKG_VERSION")},
            "hostCapabilities": caps,
            "hostContext": {
                "toolInfo": {"id": info.call_id, "tool": info.tool_definition},
                "displayMode": "inline",
                "availableDisplayModes": HOST_DISPLAY_MODES.iter().map(|m| m.name()).collect::<Vec<_>>(),
            },
        })
    }

    async fn call_tool(
        &self,
        parts: HostParts<'_>,
        info: &Info,
        name: &str,
        arguments: Option<Map<String, Value>>,
    ) -> Result<ViewReply, ViewError> {
        let server = &info.server;
        let Some(tool) = parts.registry.get_mcp(server, name) else {
            let text = format!("server \"{server}\" has no tool \"{name}\" a view may call");
            info.note("warning", &format!("call refused: {text}"));
            return Err(refused(text));
        };
        let spec = tool.spec().clone();
        if !spec.display.app_visible() {
            let text = format!(
                "tool \"{name}\" of server \"{server}\" is not visible to views (its server offers it to the model only)"
            );
            info.note("warning", &format!("call refused: {text}"));
            return Err(refused(text));
        }
        let arguments = Value::Object(arguments.unwrap_or_default());
        let verdict = parts.rules.verdict(&spec);
        match verdict {
            RuleVerdict::Allow => {}
            RuleVerdict::Deny(text) => {
                info.note(
                    "warning",
                    &format!("call of {name} denied by the permission rules"),
                );
                return Err(refused(text));
            }
            RuleVerdict::Ask => {
                let ask = ViewAsk::ToolCall {
                    tool: name.to_string(),
                    arguments: arguments.clone(),
                    read_only: spec.read_only,
                };
                match parts.asks.ask_for_view(server, &info.view_id, ask).await {
                    Ok(AskAnswer::Approve(choice)) => {
                        if choice.always {
                            match parts.rules.allow_always(server, name) {
                                Ok(()) => info
                                    .note("info", &format!("the user allows {name} from now on")),
                                Err(e) => info.note(
                                    "warning",
                                    &format!("could not remember the permission: {e}"),
                                ),
                            }
                        }
                    }
                    Ok(AskAnswer::Refuse(_) | AskAnswer::Elicit(_) | AskAnswer::Sample(_)) => {
                        info.note("info", &format!("the user denied the call of {name}"));
                        return Err(refused(format!(
                            "the user denied the view's call of tool \"{name}\""
                        )));
                    }
                    Err(why) => {
                        let text = format!(
                            "the view's call of tool \"{name}\" was not approved: {}",
                            why.reason()
                        );
                        info.note("info", &text);
                        return Err(refused(text));
                    }
                }
            }
        }
        info.note("info", &format!("calls tool {name}"));
        match tool.call(arguments, CallContext::default()).await {
            Ok(result) => {
                if result.is_error {
                    info.note("info", &format!("tool {name} reported an error"));
                }
                Ok(answer(serde_json::to_value(result).unwrap_or(Value::Null)))
            }
            Err(e) => {
                info.note("warning", &format!("tool {name} failed: {e}"));
                Err(ViewError::Failed(e.to_string()))
            }
        }
    }

    async fn open_link(
        &self,
        parts: HostParts<'_>,
        info: &Info,
        url: &str,
    ) -> Result<ViewReply, ViewError> {
        let link = match crate::links::check_link(url) {
            Ok(link) => link,
            Err(why) => {
                let text = format!("refused to open {url:?}: {why}");
                info.note("warning", &text);
                return Err(refused(text));
            }
        };
        let ask = ViewAsk::OpenLink {
            url: link.as_str().to_string(),
        };
        match parts
            .asks
            .ask_for_view(&info.server, &info.view_id, ask)
            .await
        {
            Ok(AskAnswer::Approve(_)) => {
                info.note("info", &format!("opened {}", link.host_first()));
                Ok(answer(json!({})))
            }
            Ok(AskAnswer::Refuse(_) | AskAnswer::Elicit(_) | AskAnswer::Sample(_)) => {
                info.note("info", &format!("the user did not open {}", link.host()));
                Err(refused("the user did not open the link"))
            }
            Err(why) => {
                let text = format!("the link was not opened: {}", why.reason());
                info.note("info", &text);
                Err(refused(text))
            }
        }
    }

    async fn offer_download(
        &self,
        parts: HostParts<'_>,
        info: &Info,
        items: Vec<DownloadItem>,
    ) -> Result<ViewReply, ViewError> {
        let mut files = Vec::with_capacity(items.len());
        for item in items {
            let (uri, mime, bytes, name) = match item {
                DownloadItem::Embedded {
                    uri,
                    mime_type,
                    text,
                    blob,
                } => {
                    let bytes = data_bytes(text.as_deref(), blob.as_deref())?;
                    (uri, mime_type, bytes, None)
                }
                DownloadItem::Link {
                    uri,
                    name,
                    mime_type,
                } => {
                    let read = parts
                        .catalog
                        .read_resource(parts.manager, &info.server, &uri)
                        .await
                        .map_err(|e| ViewError::Failed(e.to_string()))?;
                    let item = read.contents.into_iter().next().ok_or_else(|| {
                        ViewError::Failed(format!("the server sent nothing for {uri}"))
                    })?;
                    let bytes = data_bytes(item.text.as_deref(), item.blob.as_deref())?;
                    (uri, mime_type.or(item.mime_type), bytes, name)
                }
            };
            let file = DownloadFile {
                name: file_name(name.as_deref(), &uri),
                mime_type: mime,
                size: bytes.len(),
            };
            files.push((file, bytes));
        }
        if files.is_empty() {
            return Err(ViewError::Invalid {
                method: "ui/download-file".into(),
                why: "contents is empty".into(),
            });
        }
        let download_id = super::open::random_id();
        let offer = DownloadOffer {
            download_id: download_id.clone(),
            files: files.iter().map(|(f, _)| f.clone()).collect(),
        };
        info.note(
            "info",
            &format!(
                "offers {} for download",
                offer
                    .files
                    .iter()
                    .map(|f| format!("{} ({} bytes)", f.name, f.size))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        );
        self.inner.state.lock().downloads.insert(
            download_id,
            Download {
                view_id: info.view_id.clone(),
                files,
            },
        );
        Ok(ViewReply::Download { offer })
    }

    /// Writes file `file` of download `download_id` to `path` (the user picked it), all or
    /// nothing (a temporary file, then renamed). The offer stays until every file was
    /// saved or it is discarded.
    pub async fn save_download(
        &self,
        download_id: &str,
        file: usize,
        path: &Path,
    ) -> Result<(), ViewError> {
        let bytes = {
            let st = self.inner.state.lock();
            let d = st
                .downloads
                .get(download_id)
                .ok_or_else(|| ViewError::UnknownDownload(download_id.to_string()))?;
            d.files
                .get(file)
                .map(|(_, b)| b.clone())
                .ok_or_else(|| ViewError::UnknownDownload(format!("{download_id}/{file}")))?
        };
        let at = path.to_path_buf();
        let shown = path.display().to_string();
        let written =
            tokio::task::spawn_blocking(move || crate::config::write_atomically(&at, &bytes))
                .await
                .map_err(std::io::Error::other)
                .and_then(|r| r);
        written.map_err(|e| ViewError::Save {
            path: shown,
            reason: e.to_string(),
        })
    }

    /// Forgets a download offer (saved, or the user cancelled); `false` when unknown.
    pub fn discard_download(&self, download_id: &str) -> bool {
        self.inner
            .state
            .lock()
            .downloads
            .remove(download_id)
            .is_some()
    }
}

/// The text of content blocks: text as it is, other blocks named.
fn blocks_text(blocks: &[Value]) -> String {
    let parts: Vec<String> = blocks
        .iter()
        .map(|b| match b.get("type").and_then(Value::as_str) {
            Some("text") => b
                .get("text")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            Some("resource_link") => format!(
                "[resource {}]",
                b.get("uri").and_then(Value::as_str).unwrap_or("?")
            ),
            Some("resource") => format!(
                "[resource {}]",
                b.pointer("/resource/uri")
                    .and_then(Value::as_str)
                    .unwrap_or("?")
            ),
            Some(other) => format!("[{other}]"),
            None => String::new(),
        })
        .filter(|s| !s.is_empty())
        .collect();
    parts.join("\n")
}

/// What the model reads of a view's context update; `None` when it clears it.
fn model_context_text(
    info: &Info,
    content: &[Value],
    structured: Option<&Value>,
) -> Option<String> {
    let mut body = blocks_text(content);
    if let Some(s) = structured {
        if !body.is_empty() {
            body.push('\n');
        }
        body.push_str(&s.to_string());
    }
    if body.trim().is_empty() {
        return None;
    }
    let mut text = format!(
        "[context from the interactive view of tool \"{}\" of MCP server \"{}\"]\n",
        info.tool, info.server
    );
    let kept: String = body.chars().take(MAX_MODEL_CONTEXT_CHARS).collect();
    let cut = kept.len() < body.len();
    text.push_str(&kept);
    if cut {
        text.push_str(&format!("\n[cut at {MAX_MODEL_CONTEXT_CHARS} characters]"));
    }
    Some(text)
}

/// The bytes of downloadable data, bounded.
fn data_bytes(text: Option<&str>, blob: Option<&str>) -> Result<Vec<u8>, ViewError> {
    let too_large = |size| {
        ViewError::Refused(format!(
            "the file is {size} bytes, more than a view may download ({} bytes)",
            limits::MAX_DOWNLOAD_BYTES
        ))
    };
    let bytes = match (text, blob) {
        (Some(t), _) => t.as_bytes().to_vec(),
        (None, Some(b)) => {
            if b.len() / 4 * 3 > limits::MAX_DOWNLOAD_BYTES {
                return Err(too_large(b.len() / 4 * 3));
            }
            base64::engine::general_purpose::STANDARD
                .decode(b.trim())
                .map_err(|e| ViewError::Invalid {
                    method: "ui/download-file".into(),
                    why: format!("a blob is not base64 ({e})"),
                })?
        }
        (None, None) => Vec::new(),
    };
    if bytes.len() > limits::MAX_DOWNLOAD_BYTES {
        return Err(too_large(bytes.len()));
    }
    Ok(bytes)
}

/// A file name to propose: the given name or the URI's last segment, without folders or
/// characters file systems and dialogs choke on.
fn file_name(name: Option<&str>, uri: &str) -> String {
    let raw = name.filter(|n| !n.trim().is_empty()).unwrap_or_else(|| {
        uri.split(['?', '#'])
            .next()
            .unwrap_or_default()
            .rsplit('/')
            .find(|s| !s.is_empty())
            .unwrap_or_default()
    });
    let base = raw.rsplit(['/', '\\']).next().unwrap_or_default();
    let clean: String = base
        .chars()
        .map(|c| {
            if c.is_control() || matches!(c, '<' | '>' | ':' | '"' | '|' | '?' | '*') {
                '_'
            } else {
                c
            }
        })
        .take(120)
        .collect();
    let clean = clean.trim_matches(|c: char| c == '.' || c.is_whitespace());
    if clean.is_empty() {
        "download".to_string()
    } else {
        clean.to_string()
    }
}

/// The CSP's sources by directive, as `hostCapabilities.sandbox.csp` reports them.
fn approved_csp(csp: &str) -> Value {
    let sources = |directive: &str| -> Vec<String> {
        csp.split(';')
            .map(str::trim)
            .find_map(|d| d.strip_prefix(directive).map(str::trim))
            .map(|rest| {
                rest.split_whitespace()
                    .filter(|s| !s.starts_with('\'') && !s.ends_with(':'))
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    };
    json!({
        "connectDomains": sources("connect-src "),
        "resourceDomains": sources("script-src "),
        "frameDomains": sources("frame-src "),
        "baseUriDomains": sources("base-uri "),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_are_made_safe() {
        assert_eq!(file_name(Some("report.csv"), "x"), "report.csv");
        assert_eq!(file_name(Some("../../etc/passwd"), "x"), "passwd");
        assert_eq!(file_name(None, "ui://s/files/data.bin?x=1"), "data.bin");
        assert_eq!(file_name(None, ""), "download");
        assert_eq!(file_name(Some("a<b>:c.txt"), "x"), "a_b__c.txt");
        assert_eq!(file_name(Some(".."), "x"), "download");
    }

    #[test]
    fn the_sandbox_report_lists_only_domains() {
        let p = super::super::csp::build(Some(&crate::mcp::apps::ViewCspDeclaration {
            connect_domains: vec!["https://api.example".into()],
            resource_domains: vec!["https://cdn.example".into()],
            frame_domains: None,
            base_uri_domains: None,
        }));
        assert_eq!(
            approved_csp(&p.csp),
            json!({"connectDomains": ["https://api.example"], "resourceDomains": ["https://cdn.example"],
                   "frameDomains": [], "baseUriDomains": []})
        );
    }

    #[test]
    fn blocks_become_text() {
        let blocks = vec![
            json!({"type": "text", "text": "hello"}),
            json!({"type": "image", "data": "AAAA", "mimeType": "image/png"}),
            json!({"type": "resource_link", "uri": "ui://x/y"}),
        ];
        assert_eq!(blocks_text(&blocks), "hello\n[image]\n[resource ui://x/y]");
    }
}
