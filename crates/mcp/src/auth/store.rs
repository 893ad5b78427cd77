//! Where tokens and client registrations are kept: the OS keychain (Secret Service on
//! Linux, the Keychain on macOS, the Credential Manager on Windows), else a file readable
//! only by the user in the data directory.
//!
//! [`CredentialStore::open`] picks the keychain when one answers within
//! [`KEYCHAIN_PROBE_TIMEOUT`] (headless machines have none: no D-Bus session, or no Secret
//! Service on it), else the file; [`CREDENTIALS_ENV`] forces either. Every read goes to the
//! backend, so two processes (the CLI and the desktop app) see each other's sign-ins.
//!
//! Secrets never appear in `Debug` output, logs or error messages.
//!
//! Methods are synchronous and may block briefly (a file write, a keychain call); async
//! code calls the writing ones through `spawn_blocking`.

mod error;
mod file;
mod keychain;

pub use error::CredentialError;

use parking_lot::Mutex;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Environment variable choosing where credentials are kept: `file`, `keychain` or
/// `memory` (nothing survives the process); unset or `auto`: the keychain when reachable,
/// else the file.
pub const CREDENTIALS_ENV: &str = "HARNESS9_CREDENTIALS";

/// Name of the credentials file in the data directory (used when no keychain answers).
pub const CREDENTIALS_FILE: &str = "credentials.json";

/// How long [`CredentialStore::open`] waits for the keychain to answer before it keeps
/// credentials in the file instead.
pub const KEYCHAIN_PROBE_TIMEOUT: Duration = Duration::from_secs(3);

/// The service name credentials are filed under in the keychain.
pub const KEYCHAIN_SERVICE: &str = "harness9";

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
    /// When they were issued, in seconds since the Unix epoch (with `expires_at`, the
    /// access token's lifetime); unknown for tokens kept by older versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issued_at: Option<u64>,
    #[serde(default)]
    pub scopes: Vec<String>,
    /// The authorization server that issued them.
    pub issuer: String,
    /// The token endpoint of that server: the only place the refresh token (and the
    /// client's secret) is ever sent. Unknown for tokens kept by older versions (then the
    /// issuer alone decides).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint: Option<String>,
}

impl std::fmt::Debug for StoredTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoredTokens")
            .field("issuer", &self.issuer)
            .field("token_endpoint", &self.token_endpoint)
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

/// What is kept: tokens by server (canonical resource URL), registrations by issuer.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Kept {
    #[serde(default)]
    tokens: BTreeMap<String, StoredTokens>,
    #[serde(default)]
    clients: BTreeMap<String, StoredClient>,
    /// API keys of model providers, by provider name (`anthropic`, `openai`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    provider_keys: BTreeMap<String, Secret>,
    /// Values servers' entries take from the store (`${input:NAME}`), by a key the app
    /// makes of the entry's scope, project, server and input name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    server_secrets: BTreeMap<String, Secret>,
}

/// A secret kept as a plain string that never shows in `Debug` output.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
struct Secret(String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("***")
    }
}

enum Backend {
    Memory(Mutex<Kept>),
    File(file::FileBackend),
    Keychain(keychain::Keychain),
}

/// Tokens by server (canonical resource URL) and client registrations by issuer.
pub struct CredentialStore {
    backend: Backend,
    /// Sign-outs so far in this process, by resource. Its lock makes a checked save
    /// ([`CredentialStore::save_tokens_if`]) one step with respect to a sign-out.
    sign_outs: Mutex<HashMap<String, u64>>,
}

impl std::fmt::Debug for CredentialStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CredentialStore")
            .field("location", &self.location())
            .finish_non_exhaustive()
    }
}

