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
mod refresh;
pub mod register;
pub mod store;
pub mod token;

use parking_lot::Mutex;
use std::sync::{Arc, Weak};

use futures::future::BoxFuture;
use reqwest::header::{HeaderMap, HeaderValue};
use serde::Serialize;

pub use browser::{BrowserError, SystemOpener};
use refresh::RefreshError;
pub use refresh::{refresh_margin, REFRESH_MARGIN_SECS, REFRESH_SETTLE_TIMEOUT};
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

impl AuthContext {
    /// The user's credential store ([`CredentialStore::open`] in `data_dir`) and the app
    /// settings from the environment. May wait briefly for the keychain.
    pub fn open(data_dir: &std::path::Path) -> AuthContext {
        AuthContext {
            store: Arc::new(CredentialStore::open(data_dir)),
            settings: AuthSettings::from_env(),
        }
    }

    /// Credentials kept in memory only (tests).
    pub fn memory() -> AuthContext {
        AuthContext {
            store: Arc::new(CredentialStore::memory()),
            settings: AuthSettings::default(),
        }
    }
}

impl std::fmt::Debug for AuthContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthContext")
            .field("store", &self.store.location())
            .field("settings", &self.settings)
            .finish()
    }
}

/// Environment variable with the URL of harness9's Client ID Metadata Document
/// ([`AuthSettings::client_metadata_url`]).
pub const CLIENT_METADATA_URL_ENV: &str = "HARNESS9_CLIENT_METADATA_URL";

impl AuthSettings {
    /// The settings from the environment ([`CLIENT_METADATA_URL_ENV`]).
    pub fn from_env() -> AuthSettings {
        AuthSettings {
            client_metadata_url: std::env::var(CLIENT_METADATA_URL_ENV)
                .ok()
                .filter(|u| !u.trim().is_empty()),
        }
    }
}

impl std::fmt::Debug for OAuthConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthConfig")
            .field("client_id", &self.client_id)
            .field("has_client_secret", &self.client_secret.is_some())
            .field("scopes", &self.scopes)
            .field("callback_port", &self.callback_port)
            .finish()
    }
}

/// Opens the authorization URL for the user (the system browser, `$BROWSER`, the desktop
/// app's opener, or, headless, a plain HTTP GET that follows the redirect). An opener of
/// its own that fails says why with [`BrowserError::NotShown`].
pub trait Opener: Send + Sync + 'static {
    fn open(&self, url: &str) -> BoxFuture<'static, Result<(), BrowserError>>;
}

/// Who the user is signed in as, safe to show (no token).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SignedIn {
    /// The authorization server's issuer.
    pub issuer: String,
    pub scopes: Vec<String>,
    /// Seconds since the Unix epoch when the access token expires, when known.
    pub expires_at: Option<u64>,
    /// Whether a refresh token is kept.
    pub refreshable: bool,
    /// Where the tokens are kept, in words ([`CredentialStore::location`]).
    pub kept_in: String,
}

/// Why signing in did not work; the text says what to do. It shows with every URL in it
/// masked ([`crate::mask::mask_urls_in`]): the texts name endpoints and server
/// URLs, whose query or userinfo may hold a secret. The variant says which step failed
/// ([`AuthError::code`]).
#[derive(Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    /// The server needs the user to sign in (again).
    #[error("{}", crate::mask::mask_urls_in(.0))]
    NeedsSignIn(String),
    /// The server refused access, and signing in again would not change that.
    #[error("{}", crate::mask::mask_urls_in(.0))]
    Refused(String),
    /// The server does not ask for sign-in at all.
    #[error("{}", crate::mask::mask_urls_in(.0))]
    NotNeeded(String),
    /// The server, its protected resource metadata or its authorization server could not
    /// be reached, read or used (discovery).
    #[error("{}", crate::mask::mask_urls_in(.0))]
    Discovery(String),
    /// harness9 could not register itself as a client, or the configured client does not
    /// fit the authorization server.
    #[error("{}", crate::mask::mask_urls_in(.0))]
    Registration(String),
    /// The token endpoint refused or failed (code exchange, refresh).
    #[error("{}", crate::mask::mask_urls_in(.0))]
    Token(String),
    /// The browser step: opening the page, the redirect listener, the answer it brought.
    #[error("{}", crate::mask::mask_urls_in(.0))]
    Browser(String),
    /// The tokens could not be kept or forgotten ([`store::CredentialError`]).
    #[error("{}", crate::mask::mask_urls_in(.0))]
    Credentials(String),
    /// Something inside harness9 failed (no HTTP client, no random numbers).
    #[error("{}", crate::mask::mask_urls_in(.0))]
    Internal(String),
}

