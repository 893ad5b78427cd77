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

use harness9::mcp::manager::{Ask, AskAnswer, AskKind, SamplingChoice};
use harness9::mcp::requests::{ElicitRequest, ElicitResult};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::{Map, Value};

use super::app::{Action, App};

/// What the server hears when the user refuses a sampling request or its answer.
pub const SAMPLING_REFUSAL: &str = "the user refused the sampling request";

/// The string formats the form checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Email,
    Uri,
    Date,
    DateTime,
}

/// One field's control.
#[derive(Debug, Clone, PartialEq)]
pub enum Control {
    Text {
        format: Option<Format>,
        text: String,
    },
    Number {
        integer: bool,
        min: Option<f64>,
        max: Option<f64>,
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
    Form(Vec<Field>),
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

fn choices(s: &Value) -> Option<Vec<(String, String)>> {
    if let Some(values) = s.get("enum").and_then(Value::as_array) {
        let names = s.get("enumNames").and_then(Value::as_array);
        return values
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let v = v.as_str()?.to_string();
                let label = names
                    .and_then(|n| n.get(i))
                    .and_then(Value::as_str)
                    .unwrap_or(&v)
                    .to_string();
                Some((v, label))
            })
            .collect();
    }
    let options = s
        .get("oneOf")
        .or_else(|| s.get("anyOf"))
        .and_then(Value::as_array)?;
    options
        .iter()
        .map(|o| {
            let v = o.get("const")?.as_str()?.to_string();
            let label = o.get("title").and_then(Value::as_str).unwrap_or(&v);
            Some((v.clone(), label.to_string()))
        })
        .collect()
}

