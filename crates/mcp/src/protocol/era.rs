//! The two protocol eras: the legacy stateful one (an `initialize` handshake, 2024-11-05 …
//! 2025-11-25) and the modern stateless one (2026-07-28: `server/discover`, per-request
//! `_meta`, multi round-trip results). This module owns what tells them apart and what
//! the modern era puts on every request; the client ([`crate::client`]) drives the probe.
//!
//! Invariants: the era is a property of one connection (one server process, one HTTP
//! origin), decided once when it opens and never changed afterwards; the per-request
//! `_meta` of a modern connection is written once, as JSON text, when the version is settled.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

use super::jsonrpc::RpcError;
use super::types::{Implementation, InitializeResult};

/// Which protocol era to speak to a server (`"protocolEra"` in `.mcp.json`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ProtocolEra {
    /// Probe: the modern era when the server speaks it, else the legacy one.
    #[default]
    Auto,
    /// Only the `initialize` handshake (2025-11-25 and earlier); no probe.
    Legacy,
    /// Only the stateless 2026-07-28 protocol; never falls back.
    Modern,
}

/// The modern protocol version harness9 prefers (and the only one it speaks today).
pub const MODERN_PROTOCOL_VERSION: &str = "2026-07-28";

/// Every modern protocol version harness9 speaks, preferred first.
pub const MODERN_PROTOCOL_VERSIONS: &[&str] = &[MODERN_PROTOCOL_VERSION];

/// How long the stdio probe (`server/discover`) waits for an answer before the server is
/// taken for a legacy one that ignores unknown requests. Servers that know the method
/// answer it at once; legacy servers usually answer `-32601` at once too, so only a silent
/// legacy server pays this wait.
pub const DISCOVER_TIMEOUT: Duration = Duration::from_millis(1500);

/// Most `input_required` rounds one request may take before we give up on the server.
pub const MAX_INPUT_ROUNDS: usize = 8;

/// `HeaderMismatch`: the HTTP headers disagree with the request's `_meta`.
pub const HEADER_MISMATCH: i64 = -32020;
/// `MissingRequiredClientCapability`: the request needs a capability we did not announce.
pub const MISSING_CLIENT_CAPABILITY: i64 = -32021;
/// `UnsupportedProtocolVersion`: the server does not speak the version we asked for.
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// The `_meta` key of the protocol version.
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// The `_meta` key of the client capabilities.
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// The `_meta` key of the client's name and version.
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// The `_meta` key of the server's name and version in a `DiscoverResult`.
/// The logging level modern requests ask for until the user chooses one (a modern server
/// sends no log messages for a request that names none).
pub const DEFAULT_LOG_LEVEL: crate::protocol::features::LogLevel =
    crate::protocol::features::LogLevel::Info;
/// The `_meta` key of the logging level a modern request asks for (the modern era's
/// replacement of `logging/setLevel`).
pub const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// The `_meta` key of the server's own description in a `DiscoverResult`.
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// The era a connection speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum Era {
    Legacy,
    Modern,
}

impl Era {
    /// The era of a negotiated protocol version (modern from 2026-07-28 on).
    pub fn of_version(version: &str) -> Era {
        if version >= MODERN_PROTOCOL_VERSION {
            Era::Modern
        } else {
            Era::Legacy
        }
    }

    pub fn word(self) -> &'static str {
        match self {
            Era::Legacy => "legacy",
            Era::Modern => "modern",
        }
    }
}

/// The members of the `_meta` every modern request carries, as JSON text without the
/// enclosing braces (so it can be spliced into an object that has more members).
pub fn meta_members(version: &str, capabilities: &Value) -> String {
    let info = json!({"name": "harness9", "version": env!("CARGO_PKG_VERSION")});
    let mut text = String::with_capacity(160);
    for (i, (key, value)) in [
        (META_PROTOCOL_VERSION, json!(version)),
        (META_CLIENT_CAPABILITIES, capabilities.clone()),
        (META_CLIENT_INFO, info),
    ]
    .into_iter()
    .enumerate()
    {
        if i > 0 {
            text.push(',');
        }
        text.push_str(&Value::String(key.into()).to_string());
        text.push(':');
        text.push_str(&value.to_string());
    }
    text
}

