//! What crosses between the views service and a front end: the call a view is opened for,
//! what an opened view is, the document the sandbox origin serves, the answer to a
//! view's message, and the events a front end follows.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::request::DisplayMode;
use crate::mcp::features::Icon;
use crate::mcp::CallToolResult;

/// The tool call a view is opened for.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ViewCall {
    /// The conversation the call belongs to; `None` for a call made by hand (the tool
    /// panel), whose view no conversation change closes.
    #[serde(default)]
    pub conversation_id: Option<String>,
    /// The call's id (the model's tool-use id, or the manual call's number): the view's
    /// `hostContext.toolInfo.id`.
    pub call_id: String,
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(type = "JsonValue"))]
    pub arguments: Value,
    /// The result, once the call finished (the front end sends it to the view as
    /// `ui/notifications/tool-result` after `initialized`).
    #[serde(default)]
    pub result: Option<CallToolResult>,
}

/// A view that was opened: what a front end needs to show it. Its document is served by
/// [`crate::Harness::view_document`] under [`ViewOpened::view_id`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ViewOpened {
    /// Unguessable (128 random bits, hex): the view's handle for every later call, and the
    /// path its document is served under.
    pub view_id: String,
    pub server: String,
    pub tool: String,
    /// The `ui://` resource the document was read from.
    pub resource_uri: String,
    /// The origin label of the server's views: the same for every view of this server in
    /// this project, different for every other server; lowercase letters and digits only
    /// (safe as a URI host label), so two servers' views share no storage.
    pub origin: String,
    /// The Content-Security-Policy the document is served with (also in
    /// [`ViewDocument::csp`]).
    pub csp: String,
    /// The iframe `allow` attribute: only permissions the resource declared and the user
    /// granted (`""` for none).
    pub allow: String,
    /// The permissions granted (`camera`, `microphone`, `geolocation`,
    /// `clipboard-write`): `hostCapabilities.sandbox.permissions`.
    pub permissions: Vec<String>,
    /// External origins the policy lets the view reach, to tell the user (empty when it
    /// reaches none).
    pub external_origins: Vec<String>,
    /// Declared domains left out of the policy, with why (also in the server's log).
    pub dropped_domains: Vec<String>,
    /// `_meta.ui.prefersBorder`; `None`: the host decides.
    pub prefers_border: Option<bool>,
    /// The server's title (`serverInfo.title`) and loadable icons, for the view's frame.
    pub server_title: Option<String>,
    pub server_icons: Vec<Icon>,
    /// The tool's definition as the server listed it: `hostContext.toolInfo.tool`.
    #[cfg_attr(feature = "ts", ts(type = "JsonValue"))]
    pub tool_definition: Value,
    /// The call, as given to [`crate::Harness::open_view`].
    pub call: ViewCall,
}

/// A view's document, as the sandbox origin serves it (with `Cache-Control: no-store`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewDocument {
    /// The HTML, as the server sent it (never stored on disk).
    pub html: Arc<str>,
    /// The `Content-Security-Policy` header.
    pub csp: String,
}

/// What a front end does with a view's message the core took.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum ViewReply {
    /// Answer the view's request with this JSON-RPC `result`. For `ui/initialize` it holds
    /// `protocolVersion`, `hostInfo`, `hostCapabilities` and `hostContext.toolInfo`; the
    /// front end adds the rest of `hostContext` (theme, styles, dimensions, locale).
    Answer {
        #[cfg_attr(feature = "ts", ts(type = "JsonValue"))]
        result: Value,
    },
    /// A notification was taken: nothing goes back to the view.
    Noted,
    /// `size-changed`, clamped ([`super::limits`]): resize the frame along the
    /// dimensions given. Nothing goes back to the view.
    Resize {
        width: Option<u32>,
        height: Option<u32>,
    },
    /// `ui/request-display-mode`: show the view in `mode` (the view's request or the mode
    /// it keeps) and answer `{mode}`.
    DisplayMode { mode: DisplayMode },
    /// `ui/download-file`: show a native save dialog per file, then call
    /// [`crate::Harness::save_download`] with the path the user picked (or
    /// [`crate::Harness::discard_download`]), and answer the view `{}` (or
    /// `{isError: true}` when nothing was saved).
    Download { offer: DownloadOffer },
}

/// Files a view offers for download, held by the core until saved or discarded.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct DownloadOffer {
    pub download_id: String,
    pub files: Vec<DownloadFile>,
}

/// One file of a [`DownloadOffer`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct DownloadFile {
    /// A file name to propose (no folders; made safe).
    pub name: String,
    pub mime_type: Option<String>,
    pub size: usize,
}

/// Why a view is torn down.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "kebab-case")]
pub enum TeardownReason {
    /// The user (front end) closed it.
    Closed,
    /// The view asked to be closed (`ui/notifications/request-teardown`).
    ViewAsked,
    /// Its conversation was left (closed, a new one started, another one opened).
    ConversationLeft,
    /// Its server was removed from the config.
    ServerRemoved,
    /// Its server was stopped or disabled.
    ServerStopped,
    /// Its server restarted (reloaded with a changed entry, or restarted by hand).
    ServerRestarted,
    /// Its server failed or needs sign-in.
    ServerFailed,
    /// The project was closed or another one opened.
    ProjectClosed,
}

impl TeardownReason {
    /// In words, for the user and the server's log.
    pub fn message(self) -> &'static str {
        match self {
            TeardownReason::Closed => "the view was closed",
            TeardownReason::ViewAsked => "the view asked to be closed",
            TeardownReason::ConversationLeft => "its conversation was left",
            TeardownReason::ServerRemoved => "its server was removed",
            TeardownReason::ServerStopped => "its server stopped",
            TeardownReason::ServerRestarted => "its server restarted",
            TeardownReason::ServerFailed => "its server failed",
            TeardownReason::ProjectClosed => "the project was closed",
        }
    }
}

/// A message a view put in the chat, waiting for the user to send or discard it
/// ([`crate::Harness::send_pending`], [`crate::Harness::discard_pending`]); nothing of it
/// reaches the model before.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct PendingMessage {
    pub id: u64,
    /// The view it comes from, its server and tool (shown with it).
    pub view_id: String,
    pub server: String,
    pub tool: String,
    pub conversation_id: Option<String>,
    /// The message as it would be sent (text; other blocks described).
    pub text: String,
}

/// What the views service tells a front end ([`crate::Harness::subscribe_views`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum ViewEvent {
    /// Tear the view down: send it `ui/resource-teardown` (with a timeout), then remove
    /// its frame. The core already forgot it: its requests are refused from now on.
    Teardown {
        view_id: String,
        reason: TeardownReason,
        /// `reason` in words.
        message: String,
    },
    /// The pending messages of views changed (one was added, sent or discarded); the
    /// whole list, oldest first.
    PendingMessages { messages: Vec<PendingMessage> },
    /// A view updated what the model gets with the next user message of its
    /// conversation (it replaces what that view gave before).
    ModelContext {
        view_id: String,
        server: String,
        conversation_id: Option<String>,
        /// What the model will read, shortened for display.
        preview: String,
    },
    /// A view sends too much; its messages are refused for a while.
    Throttled {
        view_id: String,
        server: String,
        message: String,
    },
}
