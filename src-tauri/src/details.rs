//! Server details beyond the status (title, icons, logging level), tool annotations and
//! icons, and the project's extra roots: the bridge payloads and their errors (the
//! commands are in [`crate::commands`]).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use harness9::harness::RootsError;
use harness9::mcp::features::{Icon, LogLevel, ToolAnnotations};
use harness9::mcp::manager::{FeatureError, ServerDetails};

use crate::bridge::{BridgeError, ErrorCode};

/// A syslog level for `logging/setLevel`, lowest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum LogLevelDto {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
}

impl From<LogLevel> for LogLevelDto {
    fn from(l: LogLevel) -> Self {
        match l {
            LogLevel::Debug => LogLevelDto::Debug,
            LogLevel::Info => LogLevelDto::Info,
            LogLevel::Notice => LogLevelDto::Notice,
            LogLevel::Warning => LogLevelDto::Warning,
            LogLevel::Error => LogLevelDto::Error,
            LogLevel::Critical => LogLevelDto::Critical,
            LogLevel::Alert => LogLevelDto::Alert,
            LogLevel::Emergency => LogLevelDto::Emergency,
        }
    }
}

impl From<LogLevelDto> for LogLevel {
    fn from(l: LogLevelDto) -> Self {
        match l {
            LogLevelDto::Debug => LogLevel::Debug,
            LogLevelDto::Info => LogLevel::Info,
            LogLevelDto::Notice => LogLevel::Notice,
            LogLevelDto::Warning => LogLevel::Warning,
            LogLevelDto::Error => LogLevel::Error,
            LogLevelDto::Critical => LogLevel::Critical,
            LogLevelDto::Alert => LogLevel::Alert,
            LogLevelDto::Emergency => LogLevel::Emergency,
        }
    }
}

/// An icon the window may load: the core passes only `https:` and `data:` ones.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct IconDto {
    pub src: String,
    pub mime_type: Option<String>,
    /// `light` or `dark`, when the icon is meant for one theme.
    pub theme: Option<String>,
}

impl From<&Icon> for IconDto {
    fn from(i: &Icon) -> Self {
        let Icon {
            src,
            mime_type,
            sizes: _,
            theme,
        } = i;
        IconDto {
            src: src.clone(),
            mime_type: mime_type.clone(),
            theme: theme.clone(),
        }
    }
}

/// A tool's annotations: what the server set (`null`: not set) and what counts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ToolHintsDto {
    pub read_only_hint: Option<bool>,
    pub destructive_hint: Option<bool>,
    pub idempotent_hint: Option<bool>,
    pub open_world_hint: Option<bool>,
    /// With the spec's defaults; `destructiveHint` counts only when not read-only.
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
    pub open_world: bool,
    /// Short marks for a list (`read-only`, `destructive`, ...): the ones the server's
    /// hints say, not bare defaults.
    pub marks: Vec<String>,
}

impl From<&ToolAnnotations> for ToolHintsDto {
    fn from(a: &ToolAnnotations) -> Self {
        ToolHintsDto {
            read_only_hint: a.read_only_hint,
            destructive_hint: a.destructive_hint,
            idempotent_hint: a.idempotent_hint,
            open_world_hint: a.open_world_hint,
            read_only: a.read_only(),
            destructive: a.destructive(),
            idempotent: a.idempotent(),
            open_world: a.open_world(),
            marks: a.marks().into_iter().map(String::from).collect(),
        }
    }
}

/// What a connected server says about itself.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ServerDetailsDto {
    pub name: String,
    /// `serverInfo.title`; the name stays the identifier.
    pub title: Option<String>,
    pub icons: Vec<IconDto>,
    /// Whether the server takes a logging level.
    pub logging: bool,
    /// The level chosen this session (set again when the server restarts).
    pub log_level: Option<LogLevelDto>,
}

impl From<ServerDetails> for ServerDetailsDto {
    fn from(d: ServerDetails) -> Self {
        let ServerDetails {
            name,
            title,
            icons,
            logging,
            log_level,
        } = d;
        ServerDetailsDto {
            name,
            title,
            icons: icons.iter().map(Into::into).collect(),
            logging,
            log_level: log_level.map(Into::into),
        }
    }
}

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
