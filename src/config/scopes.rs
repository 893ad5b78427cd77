//! Config scopes, as Claude Code has them: where a server entry is written decides who sees
//! it and whether it needs approval.
//!
//! - [`Scope::Project`]: `.mcp.json` at the project root, shared through the repository;
//!   its servers need the user's approval before they start.
//! - [`Scope::User`]: `mcp.json` in the user's config folder, servers for every project.
//! - [`Scope::Local`]: private servers and overrides of one project, kept in the user's data
//!   folder (never in the project, so they are never committed).
//!
//! The three files are merged into one [`McpConfig`]: for the same name the entry of the
//! higher scope wins as a whole (local > project > user). Every entry keeps its scope, so
//! everything above `config` sees one list of servers, each tagged.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::Digest;

use super::{McpConfig, MCP_JSON};

/// Overrides the user's config folder of harness9 (where the user scope's `mcp.json` is).
pub const CONFIG_DIR_ENV: &str = "HARNESS9_CONFIG_DIR";

/// Overrides the user's data folder of harness9 (approvals, local scope, other state).
pub const DATA_DIR_ENV: &str = "HARNESS9_DATA_DIR";

/// File name of the user scope (in [`config_dir`]) and of each local scope.
pub const SCOPE_FILE: &str = "mcp.json";

/// Folder under [`data_dir`] holding one folder per project for the local scope.
pub const LOCAL_PROJECTS_DIR: &str = "projects";

/// Where a server entry is written.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum Scope {
    /// Private to this project, in the user's data folder.
    Local,
    /// `.mcp.json` in the project, shared with everyone who clones it.
    #[default]
    Project,
    /// The user's own servers, in every project.
    User,
}

impl Scope {
    /// From the highest precedence to the lowest.
    pub const ALL: [Scope; 3] = [Scope::Local, Scope::Project, Scope::User];

    /// The scope's name as users type and read it.
    pub fn word(self) -> &'static str {
        match self {
            Scope::Local => "local",
            Scope::Project => "project",
            Scope::User => "user",
        }
    }

    /// Whether its servers need the user's approval before they start: only the project's,
    /// which anyone with write access to the repository can change.
    pub fn needs_approval(self) -> bool {
        match self {
            Scope::Project => true,
            Scope::Local | Scope::User => false,
        }
    }
}

impl std::fmt::Display for Scope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.word())
    }
}

/// A word that names no [`Scope`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown scope \"{0}\"; use \"local\", \"project\" or \"user\"")]
pub struct UnknownScope(pub String);

impl UnknownScope {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        "unknown-scope"
    }
}

impl std::str::FromStr for Scope {
    type Err = UnknownScope;
    fn from_str(s: &str) -> Result<Scope, UnknownScope> {
        match s {
            "local" => Ok(Scope::Local),
            "project" => Ok(Scope::Project),
            "user" => Ok(Scope::User),
            other => Err(UnknownScope(other.to_string())),
        }
    }
}

/// The per-user config folder of harness9 (`$XDG_CONFIG_HOME/harness9` on Linux).
pub fn config_dir() -> PathBuf {
    dir_from_env(CONFIG_DIR_ENV).unwrap_or_else(|| {
        dirs::config_dir()
            .unwrap_or_else(std::env::temp_dir)
            .join("harness9")
    })
}

/// The per-user data folder of harness9 (`$XDG_DATA_HOME/harness9` on Linux).
pub fn data_dir() -> PathBuf {
    dir_from_env(DATA_DIR_ENV).unwrap_or_else(|| {
        dirs::data_dir()
            .unwrap_or_else(std::env::temp_dir)
            .join("harness9")
    })
}

fn dir_from_env(var: &str) -> Option<PathBuf> {
    std::env::var_os(var)
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
}

/// The files of the three scopes of one project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScopeFiles {
    pub local: PathBuf,
    pub project: PathBuf,
    pub user: PathBuf,
}

impl ScopeFiles {
    /// The files of `project`, in the user's folders.
    pub fn of(project: &Path) -> ScopeFiles {
        ScopeFiles::within(project, &config_dir(), &data_dir())
    }

    /// The files of `project` with the user's config and data folders given.
    pub fn within(project: &Path, config_dir: &Path, data_dir: &Path) -> ScopeFiles {
        ScopeFiles {
            local: data_dir
                .join(LOCAL_PROJECTS_DIR)
                .join(project_folder_name(project))
                .join(SCOPE_FILE),
            project: project.join(MCP_JSON),
            user: config_dir.join(SCOPE_FILE),
        }
    }

    pub fn path(&self, scope: Scope) -> &Path {
        match scope {
            Scope::Local => &self.local,
            Scope::Project => &self.project,
            Scope::User => &self.user,
        }
    }
}

/// The folder name of a project's local scope: its canonical path with every character
/// outside `[A-Za-z0-9._-]` as `-` (readable), then a short hash of the path (unique).
pub fn project_folder_name(project: &Path) -> String {
    let canonical = std::fs::canonicalize(project).unwrap_or_else(|_| project.to_path_buf());
    let text = canonical.to_string_lossy();
    let mut escaped: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '-'
            }
        })
        .collect();
    // Long paths stay within a file name's limit; the hash keeps them apart.
    if escaped.len() > 100 {
        let skip = escaped.chars().count() - 100;
        escaped = escaped.chars().skip(skip).collect();
    }
    let digest = sha2::Sha256::digest(text.as_bytes());
    let hash: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
    format!("{escaped}-{hash}")
}

