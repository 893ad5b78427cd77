//! `.mcp.json`: reading, validating and atomically writing the project's MCP server list.
//!
//! The format is the one Claude Code uses: `{"mcpServers": {NAME: {...}}}`. Reading never
//! fails as a whole for a bad server entry: every entry becomes either a [`ServerConfig`] or
//! an [`EntryError`] that names what is wrong, so one broken server never hides the others.
//! A file that is not valid JSON gives a [`ConfigError`] with line and column, and the
//! program carries on with no servers.

mod expand;
pub mod import;
pub mod inputs;
pub mod oauth;
mod save;
pub mod scopes;
pub mod servers;

pub use expand::{expand, ExpandError};
pub use save::{save_mcp_json, validate_document, write_atomically, McpDocument, SaveError};
pub use scopes::{Scope, ScopeFiles, UnknownScope};
// The settings the MCP client's own messages name, and its URL masking, live with the client.
pub use harness9_mcp::mask;
pub use harness9_mcp::protocol::era::ProtocolEra;
pub use harness9_mcp::settings::{
    DEFAULT_MAX_MESSAGE_BYTES, MAX_MESSAGE_FIELD, STARTUP_TIMEOUT_FIELD, TOOL_TIMEOUT_FIELD,
};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};
use sha2::Digest;

/// File name of the project configuration, at the project root.
pub const MCP_JSON: &str = ".mcp.json";

/// How long a server may take from spawn to a listed set of tools.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);

/// How long one tool call may run before it is cancelled.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(60);

/// The `.mcp.json` field that forces a server's protocol era.
pub const PROTOCOL_ERA_FIELD: &str = "protocolEra";

/// The smallest accepted [`MAX_MESSAGE_FIELD`]: below this even a handshake does not fit.
pub const MIN_MAX_MESSAGE_BYTES: usize = 4096;

/// The whole project configuration as read from disk.
#[derive(Debug, Clone, Default)]
pub struct McpConfig {
    /// Where it was read from (`None` when built in memory).
    pub path: Option<PathBuf>,
    /// Every server entry, valid or not, by name (sorted).
    pub servers: BTreeMap<String, Result<ServerConfig, EntryError>>,
    /// Set when the file could not be read or parsed; `servers` is then empty.
    pub error: Option<ConfigError>,
}

/// How to reach one server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TransportConfig {
    Stdio {
        command: String,
        args: Vec<String>,
        env: Vec<(String, String)>,
        cwd: Option<PathBuf>,
    },
    Http {
        url: String,
        headers: Vec<(String, String)>,
    },
    Sse {
        url: String,
        headers: Vec<(String, String)>,
    },
}

impl TransportConfig {
    /// The transport's name as shown to users: `stdio`, `http` or `sse`.
    pub fn kind(&self) -> &'static str {
        match self {
            TransportConfig::Stdio { .. } => "stdio",
            TransportConfig::Http { .. } => "http",
            TransportConfig::Sse { .. } => "sse",
        }
    }
}

fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@%+,•".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// One valid server entry, with `${VAR}` references expanded.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerConfig {
    pub name: String,
    pub transport: TransportConfig,
    pub disabled: bool,
    pub startup_timeout: Duration,
    pub tool_timeout: Duration,
    /// The per-message limit for this server ([`DEFAULT_MAX_MESSAGE_BYTES`] unless set).
    pub max_message_bytes: usize,
    /// Sign-in settings of a remote server (`"oauth"`, `${VAR}` expanded); `None` when the
    /// entry has none (signing in then uses what the servers advertise).
    pub oauth: Option<harness9_mcp::auth::OAuthConfig>,
    /// The protocol era to speak ([`PROTOCOL_ERA_FIELD`]; probed unless set).
    pub era: ProtocolEra,
    /// The scope the entry was read from ([`Scope::Project`] for a single parsed file).
    pub scope: Scope,
    /// The entry exactly as written (unexpanded); compared to decide whether a reload must
    /// restart the server, and fingerprinted for approval.
    pub raw: Value,
}

