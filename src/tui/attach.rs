//! The `@` picker of the chat input: typing `@` (at the start or after a space) opens a
//! fuzzy list of the connected servers' resources; Enter attaches the chosen one as a tag
//! under the input, Backspace on an empty input removes the last tag. The engine reads the
//! attached resources when the message is sent; this module only picks.

use super::safe;
use harness9::engine::resources::ResourceRef;
use harness9::harness::pick_resources;
use harness9::host::catalog::ServerResource;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear};
use ratatui::Frame;

/// Rows the picker shows at most.
pub const PICKER_ROWS: usize = 8;

/// The open picker: what was typed after `@`, and the resources that match it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Picker {
    pub query: String,
    pub selected: usize,
    pub matches: Vec<ServerResource>,
}

/// How a tag names an attached resource: `server:name` (the URI when it has no name).
pub fn tag(r: &ResourceRef, all: &[ServerResource]) -> String {
    let name = all
        .iter()
        .find(|x| x.server == r.server && x.resource.uri == r.uri)
        .map(|x| x.resource.title.clone().unwrap_or(x.resource.name.clone()))
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| r.uri.clone());
    format!("@{}:{name}", r.server)
}

/// Keys for the picker and the tags: `true` when the key was theirs (it never asks the
/// runner for anything). `input` is the chat's input line: `@` opens the picker at its
/// start or after a space, Backspace on it empty removes the last tag.
pub fn on_key(
    picker: &mut Option<Picker>,
    attachments: &mut Vec<ResourceRef>,
    resources: &[ServerResource],
    input: &str,
    key: KeyEvent,
) -> bool {
    if key.modifiers.contains(KeyModifiers::CONTROL) {
        return false;
    }
    if let Some(mut p) = picker.take() {
        match key.code {
            KeyCode::Esc => return true,
            KeyCode::Enter | KeyCode::Tab => {
                if let Some(r) = p.matches.get(p.selected) {
                    let pick = ResourceRef {
                        server: r.server.clone(),
                        uri: r.resource.uri.clone(),
                    };
                    if !attachments.contains(&pick) {
                        attachments.push(pick);
                    }
                }
                return true;
            }
            KeyCode::Up => p.selected = p.selected.saturating_sub(1),
            KeyCode::Down => p.selected = (p.selected + 1).min(p.matches.len().saturating_sub(1)),
            KeyCode::Backspace if p.query.is_empty() => return true,
            KeyCode::Backspace => {
                p.query.pop();
                refilter(&mut p, resources);
            }
            KeyCode::Char(c) => {
                p.query.push(c);
                refilter(&mut p, resources);
            }
            _ => {}
        }
        *picker = Some(p);
        return true;
    }
    match key.code {
        KeyCode::Char('@')
            if !resources.is_empty() && (input.is_empty() || input.ends_with(' ')) =>
        {
            let mut p = Picker::default();
            refilter(&mut p, resources);
            *picker = Some(p);
            true
        }
        KeyCode::Backspace if input.is_empty() && !attachments.is_empty() => {
            attachments.pop();
            true
        }
        _ => false,
    }
}

fn refilter(p: &mut Picker, resources: &[ServerResource]) {
    p.matches = pick_resources(resources.to_vec(), &p.query, PICKER_ROWS * 4);
    p.selected = p.selected.min(p.matches.len().saturating_sub(1));
}

/// The tags of the attached resources, for the input's lower border.
pub fn tags(attachments: &[ResourceRef], resources: &[ServerResource]) -> String {
    attachments
        .iter()
        .map(|r| tag(r, resources))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The picker, drawn just above the input line `input`.
pub fn render_picker(f: &mut Frame, p: &Picker, input: Rect) {
    let rows = p.matches.len().clamp(1, PICKER_ROWS) as u16;
    let height = rows + 2;
    let area = Rect {
        x: input.x,
        y: input.y.saturating_sub(height),
        width: input.width,
        height: height.min(input.y),
    };
    let width = area.width.saturating_sub(2) as usize;
    let first = p.selected.saturating_sub(PICKER_ROWS - 1);
    let mut lines: Vec<Line> = Vec::new();
    if p.matches.is_empty() {
        lines.push(Line::styled(
            "no resource matches",
            Style::new().fg(Color::DarkGray),
        ));
    }
    for (i, r) in p.matches.iter().enumerate().skip(first).take(PICKER_ROWS) {
        let name = r.resource.title.as_deref().unwrap_or(&r.resource.name);
        let text = format!("{}  {name}  {}", r.server, r.resource.uri);
        let text: String = text.chars().take(width).collect();
        let style = if i == p.selected {
            Style::new().add_modifier(Modifier::REVERSED)
        } else {
            Style::new()
        };
        lines.push(Line::from(Span::styled(text, style)));
    }
    let block = Block::default()
        .borders(Borders::ALL)
        .title(format!(" @{} · Enter attaches, Esc closes ", p.query));
    f.render_widget(Clear, area);
    f.render_widget(safe::paragraph(lines).block(block), area);
}
