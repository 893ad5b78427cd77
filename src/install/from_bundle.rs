//! The install service's part for bundles: the plan of a bundle file, its unpacking at
//! commit, and the removal of its folder with its last entry (see [`super::bundle`]).

use std::path::{Path, PathBuf};

use super::bundle::{archive, compat, config, manifest, BundleInfo, DeclaredItem};
use super::bundle::{Compatibility, RuntimeCheck};
use super::plan::{self, InstallPlan, PlanSource};
use super::{Draft, InstallError, Installer, PackageKind};
use crate::config::Scope;

/// What to install from a bundle file.
#[derive(Debug, Clone)]
pub struct BundleInstall {
    pub path: PathBuf,
    /// Its name in harness9 (default: the bundle's name, cleaned).
    pub local_name: Option<String>,
    /// User or local.
    pub scope: Scope,
}

fn declared(list: &[manifest::Declared]) -> Vec<DeclaredItem> {
    list.iter()
        .map(|d| DeclaredItem {
            name: d.name.clone(),
            description: d
                .description
                .as_deref()
                .map(|s| crate::truncate::prefix(s, 1024).to_string()),
        })
        .collect()
}

/// What the blocking part of planning found.
struct Read {
    bundle: archive::Bundle,
    scanned: archive::Scanned,
    manifest: manifest::Manifest,
    fields: Vec<manifest::Field>,
}

fn read_bundle(path: &Path, limits: &archive::Limits) -> Result<Read, String> {
    let bundle = archive::read(path, limits)?;
    let scanned = archive::scan(&bundle, limits)?;
    let manifest = manifest::parse(&scanned.manifest)?;
    let fields = manifest.fields()?;
    Ok(Read {
        bundle,
        scanned,
        manifest,
        fields,
    })
}

impl Installer {
    /// The folder bundles are unpacked into.
    pub fn bundles_dir(&self) -> &Path {
        &self.bundles
    }