impl AuthError {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        match self {
            AuthError::NeedsSignIn(_) => "needs-auth",
            AuthError::Refused(_) => "access-refused",
            AuthError::NotNeeded(_) => "sign-in-not-needed",
            AuthError::Discovery(_) => "auth-discovery-failed",
            AuthError::Registration(_) => "auth-registration-failed",
            AuthError::Token(_) => "auth-token-failed",
            AuthError::Browser(_) => "sign-in-not-finished",
            AuthError::Credentials(_) => "credentials-failed",
            AuthError::Internal(_) => "internal",
        }
    }
}

impl std::fmt::Debug for AuthError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AuthError({}: {:?})", self.code(), self.to_string())
    }
}

/// What an authorizer holds between requests.
#[derive(Default)]
struct AuthState {
    tokens: Option<StoredTokens>,
    /// What the last discovery found (reused by refreshes and step-ups).
    discovered: Option<flow::Discovered>,
    /// What the store held when this authorizer last read or wrote it: a refresh or
    /// sign-in keeps its tokens only while the store still holds these.
    kept: Option<StoredTokens>,
}

/// The authorization state of one HTTP server connection; shared by the transport (which
/// asks for headers and reports refusals) and the manager (which shows the state).
pub struct Authorizer {
    /// Itself, for the task a refresh runs in.
    me: Weak<Authorizer>,
    server_url: String,
    /// The canonical server URL: the RFC 8707 resource and the key of its tokens.
    resource_key: String,
    oauth: Option<OAuthConfig>,
    ctx: AuthContext,
    opener: Mutex<Option<Arc<dyn Opener>>>,
    needs_auth: Mutex<Option<String>>,
    state: Mutex<AuthState>,
    /// Serialises refreshes and sign-ins: concurrent refusals cause one of them. A refresh
    /// holds it until its tokens are kept, even when the request that asked is gone.
    serial: Arc<tokio::sync::Mutex<()>>,
    http: std::sync::OnceLock<reqwest::Client>,
}

impl Authorizer {
    pub fn new(server_url: &str, oauth: Option<OAuthConfig>, ctx: AuthContext) -> Arc<Authorizer> {
        let resource_key = resource_key(server_url);
        let tokens = ctx.store.tokens(&resource_key);
        Arc::new_cyclic(|me| Authorizer {
            me: me.clone(),
            server_url: server_url.to_string(),
            resource_key,
            oauth,
            ctx,
            opener: Mutex::new(None),
            needs_auth: Mutex::new(None),
            state: Mutex::new(AuthState {
                kept: tokens.clone(),
                tokens,
                discovered: None,
            }),
            serial: Arc::new(tokio::sync::Mutex::new(())),
            http: std::sync::OnceLock::new(),
        })
    }

    pub fn server_url(&self) -> &str {
        &self.server_url
    }

    /// Allows (Some) or forbids (None, the default) signing in inline when the server
    /// refuses the request.
    pub fn set_opener(&self, opener: Option<Arc<dyn Opener>>) {
        *self.opener.lock() = opener;
    }

    /// The `Authorization` header for the next request (marked sensitive), when a token is
    /// held.
    pub fn header(&self) -> Option<HeaderValue> {
        let st = self.state.lock();
        bearer_header(&st.tokens.as_ref()?.access_token)
    }

    /// Called before a request: refreshes a token that is about to expire.
    pub async fn before_request(&self, _http: &reqwest::Client) {
        if !self.expiring() {
            return;
        }
        let serial = self.serial.clone().lock_owned().await;
        if !self.expiring() {
            return; // refreshed meanwhile
        }
        if let (Err(e), _) = self.refresh_kept(serial).await {
            tracing::info!(
                "refreshing the access token of {} failed: {e}",
                self.server_url
            );
        }
    }

    /// Whether the held token expires within its [`refresh_margin`] and can be refreshed.
    fn expiring(&self) -> bool {
        let st = self.state.lock();
        st.tokens.as_ref().is_some_and(|t| {
            t.refresh_token.is_some()
                && t.expires_at
                    .is_some_and(|e| e <= token::now() + refresh_margin(t))
        })
    }

