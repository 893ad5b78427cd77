//! The façade's share of MCP Apps: one call per thing a front end that renders views
//! does (see [`crate::host::apps`] for the rules). The contract, for a front end:
//!
//! 1. Before starting servers, [`Harness::enable_apps`] (servers then see the extension
//!    in the client capabilities, in both protocol eras).
//! 2. For a tool call whose tool has a view (the chat's `ToolCallEnd.view`, a saved
//!    conversation's `ChatItem::Tool.view`, a tool entry's `hasView`), call
//!    [`Harness::open_view`]. It reads the `ui://` resource from the server now, may ask
//!    the user for declared device permissions (the call waits for the answer), and
//!    returns a [`ViewOpened`]; an error is shown as a placeholder where the view would
//!    be (the text result stays).
//! 3. Serve the document from the server's own origin ([`ViewOpened::origin`]) under
//!    the view id: [`Harness::view_document`] gives the HTML and the CSP header (serve it
//!    with `Cache-Control: no-store`); `None` means the view is gone (answer 404).
//! 4. Pass every message the frame sends, as it came (method and params), to
//!    [`Harness::view_message`] and do what the [`ViewReply`] says (answer it, resize,
//!    switch display mode, offer a download); an error goes back to the view as a
//!    JSON-RPC error with [`ViewError::rpc_code`] and its text. Send the view
//!    `tool-input` and `tool-result` only after `initialized` was passed here.
//! 5. Follow [`Harness::subscribe_views`]: tear a view down when told
//!    ([`ViewEvent::Teardown`]), show pending messages with Send
//!    ([`Harness::send_pending`]) and Discard ([`Harness::discard_pending`]), tell the
//!    user about floods. Asks of views (tool calls, permissions, links) arrive with the
//!    other asks ([`Harness::subscribe_asks`], kind `view`) and are answered the same way.
//! 6. When the chat changes conversation, the façade tears down the views of the one
//!    left; [`Harness::close_view`] closes one view, [`Harness::shutdown`] all.

use std::path::Path;

use serde_json::Value;
use tokio::sync::broadcast;

use super::{EventSink, Harness};
use crate::engine::permissions::{PermissionOptions, Permissions, ToolPermission, Verdict};
use crate::engine::EngineError;
use crate::host::apps::{
    HostParts, PendingMessage, RuleVerdict, TeardownReason, ToolRules, ViewCall, ViewDocument,
    ViewError, ViewEvent, ViewOpened, ViewReply, ViewRequest,
};
use crate::tools::ToolSpec;

