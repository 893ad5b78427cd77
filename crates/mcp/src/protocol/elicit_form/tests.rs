//! The form model: fields, defaults, content and checks.

use super::*;
use serde_json::json;

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "title": "Name", "default": "Ada"},
            "email": {"type": "string", "format": "email"},
            "age": {"type": "integer", "minimum": 0, "maximum": 150},
            "role": {"type": "string", "oneOf": [{"const": "dev", "title": "Developer"}, {"const": "ops"}], "default": "dev"},
            "langs": {"type": "array", "items": {"enum": ["en", "fr"]}, "maxItems": 1},
            "ok": {"type": "boolean", "default": true}
        },
        "required": ["name", "email"]
    })
}

fn values(pairs: &[(&str, FieldValue)]) -> BTreeMap<String, FieldValue> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

#[test]
fn a_schema_becomes_fields_with_their_defaults() {
    let form = ElicitForm::of(&schema()).unwrap();
    let names: Vec<&str> = form.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["name", "email", "age", "role", "langs", "ok"]);
    assert_eq!(form.fields[0].label, "Name");
    assert!(form.fields[1].required && !form.fields[2].required);
    assert_eq!(form.initial["name"], FieldValue::Text("Ada".into()));
    assert_eq!(form.initial["role"], FieldValue::Text("dev".into()));
    assert_eq!(form.initial["ok"], FieldValue::Flag(true));
    assert_eq!(form.initial["langs"], FieldValue::Picked(vec![]));
    let FieldKind::Enum { choices } = &form.fields[3].kind else {
        panic!()
    };
    assert_eq!(choices[0].label, "Developer");
    assert_eq!(choices[1].label, "ops");
}

#[test]
fn what_the_user_typed_becomes_content_or_messages() {
    let form = ElicitForm::of(&schema()).unwrap();
    let bad = form
        .content(&values(&[
            ("name", FieldValue::Text("Ada".into())),
            ("age", FieldValue::Text("200".into())),
            ("langs", FieldValue::Picked(vec!["en".into(), "fr".into()])),
        ]))
        .unwrap_err();
    assert_eq!(bad["email"], "Required");
    assert_eq!(bad["age"], "At most 150");
    assert_eq!(bad["langs"], "Choose at most 1");
    let ok = form
        .content(&values(&[
            ("name", FieldValue::Text("Ada".into())),
            ("email", FieldValue::Text("ada@example.com".into())),
            ("age", FieldValue::Text(" 36 ".into())),
            ("role", FieldValue::Text("ops".into())),
            ("ok", FieldValue::Flag(false)),
        ]))
        .unwrap();
    assert_eq!(
        Value::Object(ok),
        json!({"name": "Ada", "email": "ada@example.com", "age": 36, "role": "ops", "ok": false})
    );
    let e = form
        .content(&values(&[
            ("name", FieldValue::Text("Ada".into())),
            ("email", FieldValue::Text("ada@example".into())),
            ("age", FieldValue::Text("3.5".into())),
        ]))
        .unwrap_err();
    assert_eq!(e["email"], "Enter an email address, like ada@example.com");
    assert_eq!(e["age"], "Enter a whole number");
}

#[test]
fn a_json_answer_is_checked_the_same_way() {
    let form = ElicitForm::of(&schema()).unwrap();
    assert!(form
        .check(
            json!({"name": "Ada", "email": "a@b.co", "ok": true})
                .as_object()
                .unwrap()
        )
        .is_ok());
    let e = form
        .check(
            json!({"name": 3, "email": "a@b.co", "role": "boss", "langs": ["de"], "extra": 1})
                .as_object()
                .unwrap(),
        )
        .unwrap_err();
    assert_eq!(e["name"], "Enter text");
    assert_eq!(e["role"], "Choose one of the options");
    assert_eq!(e["langs"], "Choose among the options");
    assert_eq!(e["extra"], "Not a field of this form");
}

#[test]
fn formats_and_schemas_a_form_cannot_show() {
    for (f, good, bad) in [
        (Format::Date, "2026-12-03", "2026-13-03"),
        (Format::DateTime, "2026-12-03T10:30:00Z", "2026-12-03 10:30"),
        (Format::Uri, "https://example.com/x", "example.com"),
        (Format::Email, "a.b@c.example", "a@b"),
    ] {
        assert!(check_format(f, good).is_ok(), "{good}");
        assert!(check_format(f, bad).is_err(), "{bad}");
    }
    for s in [
        json!({"type": "object", "properties": {"x": {"type": "object"}}}),
        json!({"type": "object", "properties": {"x": {"type": "string", "format": "ipv4"}}}),
        json!({"type": "object", "properties": {"x": {"enum": []}}}),
        json!({"type": "object", "properties": {"x": {"enum": [1, 2]}}}),
        json!({"type": "array"}),
    ] {
        assert!(ElicitForm::of(&s).is_none(), "{s}");
    }
    assert_eq!(ElicitForm::of(&json!({})).unwrap().fields, vec![]);
}

