//! `mcp-http-fixture`: an MCP server over HTTP that misbehaves on demand, for the tests of
//! the Streamable HTTP and legacy HTTP+SSE transports and the HTTP benchmark.
//!
//! `mcp-http-fixture [--port N] [--no-journal] [--extra-tool NAME] [--token-ttl SECS]` binds 127.0.0.1 (port 0 = any free port) and prints its base
//! URL (`http://127.0.0.1:PORT`) as the first line on stdout. A hand-written HTTP/1.1 server
//! (keep-alive; event streams are chunked), so every byte on the wire
//! is under control. The path picks the behaviour:
//!
//! | path | behaviour |
//! |---|---|
//! | `/json` | sessions, every answer `application/json`, GET → 405 |
//! | `/stream` | sessions, every request answered with an SSE stream (priming event, then notifications and server requests, then the response); GET opens a stream that sends one log notification and stays open |
//! | `/expire` | like `/json`; the tool `expire` ends the session after answering (next request → 404) |
//! | `/expire-grows` | like `/expire`, but once a session has expired `tools/list` names one tool more, `renewed` |
//! | `/cut` | like `/stream`, but a `tools/call` stream is cut after its priming event (`retry: 100`); GET with `Last-Event-ID` delivers the response; GET without → 405 |
//! | `/stateless` | no session, JSON answers |
//! | `/unauth` | 401 with `WWW-Authenticate: Bearer` |
//! | `/bearer/…` | the profile after the prefix (`/bearer/stream`, …), but every request needs `Authorization: Bearer fixture-token`, else 401 with `WWW-Authenticate: Bearer error="invalid_token"` |
//! | `/forbidden`, `/broken` | 403, 500 |
//! | `/legacy/sse` | legacy HTTP+SSE: the stream names `/legacy/messages?session=N` |
//! | `/fallback` | POST → 405, GET → a legacy HTTP+SSE stream |
//! | `/journal` | GET: every request seen so far as a JSON array (method, path, headers, body, notes) |
//! | `/oauth/…`, `/.well-known/…`, `/as/…` | a protected resource and its authorization server ([`oauth`]) |
//! | `/redirect?to=URL` | any request → 307 to `URL` |
//! | `/dupes` | like `/json`, but `tools/list` names `echo` twice, names that clean to the same text (`get weather`, `get.weather`, `get_weather`) and the `--extra-tool` name |
//!
//! Tools: `echo {text}`, `progress {steps}`, `notify`, `ask` (sends a server `ping` on the
//! stream and reports the answer), `sample` (sends `sampling/createMessage`), `hang` (never
//! answers; notes `hang-closed` in the journal when the client drops the exchange),
//! `huge {bytes}` (one text of that size), `expire`, `flood {bytes}` (streams an answer of
//! that size, JSON or one SSE event, without building it), `bad_error {kind}` (answers with a
//! malformed error: `code` not an integer, no `message`, `string` instead of an object, or
//! `neither` result nor error).

use std::collections::HashMap;
use std::io::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

#[path = "fixture_oauth/mod.rs"]
mod oauth;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, oneshot};

/// The only access token `/bearer/…` takes.
const FIXTURE_TOKEN: &str = "fixture-token";

const SUPPORTED: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Profile {
    Json,
    Stream,
    Expire,
    ExpireGrows,
    Cut,
    Stateless,
    Dupes,
}

impl Profile {
    fn of(path: &str) -> Option<Profile> {
        Some(match path {
            "/json" => Profile::Json,
            "/stream" => Profile::Stream,
            "/expire" => Profile::Expire,
            "/expire-grows" => Profile::ExpireGrows,
            "/cut" => Profile::Cut,
            "/stateless" => Profile::Stateless,
            "/dupes" => Profile::Dupes,
            _ => return None,
        })
    }
    fn sse(self) -> bool {
        matches!(self, Profile::Stream | Profile::Cut)
    }
    fn sessions(self) -> bool {
        self != Profile::Stateless
    }
}

#[derive(Default)]
struct State {
    /// Off for benchmarks (`--no-journal`).
    journaling: bool,
    journal: Mutex<Vec<Value>>,
    sessions: Mutex<HashMap<String, Profile>>,
    next: AtomicU64,
    /// Server requests waiting for the client's answer, by id.
    waiting: Mutex<HashMap<String, oneshot::Sender<Value>>>,
    /// Legacy sessions: where their stream events go.
    legacy: Mutex<HashMap<String, mpsc::UnboundedSender<Vec<u8>>>>,
    /// The response a cut stream did not deliver, for the resuming GET.
    cut_pending: Mutex<Option<Value>>,
    /// A session of `/expire-grows` expired: its tool list grew.
    grown: std::sync::atomic::AtomicBool,
    /// One more tool name listed by `/dupes`.
    extra_tool: Option<String>,
    /// `http://127.0.0.1:PORT`.
    base: String,
    oauth: oauth::OAuthState,
}

