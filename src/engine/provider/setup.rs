//! Provider settings as a settings pane sees and edits them (the desktop app's Settings →
//! Model provider, the terminal UI's `/model`): which provider, model and base URL, where
//! the API key comes from, and a connection test.
//!
//! The key is never shown back: [`ProviderView`] says only where it is ([`KeyState`]). A key
//! typed in a pane goes to the credential store (the OS keychain) and nowhere else; the
//! settings file then says `"keyInKeychain": true`. Everything here may block (the settings
//! file, the keychain): the façade runs it on tokio's blocking pool.
//!
//! Engines re-read the settings when a turn starts, so a change applies to the next turn.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use serde::{Deserialize, Serialize};

use super::settings::{
    self, ApiKey, FileProvider, ProviderKind, ProviderOverrides, ProviderSettings, SettingsError,
    ANTHROPIC_KEY_ENV, ANTHROPIC_URL_ENV, DEFAULT_ANTHROPIC_BASE_URL, DEFAULT_ANTHROPIC_MODEL,
    DEFAULT_OPENAI_BASE_URL, DEFAULT_OPENAI_MODEL, MODEL_ENV, OPENAI_KEY_ENV, OPENAI_URL_ENV,
    PROVIDER_ENV,
};
use super::{ChatRequest, ProviderError, RequestOptions, RetryPolicy, StreamEvent};
use crate::engine::message::Message;
use crate::mcp::auth::CredentialStore;

/// How long a connection test may take in all before it reports no answer.
pub const CONNECTION_TEST_TIMEOUT: Duration = Duration::from_secs(15);

/// Where the API key comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum KeySource {
    /// An environment variable, by name.
    Env { var: String },
    /// The credential store (the OS keychain).
    Keychain,
}

/// Whether the key is there, never what it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "state", rename_all = "camelCase")]
pub enum KeyState {
    /// Kept in the credential store.
    Keychain,
    /// Set in this environment variable.
    Env { var: String },
    /// Not found where the source says.
    Missing,
}

/// The provider settings as a pane shows them. Holds no key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ProviderView {
    pub provider: ProviderKind,
    pub model: String,
    /// Empty: the provider's default ([`ProviderView::default_base_url`]).
    pub base_url: String,
    pub default_model: String,
    pub default_base_url: String,
    pub key_source: KeySource,
    pub key: KeyState,
    /// The key's state in words: "set in keychain", "from $VAR", "missing".
    pub key_text: String,
    /// Where a key typed in the pane is kept, in words.
    pub key_store: String,
    /// Environment variables that win over these settings in this process.
    pub overridden_by: Vec<String>,
    pub settings_path: String,
    /// The settings file could not be read (the view shows defaults meanwhile).
    pub error: Option<String>,
}

/// A change from a pane. Empty model or base URL: the provider's default.
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ProviderChange {
    pub provider: ProviderKind,
    #[serde(default)]
    pub model: String,
    #[serde(default)]
    pub base_url: String,
    pub key_source: KeySource,
    /// A new key to keep in the credential store (with [`KeySource::Keychain`]); `None`
    /// keeps the one there.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(as = "Option<String>", optional))]
    pub api_key: Option<ApiKey>,
}

impl std::fmt::Debug for ProviderChange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderChange")
            .field("provider", &self.provider)
            .field("model", &self.model)
            .field("base_url", &self.base_url)
            .field("key_source", &self.key_source)
            .field("api_key", &self.api_key.as_ref().map(|_| "***"))
            .finish()
    }
}

/// What a connection test found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ConnectionCheck {
    pub ok: bool,
    /// What worked, or what failed and what to do.
    pub message: String,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub elapsed_ms: u64,
}

fn defaults(kind: ProviderKind) -> (&'static str, &'static str, &'static str) {
    match kind {
        ProviderKind::Anthropic => (
            DEFAULT_ANTHROPIC_MODEL,
            DEFAULT_ANTHROPIC_BASE_URL,
            ANTHROPIC_KEY_ENV,
        ),
        ProviderKind::OpenAi => (
            DEFAULT_OPENAI_MODEL,
            DEFAULT_OPENAI_BASE_URL,
            OPENAI_KEY_ENV,
        ),
    }
}

