//! The values of existing entries' `${input:NAME}` references: which are set, setting and
//! removing one, keeping the answers of an import, and forgetting what a removed entry
//! leaves behind. Every call may block (the credential store).

use super::{Answers, InstallError, Installer, SecretState};
use crate::config::inputs;
use crate::config::servers::{self, ServerEditError};
use crate::config::Scope;

impl Installer {
    /// After an import was written to `scope`: keeps the values given for its secret
    /// inputs in the credential store, for each added server that uses them. Returns the
    /// notes for the user: where values were kept, and which inputs still have none.
    /// Blocking.
    pub fn keep_import_inputs(
        &self,
        plan: &crate::config::import::ImportPlan,
        scope: Scope,
        answers: &Answers,
    ) -> Vec<String> {
        let mut notes = Vec::new();
        for q in &plan.inputs {
            for server in &q.servers {
                let given = answers.get(&q.name).filter(|v| !v.is_empty());
                match given.map(|v| self.secrets.set(scope, server, &q.name, v)) {
                    Some(Ok(())) => notes.push(format!(
                        "the value of {} for \"{server}\" is kept in {}",
                        q.name,
                        self.secrets.location()
                    )),
                    Some(Err(e)) => notes.push(format!(
                        "the value of {} for \"{server}\" could not be kept ({e}); set it with `harness9 mcp secret set {server} {}`",
                        q.name, q.name
                    )),
                    None => notes.push(format!(
                        "{}{} has no value yet: set it with `harness9 mcp secret set {server} {}`",
                        q.name,
                        q.description
                            .as_deref()
                            .map(|d| format!(" ({d})"))
                            .unwrap_or_default(),
                        q.name
                    )),
                }
            }
        }
        notes
    }

    /// After an entry was removed from `scope`: forgets where it came from and the values
    /// of its inputs (`entry` as it was written). Returns what could not be forgotten.
    /// Blocking.
    pub fn forget_entry(
        &self,
        scope: Scope,
        server: &str,
        entry: &serde_json::Value,
    ) -> Vec<String> {
        let mut problems = Vec::new();
        let bundle = self
            .installed
            .get(scope, &self.project, server)
            .and_then(|p| p.bundle);
        if let Err(e) = self.installed.forget(scope, &self.project, server) {
            problems.push(e.to_string());
        }
        // A bundle's files go with its last entry.
        if let Some(dir) = bundle {
            problems.extend(self.drop_bundle_folder(&dir));
        }
        for name in inputs::entry_inputs(entry) {
            if let Err(e) = self.secrets.remove(scope, server, &name) {
                problems.push(e.to_string());
            }
        }
        problems
    }

    /// The entry of `server` in effect: its scope and the inputs it refers to.
    fn inputs_of(&self, server: &str) -> Result<(Scope, Vec<String>), InstallError> {
        let scopes = servers::scopes_with(&self.files, server)?;
        let Some(&scope) = scopes.first() else {
            return Err(InstallError::Edit(ServerEditError::NotFound {
                name: server.into(),
                scope: None,
                files: Scope::ALL
                    .iter()
                    .map(|s| self.files.path(*s).display().to_string())
                    .collect(),
            }));
        };
        let entry = servers::entry_of(&self.files, scope, server)?.unwrap_or_default();
        Ok((scope, inputs::entry_inputs(&entry).into_iter().collect()))
    }

    /// Whether each input of `server`'s entry in effect has a value (never the values).
    /// Blocking.
    pub fn secret_states(&self, server: &str) -> Result<(Scope, Vec<SecretState>), InstallError> {
        let (scope, names) = self.inputs_of(server)?;
        Ok((scope, self.secrets.states(scope, server, &names)))
    }

    /// Keeps the value of input `name` of `server`'s entry in effect (which must refer to
    /// it). Blocking.
    pub fn set_secret(&self, server: &str, name: &str, value: &str) -> Result<Scope, InstallError> {
        let (scope, names) = self.inputs_of(server)?;
        if !names.iter().any(|n| n == name) {
            return Err(InstallError::NoSuchInput {
                server: server.into(),
                name: name.into(),
                known: names,
            });
        }
        self.secrets.set(scope, server, name, value)?;
        Ok(scope)
    }

    /// Forgets the value of input `name` of `server`'s entry in effect; `true` when one
    /// was kept. Blocking.
    pub fn remove_secret(&self, server: &str, name: &str) -> Result<(Scope, bool), InstallError> {
        let (scope, _) = self.inputs_of(server)?;
        let removed = self.secrets.remove(scope, server, name)?;
        Ok((scope, removed))
    }
}
