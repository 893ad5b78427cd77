//! The remembered tool permission rules of every project (`tool-permissions.json`, kept
//! by [`crate::userdata`]). An MCP tool's rule is keyed by (server, raw tool name), never
//! by its model-facing name: that name is cleaned and de-duplicated across the project's
//! servers, so a server renamed to a look-alike (`a.b` → `a_b`) would otherwise inherit
//! another server's rules. Patterns and built-in tools are kept by name.
//!
//! Files of earlier versions keyed every rule by name; they are read as they are: their
//! exact names wait in `names` and are tied to (server, tool) the first time a call
//! matches one ([`PermissionStore::rules_for`]), then written in the new layout.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{PermissionRule, ToolPermission};
use crate::tools::{ToolSource, ToolSpec};
use crate::userdata::{project_entry, project_key, JsonFile, UserDataError};

/// File in the data directory holding remembered tool permissions.
pub const PERMISSIONS_FILE: &str = crate::userdata::DataKind::Permissions.file_name();

/// One project's remembered rules.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProjectRules {
    /// MCP tools: server → raw tool name → permission.
    #[serde(default)]
    pub tools: BTreeMap<String, BTreeMap<String, ToolPermission>>,
    /// Patterns over model-facing names (`mcp__fs__*`), built-in tools, and exact
    /// model-facing names not yet tied to a server.
    #[serde(default)]
    pub names: BTreeMap<String, ToolPermission>,
}

/// How an MCP tool's rule is shown and named in the settings.
pub fn shown_name(server: &str, tool: &str) -> String {
    format!("{}{server}__{tool}", crate::tools::naming::MCP_PREFIX)
}

impl ProjectRules {
    /// The rule for a tool: its own, else the longest pattern that matches its name.
    pub(super) fn rule_for(&self, spec: &ToolSpec) -> Option<ToolPermission> {
        let own = match &spec.source {
            ToolSource::Mcp { server, tool } => {
                self.tools.get(server).and_then(|t| t.get(tool)).copied()
            }
            ToolSource::Builtin => self.names.get(&spec.name).copied(),
        };
        own.or_else(|| {
            self.names
                .iter()
                .filter(|(p, _)| p.contains(['*', '?']) && super::glob_match(p, &spec.name))
                .max_by_key(|(p, _)| p.len())
                .map(|(_, v)| *v)
        })
    }

    fn list(&self) -> Vec<PermissionRule> {
        let mut out: Vec<PermissionRule> = self
            .tools
            .iter()
            .flat_map(|(s, tools)| {
                tools.iter().map(|(t, p)| PermissionRule {
                    tool: shown_name(s, t),
                    permission: *p,
                })
            })
            .chain(self.names.iter().map(|(n, p)| PermissionRule {
                tool: n.clone(),
                permission: *p,
            }))
            .collect();
        out.sort_by(|a, b| a.tool.cmp(&b.tool));
        out
    }

    fn is_empty(&self) -> bool {
        self.tools.is_empty() && self.names.is_empty()
    }
}

/// A project's rules as stored: this layout, or the earlier one (name → permission).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Stored {
    Keyed(ProjectRules),
    ByName(BTreeMap<String, ToolPermission>),
}

impl From<Stored> for ProjectRules {
    fn from(s: Stored) -> ProjectRules {
        match s {
            Stored::Keyed(r) => r,
            Stored::ByName(names) => ProjectRules {
                tools: BTreeMap::new(),
                names,
            },
        }
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct StoreFile {
    /// project folder → rules
    #[serde(default, deserialize_with = "read_projects")]
    projects: BTreeMap<String, ProjectRules>,
}

fn read_projects<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<BTreeMap<String, ProjectRules>, D::Error> {
    let stored: BTreeMap<String, Stored> = Deserialize::deserialize(d)?;
    Ok(stored.into_iter().map(|(k, v)| (k, v.into())).collect())
}

/// Remembered per-project rules.
#[derive(Debug, Clone)]
pub struct PermissionStore {
    file: JsonFile<StoreFile>,
}

impl PermissionStore {
    pub fn in_dir(data_dir: &Path) -> PermissionStore {
        PermissionStore {
            file: JsonFile::at(data_dir.join(PERMISSIONS_FILE)),
        }
    }

    pub fn path(&self) -> &Path {
        self.file.path()
    }

    /// The remembered rules of a project, as stored now. Blocking.
    pub fn rules(&self, project: &Path) -> ProjectRules {
        project_entry(&self.file.current().projects, project)
    }

    /// The rules as stored now, for a call of `spec`: an exact name of an earlier file
    /// that names this MCP tool is tied to its (server, tool) first. Blocking.
    pub fn rules_for(&self, project: &Path, spec: &ToolSpec) -> ProjectRules {
        let rules = self.rules(project);
        let ToolSource::Mcp { server, tool } = &spec.source else {
            return rules;
        };
        if !rules.names.contains_key(&spec.name) || spec.name.contains(['*', '?']) {
            return rules;
        }
        let key = project_key(project);
        let (name, server, tool) = (spec.name.clone(), server.clone(), tool.clone());
        let tied = self.file.update(move |file| {
            let r = file.projects.entry(key).or_default();
            if let Some(p) = r.names.remove(&name) {
                r.tools.entry(server).or_default().entry(tool).or_insert(p);
            }
            r.clone()
        });
        tied.unwrap_or(rules)
    }

    /// The remembered rules of a project as a list, by tool name or pattern.
    pub fn list(&self, project: &Path) -> Vec<PermissionRule> {
        self.rules(project).list()
    }

    /// Records (or with `None`, forgets) the rule for a name or pattern as the settings
    /// show it. A name shown for an MCP tool's rule changes that rule. Blocking.
    pub fn set(
        &self,
        project: &Path,
        tool: &str,
        permission: Option<ToolPermission>,
    ) -> Result<(), UserDataError> {
        let tool = tool.to_string();
        self.edit(project, move |rules| {
            let mut found = false;
            for (s, tools) in rules.tools.iter_mut() {
                for (t, p) in tools.iter_mut() {
                    if shown_name(s, t) == tool {
                        found = true;
                        if let Some(new) = permission {
                            *p = new;
                        }
                    }
                }
            }
            if permission.is_none() {
                for (s, tools) in rules.tools.iter_mut() {
                    tools.retain(|t, _| shown_name(s, t) != tool);
                }
                rules.tools.retain(|_, t| !t.is_empty());
                rules.names.remove(&tool);
            } else if let (false, Some(p)) = (found, permission) {
                rules.names.insert(tool, p);
            }
        })
    }

    /// Records (or forgets) the rule of one MCP tool of one server. Blocking.
    pub fn set_tool(
        &self,
        project: &Path,
        server: &str,
        tool: &str,
        permission: Option<ToolPermission>,
    ) -> Result<(), UserDataError> {
        let (server, tool) = (server.to_string(), tool.to_string());
        self.edit(project, move |rules| {
            let tools = rules.tools.entry(server).or_default();
            match permission {
                Some(p) => tools.insert(tool, p),
                None => tools.remove(&tool),
            };
            rules.tools.retain(|_, t| !t.is_empty());
        })
    }

    fn edit(
        &self,
        project: &Path,
        change: impl FnOnce(&mut ProjectRules) + Send + 'static,
    ) -> Result<(), UserDataError> {
        let key = project_key(project);
        self.file.update(move |file| {
            let rules = file.projects.entry(key.clone()).or_default();
            change(rules);
            if rules.is_empty() {
                file.projects.remove(&key);
            }
        })
    }
}
