//! What servers ask the user, in the terminal: a modal over everything else for the oldest
//! pending ask, naming the server. A form has one field per line (Tab / Shift-Tab move,
//! Space toggles a boolean or a choice, typing edits text, Enter accepts, Esc declines,
//! Ctrl-C cancels), pre-filled with the schema's defaults; a schema the form cannot show is
//! answered as one line of JSON. A URL elicitation shows the domain and asks y/n before the
//! runner opens it. A sampling request shows the messages, the system prompt, the token
//! limit and the tools; [y] runs it once, [a] always for this server, [r] toggles reviewing
//! the model's answer before it is sent, [n] / Esc refuses. A review shows the answer:
//! [y] / Enter sends it, [n] / Esc refuses.
//!
//! Pure like the rest of the UI: keys return an [`Action`] for the runner.

use harness9::host::asks::{Ask, AskAnswer, AskKind, SamplingChoice};
use harness9::mcp::elicit_form::{Choice, ElicitForm, FieldKind, FieldValue};
use harness9::mcp::requests::{ElicitRequest, ElicitResult};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::{Map, Value};

use super::model::Action;

pub use harness9::host::asks::SAMPLING_REFUSAL;

/// One field's control (what the user edits; the core builds the content and checks it).
#[derive(Debug, Clone, PartialEq)]
pub enum Control {
    Text {
        text: String,
    },
    Number {
        text: String,
    },
    Bool(bool),
    /// (value, label) choices and the chosen one.
    Choice {
        choices: Vec<(String, String)>,
        chosen: Option<usize>,
    },
    /// (value, label, picked) choices and the one under the cursor.
    Multi {
        choices: Vec<(String, String, bool)>,
        cursor: usize,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    pub name: String,
    pub label: String,
    pub required: bool,
    pub control: Control,
    pub error: Option<String>,
}

/// What the modal shows.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    Form(ElicitForm, Vec<Field>),
    /// A schema the form cannot show: the answer as one line of JSON.
    Json(String),
    Url {
        url: String,
        domain: Option<String>,
    },
    /// Approve a sampling request; `review`: show the answer before it is sent.
    Sampling {
        review: bool,
    },
    /// Send or refuse the model's answer.
    SamplingReview,
}

/// The modal of one ask.
#[derive(Debug, Clone, PartialEq)]
pub struct AskView {
    pub ask: Ask,
    pub body: Body,
    pub focus: usize,
    /// Asks waiting behind this one.
    pub more: usize,
    pub error: Option<String>,
}

/// The controls of a form, with their first values.
fn controls(form: &ElicitForm) -> Vec<Field> {
    form.fields
        .iter()
        .map(|f| {
            let first = form.initial.get(&f.name);
            let text = match first {
                Some(FieldValue::Text(t)) => t.clone(),
                _ => String::new(),
            };
            let pairs = |c: &[Choice]| -> Vec<(String, String)> {
                c.iter()
                    .map(|c| (c.value.clone(), c.label.clone()))
                    .collect()
            };
            let control = match &f.kind {
                FieldKind::String { .. } => Control::Text { text },
                FieldKind::Number { .. } => Control::Number { text },
                FieldKind::Boolean => Control::Bool(first == Some(&FieldValue::Flag(true))),
                FieldKind::Enum { choices } => Control::Choice {
                    chosen: choices.iter().position(|c| c.value == text),
                    choices: pairs(choices),
                },
                FieldKind::Multi { choices, .. } => {
                    let picked = match first {
                        Some(FieldValue::Picked(p)) => p.as_slice(),
                        _ => &[],
                    };
                    Control::Multi {
                        choices: choices
                            .iter()
                            .map(|c| (c.value.clone(), c.label.clone(), picked.contains(&c.value)))
                            .collect(),
                        cursor: 0,
                    }
                }
            };
            Field {
                name: f.name.clone(),
                label: f.label.clone(),
                required: f.required,
                control,
                error: None,
            }
        })
        .collect()
}

/// What a control holds, for the core to build the content from.
fn value(control: &Control) -> FieldValue {
    match control {
        Control::Text { text } | Control::Number { text } => FieldValue::Text(text.clone()),
        Control::Bool(b) => FieldValue::Flag(*b),
        Control::Choice { choices, chosen } => {
            FieldValue::Text(chosen.map(|i| choices[i].0.clone()).unwrap_or_default())
        }
        Control::Multi { choices, .. } => FieldValue::Picked(
            choices
                .iter()
                .filter(|c| c.2)
                .map(|c| c.0.clone())
                .collect(),
        ),
    }
}

/// The schema's defaults as one line of JSON (the JSON answer's first text).
fn defaults_json(schema: &Value) -> String {
    let defaults = harness9::mcp::requests::with_defaults(schema, Map::new());
    Value::Object(defaults).to_string()
}

impl AskView {
    pub fn new(ask: &Ask, more: usize) -> AskView {
        let body = match &ask.kind {
            AskKind::Elicitation {
                request:
                    ElicitRequest::Form {
                        requested_schema, ..
                    },
            } => match ElicitForm::of(requested_schema) {
                Some(form) => {
                    let fields = controls(&form);
                    Body::Form(form, fields)
                }
                None => Body::Json(defaults_json(requested_schema)),
            },
            AskKind::Elicitation {
                request: ElicitRequest::Url { url, .. },
            } => Body::Url {
                url: url.clone(),
                domain: ask.url_domain.clone(),
            },
            // Views run in the desktop app only; were one to ask here, it is a yes or no.
            AskKind::Sampling { .. } | AskKind::View { .. } => Body::Sampling { review: false },
            AskKind::SamplingReview { .. } => Body::SamplingReview,
        };
        AskView {
            ask: ask.clone(),
            body,
            focus: 0,
            more,
            error: None,
        }
    }

