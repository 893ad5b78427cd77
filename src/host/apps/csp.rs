//! The Content-Security-Policy and the iframe `allow` attribute of one view, built from
//! what its resource declares (`_meta.ui.csp`, `_meta.ui.permissions`) and nothing else.
//!
//! - Without a declaration the policy is the spec's restrictive default: nothing but the
//!   view's own inline scripts and styles, its own and `data:` images, media and fonts;
//!   no network, no frames.
//! - A declared domain becomes part of the policy only when it reads as one plain source:
//!   an `http`, `https`, `ws` or `wss` origin (`https://*.example.com` wildcards allowed,
//!   a port and a path too), without quotes, `;`, `,` or whitespace (which would add
//!   keywords or directives of their own). Anything else is dropped and named
//!   ([`ViewPolicy::dropped`]) so the server's log can say so. A bare scheme or `*` would
//!   allow every domain: dropped too.
//! - Every policy has `object-src 'none'` and `form-action 'none'`; there is never
//!   `'unsafe-eval'`.
//! - `allow` names only the permissions the resource declared and the user granted.

use crate::mcp::apps::{ViewCspDeclaration, ViewPermissions};

/// Most domains taken from one list of a declaration (the rest is dropped).
pub const MAX_DECLARED_DOMAINS: usize = 32;

/// Longest declared domain taken, in bytes.
pub const MAX_DOMAIN_LEN: usize = 253;

/// Schemes a declared domain may have.
const SCHEMES: [&str; 4] = ["https", "http", "wss", "ws"];

/// The policy of one view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewPolicy {
    /// The value of the `Content-Security-Policy` header the view is served with.
    pub csp: String,
    /// Every external origin the policy lets the view reach (connect, load, frame), once
    /// each: what a front end tells the user about.
    pub external: Vec<String>,
    /// Declared entries left out, with why.
    pub dropped: Vec<DroppedSource>,
}

/// A declared entry that did not become part of the policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DroppedSource {
    pub entry: String,
    pub why: &'static str,
}

/// Reads one declared entry as a CSP source (`scheme://host[:port][/path]`, lowercase
/// scheme and host), or says why it is refused.
pub fn clean_source(entry: &str) -> Result<String, &'static str> {
    if entry.len() > MAX_DOMAIN_LEN {
        return Err("it is too long");
    }
    if entry
        .chars()
        .any(|c| c.is_whitespace() || c.is_control() || matches!(c, '\'' | '"' | ';' | ','))
    {
        return Err("it holds quotes, ';', ',' or whitespace");
    }
    let Some((scheme, rest)) = entry.split_once("://") else {
        return Err("it is not an http, https, ws or wss origin");
    };
    let scheme = scheme.to_ascii_lowercase();
    if !SCHEMES.contains(&scheme.as_str()) {
        return Err("only http, https, ws and wss origins are allowed");
    }
    let (authority, path) = match rest.find('/') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) => (h, Some(p)),
        None => (authority, None),
    };
    let host = host.to_ascii_lowercase();
    let labels = host.strip_prefix("*.").unwrap_or(&host);
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.len() <= 63
            && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    if labels.is_empty() || !labels.split('.').all(label_ok) {
        return Err("its host is not a domain name (a leading \"*.\" is the only wildcard)");
    }
    if let Some(p) = port {
        let digits = !p.is_empty() && p.len() <= 5 && p.chars().all(|c| c.is_ascii_digit());
        if p != "*" && !digits {
            return Err("its port is not a number");
        }
    }
    if !path
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '-' | '.' | '_' | '~' | '%'))
    {
        return Err("its path holds characters a source may not have");
    }
    let port = port.map(|p| format!(":{p}")).unwrap_or_default();
    Ok(format!("{scheme}://{host}{port}{path}"))
}

/// Builds the policy of a view from its resource's declaration (`None`: nothing declared).
pub fn build(declared: Option<&ViewCspDeclaration>) -> ViewPolicy {
    let mut dropped = Vec::new();
    let mut external: Vec<String> = Vec::new();
    let mut clean = |list: &[String]| -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for entry in list {
            if out.len() >= MAX_DECLARED_DOMAINS {
                dropped.push(DroppedSource {
                    entry: entry.clone(),
                    why: "the list has too many entries",
                });
                continue;
            }
            match clean_source(entry) {
                Ok(source) => {
                    if !external.contains(&source) {
                        external.push(source.clone());
                    }
                    if !out.contains(&source) {
                        out.push(source);
                    }
                }
                Err(why) => dropped.push(DroppedSource {
                    entry: entry.clone(),
                    why,
                }),
            }
        }
        out
    };
    let (resource, connect, frame, base) = match declared {
        None => (Vec::new(), Vec::new(), Vec::new(), Vec::new()),
        Some(d) => (
            clean(&d.resource_domains),
            clean(&d.connect_domains),
            clean(d.frame_domains.as_deref().unwrap_or_default()),
            clean(d.base_uri_domains.as_deref().unwrap_or_default()),
        ),
    };
    let with = |fixed: &str, extra: &[String]| -> String {
        let mut s = fixed.to_string();
        for e in extra {
            s.push(' ');
            s.push_str(e);
        }
        s
    };
    let or = |list: &[String], empty: &str| -> String {
        if list.is_empty() {
            empty.to_string()
        } else {
            list.join(" ")
        }
    };
    let directives = [
        "default-src 'none'".to_string(),
        with("script-src 'self' 'unsafe-inline'", &resource),
        with("style-src 'self' 'unsafe-inline'", &resource),
        with("img-src 'self' data:", &resource),
        with("font-src 'self' data:", &resource),
        with("media-src 'self' data:", &resource),
        format!("connect-src {}", or(&connect, "'none'")),
        format!("frame-src {}", or(&frame, "'none'")),
        format!("base-uri {}", or(&base, "'self'")),
        "form-action 'none'".to_string(),
        "object-src 'none'".to_string(),
    ];
    ViewPolicy {
        csp: directives.join("; "),
        external,
        dropped,
    }
}

