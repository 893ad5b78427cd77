//! Where a redirect may lead: within the origin of the request only. A redirect to another
//! origin is never followed, so the headers from `.mcp.json`, the session id and any token
//! only ever go to the origin the user wrote down. Used by the HTTP transports and by
//! sign-in's own requests.

use reqwest::redirect::{Attempt, Policy};

/// Most redirects followed (within one origin) for one request.
pub const MAX_REDIRECTS: usize = 10;

/// A redirect to another origin, refused.
#[derive(Debug)]
pub struct CrossOriginRedirect {
    /// The origin redirected to (`scheme://host:port`).
    pub origin: String,
}

impl std::fmt::Display for CrossOriginRedirect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the server redirected to {}; harness9 does not follow a redirect to another origin (it would carry this server's headers and session there): put that URL in .mcp.json if you trust it",
            self.origin
        )
    }
}

impl std::error::Error for CrossOriginRedirect {}

impl CrossOriginRedirect {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        "cross-origin-redirect"
    }
}

/// Follows redirects within the origin of the request (up to [`MAX_REDIRECTS`]); stops at
/// one that leaves it. reqwest's default policy would follow it carrying every custom
/// header; following without them would reach a server the user never named and fail
/// there with a confusing error, so the user decides instead.
pub fn redirect_policy() -> Policy {
    Policy::custom(|attempt: Attempt<'_>| {
        let from = attempt.previous().last().map(|u| u.origin());
        if from.as_ref() != Some(&attempt.url().origin()) {
            let origin = attempt.url().origin().ascii_serialization();
            return attempt.error(CrossOriginRedirect { origin });
        }
        if attempt.previous().len() > MAX_REDIRECTS {
            return attempt.error(format!(
                "the server redirected more than {MAX_REDIRECTS} times"
            ));
        }
        attempt.follow()
    })
}

/// The refused cross-origin redirect behind `e`, if that is what stopped it.
pub fn cross_origin<'a>(
    e: &'a (dyn std::error::Error + 'static),
) -> Option<&'a CrossOriginRedirect> {
    let mut cur: Option<&'a (dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = cur {
        if let Some(c) = err.downcast_ref::<CrossOriginRedirect>() {
            return Some(c);
        }
        cur = err.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_redirect_says_where_it_led() {
        let e = CrossOriginRedirect {
            origin: "http://127.0.0.1:9".into(),
        };
        assert!(e
            .to_string()
            .starts_with("the server redirected to http://127.0.0.1:9;"));
    }
}
