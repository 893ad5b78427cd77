//! Writing `.mcp.json`: validate first, then temp file + rename, so the file on disk is
//! always either the old content or the new valid content. Edits through [`McpDocument`]
//! keep every key harness9 does not know, in their order.

use std::io::Write;
use std::path::Path;

use serde_json::{Map, Value};

use super::{type_name, ConfigError};

/// Why a save was refused or failed. The file on disk is unchanged in every case.
#[derive(Debug, thiserror::Error)]
pub enum SaveError {
    #[error("not saved: {0}")]
    Invalid(ConfigError),
    #[error("not saved: cannot write {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

impl SaveError {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        match self {
            SaveError::Invalid(e) => e.code(),
            SaveError::Io { .. } => "write-failed",
        }
    }
}

/// Checks the shape of a whole `.mcp.json` text and returns its `mcpServers` object.
/// Per-server problems are not errors here; they belong to each entry.
pub fn validate_document(text: &str, origin: &str) -> Result<Map<String, Value>, ConfigError> {
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    let doc: Value = serde_json::from_str(text).map_err(|e| ConfigError::Syntax {
        path: origin.to_string(),
        line: e.line(),
        column: char_column(text, e.line(), e.column()),
        message: strip_position(&e.to_string()),
    })?;
    let shape = |message: String| ConfigError::Shape {
        path: origin.to_string(),
        message,
    };
    let Value::Object(mut root) = doc else {
        return Err(shape(format!(
            "the file must hold a JSON object like {{\"mcpServers\": {{}}}}, not {}",
            type_name(&doc)
        )));
    };
    match root.remove("mcpServers") {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(Value::Object(servers)) => Ok(servers),
        Some(other) => Err(shape(format!(
            "\"mcpServers\" must be an object of servers by name, not {}",
            type_name(&other)
        ))),
    }
}

/// serde_json counts a column in bytes; editors (and people) count characters. The 1-based
/// character column of byte column `column` on 1-based line `line` of `text`.
pub(crate) fn char_column(text: &str, line: usize, column: usize) -> usize {
    let Some(l) = text.split('\n').nth(line.saturating_sub(1)) else {
        return column;
    };
    if column > l.len() {
        return l.chars().count() + (column - l.len());
    }
    l.char_indices().take_while(|(i, _)| *i < column).count()
}

/// serde_json appends " at line L column C"; we print the position ourselves.
fn strip_position(msg: &str) -> String {
    msg.rsplit_once(" at line ")
        .map_or(msg, |(kept, _)| kept)
        .to_string()
}

/// Writes `text` to `path` if it is a valid `.mcp.json`; never leaves a half-written file.
pub fn save_mcp_json(path: &Path, text: &str) -> Result<(), SaveError> {
    validate_document(text, &path.display().to_string()).map_err(SaveError::Invalid)?;
    write_atomically(path, text.as_bytes()).map_err(|source| SaveError::Io {
        path: path.display().to_string(),
        source,
    })
}

/// Temp file in the same folder, fsync, rename over the target.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".into());
    let tmp = dir.join(format!(".{file_name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        // Keep the permissions of the file we replace.
        if let Ok(meta) = std::fs::metadata(path) {
            std::fs::set_permissions(&tmp, meta.permissions())?;
        }
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// A `.mcp.json` held as a JSON tree, for edits that keep unknown keys and key order.
#[derive(Debug, Clone)]
pub struct McpDocument {
    root: Map<String, Value>,
}

impl McpDocument {
    /// Parses a document; an empty text is an empty document.
    pub fn parse(text: &str, origin: &str) -> Result<McpDocument, ConfigError> {
        validate_document(text, origin)?;
        let root = if text.trim().is_empty() {
            Map::new()
        } else {
            match serde_json::from_str(text) {
                Ok(Value::Object(m)) => m,
                _ => unreachable!("validated above"),
            }
        };
        Ok(McpDocument { root })
    }

    fn servers_mut(&mut self) -> &mut Map<String, Value> {
        let slot = self
            .root
            .entry("mcpServers")
            .or_insert_with(|| Value::Object(Map::new()));
        if !slot.is_object() {
            *slot = Value::Object(Map::new());
        }
        slot.as_object_mut().expect("made an object above")
    }

    /// One server entry as written.
    pub fn server(&self, name: &str) -> Option<&Value> {
        self.root.get("mcpServers")?.as_object()?.get(name)
    }

    /// The names of the server entries, in file order.
    pub fn server_names(&self) -> Vec<String> {
        match self.root.get("mcpServers") {
            Some(Value::Object(m)) => m.keys().cloned().collect(),
            _ => Vec::new(),
        }
    }

    /// Adds or replaces one server entry (its position is kept when it exists).
    pub fn set_server(&mut self, name: &str, entry: Value) {
        self.servers_mut().insert(name.to_string(), entry);
    }

    /// Removes one server entry; returns whether it existed.
    pub fn remove_server(&mut self, name: &str) -> bool {
        self.servers_mut().shift_remove(name).is_some()
    }

    /// Sets or clears `disabled` on an entry, keeping all its other keys.
    pub fn set_disabled(&mut self, name: &str, disabled: bool) -> bool {
        match self
            .servers_mut()
            .get_mut(name)
            .and_then(Value::as_object_mut)
        {
            Some(entry) => {
                if disabled {
                    entry.insert("disabled".into(), Value::Bool(true));
                } else {
                    entry.shift_remove("disabled");
                }
                true
            }
            None => false,
        }
    }

    /// Two-space indented JSON with a final newline, as editors write it.
    pub fn to_text(&self) -> String {
        let mut s = serde_json::to_string_pretty(&self.root).expect("a JSON tree serializes");
        s.push('\n');
        s
    }

    /// Validates and writes the document atomically.
    pub fn save(&self, path: &Path) -> Result<(), SaveError> {
        save_mcp_json(path, &self.to_text())
    }
}