impl State {
    fn note(&self, note: &str) {
        self.journal.lock().unwrap().push(json!({ "note": note }));
    }
    fn fresh(&self, prefix: &str) -> String {
        format!("{prefix}-{}", self.next.fetch_add(1, Ordering::Relaxed) + 1)
    }
}

struct Request {
    method: String,
    path: String,
    query: String,
    /// The header block as received, names in lower case.
    head: String,
    /// Where each header's name and value lie in `head`.
    headers: Vec<(std::ops::Range<usize>, std::ops::Range<usize>)>,
    body: Vec<u8>,
}

impl Request {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers().find(|(k, _)| *k == name).map(|(_, v)| v)
    }

    /// Every header, name in lower case and value trimmed.
    fn headers(&self) -> impl Iterator<Item = (&str, &str)> {
        self.headers
            .iter()
            .filter_map(|(k, v)| Some((self.head.get(k.clone())?, self.head.get(v.clone())?)))
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut port = 0u16;
    let mut journaling = true;
    let mut extra_tool = None;
    let mut token_ttl = oauth::DEFAULT_TOKEN_TTL;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--port" => port = args.next().and_then(|p| p.parse().ok()).unwrap_or(0),
            "--no-journal" => journaling = false,
            "--extra-tool" => extra_tool = args.next(),
            "--token-ttl" => {
                token_ttl = args
                    .next()
                    .and_then(|p| p.parse().ok())
                    .unwrap_or(token_ttl)
            }
            other => {
                eprintln!("mcp-http-fixture: unknown argument {other}");
                std::process::exit(2);
            }
        }
    }
    let listener = TcpListener::bind(("127.0.0.1", port))
        .await
        .expect("bind 127.0.0.1");
    let addr = listener.local_addr().unwrap();
    {
        let mut out = std::io::stdout();
        let _ = writeln!(out, "http://{addr}");
        let _ = out.flush();
    }
    let state = Arc::new(State {
        journaling,
        extra_tool,
        base: format!("http://{addr}"),
        oauth: oauth::OAuthState::new(token_ttl),
        ..State::default()
    });
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let _ = stream.set_nodelay(true);
        tokio::spawn(connection(state.clone(), stream));
    }
}

/// Reads one request: the header block at once (one search per read, no allocation per
/// header), then its body.
async fn read_request(r: &mut BufReader<OwnedReadHalf>) -> Option<Request> {
    let mut head: Vec<u8> = Vec::new();
    loop {
        let buf = r.fill_buf().await.ok()?;
        if buf.is_empty() {
            return None;
        }
        // Blank lines before a request line are skipped.
        let from = head.len().saturating_sub(3);
        head.extend_from_slice(buf);
        let n = buf.len();
        let lead = head
            .iter()
            .take_while(|b| **b == b'\r' || **b == b'\n')
            .count();
        if head.get(lead).is_some_and(|b| !b.is_ascii_alphabetic()) {
            // Not HTTP (a TLS hello, say): answered as a request for nothing.
            r.consume(n);
            return Some(Request {
                method: "BAD".into(),
                path: "/".into(),
                query: String::new(),
                head: String::new(),
                headers: Vec::new(),
                body: Vec::new(),
            });
        }
        match memchr::memmem::find(&head[from.max(lead)..], b"\r\n\r\n") {
            Some(at) => {
                let end = from.max(lead) + at + 4;
                let extra = head.len() - end;
                r.consume(n - extra);
                head.truncate(end - 2);
                head.drain(..lead);
                break;
            }
            None => r.consume(n),
        }
    }
    let mut head = String::from_utf8(head).ok()?;
    let line_end = head.find("\r\n")?;
    let (method, target) = {
        let mut parts = head[..line_end].split_whitespace();
        (parts.next()?.to_string(), parts.next()?.to_string())
    };
    let (path, query) = match target.split_once('?') {
        Some((p, q)) => (p.to_string(), q.to_string()),
        None => (target, String::new()),
    };
    let mut headers = Vec::new();
    let mut at = line_end + 2;
    while at < head.len() {
        let end = head[at..].find("\r\n").map_or(head.len(), |e| at + e);
        if let Some(colon) = head[at..end].find(':') {
            let name = trimmed(&head, at..at + colon);
            let value = trimmed(&head, at + colon + 1..end);
            headers.push((name, value));
        }
        at = end + 2;
    }
    for (name, _) in &headers {
        if let Some(n) = head.get_mut(name.clone()) {
            n.make_ascii_lowercase();
        }
    }
    let mut req = Request {
        method,
        path,
        query,
        head,
        headers,
        body: Vec::new(),
    };
    let len: usize = req
        .header("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    req.body = vec![0; len];
    r.read_exact(&mut req.body).await.ok()?;
    Some(req)
}

/// `range` of `text` without the whitespace at either end.
fn trimmed(text: &str, range: std::ops::Range<usize>) -> std::ops::Range<usize> {
    let part = &text[range.clone()];
    let start = range.start + (part.len() - part.trim_start().len());
    let end = range.end - (part.len() - part.trim_end().len());
    start..end.max(start)
}

fn reason(code: u16) -> &'static str {
    match code {
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        302 => "Found",
        307 => "Temporary Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Other",
    }
}

