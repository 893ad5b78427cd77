//! What servers ask the user, in the desktop app: the bridge payloads of the consent queue
//! (an elicitation form, a URL to visit, a sampling request), the task that forwards the
//! pending list to the window, and the answer the window sends back.
//!
//! Holding the queue's receiver (the forwarding task) is what makes the app a front end:
//! while a project is open, asks wait for the user instead of getting their default. A URL
//! elicitation's page opens from Rust, from the URL the server sent (never one the window
//! supplies), and only when the user accepted. A sampling request is approved once or
//! "always for this server" (optionally asking to review the model's answer), or refused;
//! the core then runs it on the configured provider and, for a review, sends the answer
//! back as a second ask (Send / Refuse).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tauri::AppHandle;
use tokio::task::AbortHandle;
use ts_rs::TS;

use std::collections::BTreeMap;

use harness9::mcp::elicit_form::{ElicitForm, FieldErrors, FieldValue};
use harness9::mcp::manager::{Ask, AskAnswer, AskError, AskKind, SamplingChoice};
use harness9::mcp::requests::{CreateMessageRequest, ElicitRequest, ElicitResult};
use harness9::Harness;

use crate::bridge::{events, BridgeError, BridgeResult, ErrorCode, ProjectEmitter};

/// What the server hears when the user refuses a sampling request or its answer.
pub const SAMPLING_REFUSAL: &str = "the user refused the sampling request";

/// One pending ask, naming the server that asks.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AskDto {
    pub id: u64,
    pub server: String,
    pub request: AskRequestDto,
}

/// What is asked.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum AskRequestDto {
    /// Fill in `form`, the core's form of `schema`; `null` when a form cannot show the
    /// schema (the dialog then takes a JSON object).
    Form {
        message: String,
        schema: Value,
        form: Option<ElicitForm>,
    },
    /// Agree to visit `url`; `domain` is its full host (and port), shown prominently.
    #[serde(rename_all = "camelCase")]
    Url {
        message: String,
        url: String,
        domain: Option<String>,
    },
    /// Let the host's model answer these messages (approve once, always, or refuse).
    #[serde(rename_all = "camelCase")]
    Sampling {
        messages: Value,
        system_prompt: Option<String>,
        max_tokens: u64,
        tools: Option<Value>,
        model_preferences: Option<Value>,
    },
    /// The model's answer to an approved request: send it to the server, or refuse.
    #[serde(rename_all = "camelCase")]
    SamplingReview {
        messages: Value,
        system_prompt: Option<String>,
        max_tokens: u64,
        tools: Option<Value>,
        model_preferences: Option<Value>,
        /// The model that answered.
        model: String,
        /// The answer: one content block, or an array of them (text, tool calls).
        content: Value,
        stop_reason: Option<String>,
    },
}

fn sampling_parts(
    r: &CreateMessageRequest,
) -> (Value, Option<String>, u64, Option<Value>, Option<Value>) {
    (
        serde_json::to_value(&r.messages).unwrap_or(Value::Null),
        r.system_prompt.clone(),
        r.max_tokens,
        r.tools.as_ref().map(|t| Value::Array(t.clone())),
        r.model_preferences.clone(),
    )
}

impl From<&Ask> for AskDto {
    fn from(a: &Ask) -> Self {
        let Ask {
            id,
            server,
            kind,
            url_domain,
            arrived: _,
        } = a;
        let request = match kind {
            AskKind::Elicitation {
                request:
                    ElicitRequest::Form {
                        message,
                        requested_schema,
                    },
            } => AskRequestDto::Form {
                message: message.clone(),
                schema: requested_schema.clone(),
                form: ElicitForm::of(requested_schema),
            },
            AskKind::Elicitation {
                request:
                    ElicitRequest::Url {
                        message,
                        url,
                        elicitation_id: _,
                    },
            } => AskRequestDto::Url {
                message: message.clone(),
                url: url.clone(),
                domain: url_domain.clone(),
            },
            AskKind::Sampling { request } => {
                let (messages, system_prompt, max_tokens, tools, model_preferences) =
                    sampling_parts(request);
                AskRequestDto::Sampling {
                    messages,
                    system_prompt,
                    max_tokens,
                    tools,
                    model_preferences,
                }
            }
            AskKind::SamplingReview { request, result } => {
                let (messages, system_prompt, max_tokens, tools, model_preferences) =
                    sampling_parts(request);
                AskRequestDto::SamplingReview {
                    messages,
                    system_prompt,
                    max_tokens,
                    tools,
                    model_preferences,
                    model: result.model.clone(),
                    content: result.content.clone(),
                    stop_reason: result.stop_reason.clone(),
                }
            }
        };
        AskDto {
            id: *id,
            server: server.clone(),
            request,
        }
    }
}

