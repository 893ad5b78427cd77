//! The HTTP transports' side of authorization: the `Authorization` header from the
//! server's [`Authorizer`] on every request to the server's origin, and the refusals
//! (`401`, `403 insufficient_scope`) handed back to it, the request sent again when it has
//! a new token.
//!
//! Invariants: without an authorizer (or when `.mcp.json` sets its own `Authorization`
//! header, which then wins) a request is sent exactly as built, with no extra work; a token
//! only goes to the origin of the configured URL; one request is refused at most
//! [`MAX_AUTH_ATTEMPTS`] times before it fails.

use reqwest::header::{HeaderValue, AUTHORIZATION};
use reqwest::StatusCode;

use super::http_conn::Shared;
use crate::auth::challenge;
use crate::http::wire::{Exchange, HttpError, HttpResponse, Target};

/// Refusals of one request handed to the authorizer (each may mean a sign-in) before the
/// request fails.
pub const MAX_AUTH_ATTEMPTS: u32 = 3;

impl Shared {
    /// The `Authorization` header for a request to `target`, when an authorizer holds a
    /// token and the target is on the server's origin (its own URL always is: no origin is
    /// worked out for it).
    pub(crate) fn auth_header_for(&self, target: &Target) -> Option<HeaderValue> {
        let auth = self.auth.as_ref()?;
        if let Target::Other(url) = target {
            if url.origin() != self.url.origin() {
                return None;
            }
        }
        auth.header()
    }

    /// Sends the request `build` makes; with an authorizer, refreshes a token about to
    /// expire first and, on a refusal, lets the authorizer refresh or sign in and sends a
    /// fresh request again. A refusal that stays is returned with the reason
    /// ([`HttpResponse::refusal`]).
    pub(crate) async fn send(
        &self,
        build: impl Fn() -> Exchange,
    ) -> Result<HttpResponse, HttpError> {
        match &self.auth {
            None => self.execute(build()).await,
            // Boxed: the usual exchange's future stays small.
            Some(auth) => Box::pin(self.send_authorized(auth, build)).await,
        }
    }

    async fn send_authorized(
        &self,
        auth: &crate::auth::Authorizer,
        build: impl Fn() -> Exchange,
    ) -> Result<HttpResponse, HttpError> {
        auth.before_request(&self.client).await;
        let mut attempts = 0;
        loop {
            let ex = build();
            if let Target::Other(url) = &ex.target {
                if url.origin() != self.url.origin() {
                    return self.execute(ex).await;
                }
            }
            let used = ex.get(&AUTHORIZATION).cloned();
            let mut resp = self.execute(ex).await?;
            let status = resp.status().as_u16();
            if !is_refusal(&resp) {
                return Ok(resp);
            }
            if attempts >= MAX_AUTH_ATTEMPTS {
                let why = format!(
                    "the server still refused the request (HTTP {status}) after {MAX_AUTH_ATTEMPTS} sign-in attempts; check the account's permissions"
                );
                resp.set_refusal(why);
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
                    resp.set_refusal(e.to_string());
                    return Ok(resp);
                }
            }
        }
    }

    /// One exchange: the lean client for the server's own URL when there is one (a
    /// redirect it gets is followed through reqwest), else reqwest.
    pub(crate) async fn execute(&self, ex: Exchange) -> Result<HttpResponse, HttpError> {
        if let (Some(wire), Target::Own) = (&self.wire, &ex.target) {
            let resp = ex.send_lean(wire).await?;
            if !is_redirect(resp.status()) {
                return Ok(resp);
            }
        }
        let req = ex.into_reqwest(&self.client, &self.url);
        Ok(Box::pin(req.send()).await?.into())
    }
}

/// A refusal the authorizer may cure (a sign-in, a new token, a wider scope).
pub(crate) fn is_refusal(resp: &HttpResponse) -> bool {
    match resp.status().as_u16() {
        401 => true,
        403 => challenge::bearer(resp.headers()).is_some_and(|c| c.is_insufficient_scope()),
        _ => false,
    }
}

pub(crate) fn is_redirect(status: StatusCode) -> bool {
    matches!(status.as_u16(), 301 | 302 | 303 | 307 | 308)
}
