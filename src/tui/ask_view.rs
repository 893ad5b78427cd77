//! Drawing the ask modal (see [`super::ask`]).

use super::safe;
use harness9::host::asks::{AskKind, ViewAsk};
use harness9::mcp::requests::CreateMessageRequest;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Wrap};
use ratatui::Frame;

use super::ask::{AskView, Body, Control, Field};

fn field_line(f: &Field, focused: bool) -> Line<'static> {
    let mut spans = vec![
        Span::raw(if focused { "> " } else { "  " }),
        Span::styled(f.label.clone(), Style::new().bold()),
        Span::styled(
            if f.required { "*" } else { "" },
            Style::new().fg(Color::Red),
        ),
        Span::raw(": "),
    ];
    match &f.control {
        Control::Text { text, .. } | Control::Number { text, .. } => {
            spans.push(Span::raw(text.clone()));
            if focused {
                spans.push(Span::styled("_", Style::new().fg(Color::Yellow)));
            }
        }
        Control::Bool(b) => spans.push(Span::raw(if *b { "[x]" } else { "[ ]" })),
        Control::Choice { choices, chosen } => spans.push(Span::raw(format!(
            "‹ {} ›",
            chosen.map_or("choose", |i| choices[i].1.as_str())
        ))),
        Control::Multi { choices, cursor } => {
            for (i, (_, label, on)) in choices.iter().enumerate() {
                let text = format!("[{}] {label} ", if *on { "x" } else { " " });
                let style = if focused && i == *cursor {
                    Style::new().reversed()
                } else {
                    Style::new()
                };
                spans.push(Span::styled(text, style));
            }
        }
    }
    if let Some(e) = &f.error {
        spans.push(Span::styled(format!("  {e}"), Style::new().fg(Color::Red)));
    }
    Line::from(spans)
}

/// The modal's lines, title and key help.
fn content(view: &AskView) -> (String, Vec<Line<'static>>, &'static str) {
    let server = &view.ask.server;
    let mut lines = Vec::new();
    if view.more > 0 {
        lines.push(Line::styled(
            format!("{} more waiting", view.more),
            Style::new().fg(Color::DarkGray),
        ));
    }
    if let Some(task) = &view.ask.task {
        lines.extend(safe::lines(&format!("(for its task {task})")));
    }
    match &view.ask.kind {
        AskKind::Elicitation { request } => lines.extend(safe::lines(request.message())),
        AskKind::Sampling { request } | AskKind::SamplingReview { request, .. } => {
            sampling_lines(&mut lines, request)
        }
        AskKind::View { request, .. } => lines.extend(safe::lines(&match request {
            ViewAsk::ToolCall { tool, .. } => format!("Its view asks to call tool {tool}."),
            ViewAsk::Permissions { permissions } => {
                format!("Its view asks to use {}.", permissions.join(", "))
            }
            ViewAsk::OpenLink { url } => format!("Its view asks to open {url}."),
        })),
    }
    lines.push(Line::raw(""));
    let (title, help) = match &view.body {
        Body::Form(_, fields) => {
            for (i, f) in fields.iter().enumerate() {
                lines.push(field_line(f, i == view.focus));
            }
            (
                format!(" {server} asks for input "),
                "Tab next · Space toggle · Enter accept · Esc decline · Ctrl-C cancel",
            )
        }
        Body::Json(text) => {
            lines.push(Line::raw(
                "This form cannot be shown as fields; answer with a JSON object:",
            ));
            lines.push(Line::from(vec![
                Span::raw(text.clone()),
                Span::styled("_", Style::new().fg(Color::Yellow)),
            ]));
            (
                format!(" {server} asks for input "),
                "Enter accept · Esc decline · Ctrl-C cancel",
            )
        }
        Body::Url { url, domain } => {
            match (domain, harness9::links::check_link(url)) {
                (Some(domain), Ok(_)) => lines.push(Line::from(vec![
                    Span::raw("Open a page on "),
                    Span::styled(domain.clone(), Style::new().fg(Color::Cyan).bold()),
                    Span::raw("?"),
                ])),
                (_, Err(refused)) => lines.push(Line::styled(
                    format!("This link will not open: {refused}"),
                    Style::new().fg(Color::Red),
                )),
                (None, Ok(link)) => {
                    lines.push(Line::raw(format!("Open a page on {}?", link.host())))
                }
            }
            lines.push(Line::raw(url.clone()));
            (
                format!(" {server} asks you to visit a page "),
                "[y] open it  [n] decline  Ctrl-C cancel",
            )
        }
        Body::Sampling { review } => {
            lines.push(Line::raw(format!(
                "[{}] review the model's answer before it is sent",
                if *review { "x" } else { " " }
            )));
            (
                format!(" {server} asks to use your model "),
                "[y] run once · [a] always for this server · [r] review · [n] refuse",
            )
        }
        Body::SamplingReview => {
            if let AskKind::SamplingReview { result, .. } = &view.ask.kind {
                lines.push(Line::styled(
                    format!("The model ({}) answered:", result.model),
                    Style::new().bold(),
                ));
                for text in content_texts(&result.content) {
                    lines.extend(safe::lines(&text));
                }
            }
            (
                format!(" {server}: send the model's answer? "),
                "[y] send · [n] refuse",
            )
        }
    };
    if let Some(e) = &view.error {
        lines.push(Line::styled(e.clone(), Style::new().fg(Color::Red)));
    }
    (title, lines, help)
}

