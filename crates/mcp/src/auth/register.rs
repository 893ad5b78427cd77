//! Which client identity to use with an authorization server, in the order the MCP
//! specification gives: a client registered beforehand (`"oauth": {"clientId", …}` in
//! `.mcp.json`), a Client ID Metadata Document URL (app setting) when the server
//! advertises `client_id_metadata_document_supported`, a registration kept from before
//! (keyed by issuer, so a new authorization server means a new registration), Dynamic
//! Client Registration (RFC 7591), else an error naming the setting to add.

use serde::Deserialize;
use serde_json::json;

use super::discovery::{self, ServerMetadata};
use super::{AuthContext, AuthError, OAuthConfig, StoredClient, StoredTokens};

/// `client_name` sent in Dynamic Client Registration.
pub const CLIENT_NAME: &str = "harness9";

pub use super::token::{AUTH_BASIC, AUTH_NONE, AUTH_POST};

/// The client to use with `meta`'s issuer for `redirect_uri`; registers when needed.
pub async fn client_for(
    http: &reqwest::Client,
    ctx: &AuthContext,
    meta: &ServerMetadata,
    oauth: Option<&OAuthConfig>,
    redirect_uri: &str,
) -> Result<StoredClient, AuthError> {
    if let Some(id) = oauth.and_then(|o| o.client_id.clone()) {
        let secret = oauth.and_then(|o| o.client_secret.clone());
        let method = method_for_secret(secret.is_some(), meta);
        return Ok(StoredClient {
            client_id: id,
            client_secret: secret,
            token_endpoint_auth_method: method.to_string(),
            redirect_uri: redirect_uri.to_string(),
        });
    }
    if meta.client_id_metadata_document_supported {
        if let Some(url) = &ctx.settings.client_metadata_url {
            return Ok(StoredClient {
                client_id: url.clone(),
                client_secret: None,
                token_endpoint_auth_method: AUTH_NONE.to_string(),
                redirect_uri: redirect_uri.to_string(),
            });
        }
    }
    if let Some(kept) = ctx.store.client(&meta.issuer) {
        if kept.redirect_uri == redirect_uri {
            return Ok(kept);
        }
    }
    let Some(endpoint) = &meta.registration_endpoint else {
        return Err(AuthError::Registration(format!(
            "the authorization server {} does not let harness9 register itself; register a client there and add \"oauth\": {{\"clientId\": \"…\", \"clientSecret\": \"${{SECRET}}\"}} to the server's entry in .mcp.json",
            meta.issuer
        )));
    };
    let client = register(http, meta, endpoint, redirect_uri).await?;
    let store = ctx.store.clone();
    let (issuer, saved) = (meta.issuer.clone(), client.clone());
    let _ = tokio::task::spawn_blocking(move || store.save_client(&issuer, &saved)).await;
    Ok(client)
}

/// A client secret from `.mcp.json` belongs to one authorization server: while a sign-in
/// from another one is kept for this server (`kept`), it is not sent to `meta`'s issuer
/// (the server may have been taken over and point somewhere else now); the user signs out
/// first when the new server is right.
pub fn check_configured_secret(
    kept: Option<&StoredTokens>,
    meta: &ServerMetadata,
    oauth: Option<&OAuthConfig>,
) -> Result<(), AuthError> {
    let has_secret = oauth.is_some_and(|o| o.client_id.is_some() && o.client_secret.is_some());
    match kept {
        Some(t) if has_secret && t.issuer != meta.issuer => Err(AuthError::Registration(format!(
            "the server now names the authorization server {}, not {} where you signed in with the client secret from .mcp.json; harness9 does not send that secret to another server. If the new one is right, sign out (`harness9 mcp logout`) and sign in again",
            meta.issuer, t.issuer
        ))),
        _ => Ok(()),
    }
}

/// The client a refresh uses with `meta`'s issuer: the configured one, the kept
/// registration, or the metadata document URL; `None` when none fits (sign in again).
pub fn known_client(
    ctx: &AuthContext,
    meta: &ServerMetadata,
    oauth: Option<&OAuthConfig>,
) -> Option<StoredClient> {
    if let Some(id) = oauth.and_then(|o| o.client_id.clone()) {
        let secret = oauth.and_then(|o| o.client_secret.clone());
        return Some(StoredClient {
            token_endpoint_auth_method: method_for_secret(secret.is_some(), meta).to_string(),
            client_id: id,
            client_secret: secret,
            redirect_uri: String::new(),
        });
    }
    if meta.client_id_metadata_document_supported {
        if let Some(url) = &ctx.settings.client_metadata_url {
            return Some(StoredClient {
                client_id: url.clone(),
                client_secret: None,
                token_endpoint_auth_method: AUTH_NONE.to_string(),
                redirect_uri: String::new(),
            });
        }
    }
    ctx.store.client(&meta.issuer)
}

