//! The OS keychain backend: one entry per server's tokens and per client registration,
//! filed under [`KEYCHAIN_SERVICE`], each holding the JSON of what is kept. Keychain
//! errors are described without the stored value (some carry its bytes).

use std::time::Duration;

use super::error::NAME;
use super::{CredentialError, Key, KEYCHAIN_SERVICE};

pub struct Keychain;

fn account(key: &Key<'_>) -> String {
    match key {
        Key::Tokens(resource) => format!("tokens {resource}"),
        Key::Client(issuer) => format!("client {issuer}"),
        Key::Provider(provider) => format!("provider-key {provider}"),
        Key::ServerSecret(key) => format!("server-secret {key}"),
    }
}

fn entry(key: &Key<'_>) -> Result<keyring::Entry, CredentialError> {
    keyring::Entry::new(KEYCHAIN_SERVICE, &account(key)).map_err(|e| {
        CredentialError::KeychainUnusable {
            reason: describe(&e),
        }
    })
}

impl Keychain {
    pub fn get(&self, key: &Key<'_>) -> Result<Option<serde_json::Value>, CredentialError> {
        match entry(key)?.get_password() {
            Ok(text) => Ok(serde_json::from_str(&text).ok()),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(e) => Err(CredentialError::KeychainRead {
                reason: describe(&e),
            }),
        }
    }

    /// Sets (Some) or deletes (None) an entry; `Ok(true)` when it existed before.
    pub fn put(
        &self,
        key: &Key<'_>,
        value: Option<serde_json::Value>,
    ) -> Result<bool, CredentialError> {
        let e = entry(key)?;
        let existed = match e.get_password() {
            Ok(_) => true,
            Err(keyring::Error::NoEntry) => false,
            Err(err) => {
                return Err(CredentialError::KeychainRead {
                    reason: describe(&err),
                })
            }
        };
        let result = match value {
            Some(v) => e.set_password(&v.to_string()),
            None if existed => e.delete_credential(),
            None => Ok(()),
        };
        match result {
            Ok(()) | Err(keyring::Error::NoEntry) => Ok(existed),
            Err(err) => Err(CredentialError::KeychainWrite {
                reason: describe(&err),
            }),
        }
    }
}

/// A keychain error in words, never with the stored value.
fn describe(e: &keyring::Error) -> String {
    match e {
        keyring::Error::PlatformFailure(p) => p.to_string(),
        keyring::Error::NoStorageAccess(p) => format!("no access ({p})"),
        keyring::Error::NoEntry => "no such entry".into(),
        keyring::Error::BadEncoding(_) | keyring::Error::BadDataFormat(..) => {
            "the stored value is not readable".into()
        }
        keyring::Error::NoDefaultStore => "no keychain is available".into(),
        keyring::Error::Invalid(what, why) => format!("invalid {what}: {why}"),
        keyring::Error::TooLong(what, max) => format!("{what} is longer than {max}"),
        _ => "the keychain refused the request".into(),
    }
}

/// Whether the keychain answers within `timeout`: a D-Bus session must exist (Linux) and
/// a harmless lookup must come back. The lookup runs on its own thread, so a keychain
/// that hangs (a Secret Service that never starts) only costs `timeout`.
pub fn probe(timeout: Duration) -> Result<(), CredentialError> {
    #[cfg(all(unix, not(target_os = "macos")))]
    {
        let has_bus = std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_some_and(|a| !a.is_empty())
            || std::env::var_os("XDG_RUNTIME_DIR")
                .is_some_and(|d| std::path::Path::new(&d).join("bus").exists());
        if !has_bus {
            return Err(CredentialError::NoKeychain("no D-Bus session".into()));
        }
    }
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("keychain-probe".into())
        .spawn(move || {
            let outcome = keyring::Entry::new(KEYCHAIN_SERVICE, "probe")
                .and_then(|e| e.get_password().map(|_| ()))
                .or_else(|e| match e {
                    keyring::Error::NoEntry => Ok(()),
                    keyring::Error::NoDefaultStore => Err(format!("the {NAME} is not running")),
                    other => Err(describe(&other)),
                });
            let _ = tx.send(outcome);
        })
        .map_err(|e| {
            CredentialError::NoKeychain(format!("cannot start the keychain probe: {e}"))
        })?;
    match rx.recv_timeout(timeout) {
        Ok(outcome) => outcome.map_err(CredentialError::NoKeychain),
        Err(_) => Err(CredentialError::NoKeychain(format!(
            "the {NAME} did not answer within {} s",
            timeout.as_secs()
        ))),
    }
}
