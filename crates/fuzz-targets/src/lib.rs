//! Fuzz target bodies: one plain function per parser that takes untrusted input.
//!
//! The coverage-guided fuzzer in `fuzz/` and the corpus replay test below call the same
//! functions, so a corpus file checked by `cargo test` is checked exactly as the fuzzer
//! checked it. Each body asserts the parser's invariants, not only that it returns: a
//! failed assertion is a finding, like a panic. A workspace member that is never packaged;
//! what it reaches in `harness9-mcp` and `harness9` is public there (`#[doc(hidden)]` where
//! it is not part of their API).

#![allow(
    clippy::string_slice,
    reason = "fuzz harness code, not run on real input: it slices where the parser under test gave the range"
)]

use std::collections::HashSet;

use serde_json::value::RawValue;
use serde_json::Value;

use harness9::config::{expand, McpConfig, TransportConfig};
use harness9::tools::naming::{assign_names, MAX_TOOL_NAME, MCP_PREFIX};
use harness9_mcp::protocol::jsonrpc::{self, Inbound, Kind};
use harness9_mcp::transport::sse_parse::{SseEvent, SseParser};

mod asks;
mod fast_paths;
mod hosting;
mod stdio;
mod surface;
mod untrusted;

/// The names of the targets, as used for `fuzz/corpus/<target>/`.
pub const TARGETS: &[&str] = &[
    "jsonrpc",
    "sse",
    "mcp_json",
    "expand",
    "naming",
    "stdio",
    "elicit_form",
    "sampling",
    "surface_results",
    "fast_paths",
    "untrusted_text",
    "http_response",
    "tasks_wire",
    "view_request",
    "view_csp",
    "registry_page",
    "partial_json",
    "import_entry",
];

/// Runs the target called `name` on `data`; `false` when there is no such target.
pub fn run(name: &str, data: &[u8]) -> bool {
    match name {
        "jsonrpc" => jsonrpc_decode(data),
        "sse" => sse(data),
        "mcp_json" => mcp_json(data),
        "expand" => expand_vars(data),
        "naming" => naming(data),
        "stdio" => stdio::stdio(data),
        "elicit_form" => asks::elicit_form(data),
        "sampling" => asks::sampling(data),
        "surface_results" => surface::surface_results(data),
        "fast_paths" => fast_paths::fast_paths(data),
        "untrusted_text" => untrusted::untrusted_text(data),
        "http_response" => hosting::http_response(data),
        "tasks_wire" => hosting::tasks_wire(data),
        "view_request" => hosting::view_request(data),
        "view_csp" => hosting::view_csp(data),
        "registry_page" => hosting::registry_page(data),
        "partial_json" => hosting::partial_json(data),
        "import_entry" => hosting::import_entry(data),
        _ => return false,
    }
    true
}

/// The environment the config targets expand against: a few set names whose values hold
/// no `$`, so that any `${` in an expanded string must have come from the input.
fn fuzz_env(name: &str) -> Option<String> {
    match name {
        "HOME" => Some("/home/user".into()),
        "TOKEN" => Some("s3cr3t".into()),
        "EMPTY" => Some(String::new()),
        "A" => Some("a{b}c".into()),
        _ => None,
    }
}

/// JSON-RPC decoding: the full decoder never panics; the shape-only fast path
/// (`quick_result`) agrees with the full decoder whenever it answers; the hand-written
/// encoder writes exactly what serde_json writes, and what it writes decodes back.
pub fn jsonrpc_decode(data: &[u8]) {
    let mut kinds = 0usize;
    let decoded = jsonrpc::for_each_message(data, |m: Inbound<'_>| {
        kinds += 1;
        if let Kind::Response { id, .. } | Kind::Request { id, .. } = m.kind() {
            let _ = jsonrpc::parse_id(id);
        }
    });
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Some((id, range)) = jsonrpc::quick_result(text) {
        let result = &text[range];
        if serde_json::from_str::<&RawValue>(result).is_ok() {
            assert!(
                decoded.is_ok(),
                "fast path took a message the decoder rejects"
            );
            let msg: Inbound<'_> = serde_json::from_str(text).expect("decodes");
            match msg.kind() {
                Kind::Response {
                    id: got,
                    outcome: Ok(raw),
                } => {
                    assert_eq!(jsonrpc::parse_id(got), Some(id), "fast path id");
                    assert_eq!(raw.get().trim(), result.trim(), "fast path result");
                }
                Kind::Response {
                    outcome: Err(_), ..
                }
                | Kind::Request { .. }
                | Kind::Notification { .. }
                | Kind::BadResponse { .. }
                | Kind::Invalid => panic!("fast path took a message that is no plain answer"),
            }
        }
    }
    // Encoding: any JSON value as params and as a result.
    let Ok(value) = serde_json::from_str::<Value>(text) else {
        return;
    };
    let mut ours = Vec::new();
    jsonrpc::write_value(&mut ours, &value);
    let theirs = serde_json::to_vec(&value).expect("serializes");
    assert_eq!(ours, theirs, "write_value differs from serde_json");
    let method = value.as_str().unwrap_or("tools/call");
    let request = jsonrpc::encode_request(7, method, Some(&value));
    let back: Inbound<'_> = serde_json::from_slice(&request).expect("request decodes");
    match back.kind() {
        Kind::Request {
            id,
            method: m,
            params,
        } => {
            assert_eq!(jsonrpc::parse_id(id), Some(7));
            assert_eq!(m, method);
            // Compared as text: floats need not survive a parse round trip exactly.
            let params = params.expect("params").get();
            assert_eq!(params.as_bytes(), theirs.as_slice());
        }
        Kind::Response { .. }
        | Kind::BadResponse { .. }
        | Kind::Notification { .. }
        | Kind::Invalid => {
            panic!("an encoded request decodes as something else")
        }
    }
    let id = RawValue::from_string("\"x\"".into()).expect("raw id");
    let response = jsonrpc::encode_response(&id, Ok(value.clone()));
    let text = std::str::from_utf8(&response).expect("utf-8");
    if let Some((_, range)) = jsonrpc::quick_result(text) {
        panic!("fast path took a string id: {:?}", &text[range]);
    }
}

