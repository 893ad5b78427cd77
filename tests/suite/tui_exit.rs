//! The real binary's terminal UI in tmux, ended other than by a quit: SIGTERM, SIGHUP and
//! a panic in a spawned task each leave the terminal as it was (raw mode off, the normal
//! screen, the cursor shown), shut the servers down, and end with the status that says
//! why. The UI runs under a shell script that reports the status and the terminal's mode
//! afterwards, then hands the pane to an interactive shell.

use std::path::Path;

use serde_json::json;

use super::support::process::{processes_with_mark, unique_mark, wait_none_marked};
use super::support::terminal::{have_tmux, Tmux};
use super::support::wait::DEADLINE;
use super::support::{fixture_bin, harness9_bin, Project};

/// The pid of the `harness9` process running the UI on `project`.
fn ui_pid(project: &Path) -> Option<u32> {
    let bin = std::fs::canonicalize(harness9_bin()).unwrap();
    let project = project.display().to_string();
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid = e.file_name().to_string_lossy().parse::<u32>().ok()?;
        let exe = std::fs::read_link(e.path().join("exe")).ok()?;
        let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
        let ours = exe == bin
            && cmdline
                .split(|b| *b == 0)
                .any(|arg| arg == project.as_bytes());
        ours.then_some(pid)
    })
}

/// The UI on a project with the fixture server marked by `mark`, under a script that
/// prints the exit status and the terminal's settings and then starts a shell.
fn start(mark: &str, extra_env: &[(&str, String)]) -> (Tmux, Project) {
    let p = Project::new(
        &json!({"mcpServers": {"fx": {"command": fixture_bin(), "env": {"H9_TEST_MARK": mark}}}}),
    );
    let script = format!(
        "{} tui --yes {}; echo \"harness9 exited with $?\"; echo \"tty: $(stty -a | tr -s ' ;' '\\n' | grep -xE -- '-?(icanon|echo|isig|icrnl|opost)' | tr '\\n' ' ')\"; PS1='ready$ ' exec sh",
        harness9_bin(),
        p.path().display()
    );
    let mut env = vec![
        ("HARNESS9_DATA_DIR", p.data.path().display().to_string()),
        ("HARNESS9_PROVIDER", String::new()),
        ("RUST_BACKTRACE", "0".into()),
        ("TERM", "xterm-256color".into()),
    ];
    env.extend(extra_env.iter().cloned());
    let t = Tmux::start(&script, &env);
    t.wait_for("[MCP] fx ● 10 tools");
    assert_eq!(processes_with_mark(mark).len(), 1, "the server runs");
    (t, p)
}

/// The pane is back to a normal shell: the normal screen, the cursor shown, the terminal
/// cooked (canonical input, echo, signals), a command typed at the prompt runs; and the
/// server is gone.
fn assert_restored(t: &Tmux, mark: &str) {
    let s = t.wait_for("tty: ");
    assert_eq!(
        t.pane("#{alternate_on}"),
        "0",
        "still on the alternate screen:\n{s}"
    );
    assert_eq!(t.pane("#{cursor_flag}"), "1", "the cursor is hidden:\n{s}");
    let tty = s.lines().find(|l| l.starts_with("tty: ")).unwrap();
    let words: Vec<&str> = tty.split_whitespace().collect();
    for mode in ["icanon", "echo", "isig", "icrnl", "opost"] {
        assert!(words.contains(&mode), "{mode} is off: {tty}");
    }
    t.wait_for("ready$");
    t.keys(&["echo typed-$((6*7))", "Enter"]);
    t.wait_for("typed-42");
    wait_none_marked(mark, DEADLINE);
}

fn signal_ends_the_ui(signal: i32, status: i32) {
    if !have_tmux() {
        return;
    }
    let mark = unique_mark();
    let (t, p) = start(&mark, &[]);
    let pid = ui_pid(p.path()).expect("the harness9 process");
    assert_eq!(unsafe { libc::kill(pid as i32, signal) }, 0);
    let s = t.wait_for("harness9 exited with");
    assert!(s.contains(&format!("harness9 exited with {status}")), "{s}");
    assert_restored(&t, &mark);
}

#[test]
fn sigterm_restores_the_terminal_and_stops_the_servers() {
    signal_ends_the_ui(libc::SIGTERM, 143);
}

#[test]
fn sighup_restores_the_terminal_and_stops_the_servers() {
    signal_ends_the_ui(libc::SIGHUP, 129);
}

/// A debug build panics in a spawned task when the test asks (see the TUI's
/// `HARNESS9_TEST_PANIC`); the message shows on the restored screen.
#[test]
fn a_panic_in_a_task_restores_the_terminal_says_so_and_stops_the_servers() {
    if !have_tmux() {
        return;
    }
    let mark = unique_mark();
    let (t, _p) = start(&mark, &[("HARNESS9_TEST_PANIC", "spawned-task".into())]);
    let s = t.wait_for("harness9 exited with");
    assert!(s.contains("harness9 exited with 101"), "{s}");
    assert!(
        s.contains("HARNESS9_TEST_PANIC=spawned-task asked for this panic"),
        "{s}"
    );
    assert!(
        s.contains("harness9: the terminal UI stopped after an internal error"),
        "{s}"
    );
    assert_restored(&t, &mark);
}
