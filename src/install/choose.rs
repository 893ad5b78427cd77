//! Which way of running a registry record to install: a package whose runner is on the
//! servers' PATH (npm, PyPI, OCI, NuGet, in that order) or the record's remote, unless the
//! user names one. [`super::build`] then makes the entry of the way chosen.

use std::ffi::OsStr;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub use super::kind::PackageKind;
use super::record::{Package, Remote, ServerRecord};
use super::InstallError;

/// Which way of running the server to install.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "kind", content = "package")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
// `Choice` is an elicitation form's choice in the desktop's TypeScript.
#[cfg_attr(feature = "ts", ts(rename = "InstallChoice"))]
pub enum Choice {
    /// The first package whose runner is on the servers' PATH (npm, PyPI, OCI, NuGet),
    /// else the first remote.
    #[default]
    Auto,
    Package(PackageKind),
    Remote,
}

/// Where `program` is on `path` (the servers' PATH).
pub fn find_on_path(program: &str, path: Option<&OsStr>) -> Option<PathBuf> {
    std::env::split_paths(path?)
        .map(|d| d.join(program))
        .find(|p| is_executable(p))
}

fn is_executable(p: &std::path::Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        p.is_file()
    }
}

pub(super) fn refused(record: &ServerRecord, reason: String) -> InstallError {
    InstallError::Refused {
        name: record.name.clone(),
        reason,
    }
}

/// The package or remote to install, by `choice`.
pub fn choose<'r>(
    record: &'r ServerRecord,
    choice: Choice,
    path: Option<&OsStr>,
) -> Result<Way<'r>, InstallError> {
    let of_kind = |k: PackageKind| {
        record
            .packages
            .iter()
            .find(|p| PackageKind::of(&p.registry_type) == Some(k))
    };
    match choice {
        Choice::Package(PackageKind::Mcpb) => Err(InstallError::BundlesNotYet {
            what: format!("the mcpb package of \"{}\"", record.name),
        }),
        Choice::Package(k) => {
            of_kind(k)
                .map(|p| Way::Package(k, p))
                .ok_or_else(|| InstallError::NoSuchPackage {
                    name: record.name.clone(),
                    kind: k.word().into(),
                    available: available(record),
                })
        }
        Choice::Remote => {
            record
                .remotes
                .first()
                .map(Way::Remote)
                .ok_or_else(|| InstallError::NoRemote {
                    name: record.name.clone(),
                    available: available(record),
                })
        }
        Choice::Auto => {
            for k in PackageKind::ORDER {
                if let Some(p) = of_kind(k) {
                    if find_on_path(k.runner(), path).is_some() {
                        return Ok(Way::Package(k, p));
                    }
                }
            }
            if let Some(r) = record.remotes.first() {
                return Ok(Way::Remote(r));
            }
            let kinds: Vec<PackageKind> = PackageKind::ORDER
                .into_iter()
                .filter(|k| of_kind(*k).is_some())
                .collect();
            if !kinds.is_empty() {
                return Err(InstallError::NoRuntime {
                    name: record.name.clone(),
                    needs: kinds
                        .iter()
                        .map(|k| format!("{} ({}, from {})", k.runner(), k.word(), k.runner_from()))
                        .collect::<Vec<_>>()
                        .join(" or "),
                });
            }
            if of_kind(PackageKind::Mcpb).is_some() {
                return Err(InstallError::BundlesNotYet {
                    what: format!(
                        "\"{}\" (it is published as an mcpb bundle only)",
                        record.name
                    ),
                });
            }
            Err(InstallError::Nothing {
                name: record.name.clone(),
                available: available(record),
            })
        }
    }
}

/// What a record offers, in words (`npm, oci, a remote`).
fn available(record: &ServerRecord) -> String {
    let mut ways: Vec<String> = record
        .packages
        .iter()
        .map(|p| p.registry_type.clone())
        .collect();
    ways.dedup();
    if !record.remotes.is_empty() {
        ways.push("--remote".into());
    }
    if ways.is_empty() {
        "nothing to run".into()
    } else {
        ways.join(", ")
    }
}

/// The way chosen.
#[derive(Debug, Clone, Copy)]
pub enum Way<'r> {
    Package(PackageKind, &'r Package),
    Remote(&'r Remote),
}