    /// The server refused a request (`401`, or `403` with `insufficient_scope`) that was
    /// sent with `used` as its `Authorization` header. `Ok(())`: send it again (a new token
    /// is held). `Err`: fail it with this text ([`Authorizer::needs_auth`] is set when
    /// signing in would help).
    pub async fn on_refused(
        &self,
        _http: &reqwest::Client,
        status: u16,
        headers: &HeaderMap,
        used: Option<&HeaderValue>,
    ) -> Result<(), AuthError> {
        let ch = challenge::bearer(headers).unwrap_or_default();
        let mut serial = self.serial.clone().lock_owned().await;
        let current = self.header();
        if current.is_some()
            && current.as_ref().map(HeaderValue::as_bytes) != used.map(HeaderValue::as_bytes)
        {
            return Ok(()); // another request already got a newer token
        }
        let held = self.state.lock().tokens.clone();
        if status == 403 {
            if !ch.is_insufficient_scope() {
                return Err(AuthError::Refused(format!(
                    "the server refused access (HTTP 403){}",
                    describe(&ch)
                )));
            }
            // Step-up: what was granted plus what the server asks for now.
            let mut previous = held.map(|t| t.scopes).unwrap_or_default();
            for s in ch.scopes() {
                if !previous.contains(&s) {
                    previous.push(s);
                }
            }
            let why = match ch.scope.as_deref().filter(|s| !s.is_empty()) {
                Some(wanted) => format!("needs more permissions: scope {wanted}"),
                None => "needs more permissions".to_string(),
            };
            return self.sign_in_inline(&ch, &previous, why).await;
        }
        if let Some(t) = &held {
            if t.refresh_token.is_some() && used.is_some() {
                let (refreshed, back) = self.refresh_kept(serial).await;
                serial = match back {
                    Some(g) => g,
                    None => self.serial.clone().lock_owned().await,
                };
                match refreshed {
                    Ok(()) => return Ok(()),
                    Err(RefreshError::Spent(e)) => tracing::info!(
                        "refreshing the access token of {} failed: {e}",
                        self.server_url
                    ),
                    Err(RefreshError::SignInAgain(why)) => {
                        // The kept tokens stay (only a refused grant forgets them).
                        let signed_in = self.sign_in_inline(&ch, &[], why).await;
                        drop(serial);
                        return signed_in;
                    }
                    Err(RefreshError::Failed(e)) => {
                        return Err(AuthError::Token(format!(
                            "the access token expired and refreshing it failed ({e}); the sign-in is kept, the next request tries again"
                        )))
                    }
                }
            }
        }
        let why = if held.is_some() || used.is_some() {
            "the sign-in expired"
        } else {
            "not signed in"
        };
        if let Some(held) = held {
            if self.forget_refused(held).await {
                return Ok(()); // newer tokens were kept meanwhile (elsewhere): try those
            }
        }
        let signed_in = self.sign_in_inline(&ch, &[], why.to_string()).await;
        drop(serial);
        signed_in
    }

    /// Signs in now when an opener is set; else records `why` and fails.
    async fn sign_in_inline(
        &self,
        ch: &challenge::BearerChallenge,
        previous: &[String],
        why: String,
    ) -> Result<(), AuthError> {
        let opener = self.opener.lock().clone();
        let Some(opener) = opener else {
            return Err(self.needs_sign_in(why));
        };
        let since = self.ctx.store.sign_outs(&self.resource_key);
        let kept = self.state.lock().kept.clone();
        let http = self.http()?;
        let disc = flow::discover(&http, &self.server_url, Some(ch)).await?;
        register::check_configured_secret(kept.as_ref(), &disc.meta, self.oauth.as_ref())?;
        let tokens = flow::run(
            &http,
            &self.ctx,
            self.oauth.as_ref(),
            &disc,
            ch,
            previous,
            opener,
        )
        .await?;
        self.keep(tokens, Some(disc), kept, since).await
    }

    /// Records that the user must sign in (`why`, for the status); the error to fail with.
    fn needs_sign_in(&self, why: String) -> AuthError {
        let text = format!(
            "the server requires sign-in ({why}); sign in with `harness9 mcp login` or the app's Sign in button"
        );
        *self.needs_auth.lock() = Some(why);
        AuthError::NeedsSignIn(text)
    }

    fn http(&self) -> Result<reqwest::Client, AuthError> {
        if let Some(c) = self.http.get() {
            return Ok(c.clone());
        }
        let c = discovery::http_client()?;
        Ok(self.http.get_or_init(|| c).clone())
    }

    /// Takes the tokens kept in the store now (after a sign-in made elsewhere, such as
    /// `harness9 mcp login` or the front ends' "Sign in"); clears [`Authorizer::needs_auth`]
    /// when there are some.
    pub fn reload(&self) {
        let tokens = self.ctx.store.tokens(&self.resource_key);
        let found = tokens.is_some();
        {
            let mut st = self.state.lock();
            st.kept = tokens.clone();
            st.tokens = tokens;
        }
        if found {
            *self.needs_auth.lock() = None;
        }
    }

