//! The other tools' `${…}` variables in harness9's terms, as their documentation defines
//! them (VS Code's variables reference, which Cursor follows for MCP servers):
//!
//! | theirs | ours |
//! |---|---|
//! | `${env:NAME}` | `${NAME}` |
//! | `${userHome}` | the home folder |
//! | `${workspaceFolder}`, `${workspaceRoot}`, `${cwd}` | the project folder |
//! | `${workspaceFolderBasename}`, `${workspaceRootFolderName}` | its last part |
//! | `${pathSeparator}`, `${/}` | `/` (the platform's separator) |
//! | `${input:ID}` | `${input:NAME}`: asked at import ([`super::InputQuestion`]) |
//!
//! What only the editor can know (the open file, the selection, its settings and commands:
//! `${file}`, `${lineNumber}`, `${config:…}`, `${command:…}` …) has no meaning here: an
//! entry using one is not imported, and the report says why. Any other `${NAME}` is an
//! environment variable for harness9 too, and stays.

use std::path::Path;

use serde_json::Value;

/// Variables only the editor can fill in.
const EDITOR_ONLY: &[&str] = &[
    "file",
    "fileWorkspaceFolder",
    "fileWorkspaceFolderBasename",
    "relativeFile",
    "relativeFileDirname",
    "fileBasename",
    "fileBasenameNoExtension",
    "fileDirname",
    "fileExtname",
    "lineNumber",
    "columnNumber",
    "selectedText",
    "execPath",
    "defaultBuildTask",
];

/// An input id as an input name (`github.token` → `github_token`).
pub fn input_name(id: &str) -> String {
    let mut n: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(crate::config::inputs::MAX_INPUT_NAME)
        .collect();
    if n.is_empty() {
        n.push('_');
    }
    n
}

/// What translating one entry did.
#[derive(Debug, Default)]
pub(super) struct Translated {
    pub value: Value,
    /// (theirs, ours) for each variable translated, each once.
    pub changes: Vec<(String, String)>,
    /// The input ids used (in `${input:ID}`), each once.
    pub inputs: Vec<String>,
    /// Variables that cannot be translated.
    pub unsupported: Vec<String>,
}

/// Translates the variables of every string of `entry`.
pub(super) fn entry(entry: Value, project: &Path, home: &Path) -> Translated {
    let mut t = Translated::default();
    t.value = walk(entry, project, home, &mut t);
    t
}

fn walk(v: Value, project: &Path, home: &Path, t: &mut Translated) -> Value {
    match v {
        Value::String(s) => Value::String(string(&s, project, home, t)),
        Value::Array(a) => Value::Array(a.into_iter().map(|x| walk(x, project, home, t)).collect()),
        Value::Object(m) => Value::Object(
            m.into_iter()
                .map(|(k, x)| (k, walk(x, project, home, t)))
                .collect(),
        ),
        other => other,
    }
}

#[allow(
    clippy::string_slice,
    reason = "offsets are where `find` met ASCII `${` and `}`"
)]
fn string(s: &str, project: &Path, home: &Path, t: &mut Translated) -> String {
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
        let whole = &rest[start..start + 2 + end + 1];
        let ours: Option<String> = if let Some(name) = body.strip_prefix("env:") {
            Some(format!("${{{name}}}"))
        } else if let Some(id) = body.strip_prefix("input:") {
            if !t.inputs.iter().any(|i| i == id) {
                t.inputs.push(id.to_string());
            }
            // An input is kept as a reference: it is asked for, not translated here.
            out.push_str(&crate::config::inputs::reference(&input_name(id)));
            rest = &after[end + 1..];
            continue;
        } else {
            match body {
                "workspaceFolder" | "workspaceRoot" | "cwd" => Some(project.display().to_string()),
                "workspaceFolderBasename" | "workspaceRootFolderName" => Some(
                    project
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                ),
                "userHome" => Some(home.display().to_string()),
                "pathSeparator" | "/" => Some(std::path::MAIN_SEPARATOR.to_string()),
                b if EDITOR_ONLY.contains(&b)
                    || b.starts_with("config:")
                    || b.starts_with("command:")
                    || b.starts_with("workspaceFolder:")
                    || b.starts_with("workspaceFolderBasename:") =>
                {
                    if !t.unsupported.iter().any(|u| u == whole) {
                        t.unsupported.push(whole.to_string());
                    }
                    None
                }
                _ => None,
            }
        };
        match ours {
            Some(o) => {
                if !t.changes.iter().any(|(w, _)| w == whole) {
                    t.changes.push((whole.to_string(), o.clone()));
                }
                out.push_str(&o);
            }
            None => out.push_str(whole),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_documented_variable() {
        let (p, h) = (Path::new("/w/proj"), Path::new("/home/u"));
        let t = entry(
            json!({"command": "${userHome}${/}bin${pathSeparator}srv",
                   "args": ["${workspaceFolder}", "${workspaceFolderBasename}", "${cwd}", "${workspaceRoot}"],
                   "env": {"A": "${env:TOKEN}", "B": "${OTHER}", "K": "Bearer ${input:api.key}"}}),
            p,
            h,
        );
        assert_eq!(
            t.value,
            json!({"command": "/home/u/bin/srv",
                   "args": ["/w/proj", "proj", "/w/proj", "/w/proj"],
                   "env": {"A": "${TOKEN}", "B": "${OTHER}", "K": "Bearer ${input:api_key}"}})
        );
        assert_eq!(t.inputs, vec!["api.key"]);
        assert_eq!(
            t.changes
                .iter()
                .map(|(a, _)| a.as_str())
                .collect::<Vec<_>>(),
            vec![
                "${userHome}",
                "${/}",
                "${pathSeparator}",
                "${workspaceFolder}",
                "${workspaceFolderBasename}",
                "${cwd}",
                "${workspaceRoot}",
                "${env:TOKEN}"
            ]
        );
        assert!(t.unsupported.is_empty());
        let t = entry(
            json!({"args": ["${file}", "${config:editor.x}", "${lineNumber}"]}),
            p,
            h,
        );
        assert_eq!(
            t.unsupported,
            vec!["${file}", "${config:editor.x}", "${lineNumber}"]
        );
    }
}
