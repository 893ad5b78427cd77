//! Signing in to remote servers from the `/mcp` panel: the `a` (sign in) and `o` (sign out)
//! keys, the progress and result lines, and what the details and the footer show about a
//! server's sign-in. Pure like the rest of the UI: keys return an [`Action`] for the
//! runner, which calls the core and hands the outcome back as an [`AuthDone`]. Works on
//! the server it is given and the list of sign-ins under way; the state picks the server.

use std::time::{SystemTime, UNIX_EPOCH};

use harness9::host::signin::SignInError;
use harness9::manager::StartPhase;
use harness9::manager::{ServerState, ServerStatus};
use harness9::mcp::auth::SignedIn;
use ratatui::style::{Color, Style};
use ratatui::text::Line;

use super::model::Action;

/// The outcome of a sign-in or sign-out the runner carried out.
#[derive(Debug, Clone, PartialEq)]
pub enum AuthDone {
    SignIn {
        server: String,
        result: Result<SignedIn, SignInError>,
    },
    SignOut {
        server: String,
        result: Result<bool, SignInError>,
    },
}

/// The result of the last sign-in or sign-out, shown at the bottom of the panel until the
/// next key.
#[derive(Debug, Clone, PartialEq)]
pub struct Notice {
    pub text: String,
    pub error: bool,
}

/// Whether a server signs in with OAuth (remote transports; stdio servers use env).
pub fn is_remote(s: &ServerStatus) -> bool {
    matches!(s.transport.as_str(), "http" | "sse")
}

/// `a` (sign in) or `o` (sign out) on server `s`: the action, or the notice that says why
/// not. A sign-in asked for is added to `signing_in` (the sign-ins under way).
pub fn key(
    s: &ServerStatus,
    signing_in: &mut Vec<String>,
    sign_in: bool,
) -> Result<Action, Notice> {
    let name = s.name.clone();
    if !is_remote(s) {
        return Err(Notice {
            text: format!(
                "{name} is a local server: it takes credentials from \"env\" in .mcp.json, not from a sign-in"
            ),
            error: true,
        });
    }
    if signing_in.contains(&name) {
        return Err(Notice {
            text: format!("already signing in to {name}: finish in the browser"),
            error: false,
        });
    }
    if sign_in {
        signing_in.push(name.clone());
        Ok(Action::SignIn(name))
    } else {
        Ok(Action::SignOut(name))
    }
}

/// The outcome of a sign-in or sign-out, as the notice to show; a finished sign-in leaves
/// `signing_in`.
pub fn done(done: AuthDone, signing_in: &mut Vec<String>) -> Notice {
    match done {
        AuthDone::SignIn { server, result } => {
            signing_in.retain(|n| *n != server);
            match result {
                Ok(s) => Notice {
                    text: format!("signed in to {server} ({})", s.issuer),
                    error: false,
                },
                Err(e) => Notice {
                    text: format!("could not sign in to {server}: {e}"),
                    error: true,
                },
            }
        }
        AuthDone::SignOut { server, result } => match result {
            Ok(true) => Notice {
                text: format!("signed out of {server}; its tokens are forgotten"),
                error: false,
            },
            Ok(false) => Notice {
                text: format!("no sign-in was kept for {server}"),
                error: false,
            },
            Err(e) => Notice {
                text: format!("could not sign out of {server}: {e}"),
                error: true,
            },
        },
    }
}

/// The sign-in lines at the bottom of the panel: sign-ins under way, and the last notice.
pub fn status_lines(signing_in: &[String], notice: Option<&Notice>) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    if !signing_in.is_empty() {
        lines.push(Line::styled(
            format!(
                "Signing in to {}: finish in the browser that opened…",
                signing_in.join(", ")
            ),
            Style::new().fg(Color::Yellow),
        ));
    }
    if let Some(n) = notice {
        let color = if n.error { Color::Red } else { Color::Green };
        lines.push(Line::styled(n.text.clone(), Style::new().fg(color)));
    }
    lines
}

/// The sign-in key hints for a server's row (none for a local server).
pub fn hints(s: &ServerStatus) -> Vec<&'static str> {
    let mut hints = Vec::new();
    if is_remote(s) {
        hints.push("a sign in");
        if s.signed_in.is_some() {
            hints.push("o sign out");
        }
    }
    hints
}

/// Seconds since the Unix epoch, now.
fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// "expires in 45 min", "expires in 3 h", "expired"; `None` when the expiry is unknown.
pub fn expiry_words(expires_at: Option<u64>, now: u64) -> Option<String> {
    let at = expires_at?;
    let left = at.saturating_sub(now);
    Some(match left {
        0 => "expired".into(),
        l if l < 60 => "expires in less than a minute".into(),
        l if l < 2 * 3600 => format!("expires in {} min", l / 60),
        l if l < 2 * 86400 => format!("expires in {} h", l / 3600),
        l => format!("expires in {} days", l / 86400),
    })
}

/// "signed in to https://auth.example.com · scopes read write · expires in 45 min ·
/// renews itself"
pub fn signed_in_words(s: &SignedIn, now: u64) -> String {
    let mut parts = vec![format!("signed in to {}", s.issuer)];
    if !s.scopes.is_empty() {
        parts.push(format!("scopes {}", s.scopes.join(" ")));
    }
    parts.extend(expiry_words(s.expires_at, now));
    if s.refreshable {
        parts.push("renews itself".into());
    }
    parts.join(" · ")
}

/// What the details of a server say about signing in.
pub fn detail_lines(s: &ServerStatus) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    match &s.state {
        ServerState::NeedsAuth { reason } => {
            lines.push(Line::styled(
                "needs sign-in:",
                Style::new().fg(Color::Magenta),
            ));
            lines.extend(reason.lines().map(|l| Line::raw(l.to_string())));
            lines.push(Line::styled(
                "press a to sign in (your browser opens)",
                Style::new().fg(Color::DarkGray),
            ));
        }
        ServerState::Starting {
            phase: StartPhase::SigningIn,
        } => lines.push(Line::styled(
            format!("{}…", StartPhase::SigningIn.label()),
            Style::new().fg(Color::Yellow),
        )),
        ServerState::Starting { .. }
        | ServerState::Connected { .. }
        | ServerState::Failed { .. }
        | ServerState::Disabled
        | ServerState::AwaitingApproval
        | ServerState::Stopped => {}
    }
    if let Some(si) = &s.signed_in {
        lines.push(Line::styled(
            signed_in_words(si, now_secs()),
            Style::new().fg(Color::Green),
        ));
        lines.push(Line::styled(
            format!("tokens kept in {}", si.kept_in),
            Style::new().fg(Color::DarkGray),
        ));
    }
    lines
}
