//! Pure render functions over [`App`]: the chat, the MCP bar, the input line and the modals.
//! Usable at 80×24; everything wraps or truncates instead of overflowing.

use super::safe;
use harness9::engine::event::CallStatus;
use harness9::inspect::ApprovalRequest;
use harness9::manager::StartPhase;
use harness9::manager::{ServerState, ServerStatus};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{Block, Borders, Clear, Wrap};
use ratatui::Frame;
use serde_json::Value;
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use super::app::App;
use super::model::{ChatLine, Modal, PanelRow, ToolLineStatus};
use super::{ask_view, attach, auth, slash_view, surface};

pub fn render(f: &mut Frame, app: &App) {
    let bar_height = u16::from(app.has_servers());
    let [chat, bar, input] = Layout::vertical([
        Constraint::Min(1),
        Constraint::Length(bar_height),
        Constraint::Length(3),
    ])
    .areas(f.area());
    render_chat(f, app, chat);
    if bar_height > 0 {
        f.render_widget(safe::paragraph(mcp_bar(app)), bar);
    }
    render_input(f, app, input);
    if app.modal == Modal::None && app.ask.is_none() {
        slash_view::render(f, chat, &app.input, &app.prompts, &app.slash);
    }
    match &app.modal {
        Modal::None => {}
        Modal::Mcp { selected, details } => render_panel(f, app, *selected, *details),
        Modal::ServerApproval(servers) => render_server_approval(f, servers),
        Modal::ToolApproval => {
            if let Some(p) = app.approvals.first() {
                render_tool_approval(f, app, &p.name, &p.arguments, app.approvals.len() - 1)
            }
        }
    }
    if let (Modal::None, Some(p)) = (&app.modal, &app.picker) {
        attach::render_picker(f, p, input);
    }
    if let Some(view) = &app.ask {
        ask_view::render(f, view);
    }
}

/// The mark and colour of a state, as in the desktop status bar.
pub fn mark(state: &ServerState) -> (&'static str, Color) {
    match state {
        ServerState::Connected { .. } => ("●", Color::Green),
        ServerState::Starting { .. } => ("○", Color::Yellow),
        ServerState::Failed { .. } => ("✗", Color::Red),
        ServerState::Disabled => ("-", Color::DarkGray),
        ServerState::AwaitingApproval => ("?", Color::Magenta),
        // Like awaiting approval: waiting for the user, not failed.
        ServerState::NeedsAuth { .. } => ("!", Color::Magenta),
        ServerState::Stopped => ("■", Color::DarkGray),
    }
}

fn state_words(state: &ServerState) -> String {
    match state {
        ServerState::Connected { tools, .. } => {
            format!("{tools} tool{}", if *tools == 1 { "" } else { "s" })
        }
        ServerState::Starting {
            phase: StartPhase::SigningIn,
        } => "signing in…".into(),
        ServerState::Starting { phase } => phase.label().to_string(),
        ServerState::Failed { .. } => "failed".into(),
        ServerState::Disabled => "disabled".into(),
        ServerState::AwaitingApproval => "needs approval".into(),
        ServerState::NeedsAuth { .. } => "needs sign-in".into(),
        ServerState::Stopped => "stopped".into(),
    }
}

/// `[MCP] demo ● 3 tools │ remote ✗ failed`
pub fn mcp_bar(app: &App) -> Line<'static> {
    let mut spans = vec![Span::styled("[MCP] ", Style::new().bold())];
    if let Some(err) = &app.status.config_error {
        let first = err.lines().next().unwrap_or("").to_string();
        spans.push(Span::styled(
            format!("✗ {first}"),
            Style::new().fg(Color::Red),
        ));
        return Line::from(spans);
    }
    for (i, s) in app.status.servers.iter().enumerate() {
        if i > 0 {
            spans.push(Span::styled(" │ ", Style::new().fg(Color::DarkGray)));
        }
        let (m, color) = mark(&s.state);
        spans.push(Span::raw(format!("{} ", s.name)));
        spans.push(Span::styled(
            format!("{m} {}", state_words(&s.state)),
            Style::new().fg(color),
        ));
        if s.held_tools > 0 {
            spans.push(Span::styled(
                format!(" · {} changed", s.held_tools),
                Style::new().fg(Color::Yellow),
            ));
        }
    }
    Line::from(spans)
}

