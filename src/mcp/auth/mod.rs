//! MCP authorization (OAuth 2.1) for the HTTP transports.
//!
//! The HTTP transport only asks an [`Authorizer`] for the `Authorization` header of each
//! request and hands it the `401`/`403` answers it gets; everything OAuth lives here:
//! the `WWW-Authenticate` challenge ([`challenge`]), Protected Resource and
//! authorization-server metadata ([`discovery`]), PKCE and `state` ([`pkce`]), client
//! registration ([`register`]), token requests and refresh ([`token`]), the authorization
//! code flow itself ([`flow`]), where tokens are kept ([`store`]) and the browser step
//! ([`browser`]: loopback redirect listener and the system opener).
//!
//! Starting a server never opens a browser: without a usable token the authorizer records
//! why ([`Authorizer::needs_auth`]) and the manager shows the server as `needs-auth`. A
//! sign-in is asked for explicitly ([`sign_in`], `harness9 mcp login`, the front ends'
//! "Sign in"), or allowed inline by giving the authorizer an [`Opener`]
//! ([`Authorizer::set_opener`]; the conformance client does this).

pub mod browser;
pub mod callback;
pub mod challenge;
pub mod discovery;
pub mod flow;
pub mod pkce;
pub mod register;
pub mod store;
pub mod token;

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use reqwest::header::{HeaderMap, HeaderValue};
use serde::Serialize;

pub use browser::SystemOpener;
pub use store::{CredentialStore, StoredClient, StoredTokens};

/// The `"oauth"` object of an HTTP server's `.mcp.json` entry (`${VAR}` expanded).
/// `Debug` hides the client secret.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct OAuthConfig {
    /// A client registered beforehand with the authorization server.
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
    /// Scopes to ask for instead of the ones the server suggests.
    pub scopes: Option<Vec<String>>,
    /// Fixed port of the loopback redirect listener (random when unset).
    pub callback_port: Option<u16>,
}

/// App-wide authorization settings (not per project).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuthSettings {
    /// An HTTPS URL where harness9's Client ID Metadata Document is published; used as the
    /// `client_id` with authorization servers that advertise
    /// `client_id_metadata_document_supported`.
    pub client_metadata_url: Option<String>,
}

/// What every authorizer of a process shares.
#[derive(Clone)]
pub struct AuthContext {
    pub store: Arc<CredentialStore>,
    pub settings: AuthSettings,
}

/// Opens the authorization URL for the user (the system browser, `$BROWSER`, the desktop
/// app's opener, or, headless, a plain HTTP GET that follows the redirect).
pub trait Opener: Send + Sync + 'static {
    fn open(&self, url: &str) -> BoxFuture<'static, Result<(), String>>;
}

/// Who the user is signed in as, safe to show (no token).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SignedIn {
    /// The authorization server's issuer.
    pub issuer: String,
    pub scopes: Vec<String>,
    /// Seconds since the Unix epoch when the access token expires, when known.
    pub expires_at: Option<u64>,
    /// Whether a refresh token is kept.
    pub refreshable: bool,
}

/// Why signing in did not work; the text says what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct AuthError(pub String);

/// The authorization state of one HTTP server connection; shared by the transport (which
/// asks for headers and reports refusals) and the manager (which shows the state).
#[allow(dead_code)] // filled in by the flow
pub struct Authorizer {
    server_url: String,
    oauth: Option<OAuthConfig>,
    ctx: AuthContext,
    opener: Mutex<Option<Arc<dyn Opener>>>,
    needs_auth: Mutex<Option<String>>,
}

impl Authorizer {
    pub fn new(server_url: &str, oauth: Option<OAuthConfig>, ctx: AuthContext) -> Arc<Authorizer> {
        Arc::new(Authorizer {
            server_url: server_url.to_string(),
            oauth,
            ctx,
            opener: Mutex::new(None),
            needs_auth: Mutex::new(None),
        })
    }

    pub fn server_url(&self) -> &str {
        &self.server_url
    }

    /// Allows (Some) or forbids (None, the default) signing in inline when the server
    /// refuses the request.
    pub fn set_opener(&self, opener: Option<Arc<dyn Opener>>) {
        *self.opener.lock().expect("opener lock") = opener;
    }

    /// The `Authorization` header for the next request (marked sensitive), when a token is
    /// held.
    pub fn header(&self) -> Option<HeaderValue> {
        None
    }

    /// Called before a request: refreshes a token that is about to expire.
    pub async fn before_request(&self, _http: &reqwest::Client) {}

    /// The server refused a request (`401`, or `403` with `insufficient_scope`) that was
    /// sent with `used` as its `Authorization` header. `Ok(())`: send it again (a new token
    /// is held). `Err`: fail it with this text ([`Authorizer::needs_auth`] is set when
    /// signing in would help).
    pub async fn on_refused(
        &self,
        _http: &reqwest::Client,
        status: u16,
        _headers: &HeaderMap,
        _used: Option<&HeaderValue>,
    ) -> Result<(), AuthError> {
        let why = format!("the server requires sign-in (HTTP {status})");
        *self.needs_auth.lock().expect("needs_auth lock") = Some(why.clone());
        Err(AuthError(why))
    }

    /// Set when the server needs the user to sign in (again); the reason, for the status.
    pub fn needs_auth(&self) -> Option<String> {
        self.needs_auth.lock().expect("needs_auth lock").clone()
    }

    /// The account signed in, when tokens are held.
    pub fn signed_in(&self) -> Option<SignedIn> {
        None
    }
}

/// Signs in to the server at `server_url` with `opener` showing the authorization page,
/// and keeps the tokens. Probes the server without a token to get its challenge.
pub async fn sign_in(
    _server_url: &str,
    _oauth: Option<&OAuthConfig>,
    _ctx: &AuthContext,
    _opener: Arc<dyn Opener>,
) -> Result<SignedIn, AuthError> {
    Err(AuthError("signing in is not implemented yet".into()))
}

/// Forgets the tokens kept for the server at `server_url`. `Ok(true)` when some were kept.
pub async fn sign_out(_server_url: &str, _ctx: &AuthContext) -> Result<bool, AuthError> {
    Ok(false)
}
