//! Tool permissions: each call is allowed, denied or needs the user's answer.
//!
//! Precedence, first match wins: deny patterns, the project's remembered rules (stored per
//! project in the data directory, see [`store`]; an "always" answer adds one, and the
//! settings of each front end list, change and revoke them; a rule names an MCP tool by
//! (server, raw tool name), a built-in tool, or a pattern, and the tool's own rule wins
//! over a pattern, a longer pattern over a shorter one; the rules are read again, one
//! `stat` when unchanged, before every call), allow
//! patterns, read-only auto-allow (opt-in; `readOnlyHint` is the server's claim), the
//! destructive rule, and the default mode (ask in an interactive front end, deny in
//! `exec`). Patterns are globs over the model-facing name: `*` any run of characters, `?`
//! one character (`mcp__demo__*`).
//!
//! The destructive rule: an MCP tool is destructive unless its server says
//! `readOnlyHint: true` or `destructiveHint: false` — the spec's defaults (`readOnlyHint`
//! false, `destructiveHint` true), and `destructiveHint` only counts for a tool that is not
//! read-only. A destructive tool is never allowed by the default mode: where the default
//! would allow it, the user is asked; where it would deny (`exec`), it stays denied. The
//! user's explicit settings (deny and allow patterns, remembered answers) come first and
//! still win. Hints are the server's claims, so they only ever add a question.

use serde::{Deserialize, Serialize};

use crate::tools::{ToolSource, ToolSpec};

mod store;
pub use store::{shown_name, PermissionStore, ProjectRules, PERMISSIONS_FILE};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum ToolPermission {
    Ask,
    Allow,
    Deny,
}

/// The user's answer to an approval request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "ChatDecision"))]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    AllowOnce,
    /// Allow and remember for this tool in this project.
    AllowAlways,
    Deny,
}

#[derive(Debug, Clone)]
pub struct PermissionOptions {
    /// What happens to a tool no rule covers.
    pub default: ToolPermission,
    pub allow: Vec<String>,
    pub deny: Vec<String>,
    /// Allow tools whose server marks them read-only.
    pub auto_allow_read_only: bool,
}

impl Default for PermissionOptions {
    fn default() -> Self {
        PermissionOptions {
            default: ToolPermission::Ask,
            allow: Vec::new(),
            deny: Vec::new(),
            auto_allow_read_only: false,
        }
    }
}

/// What the engine does with one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Allow,
    Ask,
    /// Denied, with the reason the model is told.
    Deny(String),
}

impl ToolPermission {
    pub fn name(self) -> &'static str {
        match self {
            ToolPermission::Ask => "ask",
            ToolPermission::Allow => "allow",
            ToolPermission::Deny => "deny",
        }
    }

    pub fn parse(s: &str) -> Option<ToolPermission> {
        match s.trim().to_ascii_lowercase().as_str() {
            "ask" => Some(ToolPermission::Ask),
            "allow" => Some(ToolPermission::Allow),
            "deny" => Some(ToolPermission::Deny),
            _ => None,
        }
    }
}

/// One remembered rule, as the settings list it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct PermissionRule {
    /// A tool's model-facing name, or a pattern over such names.
    pub tool: String,
    pub permission: ToolPermission,
}

/// The rules in force for one engine.
#[derive(Debug, Clone)]
pub struct Permissions {
    opts: PermissionOptions,
    remembered: ProjectRules,
    /// "Always" answers of this run, by (server, tool) or name: they hold even when the
    /// store could not be written.
    this_run: ProjectRules,
}

impl Permissions {
    pub fn new(opts: PermissionOptions, remembered: ProjectRules) -> Self {
        Permissions {
            opts,
            remembered,
            this_run: ProjectRules::default(),
        }
    }

    /// Takes the remembered rules as the store has them now.
    pub fn set_remembered(&mut self, remembered: ProjectRules) {
        self.remembered = remembered;
    }

    /// Remembers an answer for one tool for the rest of this run.
    pub fn remember(&mut self, spec: &ToolSpec, p: ToolPermission) {
        match &spec.source {
            ToolSource::Mcp { server, tool } => {
                self.this_run
                    .tools
                    .entry(server.clone())
                    .or_default()
                    .insert(tool.clone(), p);
            }
            ToolSource::Builtin => {
                self.this_run.names.insert(spec.name.clone(), p);
            }
        }
    }

