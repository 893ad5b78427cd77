//! Server and tool icons for a front end that shows images (the desktop app's web view).
//! A server names its icons; a web view that loaded them itself would fetch from any host
//! the server likes (a tracking pixel, a huge file, a page that is no image). So icons are
//! fetched here, checked (an allowed image type, its bytes being that type, at most
//! [`MAX_ICON_BYTES`]) and handed over as `data:` URLs; the window loads no image from the
//! network and its CSP needs no `https:` image source. `data:` icons from the server are
//! decoded and checked the same way. SVG is allowed: shown through an `img` element from a
//! `data:` URL, it runs no script.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::time::Duration;

use base64::Engine;

use crate::mcp::features::Icon;

/// The largest icon passed on.
pub const MAX_ICON_BYTES: usize = 128 * 1024;

/// How long one icon may take to fetch.
const FETCH_TIMEOUT: Duration = Duration::from_secs(5);

/// Icons remembered (by source) before the cache starts over.
const CACHE_ENTRIES: usize = 512;

/// Distinct icons resolved for one listing; a listing naming more shows the rest without.
const ICONS_PER_LISTING: usize = 64;

/// The image types passed on.
pub const ICON_TYPES: [&str; 5] = [
    "image/png",
    "image/jpeg",
    "image/webp",
    "image/gif",
    "image/svg+xml",
];

/// Why an icon is not shown.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IconRefused {
    #[error("only https: and data: icons are shown")]
    Scheme,
    #[error("the icon is larger than {MAX_ICON_BYTES} bytes")]
    TooLarge,
    #[error("\"{0}\" is not an image type shown (png, jpeg, webp, gif, svg)")]
    Type(String),
    #[error("the icon's bytes are not a {0}")]
    NotThatType(String),
    #[error("the data: URL cannot be read: {0}")]
    BadData(String),
    #[error("the icon cannot be fetched: {0}")]
    Fetch(String),
}

impl IconRefused {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        match self {
            IconRefused::Scheme => "icon-scheme",
            IconRefused::TooLarge => "icon-too-large",
            IconRefused::Type(_) => "icon-type",
            IconRefused::NotThatType(_) => "icon-bytes-mismatch",
            IconRefused::BadData(_) => "icon-bad-data",
            IconRefused::Fetch(_) => "icon-fetch-failed",
        }
    }
}

/// Checks an icon's bytes against its declared type and returns it as a `data:` URL.
pub fn check_bytes(declared: &str, bytes: &[u8]) -> Result<String, IconRefused> {
    let mime = declared
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    if !ICON_TYPES.contains(&mime.as_str()) {
        return Err(IconRefused::Type(mime));
    }
    if bytes.len() > MAX_ICON_BYTES {
        return Err(IconRefused::TooLarge);
    }
    if !looks_like(&mime, bytes) {
        return Err(IconRefused::NotThatType(mime));
    }
    let data = base64::engine::general_purpose::STANDARD.encode(bytes);
    Ok(format!("data:{mime};base64,{data}"))
}

/// Whether `bytes` start the way a file of type `mime` does.
fn looks_like(mime: &str, bytes: &[u8]) -> bool {
    match mime {
        "image/png" => bytes.starts_with(b"\x89PNG\r\n\x1a\n"),
        "image/jpeg" => bytes.starts_with(&[0xff, 0xd8, 0xff]),
        "image/gif" => bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a"),
        "image/webp" => bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP",
        "image/svg+xml" => {
            let text = String::from_utf8_lossy(&bytes[..bytes.len().min(4096)]);
            let text = text.trim_start_matches('\u{feff}').trim_start();
            text.starts_with('<') && text.contains("<svg")
        }
        _ => false,
    }
}

