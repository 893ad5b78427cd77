//! Finding the authorization server of an MCP server: Protected Resource Metadata
//! (RFC 9728), authorization-server metadata (RFC 8414 and OpenID Connect discovery), and
//! the 2025-03-26 fallback (metadata at the MCP server's origin, else default endpoints).
//!
//! Invariants: every document is read through [`get_json`], which never keeps more than
//! [`MAX_METADATA_BYTES`], gives up after [`DISCOVERY_TIMEOUT`], and never follows a
//! redirect to another origin. A PRM whose `resource` does not cover the server URL, AS
//! metadata whose `issuer` is not the issuer its well-known URL was built from (the one
//! asked for, or the MCP server's origin in the 2025-03-26 way), and an authorization
//! server whose endpoints are not `https:` (a loopback address excepted:
//! [`check_endpoints`]) are refused.

use std::time::Duration;

use reqwest::Url;
use serde::Deserialize;

use super::AuthError;

/// Largest metadata, registration or token response read; a larger one is refused.
pub const MAX_METADATA_BYTES: usize = 1024 * 1024;

/// How long one discovery, registration or token request may take.
pub const DISCOVERY_TIMEOUT: Duration = Duration::from_secs(15);

/// Protected Resource Metadata (the fields used).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ResourceMetadata {
    #[serde(default)]
    pub resource: Option<String>,
    #[serde(default)]
    pub authorization_servers: Vec<String>,
    #[serde(default)]
    pub scopes_supported: Option<Vec<String>>,
}

/// Authorization-server metadata (the fields used).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct ServerMetadata {
    pub issuer: String,
    pub authorization_endpoint: String,
    pub token_endpoint: String,
    #[serde(default)]
    pub registration_endpoint: Option<String>,
    #[serde(default)]
    pub scopes_supported: Option<Vec<String>>,
    #[serde(default)]
    pub code_challenge_methods_supported: Option<Vec<String>>,
    #[serde(default)]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    #[serde(default)]
    pub client_id_metadata_document_supported: bool,
    #[serde(default)]
    pub authorization_response_iss_parameter_supported: bool,
    /// False for the 2025-03-26 default endpoints (no document was found).
    #[serde(skip)]
    pub from_document: bool,
}

/// The HTTP client for everything OAuth: bounded time, same-origin redirects only.
pub fn http_client() -> Result<reqwest::Client, AuthError> {
    reqwest::Client::builder()
        .timeout(DISCOVERY_TIMEOUT)
        .user_agent(concat!("harness9/", env!("CARGO_PKG_VERSION")))
        .redirect(crate::http::redirect::redirect_policy())
        .build()
        .map_err(|e| AuthError::Internal(format!("cannot set up the HTTP client: {e}")))
}

/// The canonical URI of an MCP server (RFC 8707 `resource`, and the key its tokens are
/// kept under): lower-case scheme and host, no default port, no fragment, no trailing
/// slash.
pub fn canonical_resource(url: &str) -> Result<String, AuthError> {
    let mut u = Url::parse(url)
        .map_err(|e| AuthError::Discovery(format!("the server URL \"{url}\" is not valid: {e}")))?;
    u.set_fragment(None);
    let mut s = u.to_string();
    if u.query().is_none() && s.ends_with('/') {
        s.pop();
    }
    Ok(s)
}

/// The RFC 8707 `resource` to send for a server that states none: its canonical URI
/// without userinfo and query (RFC 8707 §2: no query; both may hold the secrets of a URL
/// that carries its credentials, which are not the authorization server's to see).
pub fn resource_indicator(url: &str) -> Result<String, AuthError> {
    let mut u = parse(&canonical_resource(url)?)?;
    let _ = u.set_username("");
    let _ = u.set_password(None);
    u.set_query(None);
    let mut s = u.to_string();
    if s.ends_with('/') {
        s.pop();
    }
    Ok(s)
}

/// Whether a PRM `resource` covers the server URL: same origin, and its path is the
/// server's path or a parent of it (segment-wise).
pub fn resource_matches(resource: &str, server_url: &str) -> bool {
    let (Ok(r), Ok(s)) = (
        canonical_resource(resource).and_then(|r| parse(&r)),
        canonical_resource(server_url).and_then(|s| parse(&s)),
    ) else {
        return false;
    };
    if r.origin() != s.origin() {
        return false;
    }
    let rp = r.path().trim_end_matches('/');
    let sp = s.path().trim_end_matches('/');
    sp == rp || sp.starts_with(&format!("{rp}/"))
}

