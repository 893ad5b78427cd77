//! `${VAR}` and `${VAR:-default}` expansion in `.mcp.json` strings.

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
}

/// Replaces every `${NAME}` and `${NAME:-default}` in `input`, looking names up with `env`.
/// A `$` that does not start `${` is kept as it is.
pub fn expand(input: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<String, ExpandError> {
    if !input.contains("${") {
        return Ok(input.to_string());
    }
    let mut out = String::with_capacity(input.len());
    let mut rest = input;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after
            .find('}')
            .ok_or_else(|| ExpandError::Unterminated(input.to_string()))?;
        let body = &after[..end];
        let (name, default) = match body.split_once(":-") {
            Some((n, d)) => (n, Some(d)),
            None => (body, None),
        };
        if name.is_empty() {
            return Err(ExpandError::Empty(input.to_string()));
        }
        match (env(name), default) {
            (Some(v), _) => out.push_str(&v),
            (None, Some(d)) => out.push_str(d),
            (None, None) => return Err(ExpandError::Unset(name.to_string())),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}
