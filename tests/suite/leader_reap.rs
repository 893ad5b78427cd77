//! The stdio transport never signals a process group after its leader was reaped: a group
//! id is its leader's pid, and a reaped pid may be given to an unrelated process. A server
//! that exits stays unreaped (a zombie holds its pid) until the connection's close
//! sequence has sent its last signal; then it is reaped.

use std::sync::Arc;
use std::time::{Duration, Instant};

use harness9::mcp::log::ServerLog;
use harness9::mcp::transport::stdio::{self, StdioSpec};

/// The state letter of process `pid` (`Z` for a zombie), or `None` once it is reaped.
fn state(pid: &str) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?.1.trim_start().chars().next()
}

async fn poll_until(what: &str, mut ok: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !ok() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn an_exited_server_is_reaped_only_after_its_group_was_closed() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    let spec = StdioSpec {
        command: "sh".into(),
        args: vec![
            "-c".into(),
            format!("echo $$ > '{}'; exit 3", pidfile.display()),
        ],
        env: Vec::new(),
        cwd: None,
        path: None,
        max_message_bytes: harness9::config::DEFAULT_MAX_MESSAGE_BYTES,
    };
    let conn = stdio::spawn(&spec, Arc::new(ServerLog::default())).expect("spawn");
    let mut pid = String::new();
    poll_until("the server wrote its pid", || {
        pid = std::fs::read_to_string(&pidfile).unwrap_or_default();
        pid.ends_with('\n')
    })
    .await;
    let pid = pid.trim().to_string();

    // It exited, and is kept as a zombie: its pid, the group id, cannot be reused.
    let mut zombie_looks = 0;
    poll_until("the leader is seen a zombie five times in a row", || {
        zombie_looks = if state(&pid) == Some('Z') {
            zombie_looks + 1
        } else {
            0
        };
        zombie_looks >= 5
    })
    .await;

    // The close sequence signals the group, then the leader is reaped.
    conn.sender.close().await;
    poll_until("the leader is reaped", || state(&pid).is_none()).await;
}
