//! `mcp-fixture`: a fast MCP server over stdio that misbehaves on demand.
//!
//! Used by the integration tests and the benchmark as the server under the host.
//! It speaks newline-delimited JSON-RPC 2.0 on stdin/stdout, implements the legacy
//! MCP lifecycle (`initialize`, `ping`, `tools/list`, `tools/call`) with a fixed set
//! of test tools, and can be told to misbehave with command-line flags (garbage on
//! stdout, no `initialize` answer, cursor loops, stderr floods, ...): `--grandchild`
//! leaves a `sleep` holding stdout; `--stderr-blank-flood N` writes N empty stderr lines
//! and `--stdout-garbage N` N bytes without a newline on stdout before serving.
//! `--ask` lists the `ask` tool, which sends the client a list of requests (`asks.rs`).
//!
//! `--tool-overrides FILE` reads a JSON array of tool definitions at start-up: one named
//! like a built-in tool replaces its definition (it still behaves the same), others are
//! listed as generic tools. A missing file means no overrides, so a test can change a
//! tool's definition between runs without changing the command line.
//!
//! `--require-url URL` (repeatable) answers every tool call with `-32042` (URL elicitation
//! required) naming each URL, as a server that wants a page opened first does.
//!
//! `--modern` speaks only the modern era (2026-07-28): `server/discover` is answered and
//! `initialize` refused with `-32022` (the other methods never needed the handshake).
//!
//! `--on-discover silent|exit|exit-late|CODE` makes the modern era's probe
//! (`server/discover`) meet a legacy server that ignores it, exits on it (at once, or after
//! 2 s), or answers it with error CODE
//! (without the flag: `-32601`, like any unknown method).
//!
//! Environment: `REFSERVER_TOOLS=N` lists N extra synthetic tools,
//! `REFSERVER_INIT_DELAY_MS=N` delays the `initialize` answer, and `REFSERVER_RESOURCES=N`
//! and `REFSERVER_PROMPTS=N` offer synthetic resources and prompts ([`features`]).
//!
//! All output goes through one buffered writer shared with the `sleep` worker
//! threads. The main loop flushes only when no further complete request is
//! buffered, so pipelined requests are answered in batches.

#[path = "mcp-fixture/asks.rs"]
mod asks;
#[path = "mcp-fixture/features.rs"]
mod features;

use std::collections::HashSet;
use std::fs::File;
use std::io::{self, BufWriter, Stdout, Write};
use std::os::fd::AsFd;
use std::sync::{Arc, LazyLock, Mutex, MutexGuard, PoisonError};
use std::time::Duration;
use std::{env, process, thread};

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};

const SUPPORTED_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
const GARBAGE_LINE: &[u8] = b"this is not json\n";
const GARBAGE_BANNER: &[u8] = b"mcp-fixture starting up (this banner is not json)\n";
const TEXT_PREFIX: &str = r#"{"content":[{"type":"text","text":"#;
const TEXT_SUFFIX: &str = "}]}";
const FAIL_RESULT: &str =
    r#"{"content":[{"type":"text","text":"this tool failed"}],"isError":true}"#;
/// A 1x1 RGBA PNG.
const PNG_1X1: &str = concat!(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mMwnvn/",
    "PwAFmQLLy7st7QAAAABJRU5ErkJggg=="
);
/// A 16-sample, 8-bit mono WAV file.
const WAV_16: &str =
    "UklGRjQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YRAAAACAoIBggKCAYICggGCAoIBg";

// ----------------------------------------------------------------------------
// Configuration

/// Misbehaviours (flags) and benchmark knobs (environment).
#[derive(Default)]
struct Config {
    garbage: bool,
    no_init: bool,
    init_error: bool,
    repeat_cursor: bool,
    messy_names: bool,
    /// `--ask`: list the `ask` tool (see `asks`).
    ask: bool,
    exit_at_once: Option<String>,
    stderr_flood: u64,
    stderr_blank_flood: u64,
    stdout_garbage: u64,
    grandchild: bool,
    pages: usize,
    protocol_version: Option<String>,
    synthetic_tools: usize,
    init_delay: Duration,
    tool_overrides: Option<String>,
    /// How a legacy server misbehaves on `server/discover` (the modern era's probe):
    /// `silent` (no answer), `exit` (the process ends), or an error code to answer.
    on_discover: Option<String>,
    /// Speak only the modern era (2026-07-28): answer `server/discover`, refuse
    /// `initialize`.
    modern: bool,
    /// Answer every tool call with `-32042` (URL elicitation required) naming these URLs.
    require_urls: Vec<String>,
}

