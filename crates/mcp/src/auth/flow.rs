//! The authorization code flow, step by step: discovery from a challenge ([`discover`]),
//! the scopes to ask for ([`choose_scopes`]), then [`authorize`]: PKCE and `state`, the
//! loopback listener, client registration, the browser, the RFC 9207 `iss` check
//! ([`check_iss`]) and the code exchange. [`probe`] asks a server how it wants sign-in.

use std::sync::Arc;

use reqwest::Url;

use super::callback::{CallbackListener, CallbackParams, CALLBACK_TIMEOUT};
use super::challenge::BearerChallenge;
use super::discovery::{self, ServerMetadata};
use super::pkce::Pkce;
use super::{register, token, AuthContext, AuthError, OAuthConfig, Opener, StoredTokens};

/// The scope that asks for a refresh token (SEP-2207), added only when the authorization
/// server lists it.
pub const OFFLINE_ACCESS: &str = "offline_access";

/// What discovery learned about one server.
#[derive(Debug, Clone)]
pub struct Discovered {
    /// The RFC 8707 `resource` to send: the PRM's `resource` (checked to cover the server
    /// URL), else the server URL as a resource indicator
    /// ([`discovery::resource_indicator`]: no userinfo, no query).
    pub resource: String,
    /// The PRM's `scopes_supported`.
    pub prm_scopes: Option<Vec<String>>,
    pub meta: ServerMetadata,
}

/// Finds the authorization server of `server_url`: PRM (the challenge's URL, else the
/// well-known ones), then its metadata; without a PRM, the 2025-03-26 way.
pub async fn discover(
    http: &reqwest::Client,
    server_url: &str,
    challenge: Option<&BearerChallenge>,
) -> Result<Discovered, AuthError> {
    let canonical = discovery::resource_indicator(server_url)?;
    let from_header = challenge.and_then(|c| c.resource_metadata.as_deref());
    let Some(prm) = discovery::resource_metadata(http, server_url, from_header).await? else {
        let meta = discovery::legacy_server_metadata(http, server_url).await?;
        return Ok(Discovered {
            resource: canonical,
            prm_scopes: None,
            meta,
        });
    };
    let Some(issuer) = prm.authorization_servers.first() else {
        return Err(AuthError::Discovery(
            "the server's protected resource metadata names no authorization server; the server is misconfigured".into(),
        ));
    };
    let meta = discovery::server_metadata(http, issuer)
        .await?
        .ok_or_else(|| {
            AuthError::Discovery(format!(
                "the authorization server {issuer} publishes no metadata (tried RFC 8414 and OpenID Connect discovery)"
            ))
        })?;
    Ok(Discovered {
        resource: prm
            .resource
            .as_deref()
            .map(discovery::canonical_resource)
            .transpose()?
            .unwrap_or(canonical),
        prm_scopes: prm.scopes_supported,
        meta,
    })
}

/// The scopes to ask for: the configured ones, else the challenge's, else the PRM's
/// `scopes_supported`, else none; joined with `previous` (step-up asks for the union), and
/// `offline_access` added when the authorization server lists it.
pub fn choose_scopes(
    configured: Option<&[String]>,
    challenge: &[String],
    prm_supported: Option<&[String]>,
    as_supported: Option<&[String]>,
    previous: &[String],
) -> Vec<String> {
    let base: &[String] = match configured {
        Some(c) if !c.is_empty() => c,
        _ if !challenge.is_empty() => challenge,
        _ => prm_supported.unwrap_or(&[]),
    };
    let mut out: Vec<String> = Vec::new();
    for s in previous.iter().chain(base) {
        if !out.contains(s) {
            out.push(s.clone());
        }
    }
    let offline = OFFLINE_ACCESS.to_string();
    if as_supported.is_some_and(|l| l.contains(&offline)) && !out.contains(&offline) {
        out.push(offline);
    }
    out
}

/// RFC 9207: an `iss` in the answer must be exactly the issuer remembered before
/// redirecting; a missing one is refused when the server advertised that it sends it.
pub fn check_iss(expected: &str, got: Option<&str>, advertised: bool) -> Result<(), AuthError> {
    match got {
        Some(i) if i == expected => Ok(()),
        Some(i) => Err(AuthError::Browser(format!(
            "the sign-in answer names the issuer \"{i}\", not \"{expected}\" that harness9 sent you to; refused (it may come from another server)"
        ))),
        None if advertised => Err(AuthError::Browser(format!(
            "the sign-in answer does not name its issuer although {expected} says it always does (RFC 9207); refused"
        ))),
        None => Ok(()),
    }
}