/// The user's answer, as the spec's actions.
#[derive(Debug, Clone, PartialEq, Deserialize, TS)]
#[serde(tag = "action", rename_all = "camelCase")]
pub enum AskAnswerDto {
    /// Submit the form with `content` (fields left out get the schema's defaults), agree
    /// to open the URL, run a sampling request once, or send the model's answer.
    Accept { content: Option<Value> },
    /// Submit a form with what the user typed in each control (the core builds the
    /// content and checks it against the schema).
    Fill {
        values: BTreeMap<String, FieldValue>,
    },
    /// Run a sampling request: `always` for this server (until revoked), and whether to
    /// `review` the model's answer before it is sent.
    Approve { always: bool, review: bool },
    /// Say no (a sampling request or its answer is refused).
    Decline,
    /// Dismiss without choosing.
    Cancel,
}

/// Every pending ask, oldest first.
pub fn pending(harness: &Harness) -> Vec<AskDto> {
    harness.pending_asks().iter().map(AskDto::from).collect()
}

/// Answers ask `id`; accepting a URL elicitation opens its URL first. A form whose fields
/// do not fit its schema is not sent: the answer is a message per field (empty when the
/// answer was taken), and the ask stays pending.
pub async fn answer(
    app: &AppHandle,
    harness: &Harness,
    id: u64,
    answer: AskAnswerDto,
) -> BridgeResult<FieldErrors> {
    let ask = harness
        .pending_asks()
        .into_iter()
        .find(|a| a.id == id)
        .ok_or_else(|| {
            BridgeError::new(
                ErrorCode::NotFound,
                format!("there is no pending request {id} (it was answered, cancelled by the server, or timed out)"),
            )
        })?;
    let reply = match (&ask.kind, answer) {
        (
            AskKind::Sampling { .. } | AskKind::SamplingReview { .. },
            AskAnswerDto::Approve { always, review },
        ) => AskAnswer::Approve(SamplingChoice { always, review }),
        (
            AskKind::Sampling { .. } | AskKind::SamplingReview { .. },
            AskAnswerDto::Accept { .. },
        ) => AskAnswer::Approve(SamplingChoice::default()),
        (
            AskKind::Sampling { .. } | AskKind::SamplingReview { .. },
            AskAnswerDto::Decline | AskAnswerDto::Cancel,
        ) => AskAnswer::Refuse(SAMPLING_REFUSAL.into()),
        (_, AskAnswerDto::Fill { values }) => {
            return taken(harness.answer_form(id, &values));
        }
        (AskKind::Elicitation { .. }, AskAnswerDto::Approve { .. }) => {
            return Err(BridgeError::new(
                ErrorCode::Internal,
                format!("request {id} is an elicitation: accept, decline or cancel it"),
            ))
        }
        (AskKind::Elicitation { .. }, AskAnswerDto::Decline) => {
            AskAnswer::Elicit(ElicitResult::decline())
        }
        (AskKind::Elicitation { .. }, AskAnswerDto::Cancel) => {
            AskAnswer::Elicit(ElicitResult::cancel())
        }
        (
            AskKind::Elicitation {
                request:
                    ElicitRequest::Form {
                        requested_schema, ..
                    },
            },
            AskAnswerDto::Accept { content },
        ) => {
            let content = match content {
                Some(Value::Object(map)) => map,
                None | Some(Value::Null) => Default::default(),
                Some(_) => {
                    return Err(BridgeError::new(
                        ErrorCode::Internal,
                        "the form's answer must be a JSON object of fields",
                    ))
                }
            };
            AskAnswer::Elicit(ElicitResult::accept_form(requested_schema, content))
        }
        (
            AskKind::Elicitation {
                request: ElicitRequest::Url { url, .. },
            },
            AskAnswerDto::Accept { .. },
        ) => {
            crate::auth::opener(app)
                .open(url)
                .await
                .map_err(|e| BridgeError::new(ErrorCode::Io, e))?;
            AskAnswer::Elicit(ElicitResult::accept_url())
        }
    };
    taken(harness.answer_ask(id, reply))
}

fn taken(outcome: Result<(), AskError>) -> BridgeResult<FieldErrors> {
    match outcome {
        Ok(()) => Ok(FieldErrors::new()),
        Err(AskError::Invalid { fields, .. }) => Ok(fields),
        Err(e @ AskError::Unknown(_)) => Err(BridgeError::new(ErrorCode::NotFound, e.to_string())),
        Err(e) => Err(BridgeError::new(ErrorCode::InvalidArguments, e.to_string())),
    }
}