async fn respond(
    w: &mut OwnedWriteHalf,
    code: u16,
    content_type: Option<&str>,
    extra: &[(&str, String)],
    body: &[u8],
) -> std::io::Result<()> {
    use std::io::Write as _;
    let mut out = Vec::with_capacity(128 + body.len());
    let _ = write!(out, "HTTP/1.1 {code} {}\r\n", reason(code));
    if let Some(ct) = content_type {
        let _ = write!(out, "Content-Type: {ct}\r\n");
    }
    for (k, v) in extra {
        let _ = write!(out, "{k}: {v}\r\n");
    }
    let _ = write!(out, "Content-Length: {}\r\n\r\n", body.len());
    out.extend_from_slice(body);
    w.write_all(&out).await
}

/// Starts an event stream: chunked, so the connection is kept alive after it ends, like the
/// servers built on the SDKs.
async fn sse_head(w: &mut OwnedWriteHalf, extra: &[(&str, String)]) -> std::io::Result<()> {
    sse_start(w, extra, None).await
}

/// The head of an event stream and, in the same write, its first chunk.
async fn sse_start(
    w: &mut OwnedWriteHalf,
    extra: &[(&str, String)],
    first: Option<&[u8]>,
) -> std::io::Result<()> {
    let mut head = String::from(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n",
    );
    for (k, v) in extra {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let mut out = head.into_bytes();
    if let Some(chunk) = first {
        out.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
        out.extend_from_slice(chunk);
        out.extend_from_slice(b"\r\n");
    }
    w.write_all(&out).await
}

/// A whole event stream (head, one chunk per event, end) in one write.
async fn sse_whole(
    w: &mut OwnedWriteHalf,
    extra: &[(&str, String)],
    events: &[Vec<u8>],
) -> std::io::Result<()> {
    let mut head = String::from(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n",
    );
    for (k, v) in extra {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let mut out = head.into_bytes();
    for e in events {
        out.extend_from_slice(format!("{:x}\r\n", e.len()).as_bytes());
        out.extend_from_slice(e);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"0\r\n\r\n");
    w.write_all(&out).await
}

/// Writes one chunk of an event stream.
async fn sse_send(w: &mut OwnedWriteHalf, bytes: &[u8]) -> std::io::Result<()> {
    let mut out = format!("{:x}\r\n", bytes.len()).into_bytes();
    out.extend_from_slice(bytes);
    out.extend_from_slice(b"\r\n");
    w.write_all(&out).await
}

/// Ends an event stream; the connection stays usable.
async fn sse_end(w: &mut OwnedWriteHalf) -> bool {
    w.write_all(b"0\r\n\r\n").await.is_ok()
}

fn event(id: Option<&str>, data: &[u8]) -> Vec<u8> {
    let mut e = Vec::with_capacity(data.len() + 40);
    e.extend_from_slice(b"event: message\n");
    if let Some(id) = id {
        e.extend_from_slice(format!("id: {id}\n").as_bytes());
    }
    e.extend_from_slice(b"data: ");
    e.extend_from_slice(data);
    e.extend_from_slice(b"\n\n");
    e
}

/// Serves one connection; returns when it should be closed.
async fn connection(state: Arc<State>, stream: TcpStream) {
    let (r, mut w) = stream.into_split();
    let mut r = BufReader::new(r);
    while let Some(req) = read_request(&mut r).await {
        let body_json: Value = serde_json::from_slice(&req.body)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&req.body).into_owned()));
        if state.journaling && req.path != "/journal" {
            let headers: serde_json::Map<String, Value> = req
                .headers()
                .map(|(k, v)| (k.to_string(), Value::String(v.to_string())))
                .collect();
            state.journal.lock().unwrap().push(json!({
                "method": req.method,
                "path": req.path,
                "query": req.query,
                "headers": headers,
                "body": if req.body.is_empty() { Value::Null } else { body_json.clone() },
            }));
        }
        let keep = serve(&state, req, body_json, &mut r, &mut w).await;
        if !keep {
            break;
        }
    }
    let _ = w.shutdown().await;
}

