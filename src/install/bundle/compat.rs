//! Whether a bundle runs here: its platforms (`darwin`, `win32`, `linux`, as Node.js
//! names them) and the versions of its runtimes found on the servers' PATH, against the
//! semver ranges of its `compatibility` (`>=16.0.0`, `^3.10`, `>=3.8,<4.0`,
//! `>=1 <2 || >=3`).

use std::ffi::OsStr;
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// How long a runtime may take to say its version.
const VERSION_TIMEOUT: Duration = Duration::from_secs(10);

/// This platform, as bundles name it.
pub fn platform() -> &'static str {
    match std::env::consts::OS {
        "macos" => "darwin",
        "windows" => "win32",
        other => other,
    }
}

/// One runtime a bundle needs, and what was found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RuntimeCheck {
    /// `node`, `python`, `uv`.
    pub name: String,
    /// The program looked for on the servers' PATH.
    pub program: String,
    /// The range the bundle asks for (`None`: any version).
    pub wanted: Option<String>,
    /// The version found (`None`: not found, or it did not say).
    pub found: Option<String>,
    pub ok: bool,
}

/// What a bundle asks of the machine, and whether this one has it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Compatibility {
    /// The platforms it runs on (empty: any).
    pub platforms: Vec<String>,
    /// This one.
    pub platform: String,
    pub platform_ok: bool,
    pub runtimes: Vec<RuntimeCheck>,
}

impl Compatibility {
    pub fn ok(&self) -> bool {
        self.platform_ok && self.runtimes.iter().all(|r| r.ok)
    }

    /// What is wrong, in words (empty when it runs here).
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        if !self.platform_ok {
            out.push(format!(
                "it runs on {} only, and this is {}",
                self.platforms.join(", "),
                self.platform
            ));
        }
        for r in &self.runtimes {
            match (&r.found, &r.wanted) {
                (_, _) if r.ok => {}
                (None, _) => out.push(format!(
                    "it needs {} (\"{}\") on the servers' PATH",
                    r.name, r.program
                )),
                (Some(v), Some(w)) => out.push(format!(
                    "it needs {} {w}, and the servers' PATH has {v}",
                    r.name
                )),
                (Some(v), None) => out.push(format!("{} {v} cannot be used", r.name)),
            }
        }
        out
    }
}

/// The version `program` (found at `path`) says it is: `node --version` → `v20.1.0`,
/// `python3 --version` → `Python 3.12.1`.
pub async fn version_of(program: &Path, path: Option<&OsStr>) -> Option<String> {
    let mut cmd = tokio::process::Command::new(program);
    cmd.arg("--version")
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    if let Some(p) = path {
        cmd.env("PATH", p);
    }
    let out = tokio::time::timeout(VERSION_TIMEOUT, cmd.output())
        .await
        .ok()?
        .ok()?;
    let text = if out.stdout.is_empty() {
        out.stderr
    } else {
        out.stdout
    };
    let text = String::from_utf8_lossy(text.get(..text.len().min(4096))?);
    text.split_whitespace()
        .map(|w| w.trim_start_matches('v'))
        .find(|w| parse_version(w).is_some())
        .map(str::to_string)
}

/// `1.2.3`, `1.2`, `3` (pre-release and build parts ignored).
fn parse_version(s: &str) -> Option<[u64; 3]> {
    let core = s.split(['-', '+']).next()?;
    let mut parts = core.split('.');
    let mut out = [0u64; 3];
    for (i, slot) in out.iter_mut().enumerate() {
        match parts.next() {
            Some(p) => *slot = p.parse().ok()?,
            None if i > 0 => break,
            None => return None,
        }
    }
    Some(out)
}

/// A version with `x`/`*` parts, and how many parts were given.
fn parse_partial(s: &str) -> Option<([u64; 3], usize)> {
    let s = s.trim().trim_start_matches('v');
    if s.is_empty() || s == "*" || s == "x" || s == "X" {
        return Some(([0; 3], 0));
    }
    let core = s.split(['-', '+']).next()?;
    let mut out = [0u64; 3];
    let mut n = 0;
    for (i, p) in core.split('.').enumerate() {
        if i >= 3 {
            return None;
        }
        if p == "x" || p == "X" || p == "*" {
            break;
        }
        out[i] = p.parse().ok()?;
        n = i + 1;
    }
    Some((out, n))
}