fn parse(u: &str) -> Result<Url, AuthError> {
    Url::parse(u).map_err(|e| AuthError::Discovery(format!("\"{u}\" is not a valid URL: {e}")))
}

/// Where to look for the PRM: the challenge's `resource_metadata` when given, else the
/// path-based then the root well-known URL.
pub fn resource_metadata_urls(
    server_url: &str,
    from_challenge: Option<&str>,
) -> Result<Vec<Url>, AuthError> {
    if let Some(u) = from_challenge {
        return Ok(vec![parse(u)?]);
    }
    let s = parse(server_url)?;
    let origin = s.origin().ascii_serialization();
    let path = s.path().trim_end_matches('/');
    let mut out = Vec::new();
    if !path.is_empty() {
        out.push(parse(&format!(
            "{origin}/.well-known/oauth-protected-resource{path}"
        ))?);
    }
    out.push(parse(&format!(
        "{origin}/.well-known/oauth-protected-resource"
    ))?);
    Ok(out)
}

/// Where to look for an issuer's metadata, in the order the MCP specification gives.
pub fn server_metadata_urls(issuer: &str) -> Result<Vec<Url>, AuthError> {
    let u = parse(issuer)?;
    let origin = u.origin().ascii_serialization();
    let path = u.path().trim_end_matches('/');
    let list = if path.is_empty() {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server"),
            format!("{origin}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}/.well-known/openid-configuration{path}"),
            format!("{origin}{path}/.well-known/openid-configuration"),
        ]
    };
    list.iter().map(|s| parse(s)).collect()
}

/// GETs a JSON document. `Ok(None)` when the server has none there (a 4xx answer).
pub async fn get_json<T: serde::de::DeserializeOwned>(
    http: &reqwest::Client,
    url: &Url,
    what: &str,
) -> Result<Option<T>, AuthError> {
    let resp = http
        .get(url.clone())
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| {
            AuthError::Discovery(format!("cannot fetch the {what} at {url}: {}", short(&e)))
        })?;
    let status = resp.status();
    if status.is_client_error() {
        return Ok(None);
    }
    if !status.is_success() {
        return Err(AuthError::Discovery(format!(
            "the {what} at {url} could not be read (HTTP {status})"
        )));
    }
    let body = read_limited(resp)
        .await
        .map_err(|e| AuthError::Discovery(format!("the {what} at {url} could not be read: {e}")))?;
    serde_json::from_slice(&body)
        .map(Some)
        .map_err(|e| AuthError::Discovery(format!("the {what} at {url} is not valid: {e}")))
}

/// Why an answer of an authorization server (or of the server's metadata) could not be
/// read; the caller says whose answer it was.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    /// Longer than [`MAX_METADATA_BYTES`].
    #[error("it is larger than {} KiB", MAX_METADATA_BYTES / 1024)]
    TooLarge,
    /// The connection broke while reading; the text says how ([`short`]).
    #[error("{0}")]
    Broken(String),
}

impl ReadError {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        match self {
            ReadError::TooLarge => "answer-too-large",
            ReadError::Broken(_) => "connection-broken",
        }
    }
}

