//! Fuzz target bodies for what a server asks of the user: the elicitation form model
//! (schema, defaults and answers) and the sampling request decoder with what is built
//! from a request (the view a front end shows, the model's request).

use std::collections::BTreeMap;
use std::time::Instant;

use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

use harness9::engine::sampling::{chat_request, choose_model};
use harness9::host::asks::{Ask, AskKind};
use harness9_mcp::protocol::elicit_form::{ElicitForm, FieldKind, FieldValue};
use harness9_mcp::protocol::requests::{with_defaults, CreateMessageRequest, ElicitRequest};

/// Parses JSON text as the client does with a server's message: first kept raw (the
/// transport's check), then as a value; a lone surrogate escape (`"\ud800"`) passes the
/// first and must fail the second as an error.
fn parse(bytes: &[u8]) -> Option<Value> {
    let raw: &RawValue = serde_json::from_slice(bytes).ok()?;
    serde_json::from_str(raw.get()).ok()
}

/// The elicitation form: the input is `schema NUL answers` (JSON texts; the answers an
/// object). The form is deterministic; each first value the form offers fits its field;
/// content built from what was typed passes the JSON check; the JSON check of the
/// answers (defaults filled in) is deterministic; the front end's view holds the form.
pub fn elicit_form(data: &[u8]) {
    let mut parts = data.splitn(2, |b| *b == 0);
    let schema_bytes = parts.next().unwrap_or_default();
    let answer_bytes = parts.next().unwrap_or_default();
    let schema = parse(schema_bytes).unwrap_or(Value::Null);
    let params = json!({"mode": "form", "message": "m", "requestedSchema": schema});
    let request = ElicitRequest::from_params(&params);
    let Some(form) = ElicitForm::of(&schema) else {
        return;
    };
    assert_eq!(
        ElicitForm::of(&schema).as_ref(),
        Some(&form),
        "not deterministic"
    );
    let names: Vec<&String> = form.fields.iter().map(|f| &f.name).collect();
    let props: Vec<&String> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().collect())
        .unwrap_or_default();
    assert_eq!(names, props, "fields are not the schema's properties");
    for f in &form.fields {
        let first = form.initial.get(&f.name).expect("a first value per field");
        if let Some(v) = as_json(&f.kind, first) {
            let one: Map<String, Value> = [(f.name.clone(), v)].into_iter().collect();
            if let Err(e) = form.check(&one) {
                assert!(
                    !e.contains_key(&f.name),
                    "the form offers a first value that does not fit: {:?} {e:?}",
                    f.name
                );
            }
        }
    }
    // The form's own first values, submitted as they are.
    content_rechecks(&form, &form.initial);
    let answers = match parse(answer_bytes) {
        Some(Value::Object(a)) => a,
        _ => Map::new(),
    };
    let filled = with_defaults(&schema, answers.clone());
    let checked = form.check(&filled);
    assert_eq!(
        form.check(&filled),
        checked,
        "the check is not deterministic"
    );
    if checked.is_ok() {
        assert!(
            filled.keys().all(|k| names.contains(&k)),
            "an unknown field passed"
        );
    }
    // The answers as typed into the controls.
    let typed: BTreeMap<String, FieldValue> =
        answers.iter().map(|(k, v)| (k.clone(), typed(v))).collect();
    content_rechecks(&form, &typed);
    if let Ok(request) = request {
        let ask = Ask {
            id: 1,
            server: "s".into(),
            kind: AskKind::Elicitation { request },
            url_domain: None,
            arrived: Instant::now(),
            task: None,
        };
        let view = serde_json::to_value(ask.view()).expect("the view serializes");
        assert_eq!(
            view["request"]["form"],
            serde_json::to_value(&form).expect("the form serializes"),
            "the view shows another form"
        );
    }
}

