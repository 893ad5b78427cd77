//! Why an install, an update or a change of secrets did not happen.

use super::registry::RegistryError;
use super::secrets::SecretError;
use super::sources::SourceError;
use crate::config::servers::ServerEditError;

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
    #[error("bundles from a registry: not yet — download {what} and install the file with `harness9 mcp install FILE.mcpb`")]
    BundlesNotYet { what: String },
    #[error("the bundle \"{file}\" cannot be installed: {reason}")]
    BadBundle { file: String, reason: String },
    #[error("\"{name}\" does not run here: {reason}")]
    Incompatible { name: String, reason: String },
    #[error("a bundle's entry goes in the user or the local scope, not the project scope: its files live in your data folder, which others' checkouts do not have")]
    BundleScope,
    #[error("the bundle's files could not be unpacked into \"{dir}\": {error}")]
    Unpack { dir: String, error: String },
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
            InstallError::BadBundle { .. } => "invalid-bundle",
            InstallError::Incompatible { .. } => "incompatible-bundle",
            InstallError::BundleScope => "bundle-scope",
            InstallError::Unpack { .. } => "unpack-failed",
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
            | InstallError::NoSuchInput { .. }
            | InstallError::BundleScope => true,
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
            | InstallError::BadBundle { .. }
            | InstallError::Incompatible { .. }
            | InstallError::Unpack { .. }
            | InstallError::Changed => false,
        }
    }
}
