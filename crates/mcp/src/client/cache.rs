//! The modern era's caching hints. A list result (`tools/list`, `prompts/list`,
//! `resources/list`, `resources/templates/list`, page by page) that says `ttlMs` > 0 is
//! reused for that long instead of being asked again. A `private` one (the default) is
//! reused only while requests go out with the same credentials (the transport's
//! [`credentials_key`](crate::transport::TransportSender::credentials_key)); a
//! `public` one under any. The list's change notification forgets it, and so does a
//! change-notification stream that had to be opened again (changes may have been missed).
//! Only these list methods are cached, so MRTR retries never are.
//!
//! Bounds: at most [`MAX_CACHE_BYTES`] of results per connection (a result that does not
//! fit is simply not kept) and a lifetime of at most [`MAX_TTL`], whatever the server says.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde::Deserialize;

use super::{Params, ReplyBody};
use crate::protocol::schema_text::escapes_ascii;

/// The methods whose results may be cached, with the notification kind that forgets them.
pub(super) const CACHEABLE: &[&str] = &[
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
];
/// The most result text one connection keeps.
pub const MAX_CACHE_BYTES: usize = 8 << 20;
/// The longest a result is reused, whatever its `ttlMs`.
pub const MAX_TTL: Duration = Duration::from_secs(3600);

/// The searcher for the `ttlMs` key, built once.
static TTL: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\"ttlMs\""));

#[derive(Default)]
pub(super) struct ListCache {
    entries: Mutex<Entries>,
}

#[derive(Default)]
struct Entries {
    by_key: HashMap<String, Entry>,
    bytes: usize,
}

struct Entry {
    result: String,
    until: Instant,
    /// `Some(key)` for a `private` result: the credentials it was received with.
    credentials: Option<u64>,
}

#[derive(Deserialize)]
struct Hints {
    #[serde(rename = "ttlMs", default)]
    ttl_ms: Option<f64>,
    #[serde(rename = "cacheScope", default)]
    cache_scope: Option<String>,
}

/// How long a result may be reused and whether it is public, or `None` when it may not
/// be: most results carry no `"ttlMs"` and are settled by a look at the bytes; a result
/// that has one, or an escape that may spell it, is parsed ([`parsed_reuse`]).
pub fn reuse(text: &str) -> Option<(Duration, bool)> {
    let bytes = text.as_bytes();
    if TTL.find(bytes).is_none() && !escapes_ascii(bytes) {
        return None;
    }
    parsed_reuse(text)
}

/// [`reuse`] by a full parse of the result's hints.
pub fn parsed_reuse(text: &str) -> Option<(Duration, bool)> {
    // Hints are members of a result object (serde would also read them from an array).
    if !text.trim_start().starts_with('{') {
        return None;
    }
    let hints = serde_json::from_str::<Hints>(text).ok()?;
    let ttl = hints.ttl_ms.filter(|t| t.is_finite() && *t > 0.0)?;
    let ttl = Duration::from_secs_f64(capped_secs(ttl)).min(MAX_TTL);
    Some((ttl, hints.cache_scope.as_deref() == Some("public")))
}

/// Milliseconds as seconds, at most [`MAX_TTL`]'s (a huge `ttlMs` cannot overflow).
fn capped_secs(ms: f64) -> f64 {
    (ms / 1000.0).min(MAX_TTL.as_secs_f64())
}

/// What a request is cached under: its method and params.
pub(super) fn key(method: &str, params: &Params) -> String {
    let params = params.to_value().map(|v| v.to_string()).unwrap_or_default();
    format!("{method} {params}")
}

impl ListCache {
    /// A fresh result for this request, received under `credentials` if private.
    pub(super) fn get(&self, key: &str, credentials: u64) -> Option<ReplyBody> {
        let mut entries = self.entries.lock();
        if entries.by_key.is_empty() {
            return None;
        }
        let entry = entries.by_key.get(key)?;
        let fresh = entry.until > Instant::now();
        if fresh && entry.credentials.is_none_or(|c| c == credentials) {
            return Some(ReplyBody::whole(entry.result.clone()));
        }
        if !fresh {
            let gone = entries.by_key.remove(key).map_or(0, |e| e.result.len());
            entries.bytes -= gone;
        }
        None
    }

