//! Signals to a server's process group, the close sequence's timing, and when the group's
//! leader is reaped.
//!
//! A group's id is its leader's pid. Once the leader is reaped and the group is empty, the
//! kernel may hand that number to an unrelated process, which may lead a group of its own:
//! a late signal to the old id would hit a stranger. So the leader is not reaped when it
//! exits: its exit is observed without reaping it (a pidfd, then `waitid` with `WNOWAIT`),
//! and while it is a zombie its pid, and so the group id, cannot be reused. It is reaped
//! only after the close sequence has sent its last signal (or no one holds the connection
//! any more); the reaper is told first, and [`Group::signal`] sends nothing once the
//! leader is reaped. Without pidfds (Linux before 5.3) the exit is observed by reaping,
//! and the group is then no longer signalled at all.

use parking_lot::Mutex;
use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::ExitStatus;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
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

/// A server's process group, as the connection's halves share it.
pub(super) struct Group {
    pgid: i32,
    /// Set (under the lock) when the leader is reaped; no signal is sent after that.
    reaped: Arc<Mutex<bool>>,
    /// Set when a close sequence has sent its last signal: the leader may be reaped.
    done: watch::Sender<bool>,
    /// Set when a close sequence starts: the connection's end and its close may both ask
    /// for one, and one is enough (it scans the process table while it waits).
    ending: AtomicBool,
}

impl Group {
    /// Sends `sig` to the group, unless its leader is already reaped.
    fn signal(&self, sig: libc::c_int) {
        let reaped = self.reaped.lock();
        if !*reaped {
            // SAFETY: killpg has no memory-safety preconditions; ESRCH is fine.
            unsafe { libc::killpg(self.pgid, sig) };
        }
    }

    /// Whether anything of the group still runs: the leader, or once it exited (a zombie
    /// kept for its pid), any other member that is not a zombie.
    fn alive(&self, leader_exited: bool) -> bool {
        if *self.reaped.lock() {
            return false;
        }
        if !leader_exited {
            return true;
        }
        members_running(self.pgid)
    }
}

/// Whether a process other than the group's leader, and not a zombie, is in group `pgid`.
fn members_running(pgid: i32) -> bool {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        // SAFETY: signal 0 only checks for existence (the zombie leader counts too).
        return unsafe { libc::killpg(pgid, 0) == 0 };
    };
    dir.flatten().any(|e| {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            return false;
        };
        if pid == pgid {
            return false;
        }
        // One read into a small buffer (no size query, no growing string): the fields
        // needed come right after the command name, which is at most 16 bytes.
        let mut buf = [0u8; 512];
        let Ok(n) =
            std::fs::File::open(format!("/proc/{pid}/stat")).and_then(|mut f| f.read(&mut buf))
        else {
            return false;
        };
        let stat = buf.get(..n).unwrap_or_default();
        // `pid (comm) state ppid pgrp …`; comm may hold anything, so read after its `)`.
        let Some(close) = stat.iter().rposition(|b| *b == b')') else {
            return false;
        };
        let rest = stat.get(close + 1..).unwrap_or_default();
        let mut fields = rest
            .split(|b| b.is_ascii_whitespace())
            .filter(|f| !f.is_empty());
        let state = fields.next();
        let pgrp = fields
            .nth(1)
            .and_then(|p| std::str::from_utf8(p).ok())
            .and_then(|p| p.parse::<i32>().ok());
        pgrp == Some(pgid) && state != Some(b"Z".as_slice())
    })
}