fn set_env(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| !v.trim().is_empty())
}

/// The settings as the file at `file` (see [`settings::settings_path`]) has them, with what
/// the environment overrides.
pub fn view(file: &Path, keys: &CredentialStore) -> ProviderView {
    let (section, error) = match settings::load_provider_section_at(file) {
        Ok(s) => (s.unwrap_or_default(), None),
        Err(e) => (FileProvider::default(), Some(e.to_string())),
    };
    let mut v = view_of(&section, keys, error);
    v.settings_path = file.display().to_string();
    v
}

fn view_of(section: &FileProvider, keys: &CredentialStore, error: Option<String>) -> ProviderView {
    let kind = section
        .kind
        .as_deref()
        .and_then(ProviderKind::parse)
        .unwrap_or(ProviderKind::Anthropic);
    let (default_model, default_base_url, default_var) = defaults(kind);
    let (key_source, key) = if section.key_in_keychain == Some(true) {
        let state = match keys.provider_key(kind.name()) {
            Some(_) => KeyState::Keychain,
            None => KeyState::Missing,
        };
        (KeySource::Keychain, state)
    } else {
        let var = section
            .api_key_env
            .clone()
            .unwrap_or_else(|| default_var.to_string());
        let state = if set_env(&var) {
            KeyState::Env { var: var.clone() }
        } else {
            KeyState::Missing
        };
        (KeySource::Env { var }, state)
    };
    let key_text = match &key {
        KeyState::Keychain => "set in keychain".to_string(),
        KeyState::Env { var } => format!("from ${var}"),
        KeyState::Missing => "missing".to_string(),
    };
    let url_var = match kind {
        ProviderKind::Anthropic => ANTHROPIC_URL_ENV,
        ProviderKind::OpenAi => OPENAI_URL_ENV,
    };
    let overridden_by = [PROVIDER_ENV, MODEL_ENV, url_var]
        .into_iter()
        .filter(|v| set_env(v))
        .map(str::to_string)
        .collect();
    ProviderView {
        provider: kind,
        model: section.model.clone().unwrap_or_default(),
        base_url: section.base_url.clone().unwrap_or_default(),
        default_model: default_model.into(),
        default_base_url: default_base_url.into(),
        key_source,
        key,
        key_text,
        key_store: keys.location(),
        overridden_by,
        settings_path: settings::settings_path().display().to_string(),
        error,
    }
}

/// The file section a change comes to, keeping the fields a pane does not edit.
fn section_for(old: FileProvider, change: &ProviderChange) -> FileProvider {
    let text = |s: &str| Some(s.trim().to_string()).filter(|s| !s.is_empty());
    let (api_key_env, key_in_keychain) = match &change.key_source {
        KeySource::Env { var } => (text(var), None),
        KeySource::Keychain => (None, Some(true)),
    };
    FileProvider {
        kind: Some(change.provider.name().to_string()),
        model: text(&change.model),
        base_url: text(&change.base_url).map(|u| u.trim_end_matches('/').to_string()),
        api_key_env,
        key_in_keychain,
        ..old
    }
}

/// Keeps a change: the key (when one is given) in the credential store, the rest in the
/// settings file (atomically, keeping every other key).
pub fn save(
    file: &Path,
    keys: &CredentialStore,
    change: &ProviderChange,
) -> Result<ProviderView, SettingsError> {
    if let Some(var) = match &change.key_source {
        KeySource::Env { var } => Some(var.trim()),
        KeySource::Keychain => None,
    } {
        if var.is_empty() || !var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(SettingsError::BadFile {
                path: file.display().to_string(),
                detail: format!(
                    "\"{var}\" is not an environment variable name (letters, digits and _ only)"
                ),
            });
        }
    }
    if let (Some(key), KeySource::Keychain) = (&change.api_key, &change.key_source) {
        let key = key.expose().trim();
        if !key.is_empty() {
            keys.save_provider_key(change.provider.name(), Some(key))
                .map_err(|e| SettingsError::KeyStore {
                    location: keys.location(),
                    detail: e.to_string(),
                })?;
        }
    }
    let old = settings::load_provider_section_at(file)?.unwrap_or_default();
    settings::save_provider_section_at(file, &section_for(old, change))?;
    Ok(view(file, keys))
}

