//! Snapshot tests of the ask modal: a form with every field kind, its keys and validation,
//! the JSON fallback, URL mode and a sampling request.

use std::time::Instant;

use harness9::host::asks::{Ask, AskAnswer, AskKind, SamplingChoice};
use harness9::mcp::requests::{
    CreateMessageRequest, CreateMessageResult, ElicitAction, ElicitRequest, ElicitResult,
    SamplingMessage,
};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::{json, Value};

use super::app::App;
use super::ask::SAMPLING_REFUSAL;
use super::model::Action;
use super::tests::{key, screen};

pub(super) fn form(id: u64, schema: Value) -> Ask {
    Ask {
        id,
        server: "profile".into(),
        kind: AskKind::Elicitation {
            request: ElicitRequest::Form {
                message: "Tell us about you".into(),
                requested_schema: schema,
            },
        },
        url_domain: None,
        arrived: Instant::now(),
        task: None,
    }
}

pub(super) fn profile_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "title": "Name", "default": "Ada"},
            "email": {"type": "string", "format": "email", "title": "Email"},
            "age": {"type": "integer", "minimum": 0, "maximum": 150},
            "news": {"type": "boolean", "default": true},
            "plan": {"type": "string", "oneOf": [{"const": "free", "title": "Free"}, {"const": "pro", "title": "Pro"}]},
            "langs": {"type": "array", "items": {"enum": ["en", "fr"]}, "default": ["fr"]}
        },
        "required": ["name", "email"]
    })
}

pub(super) fn typed(app: &mut App, text: &str) {
    for c in text.chars() {
        assert_eq!(app.on_key(key(KeyCode::Char(c))), None);
    }
}

fn body(s: &str) -> Vec<&str> {
    s.lines()
        .filter(|l| l.starts_with("  │") || l.starts_with("  ┌") || l.starts_with("  └"))
        .collect()
}

#[test]
fn a_form_names_the_server_prefills_defaults_and_validates() {
    let mut app = App::new("openai · gpt-test".into());
    app.set_asks(&[
        form(1, profile_schema()),
        form(2, json!({"type": "object"})),
    ]);
    let s = screen(&app);
    assert_eq!(
        body(&s),
        vec![
            "  ┌ profile asks for input ──────────────────────────────────────────────────┐",
            "  │1 more waiting                                                            │",
            "  │Tell us about you                                                         │",
            "  │                                                                          │",
            "  │> Name*: Ada_                                                             │",
            "  │  Email*:                                                                 │",
            "  │  age:                                                                    │",
            "  │  news: [x]                                                               │",
            "  │  plan: ‹ choose ›                                                        │",
            "  │  langs: [ ] en [x] fr                                                    │",
            "  │                                                                          │",
            "  │Tab next · Space toggle · Enter accept · Esc decline · Ctrl-C cancel      │",
            "  └──────────────────────────────────────────────────────────────────────────┘",
        ]
    );
    app.on_key(key(KeyCode::Tab));
    app.on_key(key(KeyCode::Tab));
    typed(&mut app, "200");
    assert_eq!(app.on_key(key(KeyCode::Enter)), None);
    let s = screen(&app);
    assert!(s.contains("  age: 200  At most 150"), "{s}");
    // The first field that does not fit takes the focus.
    assert!(s.contains("> Email*: _  Required"), "{s}");
    typed(&mut app, "ada@example.com");
    app.on_key(key(KeyCode::Tab));
    app.on_key(key(KeyCode::Backspace));
    app.on_key(key(KeyCode::Backspace));
    app.on_key(key(KeyCode::Tab));
    app.on_key(key(KeyCode::Char(' '))); // news off
    app.on_key(key(KeyCode::Tab));
    app.on_key(key(KeyCode::Char(' '))); // plan: Free
    app.on_key(key(KeyCode::Char(' '))); // plan: Pro
    app.on_key(key(KeyCode::Tab));
    app.on_key(key(KeyCode::Char(' '))); // en on
    app.on_key(key(KeyCode::Right));
    app.on_key(key(KeyCode::Char(' '))); // fr off
    app.on_key(key(KeyCode::BackTab));
    assert!(screen(&app).contains("> plan: ‹ Pro ›"));
    let answer = app.on_key(key(KeyCode::Enter));
    let mut content = serde_json::Map::new();
    for (k, v) in [
        ("age", json!(2)),
        ("email", json!("ada@example.com")),
        ("langs", json!(["en"])),
        ("name", json!("Ada")),
        ("news", json!(false)),
        ("plan", json!("pro")),
    ] {
        content.insert(k.into(), v);
    }
    assert_eq!(
        answer,
        Some(Action::AnswerAsk {
            id: 1,
            answer: AskAnswer::Elicit(ElicitResult {
                action: ElicitAction::Accept,
                content: Some(content)
            })
        })
    );
    // Answered: the modal is gone until the next ask arrives.
    assert!(app.ask.is_none());
    app.set_asks(&[form(2, json!({"type": "object"}))]);
    assert!(screen(&app).contains("profile asks for input"));
}

