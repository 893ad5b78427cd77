//! `harness9 doctor`: what a support person asks first, in one report. The version, the
//! OS, the display and WebKit (the desktop app needs both), the PATH servers are started
//! with (the login shell's, when harness9 runs outside a terminal) and which runtimes it
//! finds there, every server's resolved command and status, and the keychain.
//!
//! Every probe is bounded in time and none fails the report: a probe that cannot tell says
//! so in its field. Secrets never appear: targets are masked as everywhere else
//! ([`crate::config::mask`]), env values are masked unless they are `${VAR}` references,
//! and header values are left out.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use crate::config::{mask, TransportConfig};
use crate::manager::ServerState;
use crate::term_text;
use crate::Harness;

/// How long one `RUNTIME --version` may take.
pub const RUNTIME_VERSION_TIMEOUT: Duration = Duration::from_secs(5);
/// The runtimes server commands most often need, looked up on the servers' PATH.
pub const RUNTIMES: &[&str] = &["node", "npx", "uvx", "python3"];
/// The WebKitGTK library the desktop app links.
pub const WEBKIT_LIBRARY: &str = "libwebkit2gtk-4.1.so.0";
/// Folders searched for [`WEBKIT_LIBRARY`] when `ldconfig -p` does not list it.
const LIBRARY_DIRS: &[&str] = &[
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/usr/lib64",
    "/usr/lib",
    "/usr/local/lib",
];

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DoctorReport {
    pub version: String,
    /// `PRETTY_NAME` of `/etc/os-release`, else the OS family.
    pub os: String,
    pub arch: String,
    pub display: DisplayReport,
    pub path: PathReport,
    pub runtimes: Vec<RuntimeReport>,
    pub keychain: KeychainReport,
    pub project: ProjectReport,
    /// Where config, approvals, tokens and logs live ([`crate::about`]).
    pub places: Vec<crate::about::PlaceInfo>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DisplayReport {
    pub display: Option<String>,
    pub wayland_display: Option<String>,
    /// Where [`WEBKIT_LIBRARY`] was found; `None`: not installed (the desktop app cannot start).
    pub webkit: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PathReport {
    /// `$SHELL`, the shell asked for the login PATH.
    pub shell: Option<String>,
    /// Whether servers get the login shell's PATH (harness9 runs outside a terminal, as
    /// the desktop app does) or this process's own.
    pub from_login_shell: bool,
    /// The login shell's PATH merged with ours; `None` when the shell could not tell.
    pub login_path: Option<String>,
    /// This process's PATH.
    pub own_path: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RuntimeReport {
    pub name: String,
    /// Where it was found on the servers' PATH (the login shell's when there is one).
    pub path: Option<String>,
    /// The first line of `NAME --version`.
    pub version: Option<String>,
    pub error: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KeychainReport {
    pub available: bool,
    /// Why not, when it is not.
    pub detail: Option<String>,
    /// Where sign-in tokens are kept.
    pub credentials: String,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProjectReport {
    pub folder: String,
    pub config: String,
    pub config_error: Option<String>,
    pub servers: Vec<ServerReport>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerReport {
    pub name: String,
    pub transport: String,
    /// Command line or URL, secrets masked.
    pub target: String,
    /// A stdio server's command as it will be run: its full path on the servers' PATH.
    pub resolved: Option<String>,
    /// Env entries with their values masked (unless `${VAR}` references).
    pub env: Vec<String>,
    pub status: String,
    pub tools: usize,
    /// Estimated tokens of its tool definitions ([`crate::tools::cost`]).
    pub context_tokens: u32,
    pub error: Option<String>,
}

/// The report on a project whose servers `harness` has started (the caller decides how long
/// to wait for them; a server still starting is reported as such).
pub async fn report(harness: &Harness) -> DoctorReport {
    let project = harness.project().to_path_buf();
    let config = harness.load_config();
    let status = harness.status();
    let cost = harness.context_cost();
    let credentials = harness.credentials_location();
    let system = tokio::task::spawn_blocking(system_report)
        .await
        .expect("doctor probe");
    let search_path = if system.path.from_login_shell {
        system.path.login_path.clone()
    } else {
        system.path.own_path.clone()
    }
    .map(OsString::from);
    let runtimes = futures::future::join_all(
        RUNTIMES
            .iter()
            .map(|name| runtime_report(name, search_path.as_deref())),
    )
    .await;
    let servers = status
        .servers
        .iter()
        .map(|s| {
            let entry = config.servers.get(&s.name).and_then(|e| e.as_ref().ok());
            let (resolved, env) = match entry.map(|c| &c.transport) {
                Some(TransportConfig::Stdio {
                    command, env, cwd, ..
                }) => {
                    // As written: an expanded `${VAR}` would show (masked) as a secret.
                    let written: Vec<String> = entry
                        .and_then(|c| c.raw.get("env")?.as_object())
                        .map(|m| {
                            m.iter()
                                .map(|(k, v)| {
                                    let v = v.as_str().unwrap_or_default();
                                    format!("{k}={}", mask::mask_unless_reference(v))
                                })
                                .collect()
                        })
                        .unwrap_or_default();
                    let own_path = env
                        .iter()
                        .find(|(k, _)| k == "PATH")
                        .map(|(_, v)| OsString::from(v));
                    let cwd = cwd
                        .as_ref()
                        .map(|c| project.join(c))
                        .unwrap_or_else(|| project.clone());
                    let found = find_command(
                        &crate::shell_env::resolve_command(command),
                        own_path.as_deref().or(search_path.as_deref()),
                        &cwd,
                    );
                    (
                        Some(found.map_or_else(
                            || format!("{command}: not found on the servers' PATH"),
                            |p| p.display().to_string(),
                        )),
                        written,
                    )
                }
                _ => (None, Vec::new()),
            };
            let (tools, error) = match &s.state {
                ServerState::Connected { tools, .. } => (*tools, None),
                ServerState::Failed { reason, .. } => (0, Some(reason.clone())),
                ServerState::NeedsAuth { reason } => (0, Some(reason.clone())),
                ServerState::AwaitingApproval => (
                    0,
                    Some("not approved yet: approve it (or run with --yes) to check it".into()),
                ),
                ServerState::Starting { phase } => (
                    0,
                    Some(format!(
                        "still starting ({}) when the report was made",
                        phase.label()
                    )),
                ),
                ServerState::Disabled | ServerState::Stopped => (0, None),
            };
            ServerReport {
                name: s.name.clone(),
                transport: s.transport.clone(),
                target: s.target.clone(),
                resolved,
                env,
                status: s.state.word().into(),
                tools,
                context_tokens: cost.server(&s.name).tokens,
                error,
            }
        })
        .collect();
    let keychain = tokio::task::spawn_blocking(|| {
        crate::mcp::auth::store::probe_keychain(crate::mcp::auth::store::KEYCHAIN_PROBE_TIMEOUT)
    })
    .await
    .expect("keychain probe");
    DoctorReport {
        version: crate::about::VERSION.into(),
        os: system.os,
        arch: std::env::consts::ARCH.into(),
        display: system.display,
        path: system.path,
        runtimes,
        keychain: KeychainReport {
            available: keychain.is_ok(),
            detail: keychain.err().map(|e| e.to_string()),
            credentials: credentials.clone(),
        },
        project: ProjectReport {
            folder: project.display().to_string(),
            config: config
                .path
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| project.join(crate::config::MCP_JSON).display().to_string()),
            config_error: config.error.as_ref().map(|e| e.to_string()),
            servers,
        },
        places: crate::about::about(Some(&project), credentials).places,
    }
}

struct SystemReport {
    os: String,
    display: DisplayReport,
    path: PathReport,
}

fn system_report() -> SystemReport {
    let from_login_shell = crate::shell_env::outside_terminal();
    SystemReport {
        os: std::fs::read_to_string("/etc/os-release")
            .ok()
            .and_then(|t| os_release_name(&t))
            .unwrap_or_else(|| std::env::consts::OS.to_string()),
        display: DisplayReport {
            display: non_empty_env("DISPLAY"),
            wayland_display: non_empty_env("WAYLAND_DISPLAY"),
            webkit: find_webkit(),
        },
        path: PathReport {
            shell: non_empty_env("SHELL"),
            from_login_shell,
            // Asked even from a terminal: it is what the desktop app would give servers.
            login_path: crate::shell_env::login_path().map(|p| p.to_string_lossy().into_owned()),
            own_path: non_empty_env("PATH"),
        },
    }
}

fn non_empty_env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// `PRETTY_NAME` (else `NAME` and `VERSION`) of an os-release file.
fn os_release_name(text: &str) -> Option<String> {
    let field = |key: &str| {
        text.lines().find_map(|l| {
            let v = l.strip_prefix(key)?.strip_prefix('=')?;
            let v = v.trim().trim_matches('"').trim_matches('\'');
            (!v.is_empty()).then(|| v.to_string())
        })
    };
    field("PRETTY_NAME").or_else(|| {
        let name = field("NAME")?;
        Some(match field("VERSION") {
            Some(v) => format!("{name} {v}"),
            None => name,
        })
    })
}

fn find_webkit() -> Option<String> {
    if let Ok(out) = std::process::Command::new("ldconfig")
        .arg("-p")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
    {
        let listing = String::from_utf8_lossy(&out.stdout);
        if let Some(path) = ldconfig_path(&listing, WEBKIT_LIBRARY) {
            return Some(path);
        }
    }
    LIBRARY_DIRS
        .iter()
        .map(|d| Path::new(d).join(WEBKIT_LIBRARY))
        .find(|p| p.exists())
        .map(|p| p.display().to_string())
}

/// The path `ldconfig -p` lists for a library (`\tlibX.so.0 (libc6,x86-64) => /path`).
fn ldconfig_path(listing: &str, library: &str) -> Option<String> {
    listing.lines().find_map(|l| {
        let l = l.trim();
        let rest = l.strip_prefix(library)?;
        rest.starts_with(' ')
            .then(|| rest.rsplit_once("=> "))
            .flatten()
            .map(|(_, p)| p.trim().to_string())
    })
}

/// Where `command` would be found: as given when it has a `/` (relative to `cwd`), else
/// the first executable file of that name on `path`.
pub fn find_command(command: &str, path: Option<&OsStr>, cwd: &Path) -> Option<PathBuf> {
    if command.contains('/') {
        let p = cwd.join(command);
        return is_executable(&p).then_some(p);
    }
    std::env::split_paths(path?)
        .map(|d| d.join(command))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

async fn runtime_report(name: &str, path: Option<&OsStr>) -> RuntimeReport {
    let mut out = RuntimeReport {
        name: name.into(),
        path: None,
        version: None,
        error: None,
    };
    let Some(found) = find_command(name, path, Path::new("/")) else {
        out.error = Some("not found on the servers' PATH".into());
        return out;
    };
    out.path = Some(found.display().to_string());
    let mut cmd = tokio::process::Command::new(&found);
    cmd.arg("--version")
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    if let Some(p) = path {
        // npx and uvx are scripts that find their interpreter on PATH.
        cmd.env("PATH", p);
    }
    match tokio::time::timeout(RUNTIME_VERSION_TIMEOUT, cmd.output()).await {
        Ok(Ok(o)) => {
            let text = String::from_utf8_lossy(if o.stdout.is_empty() {
                &o.stderr
            } else {
                &o.stdout
            })
            .lines()
            .next()
            .unwrap_or("")
            .trim()
            .to_string();
            if o.status.success() && !text.is_empty() {
                out.version = Some(text);
            } else {
                out.error = Some(format!("`{name} --version` failed ({}): {text}", o.status));
            }
        }
        Ok(Err(e)) => out.error = Some(format!("could not run it: {e}")),
        Err(_) => {
            out.error = Some(format!(
                "`{name} --version` did not answer within {} s",
                RUNTIME_VERSION_TIMEOUT.as_secs()
            ))
        }
    }
    out
}

/// Lines of each server's stderr that [`diagnostics`] adds to the report.
pub const DIAGNOSTICS_STDERR_LINES: usize = 30;

/// The report as text plus the recent stderr of every server, for a support request
/// (the desktop app's "Copy diagnostics").
pub async fn diagnostics(harness: &Harness) -> String {
    let report = report(harness).await;
    let mut text = report.text();
    for srv in &report.project.servers {
        let Some(lines) = harness.server_log(&srv.name, usize::MAX) else {
            continue;
        };
        let stderr: Vec<&str> = lines
            .iter()
            .filter(|l| l.source == crate::mcp::log::LogSource::Stderr)
            .map(|l| l.text.as_str())
            .collect();
        let tail = &stderr[stderr.len().saturating_sub(DIAGNOSTICS_STDERR_LINES)..];
        text.push_str(&format!(
            "\n--- {}: stderr, last {} lines ---\n",
            term_text::line(&srv.name),
            tail.len()
        ));
        for l in tail {
            text.push_str(&term_text::line(&mask_words(l)));
            text.push('\n');
        }
    }
    text
}

/// A log line with what looks like a secret masked word by word (`--token=…`, `sk-…`, URLs
/// with credentials), as command lines are.
fn mask_words(line: &str) -> String {
    let words: Vec<String> = line.split(' ').map(str::to_string).collect();
    mask::mask_args(&words).join(" ")
}

fn or_none(v: &Option<String>) -> &str {
    v.as_deref().unwrap_or("(not set)")
}

impl DoctorReport {
    /// The report as text, the way `harness9 doctor` prints it and the desktop app copies it.
    /// Every line is one line: what came from a project or a server (names, commands,
    /// errors) is rendered with [`term_text::line`], so it cannot add or repaint lines.
    pub fn text(&self) -> String {
        let mut s = String::new();
        let mut line = |l: String| {
            s.push_str(&term_text::line(&l));
            s.push('\n');
        };
        line(format!("harness9 {}", self.version));
        line(format!("OS:        {} ({})", self.os, self.arch));
        line(format!(
            "Display:   DISPLAY={} WAYLAND_DISPLAY={}",
            or_none(&self.display.display),
            or_none(&self.display.wayland_display)
        ));
        line(format!(
            "WebKit:    {}",
            self.display.webkit.clone().unwrap_or_else(|| format!(
                "{WEBKIT_LIBRARY} not found (the desktop app needs libwebkit2gtk-4.1-0)"
            ))
        ));
        line(format!(
            "Shell:     {} (servers get {} PATH)",
            or_none(&self.path.shell),
            if self.path.from_login_shell {
                "the login shell's"
            } else {
                "this terminal's"
            }
        ));
        line(format!(
            "Login PATH: {}",
            self.path
                .login_path
                .as_deref()
                .unwrap_or("(the login shell did not tell)")
        ));
        line(format!("PATH:      {}", or_none(&self.path.own_path)));
        line("Runtimes:".into());
        for r in &self.runtimes {
            let what = match (&r.path, &r.version, &r.error) {
                (Some(p), Some(v), _) => format!("{v}  {p}"),
                (Some(p), None, Some(e)) => format!("{p}: {e}"),
                (_, _, Some(e)) => e.clone(),
                _ => String::new(),
            };
            line(format!("  {:<8} {what}", r.name));
        }
        line(format!(
            "Keychain:  {}",
            if self.keychain.available {
                "available".to_string()
            } else {
                format!(
                    "not available ({})",
                    self.keychain.detail.as_deref().unwrap_or("unknown")
                )
            }
        ));
        line(format!("Tokens:    {}", self.keychain.credentials));
        line(format!("Project:   {}", self.project.folder));
        line(format!("Config:    {}", self.project.config));
        if let Some(e) = &self.project.config_error {
            line(format!("  error: {e}"));
        }
        if self.project.servers.is_empty() {
            line("Servers:   none".into());
        } else {
            line("Servers:".into());
        }
        for srv in &self.project.servers {
            line(format!(
                "  {} [{}] {}{}",
                srv.name,
                srv.transport,
                srv.status,
                if srv.status == "connected" {
                    format!(", {} tools, ~{} tokens", srv.tools, srv.context_tokens)
                } else {
                    String::new()
                }
            ));
            line(format!("    target:   {}", srv.target));
            if let Some(r) = &srv.resolved {
                line(format!("    resolved: {r}"));
            }
            if !srv.env.is_empty() {
                line(format!("    env:      {}", srv.env.join(" ")));
            }
            if let Some(e) = &srv.error {
                let first = e.lines().next().unwrap_or("");
                line(format!("    error:    {first}"));
            }
        }
        line("Places:".into());
        for p in &self.places {
            line(format!("  {}: {}", p.what, p.location));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_lines_are_masked_word_by_word() {
        assert_eq!(
            mask_words("started with --api-key=sk-abcdefghijklmnop on  port 3"),
            format!("started with --api-key={} on  port 3", mask::MASK)
        );
    }

    #[test]
    fn the_os_name_comes_from_os_release() {
        let debian = "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian GNU/Linux\"\nVERSION_ID=\"12\"\n";
        assert_eq!(
            os_release_name(debian).as_deref(),
            Some("Debian GNU/Linux 12 (bookworm)")
        );
        assert_eq!(
            os_release_name("NAME=Alpine\nVERSION='3.20'\n").as_deref(),
            Some("Alpine 3.20")
        );
        assert_eq!(os_release_name("ID=x\n"), None);
    }

    #[test]
    fn webkit_is_read_from_the_ldconfig_listing() {
        let listing = "1234 libs found in cache `/etc/ld.so.cache'\n\
            \tlibwebkit2gtk-4.1.so.0.99 (libc6,x86-64) => /nope\n\
            \tlibwebkit2gtk-4.1.so.0 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libwebkit2gtk-4.1.so.0\n";
        assert_eq!(
            ldconfig_path(listing, WEBKIT_LIBRARY).as_deref(),
            Some("/usr/lib/x86_64-linux-gnu/libwebkit2gtk-4.1.so.0")
        );
        assert_eq!(ldconfig_path("", WEBKIT_LIBRARY), None);
    }

    #[test]
    fn commands_are_found_on_the_given_path_only_when_executable() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        std::fs::write(bin.join("tool"), "#!/bin/sh\n").unwrap();
        std::fs::write(bin.join("data"), "").unwrap();
        std::fs::set_permissions(bin.join("tool"), std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = std::env::join_paths([Path::new("/nonexistent"), &bin]).unwrap();
        assert_eq!(
            find_command("tool", Some(&path), dir.path()),
            Some(bin.join("tool"))
        );
        assert_eq!(find_command("data", Some(&path), dir.path()), None);
        assert_eq!(
            find_command("bin/tool", None, dir.path()),
            Some(dir.path().join("bin/tool"))
        );
        assert_eq!(find_command("tool", None, dir.path()), None);
    }
}
