//! Installing servers: a config-level service that turns a registry record or a bundle's
//! manifest ([`bundle`]) into an install plan — the exact `.mcp.json` entry, the values to
//! ask, the secrets to keep — that front ends show, fill in and commit.
//!
//! [`Installer`] is the one façade:
//! - [`Installer::search`] asks the configured registries ([`sources`], [`registry`]);
//! - [`Installer::plan_bundle`] makes the plan of a bundle file ([`bundle`]);
//! - [`Installer::plan`] makes the plan of one server version ([`choose`] picks the package
//!   or remote, [`build`] the pinned command and the values to ask, [`plan`] holds it);
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

pub mod build;
pub mod bundle;
pub mod cache;
pub mod choose;
mod entries;
mod error;
mod from_bundle;
pub mod installed;
pub mod kind;
mod outdated;
pub mod plan;
pub mod record;
pub mod registry;
pub mod secrets;
pub mod sources;
pub mod syntax;
pub mod template;

pub use build::{PlanVariable, VariableKind};
pub use bundle::{BundleInfo, Compatibility, DeclaredItem, RuntimeCheck};
pub use choose::{Choice, PackageKind};
pub use error::InstallError;
pub use from_bundle::BundleInstall;
pub use installed::{InstalledStore, Provenance};
pub use outdated::{newer, Outdated, OutdatedReport};
pub use plan::{Answers, InstallPlan, PlanSource, Replaced};
pub use registry::{RegistryClient, RegistryError, RegistryProblem, SearchHit, SearchResults};
pub use secrets::{SecretError, SecretState, ServerSecrets};
pub use sources::SourceError;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;
use serde_json::Value;

use crate::config::servers::{self, ServerEditError};
use crate::config::{Scope, ScopeFiles};
use crate::mcp::auth::CredentialStore;
use crate::trust::ApprovalStore;

/// What `install ARG` names: a bundle file, or a server of a registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InstallTarget {
    /// A path ending in `.mcpb`, or an existing file.
    Bundle(PathBuf),
    /// `NAME` or `NAME@VERSION`.
    Registry {
        name: String,
        version: Option<String>,
    },
}

impl InstallTarget {
    /// Reads `arg` as a bundle when it ends in `.mcpb` or names an existing file, else as
    /// a registry server name with an optional `@VERSION`.
    pub fn parse(arg: &str) -> InstallTarget {
        if arg.ends_with(".mcpb") || Path::new(arg).is_file() {
            return InstallTarget::Bundle(PathBuf::from(arg));
        }
        match arg.split_once('@') {
            Some((n, v)) if !n.is_empty() && !v.is_empty() => InstallTarget::Registry {
                name: n.to_string(),
                version: Some(v.to_string()),
            },
            _ => InstallTarget::Registry {
                name: arg.to_string(),
                version: None,
            },
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
    /// Where bundles are unpacked, and what a bundle may be.
    bundles: PathBuf,
    bundle_limits: bundle::archive::Limits,
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
            bundles: crate::config::scopes::data_dir().join(bundle::BUNDLES_DIR),
            bundle_limits: bundle::archive::Limits::default(),
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
        self.bundles = dir.join(bundle::BUNDLES_DIR);
        self
    }

    /// Refuses bundles beyond `limits` (tests lower them).
    pub fn with_bundle_limits(mut self, limits: bundle::archive::Limits) -> Installer {
        self.bundle_limits = limits;
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

    /// What `scope` holds under `name` now: its entry, where it was installed from, and
    /// which of `variables`' secrets have a value kept (read off the runtime threads: the
    /// scope's file and the credential store).
    async fn now_under(
        &self,
        scope: Scope,
        name: &str,
        variables: &[PlanVariable],
    ) -> Result<(Option<Value>, Option<Provenance>, Vec<String>), InstallError> {
        let me = self.clone();
        let name = name.to_string();
        let secret_names: Vec<String> = variables
            .iter()
            .filter(|v| v.secret)
            .map(|v| v.name.clone())
            .collect();
        tokio::task::spawn_blocking(move || {
            let existing = servers::entry_of(&me.files, scope, &name)?;
            let provenance = me.installed.get(scope, &me.project, &name);
            let kept: Vec<String> = me
                .secrets
                .states(scope, &name, &secret_names)
                .into_iter()
                .filter(|s| s.set == Some(true))
                .map(|s| s.name)
                .collect();
            Ok((existing, provenance, kept))
        })
        .await
        .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()))
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
        let built = build::build(record, way, path.as_deref())?;
        let name = req
            .local_name
            .clone()
            .unwrap_or_else(|| plan::local_name(&record.name));
        let mut notes: Vec<String> = found.note.into_iter().collect();
        if let Some(s) = &found.listed.status {
            if s != "active" {
                notes.push(format!("the registry marks this server {s}"));
            }
        }
        let record_name = record.name.clone();
        self.finish_plan(
            Draft {
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
                scope: req.scope,
                template: built.template,
                variables: built.variables,
                warnings: built.warnings,
                notes,
                bundle: None,
            },
            |p| p.name == record_name,
        )
        .await
    }

