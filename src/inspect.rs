//! Read-only views of a project's `.mcp.json` for the front ends: the file's text with a
//! content hash (to notice changes made elsewhere), live validation of edited text, edits
//! that keep unknown keys, the approval requests and a server's entry with secrets masked.
//!
//! Nothing here starts or stops a server; [`crate::Harness`] pairs these views with the
//! manager. Values that may be secrets (env and header values, tokens in args or URLs) are
//! masked in [`ServerEntry`] (see [`crate::config::mask`]). An [`ApprovalRequest`] shows
//! what runs as written (only env and header values, the OAuth client secret and the URL's
//! userinfo and query values are masked), rendered safe for display by
//! [`crate::term_text`], and carries the entry's fingerprint so that what is approved is
//! what was shown.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::config::{ConfigError, McpConfig, McpDocument, ServerConfig};

use crate::config::mask::is_reference;
pub use crate::config::mask::{mask_args, mask_url, MASK};

mod approval;
mod details;
pub use approval::{approval_prompt, command_line, ApprovalPick, ApprovalRequest, ApprovalShown};
pub use details::{server_details, ServerDetails};

/// `.mcp.json` as it is on disk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ConfigText {
    pub path: PathBuf,
    /// The file's text; empty when the file does not exist.
    pub text: String,
    pub exists: bool,
    /// [`content_hash`] of the text, to tell whether the file changed since it was read.
    pub hash: String,
}

impl ConfigText {
    /// Reads the file; a missing file is an empty text.
    pub fn read(path: &Path) -> std::io::Result<ConfigText> {
        let (text, exists) = match std::fs::read_to_string(path) {
            Ok(t) => (t, true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (String::new(), false),
            Err(e) => return Err(e),
        };
        Ok(ConfigText {
            path: path.to_path_buf(),
            hash: content_hash(&text),
            text,
            exists,
        })
    }
}

/// A short stable hash of a text.
pub fn content_hash(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// What is wrong with a `.mcp.json` text as a whole.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ConfigProblem {
    pub message: String,
    /// 1-based position of a JSON syntax error.
    pub line: Option<usize>,
    pub column: Option<usize>,
}

/// One server entry's verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct EntryCheck {
    pub name: String,
    /// `stdio`, `http`, `sse`, or empty when it cannot be told.
    pub transport: String,
    /// Why the entry cannot be used; `None` when it is valid.
    pub error: Option<String>,
    pub disabled: bool,
}

/// The result of validating an edited `.mcp.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ConfigCheck {
    /// Set when the text cannot be saved (invalid JSON or wrong shape).
    pub error: Option<ConfigProblem>,
    /// Every entry, in file order of names (sorted).
    pub servers: Vec<EntryCheck>,
}

impl ConfigCheck {
    /// Validates a text as `.mcp.json`, with `env` resolving `${VAR}` references.
    pub fn of_text(text: &str, env: &dyn Fn(&str) -> Option<String>) -> ConfigCheck {
        let config = McpConfig::parse(text, crate::config::MCP_JSON, env);
        let error = config.error.as_ref().map(problem);
        let servers = config
            .servers
            .iter()
            .map(|(name, entry)| match entry {
                Ok(c) => EntryCheck {
                    name: name.clone(),
                    transport: c.transport.kind().into(),
                    error: None,
                    disabled: c.disabled,
                },
                Err(e) => EntryCheck {
                    name: name.clone(),
                    transport: e.transport.unwrap_or("").into(),
                    error: Some(e.message.clone()),
                    disabled: false,
                },
            })
            .collect();
        ConfigCheck { error, servers }
    }
}

fn problem(e: &ConfigError) -> ConfigProblem {
    match e {
        ConfigError::Syntax {
            line,
            column,
            message,
            ..
        } => ConfigProblem {
            message: format!("invalid JSON: {message}"),
            line: Some(*line),
            column: Some(*column),
        },
        ConfigError::Shape { message, .. } | ConfigError::Io { message, .. } => ConfigProblem {
            message: message.clone(),
            line: None,
            column: None,
        },
    }
}