impl ServerConfig {
    /// The directory a stdio server runs in: its `cwd` (a relative one resolved against the
    /// project folder), or the project folder itself. `None` for remote servers.
    pub fn resolved_cwd(&self, project: &Path) -> Option<PathBuf> {
        match &self.transport {
            // `components` drops `.` segments, so `cwd: "."` is the project folder itself.
            TransportConfig::Stdio { cwd, .. } => Some(match cwd {
                Some(c) if c.is_relative() => project.join(c).components().collect(),
                Some(c) => c.components().collect(),
                None => project.to_path_buf(),
            }),
            TransportConfig::Http { .. } | TransportConfig::Sse { .. } => None,
        }
    }

    /// What an approval is bound to: the transport, the expanded command, args, url and
    /// working directory (as it will be used), and `env`, `headers` and (when present)
    /// `oauth` as written (names and values). Changing any of them needs a new approval. A hash, so that secrets never
    /// sit in the approval store or reach a front end.
    pub fn fingerprint(&self, project: &Path) -> String {
        let written = |k: &str| self.raw.get(k).cloned().unwrap_or(Value::Null);
        let (command, args, url) = match &self.transport {
            TransportConfig::Stdio { command, args, .. } => (
                Value::from(command.as_str()),
                Value::from(args.clone()),
                Value::Null,
            ),
            TransportConfig::Http { url, .. } | TransportConfig::Sse { url, .. } => {
                (Value::Null, Value::Null, Value::from(url.as_str()))
            }
        };
        let cwd = self
            .resolved_cwd(project)
            .map(|c| Value::from(c.to_string_lossy().into_owned()))
            .unwrap_or(Value::Null);
        let mut source = serde_json::json!([
            self.transport.kind(),
            command,
            args,
            cwd,
            written("env"),
            written("headers"),
            url
        ]);
        // Only when present, so that entries without it keep their approvals.
        if let (Some(o), Value::Array(parts)) = (self.raw.get(oauth::OAUTH_FIELD), &mut source) {
            if !o.is_null() {
                parts.push(o.clone());
            }
        }
        let source = source.to_string();
        let digest = sha2::Sha256::digest(source.as_bytes());
        digest.iter().take(16).map(|b| format!("{b:02x}")).collect()
    }

    /// The command line or URL as written in the file, with values that may be secrets
    /// masked (see [`mask`]); `${VAR}` references stay as written. Safe to show anywhere.
    pub fn display_target(&self) -> String {
        self.target(true)
    }

    /// The command line or URL exactly as written in the file, arguments unmasked (what a
    /// review of something about to run must show); only the URL's userinfo and query
    /// values are masked.
    pub fn target_as_written(&self) -> String {
        self.target(false)
    }

    fn target(&self, mask_args: bool) -> String {
        let text = |k: &str| match self.raw.get(k) {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Null) | None => String::new(),
            Some(other) => other.to_string(),
        };
        match &self.transport {
            TransportConfig::Stdio { .. } => {
                let args = strings_as_written(&self.raw, "args");
                let mut s = text("command");
                let args = if mask_args {
                    mask::mask_args(&args)
                } else {
                    args
                };
                for a in args {
                    s.push(' ');
                    s.push_str(&shell_quote(&a));
                }
                s
            }
            TransportConfig::Http { .. } | TransportConfig::Sse { .. } => {
                mask::mask_url(&text("url"))
            }
        }
    }
}

/// A server entry that cannot be used, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct EntryError {
    pub message: String,
    /// The entry's transport when it could be told, for display.
    pub transport: Option<&'static str>,
    /// The entry as written, kept so that a reload notices when it was fixed.
    pub raw: String,
    /// The scope the entry was read from.
    pub scope: Scope,
}

impl EntryError {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        "invalid-entry"
    }
}

/// The file as a whole could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("{path}:{line}:{column}: invalid JSON: {message}. Fix the file; until then no MCP servers are started.")]
    Syntax {
        path: String,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{path}: {message}. Fix the file; until then no MCP servers are started.")]
    Shape { path: String, message: String },
    #[error("{path}: cannot read the file: {message}")]
    Io { path: String, message: String },
}