fn render_chat(f: &mut Frame, app: &App, area: Rect) {
    let mut lines: Vec<Line> = Vec::new();
    if app.chat.is_empty() {
        lines.push(Line::styled(
            format!(
                "harness9 · {} · /mcp for servers and tools, Ctrl+C to quit",
                app.provider
            ),
            Style::new().fg(Color::DarkGray),
        ));
    }
    for entry in &app.chat {
        match entry {
            ChatLine::User(t) => {
                for (i, l) in t.lines().enumerate() {
                    let prefix = if i == 0 { "> " } else { "  " };
                    lines.push(Line::styled(format!("{prefix}{l}"), Style::new().bold()));
                }
            }
            ChatLine::Assistant(t) => lines.extend(t.lines().map(|l| Line::raw(l.to_string()))),
            ChatLine::Tool {
                call_id,
                name,
                arguments,
                status,
            } => {
                let mut line = tool_line(name, arguments, status);
                if let Some(note) = super::tasks::tool_line_note(&app.tasks, call_id) {
                    line.spans
                        .push(Span::styled(note, Style::new().fg(Color::Magenta)));
                }
                lines.push(line)
            }
            ChatLine::System(t) => lines.extend(
                t.lines()
                    .map(|l| Line::styled(l.to_string(), Style::new().fg(Color::Yellow))),
            ),
        }
    }
    let text = Text::from(lines);
    let para = safe::paragraph(text).wrap(Wrap { trim: false });
    let total = para.line_count(area.width) as u16;
    let bottom = total.saturating_sub(area.height);
    let offset = bottom.saturating_sub(app.scroll);
    f.render_widget(para.scroll((offset, 0)), area);
}

fn tool_line(name: &str, arguments: &str, status: &ToolLineStatus) -> Line<'static> {
    let args: String = if arguments.chars().count() > 40 {
        format!("{}…", arguments.chars().take(39).collect::<String>())
    } else {
        arguments.to_string()
    };
    let (word, color, tail) = match status {
        ToolLineStatus::Running => ("running", Color::Yellow, String::new()),
        ToolLineStatus::Earlier {
            answered: false, ..
        } => ("no result", Color::DarkGray, String::new()),
        ToolLineStatus::Earlier { status, .. } => match status {
            CallStatus::Ok => ("ok", Color::Green, String::new()),
            CallStatus::Error
            | CallStatus::TimedOut
            | CallStatus::Denied
            | CallStatus::Cancelled => ("error", Color::Red, String::new()),
        },
        ToolLineStatus::Done {
            status,
            duration_ms,
            error,
        } => {
            let (w, c) = match status {
                CallStatus::Ok => ("ok", Color::Green),
                CallStatus::Error => ("error", Color::Red),
                CallStatus::TimedOut => ("timed out", Color::Red),
                CallStatus::Denied => ("denied", Color::Red),
                CallStatus::Cancelled => ("cancelled", Color::DarkGray),
            };
            let err = error
                .as_deref()
                .and_then(|e| e.lines().next())
                .map(|e| format!(": {e}"))
                .unwrap_or_default();
            (w, c, format!(" {}{err}", fmt_ms(*duration_ms)))
        }
    };
    Line::from(vec![
        Span::styled("⚙ ", Style::new().fg(Color::Cyan)),
        Span::styled(name.to_string(), Style::new().fg(Color::Cyan)),
        Span::raw(format!(" {args} ")),
        Span::styled(word.to_string(), Style::new().fg(color)),
        Span::raw(tail),
    ])
}

fn fmt_ms(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms} ms")
    } else {
        format!("{:.1} s", ms as f64 / 1000.0)
    }
}

