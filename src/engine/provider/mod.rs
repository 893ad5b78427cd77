//! Model providers behind one trait, [`LlmClient`]: the engine hands over a provider-neutral
//! [`ChatRequest`] and reads a stream of [`StreamEvent`]s (text deltas, whole tool calls,
//! the end of the response). Each provider owns its wire format: request encoding and the
//! SSE decoding that assembles streamed tool-call arguments.
//!
//! HTTP goes through reqwest. 429 and 5xx answers are retried with backoff (honouring
//! `retry-after`) a bounded number of times; so are "overloaded" or "rate limited" errors
//! sent inside the stream ([`RETRYABLE_STREAM_ERRORS`]) as long as no text or tool call of
//! the answer was yielded (after that such an error ends the stream, so nothing is shown
//! twice). The stream tells about each retry so a front end can show it. Dropping the
//! stream cancels the request. API keys live only in [`ApiKey`], whose `Debug` hides the
//! value.

pub mod anthropic;
pub mod openai;
pub mod settings;
pub mod setup;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures::stream::BoxStream;
use futures::StreamExt;
use harness9_mcp::transport::sse_parse::{SseEvent, SseParser};
use serde::Serialize;
use serde_json::Value;

pub use settings::{ProviderKind, ProviderOverrides, ProviderSettings, SettingsError};

use super::message::{Message, ToolDefinition};

/// How many times a 429 or 5xx answer (or a busy error in the stream) is retried before
/// the turn fails; one count for both.
pub const DEFAULT_MAX_RETRIES: u32 = 3;
/// First backoff delay when the provider gives no `retry-after`; doubles on each retry.
pub const DEFAULT_RETRY_BASE_DELAY: Duration = Duration::from_secs(1);
/// Longest wait between two attempts, whatever `retry-after` says.
pub const MAX_RETRY_DELAY: Duration = Duration::from_secs(60);
/// How long a streamed response may stay silent before it counts as broken.
pub const DEFAULT_STREAM_IDLE_TIMEOUT: Duration = Duration::from_secs(300);
/// How long connecting to the provider may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// Stop reasons that mean the answer reached the output token limit: Anthropic's
/// `max_tokens`, OpenAI's `length`.
pub const TOKEN_LIMIT_STOP_REASONS: &[&str] = &["max_tokens", "length"];
/// Start of the tool-call ids harness9 makes up for calls a provider sent without one.
pub const FALLBACK_CALL_ID_PREFIX: &str = "call_h9_";
/// The largest one event (its `data:` lines) of a provider's stream: a stream that passes
/// it, such as one without line ends, fails with [`ProviderError::EventTooLarge`] rather
/// than growing memory. Real events are a few kilobytes; a whole tool call's arguments
/// arrive in many of them.
pub const MAX_PROVIDER_EVENT_BYTES: usize = 16 * 1024 * 1024;

/// Everything one model round-trip needs. Cheap to clone (shared parts are `Arc`s).
#[derive(Debug, Clone)]
pub struct ChatRequest {
    pub system: Option<Arc<str>>,
    pub messages: Arc<[Arc<Message>]>,
    pub tools: Arc<[ToolDefinition]>,
    /// What one request overrides (sampling requests from servers set these).
    pub options: RequestOptions,
}

/// Per-request settings beside the provider's own; every field left at its default keeps
/// the provider's behaviour.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RequestOptions {
    /// Another model than the configured one.
    pub model: Option<String>,
    /// At most this many output tokens (never more than the provider's own limit).
    pub max_tokens: Option<u32>,
    pub temperature: Option<f64>,
    pub stop_sequences: Vec<String>,
    /// Whether the model must, may or must not call a tool.
    pub tool_choice: Option<ToolChoice>,
}

/// How a request constrains tool calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolChoice {
    /// The model decides.
    Auto,
    /// The model must call a tool.
    Required,
    /// The model must not call a tool.
    None,
}

/// Token counts the provider reported.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

impl Usage {
    pub fn add(&mut self, other: Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
    }
}

