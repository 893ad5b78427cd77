//! Modern requests and multi round-trip requests (MRTR). Every modern result says what it
//! is in `resultType` (none means complete; an unknown value is an invalid answer).
//! `tools/call`, `prompts/get` and `resources/read` may answer `input_required`: each of
//! its `inputRequests` goes through the same handler the legacy server→client requests
//! use (so the user sees the same consent dialogs), and the original request is sent
//! again with a new id, `inputResponses` under the same keys and the `requestState`
//! exactly as the server wrote it. At most [`MAX_INPUT_ROUNDS`] rounds. Nothing of a
//! round outlives the request it belongs to. A request whose answer stream broke (modern
//! HTTP has no resumption; the transport says so) is sent again with a new id, at most
//! [`MAX_REISSUES`] times.

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::{ClientError, Inner, Params, ReplyBody, RequestOptions};
use crate::log::LogSource;
use crate::protocol::era::{self, InputRequired, ResultKind, MAX_INPUT_ROUNDS};
use crate::protocol::jsonrpc::RpcError;
use crate::protocol::schema_text::escapes_ascii;
use crate::protocol::types::{CallToolResult, ListToolsPage, ToolDef};
use crate::transport::http::{STREAM_BROKEN, TRANSPORT_ERROR_CODE};
use crate::transport::mcp_headers;

/// Most times one request is sent again after its answer stream broke.
const MAX_REISSUES: usize = 2;

/// Whether the transport says the answer stream broke before the response.
fn stream_broke(error: &RpcError) -> bool {
    error.code == TRANSPORT_ERROR_CODE
        && error
            .data
            .as_ref()
            .and_then(|d| d.get(STREAM_BROKEN))
            .and_then(Value::as_bool)
            .unwrap_or(false)
}

/// The searcher for the `resultType` key, built once (building one per answer costs more
/// than searching a small one).
static RESULT_TYPE: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\"resultType\""));

