//! What makes an import from a file inside the project as safe as approving `.mcp.json`:
//! a digest of exactly what a plan adds (a confirmation names it, so nothing other than
//! what was shown is written), and the approval of what was written, recorded with the
//! fingerprint the approval store uses ([`crate::config::ServerConfig::fingerprint`]),
//! so that a later change to an entry needs approval again.

use std::path::Path;

use serde_json::Value;
use sha2::Digest;

use super::{ImportError, ImportPlan};

/// A digest of the entries a plan adds (names and entries as written) and the file they
/// go to.
pub fn digest(path: &str, entries: &[(String, Value)]) -> String {
    let text = serde_json::json!([path, entries]).to_string();
    let hash = sha2::Sha256::digest(text.as_bytes());
    hash.iter().take(16).map(|b| format!("{b:02x}")).collect()
}

/// Checks a confirmation against the plan about to be written: a plan that must be
/// confirmed needs one, and a confirmation must name this very plan.
pub fn check_confirmed(plan: &ImportPlan, confirmed: Option<&str>) -> Result<(), ImportError> {
    match confirmed {
        Some(d) if d != plan.digest => Err(ImportError::Changed),
        None if plan.confirm => Err(ImportError::NotConfirmed),
        Some(_) | None => Ok(()),
    }
}

/// The (server name, fingerprint) pairs of what the plan adds, as loading will read the
/// entries (`${VAR}` references expanded from this environment).
pub fn fingerprints(plan: &ImportPlan, project: &Path) -> Vec<(String, String)> {
    let env = |k: &str| std::env::var(k).ok();
    plan.entries
        .iter()
        .filter_map(|(name, entry)| {
            let cfg = crate::config::parse_entry(name, entry, &env).ok()?;
            Some((name.clone(), cfg.fingerprint(project)))
        })
        .collect()
}