/// One thing a streamed response says, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    /// The request failed with a retryable status, or the stream with a busy error before
    /// any of the answer; the next attempt starts after `delay`.
    Retrying {
        attempt: u32,
        delay: Duration,
        reason: String,
    },
    TextDelta(String),
    /// A piece of the arguments of tool call `id` (of tool `name`) as the model writes
    /// them; the pieces of one call, joined, are its arguments' JSON text. The whole call
    /// follows as [`StreamEvent::ToolCall`] with the same id.
    ToolInputDelta {
        id: String,
        name: String,
        fragment: String,
    },
    /// A whole tool call (streamed argument fragments already joined). `invalid` says why
    /// the arguments were not a JSON object (then `input` is `{}`).
    ToolCall {
        id: String,
        name: String,
        input: Value,
        invalid: Option<String>,
    },
    /// The response is complete.
    Finished {
        /// As the provider said it (see [`hit_token_limit`]).
        stop_reason: Option<String>,
        usage: Usage,
    },
}

/// Whether a stop reason means the answer reached the output token limit.
pub fn hit_token_limit(stop_reason: Option<&str>) -> bool {
    stop_reason.is_some_and(|r| TOKEN_LIMIT_STOP_REASONS.contains(&r))
}

pub type EventStream = BoxStream<'static, Result<StreamEvent, ProviderError>>;

/// What a front end shows about the provider in use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderInfo {
    pub kind: String,
    pub model: String,
    pub base_url: String,
}

/// A model provider.
pub trait LlmClient: Send + Sync {
    fn info(&self) -> &ProviderInfo;
    /// Starts one streamed model response. Nothing happens until the stream is polled;
    /// dropping it cancels the request.
    fn stream(&self, request: ChatRequest) -> EventStream;
}

/// Why a model round-trip failed. The text says what to do.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ProviderError {
    #[error("the model provider rejected the request with {status} ({detail}); check that {key_var} holds a valid API key")]
    Unauthorized {
        status: u16,
        key_var: String,
        detail: String,
    },
    #[error("the model provider is rate limiting (429) and still was after {retries} retries ({detail}); wait a minute and try again, or check your plan's limits")]
    RateLimited { retries: u32, detail: String },
    #[error("the model provider failed with {status} after {retries} retries ({detail}); try again later")]
    Server {
        status: u16,
        retries: u32,
        detail: String,
    },
    #[error("the model provider answered {status}: {detail}")]
    Rejected { status: u16, detail: String },
    #[error(
        "could not reach the model provider at {url}: {detail}; check the network and {url_var}"
    )]
    Network {
        url: String,
        url_var: String,
        detail: String,
    },
    #[error("the model provider's stream broke off: {0}")]
    Stream(String),
    /// One event of the stream passed [`MAX_PROVIDER_EVENT_BYTES`].
    #[error("the model provider at {url} sent a stream event larger than {limit_mib} MiB (or a stream without line ends), so harness9 stopped reading it; check that {url_var} points at the provider's API")]
    EventTooLarge {
        url: String,
        url_var: String,
        limit_mib: usize,
    },
    /// A busy error in the stream (see [`RETRYABLE_STREAM_ERRORS`]) on every attempt.
    #[error("the model provider was still busy after {retries} retries ({kind}: {detail}); try again in a minute")]
    Busy {
        kind: String,
        retries: u32,
        detail: String,
    },
    /// A busy error in the stream after part of the answer was shown (not retried, so that
    /// part is not shown twice).
    #[error("the model provider failed in the middle of the answer ({kind}: {detail}); the answer is incomplete, send your message again")]
    MidAnswer { kind: String, detail: String },
    #[error("the model provider sent an error: {0}")]
    Remote(String),
    #[error("the model provider sent something harness9 does not understand: {0}")]
    Protocol(String),
}

impl ProviderError {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        match self {
            ProviderError::Unauthorized { .. } => "unauthorized",
            ProviderError::RateLimited { .. } => "rate-limited",
            ProviderError::Server { .. } => "provider-failed",
            ProviderError::Rejected { .. } => "request-rejected",
            ProviderError::Network { .. } => "network",
            ProviderError::Stream(_) => "stream-broken",
            ProviderError::EventTooLarge { .. } => "event-too-large",
            ProviderError::Busy { .. } => "provider-busy",
            ProviderError::MidAnswer { .. } => "answer-incomplete",
            ProviderError::Remote(_) => "provider-error",
            ProviderError::Protocol(_) => "protocol-error",
        }
    }
}

