//! Payloads of the requests a server sends to the client: `elicitation/create` (form and
//! URL modes), `sampling/createMessage` and `roots/list`, with their answers. Schemas,
//! message contents and model preferences stay raw JSON (shown to the user as sent).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Error code of `URLElicitationRequiredError`: the server needs a URL-mode elicitation
/// completed before it can answer the request.
pub const URL_ELICITATION_REQUIRED: i64 = -32042;

/// Error code a client answers a sampling request with when the user refused it.
pub const USER_REJECTED: i64 = -1;

/// Why the params of an `elicitation/create` request cannot be used (the server is told,
/// as an invalid-params error).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ElicitParamsError {
    #[error("elicitation/create needs a string \"{0}\"")]
    NoText(&'static str),
    #[error("elicitation/create needs an object \"requestedSchema\"")]
    NoSchema,
    #[error("unknown elicitation mode \"{0}\"")]
    UnknownMode(String),
}

impl ElicitParamsError {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        match self {
            ElicitParamsError::NoText(_) | ElicitParamsError::NoSchema => "invalid-params",
            ElicitParamsError::UnknownMode(_) => "unknown-elicitation-mode",
        }
    }
}

/// What a server asks the user for in `elicitation/create`.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(tag = "mode", rename_all = "lowercase")]
pub enum ElicitRequest {
    /// Fill in a form: a flat object schema of strings, numbers, booleans and enums.
    #[serde(rename_all = "camelCase")]
    Form {
        message: String,
        requested_schema: Value,
    },
    /// Visit a URL (out of band; the answer only says whether the user agreed to go).
    #[serde(rename_all = "camelCase")]
    Url {
        message: String,
        url: String,
        elicitation_id: String,
    },
}

impl ElicitRequest {
    /// Reads the params of `elicitation/create` (a request without `mode` is a form).
    pub fn from_params(params: &Value) -> Result<ElicitRequest, ElicitParamsError> {
        let text = |key: &'static str| -> Result<String, ElicitParamsError> {
            match params.get(key) {
                Some(Value::String(s)) => Ok(s.clone()),
                _ => Err(ElicitParamsError::NoText(key)),
            }
        };
        match params.get("mode").and_then(Value::as_str).unwrap_or("form") {
            "form" => Ok(ElicitRequest::Form {
                message: text("message")?,
                requested_schema: match params.get("requestedSchema") {
                    Some(s @ Value::Object(_)) => s.clone(),
                    _ => return Err(ElicitParamsError::NoSchema),
                },
            }),
            "url" => Ok(ElicitRequest::Url {
                message: text("message")?,
                url: text("url")?,
                elicitation_id: text("elicitationId")?,
            }),
            other => Err(ElicitParamsError::UnknownMode(other.to_string())),
        }
    }

    pub fn message(&self) -> &str {
        match self {
            ElicitRequest::Form { message, .. } | ElicitRequest::Url { message, .. } => message,
        }
    }

    /// The URL a URL elicitation asks the user to open (`None` for a form). Before it is
    /// shown or opened it goes through the link rules (`links::check_link`).
    pub fn url(&self) -> Option<&str> {
        match self {
            ElicitRequest::Url { url, .. } => Some(url),
            ElicitRequest::Form { .. } => None,
        }
    }

    pub fn mode(&self) -> &'static str {
        match self {
            ElicitRequest::Form { .. } => "form",
            ElicitRequest::Url { .. } => "url",
        }
    }
}

/// The URL elicitations a `-32042` error (URL elicitation required) asks the user to
/// complete before the request can succeed; empty for any other error.
pub fn required_elicitations(error: &crate::protocol::jsonrpc::RpcError) -> Vec<ElicitRequest> {
    if error.code != URL_ELICITATION_REQUIRED {
        return Vec::new();
    }
    error
        .data
        .as_ref()
        .and_then(|d| d.get("elicitations"))
        .and_then(Value::as_array)
        .map(|all| {
            all.iter()
                .filter_map(|e| ElicitRequest::from_params(e).ok())
                .collect()
        })
        .unwrap_or_default()
}

/// The user's choice in an elicitation.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ElicitAction {
    /// Submitted (form: with content; URL: agreed to open the URL).
    Accept,
    /// Said no.
    Decline,
    /// Dismissed without choosing.
    Cancel,
}

/// The answer to `elicitation/create`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ElicitResult {
    pub action: ElicitAction,
    /// Only with `accept` in form mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Map<String, Value>>,
}

impl ElicitResult {
    pub fn decline() -> ElicitResult {
        ElicitResult {
            action: ElicitAction::Decline,
            content: None,
        }
    }

    pub fn cancel() -> ElicitResult {
        ElicitResult {
            action: ElicitAction::Cancel,
            content: None,
        }
    }

    /// Accepts a form with `content`, every field the user left out taking the schema's
    /// `default` (SEP-1034).
    pub fn accept_form(schema: &Value, content: Map<String, Value>) -> ElicitResult {
        ElicitResult {
            action: ElicitAction::Accept,
            content: Some(with_defaults(schema, content)),
        }
    }

