//! Which provider and model to use, from (highest first) command-line overrides, the
//! environment (`HARNESS9_PROVIDER`, `HARNESS9_MODEL`, and the official SDKs' variables
//! `OPENAI_BASE_URL`, `OPENAI_API_KEY`, `ANTHROPIC_BASE_URL`, `ANTHROPIC_API_KEY`) and the
//! `provider` section of `settings.json` in the user's config directory.
//!
//! API keys are read from an environment variable (the settings file may name which with
//! `apiKeyEnv`) or, with `"keyInKeychain": true`, from the credential store (the OS
//! keychain; see [`crate::mcp::auth::CredentialStore`]). A settings file that holds a key is
//! refused, so keys are never stored in plain text by harness9. [`ApiKey`] never prints its
//! value. Front ends edit these settings through [`super::setup`].
//!
//! The same file holds sections other parts of the engine own; [`load_section`] reads one
//! (`toolOutputs`: [`crate::engine::spill_cleanup`]).

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::RetryPolicy;
use crate::mcp::auth::CredentialStore;

/// Overrides the config directory (where `settings.json` lives).
pub const CONFIG_DIR_ENV: &str = "HARNESS9_CONFIG_DIR";
/// File name of the user's settings, in [`config_dir`].
pub const SETTINGS_FILE: &str = "settings.json";
pub const PROVIDER_ENV: &str = "HARNESS9_PROVIDER";
pub const MODEL_ENV: &str = "HARNESS9_MODEL";
pub const OPENAI_KEY_ENV: &str = "OPENAI_API_KEY";
pub const OPENAI_URL_ENV: &str = "OPENAI_BASE_URL";
pub const ANTHROPIC_KEY_ENV: &str = "ANTHROPIC_API_KEY";
pub const ANTHROPIC_URL_ENV: &str = "ANTHROPIC_BASE_URL";
/// Base URL of the OpenAI API (the SDK's default).
pub const DEFAULT_OPENAI_BASE_URL: &str = "https://api.openai.com/v1";
/// Base URL of the Anthropic API (the SDK's default).
pub const DEFAULT_ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";
/// Model used with Anthropic when none is set.
pub const DEFAULT_ANTHROPIC_MODEL: &str = "claude-sonnet-4-5";
/// Model used with OpenAI when none is set.
pub const DEFAULT_OPENAI_MODEL: &str = "gpt-4.1";
/// Most tokens one model answer may have (Anthropic needs a value).
pub const DEFAULT_MAX_TOKENS: u32 = 8192;
/// Context window assumed when the settings give none; tool search kicks in when the tool
/// definitions would take a tenth of it.
pub const DEFAULT_CONTEXT_WINDOW: u32 = 128_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    Anthropic,
    #[serde(rename = "openai")]
    OpenAi,
}

impl ProviderKind {
    pub fn name(self) -> &'static str {
        match self {
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::OpenAi => "openai",
        }
    }

    pub fn parse(s: &str) -> Option<ProviderKind> {
        match s.trim().to_ascii_lowercase().as_str() {
            "anthropic" | "claude" => Some(ProviderKind::Anthropic),
            "openai" | "openai-compatible" => Some(ProviderKind::OpenAi),
            _ => None,
        }
    }
}

/// A secret that never shows in logs or debug output.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a key read from the environment or a keychain.
    pub fn new(value: impl Into<String>) -> ApiKey {
        ApiKey(value.into())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

/// Read from a front end's change (never written back out).
impl<'de> Deserialize<'de> for ApiKey {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<ApiKey, D::Error> {
        String::deserialize(d).map(ApiKey)
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(***)")
    }
}

/// A resolved provider configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderSettings {
    pub kind: ProviderKind,
    pub model: String,
    pub base_url: String,
    /// The variable the key came from (named in error messages).
    pub api_key_env: String,
    pub api_key: Option<ApiKey>,
    /// The variable that sets the base URL (named in error messages).
    pub base_url_env: String,
    pub max_tokens: u32,
    pub context_window: u32,
    /// Whether tool images are sent as images (else as a text placeholder).
    pub images: bool,
    pub retry: RetryPolicy,
    pub idle_timeout: Duration,
    /// Other models of this provider that servers' sampling requests may pick by their
    /// model preferences, from the cheapest and fastest to the most capable
    /// (`samplingModels` in the settings file; see [`crate::engine::sampling`]).
    pub sampling_models: Vec<String>,
}