/// Runs the authorization code flow with `opener` showing the authorization page.
pub async fn authorize(
    http: &reqwest::Client,
    ctx: &AuthContext,
    oauth: Option<&OAuthConfig>,
    disc: &Discovered,
    scopes: &[String],
    opener: Arc<dyn Opener>,
) -> Result<StoredTokens, AuthError> {
    let meta = &disc.meta;
    if meta.from_document {
        let s256 = meta
            .code_challenge_methods_supported
            .as_ref()
            .is_some_and(|l| l.iter().any(|m| m == "S256"));
        if !s256 {
            return Err(AuthError::Discovery(format!(
                "the authorization server {} does not offer PKCE with S256 (code_challenge_methods_supported); harness9 does not sign in without it",
                meta.issuer
            )));
        }
    }
    let listener = bind_listener(ctx, oauth, meta).await?;
    let client = register::client_for(http, ctx, meta, oauth, &listener.redirect_uri()).await?;
    let pkce = Pkce::new()?;
    let url = authorization_url(
        meta,
        &client.client_id,
        &client.redirect_uri,
        &pkce,
        scopes,
        &disc.resource,
    )?;
    // The issuer this answer must come from, fixed before the user leaves (RFC 9207).
    let expected_issuer = meta.issuer.clone();
    let answer = open_and_wait(opener, url.as_str(), listener, &pkce.state).await?;
    if let Some(e) = &answer.error {
        let d = answer
            .error_description
            .as_deref()
            .map(|d| format!(" ({d})"))
            .unwrap_or_default();
        return Err(AuthError::Browser(format!(
            "the authorization server did not sign you in: {e}{d}"
        )));
    }
    if !pkce.state_matches(answer.state.as_deref()) {
        return Err(AuthError::Browser(
            "the sign-in answer does not belong to this sign-in (its state does not match); try again".into(),
        ));
    }
    check_iss(
        &expected_issuer,
        answer.iss.as_deref(),
        meta.authorization_response_iss_parameter_supported,
    )?;
    let Some(code) = answer.code else {
        return Err(AuthError::Browser(
            "the sign-in answer carried no authorization code; try again".into(),
        ));
    };
    match token::exchange_code(
        http,
        meta,
        &client,
        &code,
        &pkce.verifier,
        &disc.resource,
        scopes,
    )
    .await
    {
        Ok(t) => Ok(t),
        Err(e) => {
            if e.code.as_deref() == Some("invalid_client") {
                // A kept registration the server no longer knows: register anew next time.
                let store = ctx.store.clone();
                let issuer = meta.issuer.clone();
                let _ = tokio::task::spawn_blocking(move || store.forget_client(&issuer)).await;
            }
            Err(e.into())
        }
    }
}

/// The configured port, else the port of the kept registration (so its redirect URI still
/// fits), else any free port.
async fn bind_listener(
    ctx: &AuthContext,
    oauth: Option<&OAuthConfig>,
    meta: &ServerMetadata,
) -> Result<CallbackListener, AuthError> {
    if let Some(p) = oauth.and_then(|o| o.callback_port) {
        return CallbackListener::bind(p).await;
    }
    let kept = ctx
        .store
        .client(&meta.issuer)
        .and_then(|c| Url::parse(&c.redirect_uri).ok())
        .and_then(|u| u.port());
    if let Some(p) = kept {
        if let Ok(l) = CallbackListener::bind(p).await {
            return Ok(l);
        }
    }
    CallbackListener::bind(0).await
}

fn authorization_url(
    meta: &ServerMetadata,
    client_id: &str,
    redirect_uri: &str,
    pkce: &Pkce,
    scopes: &[String],
    resource: &str,
) -> Result<Url, AuthError> {
    let mut url = Url::parse(&meta.authorization_endpoint).map_err(|e| {
        AuthError::Discovery(format!(
            "the authorization endpoint \"{}\" is not a valid URL: {e}",
            meta.authorization_endpoint
        ))
    })?;
    if !matches!(url.scheme(), "https" | "http") {
        return Err(AuthError::Discovery(format!(
            "the authorization endpoint \"{url}\" is not an http(s) URL"
        )));
    }
    {
        let mut q = url.query_pairs_mut();
        q.append_pair("response_type", "code")
            .append_pair("client_id", client_id)
            .append_pair("redirect_uri", redirect_uri)
            .append_pair("code_challenge", &pkce.challenge)
            .append_pair("code_challenge_method", "S256")
            .append_pair("state", &pkce.state)
            .append_pair("resource", resource);
        if !scopes.is_empty() {
            q.append_pair("scope", &scopes.join(" "));
        }
    }
    Ok(url)
}

/// Opens the page and waits for the redirect; an opener that fails ends the wait.
async fn open_and_wait(
    opener: Arc<dyn Opener>,
    url: &str,
    listener: CallbackListener,
    state: &str,
) -> Result<CallbackParams, AuthError> {
    let wait = listener.wait(CALLBACK_TIMEOUT, state);
    tokio::pin!(wait);
    let open = opener.open(url);
    tokio::pin!(open);
    tokio::select! {
        r = &mut wait => r,
        o = &mut open => match o {
            Ok(()) => wait.await,
            Err(e) => Err(AuthError::Browser(format!("cannot open the sign-in page: {e}; open it yourself: {url}"))),
        },
    }
}

