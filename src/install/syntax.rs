//! The syntax of what a registry record names: package names and versions of each package
//! registry, environment variable and header names. What fails these never reaches an
//! entry (a name that starts like an option, a version range, a space or a quote).

/// npm: an optional scope, then a name; no leading `.`, `_` or `-`.
pub fn npm_name_ok(s: &str) -> bool {
    let name_ok = |n: &str| {
        !n.is_empty()
            && !n.starts_with(['.', '_', '-'])
            && n.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-._~".contains(c))
    };
    s.len() <= 214
        && match s.strip_prefix('@') {
            Some(rest) => rest
                .split_once('/')
                .is_some_and(|(scope, name)| name_ok(scope) && name_ok(name)),
            None => name_ok(s),
        }
}

pub fn pypi_name_ok(s: &str) -> bool {
    s.len() <= 200
        && s.starts_with(|c: char| c.is_ascii_alphanumeric())
        && s.ends_with(|c: char| c.is_ascii_alphanumeric())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-._".contains(c))
}

pub fn nuget_name_ok(s: &str) -> bool {
    s.len() <= 100
        && s.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-._".contains(c))
}

pub fn oci_ref_ok(s: &str) -> bool {
    s.len() <= 255
        && s.starts_with(|c: char| c.is_ascii_alphanumeric())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-._/:@+".contains(c))
}

pub fn version_ok(s: &str) -> bool {
    s.len() <= 100
        && s.starts_with(|c: char| c.is_ascii_alphanumeric())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-._+".contains(c))
        && s != "latest"
}

pub fn env_name_ok(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 128
        && !s.starts_with(|c: char| c.is_ascii_digit())
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

pub fn header_name_ok(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 128
        && s.chars()
            .all(|c| c.is_ascii_graphic() && !"()<>@,;:\\\"/[]?={}".contains(c))
}

/// Whether an OCI reference names its tag or digest (`image:tag`, `image@sha256:…`).
pub fn oci_has_tag(s: &str) -> bool {
    s.contains('@') || s.rsplit('/').next().is_some_and(|last| last.contains(':'))
}
