//! The slash commands of server prompts: Tab completion of commands, argument names and
//! values, the hint box, and the checks Enter makes before anything is sent.

use harness9::host::catalog::ServerPrompt;
use harness9::mcp::features::{Prompt, PromptArgument};
use ratatui::crossterm::event::KeyCode;
use serde_json::{json, Map, Value};

use super::app::App;
use super::model::{Action, ChatLine};
use super::tests::{key, screen};

fn prompt(server: &str, name: &str, title: &str, args: &[(&str, bool, &str)]) -> ServerPrompt {
    ServerPrompt {
        server: server.into(),
        prompt: Prompt {
            name: name.into(),
            title: Some(title.into()),
            description: Some(format!("{title}, for the tests.")),
            arguments: args
                .iter()
                .map(|(n, required, d)| PromptArgument {
                    name: (*n).into(),
                    title: None,
                    description: Some((*d).into()),
                    required: *required,
                })
                .collect(),
            icons: vec![],
            extra: Map::new(),
        },
    }
}

fn app() -> App {
    let mut app = App::new("openai · gpt-test".into());
    app.prompts = vec![
        prompt(
            "ev",
            "team",
            "Team Management",
            &[
                ("department", true, "Choose the department."),
                ("name", true, "Choose a team member."),
                ("note", false, "Anything else."),
            ],
        ),
        prompt("ev", "simple", "Simple", &[]),
        prompt("py", "review", "Review", &[("path", false, "A file.")]),
    ];
    app
}

fn type_text(app: &mut App, text: &str) {
    for c in text.chars() {
        app.on_key(key(KeyCode::Char(c)));
    }
}

/// The rows of the screen between the first and last line of the hint box.
fn hint(app: &App) -> Vec<String> {
    let s = screen(app);
    let lines: Vec<&str> = s.lines().collect();
    let top = lines
        .iter()
        .position(|l| l.starts_with("┌ Tab completes"))
        .expect("a hint box");
    let bottom = top
        + lines[top..]
            .iter()
            .position(|l| l.starts_with('└'))
            .unwrap();
    lines[top..=bottom].iter().map(|l| l.to_string()).collect()
}

#[test]
fn tab_lists_commands_and_prompts_then_completes_one() {
    let mut app = app();
    type_text(&mut app, "/");
    assert_eq!(app.on_key(key(KeyCode::Tab)), None);
    assert_eq!(app.input, "/");
    assert_eq!(
        hint(&app),
        [
            "┌ Tab completes ───────────────────────────────────────────────────────────────┐",
            "│  /mcp                                                                        │",
            "│  /roots                                                                      │",
            "│  /new                                                                        │",
            "│  /resume                                                                     │",
            "│  /model                                                                      │",
            "│  /permissions                                                                │",
            "│  … and 5 more; type to narrow                                                │",
            "└──────────────────────────────────────────────────────────────────────────────┘",
        ]
    );
    type_text(&mut app, "ev:");
    app.on_key(key(KeyCode::Tab));
    assert_eq!(app.slash.candidates, ["/ev:team", "/ev:simple"]);
    type_text(&mut app, "t");
    app.on_key(key(KeyCode::Tab));
    assert_eq!(app.input, "/ev:team ");
    assert_eq!(
        hint(&app),
        [
            "┌ Tab completes ───────────────────────────────────────────────────────────────┐",
            "│/ev:team — Team Management                                                    │",
            "│Team Management, for the tests.                                               │",
            "│arguments: department* name* note (* required)                                │",
            "└──────────────────────────────────────────────────────────────────────────────┘",
        ]
    );
}

