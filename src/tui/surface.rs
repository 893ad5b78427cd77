//! The `/mcp` panel's share of the client surface beyond tools: titles, tool annotations,
//! each server's logging level (key `l` cycles it) and recent log with levels, and the
//! `/roots` command for the project's extra roots. Pure: keys return an [`Action`] for the
//! runner, which carries it out on the core.

use std::path::PathBuf;

use harness9::host::catalog::ServerDetails;
use harness9::mcp::features::{LogLevel, LOG_LEVELS};
use harness9::mcp::log::{LogLine, LogSource};
use harness9::tools::ToolSpec;
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};

use super::model::{Action, RootsCommand, UsageError};

/// Lines of a server's recent log shown in its details.
pub const DETAIL_LOG_LINES: usize = 8;

/// Reads `/roots`, `/roots add PATH`, `/roots remove PATH`; `Err` says how to use it.
pub fn parse_roots(text: &str) -> Option<Result<RootsCommand, UsageError>> {
    let rest = text.strip_prefix("/roots")?;
    if !(rest.is_empty() || rest.starts_with(' ')) {
        return None;
    }
    let rest = rest.trim();
    let (verb, arg) = rest.split_once(' ').unwrap_or((rest, ""));
    let arg = arg.trim();
    Some(match (verb, arg) {
        ("" | "list", "") => Ok(RootsCommand::List),
        ("add", a) if !a.is_empty() => Ok(RootsCommand::Add(PathBuf::from(a))),
        ("remove" | "rm", a) if !a.is_empty() => Ok(RootsCommand::Remove(PathBuf::from(a))),
        _ => Err(UsageError::Usage(
            "usage: /roots (list the extra roots) · /roots add PATH · /roots remove PATH",
        )),
    })
}

/// The level after `current` when the user presses `l` (debug first, round and round).
pub fn next_level(current: Option<LogLevel>) -> LogLevel {
    match current {
        None => LOG_LEVELS[0],
        Some(l) => {
            let i = LOG_LEVELS.iter().position(|x| *x == l).unwrap_or(0);
            LOG_LEVELS[(i + 1) % LOG_LEVELS.len()]
        }
    }
}

/// `l` on a server: the next logging level, when the server takes one.
pub fn log_level_key(d: &ServerDetails) -> Option<Action> {
    d.logging.then(|| Action::SetLogLevel {
        server: d.name.clone(),
        level: next_level(d.log_level),
    })
}

/// `s` on a server: make it ask again before it uses the model, when it may use it without
/// asking (`grants`: the servers that may).
pub fn revoke_sampling_key(server: &str, grants: &[String]) -> Option<Action> {
    grants
        .iter()
        .any(|g| g == server)
        .then(|| Action::RevokeSampling(server.to_string()))
}

/// The title (when the server gave one) after the name, which stays the identifier.
pub fn title_span(title: Option<&str>) -> Option<Span<'static>> {
    title.map(|t| Span::styled(format!(" · {t}"), Style::new().fg(Color::White)))
}

/// Title, logging level and recent log of a server, for its details.
pub fn server_lines(d: Option<&ServerDetails>, log: &[LogLine]) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    let Some(d) = d else {
        return lines;
    };
    if let Some(t) = &d.title {
        lines.push(Line::raw(format!("title: {t}")));
    }
    lines.push(Line::raw(match (d.logging, d.log_level) {
        (false, _) => "logging: not offered by this server".to_string(),
        (true, None) => "logging: the server's default level · l set a level".to_string(),
        (true, Some(l)) => format!("logging: {} and above · l next level", l.as_str()),
    }));
    if !log.is_empty() {
        lines.push(Line::styled(
            "recent log:",
            Style::new().fg(Color::DarkGray),
        ));
        lines.extend(log.iter().map(log_line));
    }
    lines
}

