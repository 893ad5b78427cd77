//! Server prompts in the desktop app: the bridge payloads of the prompt picker (each
//! prompt with its server and arguments), the completions of an argument, and how the
//! core's prompt errors cross the bridge. Starting a turn with a prompt is in
//! [`crate::chat`].

use serde::Serialize;
use ts_rs::TS;

use harness9::harness::PromptError;
use harness9::mcp::features::{Completion, PromptArgument};
use harness9::mcp::manager::{FeatureError, ServerPrompt};

use crate::bridge::{BridgeError, ErrorCode};

/// One prompt of a connected server, as the picker lists it.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PromptDto {
    pub server: String,
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub arguments: Vec<PromptArgumentDto>,
}

/// One argument of a prompt (a string value).
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PromptArgumentDto {
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub required: bool,
}

/// A server's suggestions for an argument's value, as typed so far.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CompletionDto {
    pub values: Vec<String>,
    /// How many values exist in all, when the server says.
    pub total: Option<u64>,
    pub has_more: bool,
}

impl From<&PromptArgument> for PromptArgumentDto {
    fn from(a: &PromptArgument) -> Self {
        PromptArgumentDto {
            name: a.name.clone(),
            title: a.title.clone(),
            description: a.description.clone(),
            required: a.required,
        }
    }
}

impl From<&ServerPrompt> for PromptDto {
    fn from(p: &ServerPrompt) -> Self {
        PromptDto {
            server: p.server.clone(),
            name: p.prompt.name.clone(),
            title: p.prompt.title.clone(),
            description: p.prompt.description.clone(),
            arguments: p.prompt.arguments.iter().map(Into::into).collect(),
        }
    }
}

/// Most suggestions passed to the window (the spec caps a server's answer at 100).
const MAX_VALUES: usize = 100;

impl From<Completion> for CompletionDto {
    fn from(c: Completion) -> Self {
        let mut values = c.values;
        values.truncate(MAX_VALUES);
        CompletionDto {
            values,
            total: c.total,
            has_more: c.has_more,
        }
    }
}

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
