//! Snapshot tests of signing in from the terminal UI: the MCP bar, the `/mcp` panel's
//! details, key hints, progress and outcome lines, at 80×24.

use std::sync::Arc;

use harness9::host::signin::SignInError;
use harness9::manager::StartPhase;
use harness9::manager::{ServerState, StatusSnapshot};
use harness9::mcp::auth::{AuthError, SignedIn};
use ratatui::crossterm::event::KeyCode;

use super::app::App;
use super::auth::{expiry_words, AuthDone};
use super::model::{Action, ChatLine, Modal};
use super::tests::{key, screen, server};

fn signed_in() -> SignedIn {
    SignedIn {
        issuer: "https://auth.example.com".into(),
        scopes: vec!["read".into(), "write".into()],
        expires_at: None,
        refreshable: true,
        kept_in: "the system keychain (Secret Service)".into(),
    }
}

/// demo (stdio, connected), remote (http, needs sign-in), docs (http, signed in),
/// login (sse, waiting for the browser).
fn app() -> App {
    let mut app = App::new("openai · gpt-test".into());
    let mut docs = server(
        "docs",
        "http",
        ServerState::Connected {
            tools: 1,
            protocol_version: "2025-11-25".into(),
            server_name: "docs".into(),
            server_version: "2.0".into(),
            era: harness9::mcp::era::Era::Legacy,
        },
    );
    docs.target = "https://docs.example.com/mcp".into();
    docs.signed_in = Some(signed_in());
    let mut remote = server(
        "remote",
        "http",
        ServerState::NeedsAuth {
            reason: "no token yet (the server answered 401)".into(),
        },
    );
    remote.target = "https://mcp.example.com/mcp".into();
    let status = StatusSnapshot {
        revision: 1,
        servers: vec![
            server(
                "demo",
                "stdio",
                ServerState::Connected {
                    tools: 2,
                    protocol_version: "2025-11-25".into(),
                    server_name: "harness9".into(),
                    server_version: "0.1.0".into(),
                    era: harness9::mcp::era::Era::Legacy,
                },
            ),
            remote,
            docs,
            server(
                "login",
                "sse",
                ServerState::Starting {
                    phase: StartPhase::SigningIn,
                },
            ),
        ],
        config_error: None,
    };
    app.set_status(Arc::new(status), vec![vec![], vec![], vec![], vec![]]);
    app
}

fn open_panel(app: &mut App, selected: usize) {
    app.modal = Modal::Mcp {
        selected,
        details: false,
    };
}

/// The screen's lines, cut to the panel's columns (the chat and the bar show at its sides).
fn lines(s: &str) -> Vec<String> {
    s.lines()
        .map(|l| l.chars().skip(2).take(76).collect::<String>())
        .collect()
}

#[test]
fn the_bar_shows_needs_sign_in_and_signing_in() {
    let s = screen(&app());
    assert_eq!(
        s.lines().nth(20).unwrap(),
        "[MCP] demo ● 2 tools │ remote ! needs sign-in │ docs ● 1 tool │ login ○ signing"
    );
}

#[test]
fn the_panel_lists_states_and_hints_sign_in_for_a_remote_server() {
    let mut app = app();
    open_panel(&mut app, 1);
    let s = screen(&app);
    let l = lines(&s);
    assert_eq!(
        &l[2..7],
        &[
            "│● demo             stdio  project 2 tools                                 │",
            "│! remote           http   project needs sign-in                           │",
            "│● docs             http   project 1 tool                                  │",
            "│○ login            sse    project signing in…                             │",
            "│                                                                          │",
        ]
    );
    assert_eq!(
        l[22],
        "└ a sign in ───────────────────────────────────────────────────────────────┘"
    );
    // The signed-in server also offers sign-out; a local one offers neither.
    open_panel(&mut app, 2);
    assert!(screen(&app).contains("└ a sign in · o sign out ─"));
    open_panel(&mut app, 0);
    assert!(lines(&screen(&app))[22].starts_with("└──────"));
}