/// Retries of 429 and 5xx answers and of busy errors in the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    pub max_retries: u32,
    pub base_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: DEFAULT_MAX_RETRIES,
            base_delay: DEFAULT_RETRY_BASE_DELAY,
        }
    }
}

impl RetryPolicy {
    /// The delay before retry number `attempt` (1-based), from `retry-after` when given.
    fn delay(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        let backoff = self
            .base_delay
            .saturating_mul(1u32 << (attempt - 1).min(16));
        retry_after.unwrap_or(backoff).min(MAX_RETRY_DELAY)
    }
}

/// Reads `retry-after-ms` or `retry-after` (seconds); HTTP dates are not honoured, nor
/// is a value that is not a number (`NaN` parses as an `f64` and would panic in
/// `Duration::from_secs_f64`).
fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let get = |name: &str| headers.get(name)?.to_str().ok()?.trim().parse::<f64>().ok();
    let secs = |s: f64| Duration::try_from_secs_f64(s.clamp(0.0, 3600.0)).ok();
    match get("retry-after-ms") {
        Some(ms) => secs(ms / 1000.0),
        None => secs(get("retry-after")?),
    }
}

/// Shortens a provider's error body to its message.
fn error_detail(body: &str) -> String {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let msg = parsed.as_ref().and_then(|v| {
        v.pointer("/error/message")
            .or_else(|| v.get("message"))
            .or_else(|| v.get("error"))
            .and_then(Value::as_str)
            .map(str::to_string)
    });
    let text = msg.unwrap_or_else(|| body.trim().to_string());
    let mut text: String = text.chars().take(300).collect();
    if text.is_empty() {
        text = "no details".into();
    }
    text
}

/// A fresh id for a tool call the provider sent without one. Random, so it is unique in the
/// whole conversation (every round-trip and turn of it, also after a restart): results,
/// approvals, saved outputs and front ends all find a call by its id.
pub(crate) fn fallback_call_id() -> String {
    /// Tells ids apart should the system give no random numbers.
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut buf = [0u8; 8];
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let random = match getrandom::fill(&mut buf) {
        Ok(()) => u64::from_le_bytes(buf),
        Err(_) => {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default();
            (now.as_nanos() as u64) ^ (u64::from(std::process::id()) << 32)
        }
    };
    format!("{FALLBACK_CALL_ID_PREFIX}{:016x}", random.wrapping_add(n))
}

/// What a provider's HTTP layer needs to send one request.
pub(crate) struct HttpTarget {
    pub http: reqwest::Client,
    pub url: String,
    pub headers: Vec<(&'static str, reqwest::header::HeaderValue)>,
    pub retry: RetryPolicy,
    /// The environment variables named in error messages.
    pub key_var: String,
    pub url_var: String,
    pub idle_timeout: Duration,
}

/// A header value; secret ones are marked sensitive so no debug output shows them. A key
/// with characters a header cannot carry is left out (the provider then answers 401, whose
/// message names the variable to check).
pub(crate) fn header(
    value: String,
    secret: bool,
    var: &str,
) -> Option<reqwest::header::HeaderValue> {
    match reqwest::header::HeaderValue::from_str(&value) {
        Ok(mut v) => {
            v.set_sensitive(secret);
            Some(v)
        }
        Err(_) => {
            tracing::warn!(
                "the value of {var} has characters an HTTP header cannot carry; it is not sent"
            );
            None
        }
    }
}

pub(crate) fn http_client() -> reqwest::Client {
    reqwest::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        .user_agent(concat!("harness9/", env!("CARGO_PKG_VERSION")))
        .build()
        .expect("the HTTP client builds")
}

/// Error types a provider sends inside a stream when it is busy or failing for a moment:
/// Anthropic's `overloaded_error` (its 529), `rate_limit_error` (429) and `api_error` (500),
/// and OpenAI's `server_error` and `rate_limit_exceeded`. They are retried like those
/// statuses while nothing of the answer was yielded.
pub const RETRYABLE_STREAM_ERRORS: &[&str] = &[
    "overloaded_error",
    "rate_limit_error",
    "api_error",
    "server_error",
    "rate_limit_exceeded",
];

/// Why a decoder could not go on with a stream.
#[derive(Debug)]
pub(crate) enum DecodeError {
    /// The provider said in the stream that it is busy or failing for a moment (one of
    /// [`RETRYABLE_STREAM_ERRORS`]); `kind` is its error type.
    Busy { kind: String, detail: String },
    /// Anything else; the stream ends with it.
    Fatal(ProviderError),
}

impl DecodeError {
    /// The error as it ends a stream that is read without retries.
    pub(crate) fn into_error(self) -> ProviderError {
        match self {
            DecodeError::Busy { kind, detail } => ProviderError::Busy {
                kind,
                retries: 0,
                detail,
            },
            DecodeError::Fatal(e) => e,
        }
    }
}

impl From<ProviderError> for DecodeError {
    fn from(e: ProviderError) -> Self {
        DecodeError::Fatal(e)
    }
}

/// Turns SSE events into [`StreamEvent`]s; one per provider. A fresh (default) decoder
/// reads each attempt.
pub(crate) trait Decoder: Default + Send + 'static {
    /// Handles one SSE event; pushes what it yields. `Ok(true)` ends the stream.
    fn event(
        &mut self,
        event: &SseEvent,
        out: &mut VecDeque<StreamEvent>,
    ) -> Result<bool, DecodeError>;
    /// The body ended without an explicit end: whatever is pending, or an error.
    fn finish(&mut self, out: &mut VecDeque<StreamEvent>) -> Result<(), ProviderError>;
}

