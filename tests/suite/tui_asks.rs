//! The real binary's terminal UI answering a real server's elicitation in tmux: the
//! Python SDK server's `ask_client kind=profile` asks for a form while the model's tool call
//! runs; the modal names the server, shows the defaults, and the edited answer reaches the
//! server.

use serde_json::json;

use super::support::terminal::{have_tmux, Tmux};
use super::support::Project;

#[test]
fn tui_answers_a_python_servers_form() {
    use super::support::provider_stub::{Reply, Stub, Wire};
    if !have_tmux() {
        return;
    }
    let Some(p) = Project::python_legacy() else {
        return;
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let stub = rt.block_on(Stub::start(
        Wire::Anthropic,
        vec![
            Reply::tool("mcp__py__ask_client", json!({"kind": "profile"})),
            Reply::text("Profile saved."),
        ],
    ));
    let config = tempfile::tempdir().unwrap();
    let t = Tmux::chat(&p, stub.base_url(), config.path());
    t.wait_for("[MCP] py ●");
    for k in ["g", "o", "Enter"] {
        t.keys(&[k]);
    }
    t.wait_for("The model wants to call mcp__py__ask_client");
    t.keys(&["y"]);
    // The form: defaults pre-filled (SEP-1034); the first field is focused.
    let s = t.wait_for("py asks for input");
    assert!(s.contains("Your profile?"), "{s}");
    assert!(s.contains("Name: Ann"), "{s}");
    assert!(s.contains("Age: 30"), "{s}");
    assert!(s.contains("Subscribe: [x]"), "{s}");
    // Change the name to Bo and turn subscribe off, then accept.
    let focused = |field: &'static str| move |s: &str| s.lines().any(|l| l.contains(field));
    t.press_until("Tab", "focus on Name", 8, focused("> Name:"));
    t.keys(&["BSpace", "BSpace", "BSpace", "B", "o"]);
    t.press_until("Tab", "focus on Subscribe", 8, focused("> Subscribe:"));
    t.keys(&["Space", "Enter"]);
    let s = t.wait_for("Profile saved.");
    assert!(!s.contains("asks for input"), "{s}");
    // The server got the edited answer: the tool result the model saw says so.
    let requests = stub.requests();
    assert_eq!(requests.len(), 2);
    let sent = requests[1].body.to_string();
    assert!(
        sent.contains(r#"accept: {\"name\":\"Bo\",\"age\":30,\"subscribe\":false}"#),
        "{sent}"
    );
    t.keys(&["C-c"]);
}

/// A sampling request from the Python server while the model's tool call runs: the modal
/// shows the request, the user approves it with review, sees the model's answer and sends
/// it; the server gets it.
#[test]
fn tui_approves_reviews_and_sends_a_sampling_request() {
    use super::support::provider_stub::{Reply, Stub, Wire};
    if !have_tmux() {
        return;
    }
    let Some(p) = Project::python_legacy() else {
        return;
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    // The same stub plays the chat model and the model the server samples.
    let stub = rt.block_on(Stub::start(
        Wire::Anthropic,
        vec![
            Reply::tool("mcp__py__ask_client", json!({"kind": "sample"})),
            Reply::text("Hi from the model"),
            Reply::text("The server got it."),
        ],
    ));
    let config = tempfile::tempdir().unwrap();
    let t = Tmux::chat(&p, stub.base_url(), config.path());
    t.wait_for("[MCP] py ●");
    for k in ["g", "o", "Enter"] {
        t.keys(&[k]);
    }
    t.wait_for("The model wants to call mcp__py__ask_client");
    t.keys(&["y"]);
    let s = t.wait_for("py asks to use your model");
    assert!(s.contains("Up to 16 tokens."), "{s}");
    assert!(s.contains("user: Say hi"), "{s}");
    assert_eq!(stub.requests().len(), 1, "nothing sampled before approval");
    t.keys(&["r"]);
    t.wait_for("[x] review the model's answer");
    t.keys(&["y"]);
    let s = t.wait_for("py: send the model's answer?");
    assert!(s.contains("Hi from the model"), "{s}");
    t.keys(&["y"]);
    t.wait_for("The server got it.");
    let requests = stub.requests();
    assert_eq!(requests.len(), 3);
    let sent = requests[2].body.to_string();
    assert!(sent.contains("Hi from the model"), "{sent}");
    assert!(sent.contains("sampled: "), "{sent}");
    t.keys(&["C-c"]);
}
