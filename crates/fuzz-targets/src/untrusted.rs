//! Text a server or a project sends, on its way to the user: the terminal renderer, URL
//! masking, the link rule and the icon check.

use harness9::icons::check_data_url;
use harness9::term_text::{self, Mode};
use harness9_mcp::links::check_link;
use harness9_mcp::mask::{mask_url, mask_urls_in};

/// Input: any bytes, read as UTF-8 (lossily).
///
/// - A one-line rendering holds no unsafe character, newline or tab; a multi-line one no
///   unsafe character but newline and tab; rendering again changes nothing (every escape
///   is printable ASCII).
/// - JSON written for a terminal reads back as the same value.
/// - A link that may open starts with `https://` or `http://` (never an option or a file).
/// - An accepted icon is a `data:` URL.
/// - Masking never panics, on a URL or on text that names URLs.
pub fn untrusted_text(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let line = term_text::render(&text, Mode::Line);
    assert!(
        !line.chars().any(term_text::is_unsafe),
        "unsafe in {line:?}"
    );
    assert_eq!(term_text::render(&line, Mode::Line), line);
    let block = term_text::render(&text, Mode::Block);
    assert!(
        !block
            .chars()
            .any(|c| c != '\n' && c != '\t' && term_text::is_unsafe(c)),
        "unsafe in {block:?}"
    );
    assert_eq!(term_text::render(&block, Mode::Block), block);

    let json = serde_json::to_string(&text).expect("a string serializes");
    let shown = term_text::json(&json);
    let back: String = serde_json::from_str(&shown).expect("terminal JSON parses");
    assert_eq!(back, text);

    if let Ok(link) = check_link(&text) {
        let s = link.as_str();
        assert!(
            s.starts_with("https://") || s.starts_with("http://"),
            "{s:?}"
        );
    }
    if let Ok(icon) = check_data_url(&text) {
        assert!(icon.starts_with("data:"), "{icon:?}");
    }
    let _ = mask_url(&text);
    let _ = mask_urls_in(&text);
}

#[cfg(test)]
mod tests {
    /// A deterministic spread of mixed inputs (controls, bidi, tags, URL pieces, broken
    /// UTF-8) through the target, beside the corpus replay.
    #[test]
    fn mixed_inputs_hold_the_invariants() {
        const PIECES: &[&[u8]] = &[
            b"https://",
            b"http://127.0.0.1",
            b"user:pw@",
            b"?a=1&sig=",
            b"#f",
            b"\x1b]8;;",
            b"\x07",
            b"\r",
            b"\n",
            b"\t",
            b"\xe2\x80\xae",
            b"\xf3\xa0\x80\x81",
            b"\xc2\x85",
            b"\xff",
            b"-o",
            b"file:",
            b"data:image/png;base64,",
            b"\"",
            b"\\u0000",
            b"x",
        ];
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        for _ in 0..5_000 {
            let mut input = Vec::new();
            for _ in 0..8 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                input.extend_from_slice(PIECES[(state % PIECES.len() as u64) as usize]);
            }
            super::untrusted_text(&input);
        }
    }
}