/// The client capabilities of the modern era: those of the legacy era without what the
/// modern era removed (`roots.listChanged`: there is no roots notification any more), and
/// with the tasks extension (every modern request declares it: the client follows any
/// task a server makes of a `tools/call`).
pub fn modern_capabilities(legacy: &Value) -> Value {
    let mut caps = legacy.clone();
    if let Some(roots) = caps.get_mut("roots").and_then(Value::as_object_mut) {
        roots.remove("listChanged");
    }
    // Client-hosted tasks are a legacy feature: the extension has none.
    if let Some(map) = caps.as_object_mut() {
        map.remove("tasks");
        let extensions = map
            .entry("extensions")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(extensions) = extensions.as_object_mut() {
            extensions.insert(
                super::tasks::TASKS_EXTENSION.into(),
                Value::Object(Map::new()),
            );
        }
    }
    caps
}

/// A `server/discover` result.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoverResult {
    #[serde(default)]
    pub supported_versions: Vec<String>,
    #[serde(default)]
    pub capabilities: Map<String, Value>,
    #[serde(default)]
    pub instructions: Option<String>,
    #[serde(default, rename = "_meta")]
    pub meta: Map<String, Value>,
}

impl DiscoverResult {
    /// The handshake-shaped summary the rest of the client keeps, at `version`.
    pub fn into_summary(self, version: &str) -> InitializeResult {
        let server_info = self
            .meta
            .get(META_SERVER_INFO)
            .and_then(|v| serde_json::from_value::<Implementation>(v.clone()).ok())
            .unwrap_or_default();
        InitializeResult {
            protocol_version: version.to_string(),
            capabilities: self.capabilities,
            server_info,
            instructions: self.instructions,
        }
    }
}

/// Our preferred modern version among `offered`, if any.
pub fn common_version<'a>(offered: impl IntoIterator<Item = &'a str>) -> Option<&'static str> {
    let offered: Vec<&str> = offered.into_iter().collect();
    MODERN_PROTOCOL_VERSIONS
        .iter()
        .copied()
        .find(|v| offered.contains(v))
}

/// The versions an `UnsupportedProtocolVersion` error lists in `data.supported`, when the
/// error is one (the recognized modern error of the probe).
pub fn unsupported_versions(error: &RpcError) -> Option<Vec<String>> {
    if error.code != UNSUPPORTED_PROTOCOL_VERSION {
        return None;
    }
    let list = error.data.as_ref()?.get("supported")?.as_array()?;
    Some(
        list.iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
    )
}

/// Whether `error` is one only a modern server sends (so the server is modern).
pub fn is_modern_error(error: &RpcError) -> bool {
    match error.code {
        UNSUPPORTED_PROTOCOL_VERSION => unsupported_versions(error).is_some(),
        HEADER_MISMATCH | MISSING_CLIENT_CAPABILITY => true,
        _ => false,
    }
}

/// A user-facing explanation appended to the message of a modern error, if it is one.
pub fn explain(error: &RpcError) -> Option<String> {
    let data = error.data.as_ref();
    match error.code {
        HEADER_MISMATCH => Some(
            "the request's headers and its _meta disagree (a harness9 bug; please report it)"
                .into(),
        ),
        MISSING_CLIENT_CAPABILITY => {
            let wanted = data
                .and_then(|d| d.get("requiredCapabilities").or_else(|| d.get("required")))
                .map_or_else(|| "a capability".to_string(), Value::to_string);
            Some(format!(
                "the server needs {wanted} from the client, which harness9 did not announce for this server"
            ))
        }
        UNSUPPORTED_PROTOCOL_VERSION => {
            let supported = data
                .and_then(|d| d.get("supported"))
                .map_or_else(|| "other versions".to_string(), Value::to_string);
            Some(format!(
                "the server supports {supported}; harness9 speaks {} (modern) and {} (legacy)",
                MODERN_PROTOCOL_VERSIONS.join(", "),
                super::types::SUPPORTED_PROTOCOL_VERSIONS.join(", ")
            ))
        }
        _ => None,
    }
}