    /// The remembered rule for a tool: the stored one, else one given in this run.
    fn remembered_for(&self, spec: &ToolSpec) -> Option<ToolPermission> {
        self.remembered
            .rule_for(spec)
            .or_else(|| self.this_run.rule_for(spec))
    }

    pub fn check(&self, spec: &ToolSpec) -> Verdict {
        let name = spec.name.as_str();
        if let Some(p) = self.opts.deny.iter().find(|p| glob_match(p, name)) {
            return Verdict::Deny(format!(
                "harness9 denied this call: tool {name} is blocked by the user's rule \"{p}\"."
            ));
        }
        match self.remembered_for(spec) {
            Some(ToolPermission::Allow) => return Verdict::Allow,
            Some(ToolPermission::Deny) => {
                return Verdict::Deny(format!(
                "harness9 denied this call: the user does not allow tool {name} in this project."
            ))
            }
            Some(ToolPermission::Ask) | None => {}
        }
        if self.opts.allow.iter().any(|p| glob_match(p, name)) {
            return Verdict::Allow;
        }
        if self.opts.auto_allow_read_only && spec.read_only {
            return Verdict::Allow;
        }
        if spec.destructive() && self.opts.default == ToolPermission::Allow {
            return Verdict::Ask;
        }
        match self.opts.default {
            ToolPermission::Allow => Verdict::Allow,
            ToolPermission::Ask => Verdict::Ask,
            ToolPermission::Deny => Verdict::Deny(format!(
                "harness9 denied this call: tool {name} is not allowed in this run (the user can allow it with --allow-tools '{name}'). Do not retry it; answer without it."
            )),
        }
    }
}

