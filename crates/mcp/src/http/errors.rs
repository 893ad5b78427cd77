//! Messages for HTTP exchanges that failed: no status line (refused, DNS, TLS, timeout, a
//! refused redirect), or a status that is not success. Each says what to check or change.

use std::time::Duration;

use reqwest::{StatusCode, Url};

use super::redirect;
use super::wire::{HttpError, HttpResponse};

/// Bytes of an error body read for the detail of a status message.
const DETAIL_BODY_BYTES: usize = 4096;

/// The whole error chain as one line (reqwest's top-level message hides the cause), with
/// every URL in it masked (reqwest names the request's URL, whose query may hold a token).
pub(crate) fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = vec![e.to_string()];
    let mut src = e.source();
    while let Some(s) = src {
        let t = s.to_string();
        if !parts.iter().any(|p| p.contains(&t)) {
            parts.push(t);
        }
        src = s.source();
    }
    crate::mask::mask_urls_in(&parts.join(": "))
}

fn host_port(url: &Url) -> String {
    let host = url.host_str().unwrap_or("?");
    match url.port_or_known_default() {
        Some(p) => format!("{host}:{p}"),
        None => host.to_string(),
    }
}

/// A clear message for an HTTP exchange that did not get a status line.
pub(crate) fn describe_send_error(url: &Url, e: &HttpError) -> String {
    if let Some(refused) = redirect::cross_origin(e) {
        return refused.to_string();
    }
    classify_failure(url, &error_chain(e), e.is_timeout(), e.is_connect())
}

/// The classification behind [`describe_send_error`], on the error chain's text.
pub fn classify_failure(url: &Url, chain: &str, timeout: bool, connect: bool) -> String {
    let lower = chain.to_ascii_lowercase();
    let hp = host_port(url);
    let host = url.host_str().unwrap_or("?");
    if lower.contains("dns error")
        || lower.contains("failed to lookup address")
        || lower.contains("name or service not known")
        || lower.contains("no address associated")
        || lower.contains("nodename nor servname")
    {
        return format!("cannot resolve the host name \"{host}\" (DNS lookup failed); check the url in .mcp.json and your network");
    }
    if lower.contains("connection refused") {
        return format!("cannot connect to {hp}: connection refused; is the server running, and is the port right?");
    }
    if lower.contains("certificate")
        || lower.contains("tls")
        || lower.contains("ssl")
        || lower.contains("handshake")
        || lower.contains("corrupt message")
        || lower.contains("invalidcontenttype")
        || lower.contains("peer is incompatible")
    {
        let hint = if url.scheme() == "https" {
            "check that the server really speaks HTTPS on that port and that its certificate is valid for the host"
        } else {
            "check the url's scheme (http or https)"
        };
        return format!("TLS error talking to {hp}: {chain}; {hint}");
    }
    if timeout {
        return format!("timed out talking to {hp}; is the server reachable?");
    }
    if lower.contains("connection reset")
        || lower.contains("connection closed")
        || lower.contains("incomplete message")
    {
        return format!("the server at {hp} closed the connection: {chain}");
    }
    if connect {
        return format!("cannot connect to {hp}: {chain}");
    }
    format!("the HTTP exchange with {hp} failed: {chain}")
}
pub(crate) async fn body_detail(mut resp: HttpResponse) -> String {
    let mut body = Vec::new();
    while body.len() < DETAIL_BODY_BYTES {
        match tokio::time::timeout(Duration::from_secs(2), resp.chunk()).await {
            Ok(Ok(Some(c))) => body.extend_from_slice(&c),
            _ => break,
        }
    }
    // A JSON-RPC error body: its message is the detail.
    if let Ok(v) = serde_json::from_slice::<serde_json::Value>(&body) {
        if let Some(m) = v.pointer("/error/message").and_then(|m| m.as_str()) {
            return m.to_string();
        }
    }
    let text = String::from_utf8_lossy(&body);
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    crate::truncate::prefix(&one_line, 200).to_string()
}

/// The message for one status; `challenge` is the `WWW-Authenticate` scheme.
pub fn describe_status_parts(
    status: StatusCode,
    challenge: Option<&str>,
    detail: &str,
    sent_authorization: bool,
) -> String {
    let code = status.as_u16();
    let reason = status.canonical_reason().unwrap_or("");
    let detail = if detail.is_empty() {
        String::new()
    } else {
        format!(": {detail}")
    };
    match code {
        401 => {
            let scheme = challenge
                .filter(|c| !c.is_empty())
                .map(|c| format!(" (it asks for {c} authentication)"))
                .unwrap_or_default();
            if sent_authorization {
                format!("the server needs authorization and refused the credentials sent (HTTP 401 Unauthorized){scheme}; check the Authorization header in .mcp.json (or remove it and sign in with `harness9 mcp login`)")
            } else {
                format!("the server needs authorization (HTTP 401 Unauthorized){scheme}; sign in with `harness9 mcp login`, or give a token in \"headers\" in .mcp.json, e.g. \"Authorization\": \"Bearer ${{TOKEN}}\"")
            }
        }
        403 => format!("the server refused access (HTTP 403 Forbidden){detail}; check the credentials in \"headers\" in .mcp.json"),
        404 => format!("the server has no MCP endpoint at this url (HTTP 404 Not Found){detail}; check the url in .mcp.json"),
        500..=599 => format!("the server failed (HTTP {code} {reason}){detail}"),
        _ => format!("the server answered HTTP {code} {reason}{detail}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_messages() {
        let url = Url::parse("http://127.0.0.1:9/mcp").unwrap();
        let m = classify_failure(&url, "error sending request: client error (Connect): tcp connect error: Connection refused (os error 111)", false, true);
        assert!(
            m.starts_with("cannot connect to 127.0.0.1:9: connection refused"),
            "{m}"
        );
        let url = Url::parse("https://nowhere.invalid/mcp").unwrap();
        let m = classify_failure(&url, "error sending request: client error (Connect): dns error: failed to lookup address information: Name or service not known", false, true);
        assert!(
            m.starts_with("cannot resolve the host name \"nowhere.invalid\""),
            "{m}"
        );
        let m = classify_failure(&url, "error sending request: client error (Connect): invalid peer certificate: UnknownIssuer", false, true);
        assert!(
            m.starts_with("TLS error talking to nowhere.invalid:443"),
            "{m}"
        );
        let m = describe_status_parts(StatusCode::UNAUTHORIZED, Some("Bearer"), "", false);
        assert!(m.starts_with("the server needs authorization (HTTP 401 Unauthorized) (it asks for Bearer authentication)"), "{m}");
        assert!(m.contains("sign in with `harness9 mcp login`"), "{m}");
        let m = describe_status_parts(StatusCode::FORBIDDEN, None, "nope", true);
        assert!(
            m.starts_with("the server refused access (HTTP 403 Forbidden): nope"),
            "{m}"
        );
        let m = describe_status_parts(StatusCode::BAD_GATEWAY, None, "", false);
        assert_eq!(m, "the server failed (HTTP 502 Bad Gateway)");
    }
}
