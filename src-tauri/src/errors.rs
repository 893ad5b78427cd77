//! How errors cross the bridge: every command fails with one [`BridgeError`], `{ code,
//! message, detail }`, whose code is one of a closed set the UI can branch on
//! ([`ErrorCode`]), whose message is the core's text (it says what to do), and whose
//! detail is the core error's own stable code (its `code()`), finer than the closed set.
//!
//! This is the only place that decides codes: each core error names its code here
//! ([`WireCode`], matching every variant, so a new variant of a core error does not compile
//! until it has one) and hands over its own `code()` as the detail, and the few errors of
//! the desktop crate itself have a constructor here. Commands convert with `?` or
//! `map_err(BridgeError::from)`.

use std::fmt::Display;

use serde::Serialize;
use ts_rs::TS;

use harness9::config::import::ImportError;
use harness9::config::SaveError;
use harness9::engine::provider::settings::SettingsError;
use harness9::engine::EngineError;
use harness9::harness::SendPendingError;
use harness9::harness::{
    CallError, ConfigSaveError, PermissionError, PromptError, RootsError, SaveResourceError,
};
use harness9::host::apps::ViewError;
use harness9::host::asks::{AskError, ReplyError};
use harness9::host::catalog::FeatureError;
use harness9::host::pins::AcceptError;
use harness9::host::signin::SignInError;
use harness9::host::tasks::TaskServiceError;
use harness9::inspect::EditError;
use harness9::install::{InstallError, RegistryError, SecretError, SourceError};
use harness9::links::LinkRefused;
use harness9::manager::{PauseError, Unavailable};
use harness9::mcp::auth::AuthError;
use harness9::mcp::client::TaskError;

/// What went wrong, as a closed set the UI can branch on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorCode {
    /// No project is open.
    NoProject,
    /// No such server, tool, prompt or folder.
    NotFound,
    /// The server is not connected (stopped, failed, disabled, awaiting approval).
    NotConnected,
    /// The server does not offer what was asked (resources, prompts, logging).
    Unsupported,
    /// The tool call itself failed (timeout, protocol error, server gone).
    ToolFailed,
    /// The tool changed since it was pinned and is held back until the user accepts it.
    Held,
    /// The text is not a valid `.mcp.json`; nothing was written.
    InvalidConfig,
    /// `.mcp.json` changed on disk since it was loaded, or what was shown changed since;
    /// nothing was written.
    ChangedOnDisk,
    /// A file could not be read or written.
    Io,
    /// The call was cancelled by the user.
    Cancelled,
    /// No model provider is configured: the message says what to set.
    NotConfigured,
    /// A chat turn is already running.
    Busy,
    /// Signing in to a remote server did not work: the message says why and what to do.
    SignInFailed,
    /// Arguments are missing or wrong (a prompt's required ones): the message names them.
    InvalidArguments,
    /// A request to a server failed (an error answer, a timeout, the server gone).
    RequestFailed,
    /// The host's rules or the user refused what a view asked (or it asked too often).
    Refused,
    /// Anything else (a bug): the message says what.
    Internal,
}

/// The error of every command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS, thiserror::Error)]
#[error("{message}")]
pub struct BridgeError {
    pub code: ErrorCode,
    pub message: String,
    /// The core error's own stable kebab-case code (`needs-auth`, `timeout`,
    /// `unknown-prompt`, …; never changed once released), finer than `code`; null for the
    /// desktop crate's own errors and plain I/O errors.
    pub detail: Option<String>,
}

pub type BridgeResult<T> = Result<T, BridgeError>;

impl BridgeError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        BridgeError {
            code,
            message: message.into(),
            detail: None,
        }
    }

    pub fn no_project() -> Self {
        Self::new(ErrorCode::NoProject, "open a project folder first")
    }

    /// A file, folder or link could not be handed to the desktop's opener.
    pub fn cannot_open(what: impl Display, why: impl Display) -> Self {
        Self::new(ErrorCode::Io, format!("cannot open {what}: {why}"))
    }

    /// A link the link rules refuse ([`harness9::links::check_link`]).
    pub fn link_refused(url: &str, refused: LinkRefused) -> Self {
        BridgeError {
            detail: Some(refused.code().to_string()),
            ..Self::new(
                ErrorCode::InvalidArguments,
                format!("refused to open {url:?}: {refused}"),
            )
        }
    }

    /// A folder the window asked to open that cannot be opened.
    pub fn folder(message: String) -> Self {
        Self::new(ErrorCode::NotFound, message)
    }

    /// No server of that name (for what only the desktop crate looks up).
    pub fn no_server(server: &str) -> Self {
        Self::new(ErrorCode::NotFound, format!("no server named \"{server}\""))
    }

    /// The Downloads folder is not known.
    pub fn no_downloads(why: impl Display) -> Self {
        Self::new(
            ErrorCode::Io,
            format!("no Downloads folder is known ({why}); set XDG_DOWNLOAD_DIR"),
        )
    }

    /// The sampling grants could not be written.
    pub fn grants(why: std::io::Error) -> Self {
        Self::new(
            ErrorCode::Io,
            format!("cannot change the sampling grants: {why}"),
        )
    }
}

