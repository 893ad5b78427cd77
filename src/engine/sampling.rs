//! Servers' sampling requests (`sampling/createMessage`) on the configured model: the
//! [`Sampler`] the façade plugs into the manager once the user approved a request.
//!
//! What is passed through: the messages (text; images; tool uses and tool results,
//! 2025-11-25; audio becomes a short text note), `systemPrompt`, `maxTokens` (never more
//! output than asked, nor more than the provider's own limit), `temperature`,
//! `stopSequences`, `tools` and `toolChoice`. The answer is one text block, or (when the
//! model called tools) an array of blocks with `tool_use` ones and `stopReason: toolUse`.
//!
//! # Which model answers (`modelPreferences`)
//!
//! The candidates are the configured model followed by the provider's `samplingModels`
//! (settings file), which are listed from the cheapest and fastest to the most capable.
//! 1. Hints, in the server's order: the first candidate whose name contains the hint's
//!    `name` (ignoring case) answers.
//! 2. Else priorities, when `samplingModels` lists any: `intelligencePriority` above both
//!    `costPriority` and `speedPriority` picks the last of them (most capable); cost or
//!    speed above intelligence picks the first (cheapest).
//! 3. Else the configured model.

use std::sync::Arc;

use futures::future::BoxFuture;
use futures::StreamExt;
use serde_json::{json, Value};

use super::message::{Block, Message, ResultPart, Role, ToolDefinition};
use super::provider::settings::SettingsError;
use super::provider::{
    self, ChatRequest, LlmClient, ProviderError, ProviderOverrides, ProviderSettings,
    RequestOptions, StreamEvent, ToolChoice,
};
use crate::mcp::requests::{CreateMessageRequest, CreateMessageResult, SamplingMessage};
use crate::mcp::sampling::{SampleError, SampleFuture, Sampler};

/// Why a sampling request did not run on the model; the text is shown to the user and
/// sent to the server.
#[derive(Debug, thiserror::Error)]
pub enum SamplingError {
    /// No model can be used (nothing configured, a key missing).
    #[error(transparent)]
    Settings(#[from] SettingsError),
    #[error(transparent)]
    Provider(#[from] ProviderError),
    #[error("a sampling message has the unknown role \"{0}\"")]
    UnknownRole(String),
    /// The task that read the settings ended early.
    #[error("{0}")]
    Interrupted(String),
}

impl SamplingError {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        match self {
            SamplingError::Settings(e) => e.code(),
            SamplingError::Provider(e) => e.code(),
            SamplingError::UnknownRole(_) => "unknown-role",
            SamplingError::Interrupted(_) => "internal",
        }
    }
}

impl From<SamplingError> for SampleError {
    fn from(e: SamplingError) -> SampleError {
        SampleError::new(e.code(), e.to_string())
    }
}

/// Where the model for sampling comes from.
#[derive(Clone)]
pub enum SamplingSource {
    /// This client, with the other models it may be asked for.
    Client {
        client: Arc<dyn LlmClient>,
        models: Vec<String>,
    },
    /// The provider settings as they are at each request (so a provider configured while
    /// the app runs is used at once).
    Settings(ProviderOverrides),
}

/// Runs approved sampling requests on the configured provider.
pub struct EngineSampler {
    source: SamplingSource,
}

impl EngineSampler {
    pub fn new(source: SamplingSource) -> EngineSampler {
        EngineSampler { source }
    }
}

async fn resolve(overrides: ProviderOverrides) -> Result<ProviderSettings, SamplingError> {
    let settings = tokio::task::spawn_blocking(move || ProviderSettings::resolve(&overrides))
        .await
        .map_err(|e| SamplingError::Interrupted(e.to_string()))??;
    Ok(settings)
}

impl Sampler for EngineSampler {
    fn check(&self) -> BoxFuture<'static, Result<(), SampleError>> {
        let source = self.source.clone();
        Box::pin(async move {
            match source {
                SamplingSource::Client { .. } => Ok(()),
                SamplingSource::Settings(o) => {
                    resolve(o).await.map(|_| ()).map_err(SampleError::from)
                }
            }
        })
    }

