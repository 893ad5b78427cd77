//! Untrusted text rendered for a terminal: the one place that decides which characters a
//! server or a project may put on the user's screen.
//!
//! Every character that can move the cursor, repaint or hide text, or reorder what is
//! shown is written as a visible escape instead: C0 controls, DEL, C1 controls (ESC and the
//! 8-bit CSI/OSC among them), the bidirectional marks, embeddings, overrides and isolates,
//! zero-width and other invisible format characters, line and paragraph separators, and
//! the tag characters. Nothing is dropped silently: the user sees `\x1b]8;;…` or
//! `\u{202e}` where the text carried it. Characters below U+0080 are written `\xNN`, the
//! others `\u{…}` (lower-case hex).
//!
//! [`Mode::Line`] is for one-line fields (names, commands, args, cwd, URLs, env and header
//! names): newline and tab are escaped too, so one field can never pose as another line.
//! [`Mode::Block`] is for text that has lines (descriptions, tool results, resource and
//! prompt text, elicitation and sampling messages, stderr tails): newline and tab are kept.
//!
//! [`json`] makes serialized JSON safe for a terminal while keeping it the same JSON
//! value: the same characters become `\uXXXX` escapes, which only occur inside strings.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Which whitespace a field may keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// A one-line field: newline and tab are escaped like every other control.
    Line,
    /// Text with lines: newline and tab are kept.
    Block,
}

/// Whether a character is shown escaped rather than passed to the terminal, in any mode.
pub fn is_unsafe(c: char) -> bool {
    matches!(c,
        // C0 controls (ESC, BEL, CR, BS… and, in one-line fields, LF and TAB), DEL, C1.
        '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}'
        // Soft hyphen, Arabic letter mark, Mongolian vowel separator: invisible.
        | '\u{ad}' | '\u{61c}' | '\u{180e}'
        // Zero-width space, non-joiner, joiner; left-to-right and right-to-left marks.
        | '\u{200b}'..='\u{200f}'
        // Line and paragraph separators; bidi embeddings and overrides (LRE…RLO).
        | '\u{2028}'..='\u{202e}'
        // Word joiner, invisible operators, bidi isolates (LRI, RLI, FSI, PDI) and the
        // deprecated format controls after them.
        | '\u{2060}'..='\u{206f}'
        // Byte order mark / zero-width no-break space; interlinear annotation controls.
        | '\u{feff}' | '\u{fff9}'..='\u{fffb}'
        // Tag characters: invisible text that some models and terminals still read.
        | '\u{e0000}'..='\u{e007f}')
}

fn escaped_in(c: char, mode: Mode) -> bool {
    match mode {
        Mode::Line => is_unsafe(c),
        Mode::Block => c != '\n' && c != '\t' && is_unsafe(c),
    }
}

/// Renders untrusted text for a terminal; clean text is returned as it is, uncopied.
pub fn render(text: &str, mode: Mode) -> Cow<'_, str> {
    let Some(first) = text.find(|c| escaped_in(c, mode)) else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len() + 16);
    // `first` is where `find` stopped: a character boundary.
    let (clean, rest) = text.split_at(first);
    out.push_str(clean);
    for c in rest.chars() {
        if escaped_in(c, mode) {
            push_escape(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// [`render`] for a one-line field.
pub fn line(text: &str) -> Cow<'_, str> {
    render(text, Mode::Line)
}

/// [`render`] for text with lines.
pub fn block(text: &str) -> Cow<'_, str> {
    render(text, Mode::Block)
}

fn push_escape(out: &mut String, c: char) {
    let n = c as u32;
    // Writing to a String cannot fail.
    let _ = if n < 0x80 {
        write!(out, "\\x{n:02x}")
    } else {
        write!(out, "\\u{{{n:x}}}")
    };
}

/// Serialized JSON made safe for a terminal without changing its value: every character
/// [`is_unsafe`] reports becomes a `\uXXXX` escape (a surrogate pair above U+FFFF). Such
/// characters occur in JSON text only inside strings, where the escape means the same.
/// (Newline and tab outside strings are layout and stay.)
pub fn json(serialized: &str) -> Cow<'_, str> {
    let needs = |c: char| c != '\n' && c != '\t' && c != '\r' && is_unsafe(c);
    let Some(first) = serialized.find(needs) else {
        return Cow::Borrowed(serialized);
    };
    let mut out = String::with_capacity(serialized.len() + 16);
    // `first` is where `find` stopped: a character boundary.
    let (clean, rest) = serialized.split_at(first);
    out.push_str(clean);
    for c in rest.chars() {
        if needs(c) {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                let _ = write!(out, "\\u{u:04x}");
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A value that formats with [`line`].
pub struct Line<'a>(pub &'a str);

impl std::fmt::Display for Line<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(&line(self.0))
    }
}

