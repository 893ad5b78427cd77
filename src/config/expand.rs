//! `${VAR}` and `${VAR:-default}` expansion in `.mcp.json` strings. A default may itself
//! hold references (`${TOKEN:-${FALLBACK}}`), expanded only when it is used, up to
//! [`MAX_NESTING`] levels deep; no unexpanded `${` is ever handed on, except an input
//! reference (`${input:NAME}`, see [`super::inputs`]), which is kept as written: its value
//! comes from the credential store when the server starts.

/// How deeply references may nest inside defaults.
pub const MAX_NESTING: usize = 8;

/// A reference that cannot be expanded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExpandError {
    #[error(
        "environment variable ${{{0}}} is not set; set it, or write ${{{0}:-default}} in .mcp.json"
    )]
    Unset(String),
    #[error("unterminated \"${{\" in \"{0}\"; close it with \"}}\"")]
    Unterminated(String),
    #[error("\"${{}}\" with no variable name in \"{0}\"")]
    Empty(String),
    #[error("references nested more than {MAX_NESTING} deep in \"{0}\"; simplify the default")]
    TooDeep(String),
}

impl ExpandError {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        match self {
            ExpandError::Unset(_) => "unset-variable",
            ExpandError::Unterminated(_) => "unterminated-reference",
            ExpandError::Empty(_) => "empty-reference",
            ExpandError::TooDeep(_) => "reference-too-deep",
        }
    }
}

/// Replaces every `${NAME}` and `${NAME:-default}` in `input`, looking names up with `env`.
/// A `$` that does not start `${` is kept as it is.
pub fn expand(input: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<String, ExpandError> {
    expand_at(input, input, env, 0)
}

/// The `}` that closes a reference whose body starts `after`, skipping nested `${…}`.
fn closing_brace(after: &str) -> Option<usize> {
    let bytes = after.as_bytes();
    let mut depth = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'$' if bytes.get(i + 1) == Some(&b'{') => {
                depth += 1;
                i += 1;
            }
            b'}' if depth == 0 => return Some(i),
            b'}' => depth -= 1,
            _ => {}
        }
        i += 1;
    }
    None
}

#[allow(
    clippy::string_slice,
    reason = "offsets are where `find` and `closing_brace` met ASCII `${` and `}`"
)]
fn expand_at(
    input: &str,
    whole: &str,
    env: &dyn Fn(&str) -> Option<String>,
    depth: usize,
) -> Result<String, ExpandError> {
    if depth > MAX_NESTING {
        return Err(ExpandError::TooDeep(whole.to_string()));
    }
    if !input.contains("${") {
        return Ok(input.to_string());
    }
    let mut out = String::with_capacity(input.len());
    let mut rest = input;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end =
            closing_brace(after).ok_or_else(|| ExpandError::Unterminated(whole.to_string()))?;
        let body = &after[..end];
        if super::inputs::input_in(body).is_some() {
            out.push_str(&rest[start..start + 2 + end + 1]);
            rest = &after[end + 1..];
            continue;
        }
        let (name, default) = match body.split_once(":-") {
            Some((n, d)) => (n, Some(d)),
            None => (body, None),
        };
        if name.is_empty() {
            return Err(ExpandError::Empty(whole.to_string()));
        }
        match (env(name), default) {
            (Some(v), _) => out.push_str(&v),
            (None, Some(d)) => out.push_str(&expand_at(d, whole, env, depth + 1)?),
            (None, None) => return Err(ExpandError::Unset(name.to_string())),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}