/// Handles one request; false when the connection must close.
async fn serve(
    state: &Arc<State>,
    req: Request,
    body: Value,
    r: &mut BufReader<OwnedReadHalf>,
    w: &mut OwnedWriteHalf,
) -> bool {
    let ok = |res: std::io::Result<()>| res.is_ok();
    let mut req = req;
    if let Some(rest) = req.path.strip_prefix("/bearer") {
        if req.header("authorization") != Some(&format!("Bearer {FIXTURE_TOKEN}")) {
            return ok(respond(
                w,
                401,
                Some("text/plain"),
                &[(
                    "WWW-Authenticate",
                    "Bearer error=\"invalid_token\", error_description=\"no valid token\"".into(),
                )],
                b"unauthorized",
            )
            .await);
        }
        req.path = rest.to_string();
    }
    let oauth_route = req.path.starts_with("/.well-known/") || req.path.starts_with("/as/");
    if let Some(r) = oauth_route
        .then(|| {
            state
                .oauth
                .route(&state.base, &req.method, &req.path, &req.query, &req.body)
        })
        .flatten()
    {
        if let Some(d) = state.oauth.delay(&req.method, &req.path) {
            tokio::time::sleep(d).await;
        }
        return ok(respond(w, r.code, r.content_type, &r.headers, &r.body).await);
    }
    if req.path.starts_with("/oauth/") {
        match state
            .oauth
            .guard(&state.base, &req.path, req.header("authorization"))
        {
            Ok(rest) => req.path = rest,
            Err(r) => return ok(respond(w, r.code, r.content_type, &r.headers, &r.body).await),
        }
    }
    match (req.method.as_str(), req.path.as_str()) {
        ("GET", "/journal") => {
            let j = serde_json::to_vec(&*state.journal.lock().unwrap()).unwrap();
            return ok(respond(w, 200, Some("application/json"), &[], &j).await);
        }
        (_, "/unauth") => {
            return ok(respond(
                w,
                401,
                Some("text/plain"),
                &[(
                    "WWW-Authenticate",
                    "Bearer resource_metadata=\"http://127.0.0.1/.well-known/oauth-protected-resource\"".into(),
                )],
                b"unauthorized",
            )
            .await)
        }
        (_, "/forbidden") => {
            return ok(respond(w, 403, Some("text/plain"), &[], b"go away").await)
        }
        (_, "/broken") => {
            return ok(respond(
                w,
                500,
                Some("application/json"),
                &[],
                br#"{"jsonrpc":"2.0","error":{"code":-32603,"message":"database on fire"},"id":null}"#,
            )
            .await)
        }
        (_, "/redirect") => {
            let to = req
                .query
                .split('&')
                .find_map(|kv| kv.strip_prefix("to="))
                .unwrap_or("/json")
                .to_string();
            return ok(respond(w, 307, Some("text/plain"), &[("Location", to)], b"moved").await);
        }
        ("POST", "/fallback") => {
            return ok(respond(w, 405, Some("text/plain"), &[], b"use GET").await)
        }
        ("GET", "/fallback") | ("GET", "/legacy/sse") => {
            legacy_stream(state, w).await;
            return false;
        }
        ("POST", "/legacy/messages") => {
            let session = req
                .query
                .split('&')
                .find_map(|kv| kv.strip_prefix("session="))
                .unwrap_or("")
                .to_string();
            let tx = state.legacy.lock().unwrap().get(&session).cloned();
            let Some(tx) = tx else {
                return ok(respond(w, 404, Some("text/plain"), &[], b"no such session").await);
            };
            if !ok(respond(w, 202, None, &[], b"").await) {
                return false;
            }
            if take_client_answer(state, &body) {
                return true;
            }
            let state = state.clone();
            tokio::spawn(async move {
                let (mtx, mut mrx) = mpsc::unbounded_channel::<Value>();
                let fwd = tx.clone();
                let pump = tokio::spawn(async move {
                    while let Some(m) = mrx.recv().await {
                        let _ = fwd.send(event(None, m.to_string().as_bytes()));
                    }
                });
                if let Some(resp) = handle(&state, Profile::Stream, &body, mtx).await {
                    let _ = pump.await;
                    let _ = tx.send(event(None, &serde_json::to_vec(&resp).unwrap_or_default()));
                }
            });
            return true;
        }
        _ => {}
    }
    let Some(profile) = Profile::of(&req.path) else {
        return ok(respond(w, 404, Some("text/plain"), &[], b"no such endpoint").await);
    };
    match req.method.as_str() {
        "POST" => post(state, profile, req, body, r, w).await,
        "GET" => get(state, profile, req, r, w).await,
        "DELETE" => {
            if let Some(id) = req.header("mcp-session-id") {
                state.sessions.lock().unwrap().remove(id);
            }
            ok(respond(w, 200, None, &[], b"").await)
        }
        _ => ok(respond(w, 405, None, &[], b"").await),
    }
}