impl Harness {
    /// The services a view's request may need.
    fn view_parts(&self) -> HostParts<'_> {
        HostParts {
            project: &self.project,
            manager: &self.manager,
            registry: &self.registry,
            catalog: &self.catalog,
            asks: &self.asks,
            pins: &self.pins,
            rules: self,
        }
    }

    /// Announces MCP Apps (the `io.modelcontextprotocol/ui` extension with the MIME type
    /// `text/html;profile=mcp-app`) to servers started from now on, in both protocol eras.
    /// Only front ends that render views call it.
    pub fn enable_apps(&self) {
        self.asks.set_apps(true);
    }

    /// Opens the view of `tool` of `server` for `call`: reads its `ui://` resource from
    /// the server now, checks it (MIME type `text/html;profile=mcp-app`, at most
    /// [`crate::host::apps::limits::MAX_VIEW_BYTES`]), builds its policy from its
    /// declarations, asks the user for declared device permissions (waits for the
    /// answer), and returns what a front end needs to show it. Errors say why the view
    /// cannot be shown (server gone, tool gone, no view, not a view, too large).
    pub async fn open_view(
        &self,
        server: &str,
        tool: &str,
        call: ViewCall,
    ) -> Result<ViewOpened, ViewError> {
        self.apps.open(self.view_parts(), server, tool, call).await
    }

    /// The document of a live view, for the sandbox origin to serve (with its CSP as the
    /// `Content-Security-Policy` header and `Cache-Control: no-store`); `None` when there
    /// is no such view (any more).
    pub fn view_document(&self, view_id: &str) -> Option<ViewDocument> {
        self.apps.document(view_id)
    }

    /// Takes one message a view's frame sent, as it came: its JSON-RPC `method` and
    /// `params`. Malformed messages, messages out of order (anything but `ui/initialize`
    /// and `initialized` before `initialized`), floods and what the rules refuse are
    /// errors the view hears ([`ViewError::rpc_code`]). Requests that wait for the user
    /// (tool calls under "ask", links, sampling) wait here.
    pub async fn view_message(
        &self,
        view_id: &str,
        method: &str,
        params: Option<Value>,
    ) -> Result<ViewReply, ViewError> {
        let request = ViewRequest::parse(method, params)?;
        self.view_request(view_id, request).await
    }

    /// [`Harness::view_message`] for a request already read.
    pub async fn view_request(
        &self,
        view_id: &str,
        request: ViewRequest,
    ) -> Result<ViewReply, ViewError> {
        self.apps.request(self.view_parts(), view_id, request).await
    }

    /// Closes a view (the user closed it): [`ViewEvent::Teardown`] follows. `false` when
    /// it is not live.
    pub fn close_view(&self, view_id: &str) -> bool {
        self.apps.close(view_id, TeardownReason::Closed)
    }

    /// The live views.
    pub fn live_views(&self) -> Vec<ViewOpened> {
        self.apps.live()
    }

    /// Teardowns, pending messages, model-context updates and floods of views.
    pub fn subscribe_views(&self) -> broadcast::Receiver<ViewEvent> {
        self.apps.subscribe()
    }

    /// Messages views put in the chat, waiting for the user, oldest first.
    pub fn pending_messages(&self) -> Vec<PendingMessage> {
        self.apps.pending_messages()
    }

    /// Sends a view's pending message as the user's next message of the chat (its events
    /// go to `sink`, as with [`crate::Chat::send`]). Errors: no such pending message, or
    /// why the chat could not start the turn (a turn is running: the message stays
    /// pending).
    pub async fn send_pending(&self, id: u64, sink: EventSink) -> Result<(), SendPendingError> {
        let message = self
            .apps
            .take_pending(id)
            .ok_or(SendPendingError::Unknown(id))?;
        match self
            .chat()
            .send(message.text.clone(), Vec::new(), sink)
            .await
        {
            Ok(()) => Ok(()),
            Err(e) => {
                self.apps.restore_pending(message);
                Err(SendPendingError::Chat(e))
            }
        }
    }

    /// Drops a view's pending message unsent; `false` when there is none under `id`.
    pub fn discard_pending(&self, id: u64) -> bool {
        self.apps.take_pending(id).is_some()
    }

    /// Writes file `file` (its index in the offer) of a view's download offer to `path`,
    /// the path the user picked in a save dialog (never anywhere else).
    pub async fn save_download(
        &self,
        download_id: &str,
        file: usize,
        path: &Path,
    ) -> Result<(), ViewError> {
        self.apps.save_download(download_id, file, path).await
    }

    /// Forgets a download offer (saved, or the user cancelled).
    pub fn discard_download(&self, download_id: &str) -> bool {
        self.apps.discard_download(download_id)
    }

    /// The chat left conversation `id` (the pane closed it): its views are torn down.
    /// Starting or opening another conversation does this by itself.
    pub fn leave_conversation_views(&self, id: &str) {
        self.apps.conversation_left(id);
    }
}

/// A view's tool calls meet the rules of the model's calls in the desktop app: the
/// default options (ask), the user's remembered rules as they are stored now.
impl ToolRules for Harness {
    fn verdict(&self, tool: &ToolSpec) -> RuleVerdict {
        let rules = self.permission_store.rules_for(&self.project, tool);
        match Permissions::new(PermissionOptions::default(), rules).check(tool) {
            Verdict::Allow => RuleVerdict::Allow,
            Verdict::Ask => RuleVerdict::Ask,
            Verdict::Deny(why) => RuleVerdict::Deny(why),
        }
    }

    fn allow_always(&self, server: &str, tool: &str) -> Result<(), String> {
        self.permission_store
            .set_tool(&self.project, server, tool, Some(ToolPermission::Allow))
            .map_err(|e| e.to_string())
    }
}

/// Why a pending message was not sent.
#[derive(Debug, thiserror::Error)]
pub enum SendPendingError {
    #[error("there is no pending message {0} (it was sent, discarded, or its view closed)")]
    Unknown(u64),
    #[error(transparent)]
    Chat(EngineError),
}

impl SendPendingError {
    /// A stable kebab-case code for front ends (never changes once released).
    pub fn code(&self) -> &'static str {
        match self {
            SendPendingError::Unknown(_) => "unknown-pending-message",
            SendPendingError::Chat(e) => e.code(),
        }
    }
}
