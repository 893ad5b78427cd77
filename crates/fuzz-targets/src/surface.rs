//! Fuzz target body for what servers return from their surface: `resources/read` and
//! `prompts/get` results, decoded as the client does, and what the core builds from them
//! (the Resources tab's preview, the prompt's text and its messages for the model).

use serde_json::value::RawValue;

use harness9::engine::prompt::prompt_messages;
use harness9::harness::{PreviewPart, ReadPreview, MAX_INLINE_IMAGE_CHARS, MAX_PREVIEW_CHARS};
use harness9_mcp::protocol::features::{GetPromptResult, ReadResourceResult};

/// One result text read both ways. A preview has a part per content item; a text part
/// holds at most [`MAX_PREVIEW_CHARS`] characters, the first ones of the text, and says
/// how many there were; an image part is a non-SVG image no larger than the inline
/// limit; a prompt's messages keep every content item with roles that alternate.
pub fn surface_results(data: &[u8]) {
    let Ok(raw) = serde_json::from_slice::<&RawValue>(data) else {
        return;
    };
    if let Ok(read) = serde_json::from_str::<ReadResourceResult>(raw.get()) {
        let preview = ReadPreview::from(&read);
        assert_eq!(preview.parts.len(), read.contents.len(), "parts lost");
        for (part, c) in preview.parts.iter().zip(&read.contents) {
            check_part(part, c);
        }
        assert_eq!(ReadPreview::from(&read), preview, "not deterministic");
    }
    if let Ok(prompt) = serde_json::from_str::<GetPromptResult>(raw.get()) {
        let text = prompt.to_text();
        assert_eq!(prompt.to_text(), text, "not deterministic");
        let messages = prompt_messages(&prompt);
        let blocks: usize = messages.iter().map(|m| m.content.len()).sum();
        assert_eq!(blocks, prompt.messages.len(), "content items lost");
        assert!(
            messages.windows(2).all(|w| w[0].role != w[1].role),
            "roles do not alternate"
        );
    }
}

fn check_part(part: &PreviewPart, c: &harness9_mcp::protocol::features::ResourceContents) {
    match part {
        PreviewPart::Text {
            text,
            total_chars,
            truncated,
            uri,
            ..
        } => {
            let whole = c.text.as_deref().expect("a text part of a text item");
            assert_eq!(uri, &c.uri);
            assert_eq!(*total_chars, whole.chars().count() as u64, "total_chars");
            assert_eq!(*truncated, *total_chars > MAX_PREVIEW_CHARS as u64);
            assert!(whole.starts_with(text.as_str()), "not the text's start");
            assert_eq!(
                text.chars().count(),
                whole.chars().count().min(MAX_PREVIEW_CHARS),
                "cut at the wrong place"
            );
        }
        PreviewPart::Image {
            mime_type,
            data_url,
            bytes,
            ..
        } => {
            assert!(c.text.is_none(), "an image part of a text item");
            let blob = c.blob.as_deref().expect("an image part has a blob");
            let m = mime_type.to_ascii_lowercase();
            assert!(m.starts_with("image/") && !m.contains("svg"), "{mime_type}");
            assert!(blob.len() <= MAX_INLINE_IMAGE_CHARS, "too large to inline");
            assert!(data_url.starts_with("data:image/") || data_url.starts_with("data:"));
            assert_eq!(Some(*bytes as usize), c.blob_len());
        }
        PreviewPart::Binary { bytes, .. } => {
            assert!(c.text.is_none(), "a binary part of a text item");
            assert_eq!(*bytes as usize, c.blob_len().unwrap_or(0));
        }
    }
}
