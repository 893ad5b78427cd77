//! Adding, finding and removing one server entry in a scope's file: what `harness9 mcp add`,
//! `add-json`, `get` and `remove` (and imports) do. Every write goes through
//! [`McpDocument`], so keys harness9 does not know stay, and is atomic.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::{parse_entry, EntryError, McpDocument, SaveError, Scope, ScopeFiles, ServerConfig};

/// Why an entry was not written (or not removed). The files on disk are unchanged.
#[derive(Debug, thiserror::Error)]
pub enum ServerEditError {
    #[error("a server named \"{name}\" already exists in the {scope} scope ({path}); remove it first with `harness9 mcp remove {name} --scope {scope}`, or pick another name")]
    Exists {
        name: String,
        scope: Scope,
        path: String,
    },
    #[error("no server named \"{name}\" in {}", where_looked(.scope, .files))]
    NotFound {
        name: String,
        scope: Option<Scope>,
        files: Vec<String>,
    },
    #[error("server \"{name}\" is in more than one scope ({}); say which with --scope {}", scope_list(.scopes), .scopes.iter().map(|s| s.word()).collect::<Vec<_>>().join("|"))]
    Ambiguous { name: String, scopes: Vec<Scope> },
    #[error("invalid server name \"{0}\": use letters, digits, '-', '_' and '.'")]
    BadName(String),
    #[error("{0}")]
    BadEntry(String),
    #[error("{path}: {message}; fix the file first")]
    Unreadable { path: String, message: String },
    /// The entry in the file is not the one the change was planned against.
    #[error("the entry \"{name}\" in {path} changed since it was shown; nothing was written. Look at it again")]
    Changed { name: String, path: String },
    #[error(transparent)]
    Save(#[from] SaveError),
}

impl ServerEditError {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        match self {
            ServerEditError::Exists { .. } => "server-exists",
            ServerEditError::NotFound { .. } => "unknown-server",
            ServerEditError::Ambiguous { .. } => "ambiguous-server",
            ServerEditError::BadName(_) => "invalid-server-name",
            ServerEditError::BadEntry(_) => "invalid-entry",
            ServerEditError::Unreadable { .. } => "config-unreadable",
            ServerEditError::Changed { .. } => "changed-since-shown",
            ServerEditError::Save(e) => e.code(),
        }
    }
}

fn where_looked(scope: &Option<Scope>, files: &[String]) -> String {
    match scope {
        Some(s) => format!("the {s} scope ({})", files.join(", ")),
        None => format!("any scope ({})", files.join(", ")),
    }
}

