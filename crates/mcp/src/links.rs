//! Which links harness9 opens for a server: the one rule every front end and every opener
//! goes through ([`check_link`]). A server chooses the URL of a URL elicitation and of its
//! sign-in page, so the URL is untrusted: only `https:` opens, and `http:` only to this
//! machine (a loopback address or `localhost`). Anything else (`file:`, `javascript:`,
//! `smb:`, custom schemes, text that is no URL at all, such as `-oProxyCommand=…`) is
//! refused with a message. A URL with a user name or password is refused too: it is the
//! classic way to make a link read as one host (`https://bank.example@evil.example`) while
//! it opens another.
//!
//! What opens is the URL as re-serialized by the parser, never the server's text: it
//! always starts with `https://` or `http://`, so an opener can never read it as an option
//! or as a local path. Front ends show [`SafeLink::host`] first, then the full URL.

use std::net::IpAddr;

/// A link that may be opened: `https:`, or `http:` to this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SafeLink {
    url: url::Url,
}

impl SafeLink {
    /// The URL to hand to an opener (re-serialized; starts with `https://` or `http://`).
    pub fn as_str(&self) -> &str {
        self.url.as_str()
    }

    /// The full host, with the port when it is not the scheme's default: what the user
    /// should read before agreeing to open the link.
    pub fn host(&self) -> String {
        let host = self.url.host_str().unwrap_or_default();
        match self.url.port() {
            Some(port) => format!("{host}:{port}"),
            None => host.to_string(),
        }
    }

    /// The host first, then the whole URL: `example.com (https://example.com/page)`.
    pub fn host_first(&self) -> String {
        format!("{} ({})", self.host(), self.as_str())
    }
}

impl std::fmt::Display for SafeLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a link is not opened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LinkRefused {
    #[error("it is not a URL ({0}); only https: links open")]
    NotUrl(String),
    #[error("it is a {0}: link; only https: links (and http: to this machine) open")]
    Scheme(String),
    #[error("it is a plain http: link to {0}; only https: links (and http: to this machine) open")]
    PlainHttp(String),
    #[error("it names no host")]
    NoHost,
    #[error("it carries a user name or password, which can make it look like another host")]
    Credentials,
}

impl LinkRefused {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        match self {
            LinkRefused::NotUrl(_) => "not-a-url",
            LinkRefused::Scheme(_) => "scheme-refused",
            LinkRefused::PlainHttp(_) => "plain-http",
            LinkRefused::NoHost => "no-host",
            LinkRefused::Credentials => "credentials-in-link",
        }
    }
}

/// Decides whether `text` (a URL a server or a page supplied) may be opened, and gives the
/// form to open. See the module documentation for the rule.
pub fn check_link(text: &str) -> Result<SafeLink, LinkRefused> {
    // The parser forgives leading spaces and controls; an opener might not, and a link
    // that needs forgiving is not one a server sends in good faith.
    let first = text.chars().next();
    if first.is_none_or(|c| !c.is_ascii_alphabetic()) {
        return Err(LinkRefused::NotUrl(
            "it does not start with a scheme".into(),
        ));
    }
    if text.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(LinkRefused::NotUrl(
            "it holds spaces or control characters".into(),
        ));
    }
    let url = url::Url::parse(text).map_err(|e| LinkRefused::NotUrl(e.to_string()))?;
    let host = url.host_str().filter(|h| !h.is_empty());
    match url.scheme() {
        "https" => {}
        "http" => {
            let Some(host) = host else {
                return Err(LinkRefused::NoHost);
            };
            if !is_loopback(&url) {
                return Err(LinkRefused::PlainHttp(host.to_string()));
            }
        }
        other => return Err(LinkRefused::Scheme(other.to_string())),
    }
    if host.is_none() {
        return Err(LinkRefused::NoHost);
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(LinkRefused::Credentials);
    }
    Ok(SafeLink { url })
}

/// Whether the URL's host is this machine: `localhost` or a loopback address.
fn is_loopback(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => IpAddr::V4(ip).is_loopback(),
        Some(url::Host::Ipv6(ip)) => IpAddr::V6(ip).is_loopback(),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn https_opens_as_reserialized_with_the_host_first() {
        let link = check_link(
            "https://Example.COM:8443/a b?x=1"
                .replace(' ', "%20")
                .as_str(),
        )
        .expect("https opens");
        assert_eq!(link.as_str(), "https://example.com:8443/a%20b?x=1");
        assert_eq!(link.host(), "example.com:8443");
        assert_eq!(
            link.host_first(),
            "example.com:8443 (https://example.com:8443/a%20b?x=1)"
        );
    }

    #[test]
    fn http_opens_only_to_this_machine() {
        for ok in [
            "http://localhost:3000/cb",
            "http://127.0.0.1/",
            "http://127.5.0.1:1/",
            "http://[::1]:8080/x",
        ] {
            assert!(check_link(ok).is_ok(), "{ok}");
        }
        assert_eq!(
            check_link("http://example.com/"),
            Err(LinkRefused::PlainHttp("example.com".into()))
        );
        assert!(check_link("http://localhost.evil.example/").is_err());
    }

    #[test]
    fn other_schemes_options_and_paths_are_refused() {
        for (bad, scheme) in [
            ("file:///etc/passwd", "file"),
            ("javascript:alert(1)", "javascript"),
            ("smb://host/share", "smb"),
            ("vscode://extension/x", "vscode"),
            ("data:text/html,<script>1</script>", "data"),
        ] {
            assert_eq!(
                check_link(bad),
                Err(LinkRefused::Scheme(scheme.into())),
                "{bad}"
            );
        }
        for bad in [
            "-oProxyCommand=touch /tmp/x",
            "--help",
            "/etc/passwd",
            "./x.html",
            "",
            " https://example.com",
            "https://example.com/\u{1b}]8;;",
            "https://exa mple.com",
        ] {
            assert!(
                matches!(check_link(bad), Err(LinkRefused::NotUrl(_))),
                "{bad:?}: {:?}",
                check_link(bad)
            );
        }
    }

    #[test]
    fn credentials_and_hostless_links_are_refused() {
        assert_eq!(
            check_link("https://bank.example@evil.example/"),
            Err(LinkRefused::Credentials)
        );
        assert_eq!(
            check_link("https://u:p@example.com/"),
            Err(LinkRefused::Credentials)
        );
    }

    #[test]
    fn the_refusal_says_why() {
        let e = check_link("file:///etc/passwd").unwrap_err().to_string();
        assert_eq!(
            e,
            "it is a file: link; only https: links (and http: to this machine) open"
        );
    }
}
