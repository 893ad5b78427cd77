//! What a front end shows of an [`Ask`] and how the user's choice becomes its
//! [`AskAnswer`]: the view of each pending ask (a form with the core's form of its schema,
//! a URL with its domain, a sampling request or the model's answer to review), and the
//! spec's actions a front end answers with (accept, fill, approve, decline, cancel).
//!
//! A URL elicitation's page is opened by the front end, from the URL the server sent
//! (never one the front end supplies), and only when the user accepted:
//! [`AskReply::resolve`] says so with [`Resolved::OpenUrl`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::queue::{Ask, AskAnswer, AskError, AskKind, SamplingChoice, ViewAsk};
use crate::mcp::elicit_form::{ElicitForm, FieldValue};
use crate::mcp::requests::{CreateMessageRequest, ElicitRequest, ElicitResult};

/// What the server hears when the user refuses a sampling request or its answer.
pub const SAMPLING_REFUSAL: &str = "the user refused the sampling request";

/// What a view hears when the user says no to its request.
pub const VIEW_REFUSAL: &str = "the user refused the view's request";

/// One pending ask as a front end shows it, naming the server that asks.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct AskView {
    pub id: u64,
    pub server: String,
    pub request: AskDetail,
}

/// What is asked.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum AskDetail {
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
    /// A view of the server (MCP Apps) asks: approve (for a tool call, `always` remembers
    /// "allow" for the tool) or decline; accepting a link opens it. `domain` is a link's
    /// full host, shown first.
    #[serde(rename_all = "camelCase")]
    View {
        view_id: String,
        request: ViewAsk,
        domain: Option<String>,
    },
}

type SamplingParts = (Value, Option<String>, u64, Option<Value>, Option<Value>);

fn sampling_parts(r: &CreateMessageRequest) -> SamplingParts {
    (
        serde_json::to_value(&r.messages).unwrap_or(Value::Null),
        r.system_prompt.clone(),
        r.max_tokens,
        r.tools.as_ref().map(|t| Value::Array(t.clone())),
        r.model_preferences.clone(),
    )
}

