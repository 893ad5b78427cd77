//! Installing servers: a config-level service that turns a registry record (and, later, a
//! bundle's manifest) into an install plan — the exact `.mcp.json` entry, the values to
//! ask, the secrets to keep — that front ends show, fill in and commit.
//!
//! [`Installer`] is the one façade:
//! - [`Installer::search`] asks the configured registries ([`sources`], [`registry`]);
//! - [`Installer::plan`] makes the plan of one server version ([`choose`] picks the package
//!   or remote and the pinned command, [`plan`] holds it);
//! - [`InstallPlan::fill`] puts the user's values in; [`Installer::commit`] writes exactly
//!   the entry the user saw (its digest), keeps secrets in the credential store
//!   ([`secrets`]), records the entry as approved as shown when its scope needs approval,
//!   and records where it came from ([`installed`], harness9's own data);
//! - [`Installer::outdated`] and [`Installer::plan_update`] compare with the registries;
//! - [`Installer::secret_states`], [`Installer::set_secret`], [`Installer::remove_secret`]
//!   manage an entry's `${input:NAME}` values.
//!
//! It reads and writes config, user data and the credential store; it starts nothing (the
//! manager puts an entry's secrets in when the server starts).

pub mod cache;
pub mod choose;
pub mod installed;
pub mod plan;
pub mod record;
pub mod registry;
pub mod secrets;
pub mod sources;
pub mod template;

pub use choose::{Choice, PackageKind, PlanVariable, VariableKind};
pub use installed::{InstalledStore, Provenance};
pub use plan::{Answers, InstallPlan, PlanSource, Replaced};
pub use registry::{RegistryClient, RegistryError, RegistryProblem, SearchHit, SearchResults};
pub use secrets::{SecretError, SecretState, ServerSecrets};
pub use sources::SourceError;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;

use crate::config::inputs;
use crate::config::servers::{self, ServerEditError};
use crate::config::{Scope, ScopeFiles};
use crate::mcp::auth::CredentialStore;
use crate::trust::ApprovalStore;

/// Why an install, an update or a change of secrets did not happen. Nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error(transparent)]
    Source(#[from] SourceError),
    #[error(transparent)]
    Registry(#[from] RegistryError),
    #[error("\"{name}\" cannot be installed safely: {reason}")]
    Refused { name: String, reason: String },
    #[error("\"{name}\" needs {needs} on the servers' PATH; install it, or choose another way with --package TYPE or --remote")]
    NoRuntime { name: String, needs: String },
    #[error("\"{name}\" has no {kind} package (it has: {available})")]
    NoSuchPackage {
        name: String,
        kind: String,
        available: String,
    },
    #[error("\"{name}\" has no remote (it has: {available})")]
    NoRemote { name: String, available: String },
    #[error("\"{name}\" has nothing harness9 can run (it has: {available})")]
    Nothing { name: String, available: String },
    #[error("bundles: not yet — installing {what} is not supported by this version of harness9")]
    BundlesNotYet { what: String },
    #[error("these values are required: {}; give them with -e NAME=VALUE (or answer when asked)", .names.join(", "))]
    Missing { names: Vec<String> },
    #[error("the value of \"{name}\" cannot be used: {reason}")]
    BadValue { name: String, reason: String },
    #[error("\"{name}\" is not a value this server asks for{}", known_hint(.known))]
    UnknownVariable { name: String, known: Vec<String> },
    #[error(
        "the entry to write changed since it was shown; nothing was written. Look at it again"
    )]
    Changed,
    #[error("server \"{server}\" was not installed from a registry; nothing to update")]
    NotInstalled { server: String },
    #[error("server \"{server}\" has no input \"{name}\" (its entry refers to: {})", if .known.is_empty() { "none".to_string() } else { .known.join(", ") })]
    NoSuchInput {
        server: String,
        name: String,
        known: Vec<String>,
    },
    #[error(transparent)]
    Edit(#[from] ServerEditError),
    #[error(transparent)]
    Secret(#[from] SecretError),
}

fn known_hint(known: &[String]) -> String {
    if known.is_empty() {
        " (it asks for none)".into()
    } else {
        format!(" (it asks for: {})", known.join(", "))
    }
}

impl InstallError {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        match self {
            InstallError::Source(e) => e.code(),
            InstallError::Registry(e) => e.code(),
            InstallError::Refused { .. } => "refused-record",
            InstallError::NoRuntime { .. } => "no-runtime",
            InstallError::NoSuchPackage { .. } => "no-such-package",
            InstallError::NoRemote { .. } => "no-remote",
            InstallError::Nothing { .. } => "nothing-to-install",
            InstallError::BundlesNotYet { .. } => "bundles-not-supported",
            InstallError::Missing { .. } => "missing-values",
            InstallError::BadValue { .. } => "invalid-value",
            InstallError::UnknownVariable { .. } => "unknown-variable",
            InstallError::Changed => "changed-since-shown",
            InstallError::NotInstalled { .. } => "not-installed",
            InstallError::NoSuchInput { .. } => "unknown-input",
            InstallError::Edit(e) => e.code(),
            InstallError::Secret(e) => e.code(),
        }
    }

    /// Whether the request was wrong (bad arguments, unknown names) rather than something
    /// failing: front ends map it to their usage exit code.
    pub fn is_usage(&self) -> bool {
        match self {
            InstallError::Source(_)
            | InstallError::NoSuchPackage { .. }
            | InstallError::NoRemote { .. }
            | InstallError::Missing { .. }
            | InstallError::BadValue { .. }
            | InstallError::UnknownVariable { .. }
            | InstallError::NotInstalled { .. }
            | InstallError::NoSuchInput { .. } => true,
            InstallError::Edit(e) => !matches!(
                e,
                ServerEditError::Save(_)
                    | ServerEditError::Unreadable { .. }
                    | ServerEditError::Changed { .. }
            ),
            InstallError::Secret(e) => !matches!(e, SecretError::Store(_)),
            InstallError::Registry(RegistryError::NotFound { .. })
            | InstallError::Registry(RegistryError::NoSuchVersion { .. }) => true,
            InstallError::Registry(_)
            | InstallError::Refused { .. }
            | InstallError::NoRuntime { .. }
            | InstallError::Nothing { .. }
            | InstallError::BundlesNotYet { .. }
            | InstallError::Changed => false,
        }
    }
}

