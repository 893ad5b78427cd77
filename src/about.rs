//! Where harness9 keeps things: the version and the files and folders a user (or a support
//! person) may want to open, back up or delete. One list for the desktop About box, the
//! doctor report and the README, so they never disagree.

use std::path::{Path, PathBuf};

use serde::Serialize;

/// harness9's version (the core crate's).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// One place harness9 reads or writes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct PlaceInfo {
    /// What is kept there, for people ("Project servers").
    pub what: String,
    /// The path, or a description when it is not a file ("the system keychain (…)").
    pub location: String,
    /// Whether `location` is a path on disk (a front end may offer to open it).
    pub is_path: bool,
    /// Whether that path exists now.
    pub exists: bool,
}

/// The version and every place, in the order a user asks about them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct AboutInfo {
    pub version: String,
    pub places: Vec<PlaceInfo>,
}

fn path_place(what: &str, path: PathBuf) -> PlaceInfo {
    PlaceInfo {
        what: what.into(),
        exists: path.exists(),
        location: path.display().to_string(),
        is_path: true,
    }
}

fn note_place(what: &str, note: &str) -> PlaceInfo {
    PlaceInfo {
        what: what.into(),
        location: note.into(),
        is_path: false,
        exists: false,
    }
}

/// Where things live for `project` (its `.mcp.json` is the first place when given).
/// `credentials` says where sign-in tokens are kept (a running harness knows:
/// [`crate::Harness::credentials_location`]; see [`credentials_location`] otherwise).
pub fn about(project: Option<&Path>, credentials: String) -> AboutInfo {
    let data = crate::trust::data_dir();
    let config = crate::engine::provider::settings::config_dir();
    let mut places = Vec::new();
    if let Some(p) = project {
        places.push(path_place(
            "Project servers (.mcp.json)",
            p.join(crate::config::MCP_JSON),
        ));
    }
    places.push(path_place("User config folder", config.clone()));
    places.push(path_place(
        "Model provider settings",
        crate::engine::provider::settings::settings_path(),
    ));
    places.push(path_place(
        "Approved project servers",
        crate::trust::ApprovalStore::default_location()
            .path()
            .to_path_buf(),
    ));
    places.push(path_place(
        "Tool pins (accepted tool definitions)",
        data.join(crate::trust::pins::PINS_FILE),
    ));
    places.push(path_place(
        "Sampling grants",
        data.join(crate::trust::sampling::SAMPLING_FILE),
    ));
    places.push(note_place("Sign-in tokens", &credentials));
    places.push(path_place(
        "Conversations",
        data.join(crate::engine::store::CONVERSATIONS_DIR),
    ));
    places.push(note_place(
        "Server logs",
        "in memory while harness9 runs: each server's recent lines are in its panel (desktop, \
         also in Copy diagnostics) and its details in /mcp (terminal UI)",
    ));
    places.push(note_place(
        "harness9's own log",
        "standard error; set HARNESS9_LOG=debug (terminal) or RUST_LOG=debug (desktop) for more",
    ));
    AboutInfo {
        version: VERSION.into(),
        places,
    }
}

/// Where sign-in tokens would be kept, found as a new harness would (may wait up to
/// [`crate::mcp::auth::store::KEYCHAIN_PROBE_TIMEOUT`] for the keychain to answer).
pub fn credentials_location() -> String {
    crate::mcp::auth::CredentialStore::open(&crate::trust::data_dir()).location()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_place_is_named_once_and_the_project_comes_first() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".mcp.json"), "{}").unwrap();
        let info = about(Some(dir.path()), "the system keychain".into());
        assert_eq!(info.version, env!("CARGO_PKG_VERSION"));
        let first = &info.places[0];
        assert_eq!(
            (first.location.as_str(), first.is_path, first.exists),
            (dir.path().join(".mcp.json").to_str().unwrap(), true, true)
        );
        let whats: Vec<&str> = info.places.iter().map(|p| p.what.as_str()).collect();
        for want in [
            "User config folder",
            "Approved project servers",
            "Tool pins (accepted tool definitions)",
            "Sign-in tokens",
            "Server logs",
        ] {
            assert_eq!(whats.iter().filter(|w| **w == want).count(), 1, "{whats:?}");
        }
        let tokens = info.places.iter().find(|p| p.what == "Sign-in tokens");
        assert_eq!(
            tokens.map(|p| (p.location.as_str(), p.is_path)),
            Some(("the system keychain", false))
        );
        assert!(about(None, String::new())
            .places
            .iter()
            .all(|p| !p.what.starts_with("Project")));
    }
}