/// Content built from `values` (when it is built) passes the JSON check, names only
/// fields, and comes out the same twice.
fn content_rechecks(form: &ElicitForm, values: &BTreeMap<String, FieldValue>) {
    let content = form.content(values);
    assert_eq!(
        form.content(values),
        content,
        "content is not deterministic"
    );
    if let Ok(content) = content {
        if let Err(e) = form.check(&content) {
            panic!("content that passed does not re-check: {content:?} {e:?}");
        }
    }
}

/// What a control holding `v` stands for as JSON (`None` when left empty).
fn as_json(kind: &FieldKind, v: &FieldValue) -> Option<Value> {
    match (kind, v) {
        // Parsed as the form parses a number (serde_json's float reading may differ in
        // the last digit).
        (FieldKind::Number { .. }, FieldValue::Text(t)) => match t.parse::<i64>() {
            Ok(i) => Some(Value::from(i)),
            Err(_) => match t.parse::<u64>() {
                Ok(u) => Some(Value::from(u)),
                Err(_) => t.parse::<f64>().ok().map(Value::from),
            },
        },
        (_, FieldValue::Text(t)) if t.is_empty() => None,
        (_, FieldValue::Text(t)) => Some(Value::String(t.clone())),
        (_, FieldValue::Flag(b)) => Some(Value::Bool(*b)),
        (_, FieldValue::Picked(p)) if p.is_empty() => None,
        (_, FieldValue::Picked(p)) => Some(json!(p)),
    }
}

/// A JSON answer as a front end's control would hold it.
fn typed(v: &Value) -> FieldValue {
    match v {
        Value::Bool(b) => FieldValue::Flag(*b),
        Value::String(s) => FieldValue::Text(s.clone()),
        Value::Array(items) => FieldValue::Picked(
            items
                .iter()
                .map(|i| i.as_str().unwrap_or("").to_string())
                .collect(),
        ),
        Value::Number(n) => FieldValue::Text(n.to_string()),
        Value::Null | Value::Object(_) => FieldValue::Text(String::new()),
    }
}

/// `sampling/createMessage` params as the client decodes them: a request survives a
/// round trip through JSON; the model's request keeps every message and the token limit
/// (or names the role it cannot take); the chosen model is one that exists; the view a
/// front end shows is built; all of it deterministic.
pub fn sampling(data: &[u8]) {
    let Some(params) = parse(data) else { return };
    let Ok(request) = serde_json::from_value::<CreateMessageRequest>(params) else {
        return;
    };
    let again = serde_json::to_value(&request).expect("a request serializes");
    let back: CreateMessageRequest = serde_json::from_value(again).expect("and decodes again");
    assert_eq!(back, request, "a request does not survive a round trip");
    match chat_request(&request, "m") {
        Ok(chat) => {
            assert_eq!(chat.messages.len(), request.messages.len(), "messages lost");
            let limit = request.max_tokens.min(u64::from(u32::MAX));
            assert_eq!(chat.options.max_tokens.map(u64::from), Some(limit));
            assert_eq!(chat.system.as_deref(), request.system_prompt.as_deref());
            assert_eq!(
                chat.tools.len(),
                request.tools.as_ref().map_or(0, Vec::len),
                "tools lost"
            );
        }
        Err(e) => {
            let roles_ok = request
                .messages
                .iter()
                .all(|m| m.role == "user" || m.role == "assistant");
            assert!(!roles_ok, "refused a request with known roles: {e}");
        }
    }
    let models = ["small".to_string(), "big".to_string()];
    let prefs = request.model_preferences.as_ref();
    let chosen = choose_model("configured", &models, prefs);
    assert!(
        chosen == "configured" || models.contains(&chosen),
        "chose a model that does not exist: {chosen}"
    );
    assert_eq!(choose_model("configured", &models, prefs), chosen);
    let ask = Ask {
        id: 1,
        server: "s".into(),
        kind: AskKind::Sampling {
            request: Box::new(request),
        },
        url_domain: None,
        arrived: Instant::now(),
        task: None,
    };
    assert_eq!(ask.view(), ask.view(), "the view is not deterministic");
}