    /// The plan of a draft, checked against what its scope holds under its name now: an
    /// entry installed from the same source (`same_source`) is replaced, any other entry
    /// is refused; the values given at the last install are offered again.
    async fn finish_plan(
        &self,
        d: Draft,
        same_source: impl Fn(&Provenance) -> bool,
    ) -> Result<InstallPlan, InstallError> {
        servers::check_name(&d.name)?;
        let (existing, provenance, kept) = self.now_under(d.scope, &d.name, &d.variables).await?;
        let replaces = match existing {
            None => None,
            Some(entry) => match &provenance {
                Some(p) if same_source(p) => Some(Replaced {
                    target: plan::target_of(&d.name, &entry),
                    entry,
                    version: Some(p.version.clone()),
                }),
                _ => {
                    return Err(InstallError::Edit(ServerEditError::Exists {
                        name: d.name,
                        scope: d.scope,
                        path: self.files.path(d.scope).display().to_string(),
                    }))
                }
            },
        };
        // Offer again what was given at the last install.
        let values = provenance
            .map(|p| p.values)
            .unwrap_or_default()
            .into_iter()
            .filter(|(k, _)| d.variables.iter().any(|v| &v.name == k && !v.secret))
            .collect();
        let mut plan = InstallPlan {
            source: d.source,
            path: self.files.path(d.scope).display().to_string(),
            name: d.name,
            scope: d.scope,
            entry: serde_json::Value::Null,
            target: String::new(),
            variables: d.variables,
            values,
            kept_secrets: kept,
            replaces,
            warnings: d.warnings,
            notes: d.notes,
            digest: String::new(),
            template: d.template,
            bundle: d.bundle,
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
        // A bundle's files are in place before the entry that runs them.
        let new_folder = match &filled.bundle {
            Some(b) => self.unpack_bundle(b)?,
            None => false,
        };
        let drop_new_folder = || {
            if let (true, Some(b)) = (new_folder, &filled.bundle) {
                let _ = std::fs::remove_dir_all(&b.dir);
            }
        };
        let mut kept = Vec::new();
        for (k, v) in &filled.secrets.0 {
            if let Err(e) = self.secrets.set(filled.scope, &filled.name, k, v) {
                drop_new_folder();
                return Err(e.into());
            }
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
                drop_new_folder();
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
        // The folder of the bundle this entry ran before (an update to another version).
        let before = self
            .installed
            .get(filled.scope, &self.project, &filled.name)
            .and_then(|p| p.bundle);
        let from = Provenance {
            registry: filled.source.registry.clone(),
            name: filled.source.name.clone(),
            version: filled.source.version.clone(),
            package: filled.source.package.map(|k| k.word().to_string()),
            values: filled.values.clone(),
            installed_at: now_secs(),
            bundle: filled.bundle.as_ref().map(|b| b.dir.clone()),
        };
        if let Err(e) = self
            .installed
            .record(filled.scope, &self.project, &filled.name, from)
        {
            warnings.push(format!(
                "the entry was written, but where it came from could not be recorded ({e}); `mcp outdated` will not list it"
            ));
        }
        let now = filled.bundle.as_ref().map(|b| b.dir.as_str());
        if let Some(old) = before.filter(|o| Some(o.as_str()) != now) {
            warnings.extend(self.drop_bundle_folder(&old));
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
}

/// What a plan is made of before it is checked against its scope
/// ([`Installer::finish_plan`]).
struct Draft {
    source: PlanSource,
    name: String,
    scope: Scope,
    template: template::Template,
    variables: Vec<PlanVariable>,
    warnings: Vec<String>,
    notes: Vec<String>,
    bundle: Option<BundleInfo>,
}

#[cfg(test)]
mod tests;
