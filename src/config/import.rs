//! Importing MCP servers from the other tools people already use: Claude Desktop, Claude
//! Code, Cursor, VS Code and Codex. Each tool's config files are read where that tool keeps
//! them and in its own format, turned into our entries, and planned against one scope's
//! file: what is added, what is already there, what is skipped or renamed on a conflict.
//! Writing the plan goes through [`McpDocument`] (unknown keys kept, atomic).
//!
//! Other tools' variables are translated ([`translate`]); VS Code's inputs become questions
//! asked before the plan is shown ([`questions`], [`answer`]): a plain answer is written
//! into the entry, a password stays an `${input:NAME}` reference whose value goes to the
//! credential store. The plan reports what was translated.
//!
//! The project's own `.mcp.json` is never a source (harness9 reads it, with approval). A
//! file inside the project (`.vscode/mcp.json`, `.cursor/mcp.json`) arrived with the
//! repository and is as untrusted as `.mcp.json`: its plan shows every command and URL
//! and must be confirmed ([`ImportPlan::confirm`]), and what is written to the project
//! scope is recorded as approved exactly as shown ([`review`]).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

mod formats;
mod questions;
pub mod review;
mod translate;

use formats::{candidates, read};
pub use formats::{parse_jsonc, strip_jsonc, FormatError};
pub use questions::{answer, questions, InputQuestion};
pub use translate::input_name;

/// An entry with its variables translated, and the variables it cannot use (for the
/// fuzz targets; importing translates through [`ImportPlan`]).
#[doc(hidden)]
pub fn translate_entry(entry: Value, project: &Path, home: &Path) -> (Value, Vec<String>) {
    let t = translate::entry(entry, project, home);
    (t.value, t.unsupported)
}

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

/// A word `--from` or `--on-conflict` does not take.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImportWordError {
    #[error("unknown source \"{0}\"; use one of: {all}", all = ImportSource::ALL.map(ImportSource::word).join(", "))]
    Source(String),
    #[error("unknown conflict policy \"{0}\"; use skip or rename")]
    OnConflict(String),
}

impl ImportWordError {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        match self {
            ImportWordError::Source(_) => "unknown-source",
            ImportWordError::OnConflict(_) => "unknown-conflict-policy",
        }
    }
}