fn render_input(f: &mut Frame, app: &App, area: Rect) {
    let title = if app.busy {
        " working… Esc to stop ".to_string()
    } else {
        format!(" {} ", app.provider)
    };
    let mut block = Block::default()
        .borders(Borders::TOP | Borders::BOTTOM)
        .title(title)
        .border_style(Style::new().fg(Color::DarkGray));
    if !app.attachments.is_empty() {
        block = block.title_bottom(Line::styled(
            format!(" {} · Backspace removes ", app.attachment_tags()),
            Style::new().fg(Color::Cyan),
        ));
    }
    let inner = block.inner(area);
    f.render_widget(block, area);
    let (shown, cursor) = input_tail(&app.input, inner.width.saturating_sub(PROMPT_WIDTH));
    f.render_widget(
        safe::paragraph(Line::from(vec![Span::raw(PROMPT), Span::raw(shown)])),
        inner,
    );
    let focused = app.modal == Modal::None && app.ask.is_none() && app.picker.is_none();
    if focused && inner.height > 0 {
        let x = (inner.x + PROMPT_WIDTH + cursor).min(inner.right().saturating_sub(1));
        f.set_cursor_position((x, inner.y));
    }
}

/// The input line's prompt, and how many columns it takes.
const PROMPT: &str = "› ";
const PROMPT_WIDTH: u16 = 2;

/// The end of `input` that fits in `width` columns with the cursor after it (earlier text
/// gives way to "…"), and the cursor's column in it. Columns are display widths, so wide
/// characters count twice and combining marks not at all.
pub fn input_tail(input: &str, width: u16) -> (String, u16) {
    let room = usize::from(width.saturating_sub(1));
    let total = input.width();
    if total <= room {
        return (input.to_string(), total as u16);
    }
    // Keep characters from the end while they fit beside the "…".
    let mut kept = 0;
    let mut start = input.len();
    for (i, c) in input.char_indices().rev() {
        let w = c.width().unwrap_or(0);
        if kept + w + 1 > room {
            break;
        }
        kept += w;
        start = i;
    }
    let shown = format!("…{}", input.get(start..).unwrap_or_default());
    let cursor = shown.width() as u16;
    (shown, cursor)
}

fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let w = width.min(area.width);
    let h = height.min(area.height);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

fn render_panel(f: &mut Frame, app: &App, selected: usize, details: bool) {
    let area = centered(
        f.area(),
        f.area().width.saturating_sub(4),
        f.area().height.saturating_sub(2),
    );
    f.render_widget(Clear, area);
    let block = Block::default()
        .borders(Borders::ALL)
        .title(
            " MCP servers · ↑↓/jk move · Enter details · r restart · e edit .mcp.json · Esc close ",
        )
        .title_style(Style::new().bold())
        .title_bottom(Line::styled(
            panel_hints(app, selected),
            Style::new().fg(Color::Yellow),
        ));
    let mut inner = block.inner(area);
    f.render_widget(block, area);
    if let Some(status) = panel_status(app) {
        let status = safe::paragraph(status).wrap(Wrap { trim: false });
        let height = (status.line_count(inner.width) as u16).min(4);
        let [rest, last] =
            Layout::vertical([Constraint::Min(0), Constraint::Length(height)]).areas(inner);
        f.render_widget(status, last);
        inner = rest;
    }
    let rows = app.panel_rows();
    if details {
        if let Some(row) = rows.get(selected) {
            f.render_widget(
                safe::paragraph(details_text(app, row)).wrap(Wrap { trim: false }),
                inner,
            );
        }
        return;
    }
    if rows.is_empty() {
        f.render_widget(
            safe::paragraph("No MCP servers in .mcp.json. Press e to edit it."),
            inner,
        );
        return;
    }
    // Keep the selection in view.
    let height = inner.height as usize;
    let first = selected.saturating_sub(height.saturating_sub(1));
    let lines: Vec<Line> = rows
        .iter()
        .enumerate()
        .skip(first)
        .take(height)
        .map(|(i, row)| {
            let line = panel_line(app, row, inner.width as usize);
            if i == selected {
                line.style(Style::new().add_modifier(Modifier::REVERSED))
            } else {
                line
            }
        })
        .collect();
    f.render_widget(safe::paragraph(lines), inner);
}