/// Glob match with `*` (any run, also empty) and `?` (one character).
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn by_name(names: BTreeMap<String, ToolPermission>) -> ProjectRules {
        ProjectRules {
            tools: BTreeMap::new(),
            names,
        }
    }

    fn spec(name: &str, read_only: bool) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: String::new(),
            input_schema: crate::mcp::schema_text::SchemaText::from(serde_json::json!({})),
            read_only,
            source: ToolSource::Builtin,
            display: Default::default(),
        }
    }

    /// An MCP tool with the given annotations (as the server sent them).
    fn mcp(name: &str, annotations: serde_json::Value) -> ToolSpec {
        let def: crate::mcp::ToolDef =
            serde_json::from_value(serde_json::json!({"name": name, "annotations": annotations}))
                .unwrap();
        ToolSpec {
            name: format!("mcp__s__{name}"),
            description: String::new(),
            input_schema: crate::mcp::schema_text::SchemaText::from(serde_json::json!({})),
            read_only: def.read_only_hint(),
            source: ToolSource::Mcp {
                server: "s".into(),
                tool: name.into(),
            },
            display: crate::tools::ToolDisplay::of(&def),
        }
    }

    #[test]
    fn destructive_tools_are_asked_about_unless_the_user_said_otherwise() {
        use serde_json::json;
        let open = |default, allow: Vec<String>, remembered| {
            Permissions::new(
                PermissionOptions {
                    default,
                    allow,
                    deny: Vec::new(),
                    auto_allow_read_only: false,
                },
                remembered,
            )
        };
        let p = open(ToolPermission::Allow, Vec::new(), ProjectRules::default());
        // The spec's defaults: no hints at all means destructive.
        assert_eq!(p.check(&mcp("plain", json!(null))), Verdict::Ask);
        assert_eq!(
            p.check(&mcp("rm", json!({"destructiveHint": true}))),
            Verdict::Ask
        );
        assert_eq!(
            p.check(&mcp("write", json!({"readOnlyHint": false}))),
            Verdict::Ask
        );
        assert_eq!(
            p.check(&mcp("add", json!({"destructiveHint": false}))),
            Verdict::Allow
        );
        // destructiveHint means nothing for a read-only tool.
        assert_eq!(
            p.check(&mcp(
                "ls",
                json!({"readOnlyHint": true, "destructiveHint": true})
            )),
            Verdict::Allow
        );
        // Built-in tools carry no hints.
        assert_eq!(p.check(&spec("tool_search", false)), Verdict::Allow);
        // Explicit settings win: an allow pattern, a remembered answer.
        let p = open(
            ToolPermission::Allow,
            vec!["mcp__s__rm".into()],
            ProjectRules::default(),
        );
        assert_eq!(
            p.check(&mcp("rm", json!({"destructiveHint": true}))),
            Verdict::Allow
        );
        let remembered = ProjectRules {
            tools: BTreeMap::from([(
                "s".to_string(),
                BTreeMap::from([("rm".to_string(), ToolPermission::Allow)]),
            )]),
            names: BTreeMap::new(),
        };
        let p = open(ToolPermission::Allow, Vec::new(), remembered);
        assert_eq!(
            p.check(&mcp("rm", json!({"destructiveHint": true}))),
            Verdict::Allow
        );
        // Where nobody can answer, the default denial stands.
        let p = open(ToolPermission::Deny, Vec::new(), ProjectRules::default());
        assert!(matches!(
            p.check(&mcp("rm", json!({"destructiveHint": true}))),
            Verdict::Deny(_)
        ));
    }

    #[test]
    fn remembered_patterns_exact_names_first_then_the_longest_pattern() {
        let remembered = BTreeMap::from([
            ("mcp__fs__*".to_string(), ToolPermission::Deny),
            ("mcp__fs__read_*".to_string(), ToolPermission::Allow),
            ("mcp__fs__read_secret".to_string(), ToolPermission::Ask),
        ]);
        let p = Permissions::new(PermissionOptions::default(), by_name(remembered));
        assert!(matches!(
            p.check(&spec("mcp__fs__write", false)),
            Verdict::Deny(_)
        ));
        assert_eq!(p.check(&spec("mcp__fs__read_file", false)), Verdict::Allow);
        assert_eq!(p.check(&spec("mcp__fs__read_secret", false)), Verdict::Ask);
        assert_eq!(p.check(&spec("mcp__git__log", false)), Verdict::Ask);
    }

    #[test]
    fn the_store_lists_sets_and_revokes_rules_per_project() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        let store = PermissionStore::in_dir(&dir.path().join("data"));
        assert_eq!(store.list(&a), Vec::new());
        store
            .set(&a, "mcp__x__rm", Some(ToolPermission::Allow))
            .unwrap();
        store
            .set(&a, "mcp__x__*", Some(ToolPermission::Deny))
            .unwrap();
        store.set(&b, "other", Some(ToolPermission::Ask)).unwrap();
        store
            .set(&a, "mcp__x__rm", Some(ToolPermission::Ask))
            .unwrap();
        let rule = |t: &str, p| PermissionRule {
            tool: t.into(),
            permission: p,
        };
        assert_eq!(
            store.list(&a),
            vec![
                rule("mcp__x__*", ToolPermission::Deny),
                rule("mcp__x__rm", ToolPermission::Ask)
            ]
        );
        store.set(&a, "mcp__x__*", None).unwrap();
        assert_eq!(
            store.list(&a),
            vec![rule("mcp__x__rm", ToolPermission::Ask)]
        );
        assert_eq!(store.list(&b), vec![rule("other", ToolPermission::Ask)]);
    }

    #[test]
    fn globs() {
        assert!(glob_match("mcp__demo__*", "mcp__demo__echo"));
        assert!(glob_match("*", "anything"));
        assert!(glob_match("mcp__*__read_?", "mcp__fs__read_x"));
        assert!(!glob_match("mcp__demo__*", "mcp__demo2__echo"));
        assert!(!glob_match("echo", "echo2"));
        assert!(glob_match("*echo*", "mcp__a__echo_b"));
    }

    #[test]
    fn precedence() {
        let mut remembered = BTreeMap::new();
        remembered.insert("mcp__a__kept".to_string(), ToolPermission::Allow);
        remembered.insert("mcp__a__never".to_string(), ToolPermission::Deny);
        let p = Permissions::new(
            PermissionOptions {
                default: ToolPermission::Ask,
                allow: vec!["mcp__a__*".into()],
                deny: vec!["*secret*".into()],
                auto_allow_read_only: true,
            },
            by_name(remembered),
        );
        assert!(matches!(
            p.check(&spec("mcp__a__secret", false)),
            Verdict::Deny(_)
        ));
        assert!(matches!(
            p.check(&spec("mcp__a__never", false)),
            Verdict::Deny(_)
        ));
        assert_eq!(p.check(&spec("mcp__a__x", false)), Verdict::Allow);
        assert_eq!(p.check(&spec("mcp__b__x", true)), Verdict::Allow);
        assert_eq!(p.check(&spec("mcp__b__x", false)), Verdict::Ask);
    }
}
