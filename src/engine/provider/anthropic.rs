//! The Anthropic Messages API with streaming: `POST {base}/v1/messages`, `stream: true`.
//!
//! Encoding: tool calls are `tool_use` blocks of assistant messages; results are
//! `tool_result` blocks (text and base64 images) at the start of the next user message.
//! Consecutive messages of one role are merged, as the API wants roles to alternate.
//! Decoding: `content_block_start` opens a text or `tool_use` block, `content_block_delta`
//! carries `text_delta` or `input_json_delta` fragments, `content_block_stop` closes the
//! block (a tool call is yielded whole then, its fragments before as they come), `message_delta` has the stop reason and
//! output tokens, `message_stop` ends. An `error` event of a busy kind (`overloaded_error`,
//! `rate_limit_error`, `api_error`) is retried while nothing of the answer was yielded (see
//! [`super::post_sse`]); other `error` events become [`ProviderError::Remote`].

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use harness9_mcp::transport::sse_parse::SseEvent;
use serde_json::{json, Map, Value};

use super::{
    event_text, post_sse, ChatRequest, DecodeError, Decoder, EventStream, HttpTarget, LlmClient,
    ProviderError, ProviderInfo, ProviderSettings, StreamEvent, ToolChoice, Usage,
    RETRYABLE_STREAM_ERRORS,
};
use crate::engine::message::{Block, Message, ResultPart, Role};

/// The API version header harness9 speaks.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

pub struct AnthropicClient {
    info: ProviderInfo,
    target: Arc<HttpTarget>,
    max_tokens: u32,
    images: bool,
}

impl AnthropicClient {
    pub fn new(s: &ProviderSettings) -> AnthropicClient {
        let mut headers = vec![(
            "anthropic-version",
            reqwest::header::HeaderValue::from_static(ANTHROPIC_VERSION),
        )];
        if let Some(k) = &s.api_key {
            if let Some(v) = super::header(k.expose().to_string(), true, &s.api_key_env) {
                headers.push(("x-api-key", v));
            }
        }
        AnthropicClient {
            info: ProviderInfo {
                kind: "anthropic".into(),
                model: s.model.clone(),
                base_url: s.base_url.clone(),
            },
            target: Arc::new(HttpTarget {
                http: super::http_client(),
                url: format!("{}/v1/messages", s.base_url),
                headers,
                retry: s.retry,
                key_var: s.api_key_env.clone(),
                url_var: s.base_url_env.clone(),
                idle_timeout: s.idle_timeout,
            }),
            max_tokens: s.max_tokens,
            images: s.images,
        }
    }
}

impl LlmClient for AnthropicClient {
    fn info(&self) -> &ProviderInfo {
        &self.info
    }

    fn stream(&self, request: ChatRequest) -> EventStream {
        let body = encode_request(&request, &self.info.model, self.max_tokens, self.images);
        post_sse::<AnthropicDecoder>(self.target.clone(), body)
    }
}

/// The JSON body of one streamed Messages request.
pub fn encode_request(req: &ChatRequest, model: &str, max_tokens: u32, images: bool) -> Vec<u8> {
    let mut messages: Vec<Value> = Vec::with_capacity(req.messages.len());
    let mut last_role: Option<Role> = None;
    for m in req.messages.iter() {
        // Anthropic takes images in user messages only.
        let images = images && m.role == Role::User;
        let blocks: Vec<Value> = m.content.iter().map(|b| encode_block(b, images)).collect();
        if blocks.is_empty() {
            continue;
        }
        if last_role == Some(m.role) {
            if let Some(Value::Array(prev)) = messages.last_mut().and_then(|v| v.get_mut("content"))
            {
                prev.extend(blocks);
                continue;
            }
        }
        last_role = Some(m.role);
        messages.push(json!({"role": role(m), "content": blocks}));
    }
    let o = &req.options;
    let mut body = Map::new();
    body.insert("model".into(), json!(o.model.as_deref().unwrap_or(model)));
    let max_tokens = o.max_tokens.map_or(max_tokens, |m| m.min(max_tokens));
    body.insert("max_tokens".into(), json!(max_tokens));
    body.insert("stream".into(), json!(true));
    if let Some(system) = &req.system {
        body.insert("system".into(), json!(system.as_ref()));
    }
    if let Some(t) = o.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if !o.stop_sequences.is_empty() {
        body.insert("stop_sequences".into(), json!(o.stop_sequences));
    }
    if let (Some(choice), false) = (o.tool_choice, req.tools.is_empty()) {
        let kind = match choice {
            ToolChoice::Auto => "auto",
            ToolChoice::Required => "any",
            ToolChoice::None => "none",
        };
        body.insert("tool_choice".into(), json!({"type": kind}));
    }
    body.insert("messages".into(), Value::Array(messages));
    if !req.tools.is_empty() {
        let tools: Vec<Value> = req
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.input_schema}))
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    serde_json::to_vec(&Value::Object(body)).expect("request serializes")
}