/// The SSE parser: events do not depend on how the stream is split into chunks, and every
/// event's data is made only of the bytes of `data:` lines.
pub fn sse(data: &[u8]) {
    // The first byte picks the chunk size, so the fuzzer explores splits too.
    let (split, body) = match data.split_first() {
        Some((s, rest)) => (usize::from(*s % 16) + 1, rest),
        None => return,
    };
    let whole = parse_sse(&[body]);
    let chunks: Vec<&[u8]> = body.chunks(split).collect();
    let split_up = parse_sse(&chunks);
    let bytewise: Vec<&[u8]> = body.chunks(1).collect();
    assert_eq!(whole, split_up, "events depend on the chunking ({split})");
    assert_eq!(
        whole,
        parse_sse(&bytewise),
        "events depend on the chunking (1)"
    );
    // A small limit: no event keeps more data than it, however the stream is split.
    for e in parse_sse_limited(&chunks, SMALL_LIMIT).0 {
        assert!(
            e.data.len() <= SMALL_LIMIT,
            "an event kept more than the limit"
        );
        assert!(
            !e.too_large || e.data.is_empty(),
            "a discarded event kept data"
        );
    }
    let data_bytes: usize = whole.0.iter().map(|e| e.data.len()).sum();
    assert!(data_bytes <= body.len(), "more data out than bytes in");
    for e in &whole.0 {
        assert!(!e.data.contains(&b'\r'), "a line end inside event data");
        assert!(
            !e.event.contains(['\r', '\n']),
            "a line end inside an event type"
        );
        if let Some(id) = &e.id {
            assert!(!id.contains('\0'), "an id with NUL");
        }
    }
}

type SseOutcome = (Vec<SseEvent>, Option<String>, Option<u64>);

/// The event limit of the small-limit check.
const SMALL_LIMIT: usize = 64;

fn parse_sse(chunks: &[&[u8]]) -> SseOutcome {
    parse_sse_limited(chunks, usize::MAX)
}

fn parse_sse_limited(chunks: &[&[u8]], limit: usize) -> SseOutcome {
    let mut p = SseParser::new(limit);
    let mut out = Vec::new();
    for c in chunks {
        p.feed(c, |e| out.push(e));
    }
    let id = p.last_event_id().map(str::to_owned);
    (out, id, p.retry_ms)
}

/// `.mcp.json` parsing with `${VAR}` expansion: never panics, is deterministic, and no
/// valid entry keeps an unexpanded `${` that the environment did not put there.
pub fn mcp_json(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let cfg = McpConfig::parse(text, ".mcp.json", &fuzz_env);
    let again = McpConfig::parse(text, ".mcp.json", &fuzz_env);
    assert_eq!(cfg.servers, again.servers, "parsing is not deterministic");
    assert_eq!(cfg.error, again.error);
    if cfg.error.is_some() {
        assert!(cfg.servers.is_empty(), "servers from a file with an error");
    }
    for (name, entry) in &cfg.servers {
        let Ok(server) = entry else { continue };
        assert_eq!(&server.name, name);
        assert!(server.max_message_bytes >= harness9::config::MIN_MAX_MESSAGE_BYTES);
        assert!(!server.startup_timeout.is_zero() && !server.tool_timeout.is_zero());
        assert_eq!(
            server.fingerprint(std::path::Path::new("/p")),
            server.fingerprint(std::path::Path::new("/p")),
            "the approval fingerprint is not deterministic"
        );
        let _ = server.display_target();
        let mut strings: Vec<String> = Vec::new();
        match &server.transport {
            TransportConfig::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                assert!(!server.raw["command"].is_null());
                strings.push(command.clone());
                strings.extend(args.iter().cloned());
                strings.extend(env.iter().map(|(_, v)| v.clone()));
                strings.extend(cwd.iter().map(|c| c.display().to_string()));
            }
            TransportConfig::Http { url, headers } | TransportConfig::Sse { url, headers } => {
                assert!(!server.raw["url"].is_null());
                strings.push(url.clone());
                strings.extend(headers.iter().map(|(_, v)| v.clone()));
            }
        }
        // `$${EMPTY}{` is a literal `$`, nothing, and a literal `{`: `${` by juxtaposition.
        if server.raw.to_string().contains("$${") {
            continue;
        }
        for s in strings {
            assert!(!s.contains("${"), "unexpanded reference left in {s:?}");
        }
    }
}

