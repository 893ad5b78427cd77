//! Token requests: the `authorization_code` and `refresh_token` grants, with the RFC 8707
//! `resource`, authenticating the client as registered (`client_secret_basic` with the
//! id and secret form-encoded first, `client_secret_post`, or `none`). Error answers
//! (`invalid_grant`, …) become text a user can act on; tokens never appear in it.

use std::time::{SystemTime, UNIX_EPOCH};

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde::Deserialize;

use super::discovery::{self, ServerMetadata};
use super::{AuthError, StoredClient, StoredTokens};

/// How a client authenticates at the token endpoint (`token_endpoint_auth_method`):
/// HTTP Basic with its secret, the secret in the form, or not at all (a public client).
pub const AUTH_BASIC: &str = "client_secret_basic";
pub const AUTH_POST: &str = "client_secret_post";
pub const AUTH_NONE: &str = "none";

/// A successful token response (RFC 6749 §5.1).
#[derive(Deserialize)]
pub struct TokenResponse {
    pub access_token: String,
    #[serde(default)]
    pub token_type: Option<String>,
    #[serde(default)]
    pub expires_in: Option<u64>,
    #[serde(default)]
    pub refresh_token: Option<String>,
    #[serde(default)]
    pub scope: Option<String>,
}

/// A refused token request: `invalid_grant` means the grant is spent (sign in again).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenError {
    pub code: Option<String>,
    pub message: String,
}

impl From<TokenError> for AuthError {
    fn from(e: TokenError) -> AuthError {
        AuthError::Token(e.message)
    }
}

/// Seconds since the Unix epoch.
pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// The form and headers of a token request for `client`.
pub fn build_request(
    http: &reqwest::Client,
    endpoint: &str,
    client: &StoredClient,
    mut params: Vec<(&str, String)>,
) -> reqwest::RequestBuilder {
    let mut req = http
        .post(endpoint)
        .header(reqwest::header::ACCEPT, "application/json");
    match client.token_endpoint_auth_method.as_str() {
        AUTH_BASIC if client.client_secret.is_some() => {
            // RFC 6749 §2.3.1: form-encode both before joining them.
            let enc =
                |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
            let secret = client.client_secret.as_deref().unwrap_or("");
            let cred = STANDARD.encode(format!("{}:{}", enc(&client.client_id), enc(secret)));
            let mut v = reqwest::header::HeaderValue::from_str(&format!("Basic {cred}"))
                .expect("base64 is a valid header value");
            v.set_sensitive(true);
            req = req.header(reqwest::header::AUTHORIZATION, v);
            // RFC 6749 allows it beside Basic; the Python SDK's token endpoint requires it.
            params.push(("client_id", client.client_id.clone()));
        }
        AUTH_POST => {
            params.push(("client_id", client.client_id.clone()));
            if let Some(s) = &client.client_secret {
                params.push(("client_secret", s.clone()));
            }
        }
        _ => params.push(("client_id", client.client_id.clone())),
    }
    let body = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(params.iter().map(|(k, v)| (*k, v.as_str())))
        .finish();
    req.header(
        reqwest::header::CONTENT_TYPE,
        "application/x-www-form-urlencoded",
    )
    .body(body)
}

/// Redeems an authorization code.
pub async fn exchange_code(
    http: &reqwest::Client,
    meta: &ServerMetadata,
    client: &StoredClient,
    code: &str,
    verifier: &str,
    resource: &str,
    asked_scopes: &[String],
) -> Result<StoredTokens, TokenError> {
    let params = vec![
        ("grant_type", "authorization_code".to_string()),
        ("code", code.to_string()),
        ("code_verifier", verifier.to_string()),
        ("redirect_uri", client.redirect_uri.clone()),
        ("resource", resource.to_string()),
    ];
    let r = send(http, meta, client, params).await?;
    Ok(into_stored(r, meta, asked_scopes, None))
}

/// Gets a new access token with a refresh token.
pub async fn refresh(
    http: &reqwest::Client,
    meta: &ServerMetadata,
    client: &StoredClient,
    old: &StoredTokens,
    resource: &str,
) -> Result<StoredTokens, TokenError> {
    let Some(rt) = old.refresh_token.clone() else {
        return Err(TokenError {
            code: None,
            message: "no refresh token is kept".into(),
        });
    };
    if !issued_by(old, meta) {
        return Err(TokenError {
            code: None,
            message: format!(
                "the tokens were issued by {}, not by {}; sign in again",
                old.issuer, meta.issuer
            ),
        });
    }
    let params = vec![
        ("grant_type", "refresh_token".to_string()),
        ("refresh_token", rt.clone()),
        ("resource", resource.to_string()),
    ];
    let r = send(http, meta, client, params).await?;
    // A server may keep the refresh token it issued before (RFC 6749 §6).
    Ok(into_stored(r, meta, &old.scopes, Some(rt)))
}

/// Whether `tokens` were issued by the authorization server `meta` describes: the same
/// issuer, and the same token endpoint when it was kept with them.
pub fn issued_by(tokens: &StoredTokens, meta: &ServerMetadata) -> bool {
    tokens.issuer == meta.issuer
        && tokens
            .token_endpoint
            .as_ref()
            .is_none_or(|e| *e == meta.token_endpoint)
}