    /// Accepts a URL elicitation (the user agreed to open the URL).
    pub fn accept_url() -> ElicitResult {
        ElicitResult {
            action: ElicitAction::Accept,
            content: None,
        }
    }
}

/// Fills the fields of `content` that the form's schema gives a `default` and the user
/// left out (SEP-1034); fields the user gave are kept as given.
pub fn with_defaults(schema: &Value, mut content: Map<String, Value>) -> Map<String, Value> {
    if let Some(Value::Object(props)) = schema.get("properties") {
        for (name, prop) in props {
            if let (false, Some(default)) = (content.contains_key(name), prop.get("default")) {
                content.insert(name.clone(), default.clone());
            }
        }
    }
    content
}

/// The required fields of a form's schema that `content` lacks.
pub fn missing_required(schema: &Value, content: &Map<String, Value>) -> Vec<String> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .filter(|n| !content.contains_key(*n))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// One message of a sampling request or answer; `content` is one block or (with tools,
/// 2025-11-25) an array of blocks, kept as sent.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SamplingMessage {
    pub role: String,
    pub content: Value,
}

/// What a server asks the host's model in `sampling/createMessage`: everything the user
/// must see before approving it (messages, system prompt, token limit, tools).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageRequest {
    pub messages: Vec<SamplingMessage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    pub max_tokens: u64,
    /// Hints and priorities for choosing a model, as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_preferences: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_context: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stop_sequences: Vec<String>,
    /// Tools the model may call (2025-11-25), as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<Value>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The answer to `sampling/createMessage`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageResult {
    pub role: String,
    pub content: Value,
    pub model: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
}

/// A folder the server may work in; `uri` is always `file://`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Root {
    pub uri: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl Root {
    /// The root of a local folder: its absolute path as a `file://` URI (percent-encoded).
    pub fn of_path(path: &std::path::Path, name: Option<String>) -> Root {
        let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        Root {
            uri: file_uri(&abs),
            name,
        }
    }
}

/// `file://` URI of an absolute path, every byte outside the unreserved set and `/`
/// percent-encoded (so `..`, spaces and `#` cannot change what the URI names).
pub fn file_uri(path: &std::path::Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut uri = String::from("file://");
    for &b in path.as_os_str().as_bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                uri.push(b as char)
            }
            other => uri.push_str(&format!("%{other:02X}")),
        }
    }
    uri
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn domain(request: &ElicitRequest) -> Option<String> {
        let url = request.url()?;
        crate::links::check_link(url).ok().map(|l| l.host())
    }

    #[test]
    fn elicitation_requests_of_both_modes() {
        let form = ElicitRequest::from_params(&json!({
            "message": "Name?", "requestedSchema": {"type": "object", "properties": {}}
        }))
        .unwrap();
        assert_eq!(form.mode(), "form");
        let url = ElicitRequest::from_params(&json!({
            "mode": "url", "message": "Sign", "url": "https://example.com/x", "elicitationId": "e1"
        }))
        .unwrap();
        assert_eq!(domain(&url).as_deref(), Some("example.com"));
        let odd = ElicitRequest::Url {
            message: String::new(),
            url: "https://login.example.com.evil.test:8443/a?b#c".into(),
            elicitation_id: String::new(),
        };
        assert_eq!(
            domain(&odd).as_deref(),
            Some("login.example.com.evil.test:8443")
        );
        assert_eq!(domain(&form), None);
        assert_eq!(
            url,
            ElicitRequest::Url {
                message: "Sign".into(),
                url: "https://example.com/x".into(),
                elicitation_id: "e1".into()
            }
        );
        assert_eq!(
            ElicitRequest::from_params(&json!({"message": "x"}))
                .unwrap_err()
                .to_string(),
            "elicitation/create needs an object \"requestedSchema\""
        );
        assert_eq!(
            ElicitRequest::from_params(&json!({"mode": "telepathy", "message": "x"}))
                .unwrap_err()
                .to_string(),
            "unknown elicitation mode \"telepathy\""
        );
    }

    #[test]
    fn defaults_fill_only_what_the_user_left_out() {
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string", "default": "Ann"},
            "age": {"type": "integer", "default": 30},
            "tags": {"type": "array", "default": ["a"]},
            "note": {"type": "string"}
        }, "required": ["name", "note"]});
        let given = json!({"name": "Bob"}).as_object().unwrap().clone();
        let r = ElicitResult::accept_form(&schema, given);
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"action": "accept", "content": {"name": "Bob", "age": 30, "tags": ["a"]}})
        );
        assert_eq!(
            missing_required(&schema, r.content.as_ref().unwrap()),
            ["note"]
        );
        assert_eq!(
            serde_json::to_value(ElicitResult::decline()).unwrap(),
            json!({"action": "decline"})
        );
    }

    #[test]
    fn roots_are_percent_encoded_file_uris() {
        let root = Root::of_path(std::path::Path::new("/tmp/my proj#1"), None);
        assert_eq!(root.uri, "file:///tmp/my%20proj%231");
    }
}
