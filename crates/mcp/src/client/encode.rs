//! Writing one request: the params as given, plus, on a modern connection, the `_meta`
//! members every request carries (written once per connection, spliced in as text here).
//! Params that already hold a `_meta` object (a progress token) keep its members beside ours.
//! Beside the bytes go the era's HTTP headers ([`Inner::era_headers`]), taken from the
//! params as given, so that no transport reads the message.

use serde_json::{Map, Value};

use super::{Inner, Params};
use crate::protocol::era;
use crate::protocol::features::LogLevel;
use crate::protocol::jsonrpc::{self, write_str, write_value};
use crate::transport::{mcp_headers, EraHeaders};

impl Inner {
    /// The request as bytes. `progress` is the progress token of a modern request (a
    /// legacy request's params already hold theirs).
    pub(super) fn encode_request(
        &self,
        id: u64,
        method: &str,
        params: &Params,
        progress: Option<u64>,
    ) -> Vec<u8> {
        match self.meta.get() {
            None => encode_plain(id, method, params),
            Some(meta) => {
                let level = self.log_level();
                // `_meta`'s members, its key, the log level and a progress token.
                let room = meta.len() + 96;
                jsonrpc::encode_request_with(id, method, room, true, |out| {
                    write_with_meta(out, params, meta, progress, level)
                })
            }
        }
    }
}

impl Inner {
    /// The era's headers of one message: the settled protocol version and, in the modern
    /// era, `Mcp-Method`, `Mcp-Name` and the tool's `Mcp-Param-*` (read from `params`;
    /// params given as text name nothing). None for a transport that sends no headers.
    pub(super) fn era_headers(&self, method: &str, params: Option<&Params>) -> EraHeaders {
        if !self.sends_era_headers {
            return EraHeaders::default();
        }
        let version = self.version.get().cloned();
        if self.meta.get().is_none() {
            return EraHeaders {
                modern: false,
                version,
                more: Vec::new(),
            };
        }
        let (name, arguments) = params.map_or((None, None), |p| p.named(method));
        let tools = self.tool_headers.lock();
        let mirrored = match (method, name) {
            ("tools/call", Some(tool)) => tools.get(tool).map(Vec::as_slice),
            _ => None,
        };
        let more = mcp_headers::modern_headers(method, name, arguments, mirrored.unwrap_or(&[]));
        EraHeaders {
            modern: true,
            version,
            more,
        }
    }
}

impl Inner {
    /// The era's headers of an answer to a server's request: the version only.
    pub(super) fn answer_headers(&self) -> EraHeaders {
        if !self.sends_era_headers {
            return EraHeaders::default();
        }
        EraHeaders {
            modern: self.meta.get().is_some(),
            version: self.version.get().cloned(),
            more: Vec::new(),
        }
    }
}

impl Params<'_> {
    /// What a request names (the tool or prompt, the resource's URI, the task) and the arguments it
    /// passes, for the modern era's headers.
    fn named(&self, method: &str) -> (Option<&str>, Option<&Value>) {
        let key = match method {
            "tools/call" | "prompts/get" => "name",
            "resources/read" => "uri",
            // The tasks extension: routed to the instance that holds the task.
            "tasks/get" | "tasks/update" | "tasks/cancel" => "taskId",
            _ => return (None, None),
        };
        match self {
            Params::ToolCall { name, arguments } => (Some(name), arguments.as_ref()),
            Params::Task { task_id } => (Some(task_id), None),
            Params::Value(v) => (v.get(key).and_then(Value::as_str), v.get("arguments")),
            Params::None | Params::Raw(_) => (None, None),
        }
    }
}

fn encode_plain(id: u64, method: &str, params: &Params) -> Vec<u8> {
    match params {
        Params::None => jsonrpc::encode_request(id, method, None),
        Params::Value(v) => jsonrpc::encode_request(id, method, Some(v)),
        Params::Raw(text) => jsonrpc::encode_request_with(id, method, 0, true, |out| {
            out.extend_from_slice(text.as_bytes())
        }),
        Params::ToolCall { name, arguments } => {
            jsonrpc::encode_request_with(id, method, 0, true, |out| {
                write_tool_call(out, name, arguments.as_ref());
                out.push(b'}');
            })
        }
        Params::Task { task_id } => jsonrpc::encode_request_with(id, method, 0, true, |out| {
            write_task(out, task_id);
            out.push(b'}');
        }),
    }
}