impl Config {
    fn load() -> Config {
        let mut cfg = Config {
            synthetic_tools: env_number("REFSERVER_TOOLS") as usize,
            init_delay: Duration::from_millis(env_number("REFSERVER_INIT_DELAY_MS")),
            ..Config::default()
        };
        let mut args = env::args().skip(1);
        while let Some(flag) = args.next() {
            match flag.as_str() {
                "--garbage" => cfg.garbage = true,
                "--no-init" => cfg.no_init = true,
                "--init-error" => cfg.init_error = true,
                "--repeat-cursor" => cfg.repeat_cursor = true,
                "--messy-names" => cfg.messy_names = true,
                "--ask" => cfg.ask = true,
                "--exit-at-once" => cfg.exit_at_once = Some(flag_value(&mut args, &flag)),
                "--stderr-flood" => cfg.stderr_flood = parse_number(&flag_value(&mut args, &flag)),
                "--stderr-blank-flood" => {
                    cfg.stderr_blank_flood = parse_number(&flag_value(&mut args, &flag))
                }
                "--stdout-garbage" => {
                    cfg.stdout_garbage = parse_number(&flag_value(&mut args, &flag))
                }
                "--grandchild" => cfg.grandchild = true,
                "--pages" => cfg.pages = parse_number(&flag_value(&mut args, &flag)) as usize,
                "--protocol-version" => cfg.protocol_version = Some(flag_value(&mut args, &flag)),
                "--tool-overrides" => cfg.tool_overrides = Some(flag_value(&mut args, &flag)),
                "--on-discover" => cfg.on_discover = Some(flag_value(&mut args, &flag)),
                "--modern" => cfg.modern = true,
                "--require-url" => cfg.require_urls.push(flag_value(&mut args, &flag)),
                other => usage_error(&format!("unknown argument `{other}`")),
            }
        }
        cfg
    }
}

fn env_number(name: &str) -> u64 {
    env::var(name).map_or(0, |v| parse_number(&v))
}

fn flag_value(args: &mut impl Iterator<Item = String>, flag: &str) -> String {
    args.next()
        .unwrap_or_else(|| usage_error(&format!("{flag} needs a value")))
}

fn parse_number(text: &str) -> u64 {
    text.trim()
        .parse()
        .unwrap_or_else(|_| usage_error(&format!("`{text}` is not a number")))
}

fn usage_error(message: &str) -> ! {
    eprintln!("mcp-fixture: {message}");
    process::exit(64)
}

// ----------------------------------------------------------------------------
// Output

/// The buffered stdout writer, shared by the main loop and `sleep` threads.
struct Out {
    w: BufWriter<Stdout>,
    garbage: bool,
    /// Every result says `"resultType":"complete"` first, as a modern server's do.
    modern: bool,
}

type SharedOut = Arc<Mutex<Out>>;

fn lock(out: &SharedOut) -> MutexGuard<'_, Out> {
    out.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Out {
    /// Writes one message line made of `parts` (preceded by garbage if asked).
    fn send<'a>(&mut self, parts: impl IntoIterator<Item = &'a str>) {
        let write = || -> io::Result<()> {
            if self.garbage {
                self.w.write_all(GARBAGE_LINE)?;
            }
            for part in parts {
                self.w.write_all(part.as_bytes())?;
            }
            self.w.write_all(b"\n")
        };
        write().unwrap_or_else(|e| output_failed(&e));
    }

    fn result<'a>(&mut self, id: &'a RawValue, body: impl IntoIterator<Item = &'a str>) {
        let head = [r#"{"jsonrpc":"2.0","id":"#, id.get(), r#","result":"#];
        let mut body = body.into_iter();
        let first = body.next().unwrap_or("{}");
        // `{…` becomes `{"resultType":"complete",…` (no comma before a closing brace).
        let (kind, first) = match first.strip_prefix('{') {
            Some(rest) if self.modern && rest.trim_start().starts_with('}') => {
                (r#"{"resultType":"complete""#, rest)
            }
            Some(rest) if self.modern => (r#"{"resultType":"complete","#, rest),
            _ => ("", first),
        };
        let parts = head.into_iter().chain([kind, first]);
        self.send(parts.chain(body).chain(["}"]));
    }

    fn text(&mut self, id: &RawValue, text: &str) {
        let quoted = Value::from(text).to_string();
        self.result(id, [TEXT_PREFIX, &quoted, TEXT_SUFFIX]);
    }

    fn error(&mut self, id: &RawValue, code: i64, message: &str, data: Option<Value>) {
        let mut error = json!({"code": code, "message": message});
        if let Some(data) = data {
            error["data"] = data;
        }
        let error = error.to_string();
        self.send([
            r#"{"jsonrpc":"2.0","id":"#,
            id.get(),
            r#","error":"#,
            &error,
            "}",
        ]);
    }

    /// Sends a notification or (with an `id` inside `message`) a server request.
    fn message(&mut self, message: Value) {
        self.send([message.to_string().as_str()]);
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.message(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    fn flush(&mut self) {
        self.w.flush().unwrap_or_else(|e| output_failed(&e));
    }
}

/// The client stopped reading: there is nobody left to serve.
fn output_failed(error: &io::Error) -> ! {
    process::exit(i32::from(error.kind() != io::ErrorKind::BrokenPipe))
}

// ----------------------------------------------------------------------------
// Incoming messages (parsed in one pass, borrowing from the input line)

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    params: Option<Params<'a>>,
    #[serde(borrow)]
    result: Option<&'a RawValue>,
    #[serde(borrow)]
    error: Option<&'a RawValue>,
}

/// The union of the params of every method the fixture understands.
#[derive(Deserialize, Default)]
struct Params<'a> {
    #[serde(borrow, rename = "protocolVersion")]
    protocol_version: Option<&'a RawValue>,
    #[serde(borrow)]
    cursor: Option<&'a RawValue>,
    #[serde(borrow)]
    name: Option<&'a RawValue>,
    #[serde(borrow)]
    uri: Option<&'a RawValue>,
    #[serde(borrow)]
    level: Option<&'a RawValue>,
    #[serde(borrow)]
    arguments: Option<Args<'a>>,
    /// Kept as text: its members are read only when they are needed.
    #[serde(borrow, rename = "_meta")]
    meta: Option<&'a RawValue>,
}

/// The union of the arguments of every tool.
#[derive(Deserialize, Default)]
struct Args<'a> {
    #[serde(borrow)]
    text: Option<&'a RawValue>,
    #[serde(borrow)]
    bytes: Option<&'a RawValue>,
    #[serde(borrow)]
    ms: Option<&'a RawValue>,
    #[serde(borrow)]
    steps: Option<&'a RawValue>,
    #[serde(borrow)]
    level: Option<&'a RawValue>,
    #[serde(borrow)]
    message: Option<&'a RawValue>,
    #[serde(borrow)]
    name: Option<&'a RawValue>,
    #[serde(borrow)]
    topic: Option<&'a RawValue>,
    #[serde(borrow)]
    requests: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Meta<'a> {
    #[serde(borrow, rename = "progressToken")]
    progress_token: Option<&'a RawValue>,
    /// What every modern request carries (checked with `--modern`).
    #[serde(borrow, rename = "io.modelcontextprotocol/protocolVersion")]
    protocol_version: Option<&'a RawValue>,
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities")]
    client_capabilities: Option<serde::de::IgnoredAny>,
}