enum Phase<D> {
    Start,
    /// Waiting out a backoff delay before the next attempt.
    Wait {
        delay: Duration,
    },
    Streaming {
        bytes: BoxStream<'static, reqwest::Result<Vec<u8>>>,
        parser: SseParser,
        decoder: D,
    },
    Done,
}

struct State<D> {
    target: Arc<HttpTarget>,
    body: Arc<Vec<u8>>,
    phase: Phase<D>,
    queue: VecDeque<StreamEvent>,
    attempt: u32,
    /// This attempt yielded text or a tool call: it can no longer be retried without
    /// showing that twice.
    answered: bool,
}

impl<D> State<D> {
    /// Schedules the next attempt when the policy allows one; returns the event that says
    /// so (the wait starts on the next poll).
    fn retry(&mut self, after: Option<Duration>, reason: String) -> Option<StreamEvent> {
        if self.attempt >= self.target.retry.max_retries {
            return None;
        }
        self.attempt += 1;
        let delay = self.target.retry.delay(self.attempt, after);
        self.phase = Phase::Wait { delay };
        self.queue.clear();
        self.answered = false;
        Some(StreamEvent::Retrying {
            attempt: self.attempt,
            delay,
            reason,
        })
    }

    /// What a busy error in the stream comes to: another attempt while nothing of the
    /// answer was yielded, else the error that ends the stream.
    fn busy(&mut self, kind: String, detail: String) -> Result<StreamEvent, ProviderError> {
        if self.answered {
            self.queue.clear();
            return Err(ProviderError::MidAnswer { kind, detail });
        }
        let reason = format!("the provider reported {kind} while streaming: {detail}");
        self.retry(None, reason).ok_or(ProviderError::Busy {
            kind,
            retries: self.attempt,
            detail,
        })
    }
}

/// A parser for one provider stream, bounded by [`MAX_PROVIDER_EVENT_BYTES`].
pub(crate) fn event_parser() -> SseParser {
    SseParser::new(MAX_PROVIDER_EVENT_BYTES)
}

/// The events `chunk` completes. One that passed the limit comes out with `too_large`
/// set (and no data) as soon as it passes it.
pub(crate) fn feed(parser: &mut SseParser, chunk: &[u8]) -> Vec<SseEvent> {
    let mut events = Vec::new();
    parser.feed(chunk, |ev| events.push(ev));
    events
}

/// An event's data as text, as the decoders read it (a stray invalid byte becomes U+FFFD
/// rather than failing the whole event).
pub(crate) fn event_text(ev: &SseEvent) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(&ev.data)
}

