//! The tool-approval card with arguments of any size, and the input line's cursor, at
//! several terminal sizes on ratatui's test backend.

use harness9::engine::event::Event;
use ratatui::backend::{Backend, TestBackend};
use ratatui::crossterm::event::KeyCode;
use ratatui::layout::Position;
use ratatui::Terminal;
use serde_json::json;
use unicode_width::UnicodeWidthStr;

use super::app::App;
use super::model::Modal;
use super::tests::{feed, key};
use super::view;

/// Where the cursor was left off this far, so a draw that places none is seen.
const NOWHERE: Position = Position::new(999, 999);

/// The screen as text, and the cursor the frame placed (if any).
pub(super) fn draw(app: &App, width: u16, height: u16) -> (Vec<String>, Option<Position>) {
    let mut backend = TestBackend::new(width, height);
    backend.set_cursor_position(NOWHERE).unwrap();
    let mut term = Terminal::new(backend).unwrap();
    term.draw(|f| view::render(f, app)).unwrap();
    let buf = term.backend().buffer().clone();
    let lines = (0..buf.area.height)
        .map(|y| {
            let mut line = String::new();
            let mut x = 0;
            while x < buf.area.width {
                let symbol = buf[(x, y)].symbol();
                line.push_str(symbol);
                // A wide character covers the cell after it.
                x += symbol.width().max(1) as u16;
            }
            line.trim_end().to_string()
        })
        .collect();
    let at = term.backend_mut().get_cursor_position().unwrap();
    (lines, (at != NOWHERE).then_some(at))
}

const HINTS: &str = "[y] allow once  [a] always allow  [n] deny";

/// An approval request whose arguments are 40 keys long.
pub(super) fn app_asking_with_long_arguments() -> App {
    let mut app = App::new("openai · gpt-test".into());
    let mut args = serde_json::Map::new();
    for i in 0..40 {
        args.insert(format!("key{i:02}"), json!(format!("value {i}")));
    }
    feed(
        &mut app,
        Event::ApprovalRequest {
            call_id: "1".into(),
            name: "mcp__demo__write_file".into(),
            arguments: serde_json::Value::Object(args),
            read_only: false,
        },
    );
    app
}

fn row_of(lines: &[String], what: &str) -> Option<usize> {
    lines.iter().position(|l| l.contains(what))
}

#[test]
fn long_arguments_scroll_and_the_key_hints_stay_visible() {
    let mut app = app_asking_with_long_arguments();
    let (lines, cursor) = draw(&app, 80, 24);
    let text = lines.join("\n");
    assert!(row_of(&lines, HINTS).is_some(), "{text}");
    // 24 rows less a margin of 2, 2 borders, the heading, the hints: 18 lines of the 42.
    assert!(text.contains("↑↓ PgUp PgDn · lines 1–18 of 42"), "{text}");
    assert!(text.contains("\"key00\": \"value 0\""), "{text}");
    assert!(!text.contains("\"key39\""), "{text}");
    assert_eq!(cursor, None, "no cursor in the input under a modal");

    app.on_key(key(KeyCode::Down));
    let (lines, _) = draw(&app, 80, 24);
    let text = lines.join("\n");
    assert!(text.contains("lines 2–19 of 42"), "{text}");
    assert!(row_of(&lines, "│{").is_none(), "{text}");
    assert!(text.contains("\"key17\""), "{text}");
    assert!(row_of(&lines, HINTS).is_some(), "{text}");

    app.on_key(key(KeyCode::PageDown));
    app.on_key(key(KeyCode::PageDown));
    app.on_key(key(KeyCode::PageDown));
    let (lines, _) = draw(&app, 80, 24);
    let text = lines.join("\n");
    assert!(text.contains("lines 25–42 of 42"), "{text}");
    assert!(text.contains("\"key39\": \"value 39\""), "{text}");
    assert!(row_of(&lines, HINTS).is_some(), "{text}");

    // Past the end, one line up is one line up from the end.
    app.on_key(key(KeyCode::Up));
    let (lines, _) = draw(&app, 80, 24);
    assert!(lines.join("\n").contains("lines 24–41 of 42"));
    app.on_key(key(KeyCode::PageUp));
    app.on_key(key(KeyCode::PageUp));
    app.on_key(key(KeyCode::PageUp));
    let (lines, _) = draw(&app, 80, 24);
    assert!(lines.join("\n").contains("lines 1–18 of 42"));

    // Scrolling keys answer nothing; y still does.
    assert!(matches!(
        app.on_key(key(KeyCode::Char('y'))),
        Some(super::model::Action::AnswerTool { .. })
    ));
    assert_eq!(app.modal, Modal::None);
}

#[test]
fn the_key_hints_survive_a_tiny_terminal() {
    let app = app_asking_with_long_arguments();
    for (w, h) in [(80, 24), (60, 10), (44, 6), (30, 5), (80, 4)] {
        let (lines, _) = draw(&app, w, h);
        let text = lines.join("\n");
        assert!(
            text.contains("[y] ") && text.contains("[a] ") && text.contains("[n] "),
            "{w}×{h}:\n{text}"
        );
    }
}

