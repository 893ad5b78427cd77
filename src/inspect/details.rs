//! One server's entry as `mcp get` shows it: the entry in effect for a project (secrets
//! masked), the file it is read from, and the lower scopes it overrides.

use crate::config::servers::{scope_list, scopes_with, ServerEditError};
use crate::config::{McpConfig, Scope, ScopeFiles};

use super::ServerEntry;
use crate::install::{Installer, SecretState};

/// One server as `mcp get` shows it: the entry in effect and where else it is written.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerDetails {
    #[serde(flatten)]
    pub entry: ServerEntry,
    /// The file the entry in effect is read from.
    pub file: String,
    /// Lower scopes that also have an entry of this name (not in effect).
    pub shadows: Vec<Scope>,
    /// The entry's `${input:NAME}` references and whether each has a value (never the
    /// values); filled by [`ServerDetails::with_secrets`].
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub secrets: Vec<SecretState>,
    /// Where those values are kept, in words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secrets_in: Option<String>,
}

/// The entry named `name` in effect for a project, secrets masked.
pub fn server_details(files: &ScopeFiles, name: &str) -> Result<ServerDetails, ServerEditError> {
    let found = scopes_with(files, name)?;
    let Some(&top) = found.first() else {
        return Err(ServerEditError::NotFound {
            name: name.into(),
            scope: None,
            files: Scope::ALL
                .iter()
                .map(|s| files.path(*s).display().to_string())
                .collect(),
        });
    };
    let config = McpConfig::load_files(files);
    let entry = ServerEntry::find(&config, name).ok_or_else(|| ServerEditError::Unreadable {
        path: files.path(top).display().to_string(),
        message: config
            .error
            .map(|e| e.to_string())
            .unwrap_or_else(|| "cannot be read".into()),
    })?;
    Ok(ServerDetails {
        entry,
        file: files.path(top).display().to_string(),
        shadows: found[1..].to_vec(),
        secrets: Vec::new(),
        secrets_in: None,
    })
}

impl ServerDetails {
    /// Adds whether each `${input:NAME}` of the entry has a value, when it has any (the
    /// credential store is only opened then). Blocking.
    pub fn with_secrets(
        mut self,
        files: &ScopeFiles,
        open: impl FnOnce() -> Installer,
    ) -> ServerDetails {
        let raw = crate::config::servers::entry_of(files, self.entry.scope, &self.entry.name);
        let Ok(Some(raw)) = raw else {
            return self;
        };
        if crate::config::inputs::entry_inputs(&raw).is_empty() {
            return self;
        }
        let installer = open();
        if let Ok((_, states)) = installer.secret_states(&self.entry.name) {
            self.secrets = states;
            self.secrets_in = Some(installer.secrets().location());
        }
        self
    }

