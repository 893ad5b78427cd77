//! OpenAI Chat Completions with streaming (`POST {base}/chat/completions`, `stream: true`),
//! also spoken by compatible servers (Ollama, vLLM, llama.cpp server, LM Studio,
//! OpenRouter): only the base URL, model and key variable differ.
//!
//! Encoding: tool calls are `tool_calls` of the assistant message (arguments as a JSON
//! string); each result is a `tool` message right after it. Tool images cannot go in a
//! `tool` message, so they follow in one user message with `image_url` parts (or a text
//! placeholder when images are off). Decoding: `chat.completion.chunk`s carry
//! `delta.content` text and `delta.tool_calls[index]` fragments (id and name first, then
//! `function.arguments` pieces); calls are yielded whole once `finish_reason` arrives, and
//! `[DONE]` ends the stream.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::anthropic::tool_call;
use super::sse::SseEvent;
use super::{
    post_sse, ChatRequest, Decoder, EventStream, HttpTarget, LlmClient, ProviderError,
    ProviderInfo, ProviderSettings, StreamEvent, ToolChoice, Usage,
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
        post_sse(self.target.clone(), body, OpenAiDecoder::default())
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
        // Compatible servers know only the older name; both are accepted by OpenAI.
        body.insert("max_tokens".into(), json!(m));
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

#[derive(Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

#[derive(Default)]
pub struct OpenAiDecoder {
    calls: BTreeMap<u64, PartialCall>,
    finish_reason: Option<String>,
    usage: Usage,
    done: bool,
}

impl OpenAiDecoder {
    fn flush_calls(&mut self, out: &mut VecDeque<StreamEvent>) {
        for (index, c) in std::mem::take(&mut self.calls) {
            let id = if c.id.is_empty() {
                format!("call_{index}")
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

impl Decoder for OpenAiDecoder {
    fn event(
        &mut self,
        ev: &SseEvent,
        out: &mut VecDeque<StreamEvent>,
    ) -> Result<bool, ProviderError> {
        if ev.data.trim() == "[DONE]" {
            self.end(out);
            return Ok(true);
        }
        let v: Value = serde_json::from_str(&ev.data)
            .map_err(|e| ProviderError::Protocol(format!("{e} in {:.200}", ev.data)))?;
        if let Some(e) = v.get("error") {
            let msg = e.get("message").and_then(Value::as_str).map(str::to_string);
            return Err(ProviderError::Remote(msg.unwrap_or_else(|| e.to_string())));
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
                let index = c["index"].as_u64().unwrap_or(pos as u64);
                let slot = self.calls.entry(index).or_default();
                if let Some(id) = c["id"].as_str() {
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
