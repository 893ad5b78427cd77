//! The real binary's terminal UI in tmux: approval, the MCP bar, the /mcp panel, editing
//! `.mcp.json` through $EDITOR with hot reload, and a clean exit.

use std::path::Path;
use std::time::Duration;

use serde_json::json;

use super::support::process::{processes_with_mark, unique_mark, wait_none_marked};
use super::support::terminal::{have_tmux, Tmux};
use super::support::wait::DEADLINE;
use super::support::{fixture_bin, harness9_bin, Project};

fn write_editor_script(dir: &Path, new_config: &serde_json::Value) -> std::path::PathBuf {
    let script = dir.join("fake-editor");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ncat > \"$1\" <<'EOF'\n{}\nEOF\n",
            serde_json::to_string_pretty(new_config).unwrap()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

#[test]
fn tui_bar_panel_editor_and_exit() {
    if !have_tmux() {
        return;
    }
    let mark = unique_mark();
    let fx = json!({"command": fixture_bin(), "env": {"H9_TEST_MARK": mark}});
    let p = Project::new(&json!({"mcpServers": {"fx": fx}}));
    let tools = tempfile::tempdir().unwrap();
    let editor = write_editor_script(
        tools.path(),
        &json!({"mcpServers": {"fx": fx, "added": {"command": fixture_bin(), "args": ["--pages", "2"], "env": {"H9_TEST_MARK": mark}}}}),
    );
    let cmd = format!("{} tui {}", harness9_bin(), p.path().display());
    let t = Tmux::start(
        &cmd,
        &[
            ("HARNESS9_DATA_DIR", p.data.path().display().to_string()),
            ("EDITOR", editor.display().to_string()),
            ("HARNESS9_PROVIDER", String::new()),
            ("TERM", "xterm-256color".into()),
        ],
    );
    // Approval first: nothing runs before it.
    let s = t.wait_for("Approve MCP servers");
    assert!(s.contains("  fx (stdio)"), "{s}");
    assert!(
        s.contains(&format!("    command: {}", fixture_bin())),
        "{s}"
    );
    assert!(s.contains("    env: H9_TEST_MARK"), "{s}");
    assert!(
        processes_with_mark(&mark).is_empty(),
        "a server started before approval"
    );
    t.keys(&["y"]);
    t.wait_for("[MCP] fx ● 10 tools");

    // /mcp with Tab completion, j/k, Enter for details.
    t.keys(&["/", "m", "c", "Tab", "Enter"]);
    let s = t.wait_for("MCP servers");
    assert!(s.contains("mcp__fx__echo"), "{s}");
    t.keys(&["j", "Enter"]);
    let s = t.wait_for("server fx, tool echo");
    assert!(s.contains("input schema:"), "{s}");
    t.keys(&["Escape", "k", "Enter"]);
    t.wait_for("connected · 10 tools · mcp-fixture 0.1.0 · protocol 2025-11-25 (legacy)");
    t.keys(&["Escape"]);

    // e: $EDITOR rewrites .mcp.json; the new server shows up (and asks for approval).
    t.keys(&["e"]);
    t.wait_for("  added (stdio)");
    t.keys(&["y"]);
    t.wait_for("added ● 10 tools");
    t.keys(&["Escape"]);
    let s = t.wait_for("[MCP] added ● 10 tools │ fx ● 10 tools");
    assert!(!s.contains("MCP servers ·"), "Esc closed the panel:\n{s}");
    assert_eq!(processes_with_mark(&mark).len(), 2);

    // Ctrl+C exits and leaves no server behind.
    t.keys(&["C-c"]);
    t.wait_exit(Duration::from_secs(10));
    wait_none_marked(&mark, DEADLINE);
}

#[test]
fn tui_chat_runs_tools_asks_and_stops() {
    use super::support::provider_stub::{Reply, Stub, Wire};
    if !have_tmux() {
        return;
    }
    let rt = tokio::runtime::Runtime::new().unwrap();
    let stub = rt.block_on(Stub::start(
        Wire::Anthropic,
        vec![
            Reply::tool("mcp__fx__echo", json!({"text": "hi from the tool"})),
            Reply::text("The tool said hi."),
            Reply::Hang {
                text: "Thinking".into(),
            },
        ],
    ));
    let mark = unique_mark();
    let p = Project::new(
        &json!({"mcpServers": {"fx": {"command": fixture_bin(), "env": {"H9_TEST_MARK": mark}}}}),
    );
    let config = tempfile::tempdir().unwrap();
    let t = Tmux::chat(&p, stub.base_url(), config.path());
    t.wait_for("[MCP] fx ● 10 tools");
    t.wait_for("anthropic · stub-model");
    for k in ["s", "a", "y", "Space", "h", "i", "Enter"] {
        t.keys(&[k]);
    }
    // The tool needs permission: the approval card names it and shows the arguments.
    let s = t.wait_for("The model wants to call mcp__fx__echo");
    assert!(s.contains("{\"text\":\"hi from the tool\"}"), "{s}");
    t.keys(&["y"]);
    let s = t.wait_for("The tool said hi.");
    assert!(s.contains("> say hi"), "{s}");
    assert!(
        s.contains("⚙ mcp__fx__echo {\"text\":\"hi from the tool\"} ok "),
        "{s}"
    );
    // A turn that hangs is stopped with Esc.
    for k in ["m", "o", "r", "e", "Enter"] {
        t.keys(&[k]);
    }
    t.wait_for("working… Esc to stop");
    t.keys(&["Escape"]);
    let s = t.wait_for("stopped");
    assert!(!s.contains("working…"), "{s}");
    assert_eq!(stub.requests().len(), 3);
    t.keys(&["C-c"]);
}

/// Two tool calls in one answer both need permission: each is asked about in turn (the
/// second waits behind the first), both run, and the turn ends.
#[test]
fn tui_asks_about_parallel_tool_calls_one_after_another() {
    use super::support::provider_stub::{Reply, Stub, Wire};
    if !have_tmux() {
        return;
    }
    let rt = tokio::runtime::Runtime::new().unwrap();
    let stub = rt.block_on(Stub::start(
        Wire::Anthropic,
        vec![
            Reply::Turn {
                text: String::new(),
                calls: vec![
                    ("mcp__fx__echo".into(), json!({"text": "first"})),
                    ("mcp__fx__echo".into(), json!({"text": "second"})),
                ],
            },
            Reply::text("Both ran."),
        ],
    ));
    let p = Project::new(&json!({"mcpServers": {"fx": {"command": fixture_bin()}}}));
    let config = tempfile::tempdir().unwrap();
    let t = Tmux::chat(&p, stub.base_url(), config.path());
    t.wait_for("[MCP] fx ● 10 tools");
    t.wait_for("anthropic · stub-model");
    for k in ["g", "o", "Enter"] {
        t.keys(&[k]);
    }
    let s = t.wait_for("1 more waiting");
    assert!(s.contains("{\"text\":\"first\"}"), "{s}");
    t.keys(&["y"]);
    let s = t.wait_for("{\"text\":\"second\"}");
    assert!(!s.contains("more waiting"), "{s}");
    t.keys(&["y"]);
    let s = t.wait_for("Both ran.");
    assert!(
        s.contains("⚙ mcp__fx__echo {\"text\":\"first\"} ok "),
        "{s}"
    );
    assert!(
        s.contains("⚙ mcp__fx__echo {\"text\":\"second\"} ok "),
        "{s}"
    );
    t.keys(&["C-c"]);
}

/// `r` in /mcp restarts a server in the background: a server slow to stop (it ignores
/// SIGTERM and lingers after its stdin closes) does not freeze the UI meanwhile.
#[test]
fn tui_restart_does_not_freeze_the_ui() {
    if !have_tmux() {
        return;
    }
    let script = "trap '' TERM; \"$0\"; sleep 30";
    let p = Project::new(
        &json!({"mcpServers": {"slow": {"command": "sh", "args": ["-c", script, fixture_bin()]}}}),
    );
    let rt = tokio::runtime::Runtime::new().unwrap();
    let stub = rt.block_on(super::support::provider_stub::Stub::start(
        super::support::provider_stub::Wire::Anthropic,
        vec![],
    ));
    let config = tempfile::tempdir().unwrap();
    let t = Tmux::chat(&p, stub.base_url(), config.path());
    t.wait_for("[MCP] slow ● 10 tools");
    t.keys(&["/", "m", "c", "p", "Enter"]);
    t.wait_for("r restart");
    t.keys(&["r", "Escape"]);
    // The panel closed: Escape was read on its own (not as Alt with the next key).
    t.wait_until("the panel closed", |s| !s.contains("r restart"));
    for k in ["a", "b", "c"] {
        t.keys(&[k]);
    }
    // The keys are handled while the server is still stopping.
    let s = t.wait_for("› abc");
    assert!(!s.contains("slow ● 10 tools"), "{s}");
    t.wait_for("[MCP] slow ● 10 tools");
    t.keys(&["C-c"]);
}

/// `/new` starts a conversation, `/resume` lists the saved ones and `/resume N` reopens one
/// with its history; the model then gets that history.
#[test]
fn tui_lists_and_reopens_conversations() {
    use super::support::provider_stub::{Reply, Stub, Wire};
    if !have_tmux() {
        return;
    }
    let rt = tokio::runtime::Runtime::new().unwrap();
    let stub = rt.block_on(Stub::start(
        Wire::Anthropic,
        vec![
            Reply::text("Paris it is."),
            Reply::text("Something else."),
            Reply::text("You asked about Paris."),
        ],
    ));
    let p = Project::new(&json!({"mcpServers": {}}));
    let config = tempfile::tempdir().unwrap();
    let t = Tmux::chat(&p, stub.base_url(), config.path());
    t.wait_for("anthropic · stub-model");
    let type_line = |text: &str| {
        for c in text.chars() {
            let k = c.to_string();
            t.keys(&[if c == ' ' { "Space" } else { &k }]);
        }
        t.keys(&["Enter"]);
    };
    type_line("trip to paris");
    t.wait_for("Paris it is.");
    type_line("/new");
    let s = t.wait_for("new conversation");
    assert!(!s.contains("Paris it is."), "{s}");
    type_line("other topic");
    t.wait_for("Something else.");
    type_line("/resume");
    let s = t.wait_for("saved conversations");
    assert!(s.contains("1. other topic · 2 messages"), "{s}");
    assert!(s.contains("(this one)"), "{s}");
    assert!(s.contains("2. trip to paris · 2 messages"), "{s}");
    type_line("/resume 2");
    let s = t.wait_for("conversation reopened");
    assert!(
        s.contains("trip to paris") && s.contains("Paris it is."),
        "{s}"
    );
    assert!(!s.contains("Something else."), "{s}");
    type_line("what did i ask");
    t.wait_for("You asked about Paris.");
    let last = stub.requests().last().unwrap().clone();
    let sent = last.body["messages"].to_string();
    assert!(
        sent.contains("trip to paris") && !sent.contains("other topic"),
        "{sent}"
    );
    t.keys(&["C-c"]);
}
