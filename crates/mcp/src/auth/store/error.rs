//! Why credentials could not be read, kept or forgotten. No variant ever carries a secret:
//! the texts name files and the keychain, never what is kept in them.

/// The keychain's name, for the user.
#[cfg(target_os = "macos")]
pub const NAME: &str = "macOS Keychain";
#[cfg(target_os = "windows")]
pub const NAME: &str = "Windows Credential Manager";
#[cfg(not(any(target_os = "macos", target_os = "windows")))]
pub const NAME: &str = "Secret Service";

/// What to do when the keychain does not work.
const KEYCHAIN_HINT: &str = "unlock the keychain, or set HARNESS9_CREDENTIALS=file to keep credentials in a file readable only by you";

/// Why the credential store could not do what was asked; the text says what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CredentialError {
    #[error("cannot read the credentials file {path}: {reason}")]
    ReadFile { path: String, reason: String },
    /// The file is not valid JSON; `position` is where (never the text around it).
    #[error("the credentials file {path} is damaged ({position}); delete it and sign in again")]
    Damaged { path: String, position: String },
    #[error("cannot create {dir} for the credentials file: {reason}")]
    CreateDir { dir: String, reason: String },
    #[error("cannot write the credentials file {path}: {reason}")]
    WriteFile { path: String, reason: String },
    #[error("cannot open the lock file {path}: {reason}")]
    OpenLock { path: String, reason: String },
    #[error("cannot lock {path}: {reason}")]
    Lock { path: String, reason: String },
    #[error("the {NAME} cannot be used: {reason}; {KEYCHAIN_HINT}")]
    KeychainUnusable { reason: String },
    #[error("cannot read from the {NAME}: {reason}; {KEYCHAIN_HINT}")]
    KeychainRead { reason: String },
    #[error("cannot write to the {NAME}: {reason}; {KEYCHAIN_HINT}")]
    KeychainWrite { reason: String },
    /// The keychain does not answer (no D-Bus session, not running, too slow): the text
    /// says which.
    #[error("{0}")]
    NoKeychain(String),
    /// What was to be kept could not be written as JSON.
    #[error("{0}")]
    Encode(String),
    /// The blocking task that talked to the store ended early.
    #[error("{0}")]
    Interrupted(String),
}

impl CredentialError {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        match self {
            CredentialError::ReadFile { .. } => "credentials-unreadable",
            CredentialError::Damaged { .. } => "credentials-damaged",
            CredentialError::CreateDir { .. }
            | CredentialError::WriteFile { .. }
            | CredentialError::OpenLock { .. } => "credentials-unwritable",
            CredentialError::Lock { .. } => "credentials-locked",
            CredentialError::KeychainUnusable { .. } | CredentialError::NoKeychain(_) => {
                "keychain-unavailable"
            }
            CredentialError::KeychainRead { .. } | CredentialError::KeychainWrite { .. } => {
                "keychain-failed"
            }
            CredentialError::Encode(_) | CredentialError::Interrupted(_) => "internal",
        }
    }
}