/// An edit of a `.mcp.json` text made through a form.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "op", rename_all = "camelCase")]
pub enum ConfigEdit {
    /// Adds or replaces an entry; with `previous` set to another name, that entry is
    /// removed (a rename).
    SetServer {
        name: String,
        entry: Value,
        previous: Option<String>,
    },
    RemoveServer {
        name: String,
    },
    SetDisabled {
        name: String,
        disabled: bool,
    },
}

/// Why a form edit could not be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    #[error("fix the JSON first: {0}")]
    Invalid(ConfigError),
    #[error("a server name cannot be empty")]
    EmptyName,
    #[error("a server entry must be a JSON object")]
    NotAnObject,
    #[error("there is already a server named \"{0}\"")]
    Duplicate(String),
    #[error("there is no server named \"{0}\"")]
    Unknown(String),
}

impl EditError {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        match self {
            EditError::Invalid(e) => e.code(),
            EditError::EmptyName => "empty-name",
            EditError::NotAnObject => "not-an-object",
            EditError::Duplicate(_) => "server-exists",
            EditError::Unknown(_) => "unknown-server",
        }
    }
}

/// Applies a form edit to a `.mcp.json` text, keeping every other key and their order.
pub fn apply_edit(text: &str, edit: &ConfigEdit) -> Result<String, EditError> {
    let mut doc = McpDocument::parse(text, crate::config::MCP_JSON).map_err(EditError::Invalid)?;
    let names = crate::config::validate_document(text, crate::config::MCP_JSON)
        .map_err(EditError::Invalid)?;
    match edit {
        ConfigEdit::SetServer {
            name,
            entry,
            previous,
        } => {
            let name = name.trim();
            if name.is_empty() {
                return Err(EditError::EmptyName);
            }
            if !entry.is_object() {
                return Err(EditError::NotAnObject);
            }
            let renamed_from = previous.as_deref().filter(|p| *p != name);
            let is_new = previous.is_none() || renamed_from.is_some();
            if is_new && names.contains_key(name) {
                return Err(EditError::Duplicate(name.into()));
            }
            if let Some(old) = renamed_from {
                doc.remove_server(old);
            }
            doc.set_server(name, entry.clone());
        }
        ConfigEdit::RemoveServer { name } => {
            if !doc.remove_server(name) {
                return Err(EditError::Unknown(name.clone()));
            }
        }
        ConfigEdit::SetDisabled { name, disabled } => {
            if !doc.set_disabled(name, *disabled) {
                return Err(EditError::Unknown(name.clone()));
            }
        }
    }
    Ok(doc.to_text())
}

/// A name and a value that may have been masked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct KeyValue {
    pub key: String,
    pub value: String,
}

/// One server's entry for the server panel: as written, secrets masked.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ServerEntry {
    pub name: String,
    pub transport: String,
    /// The config scope the entry is written in.
    pub scope: crate::config::Scope,
    pub command: Option<String>,
    pub args: Vec<String>,
    pub url: Option<String>,
    pub cwd: Option<String>,
    /// Command and args (as above) as one shell-quoted line for display, with control,
    /// bidirectional and invisible characters visibly escaped ([`crate::term_text`]).
    pub shown_command: Option<String>,
    /// The URL (as above) for display, escaped the same way.
    pub shown_url: Option<String>,
    /// Values are masked unless they are `${VAR}` references.
    pub env: Vec<KeyValue>,
    pub headers: Vec<KeyValue>,
    pub disabled: bool,
    pub startup_timeout_ms: u64,
    pub tool_timeout_ms: u64,
    /// Why the entry cannot be used.
    pub error: Option<String>,
}

impl ServerEntry {
    /// The entry named `name` in a loaded configuration.
    pub fn find(config: &McpConfig, name: &str) -> Option<ServerEntry> {
        let entry = config.servers.get(name)?;
        Some(match entry {
            Ok(cfg) => Self::of(cfg),
            Err(e) => {
                let raw: Value = serde_json::from_str(&e.raw).unwrap_or(Value::Null);
                let mut view = Self::of_raw(name, e.transport.unwrap_or(""), &raw);
                view.error = Some(e.message.clone());
                view.scope = e.scope;
                view
            }
        })
    }