#[test]
fn short_arguments_stay_on_one_line_without_scroll_hints() {
    let mut app = App::new("p".into());
    feed(
        &mut app,
        Event::ApprovalRequest {
            call_id: "1".into(),
            name: "mcp__demo__read_file".into(),
            arguments: json!({"path": "a.txt"}),
            read_only: true,
        },
    );
    let (lines, _) = draw(&app, 80, 24);
    let text = lines.join("\n");
    assert!(text.contains("│{\"path\":\"a.txt\"}"), "{text}");
    assert!(!text.contains("PgDn"), "{text}");
}

/// A second long request, waiting behind the first.
fn ask_again(app: &mut App, id: &str) {
    let first = app.approvals.first().unwrap().arguments.clone();
    feed(
        app,
        Event::ApprovalRequest {
            call_id: id.into(),
            name: "mcp__demo__write_file".into(),
            arguments: first,
            read_only: false,
        },
    );
}

#[test]
fn the_next_request_starts_at_the_top() {
    let mut app = app_asking_with_long_arguments();
    ask_again(&mut app, "2");
    ask_again(&mut app, "3");
    draw(&app, 80, 24);
    app.on_key(key(KeyCode::PageDown));
    // The "2 more waiting" line takes one row from the arguments.
    assert!(draw(&app, 80, 24)
        .0
        .join("\n")
        .contains("lines 17–33 of 42"));
    // Answered: the next one shows from its first line.
    app.on_key(key(KeyCode::Char('n')));
    assert!(draw(&app, 80, 24).0.join("\n").contains("lines 1–17 of 42"));
    // Ended another way (cancelled): likewise.
    app.on_key(key(KeyCode::Down));
    assert!(draw(&app, 80, 24).0.join("\n").contains("lines 2–18 of 42"));
    feed(
        &mut app,
        Event::ToolCallEnd {
            call_id: "2".into(),
            name: "mcp__demo__write_file".into(),
            arguments: json!({}),
            status: harness9::engine::event::CallStatus::Cancelled,
            duration_ms: 0,
            error: None,
            output: String::new(),
            spilled: None,
            view: None,
        },
    );
    assert!(draw(&app, 80, 24).0.join("\n").contains("lines 1–18 of 42"));
}

/// Types `text` into the input.
fn type_in(app: &mut App, text: &str) {
    for c in text.chars() {
        app.on_key(key(KeyCode::Char(c)));
    }
}

#[test]
fn the_cursor_follows_the_input_by_display_width() {
    let mut app = App::new("p".into());
    // The input row is the second of the last three; "› " takes two columns.
    let (_, cursor) = draw(&app, 80, 24);
    assert_eq!(cursor, Some(Position::new(2, 22)));
    type_in(&mut app, "abc");
    assert_eq!(draw(&app, 80, 24).1, Some(Position::new(5, 22)));
    // é is one column, 日本 two each, a combining acute accent none.
    let mut app = App::new("p".into());
    type_in(&mut app, "é日本e\u{301}");
    let (lines, cursor) = draw(&app, 80, 24);
    assert!(lines[22].starts_with("› é日本e\u{301}"), "{:?}", lines[22]);
    assert_eq!(cursor, Some(Position::new(2 + 1 + 4 + 1, 22)));
    app.on_key(key(KeyCode::Backspace));
    app.on_key(key(KeyCode::Backspace));
    assert_eq!(draw(&app, 80, 24).1, Some(Position::new(2 + 1 + 4, 22)));
}

#[test]
fn a_long_input_shows_its_end_with_the_cursor_in_view() {
    let mut app = App::new("p".into());
    type_in(&mut app, &"日".repeat(30));
    type_in(&mut app, "end");
    let (lines, cursor) = draw(&app, 40, 10);
    assert!(lines[8].starts_with("› …"), "{:?}", lines[8]);
    assert!(lines[8].ends_with("日end"), "{:?}", lines[8]);
    let cursor = cursor.expect("a cursor");
    assert_eq!(cursor.y, 8);
    assert!(cursor.x < 40, "{cursor:?}");
    assert_eq!(
        view::input_tail("ab日日", 5),
        ("…日".to_string(), 3),
        "a wide character that does not fit whole gives way"
    );
    assert_eq!(view::input_tail("abc", 4), ("abc".to_string(), 3));
}

#[test]
fn no_cursor_while_the_mcp_panel_is_open() {
    let mut app = App::new("p".into());
    type_in(&mut app, "/mcp");
    app.on_key(key(KeyCode::Enter));
    assert!(matches!(app.modal, Modal::Mcp { .. }));
    assert_eq!(draw(&app, 80, 24).1, None);
    app.on_key(key(KeyCode::Esc));
    assert_eq!(draw(&app, 80, 24).1, Some(Position::new(2, 22)));
}
