//! Server details and the project's extra roots: how their errors cross the bridge (the
//! payloads are the core's own types; the commands are in [`crate::commands`]).

use harness9::harness::RootsError;
use harness9::host::catalog::FeatureError;

use crate::bridge::{BridgeError, ErrorCode};

pub fn feature_error(e: FeatureError) -> BridgeError {
    let code = match &e {
        FeatureError::UnknownServer { .. } => ErrorCode::NotFound,
        FeatureError::NotConnected { .. } | FeatureError::Unsupported { .. } => {
            ErrorCode::NotConnected
        }
        FeatureError::Client { .. } => ErrorCode::ToolFailed,
    };
    BridgeError::new(code, e.to_string())
}

pub fn roots_error(e: RootsError) -> BridgeError {
    let code = match &e {
        RootsError::NotAFolder { .. } | RootsError::NotThere { .. } => ErrorCode::NotFound,
        RootsError::IsProject { .. } | RootsError::AlreadyThere { .. } => ErrorCode::InvalidConfig,
        RootsError::Save { .. } => ErrorCode::Io,
    };
    BridgeError::new(code, e.to_string())
}

/// Extra roots as the window shows them.
pub fn shown(roots: Vec<std::path::PathBuf>) -> Vec<String> {
    roots.iter().map(|r| r.display().to_string()).collect()
}
