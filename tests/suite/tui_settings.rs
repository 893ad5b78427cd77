//! `/model` and `/permissions` in the real binary's terminal UI (in tmux), with no provider
//! configured at start: the user points it at the stub provider (OpenAI wire), types a key
//! for the keychain hidden, tests the connection, chats, and manages a permission rule.

use serde_json::json;

use super::support::provider_stub::{Reply, Stub, Wire, TEST_KEY};
use super::support::terminal::{have_tmux, Tmux};
use super::support::{fixture_bin, harness9_bin, Project};

#[test]
fn tui_model_and_permissions_commands() {
    if !have_tmux() {
        return;
    }
    let p = Project::new(&json!({"mcpServers": {"fx": {"command": fixture_bin()}}}));
    let rt = tokio::runtime::Runtime::new().unwrap();
    let stub = rt.block_on(Stub::start(
        Wire::OpenAi,
        vec![Reply::text("pong"), Reply::text("hello from the stub")],
    ));
    let config = tempfile::tempdir().unwrap();
    let cmd = format!("{} tui --yes {}", harness9_bin(), p.path().display());
    let t = Tmux::start(
        &cmd,
        &[
            ("HARNESS9_DATA_DIR", p.data.path().display().to_string()),
            ("HARNESS9_CONFIG_DIR", config.path().display().to_string()),
            ("XDG_CONFIG_HOME", config.path().display().to_string()),
            // Keys go to a user-only file in the data folder, not this machine's keychain.
            ("HARNESS9_CREDENTIALS", "file".into()),
            ("TERM", "xterm-256color".into()),
        ],
    );
    t.wait_for("[MCP] fx ● 10 tools");
    t.text("/model provider openai");
    t.keys(&["Enter"]);
    t.wait_for("model provider: openai");
    t.text(&format!("/model url {}", stub.base_url()));
    t.keys(&["Enter"]);
    t.wait_for(&format!("base URL: {}", stub.base_url()));
    t.text("/model model stub-model");
    t.keys(&["Enter"]);
    t.wait_for("model: stub-model");
    t.text("/model key keychain");
    t.keys(&["Enter"]);
    t.wait_for("API key (hidden");
    t.text(TEST_KEY);
    let s = t.wait_for(&"•".repeat(TEST_KEY.len()));
    assert!(!s.contains(TEST_KEY), "{s}");
    t.keys(&["Enter"]);
    let s = t.wait_for("key: set in keychain");
    assert!(!s.contains(TEST_KEY), "{s}");
    t.text("/model test");
    t.keys(&["Enter"]);
    t.wait_for("✓ connected: openai answered with model stub-model");
    // The provider configured here is used for the next message.
    t.text("hi");
    t.keys(&["Enter"]);
    t.wait_for("hello from the stub");
    let sent = stub.requests();
    assert_eq!(
        sent[1].header("authorization"),
        Some(format!("Bearer {TEST_KEY}").as_str())
    );
    let settings = std::fs::read_to_string(config.path().join("settings.json")).unwrap();
    assert!(!settings.contains(TEST_KEY), "{settings}");

    t.text("/permissions deny mcp__fx__*");
    t.keys(&["Enter"]);
    t.wait_for("deny  mcp__fx__*");
    t.text("/permissions revoke mcp__fx__*");
    t.keys(&["Enter"]);
    t.wait_for("no tool permission rules for this project");
    t.keys(&["C-c"]);
}
