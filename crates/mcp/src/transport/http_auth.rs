//! The HTTP transports' side of authorization: the `Authorization` header from the
//! server's [`Authorizer`] on every request to the server's origin, and the refusals
//! (`401`, `403 insufficient_scope`) handed back to it, the request sent again when it has
//! a new token.
//!
//! Invariants: without an authorizer (or when `.mcp.json` sets its own `Authorization`
//! header, which then wins) a request is sent exactly as built, with no extra work; a token
//! only goes to the origin of the configured URL; one request is refused at most
//! [`MAX_AUTH_ATTEMPTS`] times before it fails.

use reqwest::header::{HeaderMap, AUTHORIZATION};
use reqwest::{Response, Url};

use super::http_conn::{AuthRefusal, Shared};
use crate::auth::challenge;

/// Refusals of one request handed to the authorizer (each may mean a sign-in) before the
/// request fails.
pub const MAX_AUTH_ATTEMPTS: u32 = 3;

impl Shared {
    /// The `Authorization` header for a request to `url`, when an authorizer holds a token
    /// and `url` is on the server's origin.
    pub(crate) fn auth_header_for(&self, url: &Url, headers: &mut HeaderMap) {
        if let Some(auth) = &self.auth {
            if url.origin() == self.url.origin() {
                if let Some(h) = auth.header() {
                    headers.insert(AUTHORIZATION, h);
                }
            }
        }
    }

    /// Sends the request `build` makes; with an authorizer, refreshes a token about to
    /// expire first and, on a refusal, lets the authorizer refresh or sign in and sends a
    /// fresh request again. A refusal that stays is returned with an [`AuthRefusal`].
    pub(crate) async fn send(
        &self,
        build: impl Fn() -> reqwest::RequestBuilder,
    ) -> Result<Response, reqwest::Error> {
        let Some(auth) = &self.auth else {
            return build().send().await;
        };
        auth.before_request(&self.client).await;
        let mut attempts = 0;
        loop {
            let req = build().build()?;
            if req.url().origin() != self.url.origin() {
                return self.client.execute(req).await;
            }
            let used = req.headers().get(AUTHORIZATION).cloned();
            let mut resp = self.client.execute(req).await?;
            let status = resp.status().as_u16();
            let refused = match status {
                401 => true,
                403 => challenge::bearer(resp.headers()).is_some_and(|c| c.is_insufficient_scope()),
                _ => false,
            };
            if !refused {
                return Ok(resp);
            }
            if attempts >= MAX_AUTH_ATTEMPTS {
                let why = format!(
                    "the server still refused the request (HTTP {status}) after {MAX_AUTH_ATTEMPTS} sign-in attempts; check the account's permissions"
                );
                resp.extensions_mut().insert(AuthRefusal(why));
                return Ok(resp);
            }
            attempts += 1;
            let headers = resp.headers().clone();
            match auth
                .on_refused(&self.client, status, &headers, used.as_ref())
                .await
            {
                Ok(()) => continue,
                Err(e) => {
                    resp.extensions_mut().insert(AuthRefusal(e.to_string()));
                    return Ok(resp);
                }
            }
        }
    }
}
