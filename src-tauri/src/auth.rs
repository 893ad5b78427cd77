//! Signing in to remote servers from the desktop app: the opener that shows the
//! authorization page.
//!
//! The page opens from Rust (tauri-plugin-opener, or `$BROWSER` when set, as everywhere
//! else); the web view holds no opener permission. Who is signed in crosses as the core's
//! `SignedIn`: what is safe to show — issuer, scopes, expiry — and never a token.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use tauri::AppHandle;
use tauri_plugin_opener::OpenerExt;

use harness9::mcp::auth::{BrowserError, Opener, SystemOpener};

/// The variable that names the browser command; when set it wins over the system opener.
const BROWSER_ENV: &str = "BROWSER";

/// Opens the authorization page with the desktop's default browser.
struct AppOpener {
    app: AppHandle,
}

impl Opener for AppOpener {
    fn open(&self, url: &str) -> Pin<Box<dyn Future<Output = Result<(), BrowserError>> + Send>> {
        let app = self.app.clone();
        // The same link rule as every other opener; the parsed form is what opens.
        let link = harness9::links::check_link(url);
        let url = url.to_string();
        Box::pin(async move {
            let link = link.map_err(|refused| BrowserError::Refused { url, refused })?;
            app.opener()
                .open_url(link.as_str(), None::<&str>)
                .map_err(|e| {
                    BrowserError::NotShown(format!(
                        "cannot open the browser: {e}; set BROWSER to the browser's command"
                    ))
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

#[cfg(test)]
mod tests {
    use harness9::manager::StartPhase;
    use harness9::manager::{ServerState, ServerStatus};
    use serde_json::json;

    fn remote(
        state: ServerState,
        signed_in: Option<harness9::mcp::auth::SignedIn>,
    ) -> serde_json::Value {
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
        serde_json::to_value(&s).unwrap()
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
            Some(harness9::mcp::auth::SignedIn {
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
                   "expiresAt": 1_700_000_000, "refreshable": true,
                   "keptIn": "the system keychain (Secret Service)"})
        );
    }
}