/// What the command line or a front end picked.
#[derive(Debug, Clone, Default)]
pub struct ProviderOverrides {
    pub provider: Option<String>,
    pub model: Option<String>,
    /// Where a key kept in the keychain is read (`keyInKeychain`); `None`: the user's
    /// credential store, opened when needed.
    pub keys: Option<Arc<CredentialStore>>,
    /// Another settings file than [`settings_path`].
    pub settings_file: Option<PathBuf>,
}

/// The `provider` section of `settings.json` (what a settings pane edits). It has no field
/// for a key on purpose: `api_key_env` names the environment variable holding it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FileProvider {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// The key is kept in the credential store (the OS keychain), not in `api_key_env`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_in_keychain: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub images: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_retries: Option<u32>,
    /// Models sampling requests may choose from, cheapest and fastest first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling_models: Option<Vec<String>>,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SettingsError {
    #[error("no model provider is configured: set {PROVIDER_ENV}=openai or {PROVIDER_ENV}=anthropic with {OPENAI_KEY_ENV} or {ANTHROPIC_KEY_ENV} (and {MODEL_ENV}, {OPENAI_URL_ENV} for OpenAI-compatible servers), or add a \"provider\" section to {0}")]
    NotConfigured(String),
    #[error(
        "unknown provider \"{0}\": use openai (also for OpenAI-compatible servers) or anthropic"
    )]
    UnknownProvider(String),
    #[error("{var} is not set: the {provider} provider needs an API key in it (harness9 reads keys from the environment only)")]
    MissingKey { provider: &'static str, var: String },
    #[error("no API key for the {provider} provider is kept in {location}: set one in the settings (desktop app: Settings → Model provider; terminal UI: /model key)")]
    MissingKeychainKey {
        provider: &'static str,
        location: String,
    },
    #[error("{path}: {detail}")]
    BadFile { path: String, detail: String },
    #[error("could not keep the API key in {location}: {detail}")]
    KeyStore { location: String, detail: String },
}

impl SettingsError {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        match self {
            SettingsError::NotConfigured(_) => "not-configured",
            SettingsError::UnknownProvider(_) => "unknown-provider",
            SettingsError::MissingKey { .. } | SettingsError::MissingKeychainKey { .. } => {
                "missing-api-key"
            }
            SettingsError::BadFile { .. } => "bad-settings-file",
            SettingsError::KeyStore { .. } => "key-store-failed",
        }
    }
}

/// The user's config directory for harness9.
pub fn config_dir() -> PathBuf {
    match std::env::var_os(CONFIG_DIR_ENV) {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => dirs::config_dir()
            .unwrap_or_else(std::env::temp_dir)
            .join("harness9"),
    }
}

