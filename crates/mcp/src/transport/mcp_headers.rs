//! The request headers of the modern era on Streamable HTTP (2026-07-28): every POST says
//! its protocol version (`MCP-Protocol-Version`, the same as the request's `_meta`), its
//! method (`Mcp-Method`) and, for `tools/call`, `resources/read` and `prompts/get`, what it
//! names (`Mcp-Name`: the tool, the URI, the prompt). Tool parameters whose schema carries
//! `x-mcp-header: <Name>` are mirrored as `Mcp-Param-<Name>`. Values that are not plain
//! visible ASCII, or have whitespace at either end, or look like the sentinel, are sent as
//! `=?base64?<UTF-8 in base64>?=`.
//!
//! A tool whose `x-mcp-header` annotations break the rules (empty, not a header token,
//! repeated ignoring case, on a non-primitive or `number` parameter, or not reachable from
//! the schema root through `properties` alone) must not be offered at all
//! ([`header_params`] says why).

use std::collections::HashMap;

use base64::Engine;
use reqwest::header::{HeaderName, HeaderValue};
use serde_json::Value;

/// The schema keyword that asks for a parameter to be mirrored in a header.
pub const X_MCP_HEADER: &str = "x-mcp-header";

const SENTINEL_START: &str = "=?base64?";
const SENTINEL_END: &str = "?=";

/// One mirrored parameter: its path of `properties` keys and its header name part.
pub type HeaderParam = (Vec<String>, String);

/// Why a tool's `x-mcp-header` annotations break the rules (the tool is not offered).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeaderParamError {
    #[error("{X_MCP_HEADER} must be a string")]
    NotString,
    #[error("{X_MCP_HEADER} {0:?} is not a header name")]
    NotHeaderName(String),
    #[error("{X_MCP_HEADER} {0:?} is on the schema root")]
    OnRoot(String),
    #[error("{X_MCP_HEADER} {name:?} is on a parameter of type {}", .kind.as_deref().unwrap_or("(none)"))]
    WrongType { name: String, kind: Option<String> },
    #[error("{X_MCP_HEADER} inside \"{0}\" (only parameters reached through \"properties\" may have one)")]
    NotAParameter(String),
    #[error("{X_MCP_HEADER} {0:?} is used twice")]
    Twice(String),
}

impl HeaderParamError {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        match self {
            HeaderParamError::NotString
            | HeaderParamError::NotHeaderName(_)
            | HeaderParamError::OnRoot(_)
            | HeaderParamError::WrongType { .. }
            | HeaderParamError::NotAParameter(_)
            | HeaderParamError::Twice(_) => "invalid-header-annotation",
        }
    }
}

/// [`header_params`] of a schema's text, parsed only when it mentions the annotation.
pub fn header_params_text(
    schema: &crate::protocol::schema_text::SchemaText,
) -> Result<Vec<HeaderParam>, HeaderParamError> {
    if !schema.mentions(X_MCP_HEADER) {
        return Ok(Vec::new());
    }
    header_params(&schema.value())
}