    /// The plan of installing a bundle file (see the module's docs). Reads the file on the
    /// blocking pool and asks the runtimes on the servers' PATH their versions.
    pub async fn plan_bundle(&self, req: &BundleInstall) -> Result<InstallPlan, InstallError> {
        if req.scope == Scope::Project {
            return Err(InstallError::BundleScope);
        }
        let file = std::path::absolute(&req.path).unwrap_or_else(|_| req.path.clone());
        let shown = file.display().to_string();
        let limits = self.bundle_limits;
        let f2 = file.clone();
        let read = tokio::task::spawn_blocking(move || read_bundle(&f2, &limits))
            .await
            .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()))
            .map_err(|reason| InstallError::BadBundle {
                file: shown.clone(),
                reason,
            })?;
        let m = &read.manifest;
        let folder = format!("{}@{}", plan::local_name(&m.name), m.version);
        let dir = self.bundles.join(&folder);
        let platform = compat::platform();
        let built = config::build(m, &read.fields, &dir, &read.scanned.files, platform).map_err(
            |reason| InstallError::BadBundle {
                file: shown.clone(),
                reason,
            },
        )?;
        let compatibility = self.compatibility(m, built.needs.as_ref()).await;
        if !compatibility.ok() {
            return Err(InstallError::Incompatible {
                name: m.name.clone(),
                reason: compatibility.problems().join("; "),
            });
        }
        let name = req
            .local_name
            .clone()
            .unwrap_or_else(|| plan::local_name(&m.name));
        let mut notes = Vec::new();
        if !read.bundle.signed {
            notes.push("the bundle is not signed".to_string());
        } else {
            notes.push("the bundle is signed; harness9 does not check the signature".to_string());
        }
        let info = BundleInfo {
            file: file.display().to_string(),
            sha256: read.bundle.sha256.clone(),
            dir: dir.display().to_string(),
            manifest_version: m.manifest_version.clone(),
            server_type: m.server.kind.clone(),
            author: m.author.name.clone(),
            author_email: m.author.email.clone(),
            author_url: m.author.url.clone(),
            tools: declared(&m.tools),
            tools_generated: m.tools_generated,
            prompts: declared(&m.prompts),
            prompts_generated: m.prompts_generated,
            compatibility,
            signed: read.bundle.signed,
            files: u32::try_from(read.scanned.files.len()).unwrap_or(u32::MAX),
            unpacked_bytes: read.scanned.unpacked,
        };
        let bundle_name = m.name.clone();
        self.finish_plan(
            Draft {
                source: PlanSource {
                    registry: file.display().to_string(),
                    name: m.name.clone(),
                    version: m.version.clone(),
                    title: m.display_name.clone(),
                    description: crate::truncate::prefix(&m.description, 4096).to_string(),
                    repository: m.repository.as_ref().map(|r| r.url.clone()),
                    website: m.homepage.clone(),
                    package: Some(PackageKind::Mcpb),
                },
                name,
                scope: req.scope,
                template: built.template,
                variables: built.variables,
                warnings: built.warnings,
                notes,
                bundle: Some(info),
            },
            |p| p.name == bundle_name && p.bundle.is_some(),
        )
        .await
    }

    async fn compatibility(
        &self,
        m: &manifest::Manifest,
        needs: Option<&config::Needs>,
    ) -> Compatibility {
        let platform = compat::platform().to_string();
        let platforms = m
            .compatibility
            .as_ref()
            .and_then(|c| c.platforms.clone())
            .unwrap_or_default();
        let platform_ok = platforms.is_empty() || platforms.contains(&platform);
        let mut runtimes = Vec::new();
        if let Some(n) = needs {
            let path = self.path();
            let wanted = m
                .compatibility
                .as_ref()
                .and_then(|c| c.runtimes.get(&n.runtime).cloned());
            let found = match super::choose::find_on_path(&n.program, path.as_deref()) {
                Some(p) => Some(
                    compat::version_of(&p, path.as_deref())
                        .await
                        .unwrap_or_default(),
                ),
                None => None,
            };
            let ok = match (&found, &wanted) {
                (None, _) => false,
                (Some(_), None) => true,
                // A range harness9 cannot read, or a version the runtime did not say,
                // does not stop the install.
                (Some(v), Some(w)) => compat::satisfies(v, w).unwrap_or(true),
            };
            runtimes.push(RuntimeCheck {
                name: n.runtime.clone(),
                program: n.program.clone(),
                wanted,
                found: found.filter(|v| !v.is_empty()),
                ok,
            });
        }
        Compatibility {
            platforms,
            platform,
            platform_ok,
            runtimes,
        }
    }

    /// Unpacks a plan's bundle into its folder (the file must be the one planned).
    /// Returns whether the folder is new. Blocking.
    pub(super) fn unpack_bundle(&self, info: &BundleInfo) -> Result<bool, InstallError> {
        let dir = PathBuf::from(&info.dir);
        let unpack_err = |error: String| InstallError::Unpack {
            dir: info.dir.clone(),
            error,
        };
        let folder = match (dir.parent(), dir.file_name().and_then(|n| n.to_str())) {
            (Some(p), Some(n)) if p == self.bundles && !n.starts_with('.') => n.to_string(),
            _ => {
                return Err(unpack_err(
                    "it is not a folder of harness9's bundles".into(),
                ))
            }
        };
        let bundle =
            archive::read(Path::new(&info.file), &self.bundle_limits).map_err(|reason| {
                InstallError::BadBundle {
                    file: info.file.clone(),
                    reason,
                }
            })?;
        if bundle.sha256 != info.sha256 {
            return Err(InstallError::Changed);
        }
        let existed = dir.exists();
        archive::unpack(&bundle, &self.bundle_limits, &self.bundles, &folder)
            .map_err(unpack_err)?;
        Ok(!existed)
    }

    /// Removes a bundle's folder when no installed entry uses it any more; a problem in
    /// words. Blocking.
    pub(super) fn drop_bundle_folder(&self, dir: &str) -> Option<String> {
        let path = Path::new(dir);
        let ours = path.parent() == Some(self.bundles.as_path())
            && path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| !n.starts_with('.'));
        if !ours || self.installed.uses_folder(dir) || !path.exists() {
            return None;
        }
        std::fs::remove_dir_all(path)
            .err()
            .map(|e| format!("the bundle's files in \"{dir}\" could not be removed ({e})"))
    }
}