/// The iframe `allow` attribute for the permissions granted (`""` for none).
pub fn allow_attribute(granted: &ViewPermissions) -> String {
    granted.features().join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decl(connect: &[&str], resource: &[&str]) -> ViewCspDeclaration {
        ViewCspDeclaration {
            connect_domains: connect.iter().map(|s| s.to_string()).collect(),
            resource_domains: resource.iter().map(|s| s.to_string()).collect(),
            frame_domains: None,
            base_uri_domains: None,
        }
    }

    #[test]
    fn without_a_declaration_the_restrictive_default() {
        let p = build(None);
        assert_eq!(
            p.csp,
            "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; \
             img-src 'self' data:; font-src 'self' data:; media-src 'self' data:; connect-src 'none'; \
             frame-src 'none'; base-uri 'self'; form-action 'none'; object-src 'none'"
        );
        assert!(p.external.is_empty());
        assert!(p.dropped.is_empty());
        // An empty declaration is the same policy.
        assert_eq!(build(Some(&decl(&[], &[]))).csp, p.csp);
    }

    #[test]
    fn declared_domains_go_to_their_directives_only() {
        let mut d = decl(
            &["https://api.example.com", "wss://live.example.com:8443"],
            &["https://*.cdn.example", "HTTPS://Fonts.Example.org/css/"],
        );
        d.frame_domains = Some(vec!["https://player.example".into()]);
        d.base_uri_domains = Some(vec!["https://base.example".into()]);
        let p = build(Some(&d));
        assert_eq!(
            p.csp,
            "default-src 'none'; \
             script-src 'self' 'unsafe-inline' https://*.cdn.example https://fonts.example.org/css/; \
             style-src 'self' 'unsafe-inline' https://*.cdn.example https://fonts.example.org/css/; \
             img-src 'self' data: https://*.cdn.example https://fonts.example.org/css/; \
             font-src 'self' data: https://*.cdn.example https://fonts.example.org/css/; \
             media-src 'self' data: https://*.cdn.example https://fonts.example.org/css/; \
             connect-src https://api.example.com wss://live.example.com:8443; \
             frame-src https://player.example; base-uri https://base.example; \
             form-action 'none'; object-src 'none'"
        );
        assert_eq!(
            p.external,
            [
                "https://*.cdn.example",
                "https://fonts.example.org/css/",
                "https://api.example.com",
                "wss://live.example.com:8443",
                "https://player.example",
                "https://base.example"
            ]
        );
        assert!(p.dropped.is_empty());
    }

    #[test]
    fn hostile_entries_are_dropped_and_named() {
        let hostile = [
            "https://a.example; script-src *",
            "https://a.example 'unsafe-eval'",
            "'unsafe-inline'",
            "*",
            "https://*",
            "https://*.*",
            "data:",
            "javascript:alert(1)",
            "file:///etc/passwd",
            "ftp://files.example",
            "https://a.example,https://b.example",
            "https://a.example\n",
            "https://ex\"ample.com",
            "https://a.example:80a",
            "https://a.example/p?q=1",
            "https://user@a.example",
            "https://-bad.example",
            "blob:",
            "",
        ];
        let p = build(Some(&decl(&hostile, &[])));
        assert_eq!(p.csp, build(None).csp);
        assert!(p.external.is_empty());
        let dropped: Vec<&str> = p.dropped.iter().map(|d| d.entry.as_str()).collect();
        assert_eq!(dropped, hostile);
        assert_eq!(
            clean_source("https://a.example; script-src *"),
            Err("it holds quotes, ';', ',' or whitespace")
        );
        assert_eq!(
            clean_source("ftp://files.example"),
            Err("only http, https, ws and wss origins are allowed")
        );
        assert_eq!(
            clean_source("https://*"),
            Err("its host is not a domain name (a leading \"*.\" is the only wildcard)")
        );
    }

    #[test]
    fn wildcards_ports_and_limits() {
        assert_eq!(
            clean_source("https://*.example.com"),
            Ok("https://*.example.com".into())
        );
        assert_eq!(
            clean_source("http://localhost:*"),
            Ok("http://localhost:*".into())
        );
        assert_eq!(
            clean_source("ws://127.0.0.1:9000"),
            Ok("ws://127.0.0.1:9000".into())
        );
        assert!(clean_source("https://a.*.example").is_err());
        let many: Vec<String> = (0..40).map(|i| format!("https://h{i}.example")).collect();
        let d = ViewCspDeclaration {
            connect_domains: many,
            ..Default::default()
        };
        let p = build(Some(&d));
        assert_eq!(p.external.len(), MAX_DECLARED_DOMAINS);
        assert_eq!(p.dropped.len(), 40 - MAX_DECLARED_DOMAINS);
        assert_eq!(p.dropped[0].why, "the list has too many entries");
    }

    #[test]
    fn allow_names_only_what_was_granted() {
        assert_eq!(allow_attribute(&ViewPermissions::default()), "");
        let p = ViewPermissions {
            camera: true,
            clipboard_write: true,
            ..Default::default()
        };
        assert_eq!(allow_attribute(&p), "camera; clipboard-write");
    }
}