/// Decodes and checks a `data:` icon; returns it in the canonical form
/// (`data:TYPE;base64,…`).
pub fn check_data_url(src: &str) -> Result<String, IconRefused> {
    let rest = src
        .get(..5)
        .filter(|p| p.eq_ignore_ascii_case("data:"))
        .and_then(|_| src.get(5..))
        .ok_or(IconRefused::Scheme)?;
    let (header, payload) = rest
        .split_once(',')
        .ok_or_else(|| IconRefused::BadData("no comma".into()))?;
    let mut parts = header.split(';');
    let mime = parts.next().unwrap_or_default().to_string();
    let base64 = parts.any(|p| p.trim().eq_ignore_ascii_case("base64"));
    // A size check before decoding, so a huge URL costs nothing more.
    if payload.len() > MAX_ICON_BYTES * 4 {
        return Err(IconRefused::TooLarge);
    }
    let bytes = if base64 {
        base64::engine::general_purpose::STANDARD
            .decode(payload.trim())
            .map_err(|e| IconRefused::BadData(e.to_string()))?
    } else {
        percent_decode(payload)
    };
    check_bytes(&mime, &bytes)
}

fn percent_decode(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).copied().and_then(hex),
            bytes.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(hi), Some(lo)) => {
                out.push((hi * 16 + lo) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    out
}

/// Fetches icons over https (redirects only to https), checks them, and remembers each
/// outcome by source for the life of the process.
pub struct IconCache {
    client: reqwest::Client,
    seen: Mutex<HashMap<String, Option<(String, String)>>>,
}

impl Default for IconCache {
    fn default() -> Self {
        let policy = reqwest::redirect::Policy::custom(|attempt| {
            if attempt.url().scheme() == "https" && attempt.previous().len() < 3 {
                attempt.follow()
            } else {
                attempt.stop()
            }
        });
        let client = reqwest::Client::builder()
            .redirect(policy)
            .timeout(FETCH_TIMEOUT)
            .build()
            .unwrap_or_default();
        IconCache {
            client,
            seen: Mutex::default(),
        }
    }
}

impl IconCache {
    /// The icons as a web view may show them: each a checked `data:` URL (with its type);
    /// icons that are refused are left out.
    pub async fn as_data(&self, icons: &[Icon]) -> Vec<Icon> {
        self.as_data_many(vec![icons.to_vec()])
            .await
            .pop()
            .unwrap_or_default()
    }

    /// [`IconCache::as_data`] for many lists at once (a tool listing): distinct sources
    /// are fetched concurrently, at most [`ICONS_PER_LISTING`] of them.
    pub async fn as_data_many(&self, lists: Vec<Vec<Icon>>) -> Vec<Vec<Icon>> {
        let mut sources: Vec<&str> = Vec::new();
        for icon in lists.iter().flatten() {
            if !sources.contains(&icon.src.as_str()) && sources.len() < ICONS_PER_LISTING {
                sources.push(&icon.src);
            }
        }
        let resolved = futures::future::join_all(sources.iter().map(|s| self.resolve(s))).await;
        let found: HashMap<&str, (String, String)> = sources
            .iter()
            .zip(resolved)
            .filter_map(|(s, r)| Some((*s, r?)))
            .collect();
        lists
            .iter()
            .map(|icons| {
                icons
                    .iter()
                    .filter_map(|icon| {
                        let (src, mime) = found.get(icon.src.as_str())?.clone();
                        Some(Icon {
                            src,
                            mime_type: Some(mime),
                            sizes: icon.sizes.clone(),
                            theme: icon.theme.clone(),
                        })
                    })
                    .collect()
            })
            .collect()
    }

    async fn resolve(&self, src: &str) -> Option<(String, String)> {
        if let Some(known) = self.seen.lock().get(src) {
            return known.clone();
        }
        let result = match self.check(src).await {
            Ok(data) => {
                let mime = data
                    .strip_prefix("data:")
                    .unwrap_or_default()
                    .split(';')
                    .next()
                    .unwrap_or_default()
                    .to_string();
                Some((data, mime))
            }
            Err(e) => {
                tracing::debug!("icon not shown: {e}");
                None
            }
        };
        let mut seen = self.seen.lock();
        if seen.len() >= CACHE_ENTRIES {
            seen.clear();
        }
        seen.insert(src.to_string(), result.clone());
        result
    }

    async fn check(&self, src: &str) -> Result<String, IconRefused> {
        let scheme = src.split(':').next().unwrap_or_default();
        if scheme.eq_ignore_ascii_case("data") {
            return check_data_url(src);
        }
        let url = url::Url::parse(src).map_err(|_| IconRefused::Scheme)?;
        if url.scheme() != "https" {
            return Err(IconRefused::Scheme);
        }
        let fetch = |e: reqwest::Error| IconRefused::Fetch(e.without_url().to_string());
        let mut response = self.client.get(url).send().await.map_err(fetch)?;
        if !response.status().is_success() {
            return Err(IconRefused::Fetch(format!("HTTP {}", response.status())));
        }
        let declared = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        if response
            .content_length()
            .is_some_and(|n| n > MAX_ICON_BYTES as u64)
        {
            return Err(IconRefused::TooLarge);
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(fetch)? {
            body.extend_from_slice(&chunk);
            if body.len() > MAX_ICON_BYTES {
                return Err(IconRefused::TooLarge);
            }
        }
        check_bytes(&declared, &body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

    #[test]
    fn allowed_types_become_data_urls() {
        assert_eq!(
            check_bytes("image/png; charset=binary", PNG).unwrap(),
            "data:image/png;base64,iVBORw0KGgoAAAANSUhEUg=="
        );
        assert!(check_bytes("image/gif", b"GIF89a....").is_ok());
        assert!(check_bytes("image/jpeg", &[0xff, 0xd8, 0xff, 0xe0]).is_ok());
        assert!(check_bytes("image/webp", b"RIFF\0\0\0\0WEBPVP8 ").is_ok());
        assert!(check_bytes("IMAGE/SVG+XML", b"<?xml version='1.0'?><svg/>").is_ok());
    }

    #[test]
    fn other_types_wrong_bytes_and_big_icons_are_refused() {
        assert_eq!(
            check_bytes("text/html", b"<html>"),
            Err(IconRefused::Type("text/html".into()))
        );
        assert_eq!(check_bytes("", PNG), Err(IconRefused::Type(String::new())));
        assert_eq!(
            check_bytes("image/png", b"<svg onload=alert(1)>"),
            Err(IconRefused::NotThatType("image/png".into()))
        );
        assert_eq!(
            check_bytes("image/svg+xml", b"hello"),
            Err(IconRefused::NotThatType("image/svg+xml".into()))
        );
        let mut big = PNG.to_vec();
        big.resize(MAX_ICON_BYTES + 1, 0);
        assert_eq!(check_bytes("image/png", &big), Err(IconRefused::TooLarge));
    }

    #[test]
    fn data_urls_are_decoded_checked_and_rewritten() {
        assert_eq!(
            check_data_url("data:image/png;base64,iVBORw0KGgoAAAANSUhEUg==").unwrap(),
            "data:image/png;base64,iVBORw0KGgoAAAANSUhEUg=="
        );
        let svg = check_data_url("data:image/svg+xml,%3Csvg%20xmlns='x'/%3E").unwrap();
        assert_eq!(svg, "data:image/svg+xml;base64,PHN2ZyB4bWxucz0neCcvPg==");
        assert_eq!(
            check_data_url("data:text/html;base64,PGh0bWw+"),
            Err(IconRefused::Type("text/html".into()))
        );
        assert!(matches!(
            check_data_url("data:image/png;base64,@@@"),
            Err(IconRefused::BadData(_))
        ));
        assert_eq!(check_data_url("javascript:1"), Err(IconRefused::Scheme));
    }

    #[tokio::test]
    async fn only_https_and_data_icons_pass_and_refusals_are_left_out() {
        let cache = IconCache::default();
        let icon = |src: &str| Icon {
            src: src.into(),
            mime_type: None,
            sizes: vec!["16x16".into()],
            theme: None,
        };
        let shown = cache
            .as_data(&[
                icon("http://example.com/a.png"),
                icon("file:///etc/passwd"),
                icon("data:text/html,<script>1</script>"),
                icon("data:image/png;base64,iVBORw0KGgoAAAANSUhEUg=="),
            ])
            .await;
        assert_eq!(
            shown,
            vec![Icon {
                src: "data:image/png;base64,iVBORw0KGgoAAAANSUhEUg==".into(),
                mime_type: Some("image/png".into()),
                sizes: vec!["16x16".into()],
                theme: None,
            }]
        );
    }
}