/// A core error's code on the bridge.
pub trait WireCode: Display {
    fn wire_code(&self) -> ErrorCode;
    /// The error's own stable code (the core's `code()`), when it has one.
    fn detail(&self) -> Option<&'static str>;
}

impl<E: WireCode> From<E> for BridgeError {
    fn from(e: E) -> Self {
        BridgeError {
            code: e.wire_code(),
            message: e.to_string(),
            detail: e.detail().map(str::to_string),
        }
    }
}

impl WireCode for std::io::Error {
    fn wire_code(&self) -> ErrorCode {
        ErrorCode::Io
    }
    fn detail(&self) -> Option<&'static str> {
        None
    }
}

/// A blocking task of the backend that ended early (a bug).
impl WireCode for tokio::task::JoinError {
    fn wire_code(&self) -> ErrorCode {
        ErrorCode::Internal
    }
    fn detail(&self) -> Option<&'static str> {
        None
    }
}

impl WireCode for CallError {
    fn wire_code(&self) -> ErrorCode {
        match self {
            CallError::UnknownServer { .. } | CallError::UnknownTool { .. } => ErrorCode::NotFound,
            CallError::NotConnected { .. } => ErrorCode::NotConnected,
            CallError::Tool(_) => ErrorCode::ToolFailed,
            CallError::Held { .. } => ErrorCode::Held,
            CallError::Cancelled => ErrorCode::Cancelled,
        }
    }
    fn detail(&self) -> Option<&'static str> {
        Some(self.code())
    }
}

impl WireCode for ViewError {
    fn wire_code(&self) -> ErrorCode {
        match self {
            ViewError::UnknownView(_)
            | ViewError::UnknownTool { .. }
            | ViewError::NoView { .. }
            | ViewError::UnknownDownload(_) => ErrorCode::NotFound,
            ViewError::ServerUnavailable { .. } => ErrorCode::NotConnected,
            ViewError::Read { .. } | ViewError::Failed(_) => ErrorCode::RequestFailed,
            ViewError::NotAView { .. }
            | ViewError::TooLarge { .. }
            | ViewError::UnknownMethod(_) => ErrorCode::Unsupported,
            ViewError::Invalid { .. } => ErrorCode::InvalidArguments,
            ViewError::NotInitialized(_) | ViewError::Refused(_) | ViewError::Throttled { .. } => {
                ErrorCode::Refused
            }
            ViewError::Save { .. } => ErrorCode::Io,
        }
    }
    fn detail(&self) -> Option<&'static str> {
        Some(self.code())
    }
}

impl WireCode for SendPendingError {
    fn wire_code(&self) -> ErrorCode {
        match self {
            SendPendingError::Unknown(_) => ErrorCode::NotFound,
            SendPendingError::Chat(e) => e.wire_code(),
        }
    }
    fn detail(&self) -> Option<&'static str> {
        Some(self.code())
    }
}

impl WireCode for AcceptError {
    fn wire_code(&self) -> ErrorCode {
        match self {
            AcceptError::NotConnected(_) => ErrorCode::NotConnected,
            AcceptError::NotHeld { .. } => ErrorCode::NotFound,
            AcceptError::Save(_) => ErrorCode::Io,
        }
    }
    fn detail(&self) -> Option<&'static str> {
        Some(self.code())
    }
}

impl WireCode for SaveError {
    fn wire_code(&self) -> ErrorCode {
        match self {
            SaveError::Invalid(_) => ErrorCode::InvalidConfig,
            SaveError::Io { .. } => ErrorCode::Io,
        }
    }
    fn detail(&self) -> Option<&'static str> {
        Some(self.code())
    }
}