    /// Keeps a result its hints allow to reuse.
    pub(super) fn put(&self, key: String, body: &ReplyBody, credentials: u64) {
        let text = body.get();
        let Some((ttl, public)) = reuse(text) else {
            return;
        };
        let credentials = (!public).then_some(credentials);
        let mut entries = self.entries.lock();
        let old = entries.by_key.remove(&key).map_or(0, |e| e.result.len());
        entries.bytes -= old;
        if entries.bytes + text.len() > MAX_CACHE_BYTES {
            return;
        }
        entries.bytes += text.len();
        let entry = Entry {
            result: text.to_string(),
            until: Instant::now() + ttl,
            credentials,
        };
        entries.by_key.insert(key, entry);
    }

    /// Forgets every result of `method` (its list changed).
    pub(super) fn forget(&self, method: &str) {
        let mut entries = self.entries.lock();
        let prefix = format!("{method} ");
        let mut freed = 0;
        entries.by_key.retain(|k, e| {
            let keep = !k.starts_with(&prefix);
            if !keep {
                freed += e.result.len();
            }
            keep
        });
        entries.bytes -= freed;
    }

    /// Forgets everything.
    pub(super) fn clear(&self) {
        let mut entries = self.entries.lock();
        entries.by_key.clear();
        entries.bytes = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn body(text: &str) -> ReplyBody {
        ReplyBody::whole(text.to_string())
    }

    struct Keyed<'a>(&'a ListCache);

    impl Keyed<'_> {
        fn put(&self, method: &str, params: &Params, b: &ReplyBody, c: u64) {
            self.0.put(key(method, params), b, c)
        }
        fn get(&self, method: &str, params: &Params, c: u64) -> Option<ReplyBody> {
            self.0.get(&key(method, params), c)
        }
    }

    #[test]
    fn results_are_reused_within_their_ttl_and_scope() {
        let inner = ListCache::default();
        let cache = Keyed(&inner);
        let none = Params::None;
        let page2 = Params::Value(json!({"cursor": "2"}));
        // No hint, zero or negative: not kept.
        for text in [
            r#"{"tools":[]}"#,
            r#"{"tools":[],"ttlMs":0}"#,
            r#"{"tools":[],"ttlMs":-5}"#,
        ] {
            cache.put("tools/list", &none, &body(text), 1);
            assert!(cache.get("tools/list", &none, 1).is_none(), "{text}");
        }
        // Private (the default): only under the same credentials.
        cache.put(
            "tools/list",
            &none,
            &body(r#"{"tools":[1],"ttlMs":60000}"#),
            1,
        );
        assert_eq!(
            cache.get("tools/list", &none, 1).unwrap().get(),
            r#"{"tools":[1],"ttlMs":60000}"#
        );
        assert!(cache.get("tools/list", &none, 2).is_none());
        // Pages are kept apart; public results serve any credentials.
        let public = r#"{"tools":[2],"ttlMs":60000,"cacheScope":"public"}"#;
        cache.put("tools/list", &page2, &body(public), 1);
        assert_eq!(cache.get("tools/list", &page2, 7).unwrap().get(), public);
        // A list change forgets that list only.
        cache.put("prompts/list", &none, &body(public), 1);
        inner.forget("tools/list");
        assert!(cache.get("tools/list", &none, 1).is_none());
        assert!(cache.get("tools/list", &page2, 1).is_none());
        assert!(cache.get("prompts/list", &none, 1).is_some());
        inner.clear();
        assert!(cache.get("prompts/list", &none, 1).is_none());
        assert_eq!(inner.entries.lock().bytes, 0);
    }

    #[test]
    fn expired_results_go_and_the_size_is_bounded() {
        let inner = ListCache::default();
        let cache = Keyed(&inner);
        let none = Params::None;
        cache.put("tools/list", &none, &body(r#"{"tools":[],"ttlMs":1}"#), 1);
        // A millisecond later it is gone (the time limit only guards against a hang).
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while cache.get("tools/list", &none, 1).is_some() {
            assert!(std::time::Instant::now() < deadline, "never expired");
            std::thread::yield_now();
        }
        assert_eq!(inner.entries.lock().bytes, 0);
        let big = format!(r#"{{"x":"{}","ttlMs":60000}}"#, "a".repeat(MAX_CACHE_BYTES));
        cache.put("tools/list", &none, &body(&big), 1);
        assert!(cache.get("tools/list", &none, 1).is_none());
        assert_eq!(inner.entries.lock().bytes, 0);
    }
}