    fn sample(&self, request: CreateMessageRequest) -> SampleFuture {
        let source = self.source.clone();
        Box::pin(async move {
            let (client, models) = match source {
                SamplingSource::Client { client, models } => (client, models),
                SamplingSource::Settings(o) => {
                    let s = resolve(o).await.map_err(SampleError::from)?;
                    (provider::connect(&s), s.sampling_models)
                }
            };
            sample_with(client.as_ref(), &models, &request)
                .await
                .map_err(SampleError::from)
        })
    }
}

/// The model that answers, by the rule in the module docs.
pub fn choose_model(configured: &str, models: &[String], preferences: Option<&Value>) -> String {
    let mut candidates = vec![configured.to_string()];
    candidates.extend(models.iter().filter(|m| *m != configured).cloned());
    let Some(prefs) = preferences else {
        return configured.to_string();
    };
    let hints = prefs.get("hints").and_then(Value::as_array);
    for hint in hints.into_iter().flatten() {
        let Some(name) = hint.get("name").and_then(Value::as_str) else {
            continue;
        };
        let name = name.trim().to_lowercase();
        if name.is_empty() {
            continue;
        }
        if let Some(found) = candidates.iter().find(|c| c.to_lowercase().contains(&name)) {
            return found.clone();
        }
    }
    let priority = |key: &str| prefs.get(key).and_then(Value::as_f64).unwrap_or(0.0);
    let (cost, speed, brains) = (
        priority("costPriority"),
        priority("speedPriority"),
        priority("intelligencePriority"),
    );
    match (models.first(), models.last()) {
        (Some(_), Some(best)) if brains > cost.max(speed) => best.clone(),
        (Some(cheapest), Some(_)) if cost.max(speed) > brains => cheapest.clone(),
        _ => configured.to_string(),
    }
}

/// Runs one request on `client` and builds the answer for the server.
pub async fn sample_with(
    client: &dyn LlmClient,
    models: &[String],
    request: &CreateMessageRequest,
) -> Result<CreateMessageResult, SamplingError> {
    let model = choose_model(
        &client.info().model,
        models,
        request.model_preferences.as_ref(),
    );
    let chat = chat_request(request, &model)?;
    let mut stream = client.stream(chat);
    let mut text = String::new();
    let mut calls = Vec::new();
    let mut stop = None;
    while let Some(event) = stream.next().await {
        match event? {
            StreamEvent::Retrying { .. } | StreamEvent::ToolInputDelta { .. } => {}
            StreamEvent::TextDelta(t) => text.push_str(&t),
            StreamEvent::ToolCall {
                id, name, input, ..
            } => calls.push(json!({"type": "tool_use", "id": id, "name": name, "input": input})),
            StreamEvent::Finished { stop_reason, .. } => {
                stop = stop_reason;
                break;
            }
        }
    }
    let content = if calls.is_empty() {
        json!({"type": "text", "text": text})
    } else {
        let mut blocks = Vec::new();
        if !text.is_empty() {
            blocks.push(json!({"type": "text", "text": text}));
        }
        blocks.extend(calls.iter().cloned());
        Value::Array(blocks)
    };
    let stop_reason = match stop.as_deref() {
        _ if !calls.is_empty() => Some("toolUse".to_string()),
        Some("end_turn" | "stop") | None => Some("endTurn".to_string()),
        Some("max_tokens" | "length") => Some("maxTokens".to_string()),
        Some("stop_sequence") => Some("stopSequence".to_string()),
        Some("tool_use" | "tool_calls") => Some("toolUse".to_string()),
        Some(other) => Some(other.to_string()),
    };
    Ok(CreateMessageResult {
        role: "assistant".into(),
        content,
        model,
        stop_reason,
    })
}