/// Whether a result is complete by its text alone: an object in which `"resultType"`
/// appears nowhere, or exactly once and written `"resultType":"complete"` (if that one is
/// nested deeper, the result itself has none, which also means complete). A result with
/// an escaped ASCII character (`"result\u0054ype"` is the key too) or with the key twice
/// (a duplicate the full parse refuses, or one nested beside the result's own) is parsed.
pub fn plainly_complete(body: &[u8]) -> bool {
    if body.trim_ascii_start().first() != Some(&b'{') || escapes_ascii(body) {
        return false;
    }
    let mut found = RESULT_TYPE.find_iter(body);
    match (found.next(), found.next()) {
        (None, _) => true,
        (Some(at), None) => body
            .get(at + RESULT_TYPE.needle().len()..)
            .is_some_and(|rest| rest.starts_with(br#":"complete""#)),
        (Some(_), Some(_)) => false,
    }
}

/// The requests a server may answer with `input_required`.
const MRTR_METHODS: &[&str] = &["tools/call", "prompts/get", "resources/read"];

/// The full parse of a result's kind, where [`plainly_complete`] cannot tell.
#[derive(Deserialize)]
pub struct ResultHeader {
    #[serde(rename = "resultType", default)]
    pub result_type: Option<String>,
}

impl Inner {
    pub(super) async fn request_modern(
        &self,
        method: &str,
        params: &Params<'_>,
        opts: RequestOptions,
        cancellable: bool,
    ) -> Result<ReplyBody, ClientError> {
        self.request_modern_kind(method, params, opts, cancellable)
            .await
            .map(|(body, _)| body)
    }

    /// [`Inner::request_modern`], saying whether the answer is a task (`resultType`
    /// `"task"`, which only `tools/call` may answer) rather than the complete result.
    pub(super) async fn request_modern_kind(
        &self,
        method: &str,
        params: &Params<'_>,
        opts: RequestOptions,
        cancellable: bool,
    ) -> Result<(ReplyBody, bool), ClientError> {
        // The usual case, kept small: one answer, plainly complete.
        let first = self
            .request_once(method, params, opts.clone(), cancellable)
            .await;
        if let Ok(body) = &first {
            // A plain text tool result (the usual answer) is told by its fixed shape,
            // faster than by searching it for `"resultType"`.
            let text = body.get();
            if CallToolResult::is_plain_text(text) || plainly_complete(text.as_bytes()) {
                return first.map(|body| (body, false));
            }
        }
        Box::pin(self.request_rounds(first, method, params, opts, cancellable)).await
    }

    /// The rest of a modern request after its `first` answer: `resultType`, input rounds,
    /// re-issues after a broken stream, a re-listing after a header mismatch. The flag
    /// says the answer is a task.
    async fn request_rounds(
        &self,
        first: Result<ReplyBody, ClientError>,
        method: &str,
        params: &Params<'_>,
        opts: RequestOptions,
        cancellable: bool,
    ) -> Result<(ReplyBody, bool), ClientError> {
        let mut first = Some(first);
        let invalid = |detail: String| ClientError::Invalid {
            method: method.into(),
            detail,
        };
        let mut retry: Option<Params<'static>> = None;
        // The original params as an object's text without its closing brace.
        let mut base: Option<String> = None;
        let mut reissues = 0;
        let mut relisted = false;
        let mut round = 0;
        loop {
            let sent = retry.as_ref().unwrap_or(params);
            let outcome = match first.take() {
                Some(outcome) => outcome,
                None => {
                    // A retry's params are text: its headers are the original request's.
                    let era = self.era_headers(method, Some(params));
                    self.request_once_as(method, sent, opts.clone(), cancellable, Some(era))
                        .await
                }
            };
            let body = match outcome {
                Ok(body) => body,
                // The answer stream broke (modern HTTP has no resumption): the same
                // request again, with a new id.
                Err(ClientError::Rpc { error, .. })
                    if stream_broke(&error) && reissues < MAX_REISSUES =>
                {
                    reissues += 1;
                    continue;
                }
                // The tool's `x-mcp-header` parameters changed since it was listed: list
                // the tools again (the transport learns the new ones) and retry once.
                Err(ClientError::Rpc { error, .. })
                    if error.code == era::HEADER_MISMATCH
                        && method == "tools/call"
                        && !relisted =>
                {
                    relisted = true;
                    self.relist_tools(&opts).await?;
                    let _ = self.events.send(super::ClientEvent::ToolsChanged);
                    continue;
                }
                Err(e) => return Err(e),
            };
            if plainly_complete(body.get().as_bytes()) {
                return Ok((body, false));
            }
            let header: ResultHeader = body.parse(method)?;
            match era::result_kind_of(header.result_type.as_deref())
                .map_err(|e| invalid(e.to_string()))?
            {
                ResultKind::Complete => return Ok((body, false)),
                ResultKind::Task if method == "tools/call" => return Ok((body, true)),
                ResultKind::Task => {
                    return Err(invalid(format!(
                        "a task was returned for {method}, which cannot become a task"
                    )))
                }
                ResultKind::InputRequired if !MRTR_METHODS.contains(&method) => {
                    return Err(invalid(
                        "input_required is only allowed on tools/call, prompts/get and resources/read".into(),
                    ))
                }
                ResultKind::InputRequired if round == MAX_INPUT_ROUNDS => {
                    return Err(invalid(format!(
                        "the server still asked for input after {MAX_INPUT_ROUNDS} rounds; harness9 gave up"
                    )))
                }
                ResultKind::InputRequired => {}
            }
            let asked: InputRequired = body.parse(method)?;
            drop(body);
            if asked.input_requests.is_empty() && asked.request_state.is_none() {
                return Err(invalid(
                    "input_required without inputRequests or requestState".into(),
                ));
            }
            let responses = self.fulfil(method, asked.input_requests).await?;
            let base = base.get_or_insert_with(|| open_object(params));
            retry = Some(Params::Raw(retry_params(
                base,
                &responses,
                asked.request_state.as_deref(),
            )));
            round += 1;
        }
    }

    /// Every page of `tools/list`, for their mirrored parameters (the caller re-lists for
    /// the registry on the `ToolsChanged` event). Sent as they are, past the list cache and
    /// without `resultType` rounds.
    async fn relist_tools(&self, opts: &RequestOptions) -> Result<(), ClientError> {
        let opts = RequestOptions {
            timeout: opts.timeout,
            ..RequestOptions::default()
        };
        super::pages::all_pages(
            "tools/list",
            super::MAX_TOOL_PAGES,
            |params| {
                let opts = opts.clone();
                async move { self.request_once("tools/list", &params, opts, true).await }
            },
            |p: ListToolsPage| {
                mcp_headers::note_tools(&p.tools, &mut self.tool_headers.lock());
                (Vec::<()>::new(), p.next_cursor)
            },
        )
        .await
        .map(drop)
    }

    /// Answers every input request of one round, one after the other (one dialog at a time).
    async fn fulfil(
        &self,
        method: &str,
        requests: Map<String, Value>,
    ) -> Result<Map<String, Value>, ClientError> {
        let mut responses = Map::with_capacity(requests.len());
        for (key, request) in requests {
            let asked = request
                .get("method")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let params = request
                .get("params")
                .cloned()
                .unwrap_or_else(|| Value::Object(Map::new()));
            match self.handle_request(&asked, params).await {
                Ok(result) => {
                    responses.insert(key, result);
                }
                Err(e) => {
                    return Err(ClientError::Invalid {
                        method: method.into(),
                        detail: format!(
                        "it asked for {asked:?} (input {key:?}), which harness9 could not give: {}",
                        e.message
                    ),
                    })
                }
            }
        }
        Ok(responses)
    }
}

impl Inner {
    /// Drops the tools whose `x-mcp-header` annotations are invalid (modern era: a client
    /// must not offer them); the server log says which and why.
    pub(super) fn without_bad_headers(&self, mut tools: Vec<ToolDef>) -> Vec<ToolDef> {
        mcp_headers::note_tools(&tools, &mut self.tool_headers.lock());
        tools.retain(|t| match mcp_headers::header_params_text(&t.input_schema) {
            Ok(_) => true,
            Err(why) => {
                let text = format!("the tool {:?} is not offered: {why}", t.name);
                tracing::warn!(server = %self.name, "{text}");
                self.log.push(LogSource::Host, "warning", &text);
                false
            }
        });
        tools
    }
}

/// The params as an object's JSON text without the closing brace, without what a retry
/// replaces (`inputResponses`, `requestState`, `_meta`).
fn open_object(params: &Params) -> String {
    let mut map = match params.to_value() {
        Some(Value::Object(map)) => map,
        _ => Map::new(),
    };
    for key in ["inputResponses", "requestState", "_meta"] {
        map.remove(key);
    }
    let mut text = Value::Object(map).to_string();
    text.pop();
    text
}

/// `base` closed with `inputResponses` and the byte-exact `requestState`.
fn retry_params(base: &str, responses: &Map<String, Value>, state: Option<&RawValue>) -> String {
    let mut text = String::with_capacity(base.len() + 64);
    text.push_str(base);
    let mut sep = if base.ends_with('{') { "" } else { "," };
    if !responses.is_empty() {
        text.push_str(sep);
        text.push_str("\"inputResponses\":");
        text.push_str(&Value::Object(responses.clone()).to_string());
        sep = ",";
    }
    if let Some(state) = state {
        text.push_str(sep);
        text.push_str("\"requestState\":");
        text.push_str(state.get());
    }
    text.push('}');
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_plainly_complete_results_skip_parsing() {
        let complete = |text: &str| plainly_complete(text.as_bytes());
        assert!(complete(r#"{"content":[]}"#));
        assert!(complete(r#"{"resultType":"complete","content":[]}"#));
        assert!(complete(r#"{"content":[],"resultType":"complete"}"#));
        assert!(!complete(
            r#"{"resultType":"input_required","inputRequests":{}}"#
        ));
        assert!(!complete(r#"{"resultType" : "complete"}"#));
        assert!(!complete(r#"{"resultType":"completely"}"#));
        assert!(!complete(
            r#"{"structuredContent":{"resultType":"complete"},"resultType":"input_required"}"#
        ));
        assert!(!complete(r#"{"resultType":"bogus"}"#));
        assert!(complete(r#"{"resultType":"complete"}"#));
        // Two of them: parsed (one may be a duplicate the full parse refuses).
        assert!(!complete(
            r#"{"resultType":"complete","structuredContent":{"resultType":"x"}}"#
        ));
        assert!(!complete(
            r#"{"resultType":"input_required","inputRequests":{},"resultType":"complete"}"#
        ));
        assert!(!complete(
            r#"{"resultType":"complete","resultType":"input_required"}"#
        ));
        // An escaped key is the same key; an array or a string is no result object.
        assert!(!complete(
            r#"{"result\u0054ype":"input_required","inputRequests":{}}"#
        ));
        assert!(!complete(r#"["input_required"]"#));
        assert!(!complete(r#""x""#));
        assert!(complete(r#"{"text":"caf\u00e9"}"#));
        assert!(!complete(r#"{"resultType":"completes"}"#));
        assert!(!complete(
            r#"{"resultType":"input_required","s":{"resultType":"complete"}}"#
        ));
    }

    #[test]
    fn retries_keep_the_params_and_the_exact_state() {
        let params = Params::ToolCall {
            name: "t",
            arguments: Some(json!({"a": 1})),
        };
        let base = open_object(&params);
        let mut responses = Map::new();
        responses.insert("k".into(), json!({"action": "accept"}));
        let state = RawValue::from_string(r#""s\u00e9\/x""#.into()).unwrap();
        assert_eq!(
            retry_params(&base, &responses, Some(&state)),
            r#"{"name":"t","arguments":{"a":1},"inputResponses":{"k":{"action":"accept"}},"requestState":"s\u00e9\/x"}"#
        );
        assert_eq!(
            retry_params(&open_object(&Params::None), &Map::new(), Some(&state)),
            r#"{"requestState":"s\u00e9\/x"}"#
        );
    }
}