pub fn scope_list(scopes: &[Scope]) -> String {
    scopes
        .iter()
        .map(|s| s.word())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A server name as `mcp add` takes it: letters, digits, `-`, `_` and `.`.
pub fn check_name(name: &str) -> Result<(), ServerEditError> {
    if !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    {
        Ok(())
    } else {
        Err(ServerEditError::BadName(name.to_string()))
    }
}

/// What `mcp add` was given, before it becomes an entry.
#[derive(Debug, Clone, Default)]
pub struct AddParts {
    /// `stdio`, `http` or `sse`; `None`: `http` for a URL, `stdio` for a command.
    pub transport: Option<String>,
    /// `K=V` strings.
    pub env: Vec<String>,
    /// `Name: value` strings.
    pub headers: Vec<String>,
    pub url: Option<String>,
    /// The command and its arguments (everything after `--`).
    pub command: Vec<String>,
}

/// Builds the JSON entry `mcp add` writes, or says what is wrong with the parts.
pub fn entry_from_parts(parts: &AddParts) -> Result<Value, ServerEditError> {
    let bad = |m: String| Err(ServerEditError::BadEntry(m));
    let kind = match (parts.transport.as_deref(), &parts.url, parts.command.is_empty()) {
        (Some(t @ ("http" | "sse")), Some(_), true) => t,
        (Some(t @ ("http" | "sse")), None, _) => {
            return bad(format!(
                "a {t} server needs a URL: harness9 mcp add NAME --transport {t} https://host/mcp"
            ))
        }
        (Some("stdio"), None, false) | (None, None, false) => "stdio",
        (Some("stdio") | None, None, true) => {
            return bad("missing command: put the server's command after `--`, e.g. harness9 mcp add NAME -- npx -y some-server (or give a URL for a remote server)".into())
        }
        (Some("stdio"), Some(u), _) => {
            return bad(format!("a stdio server takes a command after `--`, not a URL (\"{u}\"); for a remote server use --transport http"))
        }
        (None, Some(_), true) => "http",
        (_, Some(_), false) => {
            return bad("give either a URL (remote server) or a command after `--` (local server), not both".into())
        }
        (Some(other), _, _) => {
            return bad(format!(
                "unknown transport \"{other}\"; use stdio, http or sse"
            ))
        }
    };
    let mut entry = Map::new();
    entry.insert("type".into(), Value::from(kind));
    if kind == "stdio" {
        if !parts.headers.is_empty() {
            return bad(
                "--header is for remote (http, sse) servers; a local server takes --env".into(),
            );
        }
        entry.insert("command".into(), Value::from(parts.command[0].clone()));
        entry.insert("args".into(), Value::from(parts.command[1..].to_vec()));
        insert_pairs(&mut entry, "env", &parts.env, parse_env)?;
    } else {
        if !parts.env.is_empty() {
            return bad(
                "--env is for local (stdio) servers; a remote server takes --header 'Name: value'"
                    .into(),
            );
        }
        let url = parts.url.clone().unwrap_or_default();
        check_url(&url)?;
        entry.insert("url".into(), Value::from(url));
        insert_pairs(&mut entry, "headers", &parts.headers, parse_header)?;
    }
    Ok(Value::Object(entry))
}

/// Parses each of `items` into a name and value and puts them under `key` (left out when
/// there are none).
fn insert_pairs(
    entry: &mut Map<String, Value>,
    key: &str,
    items: &[String],
    parse: fn(&str) -> Result<(String, String), ServerEditError>,
) -> Result<(), ServerEditError> {
    let mut pairs = Map::new();
    for item in items {
        let (k, v) = parse(item)?;
        pairs.insert(k, Value::from(v));
    }
    if !pairs.is_empty() {
        entry.insert(key.into(), Value::Object(pairs));
    }
    Ok(())
}

/// `K=V` with a variable name `K`.
pub fn parse_env(s: &str) -> Result<(String, String), ServerEditError> {
    match s.split_once('=') {
        Some((k, v))
            if !k.is_empty()
                && !k.starts_with(|c: char| c.is_ascii_digit())
                && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') =>
        {
            Ok((k.to_string(), v.to_string()))
        }
        _ => Err(ServerEditError::BadEntry(format!(
            "--env \"{s}\" is not KEY=value (KEY: letters, digits and '_'), e.g. --env API_KEY=${{API_KEY}}"
        ))),
    }
}

/// `Name: value` with a header name that has no spaces.
pub fn parse_header(s: &str) -> Result<(String, String), ServerEditError> {
    match s.split_once(':') {
        Some((k, v))
            if !k.trim().is_empty()
                && k.trim()
                    .chars()
                    .all(|c| c.is_ascii_graphic() && !"()<>@,;:\\\"/[]?={}".contains(c)) =>
        {
            Ok((k.trim().to_string(), v.trim().to_string()))
        }
        _ => Err(ServerEditError::BadEntry(format!(
            "--header \"{s}\" is not 'Name: value', e.g. --header 'Authorization: Bearer ${{TOKEN}}'"
        ))),
    }
}

/// An `http://` or `https://` URL with a host; `${VAR}` references are allowed anywhere.
pub fn check_url(url: &str) -> Result<(), ServerEditError> {
    // References are checked with a stand-in value: they are expanded at start.
    let probe = url.replace("${", "x").replace('}', "x");
    match url::Url::parse(&probe) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.host().is_some() => Ok(()),
        Ok(u) => Err(ServerEditError::BadEntry(format!(
            "bad URL \"{url}\": the scheme is \"{}\"; use http:// or https://",
            u.scheme()
        ))),
        Err(e) => Err(ServerEditError::BadEntry(format!(
            "bad URL \"{url}\": {e}; write it like https://host/mcp"
        ))),
    }
}