    pub fn of(cfg: &ServerConfig) -> ServerEntry {
        let mut view = Self::of_raw(&cfg.name, cfg.transport.kind(), &cfg.raw);
        view.disabled = cfg.disabled;
        view.scope = cfg.scope;
        view.startup_timeout_ms = cfg.startup_timeout.as_millis() as u64;
        view.tool_timeout_ms = cfg.tool_timeout.as_millis() as u64;
        view
    }

    fn of_raw(name: &str, transport: &str, raw: &Value) -> ServerEntry {
        let r = RawEntry(raw);
        let masked = |pairs: Vec<(String, String)>| {
            pairs
                .into_iter()
                .map(|(key, value)| KeyValue {
                    value: if is_reference(&value) {
                        value
                    } else {
                        MASK.to_string()
                    },
                    key,
                })
                .collect()
        };
        let command = r.string("command");
        let args = mask_args(&r.strings("args"));
        let url = r.string("url").map(|u| mask_url(&u));
        let one = |s: &str| crate::term_text::line(s).into_owned();
        ServerEntry {
            name: name.into(),
            transport: transport.into(),
            scope: crate::config::Scope::Project,
            shown_command: command.as_deref().map(|c| one(&command_line(c, &args))),
            shown_url: url.as_deref().map(one),
            command,
            args,
            url,
            cwd: r.string("cwd"),
            env: masked(r.pairs("env")),
            headers: masked(r.pairs("headers")),
            disabled: raw
                .get("disabled")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            startup_timeout_ms: crate::config::DEFAULT_STARTUP_TIMEOUT.as_millis() as u64,
            tool_timeout_ms: crate::config::DEFAULT_TOOL_TIMEOUT.as_millis() as u64,
            error: None,
        }
    }
}

/// Reads fields of an entry as written, tolerating wrong types.
pub(crate) struct RawEntry<'a>(pub(crate) &'a Value);

