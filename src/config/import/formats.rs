//! Each tool's config files: where they are and how their entries become ours. Strings are
//! normalized to our references (`${env:NAME}` → `${NAME}`, VS Code inputs → variables,
//! `${workspaceFolder}` → the project folder).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::{ImportSource, Places};

/// The candidate files of `source` for `project`, and how each is read.
pub(super) fn candidates(
    source: ImportSource,
    project: &Path,
    at: &Places,
) -> Vec<(PathBuf, Reader)> {
    match source {
        ImportSource::ClaudeDesktop => vec![(
            at.config.join("Claude").join("claude_desktop_config.json"),
            Reader::McpServers,
        )],
        // Not the project's `.mcp.json`: harness9 reads that file itself (with approval);
        // a copy in another scope would shadow its entries and skip their approval.
        ImportSource::ClaudeCode => vec![(at.home.join(".claude.json"), Reader::ClaudeJson)],
        ImportSource::Cursor => vec![
            (at.home.join(".cursor").join("mcp.json"), Reader::McpServers),
            (project.join(".cursor").join("mcp.json"), Reader::McpServers),
        ],
        ImportSource::Vscode => vec![
            (
                at.config.join("Code").join("User").join("settings.json"),
                Reader::VscodeSettings,
            ),
            (
                at.config.join("Code").join("User").join("mcp.json"),
                Reader::Vscode,
            ),
            (project.join(".vscode").join("mcp.json"), Reader::Vscode),
        ],
        ImportSource::Codex => vec![
            (at.codex_home.join("config.toml"), Reader::CodexToml),
            // Read by Codex for trusted projects only.
            (
                project.join(".codex").join("config.toml"),
                Reader::CodexToml,
            ),
        ],
    }
}

#[derive(Debug, Clone, Copy)]
pub(super) enum Reader {
    /// `{"mcpServers": {...}}` (Claude Desktop, Cursor, `.mcp.json`).
    McpServers,
    /// `~/.claude.json`: top-level `mcpServers` and `projects[PATH].mcpServers`.
    ClaudeJson,
    /// `{"servers": {...}, "inputs": [...]}`.
    Vscode,
    /// User `settings.json` (JSON with comments): the `mcp` key holds the VS Code shape.
    VscodeSettings,
    /// `config.toml`: `[mcp_servers.NAME]`.
    CodexToml,
}

pub(super) type Part = (String, Vec<(String, Value)>, Vec<String>);

/// Why another tool's config file cannot be read (shown after the file's path).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FormatError {
    #[error("invalid JSON: {0}")]
    Json(String),
    #[error("invalid TOML: {0}")]
    Toml(String),
    #[error("the servers must be an object of servers by name")]
    ServersNotObject,
    #[error("\"servers\" must be an object of servers by name")]
    VscodeServersNotObject,
    #[error("[mcp_servers] must be a table of servers by name")]
    CodexServersNotTable,
    #[error("[mcp_servers.{0}] must be a table")]
    CodexServerNotTable(String),
}

impl FormatError {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        match self {
            FormatError::Json(_) => "invalid-json",
            FormatError::Toml(_) => "invalid-toml",
            FormatError::ServersNotObject
            | FormatError::VscodeServersNotObject
            | FormatError::CodexServersNotTable
            | FormatError::CodexServerNotTable(_) => "invalid-config",
        }
    }
}

pub(super) fn read(reader: Reader, text: &str, project: &Path) -> Result<Vec<Part>, FormatError> {
    match reader {
        Reader::McpServers => {
            let doc = parse_json(text)?;
            Ok(vec![(
                "mcpServers".into(),
                json_servers(doc.get("mcpServers"), project)?,
                Vec::new(),
            )])
        }
        Reader::ClaudeJson => {
            let doc = parse_json(text)?;
            let mut parts = vec![(
                "user".into(),
                json_servers(doc.get("mcpServers"), project)?,
                Vec::new(),
            )];
            // Claude Code's "local" servers of this project, keyed by its absolute path.
            if let Some(Value::Object(projects)) = doc.get("projects") {
                let canonical = std::fs::canonicalize(project).unwrap_or(project.to_path_buf());
                for key in [canonical.as_path(), project] {
                    if let Some(p) = projects.get(&key.display().to_string()) {
                        parts.push((
                            format!("projects[{}]", key.display()),
                            json_servers(p.get("mcpServers"), project)?,
                            Vec::new(),
                        ));
                        break;
                    }
                }
            }
            Ok(parts)
        }
        Reader::Vscode => Ok(vec![vscode_part("servers", &parse_jsonc(text)?, project)?]),
        Reader::VscodeSettings => {
            let doc = parse_jsonc(text)?;
            match doc.get("mcp") {
                Some(mcp) => Ok(vec![vscode_part("mcp", mcp, project)?]),
                None => Ok(Vec::new()),
            }
        }
        Reader::CodexToml => Ok(vec![(
            "mcp_servers".into(),
            codex_servers(text)?,
            Vec::new(),
        )]),
    }
}