#[test]
fn tab_completes_argument_names_then_asks_the_server_for_values() {
    let mut app = app();
    app.input = "/ev:team ".into();
    app.on_key(key(KeyCode::Tab));
    assert_eq!(app.slash.candidates, ["department=", "name=", "note="]);
    type_text(&mut app, "d");
    app.on_key(key(KeyCode::Tab));
    assert_eq!(app.input, "/ev:team department=");
    type_text(&mut app, "E");
    let action = app.on_key(key(KeyCode::Tab));
    assert_eq!(
        action,
        Some(Action::Complete {
            server: "ev".into(),
            prompt: "team".into(),
            argument: "department".into(),
            value: "E".into(),
            context: Map::new(),
            input: "/ev:team department=E".into(),
        })
    );
    assert!(hint(&app)
        .iter()
        .any(|l| l.contains("asking ev for values of department…")));
    app.completion_done("/ev:team department=E", Ok(vec!["Engineering".into()]));
    assert_eq!(app.input, "/ev:team department=Engineering ");

    // The filled arguments go along as context; several values show in the box.
    type_text(&mut app, "name=");
    let Some(Action::Complete { context, input, .. }) = app.on_key(key(KeyCode::Tab)) else {
        panic!("no completion asked for")
    };
    assert_eq!(
        context,
        json!({"department": "Engineering"})
            .as_object()
            .unwrap()
            .clone()
    );
    app.completion_done(
        &input,
        Ok(vec!["Alice".into(), "Alan Turing".into(), "Bob".into()]),
    );
    assert_eq!(app.input, "/ev:team department=Engineering name=");
    assert_eq!(
        hint(&app),
        [
            "┌ Tab completes ───────────────────────────────────────────────────────────────┐",
            "│/ev:team — Team Management                                                    │",
            "│Team Management, for the tests.                                               │",
            "│arguments: department* name* note (* required)                                │",
            "│name: Choose a team member.                                                   │",
            "│  Alice                                                                       │",
            "│  Alan Turing                                                                 │",
            "│  Bob                                                                         │",
            "└──────────────────────────────────────────────────────────────────────────────┘",
        ]
    );
    type_text(&mut app, "Alan");
    let Some(Action::Complete { input, .. }) = app.on_key(key(KeyCode::Tab)) else {
        panic!("no completion asked for")
    };
    // An answer for an input the user has since changed is dropped.
    app.completion_done("/ev:team x", Ok(vec!["nope".into()]));
    app.completion_done(&input, Ok(vec!["Alan Turing".into()]));
    assert_eq!(
        app.input,
        "/ev:team department=Engineering name=\"Alan Turing\" "
    );
    assert_eq!(
        app.on_key(key(KeyCode::Enter)),
        Some(Action::SendPrompt {
            server: "ev".into(),
            name: "team".into(),
            arguments: args(&[("department", "Engineering"), ("name", "Alan Turing")]),
            text: "/ev:team department=Engineering name=\"Alan Turing\"".into(),
        })
    );
}

fn args(pairs: &[(&str, &str)]) -> Map<String, Value> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), Value::String(v.to_string())))
        .collect()
}

#[test]
fn enter_with_a_missing_required_argument_sends_nothing() {
    let mut app = app();
    app.input = "/ev:team department=Sales".into();
    assert_eq!(app.on_key(key(KeyCode::Enter)), None);
    assert_eq!(app.input, "/ev:team department=Sales");
    assert_eq!(
        app.chat.last(),
        Some(&ChatLine::System(
            "the prompt ev:team needs name; add name=… and send again; nothing was sent".into()
        ))
    );
    app.input = "/ev:team department=Sales nam=x".into();
    assert_eq!(app.on_key(key(KeyCode::Enter)), None);
    assert_eq!(
        app.chat.last(),
        Some(&ChatLine::System(
            "/ev:team has no argument \"nam\"; its arguments: department, name, note".into()
        ))
    );
    app.input = "/ev:nothing".into();
    assert_eq!(app.on_key(key(KeyCode::Enter)), None);
    assert_eq!(
        app.chat.last(),
        Some(&ChatLine::System(
            "no prompt /ev:nothing; Tab after / lists the prompts of the connected servers".into()
        ))
    );
    app.input = "/ev:simple".into();
    assert_eq!(
        app.on_key(key(KeyCode::Enter)),
        Some(Action::SendPrompt {
            server: "ev".into(),
            name: "simple".into(),
            arguments: Map::new(),
            text: "/ev:simple".into(),
        })
    );
    // Built-in commands still work, unknown ones still say so.
    app.input = "/nope".into();
    assert_eq!(app.on_key(key(KeyCode::Enter)), None);
    assert_eq!(
        app.chat.last(),
        Some(&ChatLine::System(
            "unknown command /nope; commands: /mcp /roots /new /resume /model /permissions /tasks /quit"
                .into()
        ))
    );
}
