//! Masking of values that may be secrets, for everything shown outside the core: env and
//! header values, tokens in args, and URLs. A value that is only a `${VAR}` reference is
//! shown as written (it reveals nothing).
//!
//! URLs ([`mask_url`]): the userinfo, every query value and the fragment are masked; the
//! scheme, host, port, path and query names are kept. Every text that may carry a URL on
//! its way out (error messages, logs, events) goes through [`mask_urls_in`], which masks
//! each URL found in it; [`MaskedUrl`] is the type to put a URL into such a text with.

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

/// Masks a URL: its userinfo, every query value (a bare `?word` too) and its fragment.
/// Scheme, host, port, path and query names stay, so the user still sees where it goes.
/// Works on text that is not a valid URL as well (it never fails, and never shows more).
pub fn mask_url(url: &str) -> String {
    // The base ends where the query or the fragment starts, whichever comes first.
    let base_end = url.find(['?', '#']).unwrap_or(url.len());
    let (base, rest) = url.split_at(base_end);
    let mut out = mask_userinfo(base);
    let (query, fragment) = match rest.strip_prefix('?') {
        Some(q) => match q.split_once('#') {
            Some((q, f)) => (Some(q), Some(f)),
            None => (Some(q), None),
        },
        None => (None, rest.strip_prefix('#')),
    };
    if let Some(q) = query {
        out.push('?');
        let parts: Vec<String> = q.split('&').map(mask_query_part).collect();
        out.push_str(&parts.join("&"));
    }
    if let Some(f) = fragment {
        out.push('#');
        if !f.is_empty() {
            out.push_str(MASK);
        }
    }
    out
}

/// `scheme://userinfo@host/path` with the userinfo masked (the whole of it: a user name
/// can be a token too).
fn mask_userinfo(base: &str) -> String {
    let Some((scheme, rest)) = base.split_once("://") else {
        return base.to_string();
    };
    // The authority ends at the path; `\` counts as `/` for the special schemes.
    let end = rest.find(['/', '\\']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(end);
    match authority.rsplit_once('@') {
        Some((_, host)) => format!("{scheme}://{MASK}@{host}{path}"),
        None => base.to_string(),
    }
}

/// One `name=value` of a query: the value masked unless empty or a `${VAR}` reference.
fn mask_query_part(part: &str) -> String {
    match part.split_once('=') {
        Some((k, v)) if v.is_empty() || is_reference(v) => format!("{k}={v}"),
        Some((k, _)) => format!("{k}={MASK}"),
        None if part.is_empty() || is_reference(part) => part.to_string(),
        None => MASK.to_string(),
    }
}

/// Masks every URL found in `text` ([`mask_url`]): a `scheme://` and what follows it up to
/// whitespace or a quote. Punctuation right after a URL (`.`, `,`, `:`, `;`, `)`) stays
/// outside it. For texts built elsewhere that may name a URL: error chains of HTTP
/// libraries, a server's error message, log lines.
// Every offset sliced at is a character boundary: `find` results, moved only over ASCII
// bytes (scheme characters, trailing punctuation).
#[allow(clippy::string_slice)]
pub fn mask_urls_in(text: &str) -> String {
    if !text.contains("://") {
        return text.to_string();
    }
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut search = 0;
    while let Some(found) = text[search..].find("://") {
        let sep = search + found;
        let mut start = sep;
        while start > copied && is_scheme_byte(bytes[start - 1]) {
            start -= 1;
        }
        let after = sep + 3;
        let mut end = text[after..]
            .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '<' | '>' | '`'))
            .map_or(text.len(), |i| after + i);
        while end > after && matches!(bytes[end - 1], b'.' | b',' | b':' | b';' | b')' | b']') {
            end -= 1;
        }
        if start == sep || !bytes[start].is_ascii_alphabetic() {
            // Not a URL (no scheme before `://`): leave it.
            search = after;
            continue;
        }
        out.push_str(&text[copied..start]);
        out.push_str(&mask_url(&text[start..end]));
        copied = end;
        search = end.max(after);
    }
    out.push_str(&text[copied..]);
    out
}