/// How to authenticate at the token endpoint when holding (or not) a secret.
fn method_for_secret(has_secret: bool, meta: &ServerMetadata) -> &'static str {
    if !has_secret {
        return AUTH_NONE;
    }
    let supported = meta.token_endpoint_auth_methods_supported.as_deref();
    match supported {
        // RFC 8414: the default when the server says nothing is client_secret_basic.
        None => AUTH_BASIC,
        Some(list) if list.iter().any(|m| m == AUTH_BASIC) => AUTH_BASIC,
        Some(list) if list.iter().any(|m| m == AUTH_POST) => AUTH_POST,
        Some(_) => AUTH_BASIC,
    }
}

/// The method asked for in a registration: `none` (a public client) when the server
/// takes it, else what it lists first among those we speak.
fn method_to_request(meta: &ServerMetadata) -> &'static str {
    match meta.token_endpoint_auth_methods_supported.as_deref() {
        None => AUTH_BASIC,
        Some(list) => [AUTH_NONE, AUTH_BASIC, AUTH_POST]
            .into_iter()
            .find(|m| list.iter().any(|x| x == m))
            .unwrap_or(AUTH_BASIC),
    }
}

#[derive(Deserialize)]
struct Registered {
    client_id: String,
    #[serde(default)]
    client_secret: Option<String>,
    #[serde(default)]
    token_endpoint_auth_method: Option<String>,
}

/// Dynamic Client Registration (RFC 7591) as a native app with a loopback redirect.
async fn register(
    http: &reqwest::Client,
    meta: &ServerMetadata,
    endpoint: &str,
    redirect_uri: &str,
) -> Result<StoredClient, AuthError> {
    let asked = method_to_request(meta);
    let body = json!({
        "client_name": CLIENT_NAME,
        "application_type": "native",
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": asked,
    });
    let resp = http.post(endpoint).json(&body).send().await.map_err(|e| {
        AuthError::Registration(format!(
            "cannot register harness9 with the authorization server at {endpoint}: {}",
            discovery::short(&e)
        ))
    })?;
    let status = resp.status();
    let bytes = discovery::read_limited(resp).await.map_err(|e| {
        AuthError::Registration(format!(
            "the client registration answer of {endpoint} could not be read: {e}"
        ))
    })?;
    if !status.is_success() {
        let why = super::token::error_text(&bytes);
        return Err(AuthError::Registration(format!(
            "the authorization server refused to register harness9 (HTTP {status}{why}); register a client there and add \"oauth\": {{\"clientId\": \"…\"}} to the server's entry in .mcp.json"
        )));
    }
    let r: Registered = serde_json::from_slice(&bytes).map_err(|e| {
        AuthError::Registration(format!(
            "the client registration answer of {endpoint} is not valid: {e}"
        ))
    })?;
    let method = match r.token_endpoint_auth_method.as_deref() {
        Some(m @ (AUTH_BASIC | AUTH_POST | AUTH_NONE)) => m.to_string(),
        Some(other) => {
            return Err(AuthError::Registration(format!(
                "the authorization server registered harness9 for token endpoint authentication \"{other}\", which harness9 does not speak (it speaks client_secret_basic, client_secret_post and none)"
            )))
        }
        None => method_for_secret(r.client_secret.is_some(), meta).to_string(),
    };
    Ok(StoredClient {
        client_id: r.client_id,
        client_secret: r.client_secret,
        token_endpoint_auth_method: method,
        redirect_uri: redirect_uri.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(methods: Option<&[&str]>) -> ServerMetadata {
        ServerMetadata {
            token_endpoint_auth_methods_supported: methods
                .map(|m| m.iter().map(|s| s.to_string()).collect()),
            ..ServerMetadata::default()
        }
    }

    #[test]
    fn auth_method_choice() {
        assert_eq!(
            method_for_secret(false, &meta(Some(&[AUTH_BASIC]))),
            AUTH_NONE
        );
        assert_eq!(method_for_secret(true, &meta(None)), AUTH_BASIC);
        assert_eq!(
            method_for_secret(true, &meta(Some(&[AUTH_POST]))),
            AUTH_POST
        );
        assert_eq!(
            method_for_secret(true, &meta(Some(&[AUTH_POST, AUTH_BASIC]))),
            AUTH_BASIC
        );
        assert_eq!(
            method_to_request(&meta(Some(&[AUTH_POST, AUTH_NONE]))),
            AUTH_NONE
        );
        assert_eq!(method_to_request(&meta(Some(&[AUTH_POST]))), AUTH_POST);
        assert_eq!(method_to_request(&meta(None)), AUTH_BASIC);
    }
}