/// The provider-neutral request for a sampling request.
pub fn chat_request(
    request: &CreateMessageRequest,
    model: &str,
) -> Result<ChatRequest, SamplingError> {
    let messages: Vec<Arc<Message>> = request
        .messages
        .iter()
        .map(|m| message(m).map(Arc::new))
        .collect::<Result<_, _>>()?;
    let tools: Vec<ToolDefinition> = request
        .tools
        .iter()
        .flatten()
        .map(|t| ToolDefinition {
            name: t["name"].as_str().unwrap_or_default().to_string(),
            description: t["description"].as_str().unwrap_or_default().to_string(),
            input_schema: crate::mcp::schema_text::SchemaText::from(
                t.get("inputSchema")
                    .cloned()
                    .unwrap_or_else(|| json!({"type": "object"})),
            ),
        })
        .collect();
    let tool_choice = request
        .tool_choice
        .as_ref()
        .and_then(|c| c.get("mode"))
        .and_then(Value::as_str)
        .map(|mode| match mode {
            "required" => ToolChoice::Required,
            "none" => ToolChoice::None,
            _ => ToolChoice::Auto,
        });
    Ok(ChatRequest {
        system: request.system_prompt.as_deref().map(Arc::from),
        messages: messages.into(),
        tools: tools.into(),
        options: RequestOptions {
            model: Some(model.to_string()),
            max_tokens: Some(request.max_tokens.min(u32::MAX as u64) as u32),
            temperature: request.temperature,
            stop_sequences: request.stop_sequences.clone(),
            tool_choice,
        },
    })
}

fn message(m: &SamplingMessage) -> Result<Message, SamplingError> {
    let role = match m.role.as_str() {
        "user" => Role::User,
        "assistant" => Role::Assistant,
        other => return Err(SamplingError::UnknownRole(other.to_string())),
    };
    let blocks: Vec<&Value> = match &m.content {
        Value::Array(all) => all.iter().collect(),
        one => vec![one],
    };
    Ok(Message {
        role,
        content: blocks.into_iter().map(block).collect(),
        cut_off: false,
    })
}