/// `{"taskId":…` (no closing brace).
fn write_task(out: &mut Vec<u8>, task_id: &str) {
    out.extend_from_slice(br#"{"taskId":"#);
    write_str(out, task_id);
}

/// `{"name":…,"arguments":…` (no closing brace).
fn write_tool_call(out: &mut Vec<u8>, name: &str, arguments: Option<&Value>) {
    out.extend_from_slice(br#"{"name":"#);
    write_str(out, name);
    if let Some(a) = arguments {
        out.extend_from_slice(br#","arguments":"#);
        write_value(out, a);
    }
}

/// The params object with `"_meta":{<meta>…}` as its last member.
fn write_with_meta(
    out: &mut Vec<u8>,
    params: &Params,
    meta: &str,
    progress: Option<u64>,
    level: Option<LogLevel>,
) {
    let meta = Meta {
        members: meta,
        progress,
        level,
    };
    match params {
        Params::None => {
            out.push(b'{');
            write_meta(out, &meta, None);
        }
        Params::ToolCall { name, arguments } => {
            write_tool_call(out, name, arguments.as_ref());
            out.push(b',');
            write_meta(out, &meta, None);
        }
        Params::Task { task_id } => {
            write_task(out, task_id);
            out.push(b',');
            write_meta(out, &meta, None);
        }
        Params::Raw(text) => {
            let body = text.trim_end();
            match body.strip_suffix('}') {
                Some(open) => {
                    out.extend_from_slice(open.as_bytes());
                    if !open.trim_end().ends_with('{') {
                        out.push(b',');
                    }
                    write_meta(out, &meta, None);
                }
                // Not an object: there is nowhere to put `_meta`.
                None => out.extend_from_slice(text.as_bytes()),
            }
        }
        Params::Value(Value::Object(map)) => write_object(out, map, &meta),
        Params::Value(other) => write_value(out, other),
    }
}

fn write_object(out: &mut Vec<u8>, map: &Map<String, Value>, meta: &Meta) {
    out.push(b'{');
    for (key, value) in map {
        if key == "_meta" {
            continue;
        }
        write_str(out, key);
        out.push(b':');
        write_value(out, value);
        out.push(b',');
    }
    write_meta(out, meta, map.get("_meta").and_then(Value::as_object));
}

/// What goes into a modern request's `_meta`: the connection's members, the progress
/// token and the logging level the user chose.
struct Meta<'a> {
    members: &'a str,
    progress: Option<u64>,
    level: Option<LogLevel>,
}

/// `"_meta":{<meta>,"progressToken":…,"…/logLevel":…,<extra>}}`: closes the params
/// object too.
fn write_meta(out: &mut Vec<u8>, meta: &Meta, extra: Option<&Map<String, Value>>) {
    out.extend_from_slice(br#""_meta":{"#);
    out.extend_from_slice(meta.members.as_bytes());
    if let Some(level) = meta.level {
        out.extend_from_slice(br#",""#);
        out.extend_from_slice(era::META_LOG_LEVEL.as_bytes());
        out.extend_from_slice(br#"":""#);
        out.extend_from_slice(level.as_str().as_bytes());
        out.push(b'"');
    }
    if let Some(token) = meta.progress {
        out.extend_from_slice(br#","progressToken":"#);
        jsonrpc::write_u64(out, token);
    }
    for (key, value) in extra.into_iter().flatten() {
        out.push(b',');
        write_str(out, key);
        out.push(b':');
        write_value(out, value);
    }
    out.extend_from_slice(b"}}");
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn params_of(params: &Params) -> Value {
        let mut out = Vec::new();
        write_with_meta(&mut out, params, r#""m":1"#, None, None);
        serde_json::from_slice(&out).expect("valid JSON")
    }

    #[test]
    fn meta_goes_into_every_shape_of_params() {
        assert_eq!(params_of(&Params::None), json!({"_meta": {"m": 1}}));
        assert_eq!(
            params_of(&Params::ToolCall {
                name: "t",
                arguments: Some(json!({"a": 1}))
            }),
            json!({"name": "t", "arguments": {"a": 1}, "_meta": {"m": 1}})
        );
        assert_eq!(
            params_of(&Params::Value(json!({"cursor": "c"}))),
            json!({"cursor": "c", "_meta": {"m": 1}})
        );
        assert_eq!(
            params_of(&Params::Value(
                json!({"x": 1, "_meta": {"progressToken": 3}})
            )),
            json!({"x": 1, "_meta": {"m": 1, "progressToken": 3}})
        );
        assert_eq!(
            params_of(&Params::Raw(r#"{"requestState":"a\u00e9"}"#.into())),
            json!({"requestState": "aé", "_meta": {"m": 1}})
        );
        assert_eq!(
            params_of(&Params::Raw("{ }".into())),
            json!({"_meta": {"m": 1}})
        );
        let mut out = Vec::new();
        write_with_meta(
            &mut out,
            &Params::Raw(r#"{"s":"\u00e9"}"#.into()),
            r#""m":1"#,
            Some(4),
            Some(LogLevel::Warning),
        );
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"{"s":"\u00e9","_meta":{"m":1,"io.modelcontextprotocol/logLevel":"warning","progressToken":4}}"#
        );
    }

    #[test]
    fn a_task_request_names_its_task() {
        for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
            let params = Params::Value(json!({"taskId": "task-7"}));
            assert_eq!(params.named(method).0, Some("task-7"), "{method}");
        }
        let listed = Params::Value(json!({"taskId": "task-7"}));
        assert_eq!(listed.named("tasks/list").0, None);
    }
}
