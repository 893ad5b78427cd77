//! Refreshing an authorizer's tokens: when ([`refresh_margin`]: shortly before expiry,
//! never for a token that was just issued), and so that a refresh is never lost halfway.
//!
//! Authorization servers rotate refresh tokens: once the token endpoint has answered a
//! refresh, the refresh token that was sent is spent. So a refresh, once started, runs to
//! its end in a task of its own (holding the authorizer's `serial` lock until the new tokens
//! are kept), even when the request that asked for it is cancelled or its connection
//! closes; and closing a connection waits for it ([`Authorizer::settle`], at most
//! [`REFRESH_SETTLE_TIMEOUT`]). Otherwise a process that quits right after a refresh leaves
//! the spent refresh token in the store, and the next start finds itself signed out.

use std::time::Duration;

use tokio::sync::OwnedMutexGuard;

use super::{flow, register, token, AuthError, Authorizer, StoredTokens};

/// A token expiring within this is refreshed before the next request; a short-lived one
/// only in the last half of its lifetime ([`refresh_margin`]).
pub const REFRESH_MARGIN_SECS: u64 = 60;

/// How long before it expires a token is refreshed: [`REFRESH_MARGIN_SECS`], but at most
/// half its lifetime, so that a token that lives less than twice the margin is used
/// before it is refreshed (not refreshed by every request).
pub fn refresh_margin(t: &StoredTokens) -> u64 {
    match (t.issued_at, t.expires_at) {
        (Some(issued), Some(expires)) => {
            REFRESH_MARGIN_SECS.min(expires.saturating_sub(issued) / 2)
        }
        _ => REFRESH_MARGIN_SECS,
    }
}

/// How long closing a connection waits for a refresh in flight to be answered and kept.
pub const REFRESH_SETTLE_TIMEOUT: Duration = Duration::from_secs(10);

impl Authorizer {
    /// Refreshes the held token in a task of its own that holds `serial` until the new
    /// tokens are kept; the lock comes back with the outcome (`None` when the task failed).
    pub(super) async fn refresh_kept(
        &self,
        serial: OwnedMutexGuard<()>,
    ) -> (Result<(), AuthError>, Option<OwnedMutexGuard<()>>) {
        let Some(me) = self.me.upgrade() else {
            return (
                Err(AuthError("the connection is closed".into())),
                Some(serial),
            );
        };
        let task = tokio::spawn(async move {
            let outcome = me.refresh().await;
            (outcome, serial)
        });
        match task.await {
            Ok((outcome, serial)) => (outcome, Some(serial)),
            Err(e) => (
                Err(AuthError(format!(
                    "refreshing the access token failed: {e}"
                ))),
                None,
            ),
        }
    }

    /// Waits until no refresh or sign-in of this authorizer is under way (at most
    /// [`REFRESH_SETTLE_TIMEOUT`]), so that its tokens are kept before the process goes on
    /// (or quits). Called when the connection closes.
    pub async fn settle(&self) {
        if tokio::time::timeout(REFRESH_SETTLE_TIMEOUT, self.serial.lock())
            .await
            .is_err()
        {
            tracing::info!(
                "a refresh or sign-in of {} was still under way after {} s",
                self.server_url,
                REFRESH_SETTLE_TIMEOUT.as_secs()
            );
        }
    }

    /// Refreshes the held token; on a refusal forgets the tokens.
    async fn refresh(&self) -> Result<(), AuthError> {
        let (held, disc) = {
            let st = self.state.lock().expect("auth state lock");
            (st.tokens.clone(), st.discovered.clone())
        };
        let Some(held) = held else {
            return Err(AuthError("not signed in".into()));
        };
        let http = self.http()?;
        let disc = match disc {
            Some(d) if d.meta.issuer == held.issuer => d,
            _ => flow::discover(&http, &self.server_url, None).await?,
        };
        let Some(client) = register::known_client(&self.ctx, &disc.meta, self.oauth.as_ref())
        else {
            return Err(AuthError(
                "no client registration is kept for the authorization server; sign in again".into(),
            ));
        };
        match token::refresh(&http, &disc.meta, &client, &held, &disc.resource).await {
            Ok(t) => {
                self.keep(t, Some(disc)).await;
                Ok(())
            }
            Err(e) => {
                if e.code.is_some() {
                    self.forget_tokens().await;
                }
                Err(e.into())
            }
        }
    }

    pub(super) async fn keep(&self, tokens: StoredTokens, disc: Option<flow::Discovered>) {
        {
            let mut st = self.state.lock().expect("auth state lock");
            st.tokens = Some(tokens.clone());
            if disc.is_some() {
                st.discovered = disc;
            }
        }
        *self.needs_auth.lock().expect("needs_auth lock") = None;
        let (store, key) = (self.ctx.store.clone(), self.resource_key.clone());
        let saved = tokio::task::spawn_blocking(move || store.save_tokens(&key, &tokens)).await;
        if let Ok(Err(e)) = saved {
            tracing::warn!("the sign-in of {} could not be kept: {e}", self.server_url);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lasting(issued_at: Option<u64>, lifetime: Option<u64>) -> StoredTokens {
        StoredTokens {
            access_token: "a".into(),
            refresh_token: Some("r".into()),
            expires_at: lifetime.map(|l| 1_000 + l),
            issued_at,
            scopes: Vec::new(),
            issuer: "https://auth.example".into(),
        }
    }

    #[test]
    fn the_margin_is_at_most_half_the_lifetime() {
        assert_eq!(refresh_margin(&lasting(Some(1_000), Some(3_600))), 60);
        assert_eq!(refresh_margin(&lasting(Some(1_000), Some(120))), 60);
        assert_eq!(refresh_margin(&lasting(Some(1_000), Some(30))), 15);
        assert_eq!(refresh_margin(&lasting(Some(1_000), Some(3))), 1);
        assert_eq!(refresh_margin(&lasting(Some(1_000), Some(1))), 0);
        // Kept by an older version (no issue time), or no expiry given: the full margin.
        assert_eq!(refresh_margin(&lasting(None, Some(3))), REFRESH_MARGIN_SECS);
        assert_eq!(
            refresh_margin(&lasting(Some(1_000), None)),
            REFRESH_MARGIN_SECS
        );
    }
}
