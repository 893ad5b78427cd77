//! The stdio transport never signals a process group after its leader was reaped: a group
//! id is its leader's pid, and a reaped pid may be given to an unrelated process. A server
//! that exits stays unreaped (a zombie holds its pid) until the connection's close
//! sequence has sent its last signal; then it is reaped.

use std::sync::Arc;
use std::time::Duration;

use harness9::mcp::log::ServerLog;
use harness9::mcp::transport::stdio;

use super::support::client::stdio_spec;
use super::support::process::state;
use super::support::wait::{holds_for, poll_until_async, DEADLINE};

#[tokio::test]
async fn an_exited_server_is_reaped_only_after_its_group_was_closed() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    let spec = stdio_spec(
        "sh",
        &["-c", &format!("echo $$ > '{}'; exit 3", pidfile.display())],
        &[],
    );
    let conn = stdio::spawn(&spec, Arc::new(ServerLog::default())).expect("spawn");
    let mut pid = String::new();
    poll_until_async("the server to write its pid", DEADLINE, || {
        pid = std::fs::read_to_string(&pidfile).unwrap_or_default();
        pid.ends_with('\n')
    })
    .await;
    let pid: u32 = pid.trim().parse().unwrap();

    // It exited, and is kept as a zombie: its pid, the group id, cannot be reused.
    poll_until_async("the leader to exit", DEADLINE, || state(pid) == Some('Z')).await;
    holds_for(
        "the exited leader unreaped until the close",
        Duration::from_millis(100),
        || state(pid) == Some('Z'),
    )
    .await;

    // The close sequence signals the group, then the leader is reaped.
    conn.sender.close().await;
    poll_until_async("the leader to be reaped", DEADLINE, || state(pid).is_none()).await;
}
