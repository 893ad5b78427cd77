//! Signing in to remote servers from the desktop app: the opener that shows the
//! authorization page, and the bridge payload of who is signed in.
//!
//! The page opens from Rust (tauri-plugin-opener, or `$BROWSER` when set, as everywhere
//! else); the web view holds no opener permission. [`SignedInDto`] carries what is safe to
//! show — issuer, scopes, expiry — and never a token.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde::Serialize;
use tauri::AppHandle;
use tauri_plugin_opener::OpenerExt;
use ts_rs::TS;

use harness9::mcp::auth::{Opener, SignedIn, SystemOpener};

/// The variable that names the browser command; when set it wins over the system opener.
const BROWSER_ENV: &str = "BROWSER";

/// Opens the authorization page with the desktop's default browser.
struct AppOpener {
    app: AppHandle,
}

impl Opener for AppOpener {
    fn open(&self, url: &str) -> Pin<Box<dyn Future<Output = Result<(), String>> + Send>> {
        let app = self.app.clone();
        let url = url.to_string();
        Box::pin(async move {
            app.opener().open_url(&url, None::<&str>).map_err(|e| {
                format!("cannot open the browser: {e}; set BROWSER to the browser's command")
            })
        })
    }
}

/// The opener for a sign-in: `$BROWSER` when set, else the desktop's default browser.
pub fn opener(app: &AppHandle) -> Arc<dyn Opener> {
    if std::env::var_os(BROWSER_ENV).is_some_and(|v| !v.is_empty()) {
        Arc::new(SystemOpener)
    } else {
        Arc::new(AppOpener { app: app.clone() })
    }
}

/// Who the user is signed in as on a remote server (no token ever crosses the bridge).
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SignedInDto {
    /// The authorization server's issuer URL.
    pub issuer: String,
    pub scopes: Vec<String>,
    /// When the access token expires (ms since the Unix epoch), when known.
    pub expires_at_ms: Option<f64>,
    /// Whether a refresh token is kept (the sign-in renews itself).
    pub refreshable: bool,
    /// Where the tokens are kept, in words (the keychain, or the private file).
    pub kept_in: String,
}

impl From<&SignedIn> for SignedInDto {
    fn from(s: &SignedIn) -> Self {
        let SignedIn {
            issuer,
            scopes,
            expires_at,
            refreshable,
            kept_in,
        } = s;
        SignedInDto {
            issuer: issuer.clone(),
            scopes: scopes.clone(),
            expires_at_ms: expires_at.map(|secs| secs as f64 * 1000.0),
            refreshable: *refreshable,
            kept_in: kept_in.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use harness9::mcp::manager::StartPhase;
    use harness9::mcp::{ServerState, ServerStatus};
    use serde_json::json;

    use crate::bridge::ServerStatusDto;

    fn remote(state: ServerState, signed_in: Option<super::SignedIn>) -> serde_json::Value {
        let s = ServerStatus {
            name: "r".into(),
            transport: "http".into(),
            scope: harness9::config::Scope::Project,
            target: "https://mcp.example.com/mcp".into(),
            state,
            restart: None,
            held_tools: 0,
            signed_in,
        };
        serde_json::to_value(ServerStatusDto::from(&s)).unwrap()
    }

    #[test]
    fn sign_in_states_cross_the_bridge_without_a_token() {
        let v = remote(
            ServerState::NeedsAuth {
                reason: "no token yet".into(),
            },
            None,
        );
        assert_eq!(
            v["state"],
            json!({"status": "needs-auth", "reason": "no token yet"})
        );
        assert_eq!(v["signedIn"], json!(null));

        let v = remote(
            ServerState::Starting {
                phase: StartPhase::SigningIn,
            },
            None,
        );
        assert_eq!(
            v["state"],
            json!({"status": "starting", "phase": "signing-in"})
        );

        let v = remote(
            ServerState::Stopped,
            Some(super::SignedIn {
                issuer: "https://auth.example.com".into(),
                scopes: vec!["read".into()],
                expires_at: Some(1_700_000_000),
                refreshable: true,
                kept_in: "the system keychain (Secret Service)".into(),
            }),
        );
        assert_eq!(
            v["signedIn"],
            json!({"issuer": "https://auth.example.com", "scopes": ["read"],
                   "expiresAtMs": 1_700_000_000_000.0, "refreshable": true,
                   "keptIn": "the system keychain (Secret Service)"})
        );
    }
}
