//! OpenAI Chat Completions with streaming (`POST {base}/chat/completions`, `stream: true`),
//! also spoken by compatible servers (Ollama, vLLM, llama.cpp server, LM Studio,
//! OpenRouter): only the base URL, model and key variable differ.
//!
//! Encoding: tool calls are `tool_calls` of the assistant message (arguments as a JSON
//! string); each result is a `tool` message right after it. Tool images cannot go in a
//! `tool` message, so they follow in one user message with `image_url` parts (or a text
//! placeholder when images are off). Decoding: `chat.completion.chunk`s carry
//! `delta.content` text and `delta.tool_calls[index]` fragments (id and name first, then
//! `function.arguments` pieces, the deltas of several calls possibly interleaved); the
//! pieces are yielded as they come once a call's id and name are known, and calls are
//! yielded whole once `finish_reason` arrives, and `[DONE]` ends the stream. Some compatible
//! servers leave out `index` (then a delta with a new `id` starts a call and one without
//! goes on with the last) or number every call 0 (a new `id` starts a call there too); a
//! call without an id gets a made-up one that is unique in the conversation. An `error`
//! chunk that means busy is retried while nothing of the answer was yielded (see
//! [`stream_error`]).

use std::collections::VecDeque;
use std::sync::Arc;

use harness9_mcp::transport::sse_parse::SseEvent;
use serde_json::{json, Map, Value};

use super::anthropic::tool_call;
use super::{
    event_text, post_sse, ChatRequest, DecodeError, Decoder, EventStream, HttpTarget, LlmClient,
    ProviderError, ProviderInfo, ProviderSettings, StreamEvent, ToolChoice, Usage,
    RETRYABLE_STREAM_ERRORS,
};
use crate::engine::message::{Block, ResultPart, Role};

pub struct OpenAiClient {
    info: ProviderInfo,
    target: Arc<HttpTarget>,
    images: bool,
}

impl OpenAiClient {
    pub fn new(s: &ProviderSettings) -> OpenAiClient {
        let mut headers = Vec::new();
        if let Some(k) = &s.api_key {
            let value = format!("Bearer {}", k.expose());
            if let Some(v) = super::header(value, true, &s.api_key_env) {
                headers.push(("authorization", v));
            }
        }
        OpenAiClient {
            info: ProviderInfo {
                kind: "openai".into(),
                model: s.model.clone(),
                base_url: s.base_url.clone(),
            },
            target: Arc::new(HttpTarget {
                http: super::http_client(),
                url: format!("{}/chat/completions", s.base_url),
                headers,
                retry: s.retry,
                key_var: s.api_key_env.clone(),
                url_var: s.base_url_env.clone(),
                idle_timeout: s.idle_timeout,
            }),
            images: s.images,
        }
    }
}

impl LlmClient for OpenAiClient {
    fn info(&self) -> &ProviderInfo {
        &self.info
    }

    fn stream(&self, request: ChatRequest) -> EventStream {
        let body = encode_request(&request, &self.info.model, self.images);
        post_sse::<OpenAiDecoder>(self.target.clone(), body)
    }
}