/// Checks an entry the way loading reads it (`${VAR}` references are not resolved here:
/// a variable set only later is fine).
pub fn check_entry(name: &str, entry: &Value) -> Result<ServerConfig, ServerEditError> {
    parse_entry(name, entry, &|_| Some(String::new()))
        .map_err(|EntryError { message, .. }| ServerEditError::BadEntry(message))
}

fn read_document(path: &Path) -> Result<McpDocument, ServerEditError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => {
            return Err(ServerEditError::Unreadable {
                path: path.display().to_string(),
                message: e.to_string(),
            })
        }
    };
    McpDocument::parse(&text, &path.display().to_string()).map_err(|e| {
        ServerEditError::Unreadable {
            path: path.display().to_string(),
            message: e.to_string(),
        }
    })
}

/// The entries named `name` as written in a file (`None` when the file has none).
fn entry_in(path: &Path, name: &str) -> Result<Option<Value>, ServerEditError> {
    Ok(read_document(path)?.server(name).cloned())
}

/// Adds one entry to a scope's file (created with its folder when missing). Refuses a name
/// the scope already has, and an entry that loading would refuse. Returns the file.
pub fn add_server(
    files: &ScopeFiles,
    scope: Scope,
    name: &str,
    entry: Value,
) -> Result<PathBuf, ServerEditError> {
    check_entry(name, &entry)?;
    let path = files.path(scope).to_path_buf();
    let mut doc = read_document(&path)?;
    if doc.server(name).is_some() {
        return Err(ServerEditError::Exists {
            name: name.into(),
            scope,
            path: path.display().to_string(),
        });
    }
    doc.set_server(name, entry);
    save_creating(&doc, &path)?;
    Ok(path)
}

/// The entry named `name` in `scope`'s file, as written (`None` when it has none).
pub fn entry_of(
    files: &ScopeFiles,
    scope: Scope,
    name: &str,
) -> Result<Option<Value>, ServerEditError> {
    entry_in(files.path(scope), name)
}

/// Writes `entry` as `name` in `scope`'s file (created with its folder when missing),
/// only when the file's entry of that name is still `expected` (`None`: there is none):
/// what is replaced is what the user saw. Refuses an entry that loading would refuse.
pub fn put_server(
    files: &ScopeFiles,
    scope: Scope,
    name: &str,
    entry: Value,
    expected: Option<&Value>,
) -> Result<PathBuf, ServerEditError> {
    check_entry(name, &entry)?;
    let path = files.path(scope).to_path_buf();
    let mut doc = read_document(&path)?;
    match (doc.server(name), expected) {
        (None, None) => {}
        (Some(now), Some(e)) if now == e => {}
        (Some(_), None) => {
            return Err(ServerEditError::Exists {
                name: name.into(),
                scope,
                path: path.display().to_string(),
            })
        }
        (None, Some(_)) | (Some(_), Some(_)) => {
            return Err(ServerEditError::Changed {
                name: name.into(),
                path: path.display().to_string(),
            })
        }
    }
    doc.set_server(name, entry);
    save_creating(&doc, &path)?;
    Ok(path)
}

/// Saves a document, creating its folder first (the user and local folders may not exist).
pub(crate) fn save_creating(doc: &McpDocument, path: &Path) -> Result<(), SaveError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|source| SaveError::Io {
            path: dir.display().to_string(),
            source,
        })?;
    }
    doc.save(path)
}

/// Every scope that has an entry named `name`, highest precedence first.
pub fn scopes_with(files: &ScopeFiles, name: &str) -> Result<Vec<Scope>, ServerEditError> {
    let mut found = Vec::new();
    for scope in Scope::ALL {
        if entry_in(files.path(scope), name)?.is_some() {
            found.push(scope);
        }
    }
    Ok(found)
}