/// `${VAR}` expansion on its own: the input bytes are `template NUL value-of-OTHER`. Text
/// without `${` comes back unchanged, and a result holds no `${` unless the environment
/// or a literal `$` written just before a reference put it there.
pub fn expand_vars(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (template, other) = text.split_once('\0').unwrap_or((text, ""));
    let env = |name: &str| fuzz_env(name).or_else(|| (name == "OTHER").then(|| other.to_string()));
    let out = expand(template, &env);
    if !template.contains("${") {
        assert_eq!(
            out.as_deref(),
            Ok(template),
            "text without references changed"
        );
    }
    let Ok(out) = out else { return };
    // A literal `$` (one not starting `${`) may meet a `{` after expansion; skip those.
    let lone_dollar = template
        .match_indices('$')
        .any(|(i, _)| !template[i..].starts_with("${"));
    if !other.contains(['$', '{']) && !lone_dollar {
        assert!(
            !out.contains("${"),
            "unexpanded reference left: {template:?} -> {out:?}"
        );
    }
}

/// Tool-name cleaning: every name starts with the MCP prefix, is at most 64 characters
/// of `[A-Za-z0-9_-]`, avoids the reserved names, does not depend on the order of the
/// list, and distinct (server, tool) pairs get distinct names. Input lines are
/// `server\ttool`; a line without a tab names a built-in (reserved) tool.
pub fn naming(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut seen = HashSet::new();
    let mut tools = Vec::new();
    let mut reserved = HashSet::new();
    for line in text.lines().take(64) {
        match line.split_once('\t') {
            Some((s, t)) => {
                if seen.insert((s.to_string(), t.to_string())) {
                    tools.push((s.to_string(), t.to_string()));
                }
            }
            None => {
                reserved.insert(line.to_string());
            }
        }
    }
    let names = assign_names(&tools, &reserved);
    assert_eq!(names.len(), tools.len());
    for n in &names {
        assert!(n.starts_with(MCP_PREFIX), "{n:?} lacks the prefix");
        assert!(
            n.len() <= MAX_TOOL_NAME,
            "{n:?} is longer than {MAX_TOOL_NAME}"
        );
        assert!(
            n.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'),
            "{n:?} has a character outside [A-Za-z0-9_-]"
        );
        assert!(!reserved.contains(n), "{n:?} is a reserved name");
    }
    let unique: HashSet<&String> = names.iter().collect();
    assert_eq!(
        unique.len(),
        names.len(),
        "duplicate names: {tools:?} -> {names:?}"
    );
    assert_eq!(assign_names(&tools, &reserved), names, "not deterministic");
    let reversed: Vec<_> = tools.iter().rev().cloned().collect();
    let mut back = assign_names(&reversed, &reserved);
    back.reverse();
    assert_eq!(back, names, "depends on the order of the list");
}

#[cfg(test)]
mod replay {
    use std::path::Path;

    /// Every file of `fuzz/corpus/<target>/` goes through its target, as in the fuzzer.
    #[test]
    fn fuzz_corpus_replays_clean() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus");
        let mut total = 0;
        for target in super::TARGETS {
            let dir = root.join(target);
            let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| {
                panic!(
                    "{}: {e}; the corpus is part of the repository",
                    dir.display()
                )
            });
            let mut n = 0;
            for entry in entries {
                let path = entry.expect("corpus entry").path();
                let data = std::fs::read(&path).expect("corpus file");
                let ok = std::panic::catch_unwind(|| super::run(target, &data));
                assert!(
                    matches!(ok, Ok(true)),
                    "fuzz target {target} fails on {}",
                    path.display()
                );
                n += 1;
            }
            assert!(n > 0, "{}: empty corpus", dir.display());
            total += n;
        }
        assert!(total >= super::TARGETS.len());
    }
}