impl WireCode for EditError {
    fn wire_code(&self) -> ErrorCode {
        match self {
            EditError::Unknown(_) => ErrorCode::NotFound,
            EditError::Invalid(_)
            | EditError::EmptyName
            | EditError::NotAnObject
            | EditError::Duplicate(_) => ErrorCode::InvalidConfig,
        }
    }
    fn detail(&self) -> Option<&'static str> {
        Some(self.code())
    }
}

impl WireCode for ConfigSaveError {
    fn wire_code(&self) -> ErrorCode {
        match self {
            ConfigSaveError::ChangedOnDisk { .. } => ErrorCode::ChangedOnDisk,
            ConfigSaveError::Save(e) => e.wire_code(),
            ConfigSaveError::Edit(e) => e.wire_code(),
            ConfigSaveError::Io(_) => ErrorCode::Io,
        }
    }
    fn detail(&self) -> Option<&'static str> {
        Some(self.code())
    }
}

impl WireCode for InstallError {
    fn wire_code(&self) -> ErrorCode {
        use harness9::config::servers::ServerEditError as E;
        match self {
            InstallError::Source(e) => match e {
                SourceError::NotConfigured { .. } => ErrorCode::NotConfigured,
                SourceError::BadUrl { .. } | SourceError::BadSettings { .. } => {
                    ErrorCode::InvalidConfig
                }
            },
            InstallError::Registry(e) => match e {
                RegistryError::NotFound { .. } | RegistryError::NoSuchVersion { .. } => {
                    ErrorCode::NotFound
                }
                RegistryError::Unreachable { .. }
                | RegistryError::Status { .. }
                | RegistryError::TooLarge { .. }
                | RegistryError::Garbage { .. }
                | RegistryError::EndlessCursor { .. }
                | RegistryError::TooManyPages { .. } => ErrorCode::RequestFailed,
            },
            InstallError::Refused { .. } => ErrorCode::Refused,
            InstallError::NoRuntime { .. }
            | InstallError::NoSuchPackage { .. }
            | InstallError::NoRemote { .. }
            | InstallError::Nothing { .. }
            | InstallError::BundlesNotYet { .. }
            | InstallError::Incompatible { .. } => ErrorCode::Unsupported,
            InstallError::BadBundle { .. } => ErrorCode::Refused,
            InstallError::BundleScope => ErrorCode::InvalidArguments,
            InstallError::Unpack { .. } => ErrorCode::Io,
            InstallError::Missing { .. }
            | InstallError::BadValue { .. }
            | InstallError::UnknownVariable { .. } => ErrorCode::InvalidArguments,
            InstallError::Changed => ErrorCode::ChangedOnDisk,
            InstallError::NotInstalled { .. } | InstallError::NoSuchInput { .. } => {
                ErrorCode::NotFound
            }
            InstallError::Edit(e) => match e {
                E::Exists { .. } | E::Ambiguous { .. } | E::BadName(_) => {
                    ErrorCode::InvalidArguments
                }
                E::NotFound { .. } => ErrorCode::NotFound,
                E::BadEntry(_) | E::Unreadable { .. } => ErrorCode::InvalidConfig,
                E::Changed { .. } => ErrorCode::ChangedOnDisk,
                E::Save(e) => e.wire_code(),
            },
            InstallError::Secret(e) => match e {
                SecretError::BadName(_) | SecretError::Empty(_) => ErrorCode::InvalidArguments,
                SecretError::Store(_) => ErrorCode::Io,
            },
        }
    }
    fn detail(&self) -> Option<&'static str> {
        Some(self.code())
    }
}

impl WireCode for ImportError {
    fn wire_code(&self) -> ErrorCode {
        match self {
            ImportError::Target { .. } => ErrorCode::Io,
            ImportError::Save(e) => e.wire_code(),
            ImportError::NotConfirmed => ErrorCode::InvalidArguments,
            ImportError::Changed => ErrorCode::ChangedOnDisk,
        }
    }
    fn detail(&self) -> Option<&'static str> {
        Some(self.code())
    }
}

impl WireCode for SettingsError {
    fn wire_code(&self) -> ErrorCode {
        match self {
            SettingsError::BadFile { .. } | SettingsError::KeyStore { .. } => ErrorCode::Io,
            SettingsError::NotConfigured(_)
            | SettingsError::MissingKey { .. }
            | SettingsError::MissingKeychainKey { .. } => ErrorCode::NotConfigured,
            SettingsError::UnknownProvider(_) => ErrorCode::InvalidArguments,
        }
    }
    fn detail(&self) -> Option<&'static str> {
        Some(self.code())
    }
}

