//! A scripted model provider: a local HTTP/1.1 server on 127.0.0.1 that speaks the real
//! streaming wire format of the Anthropic Messages API or of OpenAI Chat Completions and
//! plays scripted replies in order, recording every request it received.
//!
//! Anthropic replies are `message_start`, `content_block_start` / `content_block_delta`
//! (`text_delta`, `input_json_delta`) / `content_block_stop` per block, `message_delta`,
//! `message_stop`. OpenAI replies are `chat.completion.chunk`s with `delta.content` and
//! `delta.tool_calls[index]` (id and name first, then `function.arguments` fragments), a
//! `finish_reason` chunk, a usage chunk and `data: [DONE]`. Text and arguments are split
//! into several fragments, cut in the middle of words and JSON tokens.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use harness9::engine::provider::settings::ApiKey;
use harness9::engine::provider::{self, ProviderKind, ProviderSettings, RetryPolicy};
use harness9::engine::LlmClient;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

pub const TEST_KEY: &str = "sk-test-secret-0123456789";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    Anthropic,
    OpenAi,
}

/// One scripted answer to one request.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A streamed model answer: text (may be empty) then tool calls `(name, arguments)`.
    Turn {
        text: String,
        calls: Vec<(String, Value)>,
    },
    /// An HTTP error status with optional `retry-after` and a JSON error body.
    Status {
        code: u16,
        retry_after: Option<String>,
        message: String,
    },
    /// Starts streaming (one text fragment), then never finishes.
    Hang { text: String },
    /// An answer that stops at the output token limit (Anthropic `max_tokens`, OpenAI
    /// `length`): `text`, then optionally a tool call `(name, arguments so far)` cut in the
    /// middle of its arguments.
    CutOff {
        text: String,
        call: Option<(String, String)>,
    },
    /// Starts streaming the answer (`text`, may be empty), then sends an error inside the
    /// stream (an Anthropic `error` event, an OpenAI `error` chunk) of type `kind` and ends.
    StreamError {
        text: String,
        kind: String,
        message: String,
    },
    /// These SSE events as given, each its own HTTP chunk (wire details the other replies
    /// do not show).
    Raw(Vec<String>),
}

impl Reply {
    pub fn text(t: &str) -> Reply {
        Reply::Turn {
            text: t.into(),
            calls: vec![],
        }
    }

    pub fn tool(name: &str, args: Value) -> Reply {
        Reply::Turn {
            text: String::new(),
            calls: vec![(name.into(), args)],
        }
    }

    pub fn tools(calls: &[(&str, Value)]) -> Reply {
        Reply::Turn {
            text: String::new(),
            calls: calls
                .iter()
                .map(|(n, a)| (n.to_string(), a.clone()))
                .collect(),
        }
    }

    /// An OpenAI answer with one tool call whose id is `id` as given, or no `id` field at
    /// all (as some compatible servers send it).
    pub fn openai_call_with_id(id: Option<&str>, name: &str, args: Value) -> Reply {
        let mut head =
            json!({"index": 0, "type": "function", "function": {"name": name, "arguments": ""}});
        if let Some(id) = id {
            head["id"] = json!(id);
        }
        let mut out = vec![
            openai_chunk(json!({"role": "assistant", "content": null}), None),
            openai_chunk(json!({"tool_calls": [head]}), None),
        ];
        for f in fragments(&args.to_string()) {
            out.push(openai_chunk(
                json!({"tool_calls": [{"index": 0, "function": {"arguments": f}}]}),
                None,
            ));
        }
        out.push(openai_chunk(json!({}), Some("tool_calls")));
        out.push("data: [DONE]\n\n".into());
        Reply::Raw(out)
    }

    pub fn cut_off(text: &str) -> Reply {
        Reply::CutOff {
            text: text.into(),
            call: None,
        }
    }

    pub fn stream_error(text: &str, kind: &str, message: &str) -> Reply {
        Reply::StreamError {
            text: text.into(),
            kind: kind.into(),
            message: message.into(),
        }
    }

    pub fn status(code: u16, retry_after: Option<&str>, message: &str) -> Reply {
        Reply::Status {
            code,
            retry_after: retry_after.map(str::to_string),
            message: message.into(),
        }
    }
}

/// One request as the stub received it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Value,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Names of the tools the request offered.
    pub fn tool_names(&self) -> Vec<String> {
        self.body["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| {
                t.get("name")
                    .or_else(|| t.pointer("/function/name"))
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string()
            })
            .collect()
    }

    pub fn messages(&self) -> &Vec<Value> {
        self.body["messages"].as_array().expect("messages array")
    }
}

#[derive(Default)]
struct State {
    script: VecDeque<Reply>,
    requests: Vec<Recorded>,
    next_call: usize,
}