/// An event as the parser hands it to a decoder, for the decoders' tests.
#[cfg(test)]
pub(crate) fn test_event(event: &str, data: impl ToString) -> SseEvent {
    SseEvent {
        event: event.into(),
        data: data.to_string().into_bytes(),
        id: None,
        too_large: false,
    }
}

impl HttpTarget {
    fn event_too_large(&self) -> ProviderError {
        ProviderError::EventTooLarge {
            url: self.url.clone(),
            url_var: self.url_var.clone(),
            limit_mib: MAX_PROVIDER_EVENT_BYTES / (1024 * 1024),
        }
    }
}

/// Posts `body` and streams the decoded answer. 429/5xx answers, and busy errors in the
/// stream before any text or tool call was yielded, are retried.
pub(crate) fn post_sse<D: Decoder>(target: Arc<HttpTarget>, body: Vec<u8>) -> EventStream {
    let state = State::<D> {
        target,
        body: Arc::new(body),
        phase: Phase::Start,
        queue: VecDeque::new(),
        attempt: 0,
        answered: false,
    };
    futures::stream::unfold(state, |mut st| async move {
        loop {
            if let Some(ev) = st.queue.pop_front() {
                if matches!(
                    ev,
                    StreamEvent::TextDelta(_)
                        | StreamEvent::ToolInputDelta { .. }
                        | StreamEvent::ToolCall { .. }
                ) {
                    st.answered = true;
                }
                return Some((Ok(ev), st));
            }
            match std::mem::replace(&mut st.phase, Phase::Done) {
                Phase::Done => return None,
                Phase::Wait { delay } => {
                    tokio::time::sleep(delay).await;
                    st.phase = Phase::Start;
                }
                Phase::Start => match send(&st.target, &st.body).await {
                    Ok(resp) => {
                        let bytes = resp.bytes_stream().map(|r| r.map(|b| b.to_vec())).boxed();
                        st.phase = Phase::Streaming {
                            bytes,
                            parser: event_parser(),
                            decoder: D::default(),
                        };
                    }
                    Err(f) => {
                        if let Failure::Retry {
                            status,
                            after,
                            detail,
                        } = &f
                        {
                            let reason = format!("the provider answered {status}: {detail}");
                            if let Some(ev) = st.retry(*after, reason) {
                                return Some((Ok(ev), st));
                            }
                        }
                        return Some((Err(f.into_error(&st.target, st.attempt)), st));
                    }
                },
                Phase::Streaming {
                    mut bytes,
                    mut parser,
                    mut decoder,
                } => {
                    let chunk = tokio::time::timeout(st.target.idle_timeout, bytes.next()).await;
                    let chunk = match chunk {
                        Err(_) => {
                            return Some((
                                Err(ProviderError::Stream(format!(
                                    "no data for {} s",
                                    st.target.idle_timeout.as_secs()
                                ))),
                                st,
                            ))
                        }
                        Ok(c) => c,
                    };
                    match chunk {
                        None => {
                            if let Err(e) = decoder.finish(&mut st.queue) {
                                return Some((Err(e), st));
                            }
                        }
                        Some(Err(e)) => {
                            return Some((Err(ProviderError::Stream(e.to_string())), st));
                        }
                        Some(Ok(data)) => {
                            let mut ended = false;
                            for ev in feed(&mut parser, &data) {
                                if ev.too_large {
                                    return Some((Err(st.target.event_too_large()), st));
                                }
                                match decoder.event(&ev, &mut st.queue) {
                                    Ok(true) => {
                                        ended = true;
                                        break;
                                    }
                                    Ok(false) => {}
                                    Err(DecodeError::Fatal(e)) => return Some((Err(e), st)),
                                    Err(DecodeError::Busy { kind, detail }) => {
                                        let next = st.busy(kind, detail);
                                        return Some((next, st));
                                    }
                                }
                            }
                            if !ended {
                                st.phase = Phase::Streaming {
                                    bytes,
                                    parser,
                                    decoder,
                                };
                            }
                        }
                    }
                }
            }
        }
    })
    .boxed()
}

enum Failure {
    Retry {
        status: u16,
        after: Option<Duration>,
        detail: String,
    },
    Status {
        status: u16,
        detail: String,
    },
    Network(String),
}

