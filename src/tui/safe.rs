//! The last step before text reaches ratatui: every span is rendered by
//! [`harness9::term_text`], so a control, bidirectional or invisible character from a
//! server, a project or the model is shown escaped (`\x1b`, `\u{202e}`) instead of being
//! dropped silently by ratatui or passed through to the terminal. Spans are one line each
//! (ratatui draws a line per [`Line`]), so a newline left in a span is escaped too; a tab
//! becomes spaces, as the terminal would have shown it. Text with lines is split into
//! [`Line`]s with [`lines`] before it gets here.

use std::borrow::Cow;

use harness9::term_text;
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::Paragraph;

/// How many spaces a tab in a span becomes.
const TAB_WIDTH: usize = 4;

/// One span's text, safe to draw.
pub fn span_text(s: &str) -> Cow<'_, str> {
    if s.contains('\t') {
        Cow::Owned(term_text::line(&s.replace('\t', &" ".repeat(TAB_WIDTH))).into_owned())
    } else {
        term_text::line(s)
    }
}

fn span(s: Span<'_>) -> Span<'_> {
    let content = match span_text(&s.content) {
        Cow::Borrowed(_) => s.content,
        Cow::Owned(o) => Cow::Owned(o),
    };
    Span {
        content,
        style: s.style,
    }
}

/// A line with every span made safe.
pub fn line(l: Line<'_>) -> Line<'_> {
    Line {
        spans: l.spans.into_iter().map(span).collect(),
        ..l
    }
}

/// Text with every span made safe; what every paragraph the TUI draws is built from.
pub fn text<'a>(t: impl Into<Text<'a>>) -> Text<'a> {
    let t = t.into();
    Text {
        lines: t.lines.into_iter().map(line).collect(),
        ..t
    }
}

/// A paragraph of safe text: how the TUI builds every paragraph it draws.
pub fn paragraph<'a>(t: impl Into<Text<'a>>) -> Paragraph<'a> {
    Paragraph::new(text(t))
}

/// Multi-line text from a server (a message, a result) as one [`Line`] per line.
pub fn lines(text: &str) -> impl Iterator<Item = Line<'static>> + '_ {
    text.split('\n')
        .map(|l| Line::raw(l.strip_suffix('\r').unwrap_or(l).to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_are_escaped_not_dropped() {
        let t = text(Line::from(vec![
            Span::raw("a\x1b]8;;http://evil\x07b"),
            Span::raw("\u{202e}c\td"),
        ]));
        let shown: String = t.lines[0]
            .spans
            .iter()
            .map(|s| s.content.as_ref())
            .collect();
        assert_eq!(shown, "a\\x1b]8;;http://evil\\x07b\\u{202e}c    d");
    }

    #[test]
    fn text_with_lines_becomes_lines() {
        let l: Vec<Line> = lines("one\r\ntwo\x1b[2K\nthree").collect();
        assert_eq!(l.len(), 3);
        assert_eq!(line(l[1].clone()).to_string(), "two\\x1b[2K");
    }
}