pub struct Stub {
    pub wire: Wire,
    port: u16,
    state: Arc<Mutex<State>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Stub {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Stub {
    pub async fn start(wire: Wire, script: Vec<Reply>) -> Stub {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let state = Arc::new(Mutex::new(State {
            script: script.into(),
            ..State::default()
        }));
        let s = state.clone();
        let task = tokio::spawn(async move {
            while let Ok((conn, _)) = listener.accept().await {
                tokio::spawn(serve(conn, wire, s.clone()));
            }
        });
        Stub {
            wire,
            port,
            state,
            task,
        }
    }

    /// The base URL as the SDK variables take it.
    pub fn base_url(&self) -> String {
        match self.wire {
            Wire::Anthropic => format!("http://127.0.0.1:{}", self.port),
            Wire::OpenAi => format!("http://127.0.0.1:{}/v1", self.port),
        }
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.state.lock().unwrap().requests.clone()
    }

    /// Replies not played yet.
    pub fn remaining(&self) -> usize {
        self.state.lock().unwrap().script.len()
    }

    /// Provider settings pointing at this stub (retries after 10 ms unless told).
    pub fn settings(&self) -> ProviderSettings {
        let (kind, key_env, url_env) = match self.wire {
            Wire::Anthropic => (
                ProviderKind::Anthropic,
                "ANTHROPIC_API_KEY",
                "ANTHROPIC_BASE_URL",
            ),
            Wire::OpenAi => (ProviderKind::OpenAi, "OPENAI_API_KEY", "OPENAI_BASE_URL"),
        };
        ProviderSettings {
            kind,
            model: "stub-model".into(),
            base_url: self.base_url(),
            api_key_env: key_env.into(),
            api_key: Some(test_key()),
            base_url_env: url_env.into(),
            max_tokens: 1024,
            context_window: 128_000,
            images: true,
            retry: RetryPolicy {
                max_retries: 3,
                base_delay: Duration::from_millis(10),
            },
            idle_timeout: Duration::from_secs(30),
            sampling_models: Vec::new(),
        }
    }

    pub fn client(&self) -> Arc<dyn LlmClient> {
        provider::connect(&self.settings())
    }
}

fn test_key() -> ApiKey {
    ApiKey::new(TEST_KEY)
}

async fn serve(mut conn: TcpStream, wire: Wire, state: Arc<Mutex<State>>) {
    let Some((path, headers, body)) = read_request(&mut conn).await else {
        return;
    };
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    // A key other than the test key is refused, as the real APIs refuse it (no key at all
    // passes: local OpenAI-compatible servers take requests without one).
    if let Some(refused) = wrong_key(wire, &headers) {
        state.lock().unwrap().requests.push(Recorded {
            path,
            headers,
            body,
        });
        let _ = write_refusal(&mut conn, wire, refused).await;
        return;
    }
    let (reply, first_call) = {
        let mut st = state.lock().unwrap();
        st.requests.push(Recorded {
            path,
            headers,
            body,
        });
        let reply = st.script.pop_front();
        let first = st.next_call;
        match &reply {
            Some(Reply::Turn { calls, .. }) => st.next_call += calls.len(),
            Some(Reply::CutOff { call: Some(_), .. }) => st.next_call += 1,
            _ => {}
        }
        (reply, first)
    };
    let Some(reply) = reply else {
        let _ = write_status(
            &mut conn,
            400,
            None,
            "the stub has no more scripted replies",
        )
        .await;
        return;
    };
    match reply {
        Reply::Status {
            code,
            retry_after,
            message,
        } => {
            let _ = write_status(&mut conn, code, retry_after.as_deref(), &message).await;
        }
        Reply::Turn { text, calls } => {
            let events = match wire {
                Wire::Anthropic => anthropic_events(&text, &calls, first_call),
                Wire::OpenAi => openai_events(&text, &calls, first_call),
            };
            let _ = write_stream(&mut conn, &events).await;
        }
        Reply::CutOff { text, call } => {
            let call = call.as_ref().map(|(n, a)| (n.as_str(), a.as_str()));
            let events = match wire {
                Wire::Anthropic => anthropic_cut_off_events(&text, call, first_call),
                Wire::OpenAi => openai_cut_off_events(&text, call, first_call),
            };
            let _ = write_stream(&mut conn, &events).await;
        }
        Reply::StreamError {
            text,
            kind,
            message,
        } => {
            let events = match wire {
                Wire::Anthropic => anthropic_error_events(&text, &kind, &message),
                Wire::OpenAi => openai_error_events(&text, &kind, &message),
            };
            let _ = write_stream(&mut conn, &events).await;
        }
        Reply::Raw(events) => {
            let _ = write_stream(&mut conn, &events).await;
        }
        Reply::Hang { text } => {
            let events = match wire {
                Wire::Anthropic => anthropic_events(&text, &[], 0),
                Wire::OpenAi => openai_events(&text, &[], 0),
            };
            // Everything up to the first text fragment, then silence.
            let cut = match wire {
                Wire::Anthropic => 3,
                Wire::OpenAi => 2,
            };
            if write_head(&mut conn).await.is_ok() {
                for e in &events[..cut] {
                    if write_chunk(&mut conn, e.as_bytes()).await.is_err() {
                        return;
                    }
                }
                tokio::time::sleep(Duration::from_secs(3600)).await;
            }
        }
    }
}

async fn read_request(conn: &mut TcpStream) -> Option<(String, Vec<(String, String)>, Vec<u8>)> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        let n = conn.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let request_line = lines.next()?;
    let path = request_line.split_whitespace().nth(1)?.to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    let len: usize = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < len {
        let n = conn.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Some((path, headers, body))
}

/// The error a wrong key gets, as each API words it; `None` for the test key or none.
fn wrong_key(wire: Wire, headers: &[(String, String)]) -> Option<&'static str> {
    let get = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    };
    let key = match wire {
        Wire::Anthropic => get("x-api-key"),
        Wire::OpenAi => get("authorization").map(|v| v.trim_start_matches("Bearer ")),
    }?;
    (key != TEST_KEY).then_some(match wire {
        Wire::Anthropic => "invalid x-api-key",
        Wire::OpenAi => "Incorrect API key provided.",
    })
}