/// One log line with its level (the logger, when the server named one, leads the text).
pub fn log_line(l: &LogLine) -> Line<'static> {
    let (tag, color) = match l.source {
        LogSource::Stderr => ("stderr".to_string(), Color::DarkGray),
        LogSource::Host => ("harness9".to_string(), Color::DarkGray),
        LogSource::View => ("view".to_string(), Color::DarkGray),
        LogSource::Server => (l.level.clone(), level_color(&l.level)),
    };
    Line::from(vec![
        Span::styled(format!("{tag:>9} "), Style::new().fg(color)),
        Span::raw(l.text.clone()),
    ])
}

fn level_color(level: &str) -> Color {
    match level {
        "debug" => Color::DarkGray,
        "info" | "notice" => Color::Reset,
        "warning" => Color::Yellow,
        _ => Color::Red,
    }
}

/// Title and the four annotations of a tool, for its details.
pub fn tool_lines(spec: &ToolSpec) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    if let Some(t) = &spec.display.title {
        lines.push(Line::raw(format!("title: {t}")));
    }
    if !matches!(spec.source, harness9::tools::ToolSource::Mcp { .. }) {
        return lines;
    }
    let a = &spec.display.annotations;
    let hint = |name: &str, set: Option<bool>, effective: bool| {
        let value = if effective { "yes" } else { "no" };
        match set {
            Some(_) => format!("{name}: {value}"),
            None => format!("{name}: {value} (default)"),
        }
    };
    let mut hints = vec![hint("read-only", a.read_only_hint, a.read_only())];
    if !a.read_only() {
        hints.push(hint("destructive", a.destructive_hint, a.destructive()));
    }
    hints.push(hint("idempotent", a.idempotent_hint, a.idempotent()));
    hints.push(hint("open-world", a.open_world_hint, a.open_world()));
    lines.push(Line::styled(
        format!("hints (the server's claims): {}", hints.join(" · ")),
        Style::new().fg(if spec.destructive() {
            Color::Yellow
        } else {
            Color::DarkGray
        }),
    ));
    if spec.destructive() {
        lines.push(Line::styled(
            "destructive: every call is asked about unless you allowed this tool",
            Style::new().fg(Color::Yellow),
        ));
    }
    lines
}

/// Carries out `/roots` on the core; the words for the transcript.
pub fn run_roots(harness: &harness9::Harness, cmd: RootsCommand) -> String {
    let list = |roots: &[PathBuf]| {
        if roots.is_empty() {
            "no extra roots (servers get the project folder); add one with /roots add PATH"
                .to_string()
        } else {
            let shown: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
            format!("extra roots: {}", shown.join(", "))
        }
    };
    match cmd {
        RootsCommand::List => list(&harness.extra_roots()),
        RootsCommand::Add(p) => match harness.add_extra_root(&p) {
            Ok(roots) => format!("added; servers were told. {}", list(&roots)),
            Err(e) => e.to_string(),
        },
        RootsCommand::Remove(p) => match harness.remove_extra_root(&p) {
            Ok(roots) => format!("removed; servers were told. {}", list(&roots)),
            Err(e) => e.to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_commands() {
        assert_eq!(parse_roots("/roots"), Some(Ok(RootsCommand::List)));
        assert_eq!(
            parse_roots("/roots add ~/src/lib"),
            Some(Ok(RootsCommand::Add("~/src/lib".into())))
        );
        assert_eq!(
            parse_roots("/roots remove /tmp/x y"),
            Some(Ok(RootsCommand::Remove("/tmp/x y".into())))
        );
        assert!(matches!(parse_roots("/roots add"), Some(Err(_))));
        assert_eq!(parse_roots("/rootsy"), None);
    }

    #[test]
    fn levels_cycle_from_debug() {
        assert_eq!(next_level(None), LogLevel::Debug);
        assert_eq!(next_level(Some(LogLevel::Debug)), LogLevel::Info);
        assert_eq!(next_level(Some(LogLevel::Emergency)), LogLevel::Debug);
    }
}