/// The mirrored parameters of a tool's `inputSchema`, or why its annotations are invalid.
pub fn header_params(schema: &Value) -> Result<Vec<HeaderParam>, HeaderParamError> {
    // Most schemas have none: one look without building paths settles them.
    if !mentions_header(schema) {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    walk(schema, &mut Vec::new(), &mut out)?;
    let mut seen = std::collections::HashSet::new();
    for (_, name) in &out {
        if !seen.insert(name.to_ascii_lowercase()) {
            return Err(HeaderParamError::Twice(name.clone()));
        }
    }
    Ok(out)
}

fn walk(
    node: &Value,
    path: &mut Vec<String>,
    out: &mut Vec<HeaderParam>,
) -> Result<(), HeaderParamError> {
    let Some(obj) = node.as_object() else {
        return Ok(());
    };
    for (key, value) in obj {
        match key.as_str() {
            X_MCP_HEADER => {
                let name = value.as_str().ok_or(HeaderParamError::NotString)?;
                if name.is_empty() || !name.bytes().all(is_tchar) {
                    return Err(HeaderParamError::NotHeaderName(name.to_string()));
                }
                if path.is_empty() {
                    return Err(HeaderParamError::OnRoot(name.to_string()));
                }
                match obj.get("type").and_then(Value::as_str) {
                    Some("string" | "integer" | "boolean") => {}
                    other => {
                        return Err(HeaderParamError::WrongType {
                            name: name.to_string(),
                            kind: other.map(str::to_string),
                        })
                    }
                }
                out.push((path.clone(), name.to_string()));
            }
            "properties" => {
                if let Some(props) = value.as_object() {
                    for (name, sub) in props {
                        path.push(name.clone());
                        walk(sub, path, out)?;
                        path.pop();
                    }
                }
            }
            // Values, not schemas: nothing in them is an annotation.
            "default" | "const" | "enum" | "examples" => {}
            _ => {
                if mentions_header(value) {
                    return Err(HeaderParamError::NotAParameter(key.clone()));
                }
            }
        }
    }
    Ok(())
}

fn mentions_header(v: &Value) -> bool {
    match v {
        Value::Object(m) => m
            .iter()
            .any(|(k, v)| k == X_MCP_HEADER || mentions_header(v)),
        Value::Array(items) => items.iter().any(mentions_header),
        _ => false,
    }
}

/// RFC 9110 `tchar`.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// Whether a value goes in a header as it is: visible ASCII and spaces, no space at
/// either end, not starting like the sentinel.
fn is_plain(value: &str) -> bool {
    value.bytes().all(|b| (0x20..=0x7e).contains(&b))
        && !value.starts_with(' ')
        && !value.ends_with(' ')
        && !value.starts_with(SENTINEL_START)
}

/// A header value: as it is when plain, else in the base64 sentinel form.
pub fn encode_value(value: &str) -> String {
    if is_plain(value) {
        value.to_string()
    } else {
        let b64 = base64::engine::general_purpose::STANDARD.encode(value.as_bytes());
        format!("{SENTINEL_START}{b64}{SENTINEL_END}")
    }
}

/// The mirrored parameters of every tool listed so far, by tool name.
pub(crate) type ToolHeaders = HashMap<String, Vec<HeaderParam>>;

/// Records the mirrored parameters of listed tools (valid tools only).
pub(crate) fn note_tools(list: &[crate::protocol::types::ToolDef], tools: &mut ToolHeaders) {
    for tool in list {
        match header_params_text(&tool.input_schema) {
            Ok(params) if !params.is_empty() => {
                tools.insert(tool.name.clone(), params);
            }
            _ => {
                tools.remove(&tool.name);
            }
        }
    }
}

/// `Mcp-Method` and `Mcp-Name`, named once (a name made at run time is copied and checked
/// on every request).
const MCP_METHOD: HeaderName = HeaderName::from_static("mcp-method");
const MCP_NAME: HeaderName = HeaderName::from_static("mcp-name");

/// The `Mcp-Method` value of the methods sent most, built when compiled; others are made
/// from the method's text.
fn method_value(method: &str) -> Option<HeaderValue> {
    const KNOWN: [&str; 12] = [
        "tools/call",
        "tools/list",
        "tasks/get",
        "tasks/update",
        "tasks/cancel",
        "tasks/result",
        "tasks/list",
        "resources/read",
        "resources/list",
        "prompts/get",
        "prompts/list",
        "subscriptions/listen",
    ];
    KNOWN
        .iter()
        .find(|k| **k == method)
        .map(|k| HeaderValue::from_static(k))
}

/// A header value for `value`: as it is when plain (one copy), else in the base64
/// sentinel form.
fn header_value(value: &str) -> Option<HeaderValue> {
    if is_plain(value) {
        HeaderValue::from_str(value).ok()
    } else {
        HeaderValue::from_str(&encode_value(value)).ok()
    }
}

/// The modern era's headers of one message besides its version: `Mcp-Method`, `Mcp-Name`
/// (`name`: the tool, prompt or resource URI it names) and an `Mcp-Param-*` for each
/// mirrored parameter present in `arguments`.
pub(crate) fn modern_headers(
    method: &str,
    name: Option<&str>,
    arguments: Option<&Value>,
    mirrored: &[HeaderParam],
) -> Vec<(HeaderName, HeaderValue)> {
    let mut headers = Vec::with_capacity(2 + mirrored.len());
    if let Some(v) = method_value(method).or_else(|| header_value(method)) {
        headers.push((MCP_METHOD, v));
    }
    if let Some(v) = name.and_then(header_value) {
        headers.push((MCP_NAME, v));
    }
    for (path, header) in mirrored {
        let mut at = arguments;
        for key in path {
            at = at.and_then(|a| a.get(key));
        }
        let text = match at {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Bool(b)) => b.to_string(),
            Some(Value::Number(n)) => n.to_string(),
            _ => continue,
        };
        let name = HeaderName::from_bytes(format!("mcp-param-{header}").as_bytes());
        if let (Ok(n), Some(v)) = (name, header_value(&text)) {
            headers.push((n, v));
        }
    }
    headers
}

