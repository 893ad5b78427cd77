//! Which registries to ask, in order: `--registry URL` (one, for one command), else
//! [`REGISTRY_ENV`], else `"registries"` in the user's settings file. harness9 names no
//! registry of its own: the user says which one to trust (the official MCP Registry's
//! URL, a company's own, or both), and a search without one says how.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The registries to ask, separated by spaces or commas (overrides the settings file).
pub const REGISTRY_ENV: &str = "HARNESS9_REGISTRY";

/// The key of the settings file that lists the registries (URLs, or `{"url": …}`).
pub const REGISTRIES_FIELD: &str = "registries";

/// The settings file (`settings.json` in the user's config folder).
pub fn settings_file() -> PathBuf {
    crate::config::scopes::config_dir().join("settings.json")
}

/// Why no registry can be asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SourceError {
    #[error("no MCP registry is configured. Set {REGISTRY_ENV} to a registry's URL (for the official MCP Registry, its URL as its documentation gives it; several are searched in order when separated by spaces), or add \"{REGISTRIES_FIELD}\": [\"URL\"] to {settings}, or pass --registry URL")]
    NotConfigured { settings: String },
    #[error(
        "registry URL \"{url}\" cannot be used: {reason}; write it like https://registry.example/"
    )]
    BadUrl { url: String, reason: String },
    #[error("{path}: \"{REGISTRIES_FIELD}\" must be a list of URLs; fix the file")]
    BadSettings { path: String },
}

impl SourceError {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        match self {
            SourceError::NotConfigured { .. } => "no-registry",
            SourceError::BadUrl { .. } => "invalid-registry-url",
            SourceError::BadSettings { .. } => "invalid-settings",
        }
    }
}

/// A registry's base URL as the API paths go under it: http(s), no query, no trailing
/// `/`, and without a trailing API version (`…/v0.1` is the same registry).
pub fn normalize(url: &str) -> Result<String, SourceError> {
    let bad = |reason: &str| SourceError::BadUrl {
        url: url.to_string(),
        reason: reason.to_string(),
    };
    let parsed = url::Url::parse(url.trim()).map_err(|e| bad(&e.to_string()))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(bad("only http:// and https:// registries are asked"));
    }
    if parsed.host().is_none() {
        return Err(bad("it has no host"));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(bad("it holds a user name or password; harness9 sends none"));
    }
    if parsed.query().is_some() || parsed.fragment().is_some() {
        return Err(bad("it has a query or fragment"));
    }
    let mut s = parsed.to_string();
    while s.ends_with('/') {
        s.pop();
    }
    for suffix in ["/v0.1/servers", "/v0.1", "/v0/servers", "/v0"] {
        if let Some(base) = s.strip_suffix(suffix) {
            s = base.to_string();
            break;
        }
    }
    Ok(s)
}

/// The registries from the environment, else from the settings file at `settings`.
pub fn configured(settings: &Path) -> Result<Vec<String>, SourceError> {
    let from_env = std::env::var(REGISTRY_ENV).unwrap_or_default();
    let urls: Vec<String> = if !from_env.trim().is_empty() {
        from_env
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect()
    } else {
        from_settings(settings)?
    };
    if urls.is_empty() {
        return Err(SourceError::NotConfigured {
            settings: settings.display().to_string(),
        });
    }
    let mut out: Vec<String> = Vec::new();
    for u in urls {
        let n = normalize(&u)?;
        if !out.contains(&n) {
            out.push(n);
        }
    }
    Ok(out)
}

/// `--registry URL` when given, else [`configured`].
pub fn registries(flag: Option<&str>) -> Result<Vec<String>, SourceError> {
    match flag {
        Some(u) => Ok(vec![normalize(u)?]),
        None => configured(&settings_file()),
    }
}

fn from_settings(path: &Path) -> Result<Vec<String>, SourceError> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Ok(Vec::new());
    };
    let Ok(doc) = serde_json::from_str::<Value>(&text) else {
        // The settings file's own readers report a broken file.
        return Ok(Vec::new());
    };
    let bad = || SourceError::BadSettings {
        path: path.display().to_string(),
    };
    match doc.get(REGISTRIES_FIELD) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| match i {
                Value::String(s) => Ok(s.clone()),
                Value::Object(o) => o
                    .get("url")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .ok_or_else(bad),
                _ => Err(bad()),
            })
            .collect(),
        Some(_) => Err(bad()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_normalized_and_checked() {
        assert_eq!(
            normalize("https://reg.example/").unwrap(),
            "https://reg.example"
        );
        assert_eq!(
            normalize("http://127.0.0.1:9/base/v0.1").unwrap(),
            "http://127.0.0.1:9/base"
        );
        assert_eq!(
            normalize("ftp://x").unwrap_err().to_string(),
            "registry URL \"ftp://x\" cannot be used: only http:// and https:// registries are asked; write it like https://registry.example/"
        );
        assert!(normalize("https://u:p@reg.example").is_err());
        assert!(normalize("not a url").is_err());
    }

    #[test]
    fn the_settings_file_lists_them() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(
            &path,
            r#"{"provider": {}, "registries": ["https://a.example/", {"url": "https://b.example/v0.1"}]}"#,
        )
        .unwrap();
        assert_eq!(
            from_settings(&path).unwrap(),
            vec!["https://a.example/", "https://b.example/v0.1"]
        );
        std::fs::write(&path, r#"{"registries": "https://a.example"}"#).unwrap();
        assert_eq!(from_settings(&path).unwrap_err().code(), "invalid-settings");
        assert_eq!(
            from_settings(&dir.path().join("none")).unwrap(),
            Vec::<String>::new()
        );
    }
}