    fn answer(&self, answer: AskAnswer) -> Option<Action> {
        Some(Action::AnswerAsk {
            id: self.ask.id,
            answer,
        })
    }

    /// A key while the modal is up; every key is the modal's.
    pub fn on_key(&mut self, key: KeyEvent) -> Option<Action> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let sampling = matches!(self.body, Body::Sampling { .. } | Body::SamplingReview);
        let cancel = ctrl && key.code == KeyCode::Char('c');
        if sampling && (cancel || matches!(key.code, KeyCode::Esc | KeyCode::Char('n'))) {
            return self.answer(AskAnswer::Refuse(SAMPLING_REFUSAL.into()));
        }
        if cancel {
            return self.answer(AskAnswer::Elicit(ElicitResult::cancel()));
        }
        if key.code == KeyCode::Esc {
            return self.answer(AskAnswer::Elicit(ElicitResult::decline()));
        }
        match &mut self.body {
            Body::Sampling { review } => match key.code {
                KeyCode::Char('r') => {
                    *review = !*review;
                    None
                }
                KeyCode::Char(c @ ('y' | 'a')) => {
                    let choice = SamplingChoice {
                        always: c == 'a',
                        review: *review,
                    };
                    self.answer(AskAnswer::Approve(choice))
                }
                _ => None,
            },
            Body::SamplingReview => match key.code {
                KeyCode::Char('y') | KeyCode::Enter => {
                    self.answer(AskAnswer::Approve(SamplingChoice::default()))
                }
                _ => None,
            },
            Body::Url { url, .. } => match key.code {
                KeyCode::Char('y') => Some(Action::OpenAsk {
                    id: self.ask.id,
                    url: url.clone(),
                }),
                KeyCode::Char('n') => self.answer(AskAnswer::Elicit(ElicitResult::decline())),
                _ => None,
            },
            Body::Json(text) => match key.code {
                KeyCode::Char(c) if !ctrl => {
                    text.push(c);
                    None
                }
                KeyCode::Backspace => {
                    text.pop();
                    None
                }
                KeyCode::Enter => match serde_json::from_str::<Value>(text) {
                    Ok(Value::Object(content)) => self.accept(content),
                    Ok(_) => {
                        self.error = Some("the answer must be one JSON object".into());
                        None
                    }
                    Err(e) => {
                        self.error = Some(format!("not valid JSON: {e}"));
                        None
                    }
                },
                _ => None,
            },
            Body::Form(_, fields) => {
                let n = fields.len();
                match key.code {
                    KeyCode::Tab | KeyCode::Down if n > 0 => self.focus = (self.focus + 1) % n,
                    KeyCode::BackTab | KeyCode::Up if n > 0 => {
                        self.focus = (self.focus + n - 1) % n
                    }
                    KeyCode::Enter => return self.submit(),
                    _ => {
                        if let Some(f) = fields.get_mut(self.focus) {
                            edit(&mut f.control, key.code, ctrl);
                        }
                    }
                }
                None
            }
        }
    }

    fn accept(&self, content: Map<String, Value>) -> Option<Action> {
        let AskKind::Elicitation {
            request: ElicitRequest::Form {
                requested_schema, ..
            },
        } = &self.ask.kind
        else {
            return None;
        };
        self.answer(AskAnswer::Elicit(ElicitResult::accept_form(
            requested_schema,
            content,
        )))
    }

    /// Enter on a form: the content, or the fields marked with what is wrong.
    fn submit(&mut self) -> Option<Action> {
        let Body::Form(form, fields) = &mut self.body else {
            return None;
        };
        let values = fields
            .iter()
            .map(|f| (f.name.clone(), value(&f.control)))
            .collect();
        match form.content(&values) {
            Ok(content) => self.accept(content),
            Err(errors) => {
                for f in fields.iter_mut() {
                    f.error = errors.get(&f.name).cloned();
                }
                self.focus = fields.iter().position(|f| f.error.is_some()).unwrap_or(0);
                None
            }
        }
    }
}

/// Edits a control with a key (typing, Backspace, Space, Left/Right).
fn edit(control: &mut Control, code: KeyCode, ctrl: bool) {
    match (control, code) {
        (Control::Bool(b), KeyCode::Char(' ')) => *b = !*b,
        (Control::Choice { choices, chosen }, KeyCode::Char(' ') | KeyCode::Right) => {
            *chosen = Some(chosen.map_or(0, |i| (i + 1) % choices.len()));
        }
        (Control::Choice { choices, chosen }, KeyCode::Left) => {
            let n = choices.len();
            *chosen = Some(chosen.map_or(n - 1, |i| (i + n - 1) % n));
        }
        (Control::Multi { choices, cursor }, KeyCode::Char(' ')) => {
            if let Some(c) = choices.get_mut(*cursor) {
                c.2 = !c.2;
            }
        }
        (Control::Multi { choices, cursor }, KeyCode::Right) => {
            *cursor = (*cursor + 1).min(choices.len().saturating_sub(1))
        }
        (Control::Multi { cursor, .. }, KeyCode::Left) => *cursor = cursor.saturating_sub(1),
        (Control::Text { text, .. } | Control::Number { text, .. }, KeyCode::Char(c)) if !ctrl => {
            text.push(c)
        }
        (Control::Text { text, .. } | Control::Number { text, .. }, KeyCode::Backspace) => {
            text.pop();
        }
        _ => {}
    }
}
