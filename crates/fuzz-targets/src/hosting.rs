//! What the host reads from servers, views, registries and other tools' files: HTTP/1.1
//! response framing, task descriptions, a view's requests and its declared CSP, registry
//! pages turned into entries, the model's partial tool input, and imported entries'
//! variables.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use harness9::config::import::{parse_jsonc, strip_jsonc, translate_entry};
use harness9::engine::partial_json::close_object;
use harness9::host::apps::csp;
use harness9::host::apps::ViewRequest;
use harness9::install::build::{build, MAX_ITEMS, MAX_TEXT};
use harness9::install::choose::Way;
use harness9::install::kind::PackageKind;
use harness9::install::record::parse_page;
use harness9::install::template::{Seg, Template, Values};
use harness9_mcp::http::{read_chunk_lines, read_head, MAX_CHUNK_LINE};
use harness9_mcp::protocol::apps::ViewResourceMeta;
use harness9_mcp::protocol::tasks::{
    poll_interval, CreatedTask, Task, TaskSnapshot, TaskSupport, MAX_POLL_INTERVAL,
    MIN_POLL_INTERVAL,
};

/// A response head off the front of a buffer (first byte: bit 0 says the request was
/// `HEAD`): where it ends is just after an empty line; a head that frames its body two
/// ways is refused; a chunked body only in HTTP/1.1 with `Transfer-Encoding: chunked`; a
/// length is every `Content-Length` the head gave; the answer does not depend on what
/// follows the head. Then the bytes after the head as chunk-size lines: each taken line
/// is CRLF-ended and bounded, its size the hex digits before any `;`.
pub fn http_response(data: &[u8]) {
    let Some((flags, buf)) = data.split_first() else {
        return;
    };
    let head_request = flags & 1 == 1;
    let Some(outcome) = read_head(buf, head_request) else {
        assert!(
            !buf.windows(2).any(|w| w == b"\n\n") && !buf.windows(3).any(|w| w == b"\n\r\n"),
            "a whole head was not found"
        );
        read_chunks(buf);
        return;
    };
    // The same head with other bytes after it reads the same.
    let mut longer = buf.to_vec();
    longer.extend_from_slice(b"HTTP/1.1 200 OK\r\n\r\n");
    assert_eq!(
        read_head(&longer, head_request),
        Some(outcome.clone()),
        "what follows a head changed it"
    );
    let head = match outcome {
        Ok(h) => h,
        Err(why) => {
            assert!(!why.is_empty(), "a refusal without a reason");
            return;
        }
    };
    let ended = buf.get(..head.end).expect("the end is inside the buffer");
    assert!(
        ended.ends_with(b"\n\n") || ended.ends_with(b"\n\r\n"),
        "a head ends with an empty line"
    );
    let named = |name: &'static str| {
        head.headers
            .iter()
            .filter(move |(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_slice())
    };
    let has_te = named("transfer-encoding").next().is_some();
    let has_cl = named("content-length").next().is_some();
    assert!(!(has_te && has_cl), "a head framed two ways was taken");
    if head.chunked {
        assert!(has_te, "chunked without Transfer-Encoding");
        assert!(head.length.is_none());
    }
    if let Some(n) = head.length {
        let bodiless =
            head_request || head.status < 200 || head.status == 204 || head.status == 304;
        if !bodiless {
            for v in named("content-length") {
                for item in v.split(|b| *b == b',') {
                    let text = std::str::from_utf8(item.trim_ascii()).expect("digits");
                    assert_eq!(text.parse::<u64>().ok(), Some(n), "a length not given");
                }
            }
        }
    } else if !head.chunked {
        assert!(
            !head.keep_alive,
            "a body read to close on a kept connection"
        );
    }
    read_chunks(buf.get(head.end..).unwrap_or_default());
}