/// The lines at the bottom of the panel: sign-ins under way, the last notice, and the
/// tool search warning.
fn panel_status(app: &App) -> Option<Text<'static>> {
    let mut lines = auth::status_lines(&app.signing_in, app.notice.as_ref());
    if let Some(w) = &app.context_warning {
        lines.push(Line::styled(w.clone(), Style::new().fg(Color::Yellow)));
    }
    (!lines.is_empty()).then(|| Text::from(lines))
}

/// Key hints for the selected row, for the panel's bottom border.
fn panel_hints(app: &App, selected: usize) -> String {
    let mut hints = Vec::new();
    if let Some(PanelRow::Held { .. }) = app.panel_rows().get(selected) {
        hints.push("a accept");
    } else if let Some(s) = app.row_server(selected) {
        hints.extend(auth::hints(s));
    }
    if app.row_details(selected).is_some_and(|d| d.logging) {
        hints.push("l log level");
    }
    if app
        .row_server(selected)
        .is_some_and(|s| app.sampling_grants.contains(&s.name))
    {
        hints.push("s ask before sampling");
    }
    if hints.is_empty() {
        String::new()
    } else {
        format!(" {} ", hints.join(" · "))
    }
}

fn panel_line(app: &App, row: &PanelRow, width: usize) -> Line<'static> {
    match row {
        PanelRow::Server(i) => {
            let s: &ServerStatus = &app.status.servers[*i];
            let (m, color) = mark(&s.state);
            let title = app
                .details
                .get(*i)
                .and_then(|d| d.as_ref()?.title.as_deref());
            let mut spans = vec![
                Span::styled(format!("{m} "), Style::new().fg(color)),
                Span::styled(format!("{:<16}", s.name), Style::new().bold()),
                Span::raw(format!(" {:<6} ", s.transport)),
                Span::styled(
                    format!("{:<8}", s.scope.word()),
                    Style::new().fg(Color::DarkGray),
                ),
                Span::styled(state_words(&s.state), Style::new().fg(color)),
            ];
            let tokens = app.context.server(&s.name).tokens;
            if tokens > 0 {
                spans.push(Span::styled(
                    format!(" · ~{tokens} tokens"),
                    Style::new().fg(Color::DarkGray),
                ));
            }
            spans.extend(surface::title_span(title));
            Line::from(spans)
        }
        PanelRow::Tool { server, tool } => {
            let spec = &app.tools[*server][*tool];
            let title = spec.display.title.clone();
            // Escaped before it is cut to the room left, so the cut counts what is shown.
            let desc = safe::span_text(spec.description.lines().next().unwrap_or(""));
            let desc = desc.as_ref();
            let title_len = title.as_ref().map_or(0, |t| t.chars().count() + 3);
            let used = 4 + spec.name.len() + title_len + 2;
            let room = width.saturating_sub(used);
            let desc: String = if desc.chars().count() > room {
                format!(
                    "{}…",
                    desc.chars()
                        .take(room.saturating_sub(1))
                        .collect::<String>()
                )
            } else {
                desc.to_string()
            };
            let mut spans = vec![
                Span::raw("    "),
                Span::styled(spec.name.clone(), Style::new().fg(Color::Cyan)),
            ];
            spans.extend(surface::title_span(title.as_deref()));
            spans.push(Span::raw("  "));
            spans.push(Span::styled(desc, Style::new().fg(Color::DarkGray)));
            Line::from(spans)
        }
        PanelRow::Held { server, held } => {
            let h = &app.held[*server][*held];
            Line::from(vec![
                Span::styled("  ! ", Style::new().fg(Color::Yellow)),
                Span::styled(h.tool.clone(), Style::new().fg(Color::Yellow)),
                Span::raw("  "),
                Span::styled(
                    format!("held: {} · Enter diff · a accept", h.change.summary()),
                    Style::new().fg(Color::DarkGray),
                ),
            ])
        }
    }
}

