//! Settings a front end manages beside `.mcp.json`: the model provider (settings file and
//! keychain; see [`crate::engine::provider::setup`]) and the project's tool permission
//! rules (see [`crate::engine::permissions`]). Every call reads or writes files or the
//! keychain, so each runs on tokio's blocking pool. Engines read both again when a turn
//! starts: a change applies to the next turn.

use std::path::PathBuf;
use std::sync::Arc;

use super::Harness;
use crate::engine::permissions::{PermissionRule, PermissionStore, ToolPermission};
use crate::engine::provider::settings::{ProviderKind, ProviderOverrides, SettingsError};
use crate::engine::provider::setup::{self, ConnectionCheck, ProviderChange, ProviderView};
use crate::mcp::auth::CredentialStore;

/// Why a permission rule could not be changed.
#[derive(Debug, thiserror::Error)]
pub enum PermissionError {
    #[error("a rule needs a tool name or pattern (such as mcp__server__tool or mcp__server__*)")]
    EmptyPattern,
    #[error(
        "could not save the permission rules to {file}: {error}; check that the folder is writable"
    )]
    Save { file: String, error: String },
}

impl PermissionError {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        match self {
            PermissionError::EmptyPattern => "empty-pattern",
            PermissionError::Save { .. } => "write-failed",
        }
    }
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(f)
        .await
        .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()))
}

impl Harness {
    /// Uses another settings file than the user's (tests, embedders).
    pub fn with_settings_file(mut self, file: PathBuf) -> Harness {
        self.settings_file = file;
        self
    }

    /// Uses another permission store than the one in the user's data directory.
    pub fn with_permission_store(mut self, store: PermissionStore) -> Harness {
        self.permission_store = store;
        self
    }

    /// Points provider overrides at this harness's settings file and key store.
    pub(crate) fn fill_overrides(&self, o: &mut ProviderOverrides) {
        if o.keys.is_none() {
            o.keys = Some(self.key_store());
        }
        if o.settings_file.is_none() {
            o.settings_file = Some(self.settings_file.clone());
        }
    }

    /// Where model provider keys are kept (the same store as sign-in tokens).
    fn key_store(&self) -> Arc<CredentialStore> {
        self.signin.auth_context().store.clone()
    }

    /// The model provider settings as a pane shows them (never the key).
    pub async fn provider_settings(&self) -> ProviderView {
        let (file, keys) = (self.settings_file.clone(), self.key_store());
        blocking(move || setup::view(&file, &keys)).await
    }

    /// Keeps a change of the provider settings (a key given with it goes to the keychain).
    pub async fn save_provider_settings(
        &self,
        change: ProviderChange,
    ) -> Result<ProviderView, SettingsError> {
        let (file, keys) = (self.settings_file.clone(), self.key_store());
        blocking(move || setup::save(&file, &keys, &change)).await
    }

    /// Forgets the key kept in the keychain for a provider.
    pub async fn forget_provider_key(
        &self,
        provider: ProviderKind,
    ) -> Result<ProviderView, SettingsError> {
        let (file, keys) = (self.settings_file.clone(), self.key_store());
        blocking(move || setup::forget_key(&file, &keys, provider)).await
    }

    /// Makes one minimal request to the provider: of `change` before it is kept, or of the
    /// saved settings. Bounded by [`setup::CONNECTION_TEST_TIMEOUT`].
    pub async fn test_provider(&self, change: Option<ProviderChange>) -> ConnectionCheck {
        let (file, keys) = (self.settings_file.clone(), self.key_store());
        let settings =
            blocking(move || setup::settings_for_test(&file, keys, change.as_ref())).await;
        match settings {
            Ok(s) => setup::test_connection(s).await,
            Err(e) => ConnectionCheck {
                ok: false,
                message: e.to_string(),
                elapsed_ms: 0,
            },
        }
    }

    /// This project's remembered tool permission rules, by tool name or pattern.
    pub async fn permission_rules(&self) -> Vec<PermissionRule> {
        let (store, project) = (self.permission_store.clone(), self.project.clone());
        blocking(move || store.list(&project)).await
    }

    /// Sets the rule for a tool name or pattern (`*` any run of characters, `?` one), or
    /// with `None` revokes it; returns the rules as they are now.
    pub async fn set_permission(
        &self,
        tool: &str,
        permission: Option<ToolPermission>,
    ) -> Result<Vec<PermissionRule>, PermissionError> {
        let tool = tool.trim().to_string();
        if tool.is_empty() {
            return Err(PermissionError::EmptyPattern);
        }
        let (store, project) = (self.permission_store.clone(), self.project.clone());
        blocking(move || {
            store
                .set(&project, &tool, permission)
                .map_err(|e| PermissionError::Save {
                    file: store.path().display().to_string(),
                    error: e.to_string(),
                })?;
            Ok(store.list(&project))
        })
        .await
    }
}