pub fn settings_path() -> PathBuf {
    config_dir().join(SETTINGS_FILE)
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// The `provider` section of the settings file, if there is one.
pub fn load_provider_section() -> Result<Option<FileProvider>, SettingsError> {
    read_file_section(&settings_path())
}

/// [`load_provider_section`] of the settings file at `path`.
pub fn load_provider_section_at(path: &Path) -> Result<Option<FileProvider>, SettingsError> {
    read_file_section(path)
}

/// Writes the `provider` section of the settings file atomically, keeping every other key.
pub fn save_provider_section(section: &FileProvider) -> Result<(), SettingsError> {
    save_provider_section_at(&settings_path(), section)
}

/// [`save_provider_section`] to the settings file at `path`.
pub fn save_provider_section_at(path: &Path, section: &FileProvider) -> Result<(), SettingsError> {
    let path = path.to_path_buf();
    let bad = |detail: String| SettingsError::BadFile {
        path: path.display().to_string(),
        detail,
    };
    let mut doc = match std::fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str::<serde_json::Value>(&text)
            .map_err(|e| bad(format!("{e}; fix or remove the file first")))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => serde_json::json!({}),
        Err(e) => return Err(bad(e.to_string())),
    };
    let Some(obj) = doc.as_object_mut() else {
        return Err(bad("the file is not a JSON object".into()));
    };
    obj.insert(
        "provider".into(),
        serde_json::to_value(section).expect("section serializes"),
    );
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| bad(e.to_string()))?;
    }
    let bytes = serde_json::to_vec_pretty(&doc).expect("settings serialize");
    crate::config::write_atomically(&path, &bytes).map_err(|e| bad(e.to_string()))
}

/// The settings file as a JSON document, with its path; `None` when there is no file.
fn read_settings_doc(path: &Path) -> Result<Option<(PathBuf, serde_json::Value)>, SettingsError> {
    let path = path.to_path_buf();
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(SettingsError::BadFile {
                path: path.display().to_string(),
                detail: e.to_string(),
            })
        }
    };
    match serde_json::from_str(&text) {
        Ok(doc) => Ok(Some((path, doc))),
        Err(e) => Err(SettingsError::BadFile {
            path: path.display().to_string(),
            detail: e.to_string(),
        }),
    }
}

/// One top-level section of the settings file (`name` is its key), if there is one. Used
/// for the sections other parts of the engine own, such as
/// [`crate::engine::spill_cleanup::ToolOutputsSection`].
pub fn load_section<T: serde::de::DeserializeOwned>(
    name: &str,
) -> Result<Option<T>, SettingsError> {
    match read_settings_doc(&settings_path())? {
        None => Ok(None),
        Some((path, doc)) => section_of(&path, &doc, name),
    }
}

fn section_of<T: serde::de::DeserializeOwned>(
    path: &Path,
    doc: &serde_json::Value,
    name: &str,
) -> Result<Option<T>, SettingsError> {
    let Some(section) = doc.get(name) else {
        return Ok(None);
    };
    serde_json::from_value(section.clone())
        .map(Some)
        .map_err(|e| SettingsError::BadFile {
            path: path.display().to_string(),
            detail: format!("\"{name}\": {e}"),
        })
}

fn read_file_section(path: &Path) -> Result<Option<FileProvider>, SettingsError> {
    let Some((path, doc)) = read_settings_doc(path)? else {
        return Ok(None);
    };
    let section = doc.get("provider");
    if section.is_some_and(|s| s.get("apiKey").is_some() || s.get("api_key").is_some()) {
        return Err(SettingsError::BadFile {
            path: path.display().to_string(),
            detail: "\"provider\" must not hold an API key; put the key in an environment variable and name it in \"apiKeyEnv\"".into(),
        });
    }
    section_of(&path, &doc, "provider")
}

impl ProviderSettings {
    /// Resolves the provider from overrides, the environment and the settings file.
    pub fn resolve(overrides: &ProviderOverrides) -> Result<ProviderSettings, SettingsError> {
        let path = overrides
            .settings_file
            .clone()
            .unwrap_or_else(settings_path);
        let file = read_file_section(&path)?.unwrap_or_default();
        ProviderSettings::resolve_from(&file, overrides, None)
    }