impl Ask {
    /// The ask as a front end shows it.
    pub fn view(&self) -> AskView {
        let request = match &self.kind {
            AskKind::Elicitation {
                request:
                    ElicitRequest::Form {
                        message,
                        requested_schema,
                    },
            } => AskDetail::Form {
                message: message.clone(),
                schema: requested_schema.clone(),
                form: ElicitForm::of(requested_schema),
            },
            AskKind::Elicitation {
                request: ElicitRequest::Url { message, url, .. },
            } => AskDetail::Url {
                message: message.clone(),
                url: url.clone(),
                domain: self.url_domain.clone(),
            },
            AskKind::Sampling { request } => {
                let (messages, system_prompt, max_tokens, tools, model_preferences) =
                    sampling_parts(request);
                AskDetail::Sampling {
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
                AskDetail::SamplingReview {
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
            AskKind::View { view_id, request } => AskDetail::View {
                view_id: view_id.clone(),
                request: request.clone(),
                domain: self.url_domain.clone(),
            },
        };
        AskView {
            id: self.id,
            server: self.server.clone(),
            request,
        }
    }
}

/// The user's answer to an ask, as the spec's actions.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "action", rename_all = "camelCase")]
pub enum AskReply {
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

/// Why a reply was not taken.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReplyError {
    #[error(transparent)]
    Ask(#[from] AskError),
    /// The URL of an accepted URL elicitation did not open; nothing was sent.
    #[error("cannot open {url}: {reason}")]
    Open {
        url: String,
        reason: crate::mcp::auth::BrowserError,
    },
    /// The URL is not one harness9 opens ([`crate::links::check_link`]); nothing was sent.
    #[error("refused to open {url:?}: {refused}")]
    Refused {
        url: String,
        refused: crate::links::LinkRefused,
    },
}

impl ReplyError {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        match self {
            ReplyError::Ask(e) => e.code(),
            ReplyError::Open { reason, .. } => reason.code(),
            ReplyError::Refused { .. } => "link-refused",
        }
    }
}

/// What a reply comes to for one ask.
#[derive(Debug, Clone, PartialEq)]
pub enum Resolved {
    /// Send this answer.
    Answer(AskAnswer),
    /// Build the form's content from these values, check it, and send it.
    Fill(BTreeMap<String, FieldValue>),
    /// Open this URL (the server's), then accept the elicitation.
    OpenUrl(String),
}

impl AskReply {
    /// What this reply to `ask` comes to; a reply the ask does not take is
    /// [`AskError::WrongAnswer`].
    pub fn resolve(self, ask: &Ask) -> Result<Resolved, AskError> {
        let wrong = |kind, expected| AskError::WrongAnswer {
            id: ask.id,
            kind,
            expected,
        };
        let answer = match (&ask.kind, self) {
            (_, AskReply::Fill { values }) => return Ok(Resolved::Fill(values)),
            (
                AskKind::Sampling { .. } | AskKind::SamplingReview { .. },
                AskReply::Approve { always, review },
            ) => AskAnswer::Approve(SamplingChoice { always, review }),
            (
                AskKind::Sampling { .. } | AskKind::SamplingReview { .. },
                AskReply::Accept { .. },
            ) => AskAnswer::Approve(SamplingChoice::default()),
            (
                AskKind::Sampling { .. } | AskKind::SamplingReview { .. },
                AskReply::Decline | AskReply::Cancel,
            ) => AskAnswer::Refuse(SAMPLING_REFUSAL.into()),
            (
                AskKind::View {
                    request: ViewAsk::OpenLink { url },
                    ..
                },
                AskReply::Accept { .. } | AskReply::Approve { .. },
            ) => return Ok(Resolved::OpenUrl(url.clone())),
            (
                AskKind::View {
                    request: ViewAsk::ToolCall { .. },
                    ..
                },
                AskReply::Approve { always, .. },
            ) => AskAnswer::Approve(SamplingChoice {
                always,
                review: false,
            }),
            (
                AskKind::View {
                    request: ViewAsk::ToolCall { .. } | ViewAsk::Permissions { .. },
                    ..
                },
                AskReply::Accept { .. } | AskReply::Approve { .. },
            ) => AskAnswer::Approve(SamplingChoice::default()),
            (AskKind::View { .. }, AskReply::Decline | AskReply::Cancel) => {
                AskAnswer::Refuse(VIEW_REFUSAL.into())
            }
            (AskKind::Elicitation { .. }, AskReply::Approve { .. }) => {
                return Err(wrong("an elicitation", "accept, decline or cancel"))
            }
            (AskKind::Elicitation { .. }, AskReply::Decline) => {
                AskAnswer::Elicit(ElicitResult::decline())
            }
            (AskKind::Elicitation { .. }, AskReply::Cancel) => {
                AskAnswer::Elicit(ElicitResult::cancel())
            }
            (
                AskKind::Elicitation {
                    request:
                        ElicitRequest::Form {
                            requested_schema, ..
                        },
                },
                AskReply::Accept { content },
            ) => {
                let content = match content {
                    Some(Value::Object(map)) => map,
                    None | Some(Value::Null) => Default::default(),
                    Some(_) => return Err(wrong("a form", "a JSON object of fields")),
                };
                AskAnswer::Elicit(ElicitResult::accept_form(requested_schema, content))
            }
            (
                AskKind::Elicitation {
                    request: ElicitRequest::Url { url, .. },
                },
                AskReply::Accept { .. },
            ) => return Ok(Resolved::OpenUrl(url.clone())),
        };
        Ok(Resolved::Answer(answer))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::requests::SamplingMessage;
    use serde_json::json;
    use std::time::Instant;

    fn ask(kind: AskKind, url_domain: Option<&str>) -> Ask {
        Ask {
            id: 7,
            server: "s".into(),
            kind,
            url_domain: url_domain.map(str::to_string),
            arrived: Instant::now(),
            task: None,
        }
    }

    fn form() -> AskKind {
        AskKind::Elicitation {
            request: ElicitRequest::Form {
                message: "Name?".into(),
                requested_schema: json!({"type": "object"}),
            },
        }
    }

    fn url() -> AskKind {
        AskKind::Elicitation {
            request: ElicitRequest::Url {
                message: "Sign the form".into(),
                url: "https://pay.example.com/x".into(),
                elicitation_id: "e1".into(),
            },
        }
    }

    fn sampling() -> AskKind {
        AskKind::Sampling {
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
        }
    }

    #[test]
    fn views_name_the_server_that_asks() {
        let view = |a: Ask| serde_json::to_value(a.view()).unwrap();
        assert_eq!(
            view(ask(form(), None)),
            json!({"id": 7, "server": "s", "request": {"kind": "form", "message": "Name?",
                   "schema": {"type": "object"}, "form": {"fields": [], "initial": {}}}})
        );
        assert_eq!(
            view(ask(url(), Some("pay.example.com"))),
            json!({"id": 7, "server": "s", "request": {"kind": "url", "message": "Sign the form",
                   "url": "https://pay.example.com/x", "domain": "pay.example.com"}})
        );
        assert_eq!(
            view(ask(sampling(), None)),
            json!({"id": 7, "server": "s", "request": {"kind": "sampling",
                   "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                   "systemPrompt": "be brief", "maxTokens": 50, "tools": null,
                   "modelPreferences": null}})
        );
    }

    #[test]
    fn replies_read_the_spec_actions() {
        let read = |v: Value| serde_json::from_value::<AskReply>(v).unwrap();
        assert_eq!(
            read(json!({"action": "accept", "content": {"a": 1}})),
            AskReply::Accept {
                content: Some(json!({"a": 1}))
            }
        );
        assert_eq!(read(json!({"action": "decline"})), AskReply::Decline);
        assert_eq!(
            read(json!({"action": "fill", "values": {"a": "x", "b": true, "c": ["y"]}})),
            AskReply::Fill {
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
            AskReply::Approve {
                always: true,
                review: false
            }
        );
        assert_eq!(read(json!({"action": "cancel"})), AskReply::Cancel);
    }

    #[test]
    fn replies_come_to_the_answer_of_their_ask() {
        let accept = |c: Option<Value>| AskReply::Accept { content: c };
        assert_eq!(
            accept(None).resolve(&ask(url(), None)),
            Ok(Resolved::OpenUrl("https://pay.example.com/x".into()))
        );
        assert_eq!(
            accept(Some(json!({"a": 1}))).resolve(&ask(form(), None)),
            Ok(Resolved::Answer(AskAnswer::Elicit(
                ElicitResult::accept_form(
                    &json!({"type": "object"}),
                    json!({"a": 1}).as_object().unwrap().clone()
                )
            )))
        );
        assert!(matches!(
            accept(Some(json!([1]))).resolve(&ask(form(), None)),
            Err(AskError::WrongAnswer { .. })
        ));
        assert!(matches!(
            AskReply::Approve {
                always: false,
                review: false
            }
            .resolve(&ask(form(), None)),
            Err(AskError::WrongAnswer { .. })
        ));
        assert_eq!(
            AskReply::Decline.resolve(&ask(form(), None)),
            Ok(Resolved::Answer(AskAnswer::Elicit(ElicitResult::decline())))
        );
        assert_eq!(
            AskReply::Cancel.resolve(&ask(sampling(), None)),
            Ok(Resolved::Answer(AskAnswer::Refuse(SAMPLING_REFUSAL.into())))
        );
        assert_eq!(
            AskReply::Approve {
                always: true,
                review: true
            }
            .resolve(&ask(sampling(), None)),
            Ok(Resolved::Answer(AskAnswer::Approve(SamplingChoice {
                always: true,
                review: true
            })))
        );
    }
}