fn into_stored(
    r: TokenResponse,
    meta: &ServerMetadata,
    asked: &[String],
    old_refresh: Option<String>,
) -> StoredTokens {
    let scopes = match &r.scope {
        Some(s) => super::challenge::split_scopes(Some(s)),
        None => asked.to_vec(),
    };
    let issued_at = now();
    StoredTokens {
        access_token: r.access_token,
        refresh_token: r.refresh_token.or(old_refresh),
        expires_at: r.expires_in.map(|s| issued_at.saturating_add(s)),
        issued_at: Some(issued_at),
        scopes,
        issuer: meta.issuer.clone(),
        token_endpoint: Some(meta.token_endpoint.clone()),
    }
}

async fn send(
    http: &reqwest::Client,
    meta: &ServerMetadata,
    client: &StoredClient,
    params: Vec<(&str, String)>,
) -> Result<TokenResponse, TokenError> {
    let endpoint = &meta.token_endpoint;
    let fail = |message: String| TokenError {
        code: None,
        message,
    };
    let resp = build_request(http, endpoint, client, params)
        .send()
        .await
        .map_err(|e| {
            fail(format!(
                "cannot reach the token endpoint {endpoint}: {}",
                discovery::short(&e)
            ))
        })?;
    let status = resp.status();
    let body = discovery::read_limited(resp).await.map_err(|e| {
        fail(format!(
            "the answer of the token endpoint {endpoint} could not be read: {e}"
        ))
    })?;
    if !status.is_success() {
        // Only a refusal (4xx) says something about the grant; a failing server (5xx)
        // says nothing about it, whatever code its body names.
        let code = status
            .is_client_error()
            .then(|| serde_json::from_slice::<OAuthErrorBody>(&body).ok())
            .flatten()
            .map(|b| b.error);
        let hint = match code.as_deref() {
            Some("invalid_grant") => "; sign in again",
            Some("invalid_client" | "unauthorized_client") => {
                "; the client registration was refused (check \"oauth\" in .mcp.json, or sign in again to register anew)"
            }
            _ => "",
        };
        return Err(TokenError {
            code,
            message: format!(
                "the authorization server refused the token request (HTTP {status}{}){hint}",
                error_text(&body)
            ),
        });
    }
    let r: TokenResponse = serde_json::from_slice(&body).map_err(|_| {
        fail(format!(
            "the token endpoint {endpoint} did not answer with a token (invalid JSON or no access_token)"
        ))
    })?;
    if let Some(t) = &r.token_type {
        if !t.eq_ignore_ascii_case("bearer") {
            return Err(fail(format!(
                "the token endpoint issued a \"{t}\" token; harness9 only uses Bearer tokens"
            )));
        }
    }
    Ok(r)
}

#[derive(Deserialize)]
struct OAuthErrorBody {
    error: String,
    #[serde(default)]
    error_description: Option<String>,
}

/// `: invalid_grant (the code expired)` from an OAuth error body, or nothing.
pub fn error_text(body: &[u8]) -> String {
    match serde_json::from_slice::<OAuthErrorBody>(body) {
        Ok(b) => match b.error_description {
            Some(d) => format!(": {} ({})", clip(&b.error), clip(&d)),
            None => format!(": {}", clip(&b.error)),
        },
        Err(_) => String::new(),
    }
}

fn clip(s: &str) -> String {
    s.chars().filter(|c| !c.is_control()).take(200).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(method: &str, secret: Option<&str>) -> StoredClient {
        StoredClient {
            client_id: "id:1 é".into(),
            client_secret: secret.map(str::to_string),
            token_endpoint_auth_method: method.into(),
            redirect_uri: "http://127.0.0.1:1/callback".into(),
        }
    }

    fn built(c: &StoredClient) -> (Option<String>, String) {
        let http = reqwest::Client::new();
        let r = build_request(
            &http,
            "https://as/token",
            c,
            vec![("grant_type", "refresh_token".into())],
        )
        .build()
        .unwrap();
        let auth = r
            .headers()
            .get(reqwest::header::AUTHORIZATION)
            .map(|v| v.to_str().unwrap().to_string());
        let body = String::from_utf8(r.body().unwrap().as_bytes().unwrap().to_vec()).unwrap();
        (auth, body)
    }

    #[test]
    fn client_secret_basic_form_encodes_before_base64() {
        let (auth, body) = built(&client(AUTH_BASIC, Some("s&cret/+")));
        let expected = STANDARD.encode("id%3A1+%C3%A9:s%26cret%2F%2B");
        assert_eq!(auth, Some(format!("Basic {expected}")));
        assert_eq!(body, "grant_type=refresh_token&client_id=id%3A1+%C3%A9");
    }

    #[test]
    fn client_secret_post_and_none() {
        let (auth, body) = built(&client(AUTH_POST, Some("sec")));
        assert_eq!(auth, None);
        assert_eq!(
            body,
            "grant_type=refresh_token&client_id=id%3A1+%C3%A9&client_secret=sec"
        );
        let (auth, body) = built(&client(AUTH_NONE, None));
        assert_eq!(auth, None);
        assert_eq!(body, "grant_type=refresh_token&client_id=id%3A1+%C3%A9");
    }

    #[test]
    fn error_bodies_become_text() {
        assert_eq!(
            error_text(br#"{"error":"invalid_grant","error_description":"expired"}"#),
            ": invalid_grant (expired)"
        );
        assert_eq!(error_text(b"<html>"), "");
    }
}