/// Removes `name` from `scope`, or (without a scope) from the only scope that has it.
/// Returns the scope and file it was removed from.
pub fn remove_server(
    files: &ScopeFiles,
    name: &str,
    scope: Option<Scope>,
) -> Result<(Scope, PathBuf), ServerEditError> {
    let scope = match scope {
        Some(s) => s,
        None => {
            let found = scopes_with(files, name)?;
            match found.as_slice() {
                [one] => *one,
                [] => {
                    return Err(ServerEditError::NotFound {
                        name: name.into(),
                        scope: None,
                        files: Scope::ALL
                            .iter()
                            .map(|s| files.path(*s).display().to_string())
                            .collect(),
                    })
                }
                _ => {
                    return Err(ServerEditError::Ambiguous {
                        name: name.into(),
                        scopes: found,
                    })
                }
            }
        }
    };
    let path = files.path(scope).to_path_buf();
    let mut doc = read_document(&path)?;
    if !doc.remove_server(name) {
        return Err(ServerEditError::NotFound {
            name: name.into(),
            scope: Some(scope),
            files: vec![path.display().to_string()],
        });
    }
    doc.save(&path)?;
    Ok((scope, path))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parts(transport: Option<&str>, url: Option<&str>, command: &[&str]) -> AddParts {
        AddParts {
            transport: transport.map(str::to_string),
            url: url.map(str::to_string),
            command: command.iter().map(|s| s.to_string()).collect(),
            ..AddParts::default()
        }
    }

    fn err(p: &AddParts) -> String {
        entry_from_parts(p).unwrap_err().to_string()
    }

    #[test]
    fn entries_from_parts() {
        let mut p = parts(None, None, &["npx", "-y", "srv"]);
        p.env = vec!["A=1".into(), "B=x=y".into()];
        assert_eq!(
            entry_from_parts(&p).unwrap(),
            json!({"type": "stdio", "command": "npx", "args": ["-y", "srv"], "env": {"A": "1", "B": "x=y"}})
        );
        let mut p = parts(Some("sse"), Some("https://h/sse"), &[]);
        p.headers = vec!["Authorization: Bearer ${T}".into()];
        assert_eq!(
            entry_from_parts(&p).unwrap(),
            json!({"type": "sse", "url": "https://h/sse", "headers": {"Authorization": "Bearer ${T}"}})
        );
        assert_eq!(
            entry_from_parts(&parts(None, Some("http://localhost:8080/mcp"), &[])).unwrap(),
            json!({"type": "http", "url": "http://localhost:8080/mcp"})
        );
    }

    #[test]
    fn clear_errors_for_bad_parts() {
        assert!(err(&parts(None, None, &[]))
            .starts_with("missing command: put the server's command after `--`"));
        assert!(err(&parts(Some("http"), None, &[])).starts_with("a http server needs a URL"));
        assert_eq!(
            err(&parts(None, Some("ftp://h/x"), &[])),
            "bad URL \"ftp://h/x\": the scheme is \"ftp\"; use http:// or https://"
        );
        assert!(err(&parts(None, Some("nota url"), &[])).starts_with("bad URL \"nota url\""));
        let mut p = parts(None, None, &["srv"]);
        p.env = vec!["NOVALUE".into()];
        assert!(err(&p).starts_with("--env \"NOVALUE\" is not KEY=value"));
        let mut p = parts(None, Some("https://h/mcp"), &[]);
        p.headers = vec!["no colon".into()];
        assert!(err(&p).starts_with("--header \"no colon\" is not 'Name: value'"));
        let mut p = parts(None, Some("https://h/mcp"), &[]);
        p.env = vec!["A=1".into()];
        assert!(err(&p).starts_with("--env is for local (stdio) servers"));
        assert!(err(&parts(Some("stdio"), Some("https://h"), &[]))
            .starts_with("a stdio server takes a command"));
        assert!(
            err(&parts(Some("ws"), Some("https://h"), &[])).starts_with("unknown transport \"ws\"")
        );
    }

    #[test]
    fn names_are_checked() {
        assert!(check_name("git-hub_2.0").is_ok());
        assert!(check_name("").is_err());
        assert_eq!(
            check_name("a b").unwrap_err().to_string(),
            "invalid server name \"a b\": use letters, digits, '-', '_' and '.'"
        );
    }
}
