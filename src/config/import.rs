//! Importing MCP servers from the other tools people already use: Claude Desktop, Claude
//! Code, Cursor, VS Code and Codex. Each tool's config files are read where that tool keeps
//! them and in its own format, turned into our entries, and planned against one scope's
//! file: what is added, what is already there, what is skipped or renamed on a conflict.
//! Writing the plan goes through [`McpDocument`] (unknown keys kept, atomic).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::servers::{check_entry, save_creating};
use super::{McpDocument, SaveError, Scope, ScopeFiles};

/// A tool whose MCP servers can be imported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum ImportSource {
    ClaudeDesktop,
    ClaudeCode,
    Cursor,
    Vscode,
    Codex,
}

impl ImportSource {
    pub const ALL: [ImportSource; 5] = [
        ImportSource::ClaudeDesktop,
        ImportSource::ClaudeCode,
        ImportSource::Cursor,
        ImportSource::Vscode,
        ImportSource::Codex,
    ];

    /// The name `--from` takes.
    pub fn word(self) -> &'static str {
        match self {
            ImportSource::ClaudeDesktop => "claude-desktop",
            ImportSource::ClaudeCode => "claude-code",
            ImportSource::Cursor => "cursor",
            ImportSource::Vscode => "vscode",
            ImportSource::Codex => "codex",
        }
    }

    /// The tool's name for people.
    pub fn title(self) -> &'static str {
        match self {
            ImportSource::ClaudeDesktop => "Claude Desktop",
            ImportSource::ClaudeCode => "Claude Code",
            ImportSource::Cursor => "Cursor",
            ImportSource::Vscode => "VS Code",
            ImportSource::Codex => "Codex",
        }
    }
}

impl std::str::FromStr for ImportSource {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        ImportSource::ALL
            .into_iter()
            .find(|x| x.word() == s)
            .ok_or_else(|| {
                format!(
                    "unknown source \"{s}\"; use one of: {}",
                    ImportSource::ALL.map(ImportSource::word).join(", ")
                )
            })
    }
}

/// What to do with an imported server whose name the scope already has (with a different
/// entry; an identical entry is simply already there).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum OnConflict {
    /// Keep the existing entry and leave the imported one out.
    #[default]
    Skip,
    /// Add the imported one under a free name (`NAME-2`, `NAME-3`, ...).
    Rename,
}

impl std::str::FromStr for OnConflict {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "skip" => Ok(OnConflict::Skip),
            "rename" => Ok(OnConflict::Rename),
            other => Err(format!(
                "unknown conflict policy \"{other}\"; use skip or rename"
            )),
        }
    }
}

/// Where the other tools' files are: the user's home and config folders.
#[derive(Debug, Clone)]
pub struct Places {
    pub home: PathBuf,
    /// `$XDG_CONFIG_HOME` on Linux (`~/Library/Application Support` on macOS).
    pub config: PathBuf,
    /// Codex's home (`$CODEX_HOME`, else `~/.codex`).
    pub codex_home: PathBuf,
}

impl Places {
    /// This user's folders.
    pub fn of_user() -> Places {
        let home = dirs::home_dir().unwrap_or_default();
        let config = dirs::config_dir().unwrap_or_else(|| home.join(".config"));
        let codex_home = std::env::var_os("CODEX_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| home.join(".codex"));
        Places {
            home,
            config,
            codex_home,
        }
    }
}

/// One config file of another tool that holds MCP servers.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FoundFile {
    pub source: ImportSource,
    pub path: PathBuf,
    /// Which part of the file (e.g. "user", "project", "projects[/path]").
    pub part: String,
    /// The servers as our entries, in file order.
    pub servers: Vec<(String, Value)>,
    /// Things the user must do (set a variable standing for a VS Code input, ...).
    pub notes: Vec<String>,
}

/// A file that exists but cannot be read or parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct SourceError {
    pub path: String,
    pub message: String,
}