/// The client answered one of our server requests.
fn take_client_answer(state: &State, body: &Value) -> bool {
    if body.get("method").is_some() {
        return false;
    }
    let Some(id) = body.get("id").and_then(Value::as_str) else {
        return false;
    };
    if let Some(tx) = state.waiting.lock().unwrap().remove(id) {
        let _ = tx.send(body.clone());
    }
    true
}

async fn post(
    state: &Arc<State>,
    profile: Profile,
    req: Request,
    body: Value,
    r: &mut BufReader<OwnedReadHalf>,
    w: &mut OwnedWriteHalf,
) -> bool {
    let ok = |res: std::io::Result<()>| res.is_ok();
    let is_init = body.get("method").and_then(Value::as_str) == Some("initialize");
    let mut extra: Vec<(&str, String)> = Vec::new();
    if profile.sessions() {
        if is_init {
            if req.header("mcp-session-id").is_some() {
                return ok(respond(
                    w,
                    400,
                    Some("text/plain"),
                    &[],
                    b"initialize with a session id",
                )
                .await);
            }
            let id = state.fresh("sess");
            state.sessions.lock().unwrap().insert(id.clone(), profile);
            extra.push(("Mcp-Session-Id", id));
        } else {
            match req.header("mcp-session-id") {
                None => {
                    return ok(respond(w, 400, Some("text/plain"), &[], b"missing session").await)
                }
                Some(id) if !state.sessions.lock().unwrap().contains_key(id) => {
                    return ok(respond(w, 404, Some("text/plain"), &[], b"session expired").await)
                }
                Some(_) => {}
            }
        }
    }
    if take_client_answer(state, &body) || body.get("id").is_none() {
        return ok(respond(w, 202, None, &[], b"").await);
    }
    let session = req.header("mcp-session-id").map(str::to_string);
    let is_call = body.get("method").and_then(Value::as_str) == Some("tools/call");
    if profile == Profile::Cut && is_call {
        let (mtx, _mrx) = mpsc::unbounded_channel();
        let resp = handle(state, profile, &body, mtx).await;
        *state.cut_pending.lock().unwrap() = resp;
        let _ = sse_head(w, &extra).await;
        let _ = sse_send(w, b"id: cut-1\nretry: 100\ndata: \n\n").await;
        state.note("cut");
        return sse_end(w).await;
    }
    if tool_name(&body) == Some("flood") {
        let bytes = body
            .get("params")
            .and_then(|p| p.get("arguments"))
            .and_then(|a| a.get("bytes"))
            .and_then(Value::as_u64)
            .unwrap_or(1 << 20);
        return flood(w, profile.sse(), &body["id"], bytes, &extra).await;
    }
    if !profile.sse() {
        let (mtx, _mrx) = mpsc::unbounded_channel();
        let hang = tool_name(&body) == Some("hang");
        let fut = handle(state, profile, &body, mtx);
        let resp = if hang {
            tokio::select! {
                r = fut => r,
                _ = wait_closed(r) => { state.note("hang-closed"); return false; }
            }
        } else {
            fut.await
        };
        let Some(resp) = resp else { return false };
        let ok1 = ok(respond(
            w,
            200,
            Some("application/json"),
            &extra,
            &serde_json::to_vec(&resp).unwrap_or_default(),
        )
        .await);
        if tool_name(&body) == Some("expire") {
            if let Some(s) = session {
                state.sessions.lock().unwrap().remove(&s);
            }
            if profile == Profile::ExpireGrows {
                state.grown.store(true, Ordering::Relaxed);
            }
        }
        return ok1;
    }
    // An SSE answer: priming event, related messages as they come, then the response.
    let prime = state.fresh("ev");
    let priming = format!("id: {prime}\nretry: 1000\ndata: \n\n");
    let (mtx, mut mrx) = mpsc::unbounded_channel::<Value>();
    let fut = handle(state, profile, &body, mtx);
    tokio::pin!(fut);
    // A handler that answers at once: the whole stream in one write, as a fast server
    // sends it.
    if let Some(resp) = futures::FutureExt::now_or_never(&mut fut) {
        let mut events = vec![priming.into_bytes()];
        while let Ok(m) = mrx.try_recv() {
            let id = state.fresh("ev");
            events.push(event(
                Some(&id),
                &serde_json::to_vec(&m).unwrap_or_default(),
            ));
        }
        if let Some(resp) = resp {
            let id = state.fresh("ev");
            events.push(event(
                Some(&id),
                &serde_json::to_vec(&resp).unwrap_or_default(),
            ));
        }
        return sse_whole(w, &extra, &events).await.is_ok();
    }
    if sse_start(w, &extra, Some(priming.as_bytes()))
        .await
        .is_err()
    {
        return false;
    }
    let mut closed = std::pin::pin!(wait_closed(r));
    loop {
        tokio::select! {
            m = mrx.recv() => {
                if let Some(m) = m {
                    let id = state.fresh("ev");
                    if sse_send(w, &event(Some(&id), m.to_string().as_bytes())).await.is_err() {
                        return false;
                    }
                }
            }
            resp = &mut fut => {
                while let Ok(m) = mrx.try_recv() {
                    let id = state.fresh("ev");
                    let _ = sse_send(w, &event(Some(&id), m.to_string().as_bytes())).await;
                }
                if let Some(resp) = resp {
                    let id = state.fresh("ev");
                    // The response and the end of the stream in one write, as a fast
                    // server sends them.
                    let ev = event(Some(&id), &serde_json::to_vec(&resp).unwrap_or_default());
                    let mut out = format!("{:x}\r\n", ev.len()).into_bytes();
                    out.extend_from_slice(&ev);
                    out.extend_from_slice(b"\r\n0\r\n\r\n");
                    return w.write_all(&out).await.is_ok();
                }
                return sse_end(w).await;
            }
            _ = &mut closed => {
                state.note("hang-closed");
                return false;
            }
        }
    }
}