fn parse_json(text: &str) -> Result<Value, FormatError> {
    if text.trim().is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    serde_json::from_str(text).map_err(|e| FormatError::Json(e.to_string()))
}

/// JSON with comments and trailing commas, as VS Code writes its settings.
pub fn parse_jsonc(text: &str) -> Result<Value, FormatError> {
    parse_json(&strip_jsonc(text))
}

/// Removes `//` and `/* */` comments and commas before `}` or `]`, outside strings.
pub fn strip_jsonc(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut in_string = false;
    // Where a comma was written, so it can be dropped when a closer follows.
    let mut pending_comma: Option<usize> = None;
    while i < chars.len() {
        let c = chars[i];
        if in_string {
            out.push(c);
            if c == '\\' && i + 1 < chars.len() {
                out.push(chars[i + 1]);
                i += 2;
                continue;
            }
            if c == '"' {
                in_string = false;
            }
            i += 1;
            continue;
        }
        match (c, chars.get(i + 1)) {
            ('/', Some('/')) => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            ('/', Some('*')) => {
                i += 2;
                while i < chars.len() && !(chars[i] == '*' && chars.get(i + 1) == Some(&'/')) {
                    i += 1;
                }
                i += 2;
                continue;
            }
            _ => {}
        }
        match c {
            '"' => {
                in_string = true;
                pending_comma = None;
            }
            ',' => {
                pending_comma = Some(out.len());
            }
            '}' | ']' => {
                if let Some(at) = pending_comma.take() {
                    out.replace_range(at..at + 1, " ");
                }
            }
            c if c.is_whitespace() => {}
            _ => pending_comma = None,
        }
        out.push(c);
        i += 1;
    }
    out
}

/// The servers of an `mcpServers`-like object, strings normalized to our references.
fn json_servers(
    servers: Option<&Value>,
    project: &Path,
) -> Result<Vec<(String, Value)>, FormatError> {
    match servers {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Object(m)) => Ok(m
            .iter()
            .map(|(k, v)| (k.clone(), normalize(v.clone(), project, &mut Vec::new())))
            .collect()),
        Some(_) => Err(FormatError::ServersNotObject),
    }
}

/// A variable name standing for a VS Code input id: `github-token` → `GITHUB_TOKEN`.
pub fn input_variable(id: &str) -> String {
    let mut v: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    if v.is_empty() || v.starts_with(|c: char| c.is_ascii_digit()) {
        v.insert(0, '_');
    }
    v
}

/// Rewrites the other tools' references in every string of an entry: `${env:NAME}` →
/// `${NAME}`, `${input:id}` → `${ID}` (recorded in `inputs`), `${workspaceFolder}` → the
/// project folder.
fn normalize(v: Value, project: &Path, inputs: &mut Vec<String>) -> Value {
    match v {
        Value::String(s) => Value::String(normalize_str(&s, project, inputs)),
        Value::Array(a) => Value::Array(
            a.into_iter()
                .map(|x| normalize(x, project, inputs))
                .collect(),
        ),
        Value::Object(m) => Value::Object(
            m.into_iter()
                .map(|(k, x)| (k, normalize(x, project, inputs)))
                .collect(),
        ),
        other => other,
    }
}