fn details_text(app: &App, row: &PanelRow) -> Text<'static> {
    let mut lines: Vec<Line> = Vec::new();
    match row {
        PanelRow::Server(i) => {
            let s = &app.status.servers[*i];
            lines.push(Line::styled(s.name.clone(), Style::new().bold()));
            lines.push(Line::raw(format!(
                "{} · {} scope: {}",
                s.transport, s.scope, s.target
            )));
            match &s.state {
                ServerState::Connected {
                    tools,
                    protocol_version,
                    server_name,
                    server_version,
                    ..
                } => {
                    lines.push(Line::raw(format!(
                        "connected · {tools} tools · {server_name} {server_version} · protocol {protocol_version} ({})",
                        harness9::mcp::era::Era::of_version(protocol_version).word()
                    )));
                }
                ServerState::Failed {
                    reason,
                    stderr_tail,
                } => {
                    lines.push(Line::styled("failed:", Style::new().fg(Color::Red)));
                    lines.extend(reason.lines().map(|l| Line::raw(l.to_string())));
                    if !stderr_tail.is_empty() && !reason.contains(stderr_tail.as_str()) {
                        lines.push(Line::styled("stderr:", Style::new().fg(Color::DarkGray)));
                        lines.extend(stderr_tail.lines().map(|l| Line::raw(l.to_string())));
                    }
                }
                ServerState::NeedsAuth { .. } => {}
                other @ (ServerState::Starting { .. }
                | ServerState::Disabled
                | ServerState::AwaitingApproval
                | ServerState::Stopped) => lines.push(Line::raw(other.word().to_string())),
            }
            lines.extend(auth::detail_lines(s));
            if app.sampling_grants.contains(&s.name) {
                lines.push(Line::raw(
                    "sampling: may use your model without asking · s make it ask",
                ));
            }
            let details = app.details.get(*i).and_then(Option::as_ref);
            lines.extend(surface::server_lines(details, &app.log_tail));
        }
        PanelRow::Tool { server, tool } => {
            let spec = &app.tools[*server][*tool];
            lines.push(Line::styled(spec.name.clone(), Style::new().bold()));
            if let harness9::tools::ToolSource::Mcp { server, tool } = &spec.source {
                lines.push(Line::styled(
                    format!("server {server}, tool {tool}"),
                    Style::new().fg(Color::DarkGray),
                ));
            }
            lines.extend(surface::tool_lines(spec));
            lines.extend(spec.description.lines().map(|l| Line::raw(l.to_string())));
            lines.push(Line::raw(""));
            lines.push(Line::styled(
                "input schema:",
                Style::new().fg(Color::DarkGray),
            ));
            let schema =
                serde_json::to_string_pretty(&spec.input_schema.value()).unwrap_or_default();
            lines.extend(schema.lines().map(|l| Line::raw(l.to_string())));
        }
        PanelRow::Held { server, held } => {
            let h = &app.held[*server][*held];
            lines.push(Line::styled(
                format!("{}/{}: {} · a accept", h.server, h.tool, h.change.summary()),
                Style::new().bold(),
            ));
            lines.push(Line::styled(
                "held back from the model until you accept it",
                Style::new().fg(Color::DarkGray),
            ));
            for l in h.change.diff() {
                let color = match l.trim_start().chars().next() {
                    Some('+') => Color::Green,
                    Some('-') => Color::Red,
                    _ => Color::Reset,
                };
                lines.push(Line::styled(l, Style::new().fg(color)));
            }
        }
    }
    Text::from(lines)
}

fn render_server_approval(f: &mut Frame, servers: &[ApprovalRequest]) {
    let mut lines = vec![Line::raw("This project's .mcp.json wants to start:")];
    for r in servers {
        lines.push(Line::from(vec![
            Span::styled(format!("  {}", r.shown.name), Style::new().bold()),
            Span::raw(format!(" ({})", r.transport)),
        ]));
        for l in r.lines() {
            lines.push(Line::raw(format!("    {l}")));
        }
    }
    let height = (lines.len() as u16 + 4).min(f.area().height);
    let area = centered(f.area(), f.area().width.saturating_sub(4), height);
    f.render_widget(Clear, area);
    lines.push(Line::raw(""));
    lines.push(Line::styled(
        "[y] yes, this run  [a] always for this project  [n] no",
        Style::new().fg(Color::Yellow),
    ));
    let block = Block::default()
        .borders(Borders::ALL)
        .title(" Approve MCP servers ");
    f.render_widget(
        safe::paragraph(lines)
            .block(block)
            .wrap(Wrap { trim: false }),
        area,
    );
}

