//! The one seam through which a server's requests reach the host: [`ClientHandler`].
//! A client is given at most one handler when it connects; `initialize` announces exactly
//! the capabilities the handler says it handles ([`Handles`]), and a request for anything
//! else is answered `-32601` without reaching the handler. The client calls the handler
//! on a task of its own, so a handler may wait for the user as long as it likes without
//! holding up the connection.

use futures::future::BoxFuture;
use serde_json::{json, Map, Value};

use crate::protocol::jsonrpc::{RpcError, METHOD_NOT_FOUND};
use crate::protocol::requests::{
    CreateMessageRequest, CreateMessageResult, ElicitRequest, ElicitResult, Root,
};

/// What a handler answers a server request with: a result, or a JSON-RPC error the
/// server receives as it is.
pub type HandlerFuture<T> = BoxFuture<'static, Result<T, RpcError>>;

/// Which server→client requests a handler really handles. Each flag becomes part of the
/// `capabilities` of `initialize`; nothing is announced that is not handled.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Handles {
    /// `elicitation/create` in form mode.
    pub elicitation_form: bool,
    /// `elicitation/create` in URL mode (2025-11-25).
    pub elicitation_url: bool,
    /// `sampling/createMessage`.
    pub sampling: bool,
    /// Tools inside sampling requests (2025-11-25).
    pub sampling_tools: bool,
    /// `roots/list`.
    pub roots: bool,
    /// The client sends `notifications/roots/list_changed` when its roots change.
    pub roots_list_changed: bool,
    /// The host renders MCP Apps views: the capabilities carry the extension
    /// ([`crate::protocol::apps::apps_extension`]) under `extensions`.
    pub apps: bool,
}

impl Handles {
    pub fn elicitation(&self) -> bool {
        self.elicitation_form || self.elicitation_url
    }

    /// The client capabilities for `initialize`.
    pub fn capabilities(&self) -> Value {
        let mut caps = Map::new();
        if self.elicitation() {
            let mut modes = Map::new();
            if self.elicitation_form {
                modes.insert("form".into(), json!({}));
            }
            if self.elicitation_url {
                modes.insert("url".into(), json!({}));
            }
            caps.insert("elicitation".into(), Value::Object(modes));
        }
        if self.sampling {
            let sampling = if self.sampling_tools {
                json!({"tools": {}})
            } else {
                json!({})
            };
            caps.insert("sampling".into(), sampling);
        }
        if self.roots {
            caps.insert(
                "roots".into(),
                json!({"listChanged": self.roots_list_changed}),
            );
        }
        if self.apps {
            let (id, value) = crate::protocol::apps::apps_extension();
            let mut extensions = Map::new();
            extensions.insert(id, value);
            caps.insert("extensions".into(), Value::Object(extensions));
        }
        Value::Object(caps)
    }
}

/// Answers a server's requests for one connection. Methods of capabilities the handler
/// does not claim in [`ClientHandler::handles`] are never called.
pub trait ClientHandler: Send + Sync + 'static {
    fn handles(&self) -> Handles;

    /// `elicitation/create`: ask the user.
    fn elicit(&self, request: ElicitRequest) -> HandlerFuture<ElicitResult> {
        let _ = request;
        not_handled("elicitation/create")
    }

    /// `sampling/createMessage`: ask the host's model (after the user agreed).
    fn create_message(&self, request: CreateMessageRequest) -> HandlerFuture<CreateMessageResult> {
        let _ = request;
        not_handled("sampling/createMessage")
    }

    /// `elicitation/create` on behalf of task `task_id` (the request carried the task's
    /// mark): the same consent as [`ClientHandler::elicit`], shown with its task.
    fn elicit_for_task(
        &self,
        request: ElicitRequest,
        task_id: &str,
    ) -> HandlerFuture<ElicitResult> {
        let _ = task_id;
        self.elicit(request)
    }

    /// `sampling/createMessage` on behalf of task `task_id`: the same consent as
    /// [`ClientHandler::create_message`], shown with its task.
    fn create_message_for_task(
        &self,
        request: CreateMessageRequest,
        task_id: &str,
    ) -> HandlerFuture<CreateMessageResult> {
        let _ = task_id;
        self.create_message(request)
    }

    /// `roots/list`: the folders the server may work in.
    fn list_roots(&self) -> HandlerFuture<Vec<Root>> {
        not_handled("roots/list")
    }

    /// `notifications/elicitation/complete`: a URL elicitation finished out of band.
    /// Unknown ids are ignored.
    fn elicitation_complete(&self, elicitation_id: &str) {
        let _ = elicitation_id;
    }
}

/// Accepts every form elicitation with nothing filled in but the schema's defaults
/// (SEP-1034) and declines URL mode; handles nothing else. For unattended runs that must
/// say yes (the conformance suite's `elicitation-sep1034-client-defaults`), never for a
/// user's session, where the front end asks the user.
pub struct AcceptDefaults;

impl ClientHandler for AcceptDefaults {
    fn handles(&self) -> Handles {
        Handles {
            elicitation_form: true,
            ..Handles::default()
        }
    }

    fn elicit(&self, request: ElicitRequest) -> HandlerFuture<ElicitResult> {
        let result = match request {
            ElicitRequest::Form {
                requested_schema, ..
            } => ElicitResult::accept_form(&requested_schema, Map::new()),
            ElicitRequest::Url { .. } => ElicitResult::decline(),
        };
        Box::pin(async move { Ok(result) })
    }
}

fn not_handled<T: Send + 'static>(method: &str) -> HandlerFuture<T> {
    let error = RpcError {
        code: METHOD_NOT_FOUND,
        message: format!("harness9 does not support \"{method}\""),
        data: None,
    };
    Box::pin(async move { Err(error) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::FutureExt;

    #[test]
    fn accept_defaults_fills_in_every_default() {
        let request = ElicitRequest::Form {
            message: "m".into(),
            requested_schema: json!({"type": "object", "properties": {
                "name": {"type": "string", "default": "John Doe"},
                "age": {"type": "integer", "default": 30},
                "status": {"type": "string", "enum": ["a", "b"], "default": "b"},
                "none": {"type": "string"}
            }}),
        };
        let result = AcceptDefaults
            .elicit(request)
            .now_or_never()
            .unwrap()
            .unwrap();
        assert_eq!(
            serde_json::to_value(result).unwrap(),
            json!({"action": "accept", "content": {"name": "John Doe", "age": 30, "status": "b"}})
        );
        assert_eq!(
            AcceptDefaults.handles().capabilities(),
            json!({"elicitation": {"form": {}}})
        );
    }

    #[test]
    fn capabilities_announce_exactly_what_is_handled() {
        assert_eq!(Handles::default().capabilities(), json!({}));
        let all = Handles {
            elicitation_form: true,
            elicitation_url: true,
            sampling: true,
            sampling_tools: false,
            roots: true,
            roots_list_changed: true,
            apps: false,
        };
        assert_eq!(
            all.capabilities(),
            json!({
                "elicitation": {"form": {}, "url": {}},
                "sampling": {},
                "roots": {"listChanged": true}
            })
        );
        let apps = Handles {
            apps: true,
            ..Handles::default()
        };
        assert_eq!(
            apps.capabilities(),
            json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}})
        );
    }
}
