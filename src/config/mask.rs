//! Masking of values that may be secrets, for everything shown outside the core: env and
//! header values, tokens in args, passwords and secret query parameters in URLs. A value
//! that is only a `${VAR}` reference is shown as written (it reveals nothing).

/// What a masked value is shown as.
pub const MASK: &str = "••••••";

/// A value that only refers to a variable (`${VAR}`), so showing it reveals nothing.
pub fn is_reference(value: &str) -> bool {
    let v = value.trim();
    v.strip_prefix("${")
        .and_then(|r| r.strip_suffix('}'))
        .is_some_and(|name| name.chars().all(is_name_char))
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == ':' || c == '-'
}

/// Words that mark a flag, parameter or variable as holding a secret.
const SECRET_WORDS: &[&str] = &[
    "token",
    "secret",
    "password",
    "passwd",
    "apikey",
    "api-key",
    "api_key",
    "auth",
    "credential",
    "private-key",
    "access-key",
    "key",
];

fn is_secret_name(name: &str) -> bool {
    let n = name.trim_start_matches('-').to_ascii_lowercase();
    SECRET_WORDS
        .iter()
        .any(|w| n == *w || n.ends_with(&format!("-{w}")) || n.ends_with(&format!("_{w}")))
        || SECRET_WORDS[..SECRET_WORDS.len() - 1]
            .iter()
            .any(|w| n.contains(w))
}

/// Masks arguments that look like secrets: the value after a secret-named flag
/// (`--token X`), `--token=X`, `NAME=X` with a secret name, and bearer-like tokens.
pub fn mask_args(args: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    let mut mask_next = false;
    for a in args {
        if mask_next && !a.starts_with('-') {
            out.push(mask_unless_reference(a));
            mask_next = false;
            continue;
        }
        mask_next = false;
        if a.contains("://") {
            out.push(mask_url(a));
            continue;
        }
        if let Some((name, value)) = a.split_once('=') {
            if is_secret_name(name) && !value.is_empty() {
                out.push(format!("{name}={}", mask_unless_reference(value)));
                continue;
            }
        } else if a.starts_with('-') && is_secret_name(a) {
            mask_next = true;
        } else if looks_like_token(a) {
            out.push(MASK.into());
            continue;
        }
        out.push(a.clone());
    }
    out
}

pub fn mask_unless_reference(v: &str) -> String {
    if is_reference(v) {
        v.to_string()
    } else {
        MASK.to_string()
    }
}

/// Well-known token prefixes (GitHub, Slack, OpenAI-style keys, bearer headers).
fn looks_like_token(a: &str) -> bool {
    const PREFIXES: &[&str] = &[
        "ghp_",
        "gho_",
        "ghs_",
        "github_pat_",
        "xoxb-",
        "xoxp-",
        "sk-",
        "Bearer ",
    ];
    PREFIXES
        .iter()
        .any(|p| a.starts_with(p) && a.len() > p.len() + 8)
}

/// Masks a URL's password and the values of secret-named query parameters.
pub fn mask_url(url: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (url, None),
    };
    let base = match base.split_once("://") {
        Some((scheme, rest)) => {
            let (authority, path) = match rest.find('/') {
                Some(i) => rest.split_at(i),
                None => (rest, ""),
            };
            let authority = match authority.rsplit_once('@') {
                Some((user, host)) => match user.split_once(':') {
                    Some((name, _)) => format!("{name}:{MASK}@{host}"),
                    None => format!("{MASK}@{host}"),
                },
                None => authority.to_string(),
            };
            format!("{scheme}://{authority}{path}")
        }
        None => base.to_string(),
    };
    match query {
        None => base,
        Some(q) => {
            let q: Vec<String> = q
                .split('&')
                .map(|kv| match kv.split_once('=') {
                    Some((k, v)) if is_secret_name(k) && !is_reference(v) => {
                        format!("{k}={MASK}")
                    }
                    _ => kv.to_string(),
                })
                .collect();
            format!("{base}?{}", q.join("&"))
        }
    }
}