    /// Which credentials requests go out with now: changes whenever the tokens do (a
    /// sign-in, a refresh, a sign-out); 0 without tokens.
    pub fn credentials_key(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let st = self.state.lock();
        st.tokens.as_ref().map_or(0, |t| {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            t.access_token.hash(&mut h);
            h.finish() | 1
        })
    }

    /// Set when the server needs the user to sign in (again); the reason, for the status.
    pub fn needs_auth(&self) -> Option<String> {
        self.needs_auth.lock().clone()
    }

    /// The account signed in, when tokens are held.
    pub fn signed_in(&self) -> Option<SignedIn> {
        let st = self.state.lock();
        st.tokens
            .as_ref()
            .map(|t| signed_in_from(t, &self.ctx.store))
    }
}

fn signed_in_from(t: &StoredTokens, store: &CredentialStore) -> SignedIn {
    SignedIn {
        issuer: t.issuer.clone(),
        scopes: t.scopes.clone(),
        expires_at: t.expires_at,
        refreshable: t.refresh_token.is_some(),
        kept_in: store.location(),
    }
}

fn bearer_header(token: &str) -> Option<HeaderValue> {
    let mut v = HeaderValue::from_str(&format!("Bearer {token}")).ok()?;
    v.set_sensitive(true);
    Some(v)
}

/// ` (invalid_token: expired)` from a challenge, or nothing.
fn describe(ch: &challenge::BearerChallenge) -> String {
    match (&ch.error, &ch.error_description) {
        (Some(e), Some(d)) => format!(" ({e}: {d})"),
        (Some(e), None) => format!(" ({e})"),
        (None, Some(d)) => format!(" ({d})"),
        (None, None) => String::new(),
    }
}

/// Where the tokens of `server_url` are kept: its canonical form, else the URL as written.
fn resource_key(server_url: &str) -> String {
    discovery::canonical_resource(server_url).unwrap_or_else(|_| server_url.to_string())
}

/// Signs in to the server at `server_url` with `opener` showing the authorization page,
/// and keeps the tokens. Probes the server without a token to get its challenge.
pub async fn sign_in(
    server_url: &str,
    oauth: Option<&OAuthConfig>,
    ctx: &AuthContext,
    opener: Arc<dyn Opener>,
) -> Result<SignedIn, AuthError> {
    let http = discovery::http_client()?;
    let ch = flow::probe(&http, server_url).await?;
    if ch.is_none() {
        // It let us in: sign in only when it publishes resource metadata.
        let found = discovery::resource_metadata(&http, server_url, None).await?;
        if found.is_none() {
            return Err(AuthError::NotNeeded(format!(
                "{server_url} does not ask for sign-in (it answered without asking for a token and publishes no protected resource metadata)"
            )));
        }
    }
    let ch = ch.unwrap_or_default();
    let disc = flow::discover(&http, server_url, Some(&ch)).await?;
    let (store, key) = (ctx.store.clone(), resource_key(server_url));
    let kept = {
        let (store, key) = (store.clone(), key.clone());
        tokio::task::spawn_blocking(move || store.tokens(&key))
            .await
            .ok()
            .flatten()
    };
    register::check_configured_secret(kept.as_ref(), &disc.meta, oauth)?;
    let tokens = flow::run(&http, ctx, oauth, &disc, &ch, &[], opener).await?;
    let signed = signed_in_from(&tokens, &ctx.store);
    tokio::task::spawn_blocking(move || store.save_tokens(&key, &tokens))
        .await
        .map_err(|e| AuthError::Internal(format!("keeping the sign-in failed: {e}")))?
        .map_err(|e| {
            AuthError::Credentials(format!("signed in, but the tokens could not be kept: {e}"))
        })?;
    Ok(signed)
}

/// Forgets the tokens kept for the server at `server_url`. `Ok(true)` when some were kept.
pub async fn sign_out(server_url: &str, ctx: &AuthContext) -> Result<bool, AuthError> {
    let (store, key) = (ctx.store.clone(), resource_key(server_url));
    tokio::task::spawn_blocking(move || store.forget_tokens(&key))
        .await
        .map_err(|e| AuthError::Internal(format!("signing out failed: {e}")))?
        .map_err(|e| AuthError::Credentials(format!("signing out failed: {e}")))
}