/// A 401 with the body each API sends for a refused key.
async fn write_refusal(conn: &mut TcpStream, wire: Wire, message: &str) -> std::io::Result<()> {
    let body = match wire {
        Wire::Anthropic => {
            json!({"type": "error", "error": {"type": "authentication_error", "message": message}})
        }
        Wire::OpenAi => {
            json!({"error": {"message": message, "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}})
        }
    }
    .to_string();
    let head = format!(
        "HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    );
    conn.write_all(head.as_bytes()).await?;
    conn.write_all(body.as_bytes()).await?;
    conn.shutdown().await
}

async fn write_status(
    conn: &mut TcpStream,
    code: u16,
    retry_after: Option<&str>,
    message: &str,
) -> std::io::Result<()> {
    let body =
        json!({"type": "error", "error": {"type": "stub_error", "message": message}}).to_string();
    let mut head = format!(
        "HTTP/1.1 {code} Stub\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
        body.len()
    );
    if let Some(r) = retry_after {
        head.push_str(&format!("retry-after: {r}\r\n"));
    }
    head.push_str("\r\n");
    conn.write_all(head.as_bytes()).await?;
    conn.write_all(body.as_bytes()).await?;
    conn.shutdown().await
}

async fn write_head(conn: &mut TcpStream) -> std::io::Result<()> {
    conn.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n").await
}

async fn write_chunk(conn: &mut TcpStream, data: &[u8]) -> std::io::Result<()> {
    conn.write_all(format!("{:x}\r\n", data.len()).as_bytes())
        .await?;
    conn.write_all(data).await?;
    conn.write_all(b"\r\n").await?;
    conn.flush().await
}

/// Each event is its own HTTP chunk, as a real server flushes them.
async fn write_stream(conn: &mut TcpStream, events: &[String]) -> std::io::Result<()> {
    write_head(conn).await?;
    for e in events {
        write_chunk(conn, e.as_bytes()).await?;
    }
    conn.write_all(b"0\r\n\r\n").await?;
    conn.shutdown().await
}

/// Splits text into pieces of up to 7 characters (so words and JSON tokens are cut).
fn fragments(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(7).map(|c| c.iter().collect()).collect()
}

fn anthropic_event(v: Value) -> String {
    format!("event: {}\ndata: {v}\n\n", v["type"].as_str().unwrap())
}

fn anthropic_events(text: &str, calls: &[(String, Value)], first_call: usize) -> Vec<String> {
    let mut out = vec![
        anthropic_event(
            json!({"type": "message_start", "message": {"id": "msg_stub", "type": "message", "role": "assistant", "model": "stub-model", "content": [], "stop_reason": null, "stop_sequence": null, "usage": {"input_tokens": 25, "output_tokens": 1}}}),
        ),
        anthropic_event(json!({"type": "ping"})),
    ];
    let mut index = 0;
    if !text.is_empty() {
        out.push(anthropic_event(json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}})));
        for f in fragments(text) {
            out.push(anthropic_event(json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": f}})));
        }
        out.push(anthropic_event(
            json!({"type": "content_block_stop", "index": index}),
        ));
        index += 1;
    }
    for (k, (name, args)) in calls.iter().enumerate() {
        let id = format!("toolu_{}", first_call + k + 1);
        out.push(anthropic_event(json!({"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}})));
        out.push(anthropic_event(json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": ""}})));
        for f in fragments(&args.to_string()) {
            out.push(anthropic_event(json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": f}})));
        }
        out.push(anthropic_event(
            json!({"type": "content_block_stop", "index": index}),
        ));
        index += 1;
    }
    let stop = if calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    out.push(anthropic_event(json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": 17}})));
    out.push(anthropic_event(json!({"type": "message_stop"})));
    out
}

/// An answer stopped by `max_tokens`, as Anthropic streams it.
fn anthropic_cut_off_events(
    text: &str,
    call: Option<(&str, &str)>,
    first_call: usize,
) -> Vec<String> {
    let mut out = anthropic_events(text, &[], 0);
    // Without message_delta and message_stop.
    out.truncate(out.len() - 2);
    if let Some((name, args)) = call {
        let index = usize::from(!text.is_empty());
        let id = format!("toolu_{}", first_call + 1);
        out.push(anthropic_event(json!({"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}})));
        for f in fragments(args) {
            out.push(anthropic_event(json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": f}})));
        }
        out.push(anthropic_event(
            json!({"type": "content_block_stop", "index": index}),
        ));
    }
    out.push(anthropic_event(json!({"type": "message_delta", "delta": {"stop_reason": "max_tokens", "stop_sequence": null}, "usage": {"output_tokens": 1024}})));
    out.push(anthropic_event(json!({"type": "message_stop"})));
    out
}

/// An answer stopped by the token limit (`finish_reason: length`), as OpenAI streams it.
fn openai_cut_off_events(text: &str, call: Option<(&str, &str)>, first_call: usize) -> Vec<String> {
    let mut out = openai_events(text, &[], 0);
    // Without the finish_reason chunk, the usage chunk and [DONE].
    let tail = out.split_off(out.len() - 3);
    if let Some((name, args)) = call {
        let id = format!("call_{}", first_call + 1);
        out.push(openai_chunk(json!({"tool_calls": [{"index": 0, "id": id, "type": "function", "function": {"name": name, "arguments": ""}}]}), None));
        for f in fragments(args) {
            out.push(openai_chunk(
                json!({"tool_calls": [{"index": 0, "function": {"arguments": f}}]}),
                None,
            ));
        }
    }
    out.push(openai_chunk(json!({}), Some("length")));
    out.extend(tail.into_iter().skip(1));
    out
}

/// The start of an answer, its text, then an `error` event as Anthropic streams it.
fn anthropic_error_events(text: &str, kind: &str, message: &str) -> Vec<String> {
    let mut out = anthropic_events(text, &[], 0);
    // Up to the last text fragment: no content_block_stop, message_delta, message_stop.
    out.truncate(out.len() - if text.is_empty() { 2 } else { 3 });
    out.push(anthropic_event(
        json!({"type": "error", "error": {"type": kind, "message": message}}),
    ));
    out
}

/// The start of an answer, its text, then an `error` chunk as OpenAI streams it.
fn openai_error_events(text: &str, kind: &str, message: &str) -> Vec<String> {
    let mut out = vec![openai_chunk(
        json!({"role": "assistant", "content": ""}),
        None,
    )];
    for f in fragments(text) {
        out.push(openai_chunk(json!({"content": f}), None));
    }
    let error = json!({"error": {"message": message, "type": kind, "param": null, "code": null}});
    out.push(format!("data: {error}\n\n"));
    out
}

fn openai_chunk(delta: Value, finish: Option<&str>) -> String {
    let v = json!({"id": "chatcmpl-stub", "object": "chat.completion.chunk", "created": 1_700_000_000, "model": "stub-model", "system_fingerprint": "fp_stub", "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}], "usage": null});
    format!("data: {v}\n\n")
}

fn openai_events(text: &str, calls: &[(String, Value)], first_call: usize) -> Vec<String> {
    let mut out = vec![openai_chunk(
        json!({"role": "assistant", "content": ""}),
        None,
    )];
    for f in fragments(text) {
        out.push(openai_chunk(json!({"content": f}), None));
    }
    for (k, (name, args)) in calls.iter().enumerate() {
        let id = format!("call_{}", first_call + k + 1);
        out.push(openai_chunk(json!({"tool_calls": [{"index": k, "id": id, "type": "function", "function": {"name": name, "arguments": ""}}]}), None));
        for f in fragments(&args.to_string()) {
            out.push(openai_chunk(
                json!({"tool_calls": [{"index": k, "function": {"arguments": f}}]}),
                None,
            ));
        }
    }
    let finish = if calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    out.push(openai_chunk(json!({}), Some(finish)));
    let usage = json!({"id": "chatcmpl-stub", "object": "chat.completion.chunk", "created": 1_700_000_000, "model": "stub-model", "choices": [], "usage": {"prompt_tokens": 25, "completion_tokens": 17, "total_tokens": 42}});
    out.push(format!("data: {usage}\n\n"));
    out.push("data: [DONE]\n\n".into());
    out
}