impl McpConfig {
    /// Reads and merges the three scopes of `project` (see the module docs). A missing file
    /// is an empty scope. [`McpConfig::path`] is the project's `.mcp.json`.
    pub fn load_scoped(project: &Path) -> McpConfig {
        McpConfig::load_files(&ScopeFiles::of(project))
    }

    /// Reads and merges the given scope files.
    pub fn load_files(files: &ScopeFiles) -> McpConfig {
        McpConfig::merge(
            McpConfig::load_file(&files.local),
            McpConfig::load_file(&files.project),
            McpConfig::load_file(&files.user),
        )
    }

    /// Merges three scopes: for the same name the higher scope's entry wins as a whole.
    /// Every entry is tagged with its scope. The first file that cannot be used (local,
    /// then project, then user) sets [`McpConfig::error`].
    pub fn merge(local: McpConfig, project: McpConfig, user: McpConfig) -> McpConfig {
        let mut merged = McpConfig {
            path: project.path.clone(),
            ..McpConfig::default()
        };
        for (scope, cfg) in [
            (Scope::User, user),
            (Scope::Project, project),
            (Scope::Local, local),
        ] {
            if let Some(e) = cfg.error {
                // Reverse order of precedence: the higher scope's error is the one kept.
                merged.error = Some(e);
            }
            for (name, mut entry) in cfg.servers {
                match &mut entry {
                    Ok(s) => s.scope = scope,
                    Err(e) => e.scope = scope,
                }
                merged.servers.insert(name, entry);
            }
        }
        merged
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str, path: &str) -> McpConfig {
        let mut c = McpConfig::parse(text, path, &|_| None);
        c.path = Some(PathBuf::from(path));
        c
    }

    #[test]
    fn higher_scope_wins_as_a_whole_and_every_entry_keeps_its_scope() {
        let user = parsed(
            r#"{"mcpServers":{"a":{"command":"user-a","env":{"K":"1"}},"u":{"url":"http://u"}}}"#,
            "user",
        );
        let project = parsed(
            r#"{"mcpServers":{"a":{"command":"project-a"},"p":{"command":"p"},"l":{"command":"x"}}}"#,
            "p/.mcp.json",
        );
        let local = parsed(r#"{"mcpServers":{"l":{"type":"bogus"}}}"#, "local");
        let m = McpConfig::merge(local, project, user);
        let scopes: Vec<(String, Scope)> = m
            .servers
            .iter()
            .map(|(n, e)| {
                (
                    n.clone(),
                    match e {
                        Ok(s) => s.scope,
                        Err(e) => e.scope,
                    },
                )
            })
            .collect();
        assert_eq!(
            scopes,
            vec![
                ("a".to_string(), Scope::Project),
                ("l".to_string(), Scope::Local),
                ("p".to_string(), Scope::Project),
                ("u".to_string(), Scope::User),
            ]
        );
        let a = m.servers["a"].as_ref().unwrap();
        // The whole entry: the user's env does not leak into the project's entry.
        assert_eq!(a.raw, serde_json::json!({"command": "project-a"}));
        assert!(m.servers["l"].is_err());
        assert_eq!(m.path, Some(PathBuf::from("p/.mcp.json")));
        assert_eq!(m.error, None);
    }

    #[test]
    fn the_highest_broken_file_is_the_error() {
        let bad_user = parsed("{", "user");
        let bad_local = parsed("[]", "local");
        let m = McpConfig::merge(bad_local, McpConfig::default(), bad_user);
        assert!(m.error.unwrap().to_string().starts_with("local:"));
    }

    #[test]
    fn scope_files_sit_in_the_user_folders_and_local_never_in_the_project() {
        let f = ScopeFiles::within(
            Path::new("/no/such/proj ect"),
            Path::new("/cfg/harness9"),
            Path::new("/data/harness9"),
        );
        assert_eq!(f.project, PathBuf::from("/no/such/proj ect/.mcp.json"));
        assert_eq!(f.user, PathBuf::from("/cfg/harness9/mcp.json"));
        let local = f.local.to_string_lossy().into_owned();
        assert!(
            local.starts_with("/data/harness9/projects/-no-such-proj-ect-"),
            "{local}"
        );
        assert!(local.ends_with("/mcp.json"));
        // Different projects, different folders, even when they escape alike.
        assert_ne!(
            project_folder_name(Path::new("/a/b")),
            project_folder_name(Path::new("/a-b"))
        );
    }

    #[test]
    fn scope_words_round_trip_and_only_project_needs_approval() {
        for s in Scope::ALL {
            assert_eq!(s.word().parse::<Scope>(), Ok(s));
        }
        assert!("global".parse::<Scope>().is_err());
        assert_eq!(Scope::ALL.map(Scope::needs_approval), [false, true, false]);
    }
}