impl WireCode for EngineError {
    fn wire_code(&self) -> ErrorCode {
        match self {
            // Whatever keeps the provider from being used, the chat shows what to set.
            EngineError::Settings(_) => ErrorCode::NotConfigured,
            EngineError::Store(_) => ErrorCode::Io,
            EngineError::Busy => ErrorCode::Busy,
            EngineError::EmptyPrompt => ErrorCode::InvalidArguments,
        }
    }
    fn detail(&self) -> Option<&'static str> {
        Some(self.code())
    }
}

impl WireCode for FeatureError {
    fn wire_code(&self) -> ErrorCode {
        match self {
            FeatureError::UnknownServer { .. } => ErrorCode::NotFound,
            FeatureError::NotConnected { .. } => ErrorCode::NotConnected,
            FeatureError::Unsupported { .. } => ErrorCode::Unsupported,
            FeatureError::Client { .. } => ErrorCode::RequestFailed,
        }
    }
    fn detail(&self) -> Option<&'static str> {
        Some(self.code())
    }
}

impl WireCode for PromptError {
    fn wire_code(&self) -> ErrorCode {
        match self {
            PromptError::Feature(e) => e.wire_code(),
            PromptError::Engine(e) => e.wire_code(),
            PromptError::UnknownPrompt { .. } => ErrorCode::NotFound,
            PromptError::MissingArguments { .. } => ErrorCode::InvalidArguments,
        }
    }
    fn detail(&self) -> Option<&'static str> {
        Some(self.code())
    }
}

impl WireCode for SaveResourceError {
    fn wire_code(&self) -> ErrorCode {
        match self {
            SaveResourceError::Read(e) => e.wire_code(),
            SaveResourceError::Empty { .. } | SaveResourceError::BadData { .. } => {
                ErrorCode::RequestFailed
            }
            SaveResourceError::Io { .. } => ErrorCode::Io,
        }
    }
    fn detail(&self) -> Option<&'static str> {
        Some(self.code())
    }
}

impl WireCode for ReplyError {
    fn wire_code(&self) -> ErrorCode {
        match self {
            ReplyError::Ask(AskError::Unknown(_)) => ErrorCode::NotFound,
            ReplyError::Ask(AskError::WrongAnswer { .. } | AskError::Invalid { .. }) => {
                ErrorCode::InvalidArguments
            }
            ReplyError::Ask(AskError::Failed { .. }) => ErrorCode::Internal,
            ReplyError::Open { .. } => ErrorCode::Io,
            ReplyError::Refused { .. } => ErrorCode::InvalidArguments,
        }
    }
    fn detail(&self) -> Option<&'static str> {
        Some(self.code())
    }
}

impl WireCode for RootsError {
    fn wire_code(&self) -> ErrorCode {
        match self {
            RootsError::NotAFolder { .. } | RootsError::NotThere { .. } => ErrorCode::NotFound,
            RootsError::IsProject { .. } | RootsError::AlreadyThere { .. } => {
                ErrorCode::InvalidConfig
            }
            RootsError::Save { .. } => ErrorCode::Io,
        }
    }
    fn detail(&self) -> Option<&'static str> {
        Some(self.code())
    }
}

impl WireCode for SignInError {
    fn wire_code(&self) -> ErrorCode {
        match self {
            SignInError::UnknownServer(_) => ErrorCode::NotFound,
            SignInError::Unusable { .. } => ErrorCode::InvalidConfig,
            SignInError::LocalSignIn(_)
            | SignInError::LocalSignOut(_)
            | SignInError::OwnAuthorization(_) => ErrorCode::InvalidArguments,
            SignInError::Disabled(_) => ErrorCode::NotConnected,
            SignInError::Pause(e) => e.wire_code(),
            SignInError::Auth(e) => e.wire_code(),
        }
    }
    fn detail(&self) -> Option<&'static str> {
        Some(self.code())
    }
}

impl WireCode for PauseError {
    fn wire_code(&self) -> ErrorCode {
        match self {
            PauseError::Unknown(_) => ErrorCode::NotFound,
            PauseError::Unusable { .. } => ErrorCode::InvalidConfig,
            PauseError::NotApproved(_) => ErrorCode::NotConnected,
        }
    }
    fn detail(&self) -> Option<&'static str> {
        Some(self.code())
    }
}