#[test]
fn esc_declines_and_ctrl_c_cancels() {
    let mut app = App::new("m".into());
    app.set_asks(&[form(1, profile_schema())]);
    assert_eq!(
        app.on_key(key(KeyCode::Esc)),
        Some(Action::AnswerAsk {
            id: 1,
            answer: AskAnswer::Elicit(ElicitResult::decline())
        })
    );
    app.set_asks(&[form(2, profile_schema())]);
    assert_eq!(
        app.on_key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL)),
        Some(Action::AnswerAsk {
            id: 2,
            answer: AskAnswer::Elicit(ElicitResult::cancel())
        })
    );
    // Without an ask, Ctrl-C quits as before.
    app.set_asks(&[]);
    assert_eq!(
        app.on_key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL)),
        Some(Action::Quit)
    );
}

#[test]
fn a_schema_the_form_cannot_show_is_answered_as_json() {
    let mut app = App::new("m".into());
    let nested = json!({"type": "object", "properties": {
        "who": {"type": "object"}, "n": {"type": "integer", "default": 3}}});
    app.set_asks(&[form(1, nested)]);
    let s = screen(&app);
    assert!(s.contains("This form cannot be shown as fields; answer with a JSON object:"));
    assert!(s.contains(r#"{"n":3}_"#), "{s}");
    app.on_key(key(KeyCode::Backspace));
    typed(&mut app, r#","who":{"a":1}}"#);
    let answer = app.on_key(key(KeyCode::Enter));
    let Some(Action::AnswerAsk {
        answer: AskAnswer::Elicit(r),
        ..
    }) = answer
    else {
        panic!("{answer:?}")
    };
    assert_eq!(
        Value::Object(r.content.unwrap()),
        json!({"n": 3, "who": {"a": 1}})
    );
    app.set_asks(&[form(
        2,
        json!({"properties": {"x": {"type": "string", "format": "ipv4"}}}),
    )]);
    typed(&mut app, "x");
    assert_eq!(app.on_key(key(KeyCode::Enter)), None);
    assert!(screen(&app).contains("not valid JSON"));
}

#[test]
fn url_mode_shows_the_domain_and_asks_before_opening() {
    let mut app = App::new("m".into());
    app.set_asks(&[Ask {
        id: 5,
        server: "pay".into(),
        kind: AskKind::Elicitation {
            request: ElicitRequest::Url {
                message: "Confirm the payment".into(),
                url: "https://pay.example.com/confirm".into(),
                elicitation_id: "e1".into(),
            },
        },
        url_domain: Some("pay.example.com".into()),
        arrived: Instant::now(),
        task: None,
    }]);
    let s = screen(&app);
    for want in [
        "pay asks you to visit a page",
        "Confirm the payment",
        "Open a page on pay.example.com?",
        "https://pay.example.com/confirm",
        "[y] open it  [n] decline  Ctrl-C cancel",
    ] {
        assert!(s.contains(want), "{want} not in\n{s}");
    }
    assert_eq!(app.on_key(key(KeyCode::Enter)), None);
    assert_eq!(
        app.on_key(key(KeyCode::Char('y'))),
        Some(Action::OpenAsk {
            id: 5,
            url: "https://pay.example.com/confirm".into()
        })
    );
}

pub(super) fn sampling_request() -> CreateMessageRequest {
    CreateMessageRequest {
        messages: vec![SamplingMessage {
            role: "user".into(),
            content: json!({"type": "text", "text": "Sum up"}),
        }],
        system_prompt: Some("Be brief".into()),
        max_tokens: 100,
        model_preferences: None,
        include_context: None,
        temperature: None,
        stop_sequences: vec![],
        tools: Some(vec![
            json!({"name": "weather", "inputSchema": {"type": "object"}}),
        ]),
        tool_choice: None,
        extra: Default::default(),
    }
}

#[test]
fn a_sampling_request_is_shown_and_approved_refused_or_always_allowed() {
    let mut app = App::new("m".into());
    let ask = Ask {
        id: 9,
        server: "thinker".into(),
        kind: AskKind::Sampling {
            request: Box::new(sampling_request()),
        },
        url_domain: None,
        arrived: Instant::now(),
        task: None,
    };
    app.set_asks(std::slice::from_ref(&ask));
    let s = screen(&app);
    for want in [
        "thinker asks to use your model",
        "Up to 100 tokens. System prompt: Be brief",
        "user: Sum up",
        "Tools the model may call: weather",
        "[ ] review the model's answer before it is sent",
        "[y] run once · [a] always for this server · [r] review · [n] refuse",
    ] {
        assert!(s.contains(want), "{want} not in\n{s}");
    }
    assert_eq!(app.on_key(key(KeyCode::Enter)), None);
    assert_eq!(app.on_key(key(KeyCode::Char('r'))), None);
    assert!(screen(&app).contains("[x] review the model's answer"));
    assert_eq!(
        app.on_key(key(KeyCode::Char('y'))),
        Some(Action::AnswerAsk {
            id: 9,
            answer: AskAnswer::Approve(SamplingChoice {
                always: false,
                review: true
            })
        })
    );
    app.set_asks(&[]);
    app.set_asks(std::slice::from_ref(&ask));
    assert_eq!(
        app.on_key(key(KeyCode::Char('a'))),
        Some(Action::AnswerAsk {
            id: 9,
            answer: AskAnswer::Approve(SamplingChoice {
                always: true,
                review: false
            })
        })
    );
    app.set_asks(std::slice::from_ref(&ask));
    assert_eq!(
        app.on_key(key(KeyCode::Esc)),
        Some(Action::AnswerAsk {
            id: 9,
            answer: AskAnswer::Refuse(SAMPLING_REFUSAL.into())
        })
    );
}

#[test]
fn the_model_answer_is_shown_for_review_and_sent_or_refused() {
    let mut app = App::new("m".into());
    let review = Ask {
        id: 4,
        server: "thinker".into(),
        kind: AskKind::SamplingReview {
            request: Box::new(sampling_request()),
            result: Box::new(CreateMessageResult {
                role: "assistant".into(),
                content: json!({"type": "text", "text": "It is short."}),
                model: "stub-model".into(),
                stop_reason: Some("endTurn".into()),
            }),
        },
        url_domain: None,
        arrived: Instant::now(),
        task: None,
    };
    app.set_asks(std::slice::from_ref(&review));
    let s = screen(&app);
    for want in [
        "thinker: send the model's answer?",
        "The model (stub-model) answered:",
        "It is short.",
        "[y] send · [n] refuse",
    ] {
        assert!(s.contains(want), "{want} not in\n{s}");
    }
    assert_eq!(
        app.on_key(key(KeyCode::Enter)),
        Some(Action::AnswerAsk {
            id: 4,
            answer: AskAnswer::Approve(SamplingChoice::default())
        })
    );
    app.set_asks(std::slice::from_ref(&review));
    assert_eq!(
        app.on_key(key(KeyCode::Char('n'))),
        Some(Action::AnswerAsk {
            id: 4,
            answer: AskAnswer::Refuse(SAMPLING_REFUSAL.into())
        })
    );
}
