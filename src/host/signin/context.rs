//! The user's credential store and the sign-in settings, as the app opens them.

use std::sync::Arc;

use crate::mcp::auth::{self, AuthContext, CredentialStore};

impl AuthContext {
    /// The user's credential store ([`CredentialStore::open`] in the data directory) and
    /// the app settings from the environment. May wait briefly for the keychain.
    pub fn open_default() -> AuthContext {
        AuthContext {
            store: Arc::new(CredentialStore::open(&crate::trust::data_dir())),
            settings: auth::AuthSettings::from_env(),
        }
    }

    /// Credentials kept in memory only (tests).
    pub fn memory() -> AuthContext {
        AuthContext {
            store: Arc::new(CredentialStore::memory()),
            settings: auth::AuthSettings::default(),
        }
    }
}

impl std::fmt::Debug for AuthContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthContext")
            .field("store", &self.store.location())
            .field("settings", &self.settings)
            .finish()
    }
}

/// Environment variable with the URL of harness9's Client ID Metadata Document
/// ([`auth::AuthSettings::client_metadata_url`]).
pub const CLIENT_METADATA_URL_ENV: &str = "HARNESS9_CLIENT_METADATA_URL";

impl auth::AuthSettings {
    /// The settings from the environment ([`CLIENT_METADATA_URL_ENV`]).
    pub fn from_env() -> auth::AuthSettings {
        auth::AuthSettings {
            client_metadata_url: std::env::var(CLIENT_METADATA_URL_ENV)
                .ok()
                .filter(|u| !u.trim().is_empty()),
        }
    }
}
