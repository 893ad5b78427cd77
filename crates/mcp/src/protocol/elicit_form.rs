//! An elicitation's requested schema as a form, once for every front end: one field per
//! property (strings with the email/uri/date/date-time formats and length limits, numbers
//! and integers with bounds, booleans, single-select enums with titles, multi-select
//! arrays of enums), the first value of each control (the schema's defaults, SEP-1034,
//! when they fit their field), and the content built from what the user typed, with a message for every field that
//! does not fit. The same checks apply to an answer given as JSON. A schema the form cannot
//! show gives `None`: front ends then offer a JSON editor.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

mod formats;
use formats::check_format;

/// The string formats the form checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    Email,
    Uri,
    Date,
    DateTime,
}

/// One option of a choice: the value sent and the label shown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Choice {
    pub value: String,
    pub label: String,
}

/// What kind of control a field is, with its limits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum FieldKind {
    #[serde(rename_all = "camelCase")]
    String {
        format: Option<Format>,
        min_length: Option<u64>,
        max_length: Option<u64>,
    },
    #[serde(rename_all = "camelCase")]
    Number {
        integer: bool,
        minimum: Option<f64>,
        maximum: Option<f64>,
    },
    Boolean,
    /// Pick one.
    Enum {
        choices: Vec<Choice>,
    },
    /// Pick any number of them.
    #[serde(rename_all = "camelCase")]
    Multi {
        choices: Vec<Choice>,
        min_items: Option<u64>,
        max_items: Option<u64>,
    },
}

/// One field of the form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct FormField {
    pub name: String,
    /// The schema's `title`, else the name.
    pub label: String,
    pub description: Option<String>,
    pub required: bool,
    pub kind: FieldKind,
}

/// What a control holds: text (strings, numbers, a single choice), a flag, or the chosen
/// values of a multi-select.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(untagged)]
pub enum FieldValue {
    Flag(bool),
    Text(String),
    Picked(Vec<String>),
}

/// The form of an elicitation's schema.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ElicitForm {
    pub fields: Vec<FormField>,
    /// Each control's first value: the schema's default, else empty (or off).
    pub initial: BTreeMap<String, FieldValue>,
}

/// The messages of the fields that do not fit, by field name.
pub type FieldErrors = BTreeMap<String, String>;

fn choices(s: &Value) -> Option<Vec<Choice>> {
    if let Some(values) = s.get("enum").and_then(Value::as_array) {
        let names = s.get("enumNames").and_then(Value::as_array);
        return values
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let value = v.as_str()?.to_string();
                let label = names
                    .and_then(|n| n.get(i))
                    .and_then(Value::as_str)
                    .unwrap_or(&value)
                    .to_string();
                Some(Choice { value, label })
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
            let value = o.get("const")?.as_str()?.to_string();
            let label = o.get("title").and_then(Value::as_str).unwrap_or(&value);
            Some(Choice {
                label: label.to_string(),
                value,
            })
        })
        .collect()
}

fn kind(s: &Value) -> Option<FieldKind> {
    let ty = s.get("type").and_then(Value::as_str);
    let picks = choices(s);
    if picks.is_none()
        && ["enum", "oneOf", "anyOf"]
            .iter()
            .any(|k| s.get(*k).is_some())
    {
        return None;
    }
    if let (Some(choices), None | Some("string")) = (picks, ty) {
        // A choice among none cannot be answered in a form: the JSON answer takes it.
        return (!choices.is_empty()).then_some(FieldKind::Enum { choices });
    }
    let uint = |k: &str| s.get(k).and_then(Value::as_u64);
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
            Some(FieldKind::String {
                format,
                min_length: uint("minLength"),
                max_length: uint("maxLength"),
            })
        }
        t @ ("number" | "integer") => Some(FieldKind::Number {
            integer: t == "integer",
            minimum: s.get("minimum").and_then(Value::as_f64),
            maximum: s.get("maximum").and_then(Value::as_f64),
        }),
        "boolean" => Some(FieldKind::Boolean),
        "array" => {
            let choices = choices(s.get("items")?)?;
            (!choices.is_empty()).then_some(FieldKind::Multi {
                choices,
                min_items: uint("minItems"),
                max_items: uint("maxItems"),
            })
        }
        _ => None,
    }
}