    /// [`ProviderSettings::resolve`] with `file` in place of the settings file's section;
    /// `key`, when given, is used in place of the one the section points to (a settings
    /// pane testing a key before it is kept).
    pub fn resolve_from(
        file: &FileProvider,
        overrides: &ProviderOverrides,
        key: Option<ApiKey>,
    ) -> Result<ProviderSettings, SettingsError> {
        let named = overrides
            .provider
            .clone()
            .or_else(|| env(PROVIDER_ENV))
            .or_else(|| file.kind.clone());
        let kind = match named {
            Some(n) => ProviderKind::parse(&n).ok_or(SettingsError::UnknownProvider(n))?,
            None if env(ANTHROPIC_KEY_ENV).is_some() => ProviderKind::Anthropic,
            None if env(OPENAI_KEY_ENV).is_some() || env(OPENAI_URL_ENV).is_some() => {
                ProviderKind::OpenAi
            }
            None => {
                return Err(SettingsError::NotConfigured(
                    settings_path().display().to_string(),
                ))
            }
        };
        let (key_var, url_var, default_url, default_model) = match kind {
            ProviderKind::Anthropic => (
                ANTHROPIC_KEY_ENV,
                ANTHROPIC_URL_ENV,
                DEFAULT_ANTHROPIC_BASE_URL,
                DEFAULT_ANTHROPIC_MODEL,
            ),
            ProviderKind::OpenAi => (
                OPENAI_KEY_ENV,
                OPENAI_URL_ENV,
                DEFAULT_OPENAI_BASE_URL,
                DEFAULT_OPENAI_MODEL,
            ),
        };
        let api_key_env = file.api_key_env.clone().unwrap_or_else(|| key_var.into());
        let base_url = env(url_var)
            .or(file.base_url.clone())
            .unwrap_or_else(|| default_url.into());
        let base_url = base_url.trim_end_matches('/').to_string();
        let in_keychain = file.key_in_keychain == Some(true);
        let api_key = match key {
            Some(k) => Some(k),
            None if in_keychain => {
                let store = keys_of(overrides);
                store.provider_key(kind.name()).map(ApiKey)
            }
            None => env(&api_key_env).map(ApiKey),
        };
        // Local OpenAI-compatible servers (Ollama, llama.cpp, ...) need no key.
        let official = base_url == default_url;
        if api_key.is_none() && (kind == ProviderKind::Anthropic || official) {
            if in_keychain {
                return Err(SettingsError::MissingKeychainKey {
                    provider: kind.name(),
                    location: keys_of(overrides).location(),
                });
            }
            return Err(SettingsError::MissingKey {
                provider: kind.name(),
                var: api_key_env,
            });
        }
        let model = overrides
            .model
            .clone()
            .or_else(|| env(MODEL_ENV))
            .or(file.model.clone())
            .unwrap_or_else(|| default_model.into());
        let mut retry = RetryPolicy::default();
        if let Some(n) = file.max_retries {
            retry.max_retries = n;
        }
        Ok(ProviderSettings {
            kind,
            model,
            base_url,
            api_key_env,
            api_key,
            base_url_env: url_var.into(),
            max_tokens: file.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
            context_window: file.context_window.unwrap_or(DEFAULT_CONTEXT_WINDOW),
            images: file
                .images
                .unwrap_or(kind == ProviderKind::Anthropic || official),
            retry,
            idle_timeout: super::DEFAULT_STREAM_IDLE_TIMEOUT,
            sampling_models: file.sampling_models.clone().unwrap_or_default(),
        })
    }
}

/// The credential store keys are read from: the overrides', else the user's.
pub(crate) fn keys_of(overrides: &ProviderOverrides) -> Arc<CredentialStore> {
    overrides
        .keys
        .clone()
        .unwrap_or_else(|| Arc::new(CredentialStore::open(&crate::trust::data_dir())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_key_debug_hides_the_value() {
        assert_eq!(format!("{:?}", ApiKey("sk-secret".into())), "ApiKey(***)");
    }

    #[test]
    fn provider_names_parse() {
        assert_eq!(ProviderKind::parse("OpenAI"), Some(ProviderKind::OpenAi));
        assert_eq!(
            ProviderKind::parse("anthropic"),
            Some(ProviderKind::Anthropic)
        );
        assert_eq!(ProviderKind::parse("gemini"), None);
    }
}