/// What a modern result says it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResultKind {
    /// `resultType` `"complete"`, or none (legacy servers send none).
    Complete,
    /// `resultType` `"input_required"`: fulfil `inputRequests` and retry.
    InputRequired,
    /// `resultType` `"task"`: the call became a task (the tasks extension; `tools/call` only).
    Task,
}

/// A `resultType` this client does not know ([`result_kind_of`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown resultType {0:?}")]
pub struct UnknownResultType(pub String);

impl UnknownResultType {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        "unknown-result-type"
    }
}

/// What a result's `resultType` (`None` when absent) says; an unknown value is an error.
pub fn result_kind_of(result_type: Option<&str>) -> Result<ResultKind, UnknownResultType> {
    match result_type {
        None | Some("complete") => Ok(ResultKind::Complete),
        Some("input_required") => Ok(ResultKind::InputRequired),
        Some("task") => Ok(ResultKind::Task),
        Some(other) => Err(UnknownResultType(other.to_string())),
    }
}

/// An `input_required` result: what the server needs, and the state to echo back.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputRequired {
    /// Key → `{method, params}` of one request to the client.
    #[serde(default)]
    pub input_requests: Map<String, Value>,
    /// Echoed back byte for byte (kept as the text the server sent).
    #[serde(default)]
    pub request_state: Option<Box<RawValue>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_is_one_object_when_braced() {
        let members = meta_members("2026-07-28", &json!({"roots": {}}));
        let v: Value = serde_json::from_str(&format!("{{{members}}}")).unwrap();
        assert_eq!(v[META_PROTOCOL_VERSION], "2026-07-28");
        assert_eq!(v[META_CLIENT_CAPABILITIES], json!({"roots": {}}));
        assert_eq!(v[META_CLIENT_INFO]["name"], "harness9");
    }

    #[test]
    fn result_types() {
        assert_eq!(result_kind_of(None), Ok(ResultKind::Complete));
        assert_eq!(result_kind_of(Some("complete")), Ok(ResultKind::Complete));
        assert_eq!(
            result_kind_of(Some("input_required")),
            Ok(ResultKind::InputRequired)
        );
        assert_eq!(result_kind_of(Some("task")), Ok(ResultKind::Task));
        assert_eq!(
            result_kind_of(Some("later")).map_err(|e| e.to_string()),
            Err("unknown resultType \"later\"".to_string())
        );
    }

    #[test]
    fn recognized_modern_errors() {
        let e = |code, data| RpcError {
            code,
            message: "m".into(),
            data,
        };
        let unsupported = e(-32022, Some(json!({"supported": ["2026-07-28"]})));
        assert!(is_modern_error(&unsupported));
        assert_eq!(
            unsupported_versions(&unsupported),
            Some(vec!["2026-07-28".to_string()])
        );
        assert!(!is_modern_error(&e(-32022, None)));
        assert!(!is_modern_error(&e(-32601, None)));
        assert!(!is_modern_error(&e(-32602, None)));
        assert!(!is_modern_error(&e(-32000, None)));
        assert_eq!(
            common_version(["2099-01-01", "2026-07-28"]),
            Some("2026-07-28")
        );
        assert_eq!(common_version(["2025-11-25"]), None);
        assert_eq!(Era::of_version("2025-11-25"), Era::Legacy);
        assert_eq!(Era::of_version("2026-07-28"), Era::Modern);
    }

    #[test]
    fn modern_capabilities_drop_roots_list_changed() {
        let caps = json!({"roots": {"listChanged": true}, "sampling": {}});
        assert_eq!(
            modern_capabilities(&caps),
            json!({"roots": {}, "sampling": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}})
        );
    }
}