/// A control's first value: the schema's default when it fits the field (checked as an
/// answer would be: it comes from the server), else empty (or off).
fn initial(field: &FormField, default: Option<&Value>) -> FieldValue {
    let default = default.filter(|d| check(field, d).is_ok());
    match (&field.kind, default) {
        (FieldKind::Boolean, d) => FieldValue::Flag(d == Some(&Value::Bool(true))),
        (FieldKind::Multi { .. }, Some(Value::Array(d))) => FieldValue::Picked(
            d.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
        ),
        (FieldKind::Multi { .. }, _) => FieldValue::Picked(Vec::new()),
        (_, Some(Value::String(s))) => FieldValue::Text(s.clone()),
        (FieldKind::Number { .. }, Some(Value::Number(n))) => FieldValue::Text(n.to_string()),
        _ => FieldValue::Text(String::new()),
    }
}

impl ElicitForm {
    /// The form of a flat object schema, or `None` when a form cannot show it.
    pub fn of(schema: &Value) -> Option<ElicitForm> {
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
        let mut form = ElicitForm {
            fields: Vec::with_capacity(props.len()),
            initial: BTreeMap::new(),
        };
        for (name, s) in props {
            let text = |k: &str| s.get(k).and_then(Value::as_str).map(str::to_string);
            let field = FormField {
                name: name.clone(),
                label: text("title").unwrap_or_else(|| name.clone()),
                description: text("description"),
                required: required.contains(&name.as_str()),
                kind: kind(s)?,
            };
            form.initial
                .insert(name.clone(), initial(&field, s.get("default")));
            form.fields.push(field);
        }
        Some(form)
    }

    /// The content of what the user typed: every filled field as its JSON value (numbers
    /// parsed, text as typed), empty optional fields left out (the core fills in their
    /// defaults), or a message for each field that does not fit.
    pub fn content(
        &self,
        values: &BTreeMap<String, FieldValue>,
    ) -> Result<Map<String, Value>, FieldErrors> {
        let mut content = Map::new();
        let mut errors = FieldErrors::new();
        for f in &self.fields {
            match typed(f, values.get(&f.name)) {
                Ok(Some(v)) => match check(f, &v) {
                    Ok(()) => {
                        content.insert(f.name.clone(), v);
                    }
                    Err(e) => {
                        errors.insert(f.name.clone(), e);
                    }
                },
                Ok(None) if f.required => {
                    errors.insert(f.name.clone(), required_message(&f.kind).into());
                }
                Ok(None) => {}
                Err(e) => {
                    errors.insert(f.name.clone(), e);
                }
            }
        }
        if errors.is_empty() {
            Ok(content)
        } else {
            Err(errors)
        }
    }