impl std::str::FromStr for ImportSource {
    type Err = ImportWordError;
    fn from_str(s: &str) -> Result<Self, ImportWordError> {
        ImportSource::ALL
            .into_iter()
            .find(|x| x.word() == s)
            .ok_or_else(|| ImportWordError::Source(s.to_string()))
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
    type Err = ImportWordError;
    fn from_str(s: &str) -> Result<Self, ImportWordError> {
        match s {
            "skip" => Ok(OnConflict::Skip),
            "rename" => Ok(OnConflict::Rename),
            other => Err(ImportWordError::OnConflict(other.to_string())),
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
    /// Things the user must do.
    pub notes: Vec<String>,
    /// The file is inside the project: it came with the repository, so what it adds must
    /// be shown and confirmed like an approval.
    pub in_project: bool,
    /// The inputs its servers use, to ask before the plan.
    pub inputs: Vec<InputQuestion>,
    /// (server, "theirs → ours") for each variable translated.
    pub translated: Vec<(String, String)>,
    /// Servers that cannot be imported, and why.
    pub refused: Vec<(String, String)>,
}

/// A file that exists but cannot be read or parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct SourceError {
    pub path: String,
    pub message: String,
}

impl SourceError {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        "source-unreadable"
    }
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
    let own = std::fs::canonicalize(project.join(super::MCP_JSON)).ok();
    for (path, reader) in candidates(source, project, at) {
        // A link (or a second name) to the project's own `.mcp.json` is not a source either.
        if own.is_some() && std::fs::canonicalize(&path).ok() == own {
            continue;
        }
        let in_project = path.starts_with(project);
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
        match read(reader, &text, project, &at.home, source.title()) {
            Ok(parts) => {
                for p in parts {
                    if !p.servers.is_empty() || !p.refused.is_empty() {
                        found.push(FoundFile {
                            source,
                            path: path.clone(),
                            part: p.part,
                            servers: p.servers,
                            notes: p.notes,
                            in_project,
                            inputs: p.inputs,
                            translated: p.translated,
                            refused: p.refused,
                        });
                    }
                }
            }
            Err(e) => errors.push(SourceError {
                path: path.display().to_string(),
                message: e.to_string(),
            }),
        }
    }
    (found, errors)
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
    /// Notes for the user (inputs without a value yet).
    pub notes: Vec<String>,
    /// What was translated from the tool's variables, one line each
    /// (`server: ${userHome} → /home/me`).
    // Not in the desktop's bindings yet (its import view shows the plan's text fields).
    #[cfg_attr(feature = "ts", ts(skip))]
    pub translated: Vec<String>,
    /// The inputs the added servers use (their names in harness9): secrets to keep in
    /// the credential store once written, or to set later.
    #[cfg_attr(feature = "ts", ts(skip))]
    pub inputs: Vec<InputQuestion>,
    /// The file's text after the import.
    #[serde(skip)]
    pub text: String,
    /// Some added server comes from a file inside the project: the user must see the plan
    /// and confirm it before it is written.
    pub confirm: bool,
    /// A digest of what is added (names and entries) and where: a confirmation names it,
    /// so what is written is exactly what was shown.
    pub digest: String,
    /// The added entries as written to the file, by their name there.
    #[serde(skip)]
    pub entries: Vec<(String, Value)>,
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
    /// What it runs or connects to, as written: the command line, or the URL.
    pub target: String,
    /// Whether it comes from a file inside the project.
    pub from_project: bool,
}

/// Why an import cannot be planned or written.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("{path}: {message}; fix the file first")]
    Target { path: String, message: String },
    #[error(transparent)]
    Save(#[from] SaveError),
    /// The plan adds servers from a file inside the project and was not confirmed.
    #[error("these servers come from a file inside the project; nothing was written. Check what they run, then confirm")]
    NotConfirmed,
    /// The source changed since the plan was shown: what would be written is not what was
    /// confirmed.
    #[error("the servers to import changed since they were shown; nothing was written. Look at them again")]
    Changed,
}

impl ImportError {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        match self {
            ImportError::Target { .. } => "config-unreadable",
            ImportError::Save(e) => e.code(),
            ImportError::NotConfirmed => "not-confirmed",
            ImportError::Changed => "changed-since-shown",
        }
    }
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
        for (name, reason) in &file.refused {
            plan.skipped.push(ImportedServer {
                name: name.clone(),
                original: name.clone(),
                from: from.clone(),
                reason: format!("cannot be imported: {reason}"),
                target: String::new(),
                from_project: file.in_project,
            });
        }
        for (name, entry) in &file.servers {
            let target = match check_entry(name, entry) {
                // A file that arrived with the project is reviewed before anything of it
                // runs: show its command whole, as approval does.
                Ok(cfg) if file.in_project => cfg.target_as_written(),
                Ok(cfg) => cfg.display_target(),
                Err(e) => {
                    plan.skipped.push(ImportedServer {
                        name: name.clone(),
                        original: name.clone(),
                        from: from.clone(),
                        reason: format!("cannot be used: {e}"),
                        target: String::new(),
                        from_project: file.in_project,
                    });
                    continue;
                }
            };
            let item = |n: &str, reason: String| ImportedServer {
                name: n.to_string(),
                original: name.clone(),
                from: from.clone(),
                reason,
                target: target.clone(),
                from_project: file.in_project,
            };
            match doc.server(name) {
                None => {
                    doc.set_server(name, entry.clone());
                    plan.added.push(item(name, String::new()));
                    plan.entries.push((name.clone(), entry.clone()));
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
                        plan.entries.push((free.clone(), entry.clone()));
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
        // What was translated and asked, for the servers added (under their names here).
        for added in plan.added.iter().filter(|a| a.from == from) {
            for (server, line) in &file.translated {
                if *server == added.original {
                    plan.translated.push(format!("{}: {line}", added.name));
                }
            }
            for q in file
                .inputs
                .iter()
                .filter(|q| q.servers.contains(&added.original))
            {
                match plan.inputs.iter_mut().find(|i| i.name == q.name) {
                    Some(i) => i.servers.push(added.name.clone()),
                    None => plan.inputs.push(InputQuestion {
                        servers: vec![added.name.clone()],
                        ..q.clone()
                    }),
                }
            }
        }
    }
    plan.text = doc.to_text();
    plan.confirm = plan.added.iter().any(|s| s.from_project);
    plan.digest = review::digest(&plan.path, &plan.entries);
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
        // Names, paths and command lines come from files of other tools or of the project:
        // each is one line, rendered safe for a terminal.
        use crate::term_text::Line;
        let mut out = String::new();
        let verb = if dry_run { "Would add" } else { "Added" };
        if self.added.is_empty() {
            out.push_str(&format!("Nothing to add to {}\n", Line(&self.path)));
        } else {
            out.push_str(&format!("{verb} to {}:\n", Line(&self.path)));
        }
        for s in &self.added {
            out.push_str(&format!("  + {}  (from {})", Line(&s.name), Line(&s.from)));
            if !s.reason.is_empty() {
                out.push_str(&format!("  {}", Line(&s.reason)));
            }
            out.push('\n');
            // What it runs: the user decides on this, not on the name.
            out.push_str(&format!("      {}\n", Line(&s.target)));
        }
        if !self.skipped.is_empty() {
            out.push_str("Skipped:\n");
            for s in &self.skipped {
                out.push_str(&format!(
                    "  - {}  (from {}): {}\n",
                    Line(&s.name),
                    Line(&s.from),
                    Line(&s.reason)
                ));
            }
        }
        if !self.translated.is_empty() {
            out.push_str("Translated:\n");
            for t in &self.translated {
                out.push_str(&format!("  {}\n", Line(t)));
            }
        }
        for n in &self.notes {
            out.push_str(&format!("Note: {}\n", Line(n)));
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