/// Chooses the scopes ([`choose_scopes`]) and runs the flow.
pub async fn run(
    http: &reqwest::Client,
    ctx: &AuthContext,
    oauth: Option<&OAuthConfig>,
    disc: &Discovered,
    ch: &BearerChallenge,
    previous: &[String],
    opener: Arc<dyn Opener>,
) -> Result<StoredTokens, AuthError> {
    let scopes = choose_scopes(
        oauth.and_then(|o| o.scopes.as_deref()),
        &ch.scopes(),
        disc.prm_scopes.as_deref(),
        disc.meta.scopes_supported.as_deref(),
        previous,
    );
    authorize(http, ctx, oauth, disc, &scopes, opener).await
}

/// How long the sign-in probe (an unauthenticated `initialize`) may take.
const PROBE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(15);

/// An unauthenticated `initialize`, to learn how the server asks for sign-in. `None`: it
/// did not refuse.
pub async fn probe(
    http: &reqwest::Client,
    server_url: &str,
) -> Result<Option<BearerChallenge>, AuthError> {
    let body = serde_json::json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {
            "protocolVersion": crate::protocol::types::LATEST_PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "harness9", "version": env!("CARGO_PKG_VERSION")}
        }
    });
    let resp = http
        .post(server_url)
        .header(
            reqwest::header::ACCEPT,
            "application/json, text/event-stream",
        )
        .timeout(PROBE_TIMEOUT)
        .json(&body)
        .send()
        .await
        .map_err(|e| {
            AuthError::Discovery(format!(
                "cannot reach {server_url}: {}",
                discovery::short(&e)
            ))
        })?;
    let status = resp.status().as_u16();
    let ch = super::challenge::bearer(resp.headers());
    let session = resp.headers().get("mcp-session-id").cloned();
    drop(resp);
    if let Some(id) = session {
        // End the session the probe may have opened.
        let _ = http
            .delete(server_url)
            .header("mcp-session-id", id)
            .timeout(PROBE_TIMEOUT)
            .send()
            .await;
    }
    Ok(match status {
        401 | 403 => Some(ch.unwrap_or_default()),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn scope_choice_order() {
        let ch = v(&["ch"]);
        let prm = v(&["p1", "p2"]);
        let conf = v(&["conf"]);
        assert_eq!(
            choose_scopes(Some(&conf), &ch, Some(&prm), None, &[]),
            v(&["conf"])
        );
        assert_eq!(choose_scopes(None, &ch, Some(&prm), None, &[]), v(&["ch"]));
        assert_eq!(
            choose_scopes(Some(&[]), &[], Some(&prm), None, &[]),
            v(&["p1", "p2"])
        );
        assert_eq!(
            choose_scopes(None, &[], None, None, &[]),
            Vec::<String>::new()
        );
    }

    #[test]
    fn offline_access_only_when_listed_and_step_up_is_a_union() {
        let listed = v(&["a", OFFLINE_ACCESS]);
        assert_eq!(
            choose_scopes(None, &[], Some(&v(&["a"])), Some(&listed), &[]),
            v(&["a", OFFLINE_ACCESS])
        );
        assert_eq!(
            choose_scopes(None, &[], Some(&v(&["a"])), Some(&v(&["a", "b"])), &[]),
            v(&["a"])
        );
        assert_eq!(
            choose_scopes(None, &v(&["b", "a"]), None, None, &v(&["a", "c"])),
            v(&["a", "c", "b"])
        );
    }

    #[test]
    fn iss_checks() {
        let e = "https://as.example";
        assert!(check_iss(e, Some(e), true).is_ok());
        assert!(check_iss(e, Some(e), false).is_ok());
        assert!(check_iss(e, None, false).is_ok());
        assert!(check_iss(e, None, true).is_err());
        assert!(check_iss(e, Some("https://as.example/"), true).is_err());
        let err = check_iss(e, Some("https://evil.example"), false).unwrap_err();
        assert!(
            err.to_string().contains("\"https://evil.example\""),
            "{err}"
        );
    }

    #[test]
    fn authorization_url_has_every_parameter() {
        let meta = ServerMetadata {
            authorization_endpoint: "https://as/authorize?x=1".into(),
            ..Default::default()
        };
        let pkce = Pkce::new().unwrap();
        let u = authorization_url(
            &meta,
            "cid",
            "http://127.0.0.1:5/callback",
            &pkce,
            &v(&["a", "b"]),
            "https://h/mcp",
        )
        .unwrap();
        let q: Vec<(String, String)> = u.query_pairs().into_owned().collect();
        let get = |k: &str| q.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        assert_eq!(get("x"), Some("1"));
        assert_eq!(get("response_type"), Some("code"));
        assert_eq!(get("code_challenge_method"), Some("S256"));
        assert_eq!(get("code_challenge"), Some(pkce.challenge.as_str()));
        assert_eq!(get("state"), Some(pkce.state.as_str()));
        assert_eq!(get("scope"), Some("a b"));
        assert_eq!(get("resource"), Some("https://h/mcp"));
        assert_eq!(get("redirect_uri"), Some("http://127.0.0.1:5/callback"));
    }
}