/// What to install from a registry.
#[derive(Debug, Clone)]
pub struct RegistryInstall {
    /// The server's name in the registry.
    pub name: String,
    /// `None`: the latest.
    pub version: Option<String>,
    /// Its name in harness9 (default: the last part of the registry name).
    pub local_name: Option<String>,
    pub scope: Scope,
    pub choice: Choice,
    /// The registries to ask, in order.
    pub registries: Vec<String>,
}

/// What a commit did.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Installed {
    pub name: String,
    pub scope: Scope,
    pub path: String,
    #[cfg_attr(feature = "ts", ts(type = "unknown"))]
    pub entry: serde_json::Value,
    pub target: String,
    /// Secret values kept, by name (never the values).
    pub secrets: Vec<String>,
    /// Where they are kept, in words.
    pub secrets_in: String,
    /// Whether it replaced an entry (an update).
    pub replaced: bool,
    /// What went wrong after the entry was written (the approval or the record of where it
    /// came from could not be kept).
    pub warnings: Vec<String>,
    /// Precedence between scopes, as for `mcp add`.
    pub notes: Vec<String>,
}

/// An installed server with a newer version in its registry.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Outdated {
    /// Its name in harness9.
    pub server: String,
    pub scope: Scope,
    pub registry: String,
    /// Its name in the registry.
    pub name: String,
    pub installed: String,
    pub latest: String,
}

/// What `outdated` found, and the registries it could not ask.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct OutdatedReport {
    pub outdated: Vec<Outdated>,
    /// Installed servers checked.
    pub checked: u32,
    pub problems: Vec<RegistryProblem>,
    pub notes: Vec<String>,
}