impl WireCode for AuthError {
    fn wire_code(&self) -> ErrorCode {
        match self {
            AuthError::NeedsSignIn(_)
            | AuthError::Refused(_)
            | AuthError::NotNeeded(_)
            | AuthError::Discovery(_)
            | AuthError::Registration(_)
            | AuthError::Token(_)
            | AuthError::Browser(_) => ErrorCode::SignInFailed,
            AuthError::Credentials(_) => ErrorCode::Io,
            AuthError::Internal(_) => ErrorCode::Internal,
        }
    }
    fn detail(&self) -> Option<&'static str> {
        Some(self.code())
    }
}

impl WireCode for PermissionError {
    fn wire_code(&self) -> ErrorCode {
        match self {
            PermissionError::EmptyPattern => ErrorCode::InvalidArguments,
            PermissionError::Save { .. } => ErrorCode::Io,
        }
    }
    fn detail(&self) -> Option<&'static str> {
        Some(self.code())
    }
}

impl WireCode for Unavailable {
    fn wire_code(&self) -> ErrorCode {
        match self {
            Unavailable::Unknown { .. } => ErrorCode::NotFound,
            Unavailable::NotConnected { .. } => ErrorCode::NotConnected,
        }
    }
    fn detail(&self) -> Option<&'static str> {
        Some(self.code())
    }
}

impl WireCode for TaskError {
    fn wire_code(&self) -> ErrorCode {
        match self {
            TaskError::Unknown { .. } => ErrorCode::NotFound,
            TaskError::Cancelled { .. } => ErrorCode::Cancelled,
            TaskError::Client(_)
            | TaskError::Expired { .. }
            | TaskError::Backwards { .. }
            | TaskError::Failed { .. }
            | TaskError::NotFinished { .. }
            | TaskError::Invalid { .. } => ErrorCode::RequestFailed,
        }
    }
    fn detail(&self) -> Option<&'static str> {
        Some(self.code())
    }
}

impl WireCode for TaskServiceError {
    fn wire_code(&self) -> ErrorCode {
        match self {
            TaskServiceError::Server(e) => e.wire_code(),
            TaskServiceError::UnknownTask { .. } => ErrorCode::NotFound,
            // Cancelling a task that has ended: nothing is left to cancel.
            TaskServiceError::Ended { .. } => ErrorCode::InvalidArguments,
            TaskServiceError::CannotCancel { .. } => ErrorCode::Unsupported,
            TaskServiceError::Task(e) => e.wire_code(),
        }
    }
    fn detail(&self) -> Option<&'static str> {
        Some(self.code())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_cross_as_code_and_message() {
        let e = BridgeError::new(ErrorCode::ChangedOnDisk, "changed");
        assert_eq!(
            serde_json::to_value(&e).unwrap(),
            serde_json::json!({"code": "changed-on-disk", "message": "changed", "detail": null})
        );
    }

    #[test]
    fn a_core_error_keeps_its_text_and_gets_its_code() {
        let e = BridgeError::from(EditError::Unknown("web".into()));
        assert_eq!(
            serde_json::to_value(&e).unwrap(),
            serde_json::json!({"code": "not-found", "message": "there is no server named \"web\"",
                               "detail": "unknown-server"})
        );
        let e = BridgeError::from(ImportError::Changed);
        assert_eq!(e.code, ErrorCode::ChangedOnDisk);
    }

    #[test]
    fn a_sign_in_error_crosses_with_the_core_code_as_detail() {
        let e = BridgeError::from(SignInError::LocalSignOut("local".into()));
        assert_eq!(
            serde_json::to_value(&e).unwrap(),
            serde_json::json!({"code": "invalid-arguments",
                               "message": "server \"local\" is a local (stdio) server; there is no sign-in to forget",
                               "detail": "local-server"})
        );
        let e = BridgeError::from(SignInError::Auth(AuthError::Credentials("locked".into())));
        assert_eq!(
            (e.code, e.detail.as_deref()),
            (ErrorCode::Io, Some("credentials-failed"))
        );
    }

    #[test]
    fn a_task_error_crosses_with_its_code() {
        let e = BridgeError::from(TaskServiceError::CannotCancel { server: "s".into() });
        assert_eq!(
            (e.code, e.detail.as_deref()),
            (ErrorCode::Unsupported, Some("cannot-cancel"))
        );
        let e = BridgeError::from(TaskServiceError::Task(TaskError::Unknown {
            task_id: "t".into(),
            detail: "gone".into(),
        }));
        assert_eq!(
            (e.code, e.detail.as_deref()),
            (ErrorCode::NotFound, Some("unknown-task"))
        );
    }
}