#[allow(
    clippy::string_slice,
    reason = "offsets are where `find` met ASCII `${` and `}`"
)]
fn normalize_str(s: &str, project: &Path, inputs: &mut Vec<String>) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return out;
        };
        let body = &after[..end];
        if let Some(name) = body.strip_prefix("env:") {
            out.push_str(&format!("${{{name}}}"));
        } else if let Some(id) = body.strip_prefix("input:") {
            if !inputs.iter().any(|i| i == id) {
                inputs.push(id.to_string());
            }
            out.push_str(&format!("${{{}}}", input_variable(id)));
        } else if body == "workspaceFolder" || body == "workspaceRoot" {
            out.push_str(&project.display().to_string());
        } else {
            out.push_str(&rest[start..start + 2 + end + 1]);
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

/// VS Code's `{"servers": {...}, "inputs": [...]}`, with a note for every input used.
fn vscode_part(part: &str, doc: &Value, project: &Path) -> Result<Part, FormatError> {
    let mut used = Vec::new();
    let servers = match doc.get("servers") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Object(m)) => m
            .iter()
            .map(|(k, v)| (k.clone(), normalize(v.clone(), project, &mut used)))
            .collect(),
        Some(_) => return Err(FormatError::VscodeServersNotObject),
    };
    let described = |id: &str| -> Option<String> {
        doc.get("inputs")?
            .as_array()?
            .iter()
            .find(|i| i.get("id").and_then(Value::as_str) == Some(id))?
            .get("description")?
            .as_str()
            .map(str::to_string)
    };
    let notes = used
        .iter()
        .map(|id| {
            let what = described(id)
                .map(|d| format!(" ({d})"))
                .unwrap_or_default();
            format!(
                "VS Code input \"{id}\"{what} is now ${{{}}}: set {} in the environment harness9 runs in",
                input_variable(id),
                input_variable(id)
            )
        })
        .collect();
    Ok((part.into(), servers, notes))
}

/// Codex's `[mcp_servers.NAME]` tables as our entries.
fn codex_servers(text: &str) -> Result<Vec<(String, Value)>, FormatError> {
    let doc: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| FormatError::Toml(e.message().to_string()))?;
    let Some(servers) = doc.get("mcp_servers") else {
        return Ok(Vec::new());
    };
    let servers = servers
        .as_table()
        .ok_or(FormatError::CodexServersNotTable)?;
    let mut out = Vec::new();
    for (name, t) in servers {
        let Some(t) = t.as_table() else {
            return Err(FormatError::CodexServerNotTable(name.clone()));
        };
        let json = |k: &str| t.get(k).and_then(|v| serde_json::to_value(v).ok());
        let mut entry = Map::new();
        if let Some(url) = json("url") {
            entry.insert("type".into(), Value::from("http"));
            entry.insert("url".into(), url);
            let mut headers = match json("http_headers") {
                Some(Value::Object(h)) => h,
                _ => Map::new(),
            };
            if let Some(Value::Object(h)) = json("env_http_headers") {
                for (k, var) in h {
                    if let Value::String(var) = var {
                        headers.insert(k, Value::from(format!("${{{var}}}")));
                    }
                }
            }
            if let Some(Value::String(var)) = json("bearer_token_env_var") {
                headers.insert(
                    "Authorization".into(),
                    Value::from(format!("Bearer ${{{var}}}")),
                );
            }
            if !headers.is_empty() {
                entry.insert("headers".into(), Value::Object(headers));
            }
        } else {
            for k in ["command", "args", "env", "cwd"] {
                if let Some(v) = json(k) {
                    entry.insert(k.into(), v);
                }
            }
            // `env_vars`: variables passed on from Codex's own environment, by name.
            if let Some(Value::Array(names)) = json("env_vars") {
                let env = entry
                    .entry("env")
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(env) = env {
                    for n in names.iter().filter_map(Value::as_str) {
                        env.entry(n.to_string())
                            .or_insert_with(|| Value::from(format!("${{{n}}}")));
                    }
                }
            }
        }
        for (theirs, ours) in [
            ("startup_timeout_sec", crate::config::STARTUP_TIMEOUT_FIELD),
            ("tool_timeout_sec", crate::config::TOOL_TIMEOUT_FIELD),
        ] {
            if let Some(v) = json(theirs) {
                entry.insert(ours.into(), v);
            }
        }
        if json("enabled") == Some(Value::Bool(false)) {
            entry.insert("disabled".into(), Value::Bool(true));
        }
        out.push((name.clone(), Value::Object(entry)));
    }
    Ok(out)
}