/// A value that formats with [`block`].
pub struct Block<'a>(pub &'a str);

impl std::fmt::Display for Block<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(&block(self.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_text_is_borrowed() {
        for s in ["", "plain text", "naïve café 😀 日本語", "a\nb\tc"] {
            assert!(matches!(block(s), Cow::Borrowed(_)), "{s:?}");
        }
        assert!(matches!(line("naïve 😀"), Cow::Borrowed(_)));
        assert!(matches!(json("{\n  \"a\": \"é\"\n}"), Cow::Borrowed(_)));
    }

    #[test]
    fn controls_are_escaped_visibly() {
        let hostile = "ok\x1b]8;;http://evil\x07click\x1b]8;;\x07\r\x1b[2Kdone\x7f\u{9b}31m";
        assert_eq!(
            line(hostile),
            "ok\\x1b]8;;http://evil\\x07click\\x1b]8;;\\x07\\x0d\\x1b[2Kdone\\x7f\\u{9b}31m"
        );
        assert_eq!(line("\0\x08"), "\\x00\\x08");
    }

    #[test]
    fn newline_and_tab_are_kept_only_in_blocks() {
        assert_eq!(line("a\nb\tc"), "a\\x0ab\\x09c");
        assert_eq!(block("a\nb\tc\r\n"), "a\nb\tc\\x0d\n");
    }

    #[test]
    fn bidi_invisible_and_tag_characters_are_escaped() {
        let cases = [
            ('\u{200e}', "\\u{200e}"),
            ('\u{200f}', "\\u{200f}"),
            ('\u{61c}', "\\u{61c}"),
            ('\u{202a}', "\\u{202a}"),
            ('\u{202e}', "\\u{202e}"),
            ('\u{2066}', "\\u{2066}"),
            ('\u{2069}', "\\u{2069}"),
            ('\u{200b}', "\\u{200b}"),
            ('\u{200d}', "\\u{200d}"),
            ('\u{2060}', "\\u{2060}"),
            ('\u{feff}', "\\u{feff}"),
            ('\u{2028}', "\\u{2028}"),
            ('\u{e0000}', "\\u{e0000}"),
            ('\u{e0041}', "\\u{e0041}"),
            ('\u{e007f}', "\\u{e007f}"),
        ];
        for (c, want) in cases {
            let s = format!("x{c}y");
            assert_eq!(block(&s), format!("x{want}y"), "{:x}", c as u32);
            assert_eq!(line(&s), format!("x{want}y"));
        }
        // Neighbours that are ordinary text stay.
        assert_eq!(
            line("\u{2010}\u{2030}\u{e0080}é"),
            "\u{2010}\u{2030}\u{e0080}é"
        );
    }

    #[test]
    fn display_wrappers_pad_the_rendered_text() {
        assert_eq!(format!("[{:<6}]", Line("a\x1b")), "[a\\x1b ]");
        assert_eq!(format!("{}", Block("a\nb\x07")), "a\nb\\x07");
    }

    #[test]
    fn json_stays_the_same_value() {
        let v = serde_json::json!({
            "name": "t\u{202e}\u{200b}\x7f\u{85}\u{e0041}",
            "text": "a\x1b[2K\r\nb",
        });
        let raw = serde_json::to_string_pretty(&v).unwrap();
        let safe = json(&raw);
        assert!(!safe.chars().any(|c| c != '\n' && is_unsafe(c)), "{safe}");
        assert!(
            safe.contains("\\u202e\\u200b\\u007f\\u0085\\udb40\\udc41"),
            "{safe}"
        );
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back, v);
    }
}
