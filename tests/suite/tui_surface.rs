//! The real binary's terminal UI in tmux: a server's logging level set with `l` (the server
//! hears it, its log shows the level) and `/roots` keeping an extra root for the project.

use serde_json::json;

use super::support::terminal::{have_tmux, Tmux};
use super::support::{fixture_bin, harness9_bin, Project};

#[test]
fn tui_log_level_and_roots() {
    if !have_tmux() {
        return;
    }
    let p = Project::new(&json!({"mcpServers": {"fx": {"command": fixture_bin()}}}));
    let extra = tempfile::tempdir().unwrap();
    let extra_path = std::fs::canonicalize(extra.path()).unwrap();
    let cmd = format!("{} tui --yes {}", harness9_bin(), p.path().display());
    let t = Tmux::start(
        &cmd,
        &[
            ("HARNESS9_DATA_DIR", p.data.path().display().to_string()),
            ("HARNESS9_PROVIDER", String::new()),
            ("TERM", "xterm-256color".into()),
        ],
    );
    t.wait_for("[MCP] fx ● 10 tools");
    t.keys(&["/", "m", "c", "Tab", "Enter"]);
    t.wait_for("l log level");
    t.keys(&["l", "Enter"]);
    t.wait_for("logging: debug and above · l next level");
    t.wait_for("debug [fixture] logging level set to debug");
    t.keys(&["Escape", "Escape"]);
    t.wait_for("fx: logging level debug");

    t.keys(&[&format!("/roots add {}", extra.path().display()), "Enter"]);
    t.wait_for("added; servers were told.");
    let kept = std::fs::read_to_string(p.data.path().join("extra-roots.json")).unwrap();
    assert!(kept.contains(&*extra_path.to_string_lossy()), "{kept}");
    t.keys(&["/roots", "Enter"]);
    t.wait_for(&format!("extra roots: {}", extra_path.display()));
    t.keys(&["C-c"]);
}
