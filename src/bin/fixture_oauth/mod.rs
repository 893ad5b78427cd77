//! The OAuth side of `mcp-http-fixture`: a protected resource and an authorization server
//! on the fixture's own origin, enough for the tests of the sign-in flow, token refresh and
//! the `needs-auth` state.
//!
//! | path | behaviour |
//! |---|---|
//! | `/oauth/…` | the profile after the prefix (`/oauth/json`, …), only with an access token issued here that is still valid; else 401 `Bearer resource_metadata=…` |
//! | `/.well-known/oauth-protected-resource/oauth/…` | PRM: `resource` = the endpoint, `authorization_servers` = [`{base}/as`], `scopes_supported` = [`tools`] |
//! | `/.well-known/oauth-authorization-server/as` | AS metadata (S256, `none` auth, `iss` in responses, `offline_access` listed) |
//! | `/as/register`, `/as/authorize`, `/as/token` | DCR, auto-approving authorization (302 to the redirect URI with `code`, `state`, `iss`), token endpoint (PKCE checked; `authorization_code` and `refresh_token` grants) |
//! | `POST /as/expire-access` | every access token issued so far stops working (the server-side expiry) |
//! | `POST /as/expire-all` | access and refresh tokens stop working |
//! | `POST /as/fail-token?status=N` | from now on the token endpoint answers HTTP N without looking at the request (0: normal again) |
//! | `POST /as/slow-token?ms=N` | from now on the token endpoint answers N ms after it has issued the tokens (a refresh token is already rotated while its answer is on the way) |
//!
//! Access tokens live `--token-ttl SECS` (default 3600) as far as `expires_in` says.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde_json::json;
use sha2::{Digest, Sha256};

/// Default lifetime of an access token (`--token-ttl`).
pub const DEFAULT_TOKEN_TTL: u64 = 3600;

#[derive(Default)]
pub struct OAuthState {
    pub token_ttl: u64,
    next: Mutex<u64>,
    /// code → (PKCE challenge, scope asked for).
    codes: Mutex<HashMap<String, (String, String)>>,
    access: Mutex<HashSet<String>>,
    refresh: Mutex<HashSet<String>>,
    /// `/as/slow-token`: how long the token endpoint holds its answer, in ms.
    token_delay_ms: AtomicU64,
    /// `/as/fail-token`: the status the token endpoint answers with (0: it works).
    token_failure: AtomicU64,
}

/// An answer to send.
pub struct Reply {
    pub code: u16,
    pub content_type: Option<&'static str>,
    pub headers: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
}

fn json_reply(code: u16, v: serde_json::Value) -> Reply {
    Reply {
        code,
        content_type: Some("application/json"),
        headers: Vec::new(),
        body: v.to_string().into_bytes(),
    }
}

impl OAuthState {
    pub fn new(token_ttl: u64) -> OAuthState {
        OAuthState {
            token_ttl,
            ..Default::default()
        }
    }

    /// How long to hold the answer to a request of `path` (the slow token endpoint).
    pub fn delay(&self, method: &str, path: &str) -> Option<Duration> {
        let ms = self.token_delay_ms.load(Ordering::Relaxed);
        (method == "POST" && path == "/as/token" && ms > 0).then(|| Duration::from_millis(ms))
    }

    fn fresh(&self, prefix: &str) -> String {
        let mut n = self.next.lock().unwrap();
        *n += 1;
        format!("{prefix}-{n}")
    }

    /// For `/oauth/…`: `Err(reply)` when the token is missing or no longer valid, else the
    /// path of the profile to serve.
    pub fn guard(
        &self,
        base: &str,
        path: &str,
        authorization: Option<&str>,
    ) -> Result<String, Reply> {
        let rest = path.strip_prefix("/oauth").unwrap_or(path).to_string();
        let ok = authorization
            .and_then(|a| a.strip_prefix("Bearer "))
            .is_some_and(|t| self.access.lock().unwrap().contains(t));
        if ok {
            return Ok(rest);
        }
        let mut r = json_reply(401, json!({"error": "invalid_token"}));
        r.headers.push((
            "WWW-Authenticate",
            format!(
                "Bearer error=\"invalid_token\", resource_metadata=\"{base}/.well-known/oauth-protected-resource{path}\""
            ),
        ));
        Err(r)
    }

