//! Each tool's config files: where they are and how their entries become ours. Strings are
//! translated to our terms ([`super::translate`]); VS Code's inputs become questions
//! ([`InputQuestion`]).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::translate::{self, input_name};
use super::{ImportSource, InputQuestion, Places};

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

/// What one part of a file holds.
#[derive(Debug, Default)]
pub(super) struct Part {
    /// Which part ("mcpServers", "servers", "projects[/path]" …).
    pub part: String,
    /// The servers as our entries, in file order.
    pub servers: Vec<(String, Value)>,
    pub notes: Vec<String>,
    /// The inputs the servers use, as questions.
    pub inputs: Vec<InputQuestion>,
    /// (server, "theirs → ours") for each variable translated.
    pub translated: Vec<(String, String)>,
    /// Servers left out, and why.
    pub refused: Vec<(String, String)>,
}

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

pub(super) fn read(
    reader: Reader,
    text: &str,
    project: &Path,
    home: &Path,
    tool: &str,
) -> Result<Vec<Part>, FormatError> {
    let servers = |v: Option<&Value>, part: &str| json_servers(v, part, project, home, tool);
    match reader {
        Reader::McpServers => {
            let doc = parse_json(text)?;
            Ok(vec![servers(doc.get("mcpServers"), "mcpServers")?])
        }
        Reader::ClaudeJson => {
            let doc = parse_json(text)?;
            let mut parts = vec![servers(doc.get("mcpServers"), "user")?];
            // Claude Code's "local" servers of this project, keyed by its absolute path.
            if let Some(Value::Object(projects)) = doc.get("projects") {
                let canonical = std::fs::canonicalize(project).unwrap_or(project.to_path_buf());
                for key in [canonical.as_path(), project] {
                    if let Some(p) = projects.get(&key.display().to_string()) {
                        parts.push(servers(
                            p.get("mcpServers"),
                            &format!("projects[{}]", key.display()),
                        )?);
                        break;
                    }
                }
            }
            Ok(parts)
        }
        Reader::Vscode => Ok(vec![vscode_part(
            "servers",
            &parse_jsonc(text)?,
            project,
            home,
            tool,
        )?]),
        Reader::VscodeSettings => {
            let doc = parse_jsonc(text)?;
            match doc.get("mcp") {
                Some(mcp) => Ok(vec![vscode_part("mcp", mcp, project, home, tool)?]),
                None => Ok(Vec::new()),
            }
        }
        Reader::CodexToml => Ok(vec![Part {
            part: "mcp_servers".into(),
            servers: codex_servers(text)?,
            ..Part::default()
        }]),
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

/// Translates each server of an object of servers by name into `part`; the ones that use
/// what only the tool can fill in are refused.
fn translate_servers(
    m: &Map<String, Value>,
    part: &mut Part,
    project: &Path,
    home: &Path,
    tool: &str,
) {
    for (name, v) in m {
        let t = translate::entry(v.clone(), project, home);
        if !t.unsupported.is_empty() {
            part.refused.push((
                name.clone(),
                format!(
                    "it uses {}, which only {tool} can fill in",
                    t.unsupported.join(", ")
                ),
            ));
            continue;
        }
        for (theirs, ours) in t.changes {
            part.translated
                .push((name.clone(), format!("{theirs} → {ours}")));
        }
        for id in t.inputs {
            part.inputs_used_by(name, &id);
        }
        part.servers.push((name.clone(), t.value));
    }
}

impl Part {
    /// Notes that server `server` uses input `id` (its question is filled in later).
    fn inputs_used_by(&mut self, server: &str, id: &str) {
        match self.inputs.iter_mut().find(|q| q.id == id) {
            Some(q) => {
                if !q.servers.iter().any(|s| s == server) {
                    q.servers.push(server.to_string());
                }
            }
            None => self.inputs.push(InputQuestion {
                name: input_name(id),
                id: id.to_string(),
                description: None,
                secret: true,
                default: None,
                choices: Vec::new(),
                servers: vec![server.to_string()],
            }),
        }
    }
}

/// The servers of an `mcpServers`-like object, translated.
fn json_servers(
    servers: Option<&Value>,
    part: &str,
    project: &Path,
    home: &Path,
    tool: &str,
) -> Result<Part, FormatError> {
    let mut out = Part {
        part: part.to_string(),
        ..Part::default()
    };
    match servers {
        None | Some(Value::Null) => {}
        Some(Value::Object(m)) => {
            translate_servers(m, &mut out, project, home, tool);
        }
        Some(_) => return Err(FormatError::ServersNotObject),
    }
    Ok(out)
}

/// VS Code's `{"servers": {...}, "inputs": [...]}`: each input a server uses becomes a
/// question (a `promptString` with `password` is a secret; a `pickString` has choices).
fn vscode_part(
    part: &str,
    doc: &Value,
    project: &Path,
    home: &Path,
    tool: &str,
) -> Result<Part, FormatError> {
    let mut out = Part {
        part: part.to_string(),
        ..Part::default()
    };
    match doc.get("servers") {
        None | Some(Value::Null) => {}
        Some(Value::Object(m)) => {
            translate_servers(m, &mut out, project, home, tool);
        }
        Some(_) => return Err(FormatError::VscodeServersNotObject),
    }
    let declared = |id: &str| -> Option<&Value> {
        doc.get("inputs")?
            .as_array()?
            .iter()
            .find(|i| i.get("id").and_then(Value::as_str) == Some(id))
    };
    for q in &mut out.inputs {
        let Some(d) = declared(&q.id) else {
            continue;
        };
        let text = |k: &str| d.get(k).and_then(Value::as_str).map(str::to_string);
        q.description = text("description");
        q.default = text("default");
        q.secret = d.get("password").and_then(Value::as_bool) == Some(true);
        if let Some(Value::Array(options)) = d.get("options") {
            q.choices = options
                .iter()
                .filter_map(|o| match o {
                    Value::String(s) => Some(s.clone()),
                    other => other
                        .get("value")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                })
                .collect();
        }
    }
    Ok(out)
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