    /// Checks an answer given as JSON (fields the user left out already filled with the
    /// schema's defaults): required fields present, each value of its field's type and
    /// within its limits. Properties the schema does not name are refused too.
    pub fn check(&self, content: &Map<String, Value>) -> Result<(), FieldErrors> {
        let mut errors = FieldErrors::new();
        for f in &self.fields {
            let outcome = match content.get(&f.name) {
                None if f.required => Err(required_message(&f.kind).to_string()),
                None => Ok(()),
                Some(v) => check(f, v),
            };
            if let Err(e) = outcome {
                errors.insert(f.name.clone(), e);
            }
        }
        for name in content.keys() {
            if !self.fields.iter().any(|f| &f.name == name) {
                errors.insert(name.clone(), "Not a field of this form".into());
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }
}

fn required_message(kind: &FieldKind) -> &'static str {
    match kind {
        FieldKind::Enum { .. } => "Choose one",
        FieldKind::Multi { .. } => "Choose at least one",
        FieldKind::String { .. } | FieldKind::Number { .. } | FieldKind::Boolean => "Required",
    }
}

/// A control's value as JSON, `None` when left empty, or why it is not a value.
fn typed(f: &FormField, v: Option<&FieldValue>) -> Result<Option<Value>, String> {
    Ok(match (&f.kind, v) {
        (FieldKind::Boolean, Some(FieldValue::Flag(b))) => Some(Value::Bool(*b)),
        (FieldKind::Boolean, _) => Some(Value::Bool(false)),
        (FieldKind::Multi { .. }, Some(FieldValue::Picked(p))) if !p.is_empty() => {
            Some(Value::Array(p.iter().cloned().map(Value::String).collect()))
        }
        (FieldKind::Multi { .. }, _) => None,
        (FieldKind::Number { integer, .. }, Some(FieldValue::Text(t))) if !t.trim().is_empty() => {
            let n: f64 = t
                .trim()
                .parse()
                .ok()
                .filter(|n: &f64| n.is_finite())
                .ok_or("Enter a number")?;
            Some(match (*integer, n.fract() == 0.0) {
                (true, false) => return Err("Enter a whole number".into()),
                (true, true) => Value::from(n as i64),
                (false, _) => Value::from(n),
            })
        }
        (FieldKind::Enum { .. }, Some(FieldValue::Text(t))) if !t.trim().is_empty() => {
            Some(Value::String(t.trim().to_string()))
        }
        (FieldKind::String { .. }, Some(FieldValue::Text(t))) if !t.is_empty() => {
            Some(Value::String(t.clone()))
        }
        _ => None,
    })
}

/// Whether a JSON value fits a field.
fn check(f: &FormField, v: &Value) -> Result<(), String> {
    match (&f.kind, v) {
        (
            FieldKind::String {
                format,
                min_length,
                max_length,
            },
            Value::String(t),
        ) => {
            let len = t.chars().count() as u64;
            if let Some(m) = min_length.filter(|m| len < *m) {
                return Err(format!("At least {m} characters"));
            }
            if let Some(m) = max_length.filter(|m| len > *m) {
                return Err(format!("At most {m} characters"));
            }
            format.map_or(Ok(()), |f| check_format(f, t))
        }
        (
            FieldKind::Number {
                integer,
                minimum,
                maximum,
            },
            Value::Number(n),
        ) => {
            let x = n.as_f64().unwrap_or(f64::NAN);
            if *integer && !(n.is_i64() || n.is_u64()) {
                return Err("Enter a whole number".into());
            }
            if let Some(m) = minimum.filter(|m| x < *m) {
                return Err(format!("At least {m}"));
            }
            if let Some(m) = maximum.filter(|m| x > *m) {
                return Err(format!("At most {m}"));
            }
            Ok(())
        }
        (FieldKind::Boolean, Value::Bool(_)) => Ok(()),
        (FieldKind::Enum { choices }, Value::String(s)) => choices
            .iter()
            .any(|c| &c.value == s)
            .then_some(())
            .ok_or_else(|| "Choose one of the options".into()),
        (
            FieldKind::Multi {
                choices,
                min_items,
                max_items,
            },
            Value::Array(items),
        ) => {
            let n = items.len() as u64;
            let known = |i: &Value| {
                i.as_str()
                    .is_some_and(|s| choices.iter().any(|c| c.value == s))
            };
            if !items.iter().all(known) {
                return Err("Choose among the options".into());
            }
            if let Some(m) = min_items.filter(|m| n < *m) {
                return Err(format!("Choose at least {m}"));
            }
            if let Some(m) = max_items.filter(|m| n > *m) {
                return Err(format!("Choose at most {m}"));
            }
            Ok(())
        }
        (FieldKind::String { .. }, _) => Err("Enter text".into()),
        (FieldKind::Number { .. }, _) => Err("Enter a number".into()),
        (FieldKind::Boolean, _) => Err("Must be true or false".into()),
        (FieldKind::Enum { .. }, _) => Err("Choose one of the options".into()),
        (FieldKind::Multi { .. }, _) => Err("Choose among the options".into()),
    }
}

#[cfg(test)]
mod tests;
