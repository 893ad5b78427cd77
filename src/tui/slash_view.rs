//! The slash-command hint: a small box above the input line with the prompt the input
//! names (title, description, arguments with the required ones marked `*`), what Tab
//! found, and a note. Drawn only while the input starts with `/` and no modal is open.

use super::safe;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear};
use ratatui::Frame;

use harness9::host::catalog::ServerPrompt;

use super::slash::{command_of, prompt_of, tokenize, SlashState};

/// Most candidates listed at once; the rest are counted.
const SHOWN_CANDIDATES: usize = 6;

/// The lines of the hint for the input line `input`; empty when there is nothing to show.
pub fn lines(input: &str, prompts: &[ServerPrompt], hint: &SlashState) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    if !input.starts_with('/') {
        return out;
    }
    let dim = Style::new().fg(Color::DarkGray);
    if let Some(p) = prompt_of(prompts, input) {
        let mut head = vec![Span::styled(
            command_of(p),
            Style::new().add_modifier(Modifier::BOLD),
        )];
        if let Some(t) = &p.prompt.title {
            head.push(Span::raw(format!(" — {t}")));
        }
        out.push(Line::from(head));
        if let Some(d) = &p.prompt.description {
            out.push(Line::styled(d.clone(), dim));
        }
        if !p.prompt.arguments.is_empty() {
            let (tokens, trailing) = tokenize(input);
            let typing = match (trailing, tokens.last()) {
                (false, Some(t)) if tokens.len() > 1 => t.text.split('=').next().unwrap_or(""),
                _ => "",
            };
            let mut spans = vec![Span::raw("arguments: ")];
            let mut about = None;
            for a in &p.prompt.arguments {
                let mark = if a.required { "*" } else { "" };
                let style = if a.name == typing {
                    about = a.description.clone();
                    Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD)
                } else {
                    Style::new()
                };
                spans.push(Span::styled(format!("{}{mark}", a.name), style));
                spans.push(Span::raw(" "));
            }
            if p.prompt.arguments.iter().any(|a| a.required) {
                spans.push(Span::styled("(* required)", dim));
            }
            out.push(Line::from(spans));
            if let Some(d) = about {
                out.push(Line::styled(format!("{typing}: {d}"), dim));
            }
        }
    }
    let c = &hint.candidates;
    for cand in c.iter().take(SHOWN_CANDIDATES) {
        out.push(Line::from(vec![
            Span::styled("  ", Style::new()),
            Span::styled(cand.clone(), Style::new().fg(Color::Cyan)),
        ]));
    }
    if c.len() > SHOWN_CANDIDATES {
        out.push(Line::styled(
            format!(
                "  … and {} more; type to narrow",
                c.len() - SHOWN_CANDIDATES
            ),
            dim,
        ));
    }
    if let Some(n) = &hint.note {
        out.push(Line::styled(n.clone(), Style::new().fg(Color::Yellow)));
    }
    out
}

/// Draws the hint at the bottom of `area` (the transcript's area).
pub fn render(f: &mut Frame, area: Rect, input: &str, prompts: &[ServerPrompt], hint: &SlashState) {
    let lines = lines(input, prompts, hint);
    if lines.is_empty() || area.height < 3 {
        return;
    }
    let height = (lines.len() as u16 + 2).min(area.height);
    let rect = Rect {
        x: area.x,
        y: area.y + area.height - height,
        width: area.width,
        height,
    };
    f.render_widget(Clear, rect);
    let block = Block::default()
        .borders(Borders::ALL)
        .title(" Tab completes ")
        .border_style(Style::new().fg(Color::DarkGray));
    f.render_widget(safe::paragraph(lines).block(block), rect);
}