/// The servers of the project that may use the model without asking.
pub async fn sampling_grants(harness: &Harness) -> Vec<String> {
    harness.sampling_grants().await.into_keys().collect()
}

/// Withdraws a server's "always" grant.
pub async fn revoke_sampling(harness: &Harness, server: &str) -> BridgeResult<bool> {
    harness.revoke_sampling(server).await.map_err(|e| {
        BridgeError::new(
            ErrorCode::Io,
            format!("cannot change the sampling grants: {e}"),
        )
    })
}

/// Sends the pending list to the window on every change (and once at the start); holding
/// the receiver makes the app a front end for as long as the task runs.
pub fn forward(app: ProjectEmitter, harness: &Harness) -> AbortHandle {
    let mut rx = harness.subscribe_asks();
    tokio::spawn(async move {
        loop {
            let list: Vec<AskDto> = rx.borrow_and_update().iter().map(AskDto::from).collect();
            app.emit(events::ASKS, list);
            if rx.changed().await.is_err() {
                return;
            }
        }
    })
    .abort_handle()
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness9::mcp::requests::SamplingMessage;
    use serde_json::json;
    use std::time::Instant;

    fn ask(kind: AskKind, url_domain: Option<&str>) -> Value {
        let a = Ask {
            id: 7,
            server: "s".into(),
            kind,
            url_domain: url_domain.map(str::to_string),
            arrived: Instant::now(),
        };
        serde_json::to_value(AskDto::from(&a)).unwrap()
    }

    #[test]
    fn asks_cross_the_bridge_naming_their_server() {
        let form = AskKind::Elicitation {
            request: ElicitRequest::Form {
                message: "Name?".into(),
                requested_schema: json!({"type": "object"}),
            },
        };
        assert_eq!(
            ask(form, None),
            json!({"id": 7, "server": "s", "request": {"kind": "form", "message": "Name?",
                   "schema": {"type": "object"}, "form": {"fields": [], "initial": {}}}})
        );
        let url = AskKind::Elicitation {
            request: ElicitRequest::Url {
                message: "Sign the form".into(),
                url: "https://pay.example.com/x".into(),
                elicitation_id: "e1".into(),
            },
        };
        assert_eq!(
            ask(url, Some("pay.example.com")),
            json!({"id": 7, "server": "s", "request": {"kind": "url", "message": "Sign the form",
                   "url": "https://pay.example.com/x", "domain": "pay.example.com"}})
        );
        let sampling = AskKind::Sampling {
            request: Box::new(CreateMessageRequest {
                messages: vec![SamplingMessage {
                    role: "user".into(),
                    content: json!({"type": "text", "text": "hi"}),
                }],
                system_prompt: Some("be brief".into()),
                max_tokens: 50,
                model_preferences: None,
                include_context: None,
                temperature: None,
                stop_sequences: vec![],
                tools: None,
                tool_choice: None,
                extra: Default::default(),
            }),
        };
        assert_eq!(
            ask(sampling, None),
            json!({"id": 7, "server": "s", "request": {"kind": "sampling",
                   "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                   "systemPrompt": "be brief", "maxTokens": 50, "tools": null,
                   "modelPreferences": null}})
        );
    }

    #[test]
    fn answers_read_the_spec_actions() {
        let read = |v: Value| serde_json::from_value::<AskAnswerDto>(v).unwrap();
        assert_eq!(
            read(json!({"action": "accept", "content": {"a": 1}})),
            AskAnswerDto::Accept {
                content: Some(json!({"a": 1}))
            }
        );
        assert_eq!(read(json!({"action": "decline"})), AskAnswerDto::Decline);
        assert_eq!(
            read(json!({"action": "fill", "values": {"a": "x", "b": true, "c": ["y"]}})),
            AskAnswerDto::Fill {
                values: [
                    ("a".to_string(), FieldValue::Text("x".into())),
                    ("b".to_string(), FieldValue::Flag(true)),
                    ("c".to_string(), FieldValue::Picked(vec!["y".into()])),
                ]
                .into()
            }
        );
        assert_eq!(
            read(json!({"action": "approve", "always": true, "review": false})),
            AskAnswerDto::Approve {
                always: true,
                review: false
            }
        );
        assert_eq!(read(json!({"action": "cancel"})), AskAnswerDto::Cancel);
    }
}