/// Streams one answer of about `bytes` bytes (a JSON body or one SSE event) in 64 KiB
/// chunks, never holding it; false when the client hung up.
async fn flood(
    w: &mut OwnedWriteHalf,
    sse: bool,
    id: &Value,
    bytes: u64,
    extra: &[(&str, String)],
) -> bool {
    let ct = if sse {
        "text/event-stream"
    } else {
        "application/json"
    };
    let mut head =
        format!("HTTP/1.1 200 OK\r\nContent-Type: {ct}\r\nTransfer-Encoding: chunked\r\n");
    for (k, v) in extra {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    if w.write_all(head.as_bytes()).await.is_err() {
        return false;
    }
    let open = format!(
        r#"{}{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":""#,
        if sse { "event: message\ndata: " } else { "" }
    );
    if sse_send(w, open.as_bytes()).await.is_err() {
        return false;
    }
    let block = vec![b'x'; 64 * 1024];
    let mut sent = 0u64;
    while sent < bytes {
        if sse_send(w, &block).await.is_err() {
            return false;
        }
        sent += block.len() as u64;
    }
    let close = if sse { "\"}]}}\n\n" } else { "\"}]}}" };
    if sse_send(w, close.as_bytes()).await.is_err() {
        return false;
    }
    sse_end(w).await
}

/// Resolves when the client closes its side of the connection.
async fn wait_closed(r: &mut BufReader<OwnedReadHalf>) {
    let mut buf = [0u8; 1024];
    loop {
        match r.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
    }
}

async fn get(
    state: &Arc<State>,
    profile: Profile,
    req: Request,
    r: &mut BufReader<OwnedReadHalf>,
    w: &mut OwnedWriteHalf,
) -> bool {
    let ok = |res: std::io::Result<()>| res.is_ok();
    if profile.sessions() {
        match req.header("mcp-session-id") {
            Some(id) if state.sessions.lock().unwrap().contains_key(id) => {}
            Some(_) => return ok(respond(w, 404, None, &[], b"").await),
            None => return ok(respond(w, 400, None, &[], b"").await),
        }
    }
    match profile {
        Profile::Cut => {
            if req.header("last-event-id").is_none() {
                return ok(respond(w, 405, None, &[], b"").await);
            }
            let pending = state.cut_pending.lock().unwrap().take();
            let _ = sse_head(w, &[]).await;
            if let Some(resp) = pending {
                let _ = sse_send(
                    w,
                    &event(
                        Some("cut-2"),
                        &serde_json::to_vec(&resp).unwrap_or_default(),
                    ),
                )
                .await;
            }
            sse_end(w).await
        }
        Profile::Stream => {
            let _ = sse_head(w, &[]).await;
            let note = json!({"jsonrpc": "2.0", "method": "notifications/message",
                "params": {"level": "info", "logger": "fixture", "data": "hello from the GET stream"}});
            let id = state.fresh("ev");
            if sse_send(w, &event(Some(&id), note.to_string().as_bytes()))
                .await
                .is_ok()
            {
                wait_closed(r).await;
            }
            false
        }
        _ => ok(respond(w, 405, None, &[], b"").await),
    }
}

async fn legacy_stream(state: &Arc<State>, w: &mut OwnedWriteHalf) {
    let session = state.fresh("legacy");
    let (tx, mut rx) = mpsc::unbounded_channel::<Vec<u8>>();
    state.legacy.lock().unwrap().insert(session.clone(), tx);
    if sse_head(w, &[]).await.is_err() {
        return;
    }
    let first = format!("event: endpoint\ndata: /legacy/messages?session={session}\n\n");
    if sse_send(w, first.as_bytes()).await.is_err() {
        return;
    }
    while let Some(ev) = rx.recv().await {
        if sse_send(w, &ev).await.is_err() {
            break;
        }
    }
    state.legacy.lock().unwrap().remove(&session);
}

fn tool_name(body: &Value) -> Option<&str> {
    if body.get("method").and_then(Value::as_str) != Some("tools/call") {
        return None;
    }
    param(body, "name").and_then(Value::as_str)
}

/// A member of a request's params.
fn param<'a>(body: &'a Value, key: &str) -> Option<&'a Value> {
    body.get("params")?.get(key)
}