fn role(m: &Message) -> &'static str {
    match m.role {
        Role::User => "user",
        Role::Assistant => "assistant",
    }
}

fn encode_block(b: &Block, images: bool) -> Value {
    match b {
        Block::Text { text } => json!({"type": "text", "text": text}),
        Block::Image { media_type, data } if images => json!({
            "type": "image",
            "source": {"type": "base64", "media_type": media_type, "data": data}
        }),
        Block::Image { media_type, data } => {
            json!({"type": "text", "text": ResultPart::placeholder(media_type, data)})
        }
        Block::ToolUse { id, name, input } => {
            let input = if input.is_object() {
                input.clone()
            } else {
                json!({})
            };
            json!({"type": "tool_use", "id": id, "name": name, "input": input})
        }
        Block::ToolResult {
            tool_use_id,
            content,
            is_error,
        } => {
            let parts: Vec<Value> = content
                .iter()
                .map(|p| match p {
                    ResultPart::Text { text } => json!({"type": "text", "text": text}),
                    ResultPart::Image { media_type, data } if images => json!({
                        "type": "image",
                        "source": {"type": "base64", "media_type": media_type, "data": data}
                    }),
                    ResultPart::Image { media_type, data } => {
                        json!({"type": "text", "text": ResultPart::placeholder(media_type, data)})
                    }
                })
                .collect();
            let mut v =
                json!({"type": "tool_result", "tool_use_id": tool_use_id, "content": parts});
            if *is_error {
                v["is_error"] = json!(true);
            }
            v
        }
        Block::Resource { content, .. } => match content {
            ResultPart::Text { text } => json!({"type": "text", "text": text}),
            ResultPart::Image { media_type, data } if images => json!({
                "type": "image",
                "source": {"type": "base64", "media_type": media_type, "data": data}
            }),
            ResultPart::Image { media_type, data } => {
                json!({"type": "text", "text": ResultPart::placeholder(media_type, data)})
            }
        },
    }
}

enum Open {
    Text,
    Tool {
        id: String,
        name: String,
        json: String,
    },
    Other,
}

#[derive(Default)]
pub struct AnthropicDecoder {
    blocks: HashMap<u64, Open>,
    usage: Usage,
    stop_reason: Option<String>,
    finished: bool,
}

fn parse(data: &str) -> Result<Value, ProviderError> {
    serde_json::from_str(data).map_err(|e| ProviderError::Protocol(format!("{e} in {data:.200}")))
}