/// Reads a body of at most [`MAX_METADATA_BYTES`].
pub async fn read_limited(mut resp: reqwest::Response) -> Result<Vec<u8>, ReadError> {
    let mut body = Vec::new();
    while let Some(chunk) = resp
        .chunk()
        .await
        .map_err(|e| ReadError::Broken(short(&e)))?
    {
        if body.len() + chunk.len() > MAX_METADATA_BYTES {
            return Err(ReadError::TooLarge);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// A reqwest error without the URL (the caller names it) but with its cause.
pub fn short(e: &reqwest::Error) -> String {
    if e.is_timeout() {
        return format!("no answer within {} s", DISCOVERY_TIMEOUT.as_secs());
    }
    let mut s = e.to_string();
    if let Some(u) = e.url() {
        s = s.replace(&format!(" for url ({u})"), "");
    }
    let mut src = std::error::Error::source(e);
    while let Some(c) = src {
        s.push_str(&format!(": {c}"));
        src = c.source();
    }
    s
}

/// The server's PRM, or `None` when it publishes none (a 2025-03-26 server). Refuses one
/// whose `resource` does not cover `server_url`.
pub async fn resource_metadata(
    http: &reqwest::Client,
    server_url: &str,
    from_challenge: Option<&str>,
) -> Result<Option<ResourceMetadata>, AuthError> {
    for url in resource_metadata_urls(server_url, from_challenge)? {
        let Some(prm) =
            get_json::<ResourceMetadata>(http, &url, "protected resource metadata").await?
        else {
            continue;
        };
        if let Some(r) = &prm.resource {
            if !resource_matches(r, server_url) {
                return Err(AuthError::Discovery(format!(
                    "the server's protected resource metadata is for \"{r}\", not for {server_url}; not signing in (check the server URL)"
                )));
            }
        }
        return Ok(Some(prm));
    }
    Ok(None)
}

/// The metadata of `issuer`, validated (its `issuer` must be exactly the one asked for).
pub async fn server_metadata(
    http: &reqwest::Client,
    issuer: &str,
) -> Result<Option<ServerMetadata>, AuthError> {
    for url in server_metadata_urls(issuer)? {
        let Some(mut m) =
            get_json::<ServerMetadata>(http, &url, "authorization server metadata").await?
        else {
            continue;
        };
        if m.issuer != issuer {
            return Err(wrong_issuer(&url, &m.issuer, issuer));
        }
        m.from_document = true;
        check_endpoints(&m)?;
        return Ok(Some(m));
    }
    Ok(None)
}

/// The 2025-03-26 way: metadata at the MCP server's origin, else the default endpoints
/// `/authorize`, `/token` and `/register` there.
pub async fn legacy_server_metadata(
    http: &reqwest::Client,
    server_url: &str,
) -> Result<ServerMetadata, AuthError> {
    let origin = parse(server_url)?.origin().ascii_serialization();
    let url = parse(&format!("{origin}/.well-known/oauth-authorization-server"))?;
    if let Some(mut m) =
        get_json::<ServerMetadata>(http, &url, "authorization server metadata").await?
    {
        // The well-known URL was built from the origin: the issuer it names must be of
        // that origin (RFC 8414 §3.3). A path under it is taken, as 2025-03-26 servers
        // state one (`https://h/oauth`, served at the origin's well-known URL, is what
        // the official conformance suite's back-compat scenario serves); another scheme,
        // host or port is refused, so tokens never go to a server the URL did not name.
        if !same_origin(&m.issuer, &origin) {
            return Err(wrong_issuer(&url, &m.issuer, &origin));
        }
        m.from_document = true;
        check_endpoints(&m)?;
        return Ok(m);
    }
    let m = ServerMetadata {
        issuer: origin.clone(),
        authorization_endpoint: format!("{origin}/authorize"),
        token_endpoint: format!("{origin}/token"),
        registration_endpoint: Some(format!("{origin}/register")),
        ..ServerMetadata::default()
    };
    check_endpoints(&m)?;
    Ok(m)
}

/// Whether `issuer` is a URL of exactly `origin` (scheme, host and port), with any path.
fn same_origin(issuer: &str, origin: &str) -> bool {
    Url::parse(issuer).is_ok_and(|u| {
        u.origin().ascii_serialization() == origin
            && u.query().is_none()
            && u.fragment().is_none()
            && u.username().is_empty()
            && u.password().is_none()
    })
}

fn wrong_issuer(url: &Url, named: &str, expected: &str) -> AuthError {
    AuthError::Discovery(format!(
        "the authorization server metadata at {url} names the issuer \"{named}\", not \"{expected}\"; not signing in (the server may be misconfigured or impersonated)"
    ))
}

/// Whether `url` may be an authorization server's endpoint: `https:`, or `http:` to a
/// loopback address (a server on this machine, where nothing travels over a network).
pub fn secure_endpoint(url: &str) -> bool {
    let Ok(u) = Url::parse(url) else {
        return false;
    };
    match u.scheme() {
        "https" => true,
        "http" => match u.host() {
            Some(url::Host::Ipv4(a)) => a.is_loopback(),
            Some(url::Host::Ipv6(a)) => a.is_loopback(),
            Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
            None => false,
        },
        _ => false,
    }
}

/// Refuses an authorization server whose issuer or endpoints are not [`secure_endpoint`]s:
/// codes, tokens and secrets would travel in the clear (or to a non-HTTP scheme).
pub fn check_endpoints(m: &ServerMetadata) -> Result<(), AuthError> {
    let named = [
        ("issuer", Some(&m.issuer)),
        ("authorization_endpoint", Some(&m.authorization_endpoint)),
        ("token_endpoint", Some(&m.token_endpoint)),
        ("registration_endpoint", m.registration_endpoint.as_ref()),
    ];
    for (what, url) in named {
        if let Some(u) = url.filter(|u| !secure_endpoint(u)) {
            return Err(AuthError::Discovery(format!(
                "the authorization server's {what} \"{u}\" is not an https: URL; harness9 signs in only over HTTPS (http: only to this machine)"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strs(v: Vec<Url>) -> Vec<String> {
        v.into_iter().map(|u| u.to_string()).collect()
    }

    #[test]
    fn prm_urls_path_based_then_root() {
        assert_eq!(
            strs(resource_metadata_urls("https://h.example/mcp/", None).unwrap()),
            vec![
                "https://h.example/.well-known/oauth-protected-resource/mcp",
                "https://h.example/.well-known/oauth-protected-resource"
            ]
        );
        assert_eq!(
            strs(resource_metadata_urls("http://localhost:9", None).unwrap()),
            vec!["http://localhost:9/.well-known/oauth-protected-resource"]
        );
        assert_eq!(
            strs(resource_metadata_urls("https://h/mcp", Some("https://h/prm")).unwrap()),
            vec!["https://h/prm"]
        );
    }

    #[test]
    fn as_metadata_urls_in_spec_order() {
        assert_eq!(
            strs(server_metadata_urls("https://as.example/tenant1").unwrap()),
            vec![
                "https://as.example/.well-known/oauth-authorization-server/tenant1",
                "https://as.example/.well-known/openid-configuration/tenant1",
                "https://as.example/tenant1/.well-known/openid-configuration"
            ]
        );
        assert_eq!(
            strs(server_metadata_urls("https://as.example").unwrap()),
            vec![
                "https://as.example/.well-known/oauth-authorization-server",
                "https://as.example/.well-known/openid-configuration"
            ]
        );
    }

    #[test]
    fn canonical_uris() {
        assert_eq!(
            canonical_resource("HTTPS://Example.COM:443/mcp#frag").unwrap(),
            "https://example.com/mcp"
        );
        assert_eq!(
            canonical_resource("http://localhost:3000/").unwrap(),
            "http://localhost:3000"
        );
        assert_eq!(
            canonical_resource("https://h/mcp/").unwrap(),
            "https://h/mcp"
        );
        assert_eq!(
            resource_indicator("https://u:p@H/mcp?sig=S#f").unwrap(),
            "https://h/mcp"
        );
        assert_eq!(resource_indicator("http://h:8/").unwrap(), "http://h:8");
    }

    #[test]
    fn endpoints_are_https_or_loopback() {
        assert!(secure_endpoint("https://as.example/token"));
        assert!(secure_endpoint("http://127.0.0.1:9/token"));
        assert!(secure_endpoint("http://[::1]:9/token"));
        assert!(secure_endpoint("http://localhost/token"));
        assert!(!secure_endpoint("http://as.example/token"));
        assert!(!secure_endpoint("http://127.0.0.1.evil.example/token"));
        assert!(!secure_endpoint("javascript:alert(1)"));
        assert!(!secure_endpoint("ftp://as.example/token"));
    }

    #[test]
    fn resource_must_cover_the_server() {
        assert!(resource_matches("https://h/mcp", "https://H:443/mcp/"));
        assert!(resource_matches("https://h", "https://h/mcp"));
        assert!(resource_matches("https://h/", "https://h/mcp"));
        assert!(!resource_matches("https://h/mcpx", "https://h/mcp"));
        assert!(!resource_matches("https://h/mc", "https://h/mcp"));
        assert!(!resource_matches("https://evil/mcp", "https://h/mcp"));
        assert!(!resource_matches("http://h/mcp", "https://h/mcp"));
        assert!(!resource_matches("https://h/other", "https://h/mcp"));
    }
}