fn text_result(id: &Value, text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": text}]}})
}

fn tool(name: &str, description: &str, props: Value) -> Value {
    json!({"name": name, "description": description,
        "inputSchema": {"type": "object", "properties": props}})
}

/// One JSON-RPC request: related messages go to `out`, the response is returned (`None`
/// for a notification, or never for `hang`).
async fn handle(
    state: &Arc<State>,
    profile: Profile,
    body: &Value,
    out: mpsc::UnboundedSender<Value>,
) -> Option<Value> {
    let id = body.get("id")?.clone();
    let method = body.get("method").and_then(Value::as_str).unwrap_or("");
    let result = match method {
        "initialize" => {
            let asked = body
                .get("params")
                .and_then(|p| p.get("protocolVersion"))
                .and_then(Value::as_str)
                .unwrap_or("");
            let version = if SUPPORTED.contains(&asked) {
                asked
            } else {
                SUPPORTED[0]
            };
            json!({"protocolVersion": version, "capabilities": {"tools": {"listChanged": true}, "logging": {}},
                "serverInfo": {"name": "mcp-http-fixture", "version": "1.0.0"}})
        }
        "ping" => json!({}),
        "tools/list" if profile == Profile::Dupes => {
            let mut tools = vec![
                tool(
                    "echo",
                    "Return the text unchanged.",
                    json!({"text": {"type": "string"}}),
                ),
                tool("echo", "A second tool named echo.", json!({})),
                tool("get weather", "Spaces.", json!({})),
                tool("get.weather", "A dot.", json!({})),
                tool("get_weather", "Plain.", json!({})),
            ];
            if let Some(extra) = &state.extra_tool {
                tools.push(tool(
                    extra,
                    "Named like another tool's suffixed name.",
                    json!({}),
                ));
            }
            json!({ "tools": tools })
        }
        "tools/list" => {
            let mut list = json!({"tools": [
            tool("echo", "Return the text unchanged.", json!({"text": {"type": "string"}})),
            tool("progress", "Report progress `steps` times, then answer.", json!({"steps": {"type": "integer"}})),
            tool("notify", "Send a log notification, then answer.", json!({})),
            tool("ask", "Ping the client (a server request on the stream) and report its answer.", json!({})),
            tool("sample", "Ask the client for sampling/createMessage and report its answer.", json!({})),
            tool("hang", "Never answer.", json!({})),
            tool("huge", "Answer one text of `bytes` bytes.", json!({"bytes": {"type": "integer"}})),
            tool("expire", "End the session after answering.", json!({})),
            tool("flood", "Stream an answer of `bytes` bytes.", json!({"bytes": {"type": "integer"}})),
            tool("bad_error", "Answer with a malformed error object of `kind`.", json!({"kind": {"type": "string"}})),
            ]});
            if profile == Profile::ExpireGrows && state.grown.load(Ordering::Relaxed) {
                if let Some(tools) = list["tools"].as_array_mut() {
                    tools.push(tool(
                        "renewed",
                        "Listed once a session has expired.",
                        json!({}),
                    ));
                }
            }
            list
        }
        "tools/call" => {
            let no_args = json!({});
            let args = body
                .get("params")
                .and_then(|p| p.get("arguments"))
                .unwrap_or(&no_args);
            let token = param(body, "_meta")
                .and_then(|m| m.get("progressToken"))
                .cloned();
            let text = match body
                .get("params")
                .and_then(|p| p.get("name"))
                .and_then(Value::as_str)
                .unwrap_or("")
            {
                "echo" => args["text"].as_str().unwrap_or("").to_string(),
                "progress" => {
                    let steps = args["steps"].as_u64().unwrap_or(3);
                    for i in 1..=steps {
                        if let Some(t) = &token {
                            let _ = out
                                .send(json!({"jsonrpc": "2.0", "method": "notifications/progress",
                                "params": {"progressToken": t, "progress": i, "total": steps}}));
                        }
                        tokio::time::sleep(Duration::from_millis(10)).await;
                    }
                    format!("did {steps} steps")
                }
                "notify" => {
                    let _ = out.send(json!({"jsonrpc": "2.0", "method": "notifications/message",
                        "params": {"level": "warning", "logger": "fixture", "data": "notify: hello on the stream"}}));
                    "notified".into()
                }
                m @ ("ask" | "sample") => {
                    let sid = state.fresh("srv");
                    let (tx, rx) = oneshot::channel();
                    state.waiting.lock().unwrap().insert(sid.clone(), tx);
                    let request = if m == "ask" {
                        json!({"jsonrpc": "2.0", "id": sid, "method": "ping"})
                    } else {
                        json!({"jsonrpc": "2.0", "id": sid, "method": "sampling/createMessage",
                            "params": {"messages": [], "maxTokens": 5}})
                    };
                    let _ = out.send(request);
                    match tokio::time::timeout(Duration::from_secs(10), rx).await {
                        Ok(Ok(answer)) => match answer.get("error") {
                            Some(e) => {
                                format!("client error: {}", e["message"].as_str().unwrap_or("?"))
                            }
                            None => format!("client answered: {}", answer["result"]),
                        },
                        _ => "no answer from the client".into(),
                    }
                }
                "hang" => {
                    futures::future::pending::<()>().await;
                    unreachable!()
                }
                "huge" => "x".repeat(args["bytes"].as_u64().unwrap_or(1024) as usize),
                "expire" => "the session ends now".into(),
                "bad_error" => {
                    let mut answer = json!({"jsonrpc": "2.0", "id": id});
                    answer["error"] = match args["kind"].as_str().unwrap_or("code") {
                        "code" => json!({"code": "oops", "message": "the code is a string"}),
                        "message" => json!({"code": -32000}),
                        "string" => json!("an error that is only a string"),
                        _ => {
                            return Some(json!({"jsonrpc": "2.0", "id": id}));
                        }
                    };
                    return Some(answer);
                }
                other => {
                    return Some(json!({"jsonrpc": "2.0", "id": id,
                        "error": {"code": -32602, "message": format!("unknown tool {other}")}}))
                }
            };
            let _ = profile;
            return Some(text_result(&id, &text));
        }
        other => {
            return Some(json!({"jsonrpc": "2.0", "id": id,
                "error": {"code": -32601, "message": format!("method not found: {other}")}}))
        }
    };
    Some(json!({"jsonrpc": "2.0", "id": id, "result": result}))
}