fn read_chunks(buf: &[u8]) {
    let (lines, left) = read_chunk_lines(buf);
    let mut used = 0usize;
    for (i, line) in lines.iter().enumerate() {
        match line {
            Ok((len, size)) => {
                assert!(*len <= MAX_CHUNK_LINE, "a chunk line over the limit");
                let text = buf
                    .get(used..used + len)
                    .expect("the line is in the buffer");
                assert_eq!(buf.get(used + len..used + len + 2), Some(&b"\r\n"[..]));
                let digits = text
                    .split(|b| *b == b';')
                    .next()
                    .unwrap_or_default()
                    .trim_ascii_end();
                let want = std::str::from_utf8(digits)
                    .ok()
                    .and_then(|t| u64::from_str_radix(t, 16).ok());
                assert_eq!(want, Some(*size), "a chunk size not its digits");
                assert!(!text.contains(&b'\n'));
                used += len + 2;
            }
            Err(_) => assert_eq!(i + 1, lines.len(), "reading went on after a refusal"),
        }
    }
    if lines.last().is_none_or(Result::is_ok) {
        assert_eq!(used + left, buf.len(), "bytes lost between lines");
    }
}

/// Task descriptions of both generations: reading never panics; a task read keeps the
/// id and status as sent, survives a JSON round trip, and its poll interval is clamped.
pub fn tasks_wire(data: &[u8]) {
    let Ok(v) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let check = |t: &Task, from: &Value| {
        assert_eq!(
            from.get("taskId").and_then(Value::as_str),
            Some(t.task_id.as_str())
        );
        assert_eq!(
            from.get("status"),
            Some(&serde_json::to_value(t.status).expect("serializes")),
            "a status read otherwise"
        );
        let p = t.poll_interval();
        assert!(
            (MIN_POLL_INTERVAL..=MAX_POLL_INTERVAL).contains(&p),
            "poll interval {p:?}"
        );
        let back: Task = serde_json::from_value(serde_json::to_value(t).expect("serializes"))
            .expect("reads back");
        assert_eq!(&back, t, "a task changes through JSON");
    };
    if let Ok(t) = Task::from_wire(&v) {
        check(&t, &v);
    }
    let full = TaskSnapshot::from_wire(&v);
    // A poll's answer read straight from its text agrees with the full reading.
    if let Some(fast) = std::str::from_utf8(data)
        .ok()
        .and_then(TaskSnapshot::from_text)
    {
        assert_eq!(
            Ok(&fast),
            full.as_ref(),
            "the text path read a poll otherwise"
        );
    }
    if let Ok(c) = CreatedTask::from_wire(&v) {
        let p = c.task.poll_interval();
        assert!((MIN_POLL_INTERVAL..=MAX_POLL_INTERVAL).contains(&p));
    }
    let _ = TaskSupport::of_execution(Some(&v));
    if let Some(n) = v.as_u64() {
        let p = poll_interval(Some(n));
        assert!((MIN_POLL_INTERVAL..=MAX_POLL_INTERVAL).contains(&p));
    }
}

/// What a view posts (`method NUL params`): reading never panics; a request read names
/// the method it was read from.
pub fn view_request(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (method, params) = text.split_once('\0').unwrap_or((text, ""));
    let params = serde_json::from_str::<Value>(params).ok();
    if let Ok(r) = ViewRequest::parse(method, params) {
        assert_eq!(r.method(), method, "a request names another method");
    }
}

/// A view resource's `_meta` (its `ui.csp` and permissions): the policy built from it has
/// its fixed directives in order, and every declared source that got in is a clean origin
/// (no quote, `;`, `,`, whitespace or control character to add a directive with).
pub fn view_csp(data: &[u8]) {
    let Ok(meta) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let declared = ViewResourceMeta::of(Some(&meta), None);
    let policy = csp::build(declared.csp.as_ref());
    let directives: Vec<&str> = policy.csp.split("; ").collect();
    let names: Vec<&str> = directives
        .iter()
        .map(|d| d.split(' ').next().unwrap_or_default())
        .collect();
    assert_eq!(
        names,
        [
            "default-src",
            "script-src",
            "style-src",
            "img-src",
            "font-src",
            "media-src",
            "connect-src",
            "frame-src",
            "base-uri",
            "form-action",
            "object-src"
        ],
        "a directive added or lost: {}",
        policy.csp
    );
    assert_eq!(directives.first(), Some(&"default-src 'none'"));
    for source in &policy.external {
        assert!(
            !source.chars().any(|c| c.is_whitespace()
                || c.is_control()
                || matches!(c, '\'' | '"' | ';' | ',')),
            "an unclean source: {source:?}"
        );
        assert_eq!(
            csp::clean_source(source).as_deref(),
            Ok(source.as_str()),
            "not stable"
        );
    }
    let _ = csp::allow_attribute(&declared.permissions);
}