/// The JSON body of one streamed Chat Completions request.
pub fn encode_request(req: &ChatRequest, model: &str, images: bool) -> Vec<u8> {
    let mut messages: Vec<Value> = Vec::with_capacity(req.messages.len() + 1);
    if let Some(system) = &req.system {
        messages.push(json!({"role": "system", "content": system.as_ref()}));
    }
    for m in req.messages.iter() {
        match m.role {
            Role::Assistant => {
                let mut text = String::new();
                let mut calls = Vec::new();
                for b in &m.content {
                    match b {
                        Block::Text { text: t } => text.push_str(t),
                        // Assistant messages carry no images on this wire.
                        Block::Image { media_type, data } => {
                            push_line(&mut text, &ResultPart::placeholder(media_type, data))
                        }
                        Block::ToolUse { id, name, input } => calls.push(json!({
                            "id": id,
                            "type": "function",
                            "function": {"name": name, "arguments": input.to_string()},
                        })),
                        Block::ToolResult { .. } | Block::Resource { .. } => {}
                    }
                }
                let mut msg = json!({"role": "assistant", "content": if text.is_empty() { Value::Null } else { json!(text) }});
                if !calls.is_empty() {
                    msg["tool_calls"] = Value::Array(calls);
                }
                messages.push(msg);
            }
            Role::User => {
                let mut parts: Vec<Value> = Vec::new();
                for b in &m.content {
                    match b {
                        Block::ToolResult {
                            tool_use_id,
                            content,
                            is_error,
                        } => {
                            let mut text = String::new();
                            if *is_error {
                                text.push_str("Error: ");
                            }
                            let mut shown_images = Vec::new();
                            for p in content {
                                match p {
                                    ResultPart::Text { text: t } => push_line(&mut text, t),
                                    ResultPart::Image { media_type, data } if images => {
                                        push_line(
                                            &mut text,
                                            &format!(
                                                "[image {} follows in the next message]",
                                                shown_images.len() + 1
                                            ),
                                        );
                                        shown_images.push(json!({"type": "image_url", "image_url": {"url": format!("data:{media_type};base64,{data}")}}));
                                    }
                                    ResultPart::Image { media_type, data } => push_line(
                                        &mut text,
                                        &ResultPart::placeholder(media_type, data),
                                    ),
                                }
                            }
                            messages.push(json!({"role": "tool", "tool_call_id": tool_use_id, "content": text}));
                            if !shown_images.is_empty() {
                                parts.push(json!({"type": "text", "text": format!("Images returned by tool call {tool_use_id}:")}));
                                parts.extend(shown_images);
                            }
                        }
                        Block::Text { text } => parts.push(json!({"type": "text", "text": text})),
                        Block::Image { media_type, data } if images => parts.push(json!({"type": "image_url", "image_url": {"url": format!("data:{media_type};base64,{data}")}})),
                        Block::Image { media_type, data } => parts.push(json!({"type": "text", "text": ResultPart::placeholder(media_type, data)})),
                        Block::Resource { content, .. } => match content {
                            ResultPart::Text { text } => {
                                parts.push(json!({"type": "text", "text": text}))
                            }
                            ResultPart::Image { media_type, data } if images => parts.push(
                                json!({"type": "image_url", "image_url": {"url": format!("data:{media_type};base64,{data}")}}),
                            ),
                            ResultPart::Image { media_type, data } => parts.push(
                                json!({"type": "text", "text": ResultPart::placeholder(media_type, data)}),
                            ),
                        },
                        Block::ToolUse { .. } => {}
                    }
                }
                if parts.is_empty() {
                    continue;
                }
                let only_text = parts.iter().all(|p| p["type"] == "text");
                let content = if only_text {
                    let joined: Vec<&str> =
                        parts.iter().filter_map(|p| p["text"].as_str()).collect();
                    json!(joined.join("\n\n"))
                } else {
                    Value::Array(parts)
                };
                messages.push(json!({"role": "user", "content": content}));
            }
        }
    }
    let o = &req.options;
    let mut body = Map::new();
    body.insert("model".into(), json!(o.model.as_deref().unwrap_or(model)));
    body.insert("stream".into(), json!(true));
    if let Some(m) = o.max_tokens {
        // The current name: OpenAI refuses the older `max_tokens` for its reasoning models,
        // and compatible servers (Ollama, vLLM, llama.cpp) take this one too.
        body.insert("max_completion_tokens".into(), json!(m));
    }
    if let Some(t) = o.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if !o.stop_sequences.is_empty() {
        // The API takes at most four.
        let stop: Vec<&String> = o.stop_sequences.iter().take(4).collect();
        body.insert("stop".into(), json!(stop));
    }
    if let (Some(choice), false) = (o.tool_choice, req.tools.is_empty()) {
        let kind = match choice {
            ToolChoice::Auto => "auto",
            ToolChoice::Required => "required",
            ToolChoice::None => "none",
        };
        body.insert("tool_choice".into(), json!(kind));
    }
    body.insert("stream_options".into(), json!({"include_usage": true}));
    body.insert("messages".into(), Value::Array(messages));
    if !req.tools.is_empty() {
        let tools: Vec<Value> = req
            .tools
            .iter()
            .map(|t| json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.input_schema}}))
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    serde_json::to_vec(&Value::Object(body)).expect("request serializes")
}

