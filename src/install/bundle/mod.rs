//! MCP bundles (`.mcpb`, the format Claude Desktop installs): a zip archive with a
//! `manifest.json` and the server's files.
//!
//! [`super::Installer::plan_bundle`] ([`super::from_bundle`]) reads the file and writes nothing: it checks the
//! archive ([`archive`]) and the manifest ([`manifest`]), makes the entry from the
//! manifest's `mcp_config` ([`config`]), checks that the bundle runs here ([`compat`]:
//! platform, runtime versions on the servers' PATH), and gives an [`InstallPlan`] whose
//! [`BundleInfo`] says what the bundle is and declares. The commit
//! ([`super::Installer::commit`], as for a registry install) unpacks the same file (its
//! SHA-256 must not have changed) into the user's data folder — one folder per bundle name
//! and version under [`BUNDLES_DIR`] — before it writes the entry; removing the entry
//! removes the folder when no other installed entry uses it.
//!
//! A bundle's entry goes in the user or the local scope, never the project scope: its
//! files live in this user's data folder. A signature block is reported (signed or not);
//! harness9 does not verify it.

pub mod archive;
pub mod compat;
pub mod config;
pub mod manifest;

use serde::{Deserialize, Serialize};

pub use compat::{Compatibility, RuntimeCheck};

/// The folder of the user's data folder that bundles are unpacked into.
pub const BUNDLES_DIR: &str = "bundles";

/// A tool or prompt a bundle declares.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DeclaredItem {
    pub name: String,
    pub description: Option<String>,
}

/// What a bundle is, declares and needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct BundleInfo {
    /// The bundle file.
    pub file: String,
    /// Its SHA-256 (hex): the commit unpacks the file only if it is still this one.
    pub sha256: String,
    /// The folder its files are unpacked into.
    pub dir: String,
    pub manifest_version: Option<String>,
    /// `node`, `python`, `uv` or `binary`.
    pub server_type: String,
    pub author: String,
    pub author_email: Option<String>,
    pub author_url: Option<String>,
    pub tools: Vec<DeclaredItem>,
    /// The server makes more tools than it declares.
    pub tools_generated: bool,
    pub prompts: Vec<DeclaredItem>,
    pub prompts_generated: bool,
    pub compatibility: Compatibility,
    /// It carries a signature block (not verified by harness9).
    pub signed: bool,
    /// Files in it.
    pub files: u32,
    /// Bytes once unpacked.
    pub unpacked_bytes: u64,
}
