//! The real binary's terminal UI in tmux: approval, the MCP bar, the /mcp panel, editing
//! `.mcp.json` through $EDITOR with hot reload, and a clean exit.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;

use super::{fixture_bin, harness9_bin, processes_with_mark, unique_mark, Project};

pub(super) struct Tmux {
    socket: String,
}

/// Whether tmux is here. Under CI its absence fails the test (the test command installs
/// it); elsewhere the test is skipped.
pub(super) fn have_tmux() -> bool {
    if Command::new("tmux").arg("-V").output().is_ok() {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "tmux is missing; the test command installs it"
    );
    eprintln!("skipped: tmux is not installed");
    false
}

impl Tmux {
    /// `harness9 tui --yes` on project `p`, chatting with the scripted Anthropic-wire model
    /// at `model_url`, with the project's private data folder and `config` as the config
    /// folder (it must outlive the session).
    pub(super) fn chat(p: &Project, model_url: String, config: &Path) -> Tmux {
        let cmd = format!("{} tui --yes {}", harness9_bin(), p.path().display());
        Tmux::start(
            &cmd,
            &[
                ("HARNESS9_DATA_DIR", p.data.path().display().to_string()),
                ("XDG_CONFIG_HOME", config.display().to_string()),
                ("HARNESS9_CONFIG_DIR", config.display().to_string()),
                ("HARNESS9_PROVIDER", "anthropic".into()),
                ("HARNESS9_MODEL", "stub-model".into()),
                ("ANTHROPIC_BASE_URL", model_url),
                ("ANTHROPIC_API_KEY", super::provider_stub::TEST_KEY.into()),
                ("TERM", "xterm-256color".into()),
            ],
        )
    }

    pub(super) fn start(cmd: &str, env: &[(&str, String)]) -> Tmux {
        let socket = format!("h9-{}", unique_mark());
        let mut c = Command::new("tmux");
        c.args([
            "-L",
            &socket,
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-x",
            "100",
            "-y",
            "30",
        ]);
        for (k, v) in env {
            c.arg("-e").arg(format!("{k}={v}"));
        }
        let status = c.arg(cmd).status().expect("tmux runs");
        assert!(status.success());
        Tmux { socket }
    }

    pub(super) fn screen(&self) -> String {
        let o = Command::new("tmux")
            .args(["-L", &self.socket, "capture-pane", "-p"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    pub(super) fn keys(&self, keys: &[&str]) {
        for k in keys {
            let status = Command::new("tmux")
                .args(["-L", &self.socket, "send-keys", k])
                .status()
                .unwrap();
            assert!(status.success());
            std::thread::sleep(Duration::from_millis(60));
        }
    }

    /// Types `text` as it is (tmux's literal mode: no key names).
    pub(super) fn text(&self, text: &str) {
        let status = Command::new("tmux")
            .args(["-L", &self.socket, "send-keys", "-l", text])
            .status()
            .unwrap();
        assert!(status.success());
        std::thread::sleep(Duration::from_millis(60));
    }

    pub(super) fn wait_for(&self, what: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let s = self.screen();
            if s.contains(what) {
                return s;
            }
            assert!(
                Instant::now() < deadline,
                "waited for {what:?}; the screen shows:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// A tmux format about the pane: `#{alternate_on}`, `#{cursor_flag}`, …
    pub(super) fn pane(&self, format: &str) -> String {
        let o = Command::new("tmux")
            .args(["-L", &self.socket, "display-message", "-p", format])
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    }

    fn alive(&self) -> bool {
        Command::new("tmux")
            .args(["-L", &self.socket, "has-session"])
            .status()
            .map(|s| s.success())
            .unwrap_or(false)
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .status();
    }
}

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
    let deadline = Instant::now() + Duration::from_secs(10);
    while t.alive() {
        assert!(
            Instant::now() < deadline,
            "the TUI did not exit:\n{}",
            t.screen()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while !processes_with_mark(&mark).is_empty() {
        assert!(
            Instant::now() < deadline,
            "servers left: {:?}",
            processes_with_mark(&mark)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn tui_chat_runs_tools_asks_and_stops() {
    use super::provider_stub::{Reply, Stub, Wire};
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
    use super::provider_stub::{Reply, Stub, Wire};
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
    let stub = rt.block_on(super::provider_stub::Stub::start(
        super::provider_stub::Wire::Anthropic,
        vec![],
    ));
    let config = tempfile::tempdir().unwrap();
    let t = Tmux::chat(&p, stub.base_url(), config.path());
    t.wait_for("[MCP] slow ● 10 tools");
    t.keys(&["/", "m", "c", "p", "Enter"]);
    t.wait_for("r restart");
    t.keys(&["r", "Escape"]);
    // (A pause, or the terminal reads Escape and the next key as Alt+key.)
    std::thread::sleep(std::time::Duration::from_millis(300));
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
    use super::provider_stub::{Reply, Stub, Wire};
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
