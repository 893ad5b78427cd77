//! Cutting text to a byte budget without splitting a character: the one place that does
//! it, for log lines, error quotes and previews of text a server, a file or a model sent
//! (byte slicing such text panics on a multibyte character at the cut).

/// The longest start of `text` of at most `max_bytes` bytes that ends on a character
/// boundary.
pub fn prefix(text: &str, max_bytes: usize) -> &str {
    text.get(..text.floor_char_boundary(max_bytes))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::prefix;

    #[test]
    fn never_splits_a_character() {
        assert_eq!(prefix("héllo", 2), "h");
        assert_eq!(prefix("héllo", 3), "hé");
        assert_eq!(prefix("日本", 5), "日");
        assert_eq!(prefix("🦀", 3), "");
        assert_eq!(prefix("abc", 10), "abc");
        assert_eq!(prefix("", 0), "");
    }
}
