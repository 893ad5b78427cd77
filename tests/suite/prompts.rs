//! Server prompts as the opening of a chat turn, through the façade, against
//! server-everything and the scripted provider: the provider receives the prompt's
//! messages (text and an embedded resource), and a prompt missing a required argument sends
//! nothing. Then the terminal UI in tmux: the prompt as a slash command, completed with Tab
//! from the server's `completion/complete`.

use harness9::engine::{Event, TurnOutcome};
use harness9::harness::PromptError;
use serde_json::{json, Map, Value};

use super::support::provider_stub::{Reply, Stub, Wire};
use super::support::terminal::{have_tmux, Tmux};
use super::support::turns::options;
use super::support::Project;

fn args(pairs: &[(&str, &str)]) -> Map<String, Value> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), Value::String(v.to_string())))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_of_server_everything_opens_the_turn() {
    let Some(p) = Project::everything() else {
        return;
    };
    let harness = p.started().await;
    let stub = Stub::start(
        Wire::Anthropic,
        vec![
            Reply::text("Bob leads Engineering now."),
            Reply::text("Read it."),
        ],
    )
    .await;
    let engine = harness.engine(options(&p, &stub)).unwrap();

    // A required argument missing: a clear error, and the model is never asked.
    let err = harness
        .send_prompt(
            &engine,
            "ev",
            "completable-prompt",
            args(&[("department", "Engineering")]),
        )
        .await
        .err()
        .expect("the prompt is refused");
    assert!(matches!(err, PromptError::MissingArguments { .. }), "{err}");
    assert_eq!(
        err.to_string(),
        "the prompt ev:completable-prompt needs name; add name=… and send again"
    );
    let err = harness
        .send_prompt(&engine, "ev", "no-such-prompt", Map::new())
        .await
        .err()
        .expect("an unknown prompt is refused");
    assert!(
        err.to_string()
            .starts_with("server \"ev\" has no prompt \"no-such-prompt\" (prompts: "),
        "{err}"
    );
    assert!(stub.requests().is_empty());

    let turn = harness
        .send_prompt(
            &engine,
            "ev",
            "completable-prompt",
            args(&[("department", "Engineering"), ("name", "Bob")]),
        )
        .await
        .unwrap();
    assert_eq!(
        turn.opening.iter().map(|m| m.text()).collect::<Vec<_>>(),
        ["Please promote Bob to the head of the Engineering team."]
    );
    let events = turn.handle.collect().await;
    assert!(matches!(
        events.last(),
        Some(Event::TurnEnd { outcome: TurnOutcome::Completed { answer }, .. }) if answer == "Bob leads Engineering now."
    ));
    let req = &stub.requests()[0];
    assert_eq!(
        req.messages(),
        &vec![json!({"role": "user", "content": [
            {"type": "text", "text": "Please promote Bob to the head of the Engineering team."}
        ]})]
    );

    // An embedded resource reaches the model as text under its URI, after the prompt's words.
    let turn = harness
        .send_prompt(
            &engine,
            "ev",
            "resource-prompt",
            args(&[("resourceType", "Text"), ("resourceId", "2")]),
        )
        .await
        .unwrap();
    turn.handle.collect().await;
    let req = &stub.requests()[1];
    let last = req.messages().last().unwrap();
    assert_eq!(last["role"], "user");
    let parts = last["content"].as_array().unwrap();
    assert_eq!(
        parts[0]["text"],
        "This prompt includes the Text resource with id: 2. Please analyze the following resource:"
    );
    let resource = parts[1]["text"].as_str().unwrap();
    assert!(
        resource.starts_with("[resource demo://resource/dynamic/text/2 (text/plain)]\nResource 2: This is a plaintext resource"),
        "{resource}"
    );
    // The conversation keeps the prompt's messages: the first turn is there in full.
    let texts: Vec<String> = engine.messages().iter().map(|m| m.text()).collect();
    assert_eq!(
        texts[0],
        "Please promote Bob to the head of the Engineering team."
    );
    assert_eq!(texts[1], "Bob leads Engineering now.");
    harness.shutdown().await;
}

#[test]
fn tui_prompt_slash_command_with_tab_completion() {
    if !have_tmux() {
        return;
    }
    let Some(p) = Project::everything() else {
        return;
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let stub = rt.block_on(Stub::start(
        Wire::Anthropic,
        vec![Reply::text("Bob is the head of Engineering now.")],
    ));
    let config = tempfile::tempdir().unwrap();
    let t = Tmux::chat(&p, stub.base_url(), config.path());
    t.wait_for("[MCP] ev ●");
    // The command name: /ev:comp + Tab is the whole prompt name, and the hint describes it.
    for k in ["/", "e", "v", ":", "c", "o", "m", "p", "Tab"] {
        t.keys(&[k]);
    }
    let s = t.wait_for("› /ev:completable-prompt");
    assert!(
        s.contains("/ev:completable-prompt — Team Management"),
        "{s}"
    );
    assert!(
        s.contains("First argument choice narrows values for second argument."),
        "{s}"
    );
    assert!(
        s.contains("arguments: department* name* (* required)"),
        "{s}"
    );
    // Enter now: the required arguments are missing, nothing is sent.
    t.keys(&["Enter"]);
    // (The note wraps at the terminal's width.)
    t.wait_for("needs department, name; add department=… name=… and send again;");
    assert!(stub.requests().is_empty());
    // Argument names, then a value from the server.
    t.keys(&["Tab"]);
    t.wait_for("department=");
    for k in ["d", "Tab", "E", "n", "Tab"] {
        t.keys(&[k]);
    }
    t.wait_for("› /ev:completable-prompt department=Engineering");
    // The second argument's values depend on the first (sent as context).
    for k in ["n", "Tab", "Tab"] {
        t.keys(&[k]);
    }
    let s = t.wait_for("Charlie");
    assert!(s.contains("  Alice") && s.contains("  Bob"), "{s}");
    for k in ["B", "Tab"] {
        t.keys(&[k]);
    }
    t.wait_for("› /ev:completable-prompt department=Engineering name=Bob");
    t.keys(&["Enter"]);
    let s = t.wait_for("Bob is the head of Engineering now.");
    assert!(
        s.contains("Please promote Bob to the head of the Engineering team."),
        "{s}"
    );
    let req = &stub.requests()[0];
    assert_eq!(
        req.messages()[0]["content"][0]["text"],
        "Please promote Bob to the head of the Engineering team."
    );
    t.keys(&["C-c"]);
}
