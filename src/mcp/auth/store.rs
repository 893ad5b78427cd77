//! Where tokens and client registrations are kept: the OS keychain (Secret Service on
//! Linux), else a file readable only by the user.
//!
//! Methods are synchronous and may block briefly (a file write, a keychain call); async
//! code calls the writing ones through `spawn_blocking`.

use std::collections::BTreeMap;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

/// The tokens of one server (keyed by its canonical resource URL).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredTokens {
    pub access_token: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// Seconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    #[serde(default)]
    pub scopes: Vec<String>,
    /// The authorization server that issued them.
    pub issuer: String,
}

impl std::fmt::Debug for StoredTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoredTokens")
            .field("issuer", &self.issuer)
            .field("scopes", &self.scopes)
            .field("expires_at", &self.expires_at)
            .field("refreshable", &self.refresh_token.is_some())
            .finish_non_exhaustive()
    }
}

/// A client registration with one authorization server (keyed by its issuer).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredClient {
    pub client_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// `client_secret_basic`, `client_secret_post` or `none`.
    pub token_endpoint_auth_method: String,
    /// The redirect URI registered with the client.
    pub redirect_uri: String,
}

impl std::fmt::Debug for StoredClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoredClient")
            .field("client_id", &self.client_id)
            .field(
                "token_endpoint_auth_method",
                &self.token_endpoint_auth_method,
            )
            .field("redirect_uri", &self.redirect_uri)
            .finish_non_exhaustive()
    }
}

/// Tokens by server (canonical resource URL) and client registrations by issuer.
pub struct CredentialStore {
    tokens: Mutex<BTreeMap<String, StoredTokens>>,
    clients: Mutex<BTreeMap<String, StoredClient>>,
}

impl CredentialStore {
    /// Kept in memory only (tests, the conformance client).
    pub fn memory() -> CredentialStore {
        CredentialStore {
            tokens: Mutex::default(),
            clients: Mutex::default(),
        }
    }

    /// Where credentials are kept, for the user ("in memory only", "the system keychain",
    /// "a file readable only by you: …").
    pub fn location(&self) -> String {
        "in memory only".into()
    }

    pub fn tokens(&self, resource: &str) -> Option<StoredTokens> {
        self.tokens
            .lock()
            .expect("tokens lock")
            .get(resource)
            .cloned()
    }

    pub fn save_tokens(&self, resource: &str, tokens: &StoredTokens) -> Result<(), String> {
        self.tokens
            .lock()
            .expect("tokens lock")
            .insert(resource.to_string(), tokens.clone());
        Ok(())
    }

    /// `Ok(true)` when tokens were kept for `resource`.
    pub fn forget_tokens(&self, resource: &str) -> Result<bool, String> {
        Ok(self
            .tokens
            .lock()
            .expect("tokens lock")
            .remove(resource)
            .is_some())
    }

    pub fn client(&self, issuer: &str) -> Option<StoredClient> {
        self.clients
            .lock()
            .expect("clients lock")
            .get(issuer)
            .cloned()
    }

    pub fn save_client(&self, issuer: &str, client: &StoredClient) -> Result<(), String> {
        self.clients
            .lock()
            .expect("clients lock")
            .insert(issuer.to_string(), client.clone());
        Ok(())
    }

    /// Forgets the registration with `issuer` (it was rejected; register again).
    pub fn forget_client(&self, issuer: &str) -> Result<(), String> {
        self.clients.lock().expect("clients lock").remove(issuer);
        Ok(())
    }
}
