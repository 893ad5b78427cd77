//! Installing servers and their secrets, for front ends: one call each, delegated to the
//! install service ([`crate::install::Installer`]). Calls that read or write files or the
//! credential store run on the blocking pool. A commit reloads the configuration, and a
//! change of an entry's secret restarts that server when it is configured, so what was
//! written is used at once.

use std::collections::BTreeMap;

use super::Harness;
use crate::config::Scope;
use crate::install::{
    sources, BundleInstall, Choice, InstallError, InstallPlan, Installed, Installer,
    OutdatedReport, RegistryInstall, SearchResults, SecretState,
};

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(f)
        .await
        .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()))
}

/// What a front end asks to install from a registry.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct InstallRequest {
    /// The server's name in the registry.
    pub name: String,
    /// `None`: the latest version.
    pub version: Option<String>,
    /// Its name in harness9 (default: the last part of the registry name).
    pub local_name: Option<String>,
    /// Default: local.
    pub scope: Option<Scope>,
    #[serde(default)]
    pub choice: Choice,
    /// Ask only this registry (default: the configured ones).
    pub registry: Option<String>,
}

/// What a front end asks to install from a bundle file (`.mcpb`).
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct BundleRequest {
    /// The bundle file (picked, dropped on the window, or opened with the app).
    pub path: String,
    /// Its name in harness9 (default: the bundle's name).
    pub local_name: Option<String>,
    /// User (default) or local; the project scope is refused.
    pub scope: Option<Scope>,
}

impl Harness {
    /// The install service of this project.
    pub fn installer(&self) -> &Installer {
        &self.installer
    }

    /// Searches the configured registries (or only `registry`).
    pub async fn search_servers(
        &self,
        query: &str,
        limit: Option<usize>,
        registry: Option<&str>,
    ) -> Result<SearchResults, InstallError> {
        let registries = sources::registries(registry)?;
        Ok(self.installer.search(&registries, query, limit).await)
    }

    /// The plan of an install: show it, collect values ([`InstallPlan::fill`]), then
    /// [`Harness::commit_install`] with the digest shown.
    pub async fn plan_install(&self, req: InstallRequest) -> Result<InstallPlan, InstallError> {
        let registries = sources::registries(req.registry.as_deref())?;
        self.installer
            .plan(&RegistryInstall {
                name: req.name,
                version: req.version,
                local_name: req.local_name,
                scope: req.scope.unwrap_or(Scope::Local),
                choice: req.choice,
                registries,
            })
            .await
    }

    /// The plan of installing a bundle file: what it is (`plan.bundle`: author, declared
    /// tools and prompts, compatibility, signed or not), the entry that runs it and the
    /// values it asks for (`format` `directory`/`file`: a path to pick). Nothing is
    /// written; [`Harness::commit_install`] with the digest shown unpacks it into the
    /// user's data folder and writes the entry.
    pub async fn plan_bundle_install(
        &self,
        req: BundleRequest,
    ) -> Result<InstallPlan, InstallError> {
        self.installer
            .plan_bundle(&BundleInstall {
                path: req.path.into(),
                local_name: req.local_name,
                scope: req.scope.unwrap_or(Scope::User),
            })
            .await
    }

    /// The plan that updates an installed server to its registry's latest version.
    pub async fn plan_update(&self, server: &str) -> Result<InstallPlan, InstallError> {
        self.installer.plan_update(server, None).await
    }

    /// Writes a plan (of a registry server or a bundle) with `answers`, when `shown` is
    /// the digest of what the user saw, and applies it (the new or updated server starts).
    pub async fn commit_install(
        &self,
        plan: InstallPlan,
        answers: BTreeMap<String, String>,
        shown: String,
    ) -> Result<Installed, InstallError> {
        let installer = self.installer.clone();
        let done = blocking(move || installer.commit(&plan, &answers, &shown)).await?;
        self.reload().await;
        Ok(done)
    }

    /// Installed servers with a newer version in their registry.
    pub async fn outdated_servers(&self) -> OutdatedReport {
        self.installer.outdated().await
    }

    /// Whether each `${input:NAME}` of `server`'s entry has a value (never the values).
    pub async fn server_secrets(
        &self,
        server: &str,
    ) -> Result<(Scope, Vec<SecretState>), InstallError> {
        let (installer, server) = (self.installer.clone(), server.to_string());
        blocking(move || installer.secret_states(&server)).await
    }

    /// Keeps the value of input `name` of `server`'s entry, and restarts the server when
    /// it is configured here.
    pub async fn set_server_secret(
        &self,
        server: &str,
        name: &str,
        value: String,
    ) -> Result<Scope, InstallError> {
        let (installer, s, n) = (self.installer.clone(), server.to_string(), name.to_string());
        let scope = blocking(move || installer.set_secret(&s, &n, &value)).await?;
        self.restart_if_configured(server).await;
        Ok(scope)
    }

    /// Forgets the value of input `name` of `server`'s entry; `true` when one was kept.
    pub async fn remove_server_secret(
        &self,
        server: &str,
        name: &str,
    ) -> Result<bool, InstallError> {
        let (installer, s, n) = (self.installer.clone(), server.to_string(), name.to_string());
        let (_, removed) = blocking(move || installer.remove_secret(&s, &n)).await?;
        if removed {
            self.restart_if_configured(server).await;
        }
        Ok(removed)
    }

    async fn restart_if_configured(&self, server: &str) {
        if self.manager.entry(server).is_some() {
            self.manager.restart(server).await;
        }
    }
}