impl RawEntry<'_> {
    pub(crate) fn string(&self, key: &str) -> Option<String> {
        match self.0.get(key)? {
            Value::String(s) => Some(s.clone()),
            Value::Null => None,
            other => Some(other.to_string()),
        }
    }

    pub(crate) fn strings(&self, key: &str) -> Vec<String> {
        crate::config::strings_as_written(self.0, key)
    }

    pub(crate) fn pairs(&self, key: &str) -> Vec<(String, String)> {
        match self.0.get(key) {
            Some(Value::Object(map)) => map
                .iter()
                .map(|(k, v)| {
                    let v = match v {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    (k.clone(), v)
                })
                .collect(),
            Some(Value::Array(items)) => items
                .iter()
                .filter_map(Value::as_str)
                .map(|s| match s.split_once('=') {
                    Some((k, v)) => (k.to_string(), v.to_string()),
                    None => (s.to_string(), String::new()),
                })
                .collect(),
            _ => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn syntax_errors_carry_line_and_column() {
        let check = ConfigCheck::of_text("{\n  \"mcpServers\": {\n    \"a\": {}\n  ,\n}", &no_env);
        let e = check.error.unwrap();
        // The trailing comma is found at the brace after it.
        assert_eq!((e.line, e.column), (Some(5), Some(1)));
        assert!(e.message.starts_with("invalid JSON: "), "{}", e.message);
        assert!(check.servers.is_empty());
    }

    #[test]
    fn columns_count_characters_not_bytes() {
        // "é" and "😀" are 2 and 4 bytes; the stray `x` is the 12th character of line 2.
        let check = ConfigCheck::of_text("{\n  \"é😀\": 1, x}", &no_env);
        let e = check.error.unwrap();
        assert_eq!((e.line, e.column), (Some(2), Some(12)));
    }

    #[test]
    fn per_server_problems_are_listed_with_the_valid_entries() {
        let text = json!({"mcpServers": {
            "ok": {"command": "x"},
            "off": {"command": "x", "disabled": true},
            "bad": {"args": ["a"]},
            "web": {"url": "http://127.0.0.1:1/mcp"}
        }})
        .to_string();
        let check = ConfigCheck::of_text(&text, &no_env);
        assert_eq!(check.error, None);
        let got: Vec<(&str, &str, bool, bool)> = check
            .servers
            .iter()
            .map(|s| {
                (
                    s.name.as_str(),
                    s.transport.as_str(),
                    s.error.is_some(),
                    s.disabled,
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                ("bad", "", true, false),
                ("off", "stdio", false, true),
                ("ok", "stdio", false, false),
                ("web", "http", false, false)
            ]
        );
        assert_eq!(
            check.servers[0].error.as_deref(),
            Some("server \"bad\": has neither \"command\" (a local server) nor \"url\" (a remote server)")
        );
    }

    #[test]
    fn edits_keep_unknown_keys_and_order() {
        let text = "{\n  \"x-note\": 1,\n  \"mcpServers\": {\n    \"b\": {\"command\": \"b\", \"custom\": true},\n    \"a\": {\"command\": \"a\"}\n  }\n}\n";
        let added = apply_edit(
            text,
            &ConfigEdit::SetServer {
                name: "c".into(),
                entry: json!({"url": "http://127.0.0.1:9/mcp"}),
                previous: None,
            },
        )
        .unwrap();
        assert_eq!(
            added,
            "{\n  \"x-note\": 1,\n  \"mcpServers\": {\n    \"b\": {\n      \"command\": \"b\",\n      \"custom\": true\n    },\n    \"a\": {\n      \"command\": \"a\"\n    },\n    \"c\": {\n      \"url\": \"http://127.0.0.1:9/mcp\"\n    }\n  }\n}\n"
        );
        let disabled = apply_edit(
            &added,
            &ConfigEdit::SetDisabled {
                name: "b".into(),
                disabled: true,
            },
        )
        .unwrap();
        assert!(disabled.contains("\"custom\": true,\n      \"disabled\": true"));
        assert_eq!(
            apply_edit(
                &disabled,
                &ConfigEdit::SetServer {
                    name: "a".into(),
                    entry: json!({}),
                    previous: None
                }
            ),
            Err(EditError::Duplicate("a".into()))
        );
        let renamed = apply_edit(
            &disabled,
            &ConfigEdit::SetServer {
                name: "a2".into(),
                entry: json!({"command": "a"}),
                previous: Some("a".into()),
            },
        )
        .unwrap();
        assert!(!renamed.contains("\"a\":") && renamed.contains("\"a2\":"));
        let removed = apply_edit(&renamed, &ConfigEdit::RemoveServer { name: "c".into() }).unwrap();
        assert!(!removed.contains("\"c\""));
        assert!(matches!(
            apply_edit("{", &ConfigEdit::RemoveServer { name: "c".into() }),
            Err(EditError::Invalid(_))
        ));
    }

    #[test]
    fn secrets_are_masked_and_references_shown() {
        assert_eq!(
            mask_args(&[
                "--token".into(),
                "abc".into(),
                "--api-key=xyz".into(),
                "API_KEY=${KEY}".into(),
                "ghp_0123456789abcdef".into(),
                "--port".into(),
                "8080".into(),
                "https://user:pw@example.test/x?access_token=t&q=1".into(),
            ]),
            vec![
                "--token",
                MASK,
                &format!("--api-key={MASK}"),
                "API_KEY=${KEY}",
                MASK,
                "--port",
                "8080",
                &format!("https://{MASK}@example.test/x?access_token={MASK}&q={MASK}"),
            ]
        );
        let cfg = McpConfig::parse(
            &json!({"mcpServers": {"s": {
                "command": "srv",
                "env": {"TOKEN": "literal", "HOME_DIR": "${HOME}"},
            }}})
            .to_string(),
            "t",
            &|_| Some("v".into()),
        );
        let entry = ServerEntry::find(&cfg, "s").unwrap();
        assert_eq!(
            entry.env,
            vec![
                KeyValue {
                    key: "TOKEN".into(),
                    value: MASK.into()
                },
                KeyValue {
                    key: "HOME_DIR".into(),
                    value: "${HOME}".into()
                }
            ]
        );
    }
}