/// The PATH servers are started with: the login shell's when harness9 runs outside a
/// terminal (as the manager does), else this process's.
pub fn servers_path() -> Option<OsString> {
    let own = std::env::var_os("PATH");
    if crate::shell_env::outside_terminal() {
        crate::shell_env::login_path().or(own)
    } else {
        own
    }
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Whether version `a` is newer than `b` (semantic versions; other text compared by its
/// numbers, then as text).
pub fn newer(a: &str, b: &str) -> bool {
    fn split(v: &str) -> (Vec<u64>, Option<&str>) {
        let v = v.trim_start_matches('v');
        let (core, pre) = match v.split_once('-') {
            Some((c, p)) => (c, Some(p)),
            None => (v, None),
        };
        let core = core.split('+').next().unwrap_or(core);
        (
            core.split('.')
                .map(|p| p.parse::<u64>().unwrap_or(0))
                .collect(),
            pre,
        )
    }
    if a == b {
        return false;
    }
    let ((ca, pa), (cb, pb)) = (split(a), split(b));
    let n = ca.len().max(cb.len());
    for i in 0..n {
        let (x, y) = (
            ca.get(i).copied().unwrap_or(0),
            cb.get(i).copied().unwrap_or(0),
        );
        if x != y {
            return x > y;
        }
    }
    match (pa, pb) {
        (None, Some(_)) => true,
        (Some(_), None) | (None, None) => false,
        (Some(x), Some(y)) => x > y,
    }
}

/// The service: one project's scope files, its approvals, the credential store, the record
/// of installs and the registry client.
#[derive(Debug, Clone)]
pub struct Installer {
    project: PathBuf,
    files: ScopeFiles,
    approvals: ApprovalStore,
    secrets: ServerSecrets,
    installed: InstalledStore,
    client: RegistryClient,
    /// The servers' PATH, where runtimes are looked for ([`servers_path`] when first
    /// needed: it may ask the login shell).
    path: Arc<std::sync::OnceLock<Option<OsString>>>,
}

impl Installer {
    /// For `project` with its scope files, approvals and credential store; the record of
    /// installs and the registry cache in the user's data folder; the servers' PATH.
    pub fn new(
        project: &Path,
        files: ScopeFiles,
        approvals: ApprovalStore,
        store: Arc<CredentialStore>,
    ) -> Installer {
        Installer {
            project: project.to_path_buf(),
            files,
            approvals,
            secrets: ServerSecrets::new(store, project),
            installed: InstalledStore::for_user(),
            client: RegistryClient::for_user(),
            path: Arc::default(),
        }
    }

    /// The user's stores for `project` (opens the credential store: may wait briefly for
    /// the keychain).
    pub fn for_project(project: &Path) -> Installer {
        Installer::new(
            project,
            ScopeFiles::of(project),
            ApprovalStore::default_location(),
            Arc::new(CredentialStore::open(&crate::config::scopes::data_dir())),
        )
    }

    /// Looks for runtimes on `path` instead of the servers' PATH.
    pub fn with_path(mut self, path: Option<OsString>) -> Installer {
        self.path = Arc::new(std::sync::OnceLock::from(path));
        self
    }

    fn path(&self) -> Option<OsString> {
        self.path.get_or_init(servers_path).clone()
    }

    /// Keeps the record of installs and the registry cache in `dir`.
    pub fn with_data_dir(mut self, dir: &Path) -> Installer {
        self.installed = InstalledStore::at(dir.join(installed::INSTALLED_FILE));
        self.client = RegistryClient::new(cache::Cache::at(dir.join(cache::CACHE_DIR)));
        self
    }

    pub fn secrets(&self) -> &ServerSecrets {
        &self.secrets
    }

    pub fn installed(&self) -> &InstalledStore {
        &self.installed
    }

    /// Searches `registries` (in order; one hit per name, the first's winning).
    pub async fn search(
        &self,
        registries: &[String],
        query: &str,
        limit: Option<usize>,
    ) -> SearchResults {
        self.client.search(registries, query, limit).await
    }

    /// The versions of `name` in `registry`, newest first.
    pub async fn versions(&self, registry: &str, name: &str) -> Result<Vec<String>, InstallError> {
        Ok(self
            .client
            .versions(registry, name)
            .await?
            .into_iter()
            .map(|l| l.server.version)
            .collect())
    }

    /// The plan of one registry server version. Asks the registries; reads the scope's file
    /// and the credential store (off the runtime threads).
    pub async fn plan(&self, req: &RegistryInstall) -> Result<InstallPlan, InstallError> {
        let found = self
            .client
            .record(&req.registries, &req.name, req.version.as_deref())
            .await?;
        let record = &found.listed.server;
        let path = self.path();
        let way = choose::choose(record, req.choice, path.as_deref())?;
        let built = choose::build(record, way, path.as_deref())?;
        let name = req
            .local_name
            .clone()
            .unwrap_or_else(|| plan::local_name(&record.name));
        servers::check_name(&name)?;
        let (me, scope, record_name) = (self.clone(), req.scope, record.name.clone());
        let secret_names: Vec<String> = built
            .variables
            .iter()
            .filter(|v| v.secret)
            .map(|v| v.name.clone())
            .collect();
        let name2 = name.clone();
        let (existing, provenance, kept) = tokio::task::spawn_blocking(move || {
            let existing = servers::entry_of(&me.files, scope, &name2)?;
            let provenance = me.installed.get(scope, &me.project, &name2);
            let kept: Vec<String> = me
                .secrets
                .states(scope, &name2, &secret_names)
                .into_iter()
                .filter(|s| s.set == Some(true))
                .map(|s| s.name)
                .collect();
            Ok::<_, InstallError>((existing, provenance, kept))
        })
        .await
        .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()))?;
        let replaces = match existing {
            None => None,
            Some(entry) => match &provenance {
                Some(p) if p.name == record_name => Some(Replaced {
                    target: plan::target_of(&name, &entry),
                    entry,
                    version: Some(p.version.clone()),
                }),
                _ => {
                    return Err(InstallError::Edit(ServerEditError::Exists {
                        name: name.clone(),
                        scope,
                        path: self.files.path(scope).display().to_string(),
                    }))
                }
            },
        };
        let mut notes: Vec<String> = found.note.into_iter().collect();
        if let Some(s) = &found.listed.status {
            if s != "active" {
                notes.push(format!("the registry marks this server {s}"));
            }
        }
        // Offer again what was given at the last install.
        let values = provenance
            .map(|p| p.values)
            .unwrap_or_default()
            .into_iter()
            .filter(|(k, _)| built.variables.iter().any(|v| &v.name == k && !v.secret))
            .collect();
        let mut plan = InstallPlan {
            source: PlanSource {
                registry: found.registry.clone(),
                name: record.name.clone(),
                version: record.version.clone(),
                title: record.title.clone(),
                description: record.description.clone(),
                repository: record.repository.as_ref().map(|r| r.url.clone()),
                website: record.website_url.clone(),
                package: built.package,
            },
            name,
            scope,
            path: self.files.path(scope).display().to_string(),
            entry: serde_json::Value::Null,
            target: String::new(),
            variables: built.variables,
            values,
            kept_secrets: kept,
            replaces,
            warnings: built.warnings,
            notes,
            digest: String::new(),
            template: built.template,
            secrets: Default::default(),
        };
        plan.render();
        Ok(plan)
    }

    /// Writes a plan with `answers` in, when its digest is `shown` (what the user saw):
    /// secrets to the credential store, the entry to its scope's file (replacing only the
    /// entry the plan replaces, as it was), the approval of the entry as written when its
    /// scope needs one, and where it came from. Blocking.
    pub fn commit(
        &self,
        plan: &InstallPlan,
        answers: &Answers,
        shown: &str,
    ) -> Result<Installed, InstallError> {
        let filled = plan.fill(answers)?;
        if filled.digest != shown {
            return Err(InstallError::Changed);
        }
        // The file must still hold what the plan replaces before anything is kept.
        let expected = filled.replaces.as_ref().map(|r| &r.entry);
        let now = servers::entry_of(&self.files, filled.scope, &filled.name)?;
        match (now.as_ref(), expected) {
            (None, None) => {}
            (Some(a), Some(b)) if a == b => {}
            (Some(_), None) => {
                return Err(InstallError::Edit(ServerEditError::Exists {
                    name: filled.name.clone(),
                    scope: filled.scope,
                    path: self.files.path(filled.scope).display().to_string(),
                }))
            }
            (None, Some(_)) | (Some(_), Some(_)) => return Err(InstallError::Changed),
        }
        let mut kept = Vec::new();
        for (k, v) in &filled.secrets.0 {
            self.secrets.set(filled.scope, &filled.name, k, v)?;
            kept.push(k.clone());
        }
        let written = servers::put_server(
            &self.files,
            filled.scope,
            &filled.name,
            filled.entry.clone(),
            expected,
        );
        let path = match written {
            Ok(p) => p,
            Err(e) => {
                // A new entry that was not written leaves no values behind.
                if expected.is_none() {
                    for k in &kept {
                        let _ = self.secrets.remove(filled.scope, &filled.name, k);
                    }
                }
                return Err(e.into());
            }
        };
        let mut warnings = Vec::new();
        if filled.scope.needs_approval() {
            let env = |k: &str| std::env::var(k).ok();
            if let Ok(cfg) = crate::config::parse_entry(&filled.name, &filled.entry, &env) {
                let fp = cfg.fingerprint(&self.project);
                if let Err(e) = self
                    .approvals
                    .approve(&self.project, &[(filled.name.clone(), fp)])
                {
                    warnings.push(format!(
                        "the entry was written, but its approval could not be recorded ({e}); you will be asked when it starts"
                    ));
                }
            }
        }
        let from = Provenance {
            registry: filled.source.registry.clone(),
            name: filled.source.name.clone(),
            version: filled.source.version.clone(),
            package: filled.source.package.map(|k| k.word().to_string()),
            values: filled.values.clone(),
            installed_at: now_secs(),
        };
        if let Err(e) = self
            .installed
            .record(filled.scope, &self.project, &filled.name, from)
        {
            warnings.push(format!(
                "the entry was written, but where it came from could not be recorded ({e}); `mcp outdated` will not list it"
            ));
        }
        Ok(Installed {
            notes: self.precedence(&filled.name, filled.scope),
            name: filled.name,
            scope: filled.scope,
            path: path.display().to_string(),
            entry: filled.entry,
            target: filled.target,
            secrets: kept,
            secrets_in: self.secrets.location(),
            replaced: filled.replaces.is_some(),
            warnings,
        })
    }

    /// How an entry of `name` in `scope` stands with the other scopes.
    fn precedence(&self, name: &str, scope: Scope) -> Vec<String> {
        let Ok(found) = servers::scopes_with(&self.files, name) else {
            return Vec::new();
        };
        match found.first() {
            Some(top) if *top != scope => vec![format!(
                "the {top} entry of \"{name}\" takes precedence over this one"
            )],
            _ if found.len() > 1 => {
                let lower: Vec<&str> = found[1..].iter().map(|s| s.word()).collect();
                vec![format!(
                    "it takes precedence over the {} entry of \"{name}\"",
                    lower.join(" and ")
                )]
            }
            _ => Vec::new(),
        }
    }

    /// The installed servers of this project whose registry has a newer version.
    pub async fn outdated(&self) -> OutdatedReport {
        let me = self.clone();
        let entries = tokio::task::spawn_blocking(move || {
            me.installed
                .of_project(&me.project)
                .into_iter()
                .filter(|e| {
                    servers::entry_of(&me.files, e.scope, &e.server)
                        .ok()
                        .flatten()
                        .is_some()
                })
                .collect::<Vec<_>>()
        })
        .await
        .unwrap_or_default();
        let answers = futures::future::join_all(
            entries
                .iter()
                .map(|e| self.client.record_in(&e.from.registry, &e.from.name, None)),
        )
        .await;
        let mut report = OutdatedReport {
            checked: entries.len() as u32,
            ..OutdatedReport::default()
        };
        for (e, answer) in entries.into_iter().zip(answers) {
            match answer {
                Ok(Some(found)) => {
                    report.notes.extend(found.note);
                    let latest = found.listed.server.version;
                    if newer(&latest, &e.from.version) {
                        report.outdated.push(Outdated {
                            server: e.server,
                            scope: e.scope,
                            registry: e.from.registry,
                            name: e.from.name,
                            installed: e.from.version,
                            latest,
                        });
                    }
                }
                Ok(None) => report.problems.push(RegistryProblem {
                    registry: e.from.registry.clone(),
                    code: "unknown-registry-server".into(),
                    message: format!(
                        "\"{}\" (server \"{}\") is no longer in {}",
                        e.from.name, e.server, e.from.registry
                    ),
                }),
                Err(err) => report.problems.push(RegistryProblem {
                    registry: e.from.registry.clone(),
                    code: err.code().into(),
                    message: err.to_string(),
                }),
            }
        }
        report.notes.dedup();
        report
    }

    /// The plan that updates installed server `server` to its registry's latest version
    /// (same registry, package kind, name and scope; the values given before offered
    /// again).
    pub async fn plan_update(
        &self,
        server: &str,
        scope: Option<Scope>,
    ) -> Result<InstallPlan, InstallError> {
        let me = self.clone();
        let server_owned = server.to_string();
        let found = tokio::task::spawn_blocking(move || {
            let in_effect = servers::scopes_with(&me.files, &server_owned)?;
            let scope = match scope {
                Some(s) => s,
                None => match in_effect.first() {
                    Some(s) => *s,
                    None => {
                        return Err(InstallError::NotInstalled {
                            server: server_owned,
                        })
                    }
                },
            };
            let from = me
                .installed
                .get(scope, &me.project, &server_owned)
                .ok_or_else(|| InstallError::NotInstalled {
                    server: server_owned.clone(),
                })?;
            Ok((scope, from))
        })
        .await
        .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()))?;
        let (scope, from) = found;
        let choice = match from.package.as_deref().and_then(PackageKind::of) {
            Some(k) => Choice::Package(k),
            None => Choice::Remote,
        };
        self.plan(&RegistryInstall {
            name: from.name,
            version: None,
            local_name: Some(server.to_string()),
            scope,
            choice,
            registries: vec![from.registry],
        })
        .await
    }

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
        if let Err(e) = self.installed.forget(scope, &self.project, server) {
            problems.push(e.to_string());
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

#[cfg(test)]
mod tests;