fn control(s: &Value) -> Option<Control> {
    let default = s.get("default");
    let ty = s.get("type").and_then(Value::as_str);
    let picks = choices(s);
    if picks.is_none()
        && ["enum", "oneOf", "anyOf"]
            .iter()
            .any(|k| s.get(*k).is_some())
    {
        return None;
    }
    // A choice among none cannot be answered in a form: the JSON answer takes it.
    if let (Some(c), None | Some("string")) = (picks, ty) {
        if c.is_empty() {
            return None;
        }
        let chosen = default
            .and_then(Value::as_str)
            .and_then(|d| c.iter().position(|(v, _)| v == d));
        return Some(Control::Choice { choices: c, chosen });
    }
    let text = |d: Option<&Value>| match d {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => String::new(),
    };
    match ty? {
        "string" => {
            let format = match s.get("format").and_then(Value::as_str) {
                None => None,
                Some("email") => Some(Format::Email),
                Some("uri") => Some(Format::Uri),
                Some("date") => Some(Format::Date),
                Some("date-time") => Some(Format::DateTime),
                Some(_) => return None,
            };
            Some(Control::Text {
                format,
                text: text(default),
            })
        }
        t @ ("number" | "integer") => Some(Control::Number {
            integer: t == "integer",
            min: s.get("minimum").and_then(Value::as_f64),
            max: s.get("maximum").and_then(Value::as_f64),
            text: text(default),
        }),
        "boolean" => Some(Control::Bool(default == Some(&Value::Bool(true)))),
        "array" => {
            let picked: Vec<&str> = default
                .and_then(Value::as_array)
                .map(|d| d.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let c = choices(s.get("items")?)?;
            Some(Control::Multi {
                choices: c
                    .into_iter()
                    .map(|(v, l)| {
                        let on = picked.contains(&v.as_str());
                        (v, l, on)
                    })
                    .collect(),
                cursor: 0,
            })
        }
        _ => None,
    }
}

/// The fields of a flat object schema, or `None` when the form cannot show it.
pub fn fields(schema: &Value) -> Option<Vec<Field>> {
    if schema.get("type").is_some_and(|t| t != "object") {
        return None;
    }
    let empty = Map::new();
    let props = match schema.get("properties") {
        None => &empty,
        Some(p) => p.as_object()?,
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    props
        .iter()
        .map(|(name, s)| {
            Some(Field {
                name: name.clone(),
                label: s
                    .get("title")
                    .and_then(Value::as_str)
                    .unwrap_or(name)
                    .to_string(),
                required: required.contains(&name.as_str()),
                control: control(s)?,
                error: None,
            })
        })
        .collect()
}

/// The schema's defaults as one line of JSON (the JSON answer's first text).
fn defaults_json(schema: &Value) -> String {
    let defaults = harness9::mcp::requests::with_defaults(schema, Map::new());
    Value::Object(defaults).to_string()
}

fn check_text(format: Option<Format>, t: &str) -> Result<(), String> {
    let digits = |s: &str| s.chars().all(|c| c.is_ascii_digit());
    let date = |d: &str| {
        let p: Vec<&str> = d.split('-').collect();
        p.len() == 3
            && p[0].len() == 4
            && p[1].len() == 2
            && p[2].len() == 2
            && p.iter().all(|x| digits(x))
    };
    match format {
        None => Ok(()),
        Some(Format::Email) => match t.split_once('@') {
            Some((a, b)) if !a.is_empty() && b.contains('.') && !t.contains(' ') => Ok(()),
            _ => Err("enter an email address, like ada@example.com".into()),
        },
        Some(Format::Uri) => reqwest::Url::parse(t)
            .map(|_| ())
            .map_err(|_| "enter a full URL, like https://example.com".into()),
        Some(Format::Date) if date(t) => Ok(()),
        Some(Format::Date) => Err("enter a date as YYYY-MM-DD".into()),
        Some(Format::DateTime) => match t.split_once('T') {
            Some((d, time)) if date(d) && time.len() >= 5 && time.as_bytes()[2] == b':' => Ok(()),
            _ => Err("enter a date and time as YYYY-MM-DDTHH:MM:SSZ".into()),
        },
    }
}

/// The value of one field, `None` when left empty, or what is wrong with it.
fn value(f: &Field) -> Result<Option<Value>, String> {
    let v = match &f.control {
        Control::Bool(b) => return Ok(Some(Value::Bool(*b))),
        Control::Text { format, text } if !text.is_empty() => {
            check_text(*format, text)?;
            Some(Value::String(text.clone()))
        }
        Control::Number {
            integer,
            min,
            max,
            text,
        } if !text.trim().is_empty() => {
            let n: f64 = text
                .trim()
                .parse()
                .map_err(|_| "enter a number".to_string())?;
            if *integer && n.fract() != 0.0 {
                return Err("enter a whole number".into());
            }
            if let Some(m) = min.filter(|m| n < *m) {
                return Err(format!("at least {m}"));
            }
            if let Some(m) = max.filter(|m| n > *m) {
                return Err(format!("at most {m}"));
            }
            Some(if *integer {
                Value::from(n as i64)
            } else {
                Value::from(n)
            })
        }
        Control::Text { .. } | Control::Number { .. } => None,
        Control::Choice { choices, chosen } => chosen.map(|i| Value::String(choices[i].0.clone())),
        Control::Multi { choices, .. } => {
            let picked: Vec<Value> = choices
                .iter()
                .filter(|c| c.2)
                .map(|c| Value::String(c.0.clone()))
                .collect();
            (!picked.is_empty()).then_some(Value::Array(picked))
        }
    };
    match (v, f.required) {
        (None, true) => Err("required".into()),
        (v, _) => Ok(v),
    }
}

impl AskView {
    pub fn new(ask: &Ask, more: usize) -> AskView {
        let body = match &ask.kind {
            AskKind::Elicitation {
                request:
                    ElicitRequest::Form {
                        requested_schema, ..
                    },
            } => match fields(requested_schema) {
                Some(f) => Body::Form(f),
                None => Body::Json(defaults_json(requested_schema)),
            },
            AskKind::Elicitation {
                request: ElicitRequest::Url { url, .. },
            } => Body::Url {
                url: url.clone(),
                domain: ask.url_domain.clone(),
            },
            AskKind::Sampling { .. } => Body::Sampling { review: false },
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
            Body::Form(fields) => {
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
        let Body::Form(fields) = &mut self.body else {
            return None;
        };
        let mut content = Map::new();
        let mut first_bad = None;
        for (i, f) in fields.iter_mut().enumerate() {
            match value(f) {
                Ok(v) => {
                    f.error = None;
                    if let Some(v) = v {
                        content.insert(f.name.clone(), v);
                    }
                }
                Err(e) => {
                    f.error = Some(e);
                    first_bad.get_or_insert(i);
                }
            }
        }
        if let Some(i) = first_bad {
            self.focus = i;
            return None;
        }
        self.accept(content)
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

impl App {
    /// Takes the pending asks: the modal shows the oldest (keeping what the user typed
    /// while it stays the oldest).
    pub fn set_asks(&mut self, asks: &[Ask]) {
        let more = asks.len().saturating_sub(1);
        match (asks.first(), self.ask.as_mut()) {
            (None, _) => self.ask = None,
            (Some(first), Some(view)) if view.ask.id == first.id => view.more = more,
            (Some(first), _) => self.ask = Some(AskView::new(first, more)),
        }
    }
}