/// Registers the group of the just spawned `child` with the reaper, and starts the task
/// that publishes its exit status on `exit` and reaps it once the group is done with.
pub(super) fn watch_leader(
    mut child: tokio::process::Child,
    pgid: i32,
    exit: watch::Sender<Option<ExitStatus>>,
) -> Arc<Group> {
    reaper::register(pgid);
    let (done_tx, mut done) = watch::channel(false);
    let group = Arc::new(Group {
        pgid,
        reaped: Arc::default(),
        done: done_tx,
        ending: AtomicBool::new(false),
    });
    let reaped = group.reaped.clone();
    tokio::spawn(async move {
        let status = match exit_unreaped(pgid).await {
            Some(status) => status,
            None => {
                // No pidfd: the exit is observed by reaping, so the group id is free now.
                {
                    let mut flag = reaped.lock();
                    reaper::unregister(pgid);
                    *flag = true;
                }
                child.wait().await.unwrap_or_default()
            }
        };
        let _ = exit.send(Some(status));
        // The zombie holds the group id until the close sequence is over (or the
        // connection is gone, which drops the sender).
        let _ = done.wait_for(|d| *d).await;
        let mut flag = reaped.lock();
        if !*flag {
            reaper::unregister(pgid);
            *flag = true;
            let _ = child.try_wait();
        }
    });
    group
}

/// Waits for child `pid` to exit, without reaping it; `None` when that cannot be done
/// here (no pidfd).
async fn exit_unreaped(pid: i32) -> Option<ExitStatus> {
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        return None;
    }
    // SAFETY: the descriptor was just opened and is owned here alone.
    let fd = unsafe { OwnedFd::from_raw_fd(fd as i32) };
    // SAFETY: the AsyncFd owns the descriptor, so it stays open (and is not reused)
    // for as long as it is registered.
    let fd = unsafe {
        tokio::io::unix::AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE)
    }
    .ok()?;
    loop {
        let mut ready = fd.readable().await.ok()?;
        if let Some(status) = peek_exit(pid) {
            return Some(status);
        }
        ready.clear_ready();
    }
}

/// The exit status of child `pid` if it exited, leaving it unreaped.
fn peek_exit(pid: i32) -> Option<ExitStatus> {
    use std::os::unix::process::ExitStatusExt;
    // SAFETY: waitid fills the zeroed siginfo; WNOWAIT leaves the child waitable.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    let flags = libc::WEXITED | libc::WNOWAIT | libc::WNOHANG;
    if unsafe { libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, flags) } != 0 {
        return None;
    }
    // SAFETY: after a successful waitid these fields are the child's.
    let (found, code, status) = unsafe { (info.si_pid(), info.si_code, info.si_status()) };
    if found == 0 {
        return None;
    }
    let raw = match code {
        libc::CLD_EXITED => (status & 0xff) << 8,
        libc::CLD_KILLED => status & 0x7f,
        libc::CLD_DUMPED => (status & 0x7f) | 0x80,
        _ => return None,
    };
    Some(ExitStatus::from_raw(raw))
}

/// SIGTERM to the group, up to [`SHUTDOWN_GRACE`] for it (leader and descendants) to go,
/// then SIGKILL; then the leader may be reaped (and the reaper forgets the group).
pub(super) async fn end_group(group: Arc<Group>, mut exit: watch::Receiver<Option<ExitStatus>>) {
    if group.pgid <= 0 {
        return;
    }
    if group.ending.swap(true, Ordering::AcqRel) {
        // Another sequence runs (or ran): this one ends with it.
        let mut done = group.done.subscribe();
        let _ = done.wait_for(|d| *d).await;
        return;
    }
    // Even when the leader exited, its group may hold children (npx → node).
    group.signal(libc::SIGTERM);
    let deadline = tokio::time::Instant::now() + SHUTDOWN_GRACE;
    let _ = tokio::time::timeout_at(deadline, exit.wait_for(|s| s.is_some())).await;
    while group.alive(exit.borrow().is_some()) && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    group.signal(libc::SIGKILL);
    let _ = tokio::time::timeout(KILL_WAIT, exit.wait_for(|s| s.is_some())).await;
    group.done.send_replace(true);
}

pub(super) fn describe_exit(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("the server exited with status {code}"),
        (None, Some(sig)) => format!("the server was killed by signal {sig}"),
        (None, None) => "the server exited".to_string(),
    }
}