impl Decoder for AnthropicDecoder {
    fn event(
        &mut self,
        ev: &SseEvent,
        out: &mut VecDeque<StreamEvent>,
    ) -> Result<bool, DecodeError> {
        let v = parse(&event_text(ev))?;
        let kind = v
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or(ev.event.as_str());
        let index = v.get("index").and_then(Value::as_u64).unwrap_or(0);
        match kind {
            "message_start" => {
                let u = &v["message"]["usage"];
                self.usage.input_tokens += u["input_tokens"].as_u64().unwrap_or(0)
                    + u["cache_read_input_tokens"].as_u64().unwrap_or(0)
                    + u["cache_creation_input_tokens"].as_u64().unwrap_or(0);
                self.usage.output_tokens += u["output_tokens"].as_u64().unwrap_or(0);
            }
            "content_block_start" => {
                let b = &v["content_block"];
                let open = match b["type"].as_str() {
                    Some("text") => {
                        if let Some(t) = b["text"].as_str().filter(|t| !t.is_empty()) {
                            out.push_back(StreamEvent::TextDelta(t.to_string()));
                        }
                        Open::Text
                    }
                    Some("tool_use") => Open::Tool {
                        id: b["id"]
                            .as_str()
                            .filter(|id| !id.is_empty())
                            .map_or_else(super::fallback_call_id, str::to_string),
                        name: b["name"].as_str().unwrap_or_default().to_string(),
                        json: String::new(),
                    },
                    _ => Open::Other,
                };
                self.blocks.insert(index, open);
            }
            "content_block_delta" => {
                let d = &v["delta"];
                match (d["type"].as_str(), self.blocks.get_mut(&index)) {
                    (Some("text_delta"), _) => {
                        if let Some(t) = d["text"].as_str() {
                            out.push_back(StreamEvent::TextDelta(t.to_string()));
                        }
                    }
                    (Some("input_json_delta"), Some(Open::Tool { id, name, json })) => {
                        let fragment = d["partial_json"].as_str().unwrap_or_default();
                        if !fragment.is_empty() {
                            json.push_str(fragment);
                            out.push_back(StreamEvent::ToolInputDelta {
                                id: id.clone(),
                                name: name.clone(),
                                fragment: fragment.to_string(),
                            });
                        }
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {
                if let Some(Open::Tool { id, name, json }) = self.blocks.remove(&index) {
                    out.push_back(tool_call(id, name, &json));
                }
            }
            "message_delta" => {
                if let Some(r) = v["delta"]["stop_reason"].as_str() {
                    self.stop_reason = Some(r.to_string());
                }
                if let Some(n) = v["usage"]["output_tokens"].as_u64() {
                    // Cumulative count for this message.
                    self.usage.output_tokens = n;
                }
            }
            "message_stop" => {
                self.finished = true;
                out.push_back(StreamEvent::Finished {
                    stop_reason: self.stop_reason.take(),
                    usage: self.usage,
                });
                return Ok(true);
            }
            "error" => {
                let e = &v["error"];
                let kind = e["type"].as_str().unwrap_or("error").to_string();
                let detail = e["message"].as_str().unwrap_or("no details").to_string();
                if RETRYABLE_STREAM_ERRORS.contains(&kind.as_str()) {
                    return Err(DecodeError::Busy { kind, detail });
                }
                return Err(ProviderError::Remote(format!("{kind}: {detail}")).into());
            }
            _ => {} // ping and future event types
        }
        Ok(false)
    }

    fn finish(&mut self, _out: &mut VecDeque<StreamEvent>) -> Result<(), ProviderError> {
        if self.finished {
            Ok(())
        } else {
            Err(ProviderError::Stream(
                "the response ended before message_stop".into(),
            ))
        }
    }
}

/// A tool call from its joined argument fragments.
pub(crate) fn tool_call(id: String, name: String, json: &str) -> StreamEvent {
    let (input, invalid) = if json.trim().is_empty() {
        (json!({}), None)
    } else {
        match serde_json::from_str::<Value>(json) {
            Ok(v @ Value::Object(_)) => (v, None),
            Ok(other) => (
                json!({}),
                Some(format!("the arguments were {other}, not a JSON object")),
            ),
            Err(e) => (
                json!({}),
                Some(format!("the arguments were not valid JSON ({e})")),
            ),
        }
    };
    StreamEvent::ToolCall {
        id,
        name,
        input,
        invalid,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::message::ToolDefinition;
    use crate::engine::provider::test_event;

    /// What the decoder makes of one `error` event, as text.
    fn error_event(kind: &str, message: &str) -> String {
        let ev = test_event(
            "error",
            json!({"type": "error", "error": {"type": kind, "message": message}}),
        );
        match AnthropicDecoder::default().event(&ev, &mut VecDeque::new()) {
            Err(DecodeError::Busy { kind, detail }) => format!("busy {kind}: {detail}"),
            Err(DecodeError::Fatal(e)) => format!("fatal {e}"),
            Ok(end) => format!("ok {end}"),
        }
    }

    #[test]
    fn overloaded_rate_limit_and_api_errors_in_the_stream_are_busy() {
        assert_eq!(
            error_event("overloaded_error", "Overloaded"),
            "busy overloaded_error: Overloaded"
        );
        assert_eq!(
            error_event("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"),
            "busy rate_limit_error: Number of request tokens has exceeded your per-minute rate limit"
        );
        assert_eq!(
            error_event("api_error", "Internal server error"),
            "busy api_error: Internal server error"
        );
        assert_eq!(
            error_event("invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"),
            "fatal the model provider sent an error: invalid_request_error: prompt is too long: 210000 tokens > 200000 maximum"
        );
    }

    #[test]
    fn consecutive_user_messages_merge_and_images_can_be_placeholders() {
        let messages: Vec<Arc<Message>> = vec![
            Arc::new(Message {
                role: Role::User,
                content: vec![Block::ToolResult {
                    tool_use_id: "t1".into(),
                    content: vec![ResultPart::Image {
                        media_type: "image/png".into(),
                        data: "AAAA".into(),
                    }],
                    is_error: false,
                }],
                cut_off: false,
            }),
            Arc::new(Message::user_text("next")),
        ];
        let req = ChatRequest {
            system: None,
            messages: messages.into(),
            tools: Arc::from(Vec::<ToolDefinition>::new()),
            options: Default::default(),
        };
        let body: Value = serde_json::from_slice(&encode_request(&req, "m", 10, false)).unwrap();
        assert_eq!(
            body["messages"],
            json!([{"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": [
                    {"type": "text", "text": "[image: image/png, 3 bytes; this model does not accept images]"}
                ]},
                {"type": "text", "text": "next"}
            ]}])
        );
        assert!(body.get("tools").is_none());
    }
}