/// Forgets the key kept for a provider.
pub fn forget_key(
    file: &Path,
    keys: &CredentialStore,
    provider: ProviderKind,
) -> Result<ProviderView, SettingsError> {
    keys.save_provider_key(provider.name(), None)
        .map_err(|e| SettingsError::KeyStore {
            location: keys.location(),
            detail: e.to_string(),
        })?;
    Ok(view(file, keys))
}

/// The settings a connection test uses: the change (not yet kept) when given, else the
/// saved ones; the environment wins as it does for a turn.
pub fn settings_for_test(
    file: &Path,
    keys: Arc<CredentialStore>,
    change: Option<&ProviderChange>,
) -> Result<ProviderSettings, SettingsError> {
    let saved = settings::load_provider_section_at(file)?.unwrap_or_default();
    let overrides = ProviderOverrides {
        keys: Some(keys),
        settings_file: Some(file.to_path_buf()),
        ..ProviderOverrides::default()
    };
    match change {
        None => ProviderSettings::resolve_from(&saved, &overrides, None),
        Some(c) => {
            let key = match (&c.key_source, &c.api_key) {
                (KeySource::Keychain, Some(k)) if !k.expose().trim().is_empty() => {
                    Some(ApiKey::new(k.expose().trim()))
                }
                _ => None,
            };
            // The pane's choice of provider wins over HARNESS9_PROVIDER here: it is
            // what the user asked to test.
            let overrides = ProviderOverrides {
                provider: Some(c.provider.name().to_string()),
                ..overrides
            };
            ProviderSettings::resolve_from(&section_for(saved, c), &overrides, key)
        }
    }
}

/// Sends one minimal request (one short message, at most one output token, no retries)
/// and says whether the provider answered, within [`CONNECTION_TEST_TIMEOUT`].
pub async fn test_connection(mut settings: ProviderSettings) -> ConnectionCheck {
    settings.retry = RetryPolicy {
        max_retries: 0,
        ..settings.retry
    };
    settings.idle_timeout = CONNECTION_TEST_TIMEOUT;
    let started = Instant::now();
    let client = super::connect(&settings);
    let request = ChatRequest {
        system: None,
        messages: vec![Arc::new(Message::user_text("ping"))].into(),
        tools: Vec::new().into(),
        options: RequestOptions {
            max_tokens: Some(1),
            ..RequestOptions::default()
        },
    };
    let first = async {
        let mut stream = client.stream(request);
        loop {
            match stream.next().await {
                None => return Ok(()),
                Some(Ok(StreamEvent::Retrying { .. })) => {}
                // Any part of an answer shows that the key, URL and model work.
                Some(Ok(_)) => return Ok(()),
                Some(Err(e)) => return Err(e),
            }
        }
    };
    let outcome = tokio::time::timeout(CONNECTION_TEST_TIMEOUT, first).await;
    let elapsed_ms = started.elapsed().as_millis() as u64;
    let (ok, message) = match outcome {
        Ok(Ok(())) => (
            true,
            format!(
                "connected: {} answered with model {} at {}",
                settings.kind.name(),
                settings.model,
                settings.base_url
            ),
        ),
        Ok(Err(e)) => (false, explain(&settings, &e)),
        Err(_) => (
            false,
            format!(
                "no answer from {} within {} s; check the base URL and the network",
                settings.base_url,
                CONNECTION_TEST_TIMEOUT.as_secs()
            ),
        ),
    };
    ConnectionCheck {
        ok,
        message,
        elapsed_ms,
    }
}

