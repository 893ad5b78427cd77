//! Signals to a server's process group and the close sequence's timing.

use std::process::ExitStatus;
use std::time::Duration;

use tokio::sync::watch;

use super::reaper;

/// How long a server may take to exit after its stdin is closed, and again after SIGTERM.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// How long after SIGKILL we wait for the kernel to report the exit.
const KILL_WAIT: Duration = Duration::from_millis(500);

/// The longest a whole close sequence (stdin close → SIGTERM → SIGKILL) takes. Callers
/// that bound a shutdown must wait at least this long, or they cut the sequence short.
pub const CLOSE_DEADLINE: Duration = Duration::from_millis(
    2 * SHUTDOWN_GRACE.as_millis() as u64 + KILL_WAIT.as_millis() as u64 + 500,
);

pub(super) fn signal_group(pgid: i32, sig: libc::c_int) {
    // SAFETY: killpg has no memory-safety preconditions; ESRCH (no such group) is fine.
    unsafe {
        libc::killpg(pgid, sig);
    }
}

pub(super) fn group_alive(pgid: i32) -> bool {
    // SAFETY: signal 0 only checks for existence.
    unsafe { libc::killpg(pgid, 0) == 0 }
}

/// SIGTERM to the group, up to [`SHUTDOWN_GRACE`] for it (leader and descendants) to go,
/// then SIGKILL; the reaper then forgets the group.
pub(super) async fn end_group(pgid: i32, mut exit: watch::Receiver<Option<ExitStatus>>) {
    if pgid <= 0 {
        return;
    }
    // Even when the leader exited, its group may hold children (npx → node).
    signal_group(pgid, libc::SIGTERM);
    let deadline = tokio::time::Instant::now() + SHUTDOWN_GRACE;
    let _ = tokio::time::timeout_at(deadline, exit.wait_for(|s| s.is_some())).await;
    while group_alive(pgid) && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    signal_group(pgid, libc::SIGKILL);
    let _ = tokio::time::timeout(KILL_WAIT, exit.wait_for(|s| s.is_some())).await;
    reaper::unregister(pgid);
}

pub(super) fn describe_exit(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("the server exited with status {code}"),
        (None, Some(sig)) => format!("the server was killed by signal {sig}"),
        (None, None) => "the server exited".to_string(),
    }
}
