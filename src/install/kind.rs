//! The kinds of package a registry record may name, and the program that runs each.

use serde::{Deserialize, Serialize};

use super::record::ServerRecord;

/// A kind of package this version can run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum PackageKind {
    Npm,
    Pypi,
    Oci,
    Nuget,
    Mcpb,
}

impl PackageKind {
    /// The order packages are tried in when none is asked for.
    pub const ORDER: [PackageKind; 4] = [
        PackageKind::Npm,
        PackageKind::Pypi,
        PackageKind::Oci,
        PackageKind::Nuget,
    ];

    /// From a record's `registryType` (or `--package`).
    pub fn of(word: &str) -> Option<PackageKind> {
        match word.to_ascii_lowercase().as_str() {
            "npm" => Some(PackageKind::Npm),
            "pypi" => Some(PackageKind::Pypi),
            "oci" | "docker" => Some(PackageKind::Oci),
            "nuget" => Some(PackageKind::Nuget),
            "mcpb" => Some(PackageKind::Mcpb),
            _ => None,
        }
    }

    pub fn word(self) -> &'static str {
        match self {
            PackageKind::Npm => "npm",
            PackageKind::Pypi => "pypi",
            PackageKind::Oci => "oci",
            PackageKind::Nuget => "nuget",
            PackageKind::Mcpb => "mcpb",
        }
    }

    /// The program that runs it.
    pub fn runner(self) -> &'static str {
        match self {
            PackageKind::Npm => "npx",
            PackageKind::Pypi => "uvx",
            PackageKind::Oci => "docker",
            PackageKind::Nuget => "dnx",
            PackageKind::Mcpb => "mcpb",
        }
    }

    /// What to install when the runner is missing.
    pub(super) fn runner_from(self) -> &'static str {
        match self {
            PackageKind::Npm => "Node.js",
            PackageKind::Pypi => "uv",
            PackageKind::Oci => "Docker",
            PackageKind::Nuget => "the .NET 10 SDK",
            PackageKind::Mcpb => "harness9's bundle support",
        }
    }
}

/// How each way of running a record runs, in the record's order: `npx`, `uvx`, `docker`,
/// `dnx`, `mcpb`, or a remote's URL.
pub fn runs(record: &ServerRecord) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |s: String| {
        if !out.contains(&s) {
            out.push(s);
        }
    };
    for p in &record.packages {
        push(match PackageKind::of(&p.registry_type) {
            Some(k) => k.runner().to_string(),
            None => p.registry_type.clone(),
        });
    }
    for r in &record.remotes {
        push(r.url.clone());
    }
    out
}