impl ConfigError {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        match self {
            ConfigError::Syntax { .. } => "invalid-json",
            ConfigError::Shape { .. } => "invalid-config",
            ConfigError::Io { .. } => "config-unreadable",
        }
    }
}

impl McpConfig {
    /// Reads `DIR/.mcp.json`. A missing file is an empty configuration, not an error.
    pub fn load_project(dir: &Path) -> McpConfig {
        Self::load_file(&dir.join(MCP_JSON))
    }

    /// Reads one file with the process environment for `${VAR}` expansion.
    pub fn load_file(path: &Path) -> McpConfig {
        match std::fs::read_to_string(path) {
            Ok(text) => {
                let mut cfg = Self::parse(&text, &path.display().to_string(), &|k| {
                    std::env::var(k).ok()
                });
                cfg.path = Some(path.to_path_buf());
                cfg
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => McpConfig {
                path: Some(path.to_path_buf()),
                ..Default::default()
            },
            Err(e) => McpConfig {
                path: Some(path.to_path_buf()),
                servers: BTreeMap::new(),
                error: Some(ConfigError::Io {
                    path: path.display().to_string(),
                    message: e.to_string(),
                }),
            },
        }
    }

    /// Parses the text of a `.mcp.json`; `origin` names it in messages, `env` resolves
    /// `${VAR}` references.
    pub fn parse(text: &str, origin: &str, env: &dyn Fn(&str) -> Option<String>) -> McpConfig {
        let servers_obj = match validate_document(text, origin) {
            Ok(v) => v,
            Err(error) => {
                return McpConfig {
                    path: None,
                    servers: BTreeMap::new(),
                    error: Some(error),
                }
            }
        };
        let servers = servers_obj
            .iter()
            .map(|(name, entry)| (name.clone(), parse_entry(name, entry, env)))
            .collect();
        McpConfig {
            path: None,
            servers,
            error: None,
        }
    }

    /// Names of the entries that are valid and not disabled.
    pub fn enabled(&self) -> impl Iterator<Item = &ServerConfig> {
        self.servers
            .values()
            .filter_map(|s| s.as_ref().ok())
            .filter(|s| !s.disabled)
    }
}

fn entry_error(message: String, transport: Option<&'static str>, raw: &Value) -> EntryError {
    EntryError {
        message,
        transport,
        raw: raw.to_string(),
        scope: Scope::Project,
    }
}

pub(crate) fn parse_entry(
    name: &str,
    entry: &Value,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<ServerConfig, EntryError> {
    let obj = entry.as_object().ok_or_else(|| {
        entry_error(
            format!("server \"{name}\": the entry must be a JSON object"),
            None,
            entry,
        )
    })?;
    let fail = |msg: String, kind: Option<&'static str>| {
        entry_error(format!("server \"{name}\": {msg}"), kind, entry)
    };
    let kind = transport_kind(obj).map_err(|m| fail(m, None))?;
    let ex = |field: &str, s: &str| -> Result<String, EntryError> {
        expand(s, env).map_err(|e| fail(format!("{field}: {e}"), Some(kind)))
    };

    let transport = match kind {
        "stdio" => {
            let command = string_field(obj, "command").map_err(|m| fail(m, Some(kind)))?;
            let command = ex("command", &command.unwrap_or_default())?;
            let args = string_list(obj, "args")
                .map_err(|m| fail(m, Some(kind)))?
                .iter()
                .map(|a| ex("args", a))
                .collect::<Result<Vec<_>, _>>()?;
            let env_pairs = key_values(obj, "env", true).map_err(|m| fail(m, Some(kind)))?;
            let env_pairs = env_pairs
                .into_iter()
                .map(|(k, v)| Ok((k.clone(), ex(&format!("env.{k}"), &v)?)))
                .collect::<Result<Vec<_>, EntryError>>()?;
            let cwd = match string_field(obj, "cwd").map_err(|m| fail(m, Some(kind)))? {
                Some(c) => Some(PathBuf::from(ex("cwd", &c)?)),
                None => None,
            };
            TransportConfig::Stdio {
                command,
                args,
                env: env_pairs,
                cwd,
            }
        }
        "http" | "sse" => {
            let url = string_field(obj, "url").map_err(|m| fail(m, Some(kind)))?;
            let url = ex("url", &url.unwrap_or_default())?;
            let headers = key_values(obj, "headers", false).map_err(|m| fail(m, Some(kind)))?;
            let headers = headers
                .into_iter()
                .map(|(k, v)| Ok((k.clone(), ex(&format!("headers.{k}"), &v)?)))
                .collect::<Result<Vec<_>, EntryError>>()?;
            if kind == "http" {
                TransportConfig::Http { url, headers }
            } else {
                TransportConfig::Sse { url, headers }
            }
        }
        _ => unreachable!("transport_kind returns a known kind"),
    };

    let disabled = match obj.get("disabled") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            return Err(fail(
                "\"disabled\" must be true or false".into(),
                Some(kind),
            ))
        }
    };
    let startup_timeout = duration_field(obj, STARTUP_TIMEOUT_FIELD, DEFAULT_STARTUP_TIMEOUT)
        .map_err(|m| fail(m, Some(kind)))?;
    let tool_timeout = duration_field(obj, TOOL_TIMEOUT_FIELD, DEFAULT_TOOL_TIMEOUT)
        .map_err(|m| fail(m, Some(kind)))?;
    let max_message_bytes = bytes_field(obj, MAX_MESSAGE_FIELD, DEFAULT_MAX_MESSAGE_BYTES)
        .map_err(|m| fail(m, Some(kind)))?;
    let oauth = oauth::parse(obj, kind, &|field, s| {
        expand(s, env).map_err(|e| format!("{field}: {e}"))
    })
    .map_err(|m| fail(m, Some(kind)))?;
    let era = match obj.get(PROTOCOL_ERA_FIELD) {
        None | Some(Value::Null) => ProtocolEra::Auto,
        Some(Value::String(s)) if s == "auto" => ProtocolEra::Auto,
        Some(Value::String(s)) if s == "legacy" => ProtocolEra::Legacy,
        Some(Value::String(s)) if s == "modern" => ProtocolEra::Modern,
        Some(_) => {
            return Err(fail(
                format!("\"{PROTOCOL_ERA_FIELD}\" must be \"auto\", \"legacy\" or \"modern\""),
                Some(kind),
            ))
        }
    };

    Ok(ServerConfig {
        name: name.to_string(),
        transport,
        disabled,
        startup_timeout,
        tool_timeout,
        max_message_bytes,
        oauth,
        era,
        scope: Scope::Project,
        raw: entry.clone(),
    })
}

