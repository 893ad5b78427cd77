//! Installed servers against their registries: which have a newer version, and the plan
//! that updates one (same registry, package kind, name, scope and values; the old and new
//! command shown, confirmed before it is written).

use serde::Serialize;

use super::{
    Choice, InstallError, InstallPlan, Installer, PackageKind, RegistryInstall, RegistryProblem,
};
use crate::config::servers;
use crate::config::Scope;

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

impl Installer {
    /// The installed servers of this project whose registry has a newer version.
    pub async fn outdated(&self) -> OutdatedReport {
        let me = self.clone();
        let entries = tokio::task::spawn_blocking(move || {
            me.installed
                .of_project(&me.project)
                .into_iter()
                // A bundle came from a file, not a registry.
                .filter(|e| e.from.bundle.is_none())
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
                // A bundle is updated by installing its newer file.
                .filter(|p| p.bundle.is_none())
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
}
