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
//!
//! A refresh token (and the client's secret) goes only to the token endpoint of the
//! authorization server that issued it ([`token::issued_by`]): when the server's metadata
//! now names another one, the user signs in again. Only a refusal of the grant
//! (`invalid_grant`) forgets the tokens; a network error or a failing server keeps them.

use std::time::Duration;

use tokio::sync::OwnedMutexGuard;

use super::store::CredentialError;
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

/// Why a refresh did not give new tokens, and so what to do with the old ones.
#[derive(Debug)]
pub(super) enum RefreshError {
    /// The authorization server refused the grant (`invalid_grant`): the tokens are
    /// forgotten; sign in again.
    Spent(AuthError),
    /// Signing in again is what helps (signed out elsewhere, the server now names another
    /// authorization server, no client registration): the kept tokens stay until then.
    SignInAgain(String),
    /// Not now (a network error, a failing server): the tokens stay, a later request
    /// tries again.
    Failed(AuthError),
}

impl std::fmt::Display for RefreshError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RefreshError::Spent(e) | RefreshError::Failed(e) => write!(f, "{e}"),
            RefreshError::SignInAgain(why) => f.write_str(why),
        }
    }
}

impl Authorizer {
    /// Refreshes the held token in a task of its own that holds `serial` until the new
    /// tokens are kept; the lock comes back with the outcome (`None` when the task failed).
    pub(super) async fn refresh_kept(
        &self,
        serial: OwnedMutexGuard<()>,
    ) -> (Result<(), RefreshError>, Option<OwnedMutexGuard<()>>) {
        let Some(me) = self.me.upgrade() else {
            return (
                Err(RefreshError::Failed(AuthError::Internal(
                    "the connection is closed".into(),
                ))),
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
                Err(RefreshError::Failed(AuthError::Internal(format!(
                    "refreshing the access token failed: {e}"
                )))),
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

    /// Refreshes the held token; on a refusal of the grant forgets the tokens. Takes what
    /// the store holds first when that changed meanwhile (a refresh, sign-in or sign-out
    /// elsewhere).
    async fn refresh(&self) -> Result<(), RefreshError> {
        let since = self.ctx.store.sign_outs(&self.resource_key);
        let stored = self.stored().await;
        let (held, disc) = {
            let mut st = self.state.lock();
            if stored != st.kept {
                st.tokens = stored.clone();
                st.kept = stored.clone();
                return match stored {
                    Some(_) => Ok(()),
                    None => Err(RefreshError::SignInAgain("signed out".into())),
                };
            }
            (st.tokens.clone(), st.discovered.clone())
        };
        let Some(held) = held else {
            return Err(RefreshError::SignInAgain("not signed in".into()));
        };
        let http = self.http().map_err(RefreshError::Failed)?;
        let disc = match disc {
            Some(d) if token::issued_by(&held, &d.meta) => d,
            _ => flow::discover(&http, &self.server_url, None)
                .await
                .map_err(RefreshError::Failed)?,
        };
        if !token::issued_by(&held, &disc.meta) {
            // Never hand the refresh token (or the client's secret) to another server.
            return Err(RefreshError::SignInAgain(format!(
                "the server now names the authorization server {}, not {} that signed you in",
                disc.meta.issuer, held.issuer
            )));
        }
        let Some(client) = register::known_client(&self.ctx, &disc.meta, self.oauth.as_ref())
        else {
            return Err(RefreshError::SignInAgain(
                "no client registration is kept for the authorization server".into(),
            ));
        };
        match token::refresh(&http, &disc.meta, &client, &held, &disc.resource).await {
            Ok(t) => self
                .keep(t, Some(disc), stored, since)
                .await
                .map_err(|_| RefreshError::SignInAgain("signed out".into())),
            Err(e) if e.code.as_deref() == Some("invalid_grant") => {
                if self.forget_refused(held).await {
                    return Ok(()); // newer tokens were kept meanwhile: use those
                }
                Err(RefreshError::Spent(e.into()))
            }
            Err(e) if e.code.is_some() => Err(RefreshError::SignInAgain(e.message)),
            Err(e) => Err(RefreshError::Failed(e.into())),
        }
    }

    /// Holds `tokens` and keeps them in the store, unless the store no longer holds
    /// `expected` or a sign-out happened since [`super::CredentialStore::sign_outs`] said
    /// `since`: then this authorizer takes what the store holds, and fails when that is
    /// nothing (the user signed out meanwhile). A store that cannot be written is only
    /// warned about (the tokens are held for this connection).
    pub(super) async fn keep(
        &self,
        tokens: StoredTokens,
        disc: Option<flow::Discovered>,
        expected: Option<StoredTokens>,
        since: u64,
    ) -> Result<(), AuthError> {
        let (store, key) = (self.ctx.store.clone(), self.resource_key.clone());
        let saving = tokens.clone();
        let saved = tokio::task::spawn_blocking(move || {
            store.save_tokens_if(&key, &saving, expected.as_ref(), since)
        })
        .await
        .unwrap_or_else(|e| Err(CredentialError::Interrupted(e.to_string())));
        let now_kept = match saved {
            Ok(true) => Some(Some(tokens.clone())),
            Ok(false) => None,
            Err(e) => {
                tracing::warn!("the sign-in of {} could not be kept: {e}", self.server_url);
                Some(self.state.lock().kept.clone())
            }
        };
        let held = match now_kept {
            Some(kept) => {
                let mut st = self.state.lock();
                st.tokens = Some(tokens);
                st.kept = kept;
                if disc.is_some() {
                    st.discovered = disc;
                }
                true
            }
            None => {
                // Signed out (or signed in anew) while this was under way: that wins.
                let stored = self.stored().await;
                let mut st = self.state.lock();
                st.tokens = stored.clone();
                st.kept = stored.clone();
                stored.is_some()
            }
        };
        if !held {
            return Err(self.needs_sign_in("signed out".into()));
        }
        *self.needs_auth.lock() = None;
        Ok(())
    }

    /// Forgets `refused` (tokens the server no longer takes): here, and in the store when
    /// it still holds them. `true` when the store holds other tokens (kept elsewhere
    /// meanwhile), which this authorizer then holds instead.
    pub(super) async fn forget_refused(&self, refused: StoredTokens) -> bool {
        let (store, key) = (self.ctx.store.clone(), self.resource_key.clone());
        let forgetting = refused.clone();
        let forgot = tokio::task::spawn_blocking(move || store.forget_tokens_if(&key, &forgetting))
            .await
            .unwrap_or_else(|e| Err(CredentialError::Interrupted(e.to_string())));
        if let Err(e) = forgot {
            tracing::warn!("forgetting the tokens of {} failed: {e}", self.server_url);
        }
        let stored = self.stored().await;
        let other = stored.clone().filter(|t| *t != refused);
        let mut st = self.state.lock();
        st.tokens = other.clone();
        st.kept = stored;
        other.is_some()
    }

    /// The tokens the store holds now.
    async fn stored(&self) -> Option<StoredTokens> {
        let (store, key) = (self.ctx.store.clone(), self.resource_key.clone());
        tokio::task::spawn_blocking(move || store.tokens(&key))
            .await
            .ok()
            .flatten()
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
            token_endpoint: None,
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
