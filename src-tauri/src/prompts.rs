//! Server prompts in the desktop app: how the core's prompt errors cross the bridge. The
//! picker lists the core's [`harness9::harness::PromptEntry`]s and the completions of an
//! argument are the core's [`harness9::mcp::features::Completion`]; starting a turn with a
//! prompt is a chat command.

use harness9::harness::PromptError;
use harness9::host::catalog::FeatureError;

use crate::bridge::{BridgeError, ErrorCode};

impl From<FeatureError> for BridgeError {
    fn from(e: FeatureError) -> Self {
        let code = match &e {
            FeatureError::UnknownServer { .. } | FeatureError::Unsupported { .. } => {
                ErrorCode::NotFound
            }
            FeatureError::NotConnected { .. } => ErrorCode::NotConnected,
            FeatureError::Client { .. } => ErrorCode::RequestFailed,
        };
        BridgeError::new(code, e.to_string())
    }
}

impl From<PromptError> for BridgeError {
    fn from(e: PromptError) -> Self {
        match e {
            PromptError::Feature(f) => f.into(),
            PromptError::Engine(e) => e.into(),
            PromptError::UnknownPrompt { .. } => {
                BridgeError::new(ErrorCode::NotFound, e.to_string())
            }
            PromptError::MissingArguments { .. } => {
                BridgeError::new(ErrorCode::InvalidArguments, e.to_string())
            }
        }
    }
}