/// Decides `stdio`, `http` or `sse` from `type`, `command` and `url`.
fn transport_kind(obj: &Map<String, Value>) -> Result<&'static str, String> {
    let has_command = obj.get("command").is_some_and(|v| !v.is_null());
    let has_url = obj.get("url").is_some_and(|v| !v.is_null());
    let declared = match obj.get("type") {
        None | Some(Value::Null) => None,
        Some(Value::String(t)) => Some(t.as_str()),
        Some(_) => return Err("\"type\" must be a string".into()),
    };
    if has_command && has_url {
        return Err("has both \"command\" and \"url\"; keep \"command\" for a local (stdio) server or \"url\" for a remote one".into());
    }
    let kind = match declared {
        Some("stdio") => "stdio",
        Some("http") | Some("streamable-http") | Some("streamableHttp") => "http",
        Some("sse") => "sse",
        Some(other) => {
            return Err(format!(
                "unknown type \"{other}\"; use \"stdio\", \"http\" or \"sse\""
            ))
        }
        None if has_command => "stdio",
        None if has_url => "http",
        None => {
            return Err(
                "has neither \"command\" (a local server) nor \"url\" (a remote server)".into(),
            )
        }
    };
    match kind {
        "stdio" if !has_command => Err("type \"stdio\" needs a \"command\"".into()),
        "stdio" if has_url => Err("type \"stdio\" takes a \"command\", not a \"url\"".into()),
        "http" | "sse" if !has_url => Err(format!("type \"{kind}\" needs a \"url\"")),
        "http" | "sse" if has_command => Err(format!(
            "type \"{kind}\" takes a \"url\", not a \"command\""
        )),
        k => Ok(k),
    }
}