fn date_schema(default: &str) -> Value {
    json!({
        "type": "object",
        "properties": {
            "when": {"type": "string", "format": "date-time", "default": default},
            "day": {"type": "string", "format": "date"},
            "mail": {"type": "string", "format": "email"},
            "site": {"type": "string", "format": "uri"}
        },
        "required": ["when"]
    })
}

const ODD: [&str; 8] = [
    "２０２６-01-01T1é:00Z",
    "2026-01-01T1é:00Z",
    "2026-01-01T😀",
    "2026-01-01Té",
    "2026-01-01T10:3\u{301}0:00Z",
    "2026-01-0\u{301}",
    "é@😀.co",
    "😀",
];

#[test]
fn multibyte_answers_get_messages_not_panics() {
    let form = ElicitForm::of(&date_schema("2026-01-01T10:00:00Z")).unwrap();
    for t in ODD {
        let typed = values(&[
            ("when", FieldValue::Text(t.into())),
            ("day", FieldValue::Text(t.into())),
            ("mail", FieldValue::Text(t.into())),
            ("site", FieldValue::Text(t.into())),
        ]);
        let e = form.content(&typed).unwrap_err();
        assert_eq!(
            e["when"], "Enter a date and time as YYYY-MM-DDTHH:MM:SSZ",
            "{t:?}"
        );
        assert_eq!(e["day"], "Enter a date as YYYY-MM-DD", "{t:?}");
        assert_eq!(e["site"], "Enter a full URL, like https://example.com");
        let answer = json!({"when": t, "day": t, "site": t});
        let e = form.check(answer.as_object().unwrap()).unwrap_err();
        assert_eq!(e.len(), 3, "{t:?}: {e:?}");
    }
    let ok = form
        .content(&values(&[
            ("when", FieldValue::Text("2026-01-01T10:00:00+01:00".into())),
            ("day", FieldValue::Text("2026-02-28".into())),
            ("mail", FieldValue::Text("zoë@example.com".into())),
        ]))
        .unwrap();
    assert!(form.check(&ok).is_ok());
}

#[test]
fn defaults_are_checked_like_answers() {
    for t in ODD {
        let form = ElicitForm::of(&date_schema(t)).unwrap();
        // A default that does not fit is not offered as the first value.
        assert_eq!(
            form.initial["when"],
            FieldValue::Text(String::new()),
            "{t:?}"
        );
        // Filled in for a field left out, it is refused like a typed answer.
        let filled = crate::protocol::requests::with_defaults(&date_schema(t), Map::new());
        let e = form.check(&filled).unwrap_err();
        assert_eq!(e["when"], "Enter a date and time as YYYY-MM-DDTHH:MM:SSZ");
    }
    let form = ElicitForm::of(&date_schema("2026-01-01T10:00:00Z")).unwrap();
    assert_eq!(
        form.initial["when"],
        FieldValue::Text("2026-01-01T10:00:00Z".into())
    );
    let odd = json!({"type": "object", "properties": {
        "n": {"type": "integer", "maximum": 3, "default": 9},
        "c": {"enum": ["a", "b"], "default": "z"},
        "m": {"type": "array", "items": {"enum": ["a"]}, "default": ["a", "é"]},
    }});
    let form = ElicitForm::of(&odd).unwrap();
    assert_eq!(form.initial["n"], FieldValue::Text(String::new()));
    assert_eq!(form.initial["c"], FieldValue::Text(String::new()));
    assert_eq!(form.initial["m"], FieldValue::Picked(vec![]));
}

#[test]
fn lone_surrogate_escapes_are_errors_on_every_path() {
    // serde_json refuses a lone UTF-16 surrogate, in a schema and in an answer alike:
    // such text never reaches the form as a string.
    for text in [
        r#"{"type": "object", "properties": {"when": {"type": "string", "format": "date-time", "default": "\ud800"}}}"#,
        r#"{"type": "object", "properties": {"\udfff": {"type": "string"}}}"#,
        r#"{"when": "2026-01-01T\ud83d:00:00Z"}"#,
        r#"{"when": "\udc00\ud800"}"#,
    ] {
        assert!(serde_json::from_str::<Value>(text).is_err(), "{text}");
        assert!(serde_json::from_str::<Map<String, Value>>(text).is_err());
        // The raw form the transport keeps takes it; the parse after it refuses it.
        let raw: Box<serde_json::value::RawValue> = serde_json::from_str(text).unwrap();
        assert!(serde_json::from_str::<Value>(raw.get()).is_err());
        assert!(crate::protocol::requests::ElicitRequest::from_params(
            &serde_json::from_str(raw.get()).unwrap_or(Value::Null)
        )
        .is_err());
    }
    // A pair is one character, and is checked like any other.
    let pair: Value = serde_json::from_str(r#"{"when": "2026-01-01T\ud83d\ude00:00Z"}"#).unwrap();
    let form = ElicitForm::of(&date_schema("")).unwrap();
    let e = form.check(pair.as_object().unwrap()).unwrap_err();
    assert_eq!(e["when"], "Enter a date and time as YYYY-MM-DDTHH:MM:SSZ");
}
