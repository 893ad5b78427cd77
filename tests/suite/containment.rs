//! Process containment and the stdio transport's memory bounds, through the CLI.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use super::{fixture_bin, harness9_bin, Project};

/// A value unique to one test, put in the servers' environment to find them later.
fn marker(name: &str) -> String {
    format!("{name}-{}-{}", std::process::id(), rand_suffix())
}

fn rand_suffix() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

/// Pids of live processes whose environment holds `H9_MARK=<mark>`.
fn marked(mark: &str) -> Vec<u32> {
    let needle = format!("H9_MARK={mark}");
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(env) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        let zombie = std::fs::read_to_string(entry.path().join("stat"))
            .map(|s| {
                s.rsplit(')')
                    .next()
                    .unwrap_or("")
                    .trim_start()
                    .starts_with('Z')
            })
            .unwrap_or(true);
        if !zombie && env.split(|b| *b == 0).any(|v| v == needle.as_bytes()) {
            pids.push(pid);
        }
    }
    pids
}

/// Waits until no marked process is left; returns what is left after `limit`.
fn wait_none_left(mark: &str, limit: Duration) -> Vec<u32> {
    let start = Instant::now();
    loop {
        let left = marked(mark);
        if left.is_empty() || start.elapsed() > limit {
            return left;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The CLI on `p`, started with piped output and its own data directory.
pub(super) fn cli_child(p: &Project, args: &[&str]) -> Child {
    Command::new(harness9_bin())
        .args(args)
        .arg("--project")
        .arg(p.path())
        .env("HARNESS9_DATA_DIR", p.data.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The peak resident set of a running process, in KiB.
pub(super) fn vm_hwm_kib(pid: u32) -> Option<u64> {
    let status =
        std::fs::read_to_string(Path::new("/proc").join(pid.to_string()).join("status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn a_crash_is_noticed_while_a_grandchild_holds_stdout_and_nothing_is_left() {
    let mark = marker("grandchild");
    let p = Project::new(&json!({"mcpServers": {
        "fx": {"command": fixture_bin(), "args": ["--grandchild"], "env": {"H9_MARK": mark}}
    }}));
    let start = Instant::now();
    let o = p.cli(&["mcp", "call", "fx", "crash", "--yes"]);
    let took = start.elapsed();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("the server exited with status 3"),
        "{}",
        text(&o.stderr)
    );
    assert!(took < Duration::from_secs(8), "the call took {took:?}");
    let left = wait_none_left(&mark, Duration::from_secs(3));
    assert!(left.is_empty(), "processes left: {left:?}");
}

#[test]
fn kill_9_of_the_cli_leaves_no_process_even_behind_a_wrapper_that_ignores_sigterm() {
    let mark = marker("kill9");
    // `; exit` keeps sh from exec-ing the server: it stays a forking wrapper.
    let script = format!("trap '' TERM; {} ; exit 0", fixture_bin());
    let p = Project::new(&json!({"mcpServers": {
        "fx": {"command": "sh", "args": ["-c", script], "env": {"H9_MARK": mark}}
    }}));
    let mut cli = cli_child(
        &p,
        &["mcp", "call", "fx", "sleep", r#"{"ms": 60000}"#, "--yes"],
    );
    // Wait for the wrapper and the server to run, and the call to be under way.
    let start = Instant::now();
    while marked(&mark).len() < 2 && start.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        marked(&mark).len() >= 2,
        "the wrapper and server did not start"
    );
    std::thread::sleep(Duration::from_millis(500));
    cli.kill().unwrap(); // SIGKILL
    cli.wait().unwrap();
    let left = wait_none_left(&mark, Duration::from_secs(5));
    assert!(left.is_empty(), "processes left after kill -9: {left:?}");
}

#[test]
fn floods_and_garbage_do_not_grow_memory() {
    let mark = marker("flood");
    let p = Project::new(&json!({"mcpServers": {
        "fx": {
            "command": fixture_bin(),
            "args": ["--stderr-blank-flood", "1000000", "--stdout-garbage", (512u64 << 20).to_string()],
            "env": {"H9_MARK": mark}
        }
    }}));
    let cli = cli_child(
        &p,
        &["mcp", "call", "fx", "echo", r#"{"text": "hi"}"#, "--yes"],
    );
    let pid = cli.id();
    let sampler = std::thread::spawn(move || {
        let mut peak = 0;
        while let Some(kib) = vm_hwm_kib(pid) {
            peak = peak.max(kib);
            std::thread::sleep(Duration::from_millis(20));
        }
        peak
    });
    let o = cli.wait_with_output().unwrap();
    let peak_kib = sampler.join().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let err = text(&o.stderr);
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
    assert!(wait_none_left(&mark, Duration::from_secs(3)).is_empty());
}

#[test]
fn a_64_mib_result_arrives() {
    let p = Project::new(&json!({"mcpServers": {"fx": {"command": fixture_bin()}}}));
    let bytes = 64u64 << 20;
    let args = format!(r#"{{"bytes": {bytes}}}"#);
    let o = p.cli(&["mcp", "call", "fx", "big", &args, "--yes"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(o.stdout.len() as u64 >= bytes, "{} bytes", o.stdout.len());
}

#[test]
fn an_oversized_result_fails_its_call_naming_the_limit() {
    let p = Project::new(&json!({"mcpServers": {
        "fx": {"command": fixture_bin(), "maxMessageBytes": 100000}
    }}));
    let o = p.cli(&["mcp", "call", "fx", "big", r#"{"bytes": 200000}"#, "--yes"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(
        err.contains("longer than the limit of 100000 bytes")
            && err.contains("Raise \"maxMessageBytes\""),
        "{err}"
    );
    // The server goes on: a small call on the same connection still works.
    let o = p.cli(&["mcp", "call", "fx", "echo", r#"{"text": "hi"}"#, "--yes"]);
    assert_eq!(text(&o.stdout).trim(), "hi", "{}", text(&o.stderr));
}