/// One entry of the store: the key the backends file it under.
pub(crate) enum Key<'a> {
    Tokens(&'a str),
    Client(&'a str),
    /// A model provider's API key, by provider name.
    Provider(&'a str),
    /// A value a server's entry takes from the store, by the app's key.
    ServerSecret(&'a str),
}

/// Whether the OS keychain answers within `timeout` (`Err` says why not), as
/// [`CredentialStore::open`] decides.
pub fn probe_keychain(timeout: Duration) -> Result<(), CredentialError> {
    keychain::probe(timeout)
}

impl CredentialStore {
    /// Kept in memory only (tests, the conformance client).
    pub fn memory() -> CredentialStore {
        CredentialStore::on(Backend::Memory(Mutex::default()))
    }

    fn on(backend: Backend) -> CredentialStore {
        CredentialStore {
            backend,
            sign_outs: Mutex::default(),
        }
    }

    /// Kept in `path`, a JSON file created readable and writable only by the user.
    pub fn file(path: PathBuf) -> CredentialStore {
        CredentialStore::on(Backend::File(file::FileBackend::new(path)))
    }

    /// The OS keychain or, when none answers (or [`CREDENTIALS_ENV`] says `file`),
    /// [`CREDENTIALS_FILE`] in `data_dir`. May wait up to [`KEYCHAIN_PROBE_TIMEOUT`].
    pub fn open(data_dir: &Path) -> CredentialStore {
        Self::open_as(
            &std::env::var(CREDENTIALS_ENV).unwrap_or_default(),
            data_dir,
        )
    }

    /// [`CredentialStore::open`] with `choice` in place of [`CREDENTIALS_ENV`].
    pub fn open_as(choice: &str, data_dir: &Path) -> CredentialStore {
        let in_file = || CredentialStore::file(data_dir.join(CREDENTIALS_FILE));
        match choice.trim() {
            "file" => return in_file(),
            "memory" => return CredentialStore::memory(),
            "keychain" => return CredentialStore::on(Backend::Keychain(keychain::Keychain)),
            "" | "auto" => {}
            other => tracing::warn!(
                "{CREDENTIALS_ENV}={other:?} is not one of file, keychain, memory or auto; choosing automatically"
            ),
        }
        match keychain::probe(KEYCHAIN_PROBE_TIMEOUT) {
            Ok(()) => CredentialStore::on(Backend::Keychain(keychain::Keychain)),
            Err(why) => {
                tracing::info!("no keychain available ({why}); keeping credentials in a file");
                in_file()
            }
        }
    }

    /// Where credentials are kept, for the user ("in memory only", "the system keychain
    /// (…)", "a file readable only by you: …").
    pub fn location(&self) -> String {
        match &self.backend {
            Backend::Memory(_) => "in memory only".into(),
            Backend::File(f) => format!("a file readable only by you: {}", f.path().display()),
            Backend::Keychain(_) => format!("the system keychain ({})", error::NAME),
        }
    }

    /// The credentials file, when that is where they are kept.
    pub fn file_path(&self) -> Option<&Path> {
        match &self.backend {
            Backend::File(f) => Some(f.path()),
            Backend::Memory(_) | Backend::Keychain(_) => None,
        }
    }

    /// Something the user should know about the store (the file was readable by others
    /// and has been made private), once found.
    pub fn warning(&self) -> Option<String> {
        match &self.backend {
            Backend::File(f) => f.warning(),
            Backend::Memory(_) | Backend::Keychain(_) => None,
        }
    }

    pub fn tokens(&self, resource: &str) -> Option<StoredTokens> {
        self.get(Key::Tokens(resource))
            .and_then(|v| serde_json::from_value(v).ok())
    }

    pub fn save_tokens(
        &self,
        resource: &str,
        tokens: &StoredTokens,
    ) -> Result<(), CredentialError> {
        let value = to_value(tokens)?;
        self.put(Key::Tokens(resource), Some(value)).map(|_| ())
    }

    /// Signs out of `resource`: forgets its tokens. `Ok(true)` when tokens were kept.
    pub fn forget_tokens(&self, resource: &str) -> Result<bool, CredentialError> {
        let mut sign_outs = self.sign_outs.lock();
        *sign_outs.entry(resource.to_string()).or_default() += 1;
        self.put(Key::Tokens(resource), None)
    }

    /// How many times this process signed out of `resource` so far; give it back to
    /// [`CredentialStore::save_tokens_if`].
    pub fn sign_outs(&self, resource: &str) -> u64 {
        let sign_outs = self.sign_outs.lock();
        sign_outs.get(resource).copied().unwrap_or(0)
    }

    /// Saves `tokens` for `resource` only when this process has not signed out of it since
    /// [`CredentialStore::sign_outs`] said `since`, and the store still holds `expected`
    /// (what the caller last read or wrote): a refresh or sign-in that ends after a
    /// sign-out, or after someone else kept newer tokens, must not bring old ones back.
    /// `Ok(false)`: not saved.
    pub fn save_tokens_if(
        &self,
        resource: &str,
        tokens: &StoredTokens,
        expected: Option<&StoredTokens>,
        since: u64,
    ) -> Result<bool, CredentialError> {
        let sign_outs = self.sign_outs.lock();
        if sign_outs.get(resource).copied().unwrap_or(0) != since {
            return Ok(false);
        }
        self.swap_tokens(resource, expected, Some(tokens))
    }

    /// Forgets the tokens of `resource` only when they are still `expected` (the server
    /// refused them; tokens someone else has kept meanwhile stay). `Ok(true)` when forgotten.
    pub fn forget_tokens_if(
        &self,
        resource: &str,
        expected: &StoredTokens,
    ) -> Result<bool, CredentialError> {
        let _sign_outs = self.sign_outs.lock();
        self.swap_tokens(resource, Some(expected), None)
    }

    /// Replaces the tokens of `resource` with `new` (None: forgets them) when the store
    /// holds `expected`, as one step: in the file, under its lock, so another process
    /// cannot write between the comparison and the write. `Ok(true)` when replaced. The
    /// keychain has no lock to take: there it is a read, then a write.
    fn swap_tokens(
        &self,
        resource: &str,
        expected: Option<&StoredTokens>,
        new: Option<&StoredTokens>,
    ) -> Result<bool, CredentialError> {
        let swap = |kept: &mut Kept| {
            if kept.tokens.get(resource) != expected {
                return false;
            }
            match new {
                Some(t) => kept.tokens.insert(resource.to_string(), t.clone()),
                None => kept.tokens.remove(resource),
            };
            true
        };
        match &self.backend {
            Backend::Memory(m) => Ok(swap(&mut m.lock())),
            Backend::File(f) => f.update(swap),
            Backend::Keychain(_) => {
                if self.tokens(resource).as_ref() != expected {
                    return Ok(false);
                }
                let value = new.map(to_value).transpose()?;
                self.put(Key::Tokens(resource), value).map(|_| true)
            }
        }
    }

    pub fn client(&self, issuer: &str) -> Option<StoredClient> {
        self.get(Key::Client(issuer))
            .and_then(|v| serde_json::from_value(v).ok())
    }

    pub fn save_client(&self, issuer: &str, client: &StoredClient) -> Result<(), CredentialError> {
        let value = to_value(client)?;
        self.put(Key::Client(issuer), Some(value)).map(|_| ())
    }

    /// Forgets the registration with `issuer` (it was rejected; register again).
    pub fn forget_client(&self, issuer: &str) -> Result<(), CredentialError> {
        self.put(Key::Client(issuer), None).map(|_| ())
    }

    /// The API key kept for a model provider (`anthropic`, `openai`).
    pub fn provider_key(&self, provider: &str) -> Option<String> {
        match self.get(Key::Provider(provider)) {
            Some(serde_json::Value::String(k)) => Some(k),
            _ => None,
        }
    }

    /// Keeps (Some) or forgets (None) the API key of a model provider.
    pub fn save_provider_key(
        &self,
        provider: &str,
        key: Option<&str>,
    ) -> Result<(), CredentialError> {
        let value = key.map(|k| serde_json::Value::String(k.to_string()));
        self.put(Key::Provider(provider), value).map(|_| ())
    }

    /// A value a server's entry takes from the store (`key`: the app's name for it).
    pub fn server_secret(&self, key: &str) -> Option<String> {
        match self.get(Key::ServerSecret(key)) {
            Some(serde_json::Value::String(v)) => Some(v),
            _ => None,
        }
    }

    /// Whether the store answers for server secrets, and whether one is kept under `key`
    /// (`Err`: the store could not be read, e.g. a locked keychain).
    pub fn has_server_secret(&self, key: &str) -> Result<bool, CredentialError> {
        let k = Key::ServerSecret(key);
        match &self.backend {
            Backend::Memory(m) => Ok(kept_get(&m.lock(), &k).is_some()),
            Backend::File(f) => Ok(kept_get(&f.load()?, &k).is_some()),
            Backend::Keychain(kc) => Ok(kc.get(&k)?.is_some()),
        }
    }

    /// Keeps (Some) or forgets (None) a value a server's entry takes from the store;
    /// `Ok(true)` when one was kept before.
    pub fn save_server_secret(
        &self,
        key: &str,
        value: Option<&str>,
    ) -> Result<bool, CredentialError> {
        let value = value.map(|v| serde_json::Value::String(v.to_string()));
        self.put(Key::ServerSecret(key), value)
    }

    fn get(&self, key: Key<'_>) -> Option<serde_json::Value> {
        match &self.backend {
            Backend::Memory(m) => kept_get(&m.lock(), &key),
            Backend::File(f) => match f.load() {
                Ok(kept) => kept_get(&kept, &key),
                Err(e) => {
                    tracing::warn!("{e}");
                    None
                }
            },
            Backend::Keychain(k) => match k.get(&key) {
                Ok(v) => v,
                Err(e) => {
                    tracing::warn!("{e}");
                    None
                }
            },
        }
    }

    /// Sets (Some) or removes (None) one entry; `Ok(true)` when it was there before.
    fn put(&self, key: Key<'_>, value: Option<serde_json::Value>) -> Result<bool, CredentialError> {
        match &self.backend {
            Backend::Memory(m) => Ok(kept_put(&mut m.lock(), &key, value)),
            Backend::File(f) => f.update(|kept| kept_put(kept, &key, value)),
            Backend::Keychain(k) => k.put(&key, value),
        }
    }
}

/// What is kept, as the JSON the backends file.
fn to_value(v: &impl Serialize) -> Result<serde_json::Value, CredentialError> {
    serde_json::to_value(v).map_err(|e| CredentialError::Encode(e.to_string()))
}

fn kept_get(kept: &Kept, key: &Key<'_>) -> Option<serde_json::Value> {
    match key {
        Key::Tokens(r) => kept
            .tokens
            .get(*r)
            .and_then(|t| serde_json::to_value(t).ok()),
        Key::Client(i) => kept
            .clients
            .get(*i)
            .and_then(|c| serde_json::to_value(c).ok()),
        Key::Provider(p) => kept
            .provider_keys
            .get(*p)
            .map(|k| serde_json::Value::String(k.0.clone())),
        Key::ServerSecret(k) => kept
            .server_secrets
            .get(*k)
            .map(|v| serde_json::Value::String(v.0.clone())),
    }
}

fn kept_put(kept: &mut Kept, key: &Key<'_>, value: Option<serde_json::Value>) -> bool {
    match (key, value) {
        (Key::Tokens(r), Some(v)) => match serde_json::from_value(v) {
            Ok(t) => kept.tokens.insert(r.to_string(), t).is_some(),
            Err(_) => false,
        },
        (Key::Tokens(r), None) => kept.tokens.remove(*r).is_some(),
        (Key::Client(i), Some(v)) => match serde_json::from_value(v) {
            Ok(c) => kept.clients.insert(i.to_string(), c).is_some(),
            Err(_) => false,
        },
        (Key::Client(i), None) => kept.clients.remove(*i).is_some(),
        (Key::Provider(p), Some(serde_json::Value::String(k))) => kept
            .provider_keys
            .insert(p.to_string(), Secret(k))
            .is_some(),
        (Key::Provider(_), Some(_)) => false,
        (Key::Provider(p), None) => kept.provider_keys.remove(*p).is_some(),
        (Key::ServerSecret(k), Some(serde_json::Value::String(v))) => kept
            .server_secrets
            .insert(k.to_string(), Secret(v))
            .is_some(),
        (Key::ServerSecret(_), Some(_)) => false,
        (Key::ServerSecret(k), None) => kept.server_secrets.remove(*k).is_some(),
    }
}

#[cfg(test)]
mod tests;
