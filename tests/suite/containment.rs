//! Process containment and the stdio transport's memory bounds, through the CLI.

use serde_json::json;

use super::support::process::{
    cli_child, output_with_peak_rss, output_within, processes_with_mark, threads, unique_mark,
    wait_none_marked,
};
use super::support::wait::{poll_for, DEADLINE};
use super::support::{fixture_bin, stderr, stdout, Project};

#[test]
fn a_crash_is_noticed_while_a_grandchild_holds_stdout_and_nothing_is_left() {
    let mark = unique_mark();
    let p = Project::new(&json!({"mcpServers": {
        "fx": {"command": fixture_bin(), "args": ["--grandchild"], "env": {"H9_TEST_MARK": mark}}
    }}));
    // The grandchild holds the server's stdout for ten minutes: the CLI ends long before
    // only if it notices the server's exit without waiting for the end of its output.
    let o = output_within(
        cli_child(&p, &["mcp", "call", "fx", "crash", "--yes"]),
        DEADLINE,
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("the server exited with status 3"),
        "{}",
        stderr(&o)
    );
    wait_none_marked(&mark, DEADLINE);
}

#[test]
fn kill_9_of_the_cli_leaves_no_process_even_behind_a_wrapper_that_ignores_sigterm() {
    let mark = unique_mark();
    // `; exit` keeps sh from exec-ing the server: it stays a forking wrapper.
    let script = format!("trap '' TERM; {} ; exit 0", fixture_bin());
    let p = Project::new(&json!({"mcpServers": {
        "fx": {"command": "sh", "args": ["-c", script], "env": {"H9_TEST_MARK": mark}}
    }}));
    let mut cli = cli_child(
        &p,
        &["mcp", "call", "fx", "sleep", r#"{"ms": 60000}"#, "--yes"],
    );
    // The wrapper and the server run, and the call is under way: the fixture runs each
    // `sleep` call on a thread of its own.
    poll_for(
        "the wrapper and the server to run the call",
        DEADLINE,
        || {
            let pids = processes_with_mark(&mark);
            let calling = pids.iter().any(|&pid| threads(pid).is_some_and(|n| n >= 2));
            if pids.len() >= 2 && calling {
                Ok(())
            } else {
                Err(format!("marked: {pids:?}"))
            }
        },
    );
    cli.kill().unwrap(); // SIGKILL
    cli.wait().unwrap();
    wait_none_marked(&mark, DEADLINE);
}

#[test]
fn floods_and_garbage_do_not_grow_memory() {
    let mark = unique_mark();
    let p = Project::new(&json!({"mcpServers": {
        "fx": {
            "command": fixture_bin(),
            "args": ["--stderr-blank-flood", "1000000", "--stdout-garbage", (512u64 << 20).to_string()],
            "env": {"H9_TEST_MARK": mark}
        }
    }}));
    let cli = cli_child(
        &p,
        &["mcp", "call", "fx", "echo", r#"{"text": "hi"}"#, "--yes"],
    );
    let (o, peak_kib) = output_with_peak_rss(cli);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("longer than the limit of 134217728 bytes") && err.contains("maxMessageBytes"),
        "{err}"
    );
    assert!(peak_kib > 0, "VmHWM was not sampled");
    assert!(
        peak_kib < 96 * 1024,
        "peak RSS of the CLI was {} MiB",
        peak_kib / 1024
    );
    wait_none_marked(&mark, DEADLINE);
}

#[test]
fn a_64_mib_result_arrives() {
    let p = Project::new(&json!({"mcpServers": {"fx": {"command": fixture_bin()}}}));
    let bytes = 64u64 << 20;
    let args = format!(r#"{{"bytes": {bytes}}}"#);
    let o = p.cli(&["mcp", "call", "fx", "big", &args, "--yes"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(o.stdout.len() as u64 >= bytes, "{} bytes", o.stdout.len());
}

#[test]
fn an_oversized_result_fails_its_call_naming_the_limit() {
    let p = Project::new(&json!({"mcpServers": {
        "fx": {"command": fixture_bin(), "maxMessageBytes": 100000}
    }}));
    let o = p.cli(&["mcp", "call", "fx", "big", r#"{"bytes": 200000}"#, "--yes"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("longer than the limit of 100000 bytes")
            && err.contains("Raise \"maxMessageBytes\""),
        "{err}"
    );
    // The server goes on: a small call on the same connection still works.
    let o = p.cli(&["mcp", "call", "fx", "echo", r#"{"text": "hi"}"#, "--yes"]);
    assert_eq!(stdout(&o).trim(), "hi", "{}", stderr(&o));
}