impl<'a> Meta<'a> {
    fn of(text: Option<&'a [u8]>) -> Option<Meta<'a>> {
        serde_json::from_slice(text?).ok()
    }
}

/// A request whose params end with `"_meta":{…}`, as clients write it: the line cut
/// before that member (closed in place), and the member's object as text. The rest is then
/// parsed as a legacy request is, and the modern server reads only what it needs of
/// `_meta` ([`modern_meta_ok`]) instead of parsing every member of it. Any other shape:
/// the line as it is, parsed whole.
///
/// `seen` is the last well-formed `_meta` this server met (a client writes the same one on
/// every request): a line that ends with it is cut there without scanning the object again.
fn split_meta<'l>(line: &'l mut [u8], seen: &mut Vec<u8>) -> (&'l [u8], Option<&'l [u8]>) {
    if let Some((at, open, close)) = seen_meta_at(line, seen) {
        return close_before_meta(line, at, open, close);
    }
    static KEY: LazyLock<memchr::memmem::Finder<'static>> =
        LazyLock::new(|| memchr::memmem::Finder::new(br#""_meta":{"#));
    let mut from = 0;
    let found = loop {
        let Some(at) = KEY.find(&line[from..]).map(|n| from + n) else {
            break None;
        };
        let open = at + br#""_meta":"#.len();
        let Some(close) = object_len(&line[open..]).map(|n| open + n) else {
            break None;
        };
        // Only the params' own `_meta` as their last member, params last in the message.
        if line[close..].trim_ascii_end() == b"}}" {
            break Some((at, open, close));
        }
        from = open;
    };
    let Some((at, open, close)) = found else {
        return (line, None);
    };
    if line[open..close].starts_with(MODERN_META_START.as_bytes()) {
        seen.clear();
        seen.extend_from_slice(&line[open..close]);
    }
    close_before_meta(line, at, open, close)
}

/// [`split_meta`]'s fast path: where the `"_meta":<seen>` member is (key, object start,
/// object end) when the line ends with it and `}}`, the key right after `,` or `{`.
fn seen_meta_at(line: &[u8], seen: &[u8]) -> Option<(usize, usize, usize)> {
    const KEY: &[u8] = br#""_meta":"#;
    if seen.is_empty() {
        return None;
    }
    let body = line.trim_ascii_end();
    let close = body.len().checked_sub(2)?;
    let open = close.checked_sub(seen.len())?;
    let at = open.checked_sub(KEY.len())?;
    let fits = &body[close..] == b"}}"
        && &body[open..close] == seen
        && &body[at..open] == KEY
        && at > 0
        && matches!(body[at - 1], b',' | b'{');
    fits.then_some((at, open, close))
}

/// The line up to the `_meta` member starting at `at` (its object `open..close`), closed
/// in place, and that object.
fn close_before_meta(
    line: &mut [u8],
    at: usize,
    open: usize,
    close: usize,
) -> (&[u8], Option<&[u8]>) {
    let mut end = line[..at].trim_ascii_end().len();
    if end == 0 {
        return (line, None);
    }
    if line[end - 1] == b',' {
        end -= 1;
    }
    // `end + 2 <= at`: the closing braces go where `"_meta"` began.
    let (head, tail) = line.split_at_mut(open);
    head[end..end + 2].copy_from_slice(b"}}");
    (&head[..end + 2], Some(&tail[..close - open]))
}

/// The length of the JSON object `text` starts with, by counting braces outside strings.
/// A modern `_meta` that starts as expected is scanned from there.
fn object_len(b: &[u8]) -> Option<usize> {
    let start = MODERN_META_START.len();
    let (mut depth, mut i) = match b.starts_with(MODERN_META_START.as_bytes()) {
        true => (1usize, start),
        false => (0usize, 0),
    };
    while let Some(n) = memchr::memchr3(b'"', b'{', b'}', b.get(i..)?) {
        i += n;
        match b[i] {
            b'"' => loop {
                i += 1;
                i += memchr::memchr2(b'"', b'\\', b.get(i..)?)?;
                if b[i] == b'"' {
                    break;
                }
                i += 1; // the escaped character
            },
            b'{' => depth += 1,
            _ => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
        }
        i += 1;
    }
    None
}

/// The members a compact modern `_meta` starts with when it holds this server's version
/// and the client's capabilities: what a well-formed request is checked against first.
const MODERN_META_START: &str = concat!(
    r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","#,
    r#""io.modelcontextprotocol/clientCapabilities":"#
);

/// Fallback used to find the id of a message whose params did not parse.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow)]
    id: Option<&'a RawValue>,
}

fn as_string(raw: Option<&RawValue>) -> Option<String> {
    serde_json::from_str(raw?.get()).ok()
}

fn as_u64(raw: Option<&RawValue>) -> Option<u64> {
    serde_json::from_str(raw?.get()).ok()
}

fn as_value(raw: &RawValue) -> Value {
    serde_json::from_str(raw.get()).unwrap_or(Value::Null)
}

/// Reads a required non-negative integer argument, answering an error if absent.
fn arg_u64(out: &mut Out, id: &RawValue, raw: Option<&RawValue>, name: &str) -> Option<u64> {
    let value = as_u64(raw);
    if value.is_none() {
        let message = format!("argument `{name}` must be a non-negative integer");
        out.error(id, -32602, &message, None);
    }
    value
}

// ----------------------------------------------------------------------------
// Tool list

/// Every listed tool, serialized once; `generic` names answer "called NAME".
struct ToolList {
    entries: Vec<String>,
    generic: HashSet<String>,
    full: String,
}

/// The always-listed tools as `[name, description, {argument: JSON type}]`.
fn builtin_tools() -> Vec<String> {
    let table = json!([
        ["echo", "Returns the given text unchanged.", {"text": "string"}],
        ["big", "Returns exactly `bytes` bytes of ASCII text.", {"bytes": "integer"}],
        ["sleep", "Sleeps `ms` milliseconds, then answers.", {"ms": "integer"}],
        ["progress", "Reports `steps` progress notifications.", {"steps": "integer"}],
        ["crash", "Makes the server exit with code 3 without answering.", {}],
        ["fail", "Always returns a tool error result.", {}],
        ["rich", "Returns one content block of every kind plus structured content.", {}],
        ["add_tool", "Adds a tool named `name` to the tool list.", {"name": "string"}],
        ["log", "Sends a log notification.", {"level": "string", "message": "string"}],
        ["server_request", "Sends ping and sampling requests to the client.", {}],
    ]);
    let rows = table.as_array().into_iter().flatten();
    rows.map(|row| tool(&row[0], &row[1], &row[2])).collect()
}

fn tool(name: &Value, description: &Value, args: &Value) -> String {
    let args = args.as_object().into_iter().flatten();
    let properties: serde_json::Map<String, Value> = args
        .map(|(arg, kind)| {
            (
                arg.clone(),
                json!({"type": kind, "description": format!("The {arg}")}),
            )
        })
        .collect();
    let schema = json!({"type": "object", "properties": properties});
    json!({"name": name, "description": description, "inputSchema": schema}).to_string()
}

fn messy_names() -> Vec<String> {
    let long: String = "very_long_tool_name_".repeat(5).chars().take(100).collect();
    let mut names = ["get weather", "get.weather", "ünïcode/tool"]
        .map(String::from)
        .to_vec();
    names.push(long);
    names
}

/// The input schema shared by every synthetic benchmark tool.
const SYNTHETIC_SCHEMA: &str = concat!(
    r#"{"type":"object","properties":{"query":{"type":"string","description":"#,
    r#""The search query to run against the synthetic index. Any text is accepted; "#,
    r#"the fixture ignores it, as it only exists to make the advertised tool list "#,
    r#"large."},"limit":{"type":"integer","description":"The maximum number of "#,
    r#"results to return. It must be a positive integer; larger values are "#,
    r#"silently clamped to the maximum."}},"#,
    r#""required":["query"]}"#
);

/// One synthetic benchmark tool, about 570 bytes serialized.
fn synthetic_tool(i: usize) -> String {
    format!(
        concat!(
            r#"{{"name":"tool_{i:05}","description":"Synthetic tool {i:05} generated for "#,
            r#"load testing; it takes a search query and a result limit as input.","#,
            r#""inputSchema":{schema}}}"#
        ),
        i = i,
        schema = SYNTHETIC_SCHEMA
    )
}

impl ToolList {
    fn new(cfg: &Config) -> ToolList {
        let mut list = ToolList {
            entries: builtin_tools(),
            generic: HashSet::new(),
            full: String::new(),
        };
        if let Some(path) = &cfg.tool_overrides {
            list.apply_overrides(path);
        }
        if cfg.ask {
            let args = json!({"requests": "array"});
            let about =
                "Sends `requests` ([{method, params as JSON text}]) to the client, one by one.";
            list.entries.push(tool(&json!("ask"), &json!(about), &args));
        }
        if cfg.messy_names {
            for name in messy_names() {
                list.push_generic(name, "A tool whose name needs cleaning.");
            }
        }
        list.entries.reserve(cfg.synthetic_tools);
        for i in 0..cfg.synthetic_tools {
            list.entries.push(synthetic_tool(i));
            list.generic.insert(format!("tool_{i:05}"));
        }
        list.rebuild();
        list
    }

    fn apply_overrides(&mut self, path: &str) {
        let Ok(text) = std::fs::read_to_string(path) else {
            return;
        };
        let defs: Vec<Value> = serde_json::from_str(&text)
            .unwrap_or_else(|e| usage_error(&format!("{path}: not a JSON array of tools: {e}")));
        for def in defs {
            let name = def["name"].as_str().unwrap_or_default().to_string();
            let at = self.entries.iter().position(|e| {
                serde_json::from_str::<Value>(e).is_ok_and(|v| v["name"] == json!(name))
            });
            match at {
                Some(i) => self.entries[i] = def.to_string(),
                None => {
                    self.entries.push(def.to_string());
                    self.generic.insert(name);
                }
            }
        }
    }

    fn push_generic(&mut self, name: String, description: &str) {
        self.entries
            .push(tool(&json!(name), &json!(description), &json!({})));
        self.generic.insert(name);
    }

    fn add(&mut self, name: String) {
        self.push_generic(name, "A tool added at run time by add_tool.");
        self.rebuild();
    }

    fn rebuild(&mut self) {
        self.full = page_body(&self.entries, None);
    }
}

/// `{"tools":[...],"nextCursor":...}` for the given serialized tools.
fn page_body(entries: &[String], next_cursor: Option<&str>) -> String {
    let size = entries.iter().map(|e| e.len() + 1).sum::<usize>() + 64;
    let mut body = String::with_capacity(size);
    body.push_str(r#"{"tools":["#);
    for (i, entry) in entries.iter().enumerate() {
        if i > 0 {
            body.push(',');
        }
        body.push_str(entry);
    }
    body.push(']');
    if let Some(cursor) = next_cursor {
        body.push_str(r#","nextCursor":"#);
        body.push_str(&Value::from(cursor).to_string());
    }
    body.push('}');
    body
}

// ----------------------------------------------------------------------------
// Server

/// A `server_request` call waiting for the client's answers to our requests.
struct PendingCall {
    id: Box<RawValue>,
    ping_id: String,
    sampling_id: String,
    ping: Option<String>,
    sampling: Option<String>,
}

struct Server {
    cfg: Config,
    out: SharedOut,
    tools: ToolList,
    pending: Vec<PendingCall>,
    server_requests: u64,
    asks: asks::Asks,
    features: features::Features,
    /// The last well-formed `_meta` of a modern request ([`split_meta`]).
    meta_seen: Vec<u8>,
}

impl Server {
    fn handle(&mut self, out: &mut Out, line: &mut [u8]) {
        if line.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        // A modern request's `_meta` is set aside and checked on its own (below).
        let (line, meta) = match self.cfg.modern {
            true => split_meta(line, &mut self.meta_seen),
            false => (&*line, None),
        };
        // One UTF-8 check for the whole line, not one per string in it.
        let parsed = match std::str::from_utf8(line) {
            Ok(text) => serde_json::from_str(text),
            Err(_) => serde_json::from_slice(line),
        };
        let message: Message = match parsed {
            Ok(message) => message,
            Err(e) => return reject(out, line, &e),
        };
        match (&message.method, message.id) {
            (Some(method), Some(id)) => {
                let mut params = message.params.unwrap_or_default();
                let meta = meta.or_else(|| params.meta.take().map(|m| m.get().as_bytes()));
                self.request(out, method, id, params, meta)
            }
            (None, Some(id)) => self.client_response(out, id, &message),
            _ => {} // notifications (initialized, cancelled, ...) are ignored
        }
    }

    /// `meta` is the params' `_meta` object as JSON text.
    fn request(
        &mut self,
        out: &mut Out,
        method: &str,
        id: &RawValue,
        params: Params,
        meta: Option<&[u8]>,
    ) {
        match method {
            "initialize" if self.cfg.modern => out.error(
                id,
                -32022,
                "this server speaks only the 2026-07-28 protocol",
                Some(json!({"supported": ["2026-07-28"]})),
            ),
            "server/discover" if self.cfg.modern => self.discover(out, id),
            _ if self.cfg.modern && !modern_meta_ok(out, id, meta) => {}
            "initialize" => self.initialize(out, id, &params),
            "server/discover" if self.cfg.on_discover.is_some() => {
                match self.cfg.on_discover.as_deref().unwrap_or_default() {
                    "silent" => {}
                    "exit" => {
                        eprintln!("mcp-fixture: unknown method server/discover; exiting");
                        process::exit(3)
                    }
                    "exit-late" => {
                        std::thread::sleep(Duration::from_secs(2));
                        eprintln!("mcp-fixture: unknown method server/discover; exiting");
                        process::exit(3)
                    }
                    code => out.error(
                        id,
                        code.parse().unwrap_or(-32602),
                        "Invalid request parameters",
                        None,
                    ),
                }
            }
            "ping" => out.result(id, ["{}"]),
            "logging/setLevel" => {
                // Says which level it now uses, so tests see each process get it.
                let level = as_string(params.level).unwrap_or_default();
                out.result(id, ["{}"]);
                out.notify(
                    "notifications/message",
                    json!({"level": level, "logger": "fixture",
                           "data": format!("logging level set to {level}")}),
                );
            }
            "tools/list" => self.list_tools(out, id, &params),
            "tools/call" => self.call_tool(out, id, params, meta),
            other if self.features.handle(out, other, id, &params) => {}
            _ => out.error(id, -32601, &format!("Method not found: {method}"), None),
        }
    }

    fn initialize(&self, out: &mut Out, id: &RawValue, params: &Params) {
        if self.cfg.no_init {
            return;
        }
        thread::sleep(self.cfg.init_delay);
        if self.cfg.init_error {
            let data = json!({"supported": ["2099-01-01"]});
            return out.error(id, -32602, "Unsupported protocol version", Some(data));
        }
        let version = match (
            &self.cfg.protocol_version,
            as_string(params.protocol_version),
        ) {
            (Some(forced), _) => forced.clone(),
            (None, Some(asked)) if SUPPORTED_VERSIONS.contains(&asked.as_str()) => asked,
            _ => SUPPORTED_VERSIONS[0].to_string(),
        };
        let mut capabilities = json!({"tools": {"listChanged": true}, "logging": {}});
        self.features.declare(&mut capabilities);
        let result = json!({
            "protocolVersion": version,
            "capabilities": capabilities,
            "serverInfo": {"name": "mcp-fixture", "version": "0.1.0"},
        });
        out.result(id, [result.to_string().as_str()]);
    }

    /// The modern era's `server/discover` (`--modern`), after the same delay as
    /// `initialize`.
    fn discover(&self, out: &mut Out, id: &RawValue) {
        thread::sleep(self.cfg.init_delay);
        let mut capabilities = json!({"tools": {"listChanged": true}});
        self.features.declare(&mut capabilities);
        let result = json!({
            "supportedVersions": ["2026-07-28"],
            "capabilities": capabilities,
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "mcp-fixture", "version": "0.1.0"}},
        });
        out.result(id, [result.to_string().as_str()]);
    }

    fn list_tools(&self, out: &mut Out, id: &RawValue, params: &Params) {
        let entries = &self.tools.entries;
        let per_page = entries.len().div_ceil(self.cfg.pages.max(1)).max(1);
        let page_count = entries.len().div_ceil(per_page).max(1);
        let page = match as_string(params.cursor).as_deref() {
            None => 1,
            Some("again") if self.cfg.repeat_cursor => 1,
            Some(cursor) => match cursor.strip_prefix("page-").and_then(|n| n.parse().ok()) {
                Some(n) if (2..=page_count).contains(&n) => n,
                _ => return out.error(id, -32602, &format!("Invalid cursor: {cursor}"), None),
            },
        };
        let next = if self.cfg.repeat_cursor {
            Some("again".to_string())
        } else {
            (page < page_count).then(|| format!("page-{}", page + 1))
        };
        if page_count == 1 && next.is_none() {
            return out.result(id, [self.tools.full.as_str()]);
        }
        let start = (page - 1) * per_page;
        let slice = &entries[start..(start + per_page).min(entries.len())];
        out.result(id, [page_body(slice, next.as_deref()).as_str()]);
    }

    fn call_tool(&mut self, out: &mut Out, id: &RawValue, params: Params, meta: Option<&[u8]>) {
        let Some(name) = as_string(params.name) else {
            return out.error(id, -32602, "tools/call needs a string `name`", None);
        };
        let args = params.arguments.unwrap_or_default();
        if !self.cfg.require_urls.is_empty() {
            let asks: Vec<Value> = (self.cfg.require_urls.iter().enumerate())
                .map(|(n, url)| json!({"mode": "url", "message": "Open this page first", "url": url, "elicitationId": format!("e{n}")}))
                .collect();
            let data = json!({"elicitations": asks});
            return out.error(id, -32042, "URL elicitation required", Some(data));
        }
        match name.as_str() {
            "echo" => echo(out, id, &args),
            "big" => big(out, id, &args),
            "sleep" => self.sleep(out, id, &args),
            "progress" => progress(
                out,
                id,
                &args,
                Meta::of(meta).and_then(|m| m.progress_token),
            ),
            "crash" => crash(out),
            "fail" => out.result(id, [FAIL_RESULT]),
            "rich" => out.result(id, [rich_result().to_string().as_str()]),
            "add_tool" => self.add_tool(out, id, &args),
            "log" => log(out, id, &args),
            "server_request" => self.server_request(out, id),
            "ask" if self.cfg.ask => match args.requests.map(|r| serde_json::from_str(r.get())) {
                Some(Ok(requests)) => self.asks.start(out, id, requests),
                _ => out.error(
                    id,
                    -32602,
                    "argument `requests` must be [{method, params}]",
                    None,
                ),
            },
            other if self.tools.generic.contains(other) => out.text(id, &format!("called {other}")),
            other => out.error(id, -32602, &format!("Unknown tool: {other}"), None),
        }
    }

    /// Answers from a worker thread, so later requests can be answered first.
    fn sleep(&self, out: &mut Out, id: &RawValue, args: &Args) {
        let Some(ms) = arg_u64(out, id, args.ms, "ms") else {
            return;
        };
        let (id, shared) = (id.to_owned(), Arc::clone(&self.out));
        thread::spawn(move || {
            thread::sleep(Duration::from_millis(ms));
            let mut out = lock(&shared);
            out.text(&id, &format!("slept {ms} ms"));
            out.flush();
        });
    }

    fn add_tool(&mut self, out: &mut Out, id: &RawValue, args: &Args) {
        let Some(name) = as_string(args.name) else {
            return out.error(id, -32602, "argument `name` must be a string", None);
        };
        self.tools.add(name);
        out.notify("notifications/tools/list_changed", json!({}));
        out.text(id, "added");
    }

    /// Sends two requests to the client; the call is answered by `client_response`.
    fn server_request(&mut self, out: &mut Out, id: &RawValue) {
        self.server_requests += 1;
        let ping_id = format!("srv-{}", 2 * self.server_requests - 1);
        let sampling_id = format!("srv-{}", 2 * self.server_requests);
        out.message(json!({"jsonrpc": "2.0", "id": ping_id, "method": "ping"}));
        out.message(json!({
            "jsonrpc": "2.0",
            "id": sampling_id,
            "method": "sampling/createMessage",
            "params": {
                "messages": [{"role": "user", "content": {"type": "text", "text": "Say hello."}}],
                "maxTokens": 16,
            },
        }));
        let id = id.to_owned();
        let (ping, sampling) = (None, None);
        self.pending.push(PendingCall {
            id,
            ping_id,
            sampling_id,
            ping,
            sampling,
        });
    }

    /// Records the client's answer to one of our requests.
    fn client_response(&mut self, out: &mut Out, id: &RawValue, answer: &Message) {
        let Some(key) = as_string(Some(id)) else {
            return;
        };
        if self.asks.answered(out, &key, answer) {
            return;
        }
        for call in &mut self.pending {
            if call.ping_id == key {
                call.ping = Some(describe_answer(answer, false));
            } else if call.sampling_id == key {
                call.sampling = Some(describe_answer(answer, true));
            }
        }
        self.pending
            .retain(|call| match (&call.ping, &call.sampling) {
                (Some(ping), Some(sampling)) => {
                    out.text(&call.id, &format!("ping: {ping}; sampling: {sampling}"));
                    false
                }
                _ => true,
            });
    }
}

/// "ok" (optionally followed by the raw result) or "error CODE".
fn describe_answer(answer: &Message, with_result: bool) -> String {
    match (answer.error, answer.result) {
        (Some(error), _) => {
            let code = as_value(error).get("code").cloned().unwrap_or(Value::Null);
            format!("error {code}")
        }
        (None, Some(result)) if with_result => format!("ok {}", result.get()),
        _ => "ok".to_string(),
    }
}

/// Answers a line that is not a well-formed message.
/// A modern request must say its protocol version (one this server speaks) and the
/// client's capabilities in `_meta`; answers the error when it does not.
fn modern_meta_ok(out: &mut Out, id: &RawValue, text: Option<&[u8]>) -> bool {
    if text.is_some_and(|m| m.starts_with(MODERN_META_START.as_bytes())) {
        return true;
    }
    let meta = Meta::of(text);
    let meta = meta.as_ref();
    let version = meta.and_then(|m| m.protocol_version).map(RawValue::get);
    let error = match version {
        None => Some((
            -32602,
            "_meta lacks io.modelcontextprotocol/protocolVersion",
            None,
        )),
        Some("\"2026-07-28\"") if meta.is_some_and(|m| m.client_capabilities.is_some()) => None,
        Some("\"2026-07-28\"") => Some((
            -32602,
            "_meta lacks io.modelcontextprotocol/clientCapabilities",
            None,
        )),
        Some(_) => Some((
            -32022,
            "Unsupported protocol version",
            Some(json!({"supported": ["2026-07-28"]})),
        )),
    };
    match error {
        None => true,
        Some((code, message, data)) => {
            out.error(id, code, message, data);
            false
        }
    }
}

fn reject(out: &mut Out, line: &[u8], error: &serde_json::Error) {
    match serde_json::from_slice::<Envelope>(line) {
        Ok(Envelope { id: Some(id) }) => {
            out.error(id, -32602, &format!("Invalid params: {error}"), None)
        }
        Ok(_) => {}
        Err(_) => out.error(
            RawValue::NULL,
            -32700,
            &format!("Parse error: {error}"),
            None,
        ),
    }
}

// ----------------------------------------------------------------------------
// Tools answered inline

fn echo(out: &mut Out, id: &RawValue, args: &Args) {
    match args.text {
        // The raw JSON string is echoed verbatim: no unescaping or re-escaping.
        Some(text) if text.get().starts_with('"') => {
            out.result(id, [TEXT_PREFIX, text.get(), TEXT_SUFFIX])
        }
        _ => out.error(id, -32602, "argument `text` must be a string", None),
    }
}

fn big(out: &mut Out, id: &RawValue, args: &Args) {
    let Some(bytes) = arg_u64(out, id, args.bytes, "bytes") else {
        return;
    };
    let mut text = "abcdefghij".repeat(bytes as usize / 10 + 1);
    text.truncate(bytes as usize);
    out.result(id, [TEXT_PREFIX, "\"", &text, "\"", TEXT_SUFFIX]);
}

fn progress(out: &mut Out, id: &RawValue, args: &Args, token: Option<&RawValue>) {
    let Some(steps) = arg_u64(out, id, args.steps, "steps") else {
        return;
    };
    if let Some(token) = token.map(as_value) {
        for step in 1..=steps {
            let params = json!({
                "progressToken": token,
                "progress": step,
                "total": steps,
                "message": format!("step {step} of {steps}"),
            });
            out.notify("notifications/progress", params);
        }
    }
    out.text(id, "done");
}

fn log(out: &mut Out, id: &RawValue, args: &Args) {
    let level = args.level.map_or_else(|| json!("info"), as_value);
    let data = args.message.map_or_else(|| json!(""), as_value);
    out.notify(
        "notifications/message",
        json!({"level": level, "logger": "fixture", "data": data}),
    );
    out.text(id, "logged");
}

fn crash(out: &mut Out) -> ! {
    out.flush();
    eprintln!("fixture: crashing on purpose");
    process::exit(3)
}

fn rich_result() -> Value {
    json!({
        "content": [
            {"type": "text", "text": "rich text part"},
            {"type": "image", "data": PNG_1X1, "mimeType": "image/png"},
            {"type": "audio", "data": WAV_16, "mimeType": "audio/wav"},
            {"type": "resource_link", "uri": "fixture://docs/readme.txt", "name": "readme.txt"},
            {"type": "resource", "resource": {
                "uri": "fixture://docs/note.txt",
                "mimeType": "text/plain",
                "text": "embedded resource text",
            }},
        ],
        "structuredContent": {"answer": 42},
    })
}

// ----------------------------------------------------------------------------
// Startup and main loop

/// Writes exactly `bytes` bytes of log lines to stderr from a thread. It writes
/// through a duplicate of fd 2 so a full, unread pipe never holds std's lock.
fn spawn_stderr_flood(bytes: u64) {
    let Ok(fd) = io::stderr().as_fd().try_clone_to_owned() else {
        return;
    };
    thread::spawn(move || {
        let mut w = BufWriter::with_capacity(64 * 1024, File::from(fd));
        let (mut left, mut n) = (bytes, 0u64);
        while left > 0 {
            let line = format!("fixture: flood line {n}\n");
            let take = line.len().min(usize::try_from(left).unwrap_or(usize::MAX));
            if w.write_all(&line.as_bytes()[..take]).is_err() {
                return;
            }
            left -= take as u64;
            n += 1;
        }
        let _ = w.flush();
    });
}

/// Starts `sleep` as a child that inherits stdout and stderr and outlives this server
/// (a wrapper's leftover child).
fn spawn_grandchild() {
    if let Err(e) = process::Command::new("sleep").arg("600").spawn() {
        eprintln!("mcp-fixture: cannot start the grandchild: {e}");
    }
}

/// Writes `bytes` bytes of text without any newline to stdout, before anything else.
fn write_stdout_garbage(bytes: u64) {
    let mut w = io::stdout().lock();
    let chunk = [b'x'; 64 * 1024];
    let mut left = bytes;
    while left > 0 {
        let n = left.min(chunk.len() as u64);
        if w.write_all(&chunk[..n as usize]).is_err() {
            return;
        }
        left -= n;
    }
    let _ = w.flush();
}

fn serve(server: &mut Server) -> ! {
    let shared = Arc::clone(&server.out);
    let mut stdin = io::stdin().lock();
    // Lines are handled where they were read: no copy, one search for each newline.
    let mut buf = vec![0u8; 1 << 20];
    let (mut start, mut end) = (0, 0);
    let mut guard: Option<MutexGuard<Out>> = None;
    loop {
        while let Some(n) = memchr::memchr(b'\n', &buf[start..end]) {
            let out = guard.get_or_insert_with(|| lock(&shared));
            server.handle(out, &mut buf[start..start + n]);
            start += n + 1;
        }
        // About to block: flush the batch and let `sleep` threads write.
        if let Some(mut out) = guard.take() {
            out.flush();
        }
        buf.copy_within(start..end, 0);
        end -= start;
        start = 0;
        if end == buf.len() {
            buf.resize(buf.len() * 2, 0);
        }
        match io::Read::read(&mut stdin, &mut buf[end..]) {
            Ok(0) => break,
            Ok(n) => end += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                eprintln!("mcp-fixture: reading stdin: {e}");
                break;
            }
        }
    }
    let mut out = lock(&shared);
    // A last line without its newline.
    server.handle(&mut out, &mut buf[..end]);
    out.flush();
    process::exit(0)
}