fn push_line(text: &mut String, line: &str) {
    if !text.is_empty() && !text.ends_with(' ') {
        text.push('\n');
    }
    text.push_str(line);
}

/// A tool call being assembled from its deltas.
#[derive(Default)]
struct PartialCall {
    /// The `index` the server gave; some compatible servers give none.
    index: Option<u64>,
    id: String,
    name: String,
    arguments: String,
    /// How much of `arguments` went out as [`StreamEvent::ToolInputDelta`] (pieces go out
    /// once the call's id and name are known).
    sent: usize,
}

impl PartialCall {
    /// The arguments not yet sent as a fragment, once the id and name are known.
    fn unsent(&mut self, out: &mut VecDeque<StreamEvent>) {
        if self.id.is_empty() || self.name.is_empty() || self.arguments.len() <= self.sent {
            return;
        }
        // Arguments sent as a whole object replace what came before: start over.
        let Some(fragment) = self.arguments.get(self.sent..) else {
            return;
        };
        out.push_back(StreamEvent::ToolInputDelta {
            id: self.id.clone(),
            name: self.name.clone(),
            fragment: fragment.to_string(),
        });
        self.sent = self.arguments.len();
    }
}

#[derive(Default)]
pub struct OpenAiDecoder {
    /// Calls in the order their first delta came.
    calls: Vec<PartialCall>,
    finish_reason: Option<String>,
    usage: Usage,
    done: bool,
}

impl OpenAiDecoder {
    /// The call a tool-call delta belongs to (a new one when it starts one). `first` says
    /// whether the delta is the first entry of its `tool_calls` array.
    fn call_for(&mut self, index: Option<u64>, id: Option<&str>, first: bool) -> &mut PartialCall {
        let same_id = |c: &PartialCall| match id {
            Some(id) => c.id.is_empty() || c.id == id,
            None => true,
        };
        let found = match index {
            // By index; the same index with another id is another call (servers that
            // number every call 0).
            Some(i) => self
                .calls
                .iter()
                .rposition(|c| c.index == Some(i))
                .filter(|&p| same_id(&self.calls[p])),
            // Without an index, a delta with a new id starts a call and one without an id
            // goes on with the last call; a second entry of one delta is another call.
            None => match (id, self.calls.last()) {
                (Some(id), Some(last)) if last.id == id => Some(self.calls.len() - 1),
                (None, Some(_)) if first => Some(self.calls.len() - 1),
                _ => None,
            },
        };
        let pos = found.unwrap_or_else(|| {
            self.calls.push(PartialCall {
                index,
                ..PartialCall::default()
            });
            self.calls.len() - 1
        });
        &mut self.calls[pos]
    }

    fn flush_calls(&mut self, out: &mut VecDeque<StreamEvent>) {
        for c in std::mem::take(&mut self.calls) {
            let id = if c.id.is_empty() {
                super::fallback_call_id()
            } else {
                c.id
            };
            out.push_back(tool_call(id, c.name, &c.arguments));
        }
    }

    fn end(&mut self, out: &mut VecDeque<StreamEvent>) {
        self.flush_calls(out);
        self.done = true;
        out.push_back(StreamEvent::Finished {
            stop_reason: self.finish_reason.take(),
            usage: self.usage,
        });
    }
}