    /// The authorization server and the PRM; `None` for other paths.
    pub fn route(
        &self,
        base: &str,
        method: &str,
        path: &str,
        query: &str,
        body: &[u8],
    ) -> Option<Reply> {
        let issuer = format!("{base}/as");
        if let Some(resource) = path.strip_prefix("/.well-known/oauth-protected-resource") {
            if resource.starts_with("/oauth/") {
                return Some(json_reply(
                    200,
                    json!({
                        "resource": format!("{base}{resource}"),
                        "authorization_servers": [issuer],
                        "scopes_supported": ["tools"],
                    }),
                ));
            }
            return None;
        }
        match (method, path) {
            ("GET", "/.well-known/oauth-authorization-server/as") => Some(json_reply(
                200,
                json!({
                    "issuer": issuer,
                    "authorization_endpoint": format!("{issuer}/authorize"),
                    "token_endpoint": format!("{issuer}/token"),
                    "registration_endpoint": format!("{issuer}/register"),
                    "response_types_supported": ["code"],
                    "grant_types_supported": ["authorization_code", "refresh_token"],
                    "code_challenge_methods_supported": ["S256"],
                    "token_endpoint_auth_methods_supported": ["none"],
                    "authorization_response_iss_parameter_supported": true,
                    "scopes_supported": ["tools", "offline_access"],
                }),
            )),
            ("POST", "/as/register") => {
                let req: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
                Some(json_reply(
                    201,
                    json!({
                        "client_id": self.fresh("client"),
                        "redirect_uris": req["redirect_uris"],
                        "token_endpoint_auth_method": "none",
                    }),
                ))
            }
            ("GET", "/as/authorize") => {
                let q: HashMap<String, String> = url::form_urlencoded::parse(query.as_bytes())
                    .into_owned()
                    .collect();
                let (Some(redirect), Some(challenge)) =
                    (q.get("redirect_uri"), q.get("code_challenge"))
                else {
                    return Some(json_reply(400, json!({"error": "invalid_request"})));
                };
                let code = self.fresh("code");
                self.codes.lock().unwrap().insert(
                    code.clone(),
                    (
                        challenge.clone(),
                        q.get("scope").cloned().unwrap_or_default(),
                    ),
                );
                let mut to = url::Url::parse(redirect).ok()?;
                to.query_pairs_mut()
                    .append_pair("code", &code)
                    .append_pair("state", q.get("state").map(String::as_str).unwrap_or(""))
                    .append_pair("iss", &issuer);
                Some(Reply {
                    code: 302,
                    content_type: None,
                    headers: vec![("Location", to.to_string())],
                    body: Vec::new(),
                })
            }
            ("POST", "/as/token") => match self.token_failure.load(Ordering::Relaxed) {
                0 => Some(self.token(body)),
                status => Some(Reply {
                    code: status as u16,
                    content_type: Some("text/plain"),
                    headers: Vec::new(),
                    body: b"the token service is down".to_vec(),
                }),
            },
            ("POST", "/as/fail-token") => {
                let status = url::form_urlencoded::parse(query.as_bytes())
                    .find(|(k, _)| k == "status")
                    .and_then(|(_, v)| v.parse().ok())
                    .unwrap_or(0);
                self.token_failure.store(status, Ordering::Relaxed);
                Some(json_reply(200, json!({})))
            }
            ("POST", "/as/expire-access") => {
                self.access.lock().unwrap().clear();
                Some(json_reply(200, json!({})))
            }
            ("POST", "/as/slow-token") => {
                let ms = url::form_urlencoded::parse(query.as_bytes())
                    .find(|(k, _)| k == "ms")
                    .and_then(|(_, v)| v.parse().ok())
                    .unwrap_or(0);
                self.token_delay_ms.store(ms, Ordering::Relaxed);
                Some(json_reply(200, json!({})))
            }
            ("POST", "/as/expire-all") => {
                self.access.lock().unwrap().clear();
                self.refresh.lock().unwrap().clear();
                Some(json_reply(200, json!({})))
            }
            _ => None,
        }
    }

    fn token(&self, body: &[u8]) -> Reply {
        let f: HashMap<String, String> = url::form_urlencoded::parse(body).into_owned().collect();
        let grant = f.get("grant_type").map(String::as_str).unwrap_or("");
        let mut scope = "tools".to_string();
        let valid = match grant {
            "authorization_code" => {
                let asked = f
                    .get("code")
                    .and_then(|c| self.codes.lock().unwrap().remove(c));
                let verifier = f.get("code_verifier").map(String::as_str).unwrap_or("");
                let expected = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
                match asked {
                    Some((challenge, asked_scope)) if challenge == expected => {
                        if !asked_scope.is_empty() {
                            scope = asked_scope;
                        }
                        true
                    }
                    _ => false,
                }
            }
            "refresh_token" => f
                .get("refresh_token")
                .is_some_and(|r| self.refresh.lock().unwrap().remove(r)),
            _ => false,
        };
        if !valid {
            return json_reply(
                400,
                json!({"error": "invalid_grant", "error_description": "the grant is not valid"}),
            );
        }
        let (at, rt) = (self.fresh("access"), self.fresh("refresh"));
        self.access.lock().unwrap().insert(at.clone());
        self.refresh.lock().unwrap().insert(rt.clone());
        json_reply(
            200,
            json!({
                "access_token": at,
                "token_type": "Bearer",
                "expires_in": self.token_ttl,
                "refresh_token": rt,
                "scope": scope,
            }),
        )
    }
}