fn bump(v: [u64; 3], at: usize) -> [u64; 3] {
    match at {
        0 => [v[0] + 1, 0, 0],
        1 => [v[0], v[1] + 1, 0],
        _ => [v[0], v[1], v[2] + 1],
    }
}

/// Whether `v` satisfies one comparator (`>=1.2`, `^3`, `~1.2.3`, `1.x`).
fn comparator(v: [u64; 3], c: &str) -> Option<bool> {
    let ops = [">=", "<=", "==", ">", "<", "=", "^", "~=", "~"];
    let (op, rest) = ops
        .iter()
        .find_map(|o| c.strip_prefix(o).map(|r| (*o, r)))
        .unwrap_or(("", c));
    let (w, n) = parse_partial(rest)?;
    Some(match op {
        ">=" => v >= w,
        ">" if n == 0 => false,
        ">" => v >= bump(w, n - 1),
        "<=" if n == 0 => true,
        "<=" => v < bump(w, n - 1),
        "<" => v < w,
        "^" => {
            let upper = match (n, w) {
                (0, _) => return Some(true),
                (_, [0, 0, _]) if n == 3 => bump(w, 2),
                (_, [0, _, _]) if n >= 2 => bump(w, 1),
                _ => bump(w, 0),
            };
            v >= w && v < upper
        }
        "~" | "~=" => {
            let at = if op == "~=" {
                n.saturating_sub(2)
            } else {
                n.clamp(1, 2) - 1
            };
            n == 0 || (v >= w && v < bump(w, at))
        }
        // `=`, `==` and a bare version: equal in the parts given.
        _ => n == 0 || (v >= w && v < bump(w, n - 1)),
    })
}

/// Whether `version` satisfies `range` (`None`: the range is not one harness9 reads).
pub fn satisfies(version: &str, range: &str) -> Option<bool> {
    let v = parse_version(version)?;
    let mut any = false;
    for alt in range.split("||") {
        let mut all = true;
        // A space between an operator and its version belongs to it (`>= 3.8`).
        let mut words: Vec<String> = Vec::new();
        for w in alt.split([' ', ',']).filter(|w| !w.is_empty()) {
            match words.last_mut() {
                Some(last) if last.chars().all(|c| "<>=^~".contains(c)) => last.push_str(w),
                _ => words.push(w.to_string()),
            }
        }
        for w in &words {
            all &= comparator(v, w)?;
        }
        any |= all;
    }
    Some(any)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_as_npm_and_python_write_them() {
        let cases = [
            ("20.11.0", ">=16.0.0", true),
            ("14.2.0", ">=16.0.0", false),
            ("3.12.1", ">=3.8,<4.0", true),
            ("3.7.9", ">=3.8,<4.0", false),
            ("3.12.1", ">= 3.10", true),
            ("1.9.0", "^1.2", true),
            ("2.0.0", "^1.2", false),
            ("0.2.5", "^0.2.3", true),
            ("0.3.0", "^0.2.3", false),
            ("1.2.9", "~1.2.3", true),
            ("1.3.0", "~1.2.3", false),
            ("3.11.2", "3.11", true),
            ("3.12.0", "3.11.x", false),
            ("5.0.0", ">=1 <2 || >=3", true),
            ("2.5.0", ">=1 <2 || >=3", false),
            ("2.0.0", ">1", true),
            ("1.9.9", ">1", false),
            ("1.9.9", "<=1", true),
            ("1.0.0", "*", true),
        ];
        for (v, r, want) in cases {
            assert_eq!(satisfies(v, r), Some(want), "{v} {r}");
        }
        assert_eq!(satisfies("1.0.0", "latest"), None);
        assert_eq!(satisfies("nope", ">=1"), None);
    }
}