#[test]
fn details_show_the_reason_and_the_signed_in_issuer() {
    let mut app = app();
    open_panel(&mut app, 1);
    app.on_key(key(KeyCode::Enter));
    let s = screen(&app);
    assert_eq!(
        &lines(&s)[2..7],
        &[
            "│remote                                                                    │",
            "│http · project scope: https://mcp.example.com/mcp                         │",
            "│needs sign-in:                                                            │",
            "│no token yet (the server answered 401)                                    │",
            "│press a to sign in (your browser opens)                                   │",
        ]
    );
    open_panel(&mut app, 2);
    app.on_key(key(KeyCode::Enter));
    let s = screen(&app);
    assert_eq!(
        &lines(&s)[4..6],
        &[
            "│connected · 1 tools · docs 2.0 · protocol 2025-11-25 (legacy)             │",
            "│signed in to https://auth.example.com · scopes read write · renews itself │",
        ]
    );
    open_panel(&mut app, 3);
    app.on_key(key(KeyCode::Enter));
    assert!(screen(&app).contains("│waiting for sign-in in the browser…"));
}

#[test]
fn a_signs_in_in_the_background_and_a_failure_is_shown() {
    let mut app = app();
    open_panel(&mut app, 1);
    assert_eq!(
        app.on_key(key(KeyCode::Char('a'))),
        Some(Action::SignIn("remote".into()))
    );
    let s = screen(&app);
    assert_eq!(
        lines(&s)[21],
        "│Signing in to remote: finish in the browser that opened…                  │"
    );
    // A second `a` while it runs starts nothing.
    assert_eq!(app.on_key(key(KeyCode::Char('a'))), None);
    assert_eq!(
        &lines(&screen(&app))[20..22],
        &[
            "│Signing in to remote: finish in the browser that opened…                  │",
            "│already signing in to remote: finish in the browser                       │",
        ]
    );

    app.auth_done(AuthDone::SignIn {
        server: "remote".into(),
        result: Err(SignInError::Auth(AuthError::Discovery(
            "the authorization server does not support PKCE with S256".into(),
        ))),
    });
    let s = screen(&app);
    assert_eq!(
        &lines(&s)[20..22],
        &[
            "│could not sign in to remote: the authorization server does not support    │",
            "│PKCE with S256                                                            │",
        ]
    );
    assert_eq!(
        app.chat.last(),
        Some(&ChatLine::System(
            "could not sign in to remote: the authorization server does not support PKCE with S256"
                .into()
        ))
    );
    // The notice goes with the next key.
    app.on_key(key(KeyCode::Down));
    assert!(!lines(&screen(&app))[2..22]
        .iter()
        .any(|l| l.contains("could not sign in")));

    open_panel(&mut app, 1);
    assert_eq!(
        app.on_key(key(KeyCode::Char('a'))),
        Some(Action::SignIn("remote".into()))
    );
    app.auth_done(AuthDone::SignIn {
        server: "remote".into(),
        result: Ok(signed_in()),
    });
    assert_eq!(
        lines(&screen(&app))[21],
        "│signed in to remote (https://auth.example.com)                            │"
    );
}

#[test]
fn o_signs_out_and_local_servers_explain_why_not() {
    let mut app = app();
    open_panel(&mut app, 2);
    assert_eq!(
        app.on_key(key(KeyCode::Char('o'))),
        Some(Action::SignOut("docs".into()))
    );
    app.auth_done(AuthDone::SignOut {
        server: "docs".into(),
        result: Ok(true),
    });
    assert!(screen(&app).contains("│signed out of docs; its tokens are forgotten"));

    open_panel(&mut app, 0);
    assert_eq!(app.on_key(key(KeyCode::Char('a'))), None);
    assert_eq!(app.on_key(key(KeyCode::Char('o'))), None);
    let s = screen(&app);
    assert_eq!(
        &lines(&s)[20..22],
        &[
            "│demo is a local server: it takes credentials from \"env\" in .mcp.json, not │",
            "│from a sign-in                                                            │",
        ]
    );
}

#[test]
fn expiry_reads_as_time_left() {
    let now = 1_000_000;
    assert_eq!(expiry_words(None, now), None);
    assert_eq!(expiry_words(Some(now - 5), now).as_deref(), Some("expired"));
    assert_eq!(
        expiry_words(Some(now + 30), now).as_deref(),
        Some("expires in less than a minute")
    );
    assert_eq!(
        expiry_words(Some(now + 45 * 60 + 10), now).as_deref(),
        Some("expires in 45 min")
    );
    assert_eq!(
        expiry_words(Some(now + 5 * 3600), now).as_deref(),
        Some("expires in 5 h")
    );
    assert_eq!(
        expiry_words(Some(now + 3 * 86400), now).as_deref(),
        Some("expires in 3 days")
    );
}