fn string_field(obj: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if key == "command" && s.trim().is_empty() => {
            Err("\"command\" is empty".into())
        }
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(format!(
            "\"{key}\" must be a string, not {}",
            type_name(other)
        )),
    }
}

fn string_list(obj: &Map<String, Value>, key: &str) -> Result<Vec<String>, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, v)| match v {
                Value::String(s) => Ok(s.clone()),
                // Numbers in args are a common slip; take them as written.
                Value::Number(n) => Ok(n.to_string()),
                other => Err(format!(
                    "\"{key}[{i}]\" must be a string, not {}",
                    type_name(other)
                )),
            })
            .collect(),
        Some(other) => Err(format!(
            "\"{key}\" must be a list of strings, not {}",
            type_name(other)
        )),
    }
}

/// `env`/`headers`: an object `{"K":"V"}`, or (env only) a list `["K=V"]`.
fn key_values(
    obj: &Map<String, Value>,
    key: &str,
    allow_list: bool,
) -> Result<Vec<(String, String)>, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k.clone(), s.clone())),
                Value::Number(n) => Ok((k.clone(), n.to_string())),
                Value::Bool(b) => Ok((k.clone(), b.to_string())),
                other => Err(format!(
                    "\"{key}.{k}\" must be a string, not {}",
                    type_name(other)
                )),
            })
            .collect(),
        Some(Value::Array(items)) if allow_list => items
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let s = v
                    .as_str()
                    .ok_or_else(|| format!("\"{key}[{i}]\" must be a \"NAME=value\" string"))?;
                let (k, val) = s.split_once('=').ok_or_else(|| {
                    format!("\"{key}[{i}]\" is \"{s}\"; write it as \"NAME=value\"")
                })?;
                if k.is_empty() {
                    return Err(format!("\"{key}[{i}]\" has an empty name"));
                }
                Ok((k.to_string(), val.to_string()))
            })
            .collect(),
        Some(other) => Err(if allow_list {
            format!(
                "\"{key}\" must be an object {{\"NAME\": \"value\"}} or a list [\"NAME=value\"], not {}",
                type_name(other)
            )
        } else {
            format!(
                "\"{key}\" must be an object {{\"Name\": \"value\"}}, not {}",
                type_name(other)
            )
        }),
    }
}

fn duration_field(
    obj: &Map<String, Value>,
    key: &str,
    default: Duration,
) -> Result<Duration, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(Value::Number(n)) => match n.as_f64() {
            Some(s) if s > 0.0 && s.is_finite() && s < 1e9 => Ok(Duration::from_secs_f64(s)),
            _ => Err(format!("\"{key}\" must be a positive number of seconds")),
        },
        Some(other) => Err(format!(
            "\"{key}\" must be a number of seconds, not {}",
            type_name(other)
        )),
    }
}

fn bytes_field(obj: &Map<String, Value>, key: &str, default: usize) -> Result<usize, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(Value::Number(n)) => match n.as_u64() {
            Some(b) if b >= MIN_MAX_MESSAGE_BYTES as u64 => {
                Ok(usize::try_from(b).unwrap_or(usize::MAX))
            }
            _ => Err(format!(
                "\"{key}\" must be a whole number of bytes, at least {MIN_MAX_MESSAGE_BYTES}"
            )),
        },
        Some(other) => Err(format!(
            "\"{key}\" must be a number of bytes, not {}",
            type_name(other)
        )),
    }
}

/// A list field of an entry as written (numbers taken as their text); empty when absent.
pub(crate) fn strings_as_written(raw: &Value, key: &str) -> Vec<String> {
    match raw.get(key) {
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .collect(),
        _ => Vec::new(),
    }
}

pub(crate) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests;
