//! Elicitation defaults and answers that hold any character (full-width digits, accents
//! inside a time, emoji, combining marks, a lone surrogate escape) get a validation result
//! through the real CLI and a real server, never a panic; and the process goes on
//! answering the server's next requests.

use std::time::Duration;

use serde_json::{json, Value};

use super::support::process::{cli_child, output_within};
use super::support::{fixture_bin, Project};

fn form(message: &str, properties: Value) -> Value {
    let params = json!({"mode": "form", "message": message,
        "requestedSchema": {"type": "object", "properties": properties}});
    json!({"method": "elicitation/create", "params": params.to_string()})
}

#[test]
fn multibyte_dates_get_a_validation_result_and_the_next_requests_are_answered() {
    let p =
        Project::new(&json!({"mcpServers": {"fx": {"command": fixture_bin(), "args": ["--ask"]}}}));
    let answers = p.path().join("answers.json");
    std::fs::write(
        &answers,
        r#"{"note": "hé 😀", "at": "2026-01-01T1é:00Z", "day": "2026-01-0\u0301"}"#,
    )
    .unwrap();
    let date_time =
        |default: &str| json!({"type": "string", "format": "date-time", "default": default});
    let requests = json!([
        // A server's default with full-width digits and an accent inside the time.
        form("one", json!({"when": date_time("２０２６-01-01T1é:00Z")})),
        // The user's answer with an accent inside the time.
        form("two", json!({"at": {"type": "string", "format": "date-time"}})),
        // A lone surrogate escape: the params are no JSON text the client can read.
        {"method": "elicitation/create", "params": r#"{"mode":"form","message":"three","requestedSchema":{"type":"object","properties":{"w":{"type":"string","format":"date-time","default":"\ud800"}}}}"#},
        // A combining mark in a date answer.
        form("four", json!({"day": {"type": "string", "format": "date"}})),
        // And the process still answers: a form that fits, then a sampling request.
        form("five", json!({"note": {"type": "string"}, "on": date_time("2026-12-03T10:30:00+01:00")})),
        {"method": "sampling/createMessage", "params": r#"{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":8}"#},
    ]);
    let args = json!({"requests": requests}).to_string();
    // A dead answerer would leave the server waiting: the CLI must end on its own.
    let o = output_within(
        cli_child(
            &p,
            &[
                "mcp",
                "call",
                "fx",
                "ask",
                &args,
                "--yes",
                "--elicitation",
                answers.to_str().unwrap(),
            ],
        ),
        Duration::from_secs(30),
    );
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{out}\n{err}");
    assert!(!err.contains("panicked"), "{err}");
    let lines: Vec<&str> = out.lines().collect();
    let decline = r#"ok {"action":"decline"}"#;
    assert_eq!(lines.len(), 6, "{out}");
    assert_eq!(lines[0], format!("1: {decline}"), "{out}");
    assert_eq!(lines[1], format!("2: {decline}"), "{out}");
    assert_eq!(lines[2], "3: error -32602", "{out}");
    assert_eq!(lines[3], format!("4: {decline}"), "{out}");
    assert_eq!(
        lines[4],
        r#"5: ok {"action":"accept","content":{"note":"hé 😀","on":"2026-12-03T10:30:00+01:00"}}"#
    );
    assert!(lines[5].starts_with("6: error "), "{out}");
    // Each refused form says why, field by field.
    let date_time = "Enter a date and time as YYYY-MM-DDTHH:MM:SSZ";
    for (message, field, why) in [
        ("one", "when", date_time),
        ("two", "at", date_time),
        ("four", "day", "Enter a date as YYYY-MM-DD"),
    ] {
        let line = format!("harness9: server \"fx\" asked for input (\"{message}\"); declined because the answers do not fit the form (\"{field}\": {why})");
        assert!(err.contains(&line), "{line}\n{err}");
    }
    assert!(
        err.contains("asked for input (\"five\"); answered from the elicitation file"),
        "{err}"
    );
}