fn block(b: &Value) -> Block {
    let text_of = |b: &Value| b["text"].as_str().unwrap_or_default().to_string();
    match b["type"].as_str().unwrap_or_default() {
        "text" => Block::Text { text: text_of(b) },
        "tool_use" => Block::ToolUse {
            id: b["id"].as_str().unwrap_or_default().to_string(),
            name: b["name"].as_str().unwrap_or_default().to_string(),
            input: b.get("input").cloned().unwrap_or_else(|| json!({})),
        },
        "tool_result" => Block::ToolResult {
            tool_use_id: b["toolUseId"].as_str().unwrap_or_default().to_string(),
            content: b["content"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|p| match p["type"].as_str() {
                    Some("image") => ResultPart::Image {
                        media_type: p["mimeType"].as_str().unwrap_or("image/png").to_string(),
                        data: p["data"].as_str().unwrap_or_default().to_string(),
                    },
                    Some("text") => ResultPart::Text { text: text_of(p) },
                    _ => ResultPart::Text {
                        text: p.to_string(),
                    },
                })
                .collect(),
            is_error: b["isError"].as_bool().unwrap_or(false),
        },
        "image"
            if b["mimeType"]
                .as_str()
                .is_some_and(|m| super::prompt::IMAGE_TYPES.contains(&m)) =>
        {
            Block::Image {
                media_type: b["mimeType"].as_str().unwrap_or_default().to_string(),
                data: b["data"].as_str().unwrap_or_default().to_string(),
            }
        }
        other => Block::Text {
            text: format!(
                "[{other} content ({}) is not passed to the model]",
                b["mimeType"].as_str().unwrap_or("unknown type")
            ),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn models() -> Vec<String> {
        vec!["small-haiku".into(), "big-opus".into()]
    }

    #[test]
    fn images_go_to_the_model_as_images_audio_as_a_note() {
        let m = |content: Value| {
            message(&SamplingMessage {
                role: "user".into(),
                content,
            })
            .unwrap()
            .content
        };
        assert_eq!(
            m(json!({"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="})),
            vec![Block::Image {
                media_type: "image/png".into(),
                data: "iVBORw0KGgo=".into()
            }]
        );
        assert_eq!(
            m(json!([{"type": "audio", "mimeType": "audio/wav", "data": "UklGRg=="}])),
            vec![Block::Text {
                text: "[audio content (audio/wav) is not passed to the model]".into()
            }]
        );
    }

    #[test]
    fn hints_pick_by_name_then_priorities_then_the_configured_model() {
        let m = models();
        let pick = |prefs: Value| choose_model("mid-sonnet", &m, Some(&prefs));
        assert_eq!(pick(json!({"hints": [{"name": "OPUS"}]})), "big-opus");
        assert_eq!(
            pick(json!({"hints": [{"name": "gpt"}, {"name": "sonnet"}]})),
            "mid-sonnet"
        );
        assert_eq!(pick(json!({"intelligencePriority": 0.9})), "big-opus");
        assert_eq!(
            pick(json!({"costPriority": 0.8, "intelligencePriority": 0.2})),
            "small-haiku"
        );
        assert_eq!(
            pick(json!({"speedPriority": 0.5, "intelligencePriority": 0.5})),
            "mid-sonnet"
        );
        assert_eq!(choose_model("mid-sonnet", &m, None), "mid-sonnet");
        assert_eq!(
            choose_model("only", &[], Some(&json!({"intelligencePriority": 1.0}))),
            "only"
        );
    }

    #[test]
    fn a_request_with_tools_and_tool_results_becomes_a_chat_request() {
        let req: CreateMessageRequest = serde_json::from_value(json!({
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "weather?"}},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "w", "input": {"c": "P"}}]},
                {"role": "user", "content": [{"type": "tool_result", "toolUseId": "t1", "content": [{"type": "text", "text": "sunny"}]}]}
            ],
            "systemPrompt": "Be brief", "maxTokens": 50, "temperature": 0.2,
            "stopSequences": ["END"],
            "tools": [{"name": "w", "description": "Weather", "inputSchema": {"type": "object"}}],
            "toolChoice": {"mode": "required"}
        }))
        .unwrap();
        let chat = chat_request(&req, "m").unwrap();
        assert_eq!(chat.system.as_deref(), Some("Be brief"));
        assert_eq!(
            chat.options,
            RequestOptions {
                model: Some("m".into()),
                max_tokens: Some(50),
                temperature: Some(0.2),
                stop_sequences: vec!["END".into()],
                tool_choice: Some(ToolChoice::Required),
            }
        );
        assert_eq!(chat.tools[0].name, "w");
        assert_eq!(
            chat.messages[2].content,
            vec![Block::ToolResult {
                tool_use_id: "t1".into(),
                content: vec![ResultPart::Text {
                    text: "sunny".into()
                }],
                is_error: false
            }]
        );
        let body: Value = serde_json::from_slice(&provider::anthropic::encode_request(
            &chat,
            "configured",
            8192,
            true,
        ))
        .unwrap();
        assert_eq!(body["model"], "m");
        assert_eq!(body["max_tokens"], 50);
        assert_eq!(body["temperature"], 0.2);
        assert_eq!(body["stop_sequences"], json!(["END"]));
        assert_eq!(body["tool_choice"], json!({"type": "any"}));
        let body: Value =
            serde_json::from_slice(&provider::openai::encode_request(&chat, "configured", true))
                .unwrap();
        assert_eq!(body["max_completion_tokens"], 50);
        assert_eq!(body.get("max_tokens"), None);
        assert_eq!(body["stop"], json!(["END"]));
        assert_eq!(body["tool_choice"], "required");
    }
}