    /// Lines for a terminal: `Key: value`, secrets already masked.
    pub fn to_text(&self) -> String {
        let e = &self.entry;
        let mut out = format!("{}:\n  Scope: {} ({})\n", e.name, e.scope, self.file);
        out.push_str(&format!("  Type: {}\n", e.transport));
        if let Some(c) = &e.command {
            out.push_str(&format!("  Command: {c}\n"));
            out.push_str(&format!("  Args: {}\n", e.args.join(" ")));
        }
        if let Some(u) = &e.url {
            out.push_str(&format!("  URL: {u}\n"));
        }
        if let Some(c) = &e.cwd {
            out.push_str(&format!("  Working directory: {c}\n"));
        }
        for (label, pairs) in [("Environment", &e.env), ("Headers", &e.headers)] {
            if !pairs.is_empty() {
                out.push_str(&format!("  {label}:\n"));
                for kv in pairs {
                    out.push_str(&format!("    {}: {}\n", kv.key, kv.value));
                }
            }
        }
        if !self.secrets.is_empty() {
            out.push_str(&format!(
                "  Secrets ({}):\n",
                self.secrets_in.as_deref().unwrap_or("the credential store")
            ));
            for s in &self.secrets {
                let state = match (s.set, &s.error) {
                    (Some(true), _) => "set".to_string(),
                    (Some(false), _) => format!(
                        "not set; set it with `harness9 mcp secret set {} {}`",
                        e.name, s.name
                    ),
                    (None, err) => format!(
                        "unknown ({})",
                        err.as_deref().unwrap_or("the store did not answer")
                    ),
                };
                out.push_str(&format!("    {}: {state}\n", s.name));
            }
        }
        if e.disabled {
            out.push_str("  Disabled: yes\n");
        }
        if let Some(err) = &e.error {
            out.push_str(&format!("  Error: {err}\n"));
        }
        if !self.shadows.is_empty() {
            out.push_str(&format!(
                "  Also in: {} (overridden by the {} entry)\n",
                scope_list(&self.shadows),
                e.scope
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::mask;
    use crate::config::servers::{add_server, remove_server};
    use serde_json::{json, Value};
    use std::path::Path;

    fn files(dir: &Path) -> ScopeFiles {
        std::fs::create_dir_all(dir.join("proj")).unwrap();
        ScopeFiles::within(&dir.join("proj"), &dir.join("cfg"), &dir.join("data"))
    }

    #[test]
    fn add_get_remove_across_scopes() {
        let tmp = tempfile::tempdir().unwrap();
        let f = files(tmp.path());
        // Unknown keys of an existing file survive the edit.
        std::fs::write(
            &f.project,
            r#"{"other": 1, "mcpServers": {"p": {"command": "p", "x-note": true}}}"#,
        )
        .unwrap();
        add_server(&f, Scope::User, "s", json!({"command": "user-s"})).unwrap();
        add_server(
            &f,
            Scope::Local,
            "s",
            json!({"command": "local-s", "env": {"TOKEN": "hunter2"}}),
        )
        .unwrap();
        add_server(&f, Scope::Project, "s", json!({"url": "https://h/mcp"})).unwrap();
        let doc: Value =
            serde_json::from_str(&std::fs::read_to_string(&f.project).unwrap()).unwrap();
        assert_eq!(
            doc,
            json!({"other": 1, "mcpServers": {"p": {"command": "p", "x-note": true}, "s": {"url": "https://h/mcp"}}})
        );
        assert!(f.local.starts_with(tmp.path().join("data/projects")));

        let e = add_server(&f, Scope::User, "s", json!({"command": "again"})).unwrap_err();
        assert_eq!(e.to_string(), format!("a server named \"s\" already exists in the user scope ({}); remove it first with `harness9 mcp remove s --scope user`, or pick another name", f.user.display()));
        let e = add_server(&f, Scope::User, "b", json!({"command": "x", "url": "y"})).unwrap_err();
        assert!(e.to_string().starts_with("server \"b\": has both"), "{e}");

        let d = server_details(&f, "s").unwrap();
        assert_eq!(d.entry.scope, Scope::Local);
        assert_eq!(d.shadows, vec![Scope::Project, Scope::User]);
        assert_eq!(d.entry.env[0].value, mask::MASK);
        assert!(d.to_text().contains("  Scope: local ("), "{}", d.to_text());
        assert!(!d.to_text().contains("hunter2"));

        let e = remove_server(&f, "s", None).unwrap_err();
        assert_eq!(e.to_string(), "server \"s\" is in more than one scope (local, project, user); say which with --scope local|project|user");
        assert_eq!(
            remove_server(&f, "s", Some(Scope::Local)).unwrap().0,
            Scope::Local
        );
        assert_eq!(server_details(&f, "s").unwrap().entry.scope, Scope::Project);
        remove_server(&f, "s", Some(Scope::Project)).unwrap();
        assert_eq!(remove_server(&f, "s", None).unwrap().0, Scope::User);
        let e = remove_server(&f, "s", Some(Scope::User)).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("no server named \"s\" in the user scope"),
            "{e}"
        );
        let doc: Value =
            serde_json::from_str(&std::fs::read_to_string(&f.project).unwrap()).unwrap();
        assert_eq!(
            doc,
            json!({"other": 1, "mcpServers": {"p": {"command": "p", "x-note": true}}})
        );
    }
}