/// A registry page (`{"servers": [...]}`): every package and remote of every record read
/// becomes an entry whose command is ours (the package type's runner), whose texts are
/// bounded, and which renders with any values without panicking.
pub fn registry_page(data: &[u8]) {
    let Ok(page) = parse_page(data) else {
        return;
    };
    for listed in &page.items {
        let r = &listed.server;
        let mut ways: Vec<Way<'_>> = r
            .packages
            .iter()
            .filter_map(|p| PackageKind::of(&p.registry_type).map(|k| Way::Package(k, p)))
            .collect();
        ways.extend(r.remotes.iter().map(Way::Remote));
        for way in ways {
            let kind = match way {
                Way::Package(k, _) => Some(k),
                Way::Remote(_) => None,
            };
            let Ok(built) = build(r, way, None) else {
                continue;
            };
            assert!(built.variables.len() <= MAX_ITEMS);
            let vars = built.template.vars();
            let plain: BTreeMap<&str, &str> = vars.iter().map(|v| (v.as_str(), "v")).collect();
            let entry = built.template.render(&Values {
                plain,
                ..Values::default()
            });
            match &built.template {
                Template::Stdio { command, args, .. } => {
                    let k = kind.expect("a package runs a command");
                    assert_eq!(command, k.runner(), "a command not ours");
                    assert_eq!(
                        entry.get("command").and_then(Value::as_str),
                        Some(k.runner())
                    );
                    for part in args.iter().flat_map(|g| &g.parts).flatten() {
                        if let Seg::Text(t) = part {
                            assert!(t.chars().count() <= MAX_TEXT * 4, "an unbounded argument");
                        }
                    }
                }
                Template::Http { .. } | Template::Sse { .. } => {
                    assert!(kind.is_none(), "a package became a remote");
                    assert!(entry.get("command").is_none());
                }
            }
        }
    }
}

/// The model's tool input as it streams: a complete object closes to itself; any prefix
/// closes to an object or to nothing.
pub fn partial_json(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(v @ Value::Object(_)) = serde_json::from_str::<Value>(text) {
        assert_eq!(close_object(text), Some(v), "a whole object read otherwise");
    }
    for (i, _) in text.char_indices().step_by(7) {
        let prefix = text.get(..i).expect("a character boundary");
        if let Some(v) = close_object(prefix) {
            assert!(v.is_object());
        }
    }
}

/// Another tool's config file (JSON with comments) and its entries' variables: comments
/// and trailing commas go and nothing else; strings without `${` are kept as they are;
/// translating is deterministic and every variable it cannot translate is named whole.
pub fn import_entry(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let stripped = strip_jsonc(text);
    if let Ok(plain) = serde_json::from_str::<Value>(text) {
        assert_eq!(
            serde_json::from_str::<Value>(&stripped).ok(),
            Some(plain.clone()),
            "stripping changed plain JSON"
        );
        assert_eq!(parse_jsonc(text).ok(), Some(plain));
    }
    let Ok(doc) = parse_jsonc(text) else {
        return;
    };
    let project = Path::new("/p/proj");
    let home = Path::new("/h/user");
    let (value, unsupported) = translate_entry(doc.clone(), project, home);
    assert_eq!(
        translate_entry(doc.clone(), project, home),
        (value.clone(), unsupported.clone()),
        "translating is not deterministic"
    );
    for u in &unsupported {
        assert!(u.starts_with("${") && u.ends_with('}'), "{u:?}");
    }
    if !doc.to_string().contains("${") {
        assert_eq!(value, doc, "an entry without variables changed");
    }
}