/// An `error` object inside the stream. Busy (retried while nothing of the answer was
/// yielded) when its `type` or `code` is one of [`RETRYABLE_STREAM_ERRORS`] or its `code` a
/// status of 429 or 5xx (as OpenRouter and vLLM send it); else the stream ends with it.
fn stream_error(e: &Value) -> DecodeError {
    let detail = e
        .get("message")
        .or(Some(e))
        .and_then(Value::as_str)
        .map_or_else(|| e.to_string(), str::to_string);
    let named = ["type", "code"]
        .iter()
        .filter_map(|k| e.get(*k).and_then(Value::as_str))
        .find(|kind| RETRYABLE_STREAM_ERRORS.contains(kind));
    let status = e
        .get("code")
        .and_then(Value::as_u64)
        .filter(|s| *s == 429 || (500..600).contains(s));
    match (named, status) {
        (Some(kind), _) => DecodeError::Busy {
            kind: kind.to_string(),
            detail,
        },
        (None, Some(status)) => DecodeError::Busy {
            kind: e
                .get("type")
                .and_then(Value::as_str)
                .map_or_else(|| format!("error {status}"), str::to_string),
            detail,
        },
        (None, None) => ProviderError::Remote(detail).into(),
    }
}

impl Decoder for OpenAiDecoder {
    fn event(
        &mut self,
        ev: &SseEvent,
        out: &mut VecDeque<StreamEvent>,
    ) -> Result<bool, DecodeError> {
        let data = event_text(ev);
        if data.trim() == "[DONE]" {
            self.end(out);
            return Ok(true);
        }
        let v: Value = serde_json::from_str(&data)
            .map_err(|e| ProviderError::Protocol(format!("{e} in {data:.200}")))?;
        if let Some(e) = v.get("error").filter(|e| !e.is_null()) {
            return Err(stream_error(e));
        }
        if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
            self.usage.input_tokens = u["prompt_tokens"].as_u64().unwrap_or(0);
            self.usage.output_tokens = u["completion_tokens"].as_u64().unwrap_or(0);
        }
        let choices = v.get("choices").and_then(Value::as_array);
        for choice in choices.into_iter().flatten() {
            let delta = &choice["delta"];
            if let Some(t) = delta["content"].as_str().filter(|t| !t.is_empty()) {
                out.push_back(StreamEvent::TextDelta(t.to_string()));
            }
            let calls = delta["tool_calls"].as_array();
            for (pos, c) in calls.into_iter().flatten().enumerate() {
                let id = c["id"].as_str().filter(|id| !id.is_empty());
                let slot = self.call_for(c["index"].as_u64(), id, pos == 0);
                if let Some(id) = id {
                    slot.id = id.to_string();
                }
                let f = &c["function"];
                if let Some(n) = f["name"].as_str() {
                    slot.name.push_str(n);
                }
                match &f["arguments"] {
                    Value::String(a) => slot.arguments.push_str(a),
                    // Some compatible servers send the arguments as an object.
                    Value::Object(_) => slot.arguments = f["arguments"].to_string(),
                    _ => {}
                }
                slot.unsent(out);
            }
            if let Some(r) = choice["finish_reason"].as_str() {
                self.finish_reason = Some(r.to_string());
                self.flush_calls(out);
            }
        }
        Ok(false)
    }

    fn finish(&mut self, out: &mut VecDeque<StreamEvent>) -> Result<(), ProviderError> {
        if self.done {
            return Ok(());
        }
        if self.finish_reason.is_some() {
            self.end(out);
            return Ok(());
        }
        Err(ProviderError::Stream(
            "the response ended before a finish_reason or [DONE]".into(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::provider::test_event;

    /// A chunk as OpenAI streams it.
    fn chunk(delta: Value, finish: Option<&str>) -> Value {
        json!({"id": "chatcmpl-BvX3", "object": "chat.completion.chunk", "created": 1_753_000_000,
               "model": "gpt-4.1-2025-04-14", "system_fingerprint": "fp_51e1070cf2",
               "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]})
    }

    fn calls_chunk(calls: Value) -> Value {
        chunk(json!({"tool_calls": calls}), None)
    }

    /// The tool calls `(id, name, input)` the decoder yields for these chunks then `[DONE]`.
    fn decode(chunks: &[Value]) -> Vec<(String, String, Value)> {
        let mut d = OpenAiDecoder::default();
        let mut out = VecDeque::new();
        let mut all = vec![chunk(json!({"role": "assistant", "content": null}), None)];
        all.extend_from_slice(chunks);
        all.push(chunk(json!({}), Some("tool_calls")));
        for c in all {
            let ev = test_event("", c);
            assert!(!d.event(&ev, &mut out).unwrap());
        }
        let done = test_event("", "[DONE]");
        assert!(d.event(&done, &mut out).unwrap());
        // The pieces of each call, joined, are its arguments.
        let mut pieces: std::collections::HashMap<String, String> = Default::default();
        out.into_iter()
            .filter_map(|e| match e {
                StreamEvent::ToolInputDelta { id, fragment, .. } => {
                    pieces.entry(id).or_default().push_str(&fragment);
                    None
                }
                StreamEvent::ToolCall {
                    id,
                    name,
                    input,
                    invalid: None,
                } => {
                    if let Some(text) = pieces.get(&id) {
                        let joined: Value = serde_json::from_str(text).unwrap();
                        assert_eq!(joined, input, "the pieces of {id}");
                    }
                    Some((id, name, input))
                }
                StreamEvent::Finished { .. } => None,
                other @ (StreamEvent::Retrying { .. }
                | StreamEvent::TextDelta(_)
                | StreamEvent::ToolCall { .. }) => panic!("unexpected {other:?}"),
            })
            .collect()
    }

    fn owned(calls: &[(&str, &str, Value)]) -> Vec<(String, String, Value)> {
        calls
            .iter()
            .map(|(i, n, v)| (i.to_string(), n.to_string(), v.clone()))
            .collect()
    }

    /// What the decoder makes of one chunk with an `error`, as text.
    fn error_chunk(chunk: Value) -> String {
        let ev = test_event("", chunk);
        match OpenAiDecoder::default().event(&ev, &mut VecDeque::new()) {
            Err(DecodeError::Busy { kind, detail }) => format!("busy {kind}: {detail}"),
            Err(DecodeError::Fatal(e)) => format!("fatal {e}"),
            Ok(end) => format!("ok {end}"),
        }
    }

    #[test]
    fn error_chunks_that_mean_busy_are_told_from_the_others() {
        // OpenAI.
        assert_eq!(
            error_chunk(
                json!({"error": {"message": "The server had an error while processing your request. Sorry about that!", "type": "server_error", "param": null, "code": null}})
            ),
            "busy server_error: The server had an error while processing your request. Sorry about that!"
        );
        assert_eq!(
            error_chunk(
                json!({"error": {"message": "Rate limit reached for gpt-4.1 on tokens per min (TPM)", "type": "tokens", "param": null, "code": "rate_limit_exceeded"}})
            ),
            "busy rate_limit_exceeded: Rate limit reached for gpt-4.1 on tokens per min (TPM)"
        );
        assert_eq!(
            error_chunk(
                json!({"error": {"message": "You exceeded your current quota, please check your plan and billing details.", "type": "insufficient_quota", "param": null, "code": "insufficient_quota"}})
            ),
            "fatal the model provider sent an error: You exceeded your current quota, please check your plan and billing details."
        );
        // OpenRouter: the error rides on a chunk that ends the choice.
        assert_eq!(
            error_chunk(
                json!({"id": "gen-17", "object": "chat.completion.chunk", "created": 1_753_000_000, "model": "anthropic/claude-sonnet-4", "provider": "Anthropic",
                       "error": {"code": 502, "message": "Provider returned error"},
                       "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": "error"}]})
            ),
            "busy error 502: Provider returned error"
        );
        // vLLM.
        assert_eq!(
            error_chunk(
                json!({"error": {"object": "error", "message": "The engine is overloaded", "type": "ServiceUnavailableError", "param": null, "code": 503}})
            ),
            "busy ServiceUnavailableError: The engine is overloaded"
        );
        assert_eq!(
            error_chunk(
                json!({"error": {"object": "error", "message": "max_tokens must be at least 1", "type": "BadRequestError", "param": null, "code": 400}})
            ),
            "fatal the model provider sent an error: max_tokens must be at least 1"
        );
        assert_eq!(
            error_chunk(json!({"error": "upstream closed"})),
            "fatal the model provider sent an error: upstream closed"
        );
    }

    #[test]
    fn interleaved_deltas_of_several_calls_are_joined_by_index() {
        let calls = decode(&[
            calls_chunk(
                json!([{"index": 0, "id": "call_Ab1", "type": "function", "function": {"name": "get_weather", "arguments": ""}}]),
            ),
            calls_chunk(
                json!([{"index": 1, "id": "call_Cd2", "type": "function", "function": {"name": "get_time", "arguments": ""}}]),
            ),
            calls_chunk(json!([{"index": 1, "function": {"arguments": "{\"tz\":"}}])),
            calls_chunk(json!([{"index": 0, "function": {"arguments": "{\"ci"}}])),
            calls_chunk(json!([
                {"index": 0, "function": {"arguments": "ty\":\"Pa"}},
                {"index": 1, "function": {"arguments": "\"CET\"}"}}
            ])),
            calls_chunk(json!([{"index": 0, "function": {"arguments": "ris\"}"}}])),
        ]);
        assert_eq!(
            calls,
            owned(&[
                ("call_Ab1", "get_weather", json!({"city": "Paris"})),
                ("call_Cd2", "get_time", json!({"tz": "CET"})),
            ])
        );
    }

    #[test]
    fn without_index_a_new_id_starts_a_call_and_no_id_goes_on_with_the_last() {
        let calls = decode(&[
            calls_chunk(
                json!([{"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": ""}}]),
            ),
            calls_chunk(json!([{"function": {"arguments": "{\"city\":"}}])),
            calls_chunk(json!([{"function": {"arguments": "\"Oslo\"}"}}])),
            calls_chunk(
                json!([{"id": "call_2", "type": "function", "function": {"name": "get_time", "arguments": "{\"tz\""}}]),
            ),
            // Some servers repeat the id on every delta of the call.
            calls_chunk(json!([{"id": "call_2", "function": {"arguments": ":\"CET\"}"}}])),
        ]);
        assert_eq!(
            calls,
            owned(&[
                ("call_1", "get_weather", json!({"city": "Oslo"})),
                ("call_2", "get_time", json!({"tz": "CET"})),
            ])
        );
    }

    #[test]
    fn calls_all_numbered_zero_are_told_apart_by_id() {
        let calls = decode(&[
            calls_chunk(
                json!([{"index": 0, "id": "call_x1", "type": "function", "function": {"name": "read", "arguments": "{\"path\":\"a\"}"}}]),
            ),
            calls_chunk(
                json!([{"index": 0, "id": "call_x2", "type": "function", "function": {"name": "read", "arguments": "{\"path\""}}]),
            ),
            calls_chunk(json!([{"index": 0, "function": {"arguments": ":\"b\"}"}}])),
        ]);
        assert_eq!(
            calls,
            owned(&[
                ("call_x1", "read", json!({"path": "a"})),
                ("call_x2", "read", json!({"path": "b"})),
            ])
        );
    }

    #[test]
    fn whole_calls_in_one_delta_without_index_are_separate() {
        let calls = decode(&[calls_chunk(json!([
            {"id": "f1", "type": "function", "function": {"name": "read", "arguments": "{\"path\":\"a\"}"}},
            {"id": "f2", "type": "function", "function": {"name": "list", "arguments": "{}"}}
        ]))]);
        assert_eq!(
            calls,
            owned(&[
                ("f1", "read", json!({"path": "a"})),
                ("f2", "list", json!({})),
            ])
        );
    }

    #[test]
    fn calls_without_ids_get_ids_unique_across_answers() {
        let answer = || {
            decode(&[calls_chunk(json!([
                {"index": 0, "type": "function", "function": {"name": "read", "arguments": "{}"}},
                {"index": 1, "id": "", "type": "function", "function": {"name": "list", "arguments": "{}"}}
            ]))])
        };
        let ids: Vec<String> = answer()
            .into_iter()
            .chain(answer())
            .map(|(id, _, _)| id)
            .collect();
        assert_eq!(ids.len(), 4);
        assert!(ids
            .iter()
            .all(|id| id.starts_with(super::super::FALLBACK_CALL_ID_PREFIX)));
        let unique: std::collections::HashSet<&String> = ids.iter().collect();
        assert_eq!(unique.len(), 4, "{ids:?}");
    }
}