/// A failed test in words that say what to change.
fn explain(s: &ProviderSettings, e: &ProviderError) -> String {
    let url = &s.base_url;
    match e {
        ProviderError::Unauthorized { status, detail, .. } => format!(
            "the key was refused ({status}: {detail}); check the API key{}",
            if s.api_key.is_none() {
                " (none is set)"
            } else {
                ""
            }
        ),
        ProviderError::Network { detail, .. } => {
            let d = detail.to_ascii_lowercase();
            if d.contains("connection refused") {
                format!("nothing answers at {url} (connection refused); check the base URL and that the server runs")
            } else if d.contains("dns") || d.contains("resolve") || d.contains("name or service") {
                format!("the host of {url} is not known ({detail}); check the base URL")
            } else {
                format!("could not reach {url}: {detail}")
            }
        }
        ProviderError::Rejected {
            status: 404,
            detail,
        } => format!(
            "{url} answered 404 ({detail}); check the base URL{} and the model \"{}\"",
            match s.kind {
                ProviderKind::OpenAi => " (OpenAI-compatible servers usually end in /v1)",
                ProviderKind::Anthropic => "",
            },
            s.model
        ),
        ProviderError::Rejected { status, detail } => {
            format!(
                "the provider refused the request ({status}: {detail}); check the model \"{}\"",
                s.model
            )
        }
        ProviderError::RateLimited { .. } => {
            "the key works, but the provider is rate limiting it (429) right now".into()
        }
        other @ (ProviderError::Server { .. }
        | ProviderError::Stream(_)
        | ProviderError::EventTooLarge { .. }
        | ProviderError::Busy { .. }
        | ProviderError::MidAnswer { .. }
        | ProviderError::Remote(_)
        | ProviderError::Protocol(_)) => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(source: KeySource, key: Option<&str>) -> ProviderChange {
        ProviderChange {
            provider: ProviderKind::OpenAi,
            model: " gpt-x ".into(),
            base_url: "http://localhost:1/v1/".into(),
            key_source: source,
            api_key: key.map(ApiKey::new),
        }
    }

    #[test]
    fn a_change_keeps_the_fields_a_pane_does_not_edit() {
        let old = FileProvider {
            kind: Some("anthropic".into()),
            api_key_env: Some("OLD".into()),
            max_tokens: Some(100),
            sampling_models: Some(vec!["m".into()]),
            ..FileProvider::default()
        };
        let s = section_for(old.clone(), &change(KeySource::Keychain, None));
        assert_eq!(
            s,
            FileProvider {
                kind: Some("openai".into()),
                model: Some("gpt-x".into()),
                base_url: Some("http://localhost:1/v1".into()),
                api_key_env: None,
                key_in_keychain: Some(true),
                max_tokens: Some(100),
                sampling_models: Some(vec!["m".into()]),
                ..FileProvider::default()
            }
        );
        let s = section_for(
            old,
            &change(
                KeySource::Env {
                    var: "MY_KEY".into(),
                },
                None,
            ),
        );
        assert_eq!(
            (s.api_key_env.as_deref(), s.key_in_keychain),
            (Some("MY_KEY"), None)
        );
    }

    #[test]
    fn the_view_says_where_the_key_is_never_what() {
        let keys = CredentialStore::memory();
        let section = FileProvider {
            kind: Some("openai".into()),
            key_in_keychain: Some(true),
            ..FileProvider::default()
        };
        assert_eq!(view_of(&section, &keys, None).key_text, "missing");
        keys.save_provider_key("openai", Some("sk-very-secret"))
            .unwrap();
        let v = view_of(&section, &keys, None);
        assert_eq!(
            (v.key.clone(), v.key_text.as_str()),
            (KeyState::Keychain, "set in keychain")
        );
        let shown = serde_json::to_string(&v).unwrap();
        assert!(!shown.contains("sk-very-secret"), "{shown}");
        let section = FileProvider {
            api_key_env: Some("H9_TEST_SURELY_UNSET_VAR".into()),
            ..FileProvider::default()
        };
        let v = view_of(&section, &keys, None);
        assert_eq!(
            (v.provider, v.key_source, v.key_text.as_str()),
            (
                ProviderKind::Anthropic,
                KeySource::Env {
                    var: "H9_TEST_SURELY_UNSET_VAR".into()
                },
                "missing"
            )
        );
    }

    #[test]
    fn a_change_never_prints_its_key() {
        let c = change(KeySource::Keychain, Some("sk-very-secret"));
        assert!(!format!("{c:?}").contains("sk-very-secret"));
        let parsed: ProviderChange = serde_json::from_value(serde_json::json!({
            "provider": "openai", "keySource": {"type": "keychain"}, "apiKey": "sk-1"
        }))
        .unwrap();
        assert_eq!(
            parsed.api_key.map(|k| k.expose().to_string()).as_deref(),
            Some("sk-1")
        );
    }
}