/// The key hints of the tool-approval card.
const TOOL_HINTS: &str = "[y] allow once  [a] always allow  [n] deny";
/// [`TOOL_HINTS`] on a narrow terminal.
const TOOL_HINTS_SHORT: &str = "[y] once [a] always [n] deny";

/// The tool-approval card: who asks, the arguments (scrolled by ↑↓ and PgUp/PgDn when they
/// do not fit) and, always on screen, the key hints. Rows go to the hints first, then the
/// heading, then the arguments.
fn render_tool_approval(f: &mut Frame, app: &App, name: &str, arguments: &Value, more: usize) {
    let screen = f.area();
    let width = screen.width.saturating_sub(4);
    let inner_width = width.saturating_sub(2).max(1);
    let mut heading = vec![Line::from(vec![
        Span::raw("The model wants to call "),
        Span::styled(name.to_string(), Style::new().fg(Color::Cyan).bold()),
    ])];
    if more > 0 {
        heading.push(Line::raw(format!("{more} more waiting")));
    }
    // One line when it fits, else one key per line.
    let compact = arguments.to_string();
    let args_text = if compact.width() <= usize::from(inner_width) {
        compact
    } else {
        serde_json::to_string_pretty(arguments).unwrap_or(compact)
    };
    let args = safe::paragraph(Text::from(
        args_text
            .lines()
            .map(|l| Line::raw(l.to_string()))
            .collect::<Vec<_>>(),
    ))
    .wrap(Wrap { trim: false });
    let heading = safe::paragraph(heading).wrap(Wrap { trim: false });
    let args_total = args.line_count(inner_width) as u16;
    let hints_text = if TOOL_HINTS.width() <= usize::from(inner_width) {
        TOOL_HINTS
    } else {
        TOOL_HINTS_SHORT
    };
    // Leave the screen's edges visible when there is room for them.
    let room = if screen.height > 10 {
        screen.height - 2
    } else {
        screen.height
    };
    let avail = room.saturating_sub(2);
    let hints = safe::paragraph(Line::styled(hints_text, Style::new().fg(Color::Yellow)))
        .wrap(Wrap { trim: false });
    let hints_h = (hints.line_count(inner_width) as u16).min(avail);
    let heading_h = (heading.line_count(inner_width) as u16).min(avail - hints_h);
    let rest = avail - hints_h - heading_h;
    let args_h = args_total.min(rest);
    let gap = u16::from(rest > args_h);
    let area = centered(screen, width, 2 + heading_h + args_h + gap + hints_h);
    f.render_widget(Clear, area);
    let offset = app.approval_scroll.fit(args_total, args_h);
    let mut block = Block::default()
        .borders(Borders::ALL)
        .title(" Allow tool call? ");
    let footer = if args_h == 0 && args_total > 0 {
        " enlarge the terminal to see the arguments ".to_string()
    } else if args_total > args_h {
        format!(
            " ↑↓ PgUp PgDn · lines {}–{} of {args_total} ",
            offset + 1,
            offset + args_h
        )
    } else {
        String::new()
    };
    if !footer.is_empty() && footer.width() <= usize::from(inner_width) {
        block = block
            .title_bottom(Line::styled(footer, Style::new().fg(Color::DarkGray)).right_aligned());
    }
    let inner = block.inner(area);
    f.render_widget(block, area);
    let [heading_area, args_area, _, hints_area] = Layout::vertical([
        Constraint::Length(heading_h),
        Constraint::Length(args_h),
        Constraint::Length(gap),
        Constraint::Length(hints_h),
    ])
    .areas(inner);
    f.render_widget(heading, heading_area);
    f.render_widget(args.scroll((offset, 0)), args_area);
    f.render_widget(hints, hints_area);
}