fn main() {
    let cfg = Config::load();
    if let Some(message) = &cfg.exit_at_once {
        eprintln!("{message}");
        process::exit(2);
    }
    if cfg.stderr_flood > 0 {
        spawn_stderr_flood(cfg.stderr_flood);
    }
    if cfg.grandchild {
        spawn_grandchild();
    }
    if cfg.stderr_blank_flood > 0 {
        let mut err = BufWriter::with_capacity(64 * 1024, io::stderr());
        let blank = [b'\n'; 4096];
        let mut left = cfg.stderr_blank_flood;
        while left > 0 {
            let n = left.min(blank.len() as u64);
            if err.write_all(&blank[..n as usize]).is_err() {
                break;
            }
            left -= n;
        }
        let _ = err.flush();
    }
    if cfg.stdout_garbage > 0 {
        write_stdout_garbage(cfg.stdout_garbage);
    }
    let mut out = Out {
        w: BufWriter::with_capacity(1 << 20, io::stdout()),
        garbage: cfg.garbage,
        modern: cfg.modern,
    };
    if cfg.garbage {
        out.w
            .write_all(GARBAGE_BANNER)
            .unwrap_or_else(|e| output_failed(&e));
        out.flush();
    }
    let tools = ToolList::new(&cfg);
    let out = Arc::new(Mutex::new(out));
    let mut server = Server {
        cfg,
        out,
        tools,
        pending: Vec::new(),
        server_requests: 0,
        asks: asks::Asks::default(),
        features: features::Features::from_env(),
        meta_seen: Vec::new(),
    };
    serve(&mut server)
}
