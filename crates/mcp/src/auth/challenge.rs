//! The `WWW-Authenticate` header (RFC 9110 §11.6.1): a list of challenges, each a scheme
//! followed by either a token68 or comma-separated `name=value` parameters (values are
//! tokens or quoted strings with `\` escapes). One header may hold several challenges and
//! a response may carry several headers. Schemes and parameter names are case-insensitive
//! (kept lower-case here); values are kept as sent.
//!
//! [`bearer`] picks what the MCP authorization flow needs from the `Bearer` challenge:
//! `resource_metadata`, `scope`, `error`, `error_description`.

use reqwest::header::{HeaderMap, WWW_AUTHENTICATE};

/// One challenge: `Bearer realm="x", scope="a b"`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Challenge {
    /// Lower-case.
    pub scheme: String,
    pub token68: Option<String>,
    /// Names lower-case, in order.
    pub params: Vec<(String, String)>,
}

impl Challenge {
    /// The first parameter called `name` (case-insensitive).
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// What the `Bearer` challenge of a refusal says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BearerChallenge {
    pub resource_metadata: Option<String>,
    pub scope: Option<String>,
    pub error: Option<String>,
    pub error_description: Option<String>,
}

impl BearerChallenge {
    /// The challenge's scopes, split on spaces.
    pub fn scopes(&self) -> Vec<String> {
        split_scopes(self.scope.as_deref())
    }

    pub fn is_insufficient_scope(&self) -> bool {
        self.error.as_deref() == Some("insufficient_scope")
    }
}

/// Splits a space-separated scope string.
pub fn split_scopes(s: Option<&str>) -> Vec<String> {
    s.unwrap_or("")
        .split_ascii_whitespace()
        .map(str::to_string)
        .collect()
}