/// Bounded: a request can carry any amount of text; the modal shows the start of each.
const SHOWN_CHARS: usize = 400;

fn shorten(text: &str) -> String {
    let mut out: String = text.chars().take(SHOWN_CHARS).collect();
    if text.chars().nth(SHOWN_CHARS).is_some() {
        out.push('…');
    }
    out
}

/// Each block of a message's content in words (text as is, tool calls and results named).
fn content_texts(content: &serde_json::Value) -> Vec<String> {
    let blocks: Vec<&serde_json::Value> = match content {
        serde_json::Value::Array(all) => all.iter().collect(),
        one => vec![one],
    };
    blocks
        .into_iter()
        .map(|b| match b["type"].as_str() {
            Some("text") => shorten(b["text"].as_str().unwrap_or_default()),
            Some("tool_use") => shorten(&format!(
                "[calls tool {} with {}]",
                b["name"].as_str().unwrap_or("?"),
                b["input"]
            )),
            Some("tool_result") => shorten(&format!("[tool result: {}]", b["content"])),
            Some(other) => format!("[{other} content]"),
            None => shorten(&b.to_string()),
        })
        .collect()
}

fn sampling_lines(lines: &mut Vec<Line<'static>>, request: &CreateMessageRequest) {
    lines.extend(safe::lines(&format!(
        "Up to {} tokens. System prompt: {}",
        request.max_tokens,
        request
            .system_prompt
            .as_deref()
            .map(shorten)
            .unwrap_or_else(|| "(none)".into())
    )));
    for m in &request.messages {
        for text in content_texts(&m.content) {
            lines.extend(safe::lines(&format!("{}: {text}", m.role)));
        }
    }
    if let Some(tools) = request.tools.as_ref().filter(|t| !t.is_empty()) {
        let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
        lines.push(Line::raw(format!(
            "Tools the model may call: {}",
            names.join(", ")
        )));
    }
}

pub fn render(f: &mut Frame, view: &AskView) {
    let (title, mut lines, help) = content(view);
    lines.push(Line::raw(""));
    lines.push(Line::styled(help, Style::new().fg(Color::Yellow)));
    let outer = f.area();
    let width = outer.width.saturating_sub(4);
    let height = (lines.len() as u16 + 2).min(outer.height);
    let area = Rect {
        x: outer.x + (outer.width - width) / 2,
        y: outer.y + (outer.height - height) / 2,
        width,
        height,
    };
    f.render_widget(Clear, area);
    let block = Block::default()
        .borders(Borders::ALL)
        .title(safe::line(Line::from(title)));
    f.render_widget(
        safe::paragraph(lines)
            .block(block)
            .wrap(Wrap { trim: false }),
        area,
    );
}