/// The candidate files of `source` for `project`, and how each is read.
fn candidates(source: ImportSource, project: &Path, at: &Places) -> Vec<(PathBuf, Reader)> {
    match source {
        ImportSource::ClaudeDesktop => vec![(
            at.config.join("Claude").join("claude_desktop_config.json"),
            Reader::McpServers,
        )],
        ImportSource::ClaudeCode => vec![
            (at.home.join(".claude.json"), Reader::ClaudeJson),
            (project.join(super::MCP_JSON), Reader::McpServers),
        ],
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
enum Reader {
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

/// Reads every config file of `source` that exists. Files that do not exist are left out;
/// files that cannot be parsed are errors (named with their path).
pub fn find(
    source: ImportSource,
    project: &Path,
    at: &Places,
) -> (Vec<FoundFile>, Vec<SourceError>) {
    // `${workspaceFolder}` and Claude Code's per-project keys name the absolute path.
    let absolute = std::fs::canonicalize(project).unwrap_or_else(|_| project.to_path_buf());
    let project = absolute.as_path();
    let mut found = Vec::new();
    let mut errors = Vec::new();
    for (path, reader) in candidates(source, project, at) {
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                errors.push(SourceError {
                    path: path.display().to_string(),
                    message: e.to_string(),
                });
                continue;
            }
        };
        match read(reader, &text, project) {
            Ok(parts) => {
                for (part, servers, notes) in parts {
                    if !servers.is_empty() {
                        found.push(FoundFile {
                            source,
                            path: path.clone(),
                            part,
                            servers,
                            notes,
                        });
                    }
                }
            }
            Err(message) => errors.push(SourceError {
                path: path.display().to_string(),
                message,
            }),
        }
    }
    (found, errors)
}

type Part = (String, Vec<(String, Value)>, Vec<String>);

fn read(reader: Reader, text: &str, project: &Path) -> Result<Vec<Part>, String> {
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

fn parse_json(text: &str) -> Result<Value, String> {
    if text.trim().is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    serde_json::from_str(text).map_err(|e| format!("invalid JSON: {e}"))
}

/// JSON with comments and trailing commas, as VS Code writes its settings.
pub fn parse_jsonc(text: &str) -> Result<Value, String> {
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
fn json_servers(servers: Option<&Value>, project: &Path) -> Result<Vec<(String, Value)>, String> {
    match servers {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Object(m)) => Ok(m
            .iter()
            .map(|(k, v)| (k.clone(), normalize(v.clone(), project, &mut Vec::new())))
            .collect()),
        Some(_) => Err("the servers must be an object of servers by name".into()),
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
fn vscode_part(part: &str, doc: &Value, project: &Path) -> Result<Part, String> {
    let mut used = Vec::new();
    let servers = match doc.get("servers") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Object(m)) => m
            .iter()
            .map(|(k, v)| (k.clone(), normalize(v.clone(), project, &mut used)))
            .collect(),
        Some(_) => return Err("\"servers\" must be an object of servers by name".into()),
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
fn codex_servers(text: &str) -> Result<Vec<(String, Value)>, String> {
    let doc: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| format!("invalid TOML: {}", e.message()))?;
    let Some(servers) = doc.get("mcp_servers") else {
        return Ok(Vec::new());
    };
    let servers = servers
        .as_table()
        .ok_or("[mcp_servers] must be a table of servers by name")?;
    let mut out = Vec::new();
    for (name, t) in servers {
        let Some(t) = t.as_table() else {
            return Err(format!("[mcp_servers.{name}] must be a table"));
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
            ("startup_timeout_sec", super::STARTUP_TIMEOUT_FIELD),
            ("tool_timeout_sec", super::TOOL_TIMEOUT_FIELD),
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

/// What an import does to one scope's file.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ImportPlan {
    /// The file written.
    pub path: String,
    /// Added servers (under their new name when renamed).
    pub added: Vec<ImportedServer>,
    /// Servers left out, each with why.
    pub skipped: Vec<ImportedServer>,
    /// Notes for the user (variables to set).
    pub notes: Vec<String>,
    /// The file's text after the import.
    #[serde(skip)]
    pub text: String,
}

/// One server of an import.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ImportedServer {
    /// Its name in harness9.
    pub name: String,
    /// Its name in the tool's file (differs when renamed).
    pub original: String,
    /// The file it comes from.
    pub from: String,
    /// Why it was skipped or renamed (empty for a plain add).
    pub reason: String,
}

/// Why an import cannot be planned or written.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("{path}: {message}; fix the file first")]
    Target { path: String, message: String },
    #[error(transparent)]
    Save(#[from] SaveError),
}

/// Plans the import of `found` into `scope`'s file.
pub fn plan(
    files: &ScopeFiles,
    scope: Scope,
    found: &[FoundFile],
    on_conflict: OnConflict,
) -> Result<ImportPlan, ImportError> {
    let path = files.path(scope);
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => {
            return Err(ImportError::Target {
                path: path.display().to_string(),
                message: e.to_string(),
            })
        }
    };
    let mut doc = McpDocument::parse(&text, &path.display().to_string()).map_err(|e| {
        ImportError::Target {
            path: path.display().to_string(),
            message: e.to_string(),
        }
    })?;
    let mut plan = ImportPlan {
        path: path.display().to_string(),
        ..ImportPlan::default()
    };
    for file in found {
        let from = if file.part == "mcpServers" || file.part == "servers" {
            file.path.display().to_string()
        } else {
            format!("{} ({})", file.path.display(), file.part)
        };
        let mut used = false;
        for (name, entry) in &file.servers {
            let item = |n: &str, reason: String| ImportedServer {
                name: n.to_string(),
                original: name.clone(),
                from: from.clone(),
                reason,
            };
            if let Err(e) = check_entry(name, entry) {
                plan.skipped
                    .push(item(name, format!("cannot be used: {e}")));
                continue;
            }
            match doc.server(name) {
                None => {
                    doc.set_server(name, entry.clone());
                    plan.added.push(item(name, String::new()));
                    used = true;
                }
                Some(existing) if existing == entry => {
                    plan.skipped
                        .push(item(name, "already there, the same entry".into()));
                }
                Some(_) => match on_conflict {
                    OnConflict::Skip => plan.skipped.push(item(
                        name,
                        "a different server of this name exists; import with --on-conflict rename to keep both".into(),
                    )),
                    OnConflict::Rename => {
                        let free = (2..)
                            .map(|n| format!("{name}-{n}"))
                            .find(|n| doc.server(n).is_none())
                            .expect("a free name exists");
                        doc.set_server(&free, entry.clone());
                        plan.added.push(item(
                            &free,
                            format!("renamed: a different \"{name}\" exists"),
                        ));
                        used = true;
                    }
                },
            }
        }
        if used {
            plan.notes.extend(file.notes.iter().cloned());
        }
    }
    plan.text = doc.to_text();
    Ok(plan)
}

/// Writes a plan's file (atomically, its folder created when missing). Nothing is written
/// when the plan adds nothing.
pub fn write(plan: &ImportPlan) -> Result<(), ImportError> {
    if plan.added.is_empty() {
        return Ok(());
    }
    let path = Path::new(&plan.path);
    let doc = McpDocument::parse(&plan.text, &plan.path).map_err(|e| ImportError::Target {
        path: plan.path.clone(),
        message: e.to_string(),
    })?;
    save_creating(&doc, path)?;
    Ok(())
}

impl ImportPlan {
    /// What the import does, in lines for a terminal.
    pub fn to_text(&self, dry_run: bool) -> String {
        let mut out = String::new();
        let verb = if dry_run { "Would add" } else { "Added" };
        if self.added.is_empty() {
            out.push_str(&format!("Nothing to add to {}\n", self.path));
        } else {
            out.push_str(&format!("{verb} to {}:\n", self.path));
        }
        for s in &self.added {
            out.push_str(&format!("  + {}  (from {})", s.name, s.from));
            if !s.reason.is_empty() {
                out.push_str(&format!("  {}", s.reason));
            }
            out.push('\n');
        }
        if !self.skipped.is_empty() {
            out.push_str("Skipped:\n");
            for s in &self.skipped {
                out.push_str(&format!(
                    "  - {}  (from {}): {}\n",
                    s.name, s.from, s.reason
                ));
            }
        }
        for n in &self.notes {
            out.push_str(&format!("Note: {n}\n"));
        }
        out
    }
}

/// One tool's config found on this machine, for a picker.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct FoundSource {
    pub source: ImportSource,
    /// The tool's name for people.
    pub title: String,
    /// The files read, each with how many servers it holds.
    pub files: Vec<FoundSourceFile>,
    /// Servers in all its files.
    pub servers: u32,
    /// Files that exist but cannot be read.
    pub errors: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct FoundSourceFile {
    pub path: String,
    pub servers: u32,
}

/// Every tool that has MCP servers configured for `project` on this machine.
pub fn discover(project: &Path, at: &Places) -> Vec<FoundSource> {
    ImportSource::ALL
        .into_iter()
        .filter_map(|source| {
            let (found, errors) = find(source, project, at);
            if found.is_empty() && errors.is_empty() {
                return None;
            }
            let files: Vec<FoundSourceFile> = found
                .iter()
                .map(|f| FoundSourceFile {
                    path: if f.part == "mcpServers" || f.part == "servers" {
                        f.path.display().to_string()
                    } else {
                        format!("{} ({})", f.path.display(), f.part)
                    },
                    servers: f.servers.len() as u32,
                })
                .collect();
            Some(FoundSource {
                source,
                title: source.title().into(),
                servers: files.iter().map(|f| f.servers).sum(),
                files,
                errors: errors.iter().map(ToString::to_string).collect(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests;