/// The `Bearer` challenge among every `WWW-Authenticate` header of a response.
pub fn bearer(headers: &HeaderMap) -> Option<BearerChallenge> {
    let c = headers
        .get_all(WWW_AUTHENTICATE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(parse)
        .find(|c| c.scheme == "bearer")?;
    let get = |n: &str| c.param(n).map(str::to_string);
    Some(BearerChallenge {
        resource_metadata: get("resource_metadata"),
        scope: get("scope"),
        error: get("error"),
        error_description: get("error_description"),
    })
}

/// Parses one header value into its challenges. Malformed parts are skipped, never fatal.
pub fn parse(header: &str) -> Vec<Challenge> {
    let mut p = Parser {
        s: header.as_bytes(),
        i: 0,
    };
    let mut out = Vec::new();
    loop {
        p.skip(|b| b == b',' || is_ws(b));
        if p.done() {
            return out;
        }
        let scheme = p.token();
        if scheme.is_empty() {
            p.i += 1; // not a token character: skip it
            continue;
        }
        let mut c = Challenge {
            scheme: scheme.to_ascii_lowercase(),
            token68: None,
            params: Vec::new(),
        };
        p.skip(is_ws);
        // token68: a run followed only by `=` padding, then the end or a comma.
        if !p.done() && p.peek() != b',' {
            let save = p.i;
            let run = p.token68();
            p.skip(|b| b == b'=');
            let pad_end = p.i;
            p.skip(is_ws);
            if !run.is_empty() && (p.done() || p.peek() == b',') {
                c.token68 = Some(String::from_utf8_lossy(&p.s[save..pad_end]).into_owned());
                out.push(c);
                continue;
            }
            p.i = save;
        }
        // Parameters until the next token that is not followed by `=` (a new challenge).
        loop {
            p.skip(|b| b == b',' || is_ws(b));
            if p.done() {
                break;
            }
            let save = p.i;
            let name = p.token();
            p.skip(is_ws);
            if name.is_empty() || p.done() || p.peek() != b'=' {
                p.i = save;
                break;
            }
            p.i += 1;
            p.skip(is_ws);
            let value = if !p.done() && p.peek() == b'"' {
                p.quoted()
            } else {
                p.token()
            };
            c.params.push((name.to_ascii_lowercase(), value));
            p.skip(is_ws);
            if !p.done() && p.peek() != b',' {
                // Junk after a value: skip to the next comma.
                p.skip(|b| b != b',');
            }
        }
        out.push(c);
    }
}

fn is_ws(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// RFC 9110 `tchar`.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

fn is_token68_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-._~+/".contains(&b)
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn done(&self) -> bool {
        self.i >= self.s.len()
    }

    fn peek(&self) -> u8 {
        self.s[self.i]
    }

    fn skip(&mut self, f: impl Fn(u8) -> bool) {
        while !self.done() && f(self.peek()) {
            self.i += 1;
        }
    }

    fn token(&mut self) -> String {
        let start = self.i;
        self.skip(is_tchar);
        String::from_utf8_lossy(&self.s[start..self.i]).into_owned()
    }

    fn token68(&mut self) -> String {
        let start = self.i;
        self.skip(is_token68_char);
        String::from_utf8_lossy(&self.s[start..self.i]).into_owned()
    }

    /// A quoted string starting at `"`; `\x` stands for `x`. An unterminated one runs to
    /// the end.
    fn quoted(&mut self) -> String {
        self.i += 1;
        let mut out = Vec::new();
        while !self.done() {
            let b = self.peek();
            self.i += 1;
            match b {
                b'"' => break,
                b'\\' if !self.done() => {
                    out.push(self.peek());
                    self.i += 1;
                }
                _ => out.push(b),
            }
        }
        String::from_utf8_lossy(&out).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn params(c: &Challenge) -> Vec<(&str, &str)> {
        c.params
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect()
    }

    #[test]
    fn bearer_with_quoted_params() {
        let cs = parse(
            r#"Bearer resource_metadata="https://h/.well-known/oauth-protected-resource/mcp", scope="a b""#,
        );
        assert_eq!(cs.len(), 1);
        assert_eq!(cs[0].scheme, "bearer");
        assert_eq!(
            params(&cs[0]),
            vec![
                (
                    "resource_metadata",
                    "https://h/.well-known/oauth-protected-resource/mcp"
                ),
                ("scope", "a b")
            ]
        );
    }

    #[test]
    fn several_challenges_in_one_header() {
        let cs = parse(
            r#"Basic realm="x, y", Bearer error=insufficient_scope, scope="files:read", Negotiate abc123=="#,
        );
        assert_eq!(
            cs.iter().map(|c| c.scheme.as_str()).collect::<Vec<_>>(),
            vec!["basic", "bearer", "negotiate"]
        );
        assert_eq!(params(&cs[0]), vec![("realm", "x, y")]);
        assert_eq!(
            params(&cs[1]),
            vec![("error", "insufficient_scope"), ("scope", "files:read")]
        );
        assert_eq!(cs[2].token68.as_deref(), Some("abc123=="));
    }

    #[test]
    fn escapes_case_and_spacing() {
        let cs = parse(r#"BEARER  Error_Description = "say \"hi\" \\ bye" ,SCOPE="s1""#);
        assert_eq!(cs[0].scheme, "bearer");
        assert_eq!(cs[0].param("error_description"), Some(r#"say "hi" \ bye"#));
        assert_eq!(cs[0].param("scope"), Some("s1"));
    }

    #[test]
    fn schemes_without_params_and_token68() {
        let cs = parse("Basic, Bearer, Custom dG9rZW4");
        assert_eq!(cs.len(), 3);
        assert!(cs[0].params.is_empty() && cs[0].token68.is_none());
        assert!(cs[1].params.is_empty());
        assert_eq!(cs[2].token68.as_deref(), Some("dG9rZW4"));
        assert!(parse("").is_empty());
        // Unterminated quotes and junk never panic.
        let cs = parse(r#"Bearer scope="a b"#);
        assert_eq!(cs[0].param("scope"), Some("a b"));
        parse(r#"=,=,"" Bearer ="x" ,,"#);
    }

    #[test]
    fn bearer_from_several_headers() {
        let mut h = HeaderMap::new();
        h.append(
            WWW_AUTHENTICATE,
            HeaderValue::from_static("Basic realm=\"r\""),
        );
        h.append(
            WWW_AUTHENTICATE,
            HeaderValue::from_static(
                "Bearer error=\"insufficient_scope\", scope=\"a b\", resource_metadata=\"https://h/prm\", error_description=\"more\"",
            ),
        );
        let b = bearer(&h).expect("bearer");
        assert_eq!(
            b,
            BearerChallenge {
                resource_metadata: Some("https://h/prm".into()),
                scope: Some("a b".into()),
                error: Some("insufficient_scope".into()),
                error_description: Some("more".into()),
            }
        );
        assert!(b.is_insufficient_scope());
        assert_eq!(b.scopes(), vec!["a", "b"]);
        assert_eq!(bearer(&HeaderMap::new()), None);
    }
}