/// Most bytes of an error body read to find a JSON-RPC error in it.
const ERROR_BODY_BYTES: usize = 64 * 1024;

/// The start of a response body (an error body is small), without waiting long for it.
pub(crate) async fn read_small_body(mut resp: crate::http::wire::HttpResponse) -> Vec<u8> {
    let mut body = Vec::new();
    while body.len() < ERROR_BODY_BYTES {
        match tokio::time::timeout(std::time::Duration::from_secs(5), resp.chunk()).await {
            Ok(Ok(Some(c))) => body.extend_from_slice(&c),
            _ => break,
        }
    }
    body
}

/// The `error` object of a JSON-RPC error message, as JSON text.
pub(crate) fn error_object(body: &[u8]) -> Option<String> {
    let v: Value = serde_json::from_slice(body).ok()?;
    let error = v.get("error")?;
    error.get("code")?.as_i64()?;
    error.get("message")?.as_str()?;
    Some(error.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_are_encoded_when_they_must_be() {
        assert_eq!(encode_value("us-west1"), "us-west1");
        assert_eq!(
            encode_value("Hello, 世界"),
            "=?base64?SGVsbG8sIOS4lueVjA==?="
        );
        assert_eq!(encode_value(" padded "), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(encode_value("line1\nline2"), "=?base64?bGluZTEKbGluZTI=?=");
        assert_eq!(
            encode_value("=?base64?literal?="),
            "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="
        );
    }

    #[test]
    fn annotations_are_checked() {
        let ok = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "opts": {"type": "object", "properties": {"n": {"type": "integer", "x-mcp-header": "N"}}}
        }});
        assert_eq!(
            header_params(&ok).unwrap(),
            vec![
                (vec!["region".to_string()], "Region".to_string()),
                (vec!["opts".to_string(), "n".to_string()], "N".to_string())
            ]
        );
        for bad in [
            json!({"properties": {"a": {"type": "string", "x-mcp-header": ""}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": "a b"}}}),
            json!({"properties": {"a": {"type": "number", "x-mcp-header": "A"}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": "A"},
                                  "b": {"type": "string", "x-mcp-header": "a"}}}),
            json!({"properties": {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}}}),
            json!({"anyOf": [{"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}]}),
        ] {
            assert!(header_params(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn modern_requests_get_their_headers() {
        let mirrored = vec![
            (vec!["region".into()], "Region".into()),
            (vec!["gone".into()], "Gone".into()),
        ];
        let args = json!({"region": "Zürich", "gone": null});
        let headers = modern_headers("tools/call", Some("q"), Some(&args), &mirrored);
        let h = |n: &str| {
            headers
                .iter()
                .find(|(k, _)| k == n)
                .map(|(_, v)| v.to_str().unwrap().to_string())
        };
        assert_eq!(h("mcp-method").as_deref(), Some("tools/call"));
        assert_eq!(h("mcp-name").as_deref(), Some("q"));
        assert_eq!(
            h("mcp-param-region").as_deref(),
            Some("=?base64?WsO8cmljaA==?=")
        );
        assert_eq!(h("mcp-param-gone"), None);
        assert_eq!(headers.len(), 3);
    }
}
