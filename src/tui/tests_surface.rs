//! Snapshot tests of titles, tool annotations, logging levels and `/roots` in the TUI.

use std::sync::Arc;

use harness9::host::catalog::ServerDetails;
use harness9::manager::{ServerState, StatusSnapshot};
use harness9::mcp::features::LogLevel;
use harness9::mcp::{LogLine, LogSource};
use harness9::tools::{ToolDisplay, ToolSource, ToolSpec};
use ratatui::crossterm::event::KeyCode;
use serde_json::json;

use super::app::App;
use super::model::{Action, Modal, RootsCommand};
use super::tests::{key, screen, server};

fn tool(name: &str, title: Option<&str>, annotations: serde_json::Value) -> ToolSpec {
    let def: harness9::mcp::ToolDef = serde_json::from_value(json!({
        "name": name, "title": title, "annotations": annotations
    }))
    .unwrap();
    ToolSpec {
        name: format!("mcp__ev__{name}"),
        description: format!("The {name} tool."),
        input_schema: harness9::mcp::schema_text::SchemaText::from(json!({"type": "object"})),
        read_only: def.read_only_hint(),
        source: ToolSource::Mcp {
            server: "ev".into(),
            tool: name.into(),
        },
        display: ToolDisplay::of(&def),
    }
}

fn app() -> App {
    let mut app = App::new("openai · gpt-test".into());
    let status = StatusSnapshot {
        revision: 1,
        servers: vec![server(
            "ev",
            "stdio",
            ServerState::Connected {
                tools: 2,
                protocol_version: "2025-11-25".into(),
                server_name: "everything".into(),
                server_version: "2.0".into(),
                era: harness9::mcp::era::Era::Legacy,
            },
        )],
        config_error: None,
    };
    app.details = vec![Some(ServerDetails {
        name: "ev".into(),
        title: Some("Everything Demo".into()),
        icons: Vec::new(),
        logging: true,
        log_level: Some(LogLevel::Warning),
    })];
    app.set_status(
        Arc::new(status),
        vec![vec![
            tool("echo", Some("Echo Tool"), json!({"readOnlyHint": true})),
            tool("rm", None, json!({"destructiveHint": true})),
        ]],
    );
    app
}

#[test]
fn panel_shows_titles_beside_names() {
    let mut app = app();
    app.modal = Modal::Mcp {
        selected: 0,
        details: false,
    };
    let s = screen(&app);
    let lines: Vec<&str> = s.lines().collect();
    assert!(
        lines[2].starts_with("  │● ev               stdio  project 2 tools · Everything Demo"),
        "{s}"
    );
    assert!(
        lines[3].starts_with("  │    mcp__ev__echo · Echo Tool  The echo tool."),
        "{s}"
    );
    assert!(
        lines[4].starts_with("  │    mcp__ev__rm  The rm tool."),
        "{s}"
    );
    assert!(s.contains("└ l log level ──"), "{s}");
}

#[test]
fn l_cycles_the_logging_level_of_the_selected_server() {
    let mut app = app();
    app.modal = Modal::Mcp {
        selected: 1,
        details: false,
    };
    assert_eq!(
        app.on_key(key(KeyCode::Char('l'))),
        Some(Action::SetLogLevel {
            server: "ev".into(),
            level: LogLevel::Error,
        })
    );
    // A server that does not take a level: nothing happens.
    app.details[0].as_mut().unwrap().logging = false;
    assert_eq!(app.on_key(key(KeyCode::Char('l'))), None);
    assert!(!screen(&app).contains("l log level"));
}

#[test]
fn s_makes_a_server_with_an_always_grant_ask_again() {
    let mut app = app();
    app.modal = Modal::Mcp {
        selected: 0,
        details: false,
    };
    // No grant: `s` does nothing and is not offered.
    assert_eq!(app.on_key(key(KeyCode::Char('s'))), None);
    assert!(!screen(&app).contains("s ask before sampling"));
    app.sampling_grants = vec!["ev".into()];
    assert!(screen(&app).contains("└ l log level · s ask before sampling ──"));
    assert_eq!(
        app.on_key(key(KeyCode::Char('s'))),
        Some(Action::RevokeSampling("ev".into()))
    );
    app.on_key(key(KeyCode::Enter));
    assert!(screen(&app).contains("sampling: may use your model without asking · s make it ask"));
}

#[test]
fn server_details_show_the_level_and_the_log_with_levels() {
    let mut app = app();
    app.modal = Modal::Mcp {
        selected: 0,
        details: true,
    };
    assert_eq!(app.details_server().as_deref(), Some("ev"));
    let line = |source, level: &str, text: &str| LogLine {
        time_ms: 0,
        source,
        level: level.into(),
        text: text.into(),
    };
    app.log_tail = vec![
        line(LogSource::Stderr, "", "listening on stdio"),
        line(
            LogSource::Server,
            "warning",
            "[everything-server] disk almost full",
        ),
        line(
            LogSource::Host,
            "info",
            "logging level warning set again after the start",
        ),
    ];
    let s = screen(&app);
    for want in [
        "│title: Everything Demo",
        "│logging: warning and above · l next level",
        "│recent log:",
        "│   stderr listening on stdio",
        "│  warning [everything-server] disk almost full",
        "│ harness9 logging level warning set again after the start",
    ] {
        assert!(s.contains(want), "{want}\n{s}");
    }
}

#[test]
fn tool_details_show_title_and_hints() {
    let mut app = app();
    app.modal = Modal::Mcp {
        selected: 2,
        details: true,
    };
    let s = screen(&app);
    assert!(s.contains("│mcp__ev__rm"), "{s}");
    assert!(
        s.contains("hints (the server's claims): read-only: no (default) · destructive: yes"),
        "{s}"
    );
    assert!(
        s.contains("destructive: every call is asked about unless you allowed this tool"),
        "{s}"
    );
    app.modal = Modal::Mcp {
        selected: 1,
        details: true,
    };
    let s = screen(&app);
    assert!(s.contains("│title: Echo Tool"), "{s}");
    assert!(
        s.contains("read-only: yes · idempotent: no (default)"),
        "{s}"
    );
    assert!(!s.contains("destructive"), "{s}");
}

#[test]
fn roots_command() {
    let mut app = app();
    let send = |app: &mut App, text: &str| {
        app.input = text.into();
        app.on_key(key(KeyCode::Enter))
    };
    assert_eq!(
        send(&mut app, "/roots"),
        Some(Action::Roots(RootsCommand::List))
    );
    assert_eq!(
        send(&mut app, "/roots add ../lib"),
        Some(Action::Roots(RootsCommand::Add("../lib".into())))
    );
    assert_eq!(send(&mut app, "/roots frob"), None);
    assert!(screen(&app)
        .contains("usage: /roots (list the extra roots) · /roots add PATH · /roots remove PATH"));
}