impl Failure {
    fn into_error(self, target: &HttpTarget, retries: u32) -> ProviderError {
        match self {
            Failure::Retry {
                status: 429,
                detail,
                ..
            } => ProviderError::RateLimited { retries, detail },
            Failure::Retry { status, detail, .. } => ProviderError::Server {
                status,
                retries,
                detail,
            },
            Failure::Status { status, detail } if status == 401 || status == 403 => {
                ProviderError::Unauthorized {
                    status,
                    key_var: target.key_var.clone(),
                    detail,
                }
            }
            Failure::Status { status, detail } => ProviderError::Rejected { status, detail },
            Failure::Network(detail) => ProviderError::Network {
                url: target.url.clone(),
                url_var: target.url_var.clone(),
                detail,
            },
        }
    }
}

async fn send(target: &HttpTarget, body: &Arc<Vec<u8>>) -> Result<reqwest::Response, Failure> {
    let mut req = target
        .http
        .post(&target.url)
        .header("content-type", "application/json")
        .header("accept", "text/event-stream");
    for (k, v) in &target.headers {
        req = req.header(*k, v.clone());
    }
    let resp = req
        .body(body.as_ref().clone())
        .send()
        .await
        .map_err(|e| Failure::Network(error_chain(&e)))?;
    let status = resp.status().as_u16();
    if resp.status().is_success() {
        return Ok(resp);
    }
    let after = retry_after(resp.headers());
    let body = resp.text().await.unwrap_or_default();
    let detail = error_detail(&body);
    // 529 is Anthropic's "overloaded".
    if status == 429 || status >= 500 {
        Err(Failure::Retry {
            status,
            after,
            detail,
        })
    } else {
        Err(Failure::Status { status, detail })
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(inner) = src {
        let t = inner.to_string();
        if !s.contains(&t) {
            s.push_str(": ");
            s.push_str(&t);
        }
        src = inner.source();
    }
    s
}

/// Builds the client for these settings.
pub fn connect(settings: &ProviderSettings) -> Arc<dyn LlmClient> {
    match settings.kind {
        ProviderKind::Anthropic => Arc::new(anthropic::AnthropicClient::new(settings)),
        ProviderKind::OpenAi => Arc::new(openai::OpenAiClient::new(settings)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_honours_retry_after() {
        let p = RetryPolicy {
            max_retries: 3,
            base_delay: Duration::from_millis(100),
        };
        assert_eq!(p.delay(1, None), Duration::from_millis(100));
        assert_eq!(p.delay(3, None), Duration::from_millis(400));
        assert_eq!(
            p.delay(1, Some(Duration::from_secs(2))),
            Duration::from_secs(2)
        );
        assert_eq!(p.delay(1, Some(Duration::from_secs(999))), MAX_RETRY_DELAY);
    }

    #[test]
    fn retry_after_that_is_not_a_number_is_ignored() {
        let headers = |name: &'static str, value: &'static str| {
            let mut h = reqwest::header::HeaderMap::new();
            h.insert(name, reqwest::header::HeaderValue::from_static(value));
            h
        };
        for (name, value) in [("retry-after", "NaN"), ("retry-after-ms", "nan")] {
            assert_eq!(retry_after(&headers(name, value)), None, "{name}: {value}");
        }
        assert_eq!(
            retry_after(&headers("retry-after", "inf")),
            Some(Duration::from_secs(3600))
        );
        assert_eq!(
            retry_after(&headers("retry-after-ms", "1500")),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(
            retry_after(&headers("retry-after", "-3")),
            Some(Duration::ZERO)
        );
    }

    #[test]
    fn error_detail_takes_the_message() {
        assert_eq!(
            error_detail(
                r#"{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}"#
            ),
            "slow down"
        );
        assert_eq!(error_detail("plain text\n"), "plain text");
        assert_eq!(error_detail(""), "no details");
    }

    #[test]
    fn fallback_call_ids_never_repeat() {
        let ids: std::collections::HashSet<String> =
            (0..1000).map(|_| fallback_call_id()).collect();
        assert_eq!(ids.len(), 1000);
        assert!(ids.iter().all(|id| id.starts_with(FALLBACK_CALL_ID_PREFIX)
            && id.len() == FALLBACK_CALL_ID_PREFIX.len() + 16));
    }
}