fn is_scheme_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.')
}

/// A URL to show: displays as [`mask_url`] does. Put URLs into error texts with it, never
/// as they are.
#[derive(Clone, PartialEq, Eq)]
pub struct MaskedUrl(String);

impl MaskedUrl {
    pub fn new(url: impl AsRef<str>) -> MaskedUrl {
        MaskedUrl(mask_url(url.as_ref()))
    }
}

impl From<&url::Url> for MaskedUrl {
    fn from(u: &url::Url) -> MaskedUrl {
        MaskedUrl::new(u.as_str())
    }
}

impl std::fmt::Display for MaskedUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::fmt::Debug for MaskedUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

/// A writer that masks the URLs in what is written through it ([`mask_urls_in`]), for log
/// output: everything written between two flushes (one log line each, as the log
/// formatter writes them) is masked as one text, then passed on.
pub struct MaskingWriter<W: std::io::Write> {
    inner: W,
    buf: Vec<u8>,
}

impl<W: std::io::Write> MaskingWriter<W> {
    pub fn new(inner: W) -> MaskingWriter<W> {
        MaskingWriter {
            inner,
            buf: Vec::new(),
        }
    }
}

impl<W: std::io::Write> std::io::Write for MaskingWriter<W> {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if !self.buf.is_empty() {
            let text = String::from_utf8_lossy(&self.buf).into_owned();
            self.buf.clear();
            self.inner.write_all(mask_urls_in(&text).as_bytes())?;
        }
        self.inner.flush()
    }
}

impl<W: std::io::Write> Drop for MaskingWriter<W> {
    fn drop(&mut self) {
        let _ = std::io::Write::flush(self);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_keep_where_they_go_and_lose_every_secret() {
        assert_eq!(
            mask_url("https://user:pw@h.example:8443/a/b?sig=S1&key=K2&x=&v=${TOKEN}#frag"),
            format!(
                "https://{MASK}@h.example:8443/a/b?sig={MASK}&key={MASK}&x=&v=${{TOKEN}}#{MASK}"
            )
        );
        assert_eq!(mask_url("http://tok@h/p"), format!("http://{MASK}@h/p"));
        assert_eq!(
            mask_url("http://h/sse?RAWTOKEN"),
            format!("http://h/sse?{MASK}")
        );
        assert_eq!(mask_url("http://h/p@x"), "http://h/p@x");
        assert_eq!(mask_url("http://h/#a?b=c"), format!("http://h/#{MASK}"));
        assert_eq!(
            mask_url("not a url?code=C"),
            format!("not a url?code={MASK}")
        );
        assert_eq!(mask_url("http://h/mcp"), "http://h/mcp");
    }

    #[test]
    fn urls_inside_text_are_masked() {
        let t = "error sending request for url (http://u:p@127.0.0.1:9/mcp?sig=S1&key=K2): connection closed";
        assert_eq!(
            mask_urls_in(t),
            format!("error sending request for url (http://{MASK}@127.0.0.1:9/mcp?sig={MASK}&key={MASK}): connection closed")
        );
        assert_eq!(
            mask_urls_in("GET https://h/x?a=1. then \"wss://h/?t=2\""),
            format!("GET https://h/x?a={MASK}. then \"wss://h/?t={MASK}\"")
        );
        assert_eq!(mask_urls_in("no url :// here"), "no url :// here");
        assert_eq!(mask_urls_in("plain"), "plain");
    }

    #[test]
    fn the_log_writer_masks_each_line() {
        use std::io::Write;
        let mut out = Vec::new();
        {
            let mut w = MaskingWriter::new(&mut out);
            w.write_all(b"fetching http://h/?sig=").unwrap();
            w.write_all(b"SECRET1 now\n").unwrap();
        }
        assert_eq!(
            String::from_utf8(out).unwrap(),
            format!("fetching http://h/?sig={MASK} now\n")
        );
    }
}
